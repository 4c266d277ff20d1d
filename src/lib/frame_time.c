/* frame_time.c - the timestamps a log line may start with (see frame.h,
 * cp_time_parse): ISO 8601 and Python's asctime, glog's date, ctime
 * (dmesg -T), syslog and dmesg's seconds since boot. */
#include "frame.h"
#include "frame_int.h"
#include "util/timeutil.h"

static const int16_t cum_days[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    return cp_days_from_civil(y, (unsigned)m, (unsigned)d);
}

/* NOYEAR times count from Jan 1 of a common (non-leap) year: Feb 29 lands
 * on the same day as Mar 1. Resolving with the real year adds a day for
 * dates from March on in leap years. */
static int64_t noyear_ms(int64_t month, int64_t day, int64_t ms_of_day)
{
    return (cum_days[month - 1] + day - 1) * 86400000 + ms_of_day;
}

/* ".frac" or ",frac" at s[q], truncated to ms; returns its length (0 when
 * there is none) and the ms in *frac. */
static size_t parse_frac(const char *s, size_t n, size_t q, int64_t *frac)
{
    size_t d = q + 1;
    int64_t ms = 0;
    int kept = 0;
    if (d >= n || (s[q] != '.' && s[q] != ',') || !is_digit(s[d]))
        return 0;
    for (; kept < 3 && d < n && is_digit(s[d]); kept++, d++)
        ms = ms * 10 + (s[d] - '0');
    for (; kept < 3; kept++)
        ms *= 10;
    while (d < n && is_digit(s[d]))     /* finer than ms: skipped */
        d++;
    *frac = ms;
    return d - q;
}

/* ":SS[.frac]" at s[p] (the caller has checked that 3 bytes exist). */
static size_t parse_colon_sec(const char *s, size_t n, size_t p, int64_t *ms)
{
    int64_t sec, frac = 0;
    if (s[p] != ':' || !dig2(s + p + 1, &sec) || sec > 60)
        return 0;
    size_t q = p + 3;
    if (q < n && is_digit(s[q]))
        return 0;
    q += parse_frac(s, n, q, &frac);
    *ms = sec * 1000 + frac;
    return q - p;
}

/* "HH:MM" at c (5 bytes exist) -> ms since midnight. */
static int parse_hm(const char *c, int64_t *ms)
{
    int64_t h, m;
    if (c[2] != ':' || !dig2(c, &h) || !dig2(c + 3, &m) || h > 23 || m > 59)
        return 0;
    *ms = (h * 60 + m) * 60000;
    return 1;
}

/* "HH:MM:SS" with an optional ".frac" or ",frac" (truncated to ms). */
static size_t parse_hms(const char *s, size_t n, size_t p, int64_t *ms_of_day)
{
    int64_t hm, sec;
    if (n - p < 8 || !parse_hm(s + p, &hm))
        return 0;
    size_t k = parse_colon_sec(s, n, p + 5, &sec);
    if (!k)
        return 0;
    *ms_of_day = hm + sec;
    return 5 + k;
}

static int valid_md(int64_t m, int64_t d) { return m >= 1 && m <= 12 && d >= 1 && d <= 31; }

/* The last "YYYY-MM-DD HH:MM" read on this thread and its start in ms.
 * Consecutive lines of a log mostly share their minute, and the date's
 * checks and calendar arithmetic cost more than the rest of the time.
 * Thread-local: cp_frame_parse runs on several threads at once. */
typedef struct iso_minute {
    int valid;
    char key[16];           /* the bytes as written; they passed the checks */
    int64_t ms;
} iso_minute;

static _Thread_local iso_minute last_minute;

