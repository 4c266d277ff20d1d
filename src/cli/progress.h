/* progress.h - a progress bar on stderr for long scans.
 *
 * Drawn only when stderr is a terminal, and only once a scan has run for a
 * second; never in pipes, never with --quiet. Shows bytes read and, when
 * the inputs' sizes are known from the file system, the total and percent
 * (compressed files and archives count at their size on disk). */
#ifndef CULPRIT_CLI_PROGRESS_H
#define CULPRIT_CLI_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

#include "culprit/culprit.h"

typedef struct cli_progress {
    bool on;
    bool drawn;
    double start, last;
    unsigned long long total;  /* 0 unknown */
} cli_progress;

/* Installs the bar on ctx unless `quiet` or stderr is not a terminal. */
void cli_progress_start(cli_progress *p, culprit_ctx *ctx, const char *const *paths, size_t n, bool quiet);
/* Erases the bar if one was drawn. */
void cli_progress_stop(cli_progress *p);

#endif
