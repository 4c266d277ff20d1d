/* origin.h - who wrote a log line, and when.
 *
 * Every line culprit looks at is tied to an origin: the host, the global
 * rank, the local rank, the pid, and a timestamp, each as far as the line's
 * prefixes (or its file's path) say. Unknown fields stay at their "unknown"
 * value; later stages fill gaps from what other lines teach (rank tables).
 */
#ifndef CULPRIT_ORIGIN_H
#define CULPRIT_ORIGIN_H

#include <stdint.h>

enum { CP_HOST_MAX = 64 };

/* How much a timestamp tells. NOYEAR times (glog, syslog) count ms from the
 * start of an unknown year; BOOT times (dmesg) count ms since boot. The
 * analysis turns both into absolute times once the incident supplies a year
 * or a boot time. NOYEAR days are counted in a common (non-leap) year, Feb 29
 * sharing Mar 1's day: for a leap year Y the absolute time is
 * year_start(Y) + ms, plus one day when ms >= 59 days (Mar 1 on). */
typedef enum cp_ts_kind {
    CP_TS_NONE = 0,
    CP_TS_ABS,     /* ms since the Unix epoch, UTC or as written */
    CP_TS_NOYEAR,  /* ms since Jan 1 00:00 of an unknown year */
    CP_TS_BOOT     /* ms since boot */
} cp_ts_kind;

typedef struct cp_time {
    int64_t ms;
    cp_ts_kind kind;
} cp_time;

typedef struct cp_origin {
    int32_t rank;        /* global rank, -1 unknown */
    int32_t local_rank;  /* rank within the node, -1 unknown */
    int32_t pid;         /* -1 unknown */
    int32_t task;        /* Slurm task id (srun -l), -1 unknown */
    int32_t cuda_dev;    /* NCCL's [cudaDev], -1 unknown */
    cp_time time;
    char level;          /* 'E','W','I','F','D' or 0 */
    char host[CP_HOST_MAX]; /* "" unknown */
} cp_origin;

/* Sets every field to unknown. */
void cp_origin_init(cp_origin *o);

/* Copies the known fields of `from` into `into`, leaving the others. */
void cp_origin_merge(cp_origin *into, const cp_origin *from);

#endif
