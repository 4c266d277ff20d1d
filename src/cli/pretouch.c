/* pretouch.c - see pretouch.h. */
#include "pretouch.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "inputs.h"

enum {
    /* inputs up to this size are pretouched; larger ones are not */
    PRETOUCH_INPUT_MAX = 64 << 20,
    /* what a run touches grows with its input: about 3x the bytes of a
     * 10 MB paste, hit lists and prepared lines included; and a run over
     * a few lines still loads the rules (3 MB of heap) */
    PRETOUCH_PER_INPUT_BYTE = 3,
    PRETOUCH_MIN = 4 << 20,
    PRETOUCH_MAX = 32 << 20,
    /* buffers below this come from the (pretouched) heap; the reader's
     * and the pipeline's chunk buffers are 4 MiB and a bit */
    HEAP_MAX_BLOCK = PRETOUCH_MAX + (1 << 20),
    /* the size of a transparent huge page on x86-64 and most arm64
     * kernels; on others the advice covers fewer whole pages, no harm */
    HUGE_PAGE = 2 << 20
};

static uintptr_t align_up(uintptr_t p, uintptr_t to)
{
    return (p + to - 1) & ~(to - 1);
}

static size_t pretouch_bytes(unsigned long long input)
{
    if (input >= PRETOUCH_INPUT_MAX)
        return 0;
    unsigned long long want = input * PRETOUCH_PER_INPUT_BYTE;   /* 0 when unknown: the least */
    return want < PRETOUCH_MIN ? PRETOUCH_MIN : want > PRETOUCH_MAX ? PRETOUCH_MAX : (size_t)want;
}

void cli_pretouch(const char *const *paths, size_t n)
{
#if defined(__GLIBC__) && defined(MADV_POPULATE_WRITE)
    size_t bytes = pretouch_bytes(cli_input_bytes(paths, n, PRETOUCH_INPUT_MAX));
    long page = sysconf(_SC_PAGESIZE);
    if (!bytes || page <= 0)
        return;
    /* one heap for every thread (the workers' own arenas would start
     * untouched), large blocks from it rather than fresh mappings, and
     * nothing given back while the run lasts */
    mallopt(M_ARENA_MAX, 1);
    mallopt(M_MMAP_THRESHOLD, HEAP_MAX_BLOCK);
    mallopt(M_TRIM_THRESHOLD, 2 * PRETOUCH_MAX);
    /* a huge page more, so that `bytes` of it lie on whole huge pages */
    char *block = malloc(bytes + HUGE_PAGE);
    if (!block)
        return;
    uintptr_t from = align_up((uintptr_t)block, (uintptr_t)page);
    uintptr_t huge = align_up((uintptr_t)block, HUGE_PAGE);
    uintptr_t to = ((uintptr_t)block + bytes + HUGE_PAGE) & ~((uintptr_t)page - 1);
    /* huge pages first, so that the populate below fills them. A kernel
     * without THP refuses the advice, one with THP off ignores it: either
     * way 4 KiB pages are filled. With THP's defrag at "madvise" a
     * fragmented host may compact memory for these pages first, a bounded
     * cost (32 MiB at most). */
#ifdef MADV_HUGEPAGE
    if (to > huge)
        (void)madvise((void *)huge, to - huge, MADV_HUGEPAGE);
#else
    (void)huge;
#endif
    if (to > from)
        (void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);   /* EINVAL before Linux 5.14: no harm */
    free(block);   /* back to the heap's top, where the next allocations find it */
#else
    (void)paths;
    (void)n;
#endif
}
