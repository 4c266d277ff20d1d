/* timeline.c - every time on one clock. See facts.h. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "frame.h"
#include "util/buf.h"
#include "util/timeutil.h"

/* glog and syslog times have no year: borrow the incident's. Boot-relative
 * kernel times (dmesg without -T) go on the wall clock once their host's
 * boot time is known (boot_clock below); the others cannot be ordered
 * against wall clocks and drop out of ordering. */
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
    }
}

/* ---- boot times ------------------------------------------------------------
 *
 * A host's boot time (wall clock at boot) is learnt from a line that gives
 * both clocks: syslog or journald with the kernel's own stamp ("May 18
 * 19:02:39 node017 kernel: [171167.621162] NVRM: ..."), or the same kernel
 * message seen twice on one host, once boot-relative (dmesg) and once on the
 * wall clock (dmesg -T, journalctl -k). The assumptions: the host did not
 * reboot between the lines used and the ones placed (one boot time per
 * host), and its clock did not jump; dmesg -T itself is computed the same
 * way, so both err alike (seconds at most, from suspend or clock drift). */

typedef struct boot_clock {
    const char *host;      /* borrowed; "" for lines with no host */
    int64_t boot_ms;
} boot_clock;

typedef struct boot_table {
    boot_clock *v;
    size_t n, cap;
} boot_table;

static const char *host_of(const cp_incident *inc, const cp_event *e)
{
    if (e->origin.host[0])
        return e->origin.host;
    return e->writer >= 0 ? inc->writers[e->writer].id.host : "";
}

static const boot_clock *boot_find(const boot_table *b, const char *host)
{
    for (size_t i = 0; i < b->n; i++)
        if (strcmp(b->v[i].host, host) == 0)
            return &b->v[i];
    return NULL;
}

static void boot_learn(boot_table *b, const char *host, int64_t wall_ms, int64_t boot_ms)
{
    if (boot_find(b, host))
        return; /* the first pair decides; later ones agree within seconds */
    boot_clock *grown = cp_grow(b->v, &b->cap, b->n, sizeof *grown, 16);
    if (!grown)
        return;
    b->v = grown;
    b->v[b->n++] = (boot_clock){host, wall_ms - boot_ms};
}

/* "... kernel: [171167.621162] msg" inside a wall-clock line. */
static bool inner_boot_stamp(const char *text, cp_time *t)
{
    const char *k = text ? strstr(text, "kernel: [") : NULL;
    return k && cp_time_parse(k + 8, strlen(k + 8), t) && t->kind == CP_TS_BOOT;
}

static const char *body_of(const char *text)
{
    cp_origin o;
    cp_origin_init(&o);
    return text + cp_frame_parse(text, strlen(text), &o);
}

static void learn_boot_times(const cp_incident *inc, boot_table *b)
{
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        cp_time t;
        if (e->origin.time.kind == CP_TS_ABS && !e->time_estimated && inner_boot_stamp(e->text, &t))
            boot_learn(b, host_of(inc, e), e->origin.time.ms, t.ms);
    }
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        const char *host = host_of(inc, e);
        if (e->origin.time.kind != CP_TS_BOOT || e->time_estimated || !e->text || boot_find(b, host))
            continue;
        const char *body = body_of(e->text);
        for (size_t j = 0; j < inc->n_events; j++) {
            const cp_event *a = &inc->events[j];
            if (a->rule == e->rule && a->origin.time.kind == CP_TS_ABS && !a->time_estimated && a->text &&
                strcmp(host_of(inc, a), host) == 0 && strcmp(body_of(a->text), body) == 0) {
                boot_learn(b, host, a->origin.time.ms, e->origin.time.ms);
                break;
            }
        }
    }
}

static void place_boot(cp_time *t, const boot_clock *c)
{
    if (t->kind != CP_TS_BOOT)
        return;
    if (c) {
        t->ms += c->boot_ms;
        t->kind = CP_TS_ABS;
    } else {
        t->kind = CP_TS_NONE;
    }
}

static void place_boot_times(cp_incident *inc)
{
    boot_table b = {0};
    learn_boot_times(inc, &b);
    for (size_t i = 0; i < inc->n_events; i++) {
        cp_event *e = &inc->events[i];
        place_boot(&e->origin.time, boot_find(&b, host_of(inc, e)));
    }
    for (size_t i = 0; i < inc->n_writers; i++) {
        cp_writer *w = &inc->writers[i];
        const boot_clock *c = boot_find(&b, w->id.host);
        place_boot(&w->first_time, c);
        place_boot(&w->last_time, c);
        place_boot(&w->last_step_time, c);
        place_boot(&w->phase_time, c);
    }
    for (size_t i = 0; i < inc->n_table; i++)
        place_boot(&inc->table[i].time, boot_find(&b, inc->table[i].host));
    free(b.v);
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
    place_boot_times(inc);
}
