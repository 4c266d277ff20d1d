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

/* The identity a writer is filed under (ranks.c): the best field a line
 * gives, with the hashes the writer index needs. It lives here, apart from
 * the incident, so that cp_prepare can work it out on the scan threads
 * for the serial part to reuse (and to look ahead with). */
typedef struct cp_writer_key {
    uint64_t hash;       /* of kind, value and host_hash: the index's */
    uint64_t host_hash;  /* of the host for 'l' and 'p', of "" for the others */
    int32_t value;       /* the rank, local rank, pid, task or stream */
    char kind;           /* 'r' rank, 'l' host + local rank, 'p' host + pid,
                            't' Slurm task, 's' stream; 0 none */
} cp_writer_key;

/* The key of a line with origin `o` in stream `stream`. */
void cp_writer_key_of(const cp_origin *o, int stream, cp_writer_key *out);

/* The same, taking `guess` (the key cp_writer_key_of gave for an origin
 * whose host was `guessed_host`) when it is the key of `o` too, which
 * spares hashing again. */
void cp_writer_key_reuse(const cp_origin *o, int stream, const cp_writer_key *guess, const char *guessed_host,
                         cp_writer_key *out);

/* The hash cp_writer_key_of gives a host name (key_host in a writer). */
uint64_t cp_writer_host_hash(const char *host);

/* The index hash of a key's kind, value and host hash. */
uint64_t cp_writer_key_hash(char kind, int32_t value, uint64_t host_hash);

/* Sets every field to unknown. */
void cp_origin_init(cp_origin *o);

/* Copies the known fields of `from` into `into`, leaving the others. */
void cp_origin_merge(cp_origin *into, const cp_origin *from);

#endif
