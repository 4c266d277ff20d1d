/* pretouch.h - the memory a small run will use, touched in one go, on
 * huge pages.
 *
 * A diagnosis of a paste spends much of its time making pages of memory
 * its own: every page of its buffers, hit lists and rule tables is touched
 * for the first time once, and on a virtual machine the first touch of a
 * page leaves the guest (about 10 us apiece where this was measured, even
 * for a page the guest kernel had already populated). For inputs small
 * enough that this dominates, cli_pretouch advises a stretch of the heap
 * for transparent huge pages (one first touch per 2 MiB instead of per
 * 4 KiB), asks the kernel to populate it at once (MADV_POPULATE_WRITE,
 * Linux 5.14), and keeps it there for the run: glibc is told to serve
 * every thread and every buffer up to 32 MiB from that heap and not to
 * hand it back. The 10 MB paste went from 67 to 35 ms (medians of 15,
 * bench/bench.sh), 91 ms with neither. Larger inputs are left as they
 * are: their first touches are a few percent of the run, and pretouched
 * (or huge) pages would count towards a peak resident size that should
 * follow the input's ranks and findings, not a guess. Without glibc, THP
 * or the madvise advice it does what the kernel allows: nothing at
 * worst. */
#ifndef CULPRIT_CLI_PRETOUCH_H
#define CULPRIT_CLI_PRETOUCH_H

#include <stddef.h>

/* Call once, before the rules are loaded: they are the first to use the heap. */
void cli_pretouch(const char *const *paths, size_t n);

#endif
