/* progress.c - see progress.h. */
#include "progress.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "inputs.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void draw(void *user, unsigned long long bytes)
{
    cli_progress *p = user;
    double t = now();
    if (t - p->start < 1.0 || t - p->last < 0.1)
        return;
    p->last = t;
    p->drawn = true;
    double mb = (double)bytes / 1e6, rate = mb / (t - p->start);
    /* compressed inputs can make more bytes than their size on disk */
    if (p->total > 0 && bytes <= p->total + p->total / 100) {
        int pct = bytes >= p->total ? 100 : (int)(100.0 * (double)bytes / (double)p->total);
        int fill = pct * 30 / 100;
        fprintf(stderr, "\r\033[Kculprit: [%.*s%*s] %3d%%  %.0f / %.0f MB  %.0f MB/s", fill,
                "##############################", 30 - fill, "", pct, mb, (double)p->total / 1e6, rate);
    } else {
        fprintf(stderr, "\r\033[Kculprit: %.0f MB read  %.0f MB/s", mb, rate);
    }
    fflush(stderr);
}

void cli_progress_start(cli_progress *p, culprit_ctx *ctx, const char *const *paths, size_t n, bool quiet)
{
    memset(p, 0, sizeof *p);
    if (quiet || !isatty(STDERR_FILENO))
        return;
    p->on = true;
    p->start = now();
    p->total = cli_input_bytes(paths, n, ULLONG_MAX);
    culprit_ctx_set_progress(ctx, draw, p);
}

void cli_progress_stop(cli_progress *p)
{
    if (p->drawn) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    p->drawn = false;
}