/* "YYYY-MM-DD[T _]HH:MM" at c (16 bytes exist) -> ms since the epoch. */
static int parse_iso_minute(const char *c, int64_t *ms)
{
    int64_t yh, yl, m, d, hm;
    iso_minute *memo = &last_minute;
    if (memo->valid && memcmp(c, memo->key, 16) == 0) {
        *ms = memo->ms;
        return 1;
    }
    if ((c[4] != '-' && c[4] != '/') || c[7] != c[4] ||
        (c[10] != 'T' && c[10] != ' ' && c[10] != '_') || !dig2(c, &yh) ||
        !dig2(c + 2, &yl) || !dig2(c + 5, &m) || !dig2(c + 8, &d) || !valid_md(m, d) ||
        !parse_hm(c + 11, &hm))
        return 0;
    *ms = days_from_civil(yh * 100 + yl, m, d) * 86400000 + hm;
    memo->valid = 1;
    memcpy(memo->key, c, sizeof memo->key);
    memo->ms = *ms;
    return 1;
}

/* "Z", "+05", "+0530", "+05:30" (or '-') at s[q]: its length, and the
 * offset east of UTC in *off_ms; anything else is left unread (0). */
static size_t parse_zone(const char *s, size_t n, size_t q, int64_t *off_ms)
{
    int64_t oh, om = 0;
    *off_ms = 0;
    if (q < n && s[q] == 'Z')
        return 1;
    if (!(q + 2 < n && (s[q] == '+' || s[q] == '-') && read_num(s, n, q + 1, 2, &oh) == 2))
        return 0;
    size_t r = q + 3;
    if (r < n && s[r] == ':')
        r++;
    if (read_fixed(s, n, r, 2, &om))
        r += 2;
    else if (r != q + 3 || (r < n && is_digit(s[r])))
        return 0;
    if (oh > 23 || om > 59)
        return 0;
    int64_t off = (oh * 60 + om) * 60000;
    *off_ms = s[q] == '+' ? off : -off;
    return r - q;
}

/* "YYYY-MM-DD[T _]HH:MM:SS[.frac][Z|+HH:MM|+HHMM]" (also '/' in the date);
 * an offset is converted to UTC, a naive time is taken as UTC. */
size_t frame_parse_iso(const char *s, size_t n, size_t p, cp_time *t)
{
    int64_t minute, sec, off;
    /* "YYYY-MM-DD HH:MM:SS" is 19 bytes at least; the date separator
     * rejects most other text before the memo is looked at */
    if (n - p < 19 || (s[p + 4] != '-' && s[p + 4] != '/') || !parse_iso_minute(s + p, &minute))
        return 0;
    size_t k = parse_colon_sec(s, n, p + 16, &sec);
    if (!k)
        return 0;
    size_t q = p + 16 + k;
    q += parse_zone(s, n, q, &off);
    t->ms = minute + sec - off;
    t->kind = CP_TS_ABS;
    return q - p;
}

/* glog's date: "MDD"/"MMDD" (no year) or "YYYYMMDD", then " HH:MM:SS.frac". */
size_t frame_parse_glog_date(const char *s, size_t n, size_t p, cp_time *t)
{
    int64_t v, sod;
    size_t k = read_num(s, n, p, 8, &v);
    if ((k != 3 && k != 4 && k != 8) || p + k >= n || s[p + k] != ' ')
        return 0;
    size_t h = parse_hms(s, n, p + k + 1, &sod);
    if (!h)
        return 0;
    int64_t md = v % 10000, m = md / 100, d = md % 100;
    if (!valid_md(m, d))
        return 0;
    if (k == 8) {
        t->ms = days_from_civil(v / 10000, m, d) * 86400000 + sod;
        t->kind = CP_TS_ABS;
    } else {
        t->ms = noyear_ms(m, d, sod);
        t->kind = CP_TS_NOYEAR;
    }
    return k + 1 + h;
}

static int month_at(const char *s, size_t n, size_t p)
{
    static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    if (p + 3 > n || !is_upper(s[p]) || !is_lower(s[p + 1]))
        return 0;
    for (int i = 0; i < 12; i++)
        if (memcmp(s + p, names + 3 * i, 3) == 0)
            return i + 1;
    return 0;
}

