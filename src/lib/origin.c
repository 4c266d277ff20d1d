/* origin.c - the origin of a log line: unknown values and merging. */
#include "origin.h"

#include <stdbool.h>
#include <string.h>

#include "util/strutil.h"

/* Copied whole: one block copy is cheaper than a clear and five stores,
 * and cp_prepare initialises an origin for every line it keeps. */
static const cp_origin unknown_origin = {
    .rank = -1, .local_rank = -1, .pid = -1, .task = -1, .cuda_dev = -1,
    .time = {0, CP_TS_NONE}, .level = 0, .host = "",
};

void cp_origin_init(cp_origin *o)
{
    *o = unknown_origin;
}

void cp_origin_merge(cp_origin *into, const cp_origin *from)
{
    if (from->rank >= 0)
        into->rank = from->rank;
    if (from->local_rank >= 0)
        into->local_rank = from->local_rank;
    if (from->pid >= 0)
        into->pid = from->pid;
    if (from->task >= 0)
        into->task = from->task;
    if (from->cuda_dev >= 0)
        into->cuda_dev = from->cuda_dev;
    if (from->time.kind != CP_TS_NONE)
        into->time = from->time;
    if (from->level != 0)
        into->level = from->level;
    if (from->host[0] != '\0') {
        /* from->host is NUL-terminated within CP_HOST_MAX by contract; copy
         * bounded anyway so a corrupt source cannot overrun `into`. */
        size_t k = 0;
        while (k + 1 < CP_HOST_MAX && from->host[k] != '\0') {
            into->host[k] = from->host[k];
            k++;
        }
        into->host[k] = '\0';
    }
}

/* The best field of an origin: its kind, and its value in *value. */
static char key_field(const cp_origin *o, int stream, int32_t *value)
{
    if (o->rank >= 0) {
        *value = o->rank;
        return 'r';
    }
    if (o->local_rank >= 0) {
        *value = o->local_rank;
        return 'l';
    }
    if (o->pid >= 0) {
        *value = o->pid;
        return 'p';
    }
    if (o->task >= 0) {
        *value = o->task;
        return 't';
    }
    *value = stream;
    return 's';
}

/* Whether a key of this kind names the host too. */
static bool keyed_by_host(char kind)
{
    return kind == 'l' || kind == 'p';
}

uint64_t cp_writer_host_hash(const char *host)
{
    return cp_hash_str(CP_HASH_SEED, host);
}

uint64_t cp_writer_key_hash(char kind, int32_t value, uint64_t host_hash)
{
    uint64_t h = CP_HASH_SEED ^ (uint64_t)(unsigned char)kind;
    h = cp_hash_step(cp_hash_step(h, (uint32_t)value), host_hash);
    return h ? h : 1;
}

void cp_writer_key_of(const cp_origin *o, int stream, cp_writer_key *out)
{
    out->kind = key_field(o, stream, &out->value);
    out->host_hash = cp_writer_host_hash(keyed_by_host(out->kind) ? o->host : "");
    out->hash = cp_writer_key_hash(out->kind, out->value, out->host_hash);
}

void cp_writer_key_reuse(const cp_origin *o, int stream, const cp_writer_key *guess, const char *guessed_host,
                         cp_writer_key *out)
{
    int32_t value;
    char kind = key_field(o, stream, &value);
    if (kind == guess->kind && value == guess->value &&
        (!keyed_by_host(kind) || strcmp(o->host, guessed_host) == 0))
        *out = *guess;
    else
        cp_writer_key_of(o, stream, out);
}
