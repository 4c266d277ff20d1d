/* pretouch.h - the memory a small run will use, touched in one go.
 *
 * A diagnosis of a paste spends much of its time in page faults: every
 * page of its buffers, hit lists and rule tables is touched for the first
 * time once, and on a virtual machine each of those faults leaves the
 * guest (about 12 us apiece where this was measured, against 0.3 us for
 * the kernel to fill the same page in bulk). For inputs small enough that
 * this dominates, cli_pretouch asks the kernel to populate a stretch of
 * the heap at once (MADV_POPULATE_WRITE, Linux 5.14) and keeps it there
 * for the run: glibc is told to serve every thread and every buffer up to
 * 32 MiB from that heap and not to hand it back. Larger inputs are left
 * as they are: their faults are a few percent of the run, and the pages
 * would count towards a peak resident size that should follow the
 * input's ranks and findings, not a guess. Without glibc or the madvise
 * advice it does nothing. */
#ifndef CULPRIT_CLI_PRETOUCH_H
#define CULPRIT_CLI_PRETOUCH_H

#include <stddef.h>

/* Call once, before the rules are loaded: they are the first to use the heap. */
void cli_pretouch(const char *const *paths, size_t n);

#endif
