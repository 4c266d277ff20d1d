/* inputs.h - what the command line learns of its inputs before reading
 * them: their size on disk, for the progress bar's total and for sizing
 * the memory a run touches up front (pretouch.h). */
#ifndef CULPRIT_CLI_INPUTS_H
#define CULPRIT_CLI_INPUTS_H

#include <stddef.h>

/* Bytes the regular files among `paths` hold on disk, folders walked
 * (symlinks not followed); standard input ("-") counts when it is a
 * regular file. Returns 0 when a size cannot be known: stdin from a pipe
 * or terminal, or folders with more than 65,536 entries (listing them
 * would hold up the run). The walk stops once the total reaches
 * `stop_at`: the result is then at least `stop_at`. */
unsigned long long cli_input_bytes(const char *const *paths, size_t n, unsigned long long stop_at);

#endif
