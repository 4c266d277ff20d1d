/* origin.c - the origin of a log line: unknown values and merging. */
#include "origin.h"

#include <string.h>

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
