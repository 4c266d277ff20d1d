/* hs_target.h - which of vectorscan's builds scans, and the target its
 * databases are compiled for.
 *
 * Debian's vectorscan (5.4.9) has a fat runtime: hs_scan runs the SSE,
 * AVX2 or AVX-512 build of its engines, chosen by the CPU when the library
 * loads. Both wider builds miss matches. On an Intel Xeon with AVX-512:
 * - the AVX-512 build misses `File "[^"]+", line \d+, in [^\s(]` on a
 *   120-byte traceback frame line wherever the line lies in the buffer, so
 *   whole tracebacks vanished (17 of the field set's kind labels);
 * - the AVX2 build, with culprit's whole catalog, misses a Flight
 *   Recorder stack frame ("#4 foreach_reduce from ...") once 30 bytes or
 *   more come before it.
 * The SSE4.2 and the plain SSE2 builds hit every test line of every rule
 * wherever it lies (test_matcher.c), and give the same hits as each other
 * on every fixture. Upstream fixed several 512-bit accelerator bugs in
 * 2026 (vectorscan pull requests 375 and 378); Debian 12 ships 5.4.9.
 *
 * So on x86-64, when the CPU has SSE4.2 and POPCNT and the library exports
 * its SSE4.2 build's entry point (`corei7_hs_scan`, as the fat runtime
 * names it), culprit scans with that and compiles for no AVX. It costs
 * about 10% CPU on a 4,096-rank log in one file and nothing measurable at
 * 512 ranks (docs/internals.md).
 * Elsewhere (ARM, an older CPU, a library built for one target) it is
 * hs_scan and the host's target, as the library chooses.
 */
#ifndef CULPRIT_HS_TARGET_H
#define CULPRIT_HS_TARGET_H

#include <hs.h>

typedef hs_error_t (*cp_hs_scan_fn)(const hs_database_t *db, const char *data, unsigned length, unsigned flags,
                                    hs_scratch_t *scratch, match_event_handler on_event, void *context);

/* The routine that scans a block: hs_scan, or the SSE4.2 build's. */
cp_hs_scan_fn cp_hs_scan_routine(void);

/* The platform to compile databases for, or NULL for the host's. */
const hs_platform_info_t *cp_hs_platform(void);

/* "sse42" when the SSE4.2 build is used, "host" otherwise: the database
 * cache keys on it. */
const char *cp_hs_target_name(void);

#endif