/* "Mon DD HH:MM:SS" (day space-padded, as syslog and ctime write it). */
static size_t parse_mdhms(const char *s, size_t n, size_t p, int64_t *m, int64_t *d,
                          int64_t *sod)
{
    size_t q = p + 3;
    *m = month_at(s, n, p);
    if (!*m || q >= n || s[q] != ' ')
        return 0;
    q++;
    if (q < n && s[q] == ' ')
        q++;
    size_t k = read_num(s, n, q, 2, d);
    if (!k || !valid_md(*m, *d) || q + k >= n || s[q + k] != ' ')
        return 0;
    q += k + 1;
    size_t h = parse_hms(s, n, q, sod);
    return h ? q + h - p : 0;
}

/* syslog's "May 18 19:02:39" -> NOYEAR. */
size_t frame_parse_syslog_date(const char *s, size_t n, size_t p, cp_time *t)
{
    int64_t m, d, sod;
    size_t k = parse_mdhms(s, n, p, &m, &d, &sod);
    if (!k)
        return 0;
    t->ms = noyear_ms(m, d, sod);
    t->kind = CP_TS_NOYEAR;
    return k;
}

/* ctime: "Sun Nov 29 16:19:56 2026" (dmesg -T) -> ABS. */
size_t frame_parse_ctime(const char *s, size_t n, size_t p, cp_time *t)
{
    int64_t m, d, sod, y;
    if (n - p < 4 || !is_upper(s[p]) || !is_lower(s[p + 1]) || !is_lower(s[p + 2]) ||
        s[p + 3] != ' ')
        return 0;
    size_t k = parse_mdhms(s, n, p + 4, &m, &d, &sod);
    size_t q = p + 4 + k;
    if (!k || q >= n || s[q] != ' ' || !read_fixed(s, n, q + 1, 4, &y))
        return 0;
    t->ms = days_from_civil(y, m, d) * 86400000 + sod;
    t->kind = CP_TS_ABS;
    return q + 5 - p;
}

/* dmesg's "   171167.621162" (inside the brackets) -> BOOT. */
static size_t parse_boot(const char *s, size_t n, size_t p, cp_time *t)
{
    int64_t sec, frac = 0;
    size_t q = p;
    while (q < n && q - p < 12 && s[q] == ' ')
        q++;
    size_t k = read_num(s, n, q, 12, &sec);
    if (!k || q + k >= n || s[q + k] != '.')
        return 0;
    q += k + 1;
    size_t f = 0;
    for (; q < n && is_digit(s[q]) && f < 12; q++, f++)
        if (f < 3)
            frac = frac * 10 + (s[q] - '0');
    if (!f)
        return 0;
    for (; f < 3; f++)
        frac *= 10;
    t->ms = sec * 1000 + frac;
    t->kind = CP_TS_BOOT;
    return q - p;
}

/* A timestamp at s[p] (ISO 8601 and Python's asctime, torchelastic's
 * "2026-11-29_16:19:33", glog's date, ctime, syslog); `inner` (inside
 * brackets) adds dmesg's seconds since boot, which bare would be any float. */
size_t frame_parse_time_at(const char *s, size_t n, size_t p, cp_time *t, int inner)
{
    if (p >= n)
        return 0;
    char c = s[p];
    size_t k = 0;
    if (is_digit(c)) {
        k = frame_parse_iso(s, n, p, t);
        if (!k)
            k = frame_parse_glog_date(s, n, p, t);
        if (!k && inner)
            k = parse_boot(s, n, p, t);
    } else if (c == ' ' && inner) {
        k = parse_boot(s, n, p, t);
    } else if (is_upper(c)) {
        k = frame_parse_ctime(s, n, p, t);
        if (!k)
            k = frame_parse_syslog_date(s, n, p, t);
    }
    return k;
}

size_t cp_time_parse(const char *s, size_t len, cp_time *out)
{
    cp_time t = {0, CP_TS_NONE};
    size_t k;
    if (!s || len == 0)
        return 0;
    if (s[0] == '[') {
        k = frame_parse_time_at(s, len, 1, &t, 1);
        if (!k || 1 + k >= len || s[1 + k] != ']')
            return 0;
        k += 2;
    } else {
        k = frame_parse_time_at(s, len, 0, &t, 0);
        if (!k)
            return 0;
    }
    if (out)
        *out = t;
    return k;
}

