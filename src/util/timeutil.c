#include "timeutil.h"

#include <stdio.h>

/* Howard Hinnant's algorithms (public domain), valid for all int64 years
 * that matter here. */
int64_t cp_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = (unsigned)(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? (unsigned)-3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

void cp_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const unsigned doe = (unsigned)(z - era * 146097);
    const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

int64_t cp_year_start_ms(int64_t y)
{
    return cp_days_from_civil(y, 1, 1) * 86400000LL;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

int64_t cp_year_of_ms(int64_t ms)
{
    int64_t y;
    unsigned m, d;
    cp_civil_from_days(floor_div(ms, 86400000LL), &y, &m, &d);
    return y;
}

void cp_format_ms(int64_t ms, char *buf, size_t n)
{
    int64_t days = floor_div(ms, 86400000LL);
    int64_t rest = ms - days * 86400000LL;
    int64_t y;
    unsigned mo, d;
    cp_civil_from_days(days, &y, &mo, &d);
    snprintf(buf, n, "%04lld-%02u-%02u %02d:%02d:%02d.%03d", (long long)y, mo, d,
             (int)(rest / 3600000), (int)(rest / 60000 % 60), (int)(rest / 1000 % 60), (int)(rest % 1000));
}
