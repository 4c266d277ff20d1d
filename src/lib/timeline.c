/* timeline.c - every time on one clock. See facts.h. */
#include <limits.h>

#include "facts.h"
#include "util/timeutil.h"

/* glog and syslog times have no year: borrow the incident's. Boot-relative
 * kernel times cannot be ordered against wall clocks without a boot time,
 * so they do not take part in ordering. */
static bool leap_year(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static void normalize_one(cp_time *t, int64_t year)
{
    if (t->kind == CP_TS_NOYEAR) {
        /* NOYEAR counts days in a common year (origin.h) */
        int64_t day = 86400000LL;
        t->ms += cp_year_start_ms(year) + (leap_year(year) && t->ms >= 59 * day ? day : 0);
        t->kind = CP_TS_ABS;
    } else if (t->kind == CP_TS_BOOT) {
        t->kind = CP_TS_NONE;
    }
}

static int64_t incident_year(const cp_incident *inc)
{
    int64_t latest = INT64_MIN;
    for (size_t i = 0; i < inc->n_events; i++)
        if (inc->events[i].origin.time.kind == CP_TS_ABS && inc->events[i].origin.time.ms > latest)
            latest = inc->events[i].origin.time.ms;
    for (size_t i = 0; i < inc->n_writers; i++)
        if (inc->writers[i].last_time.kind == CP_TS_ABS && inc->writers[i].last_time.ms > latest)
            latest = inc->writers[i].last_time.ms;
    return latest == INT64_MIN ? 0 : cp_year_of_ms(latest);
}

void cp_timeline_normalize(cp_incident *inc)
{
    int64_t ys = incident_year(inc);
    /* Without any dated line the year stays unknown: order in 1970 (not a
     * leap year, so month and day stay right) and print no year. */
    inc->year_known = ys != 0;
    if (!inc->year_known)
        ys = 1970;
    for (size_t i = 0; i < inc->n_events; i++)
        normalize_one(&inc->events[i].origin.time, ys);
    for (size_t i = 0; i < inc->n_writers; i++) {
        cp_writer *w = &inc->writers[i];
        normalize_one(&w->first_time, ys);
        normalize_one(&w->last_time, ys);
        normalize_one(&w->last_step_time, ys);
        normalize_one(&w->phase_time, ys);
    }
    for (size_t i = 0; i < inc->n_table; i++)
        normalize_one(&inc->table[i].time, ys);
}
