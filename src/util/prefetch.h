/* prefetch.h - asking the CPU for memory a loop will read soon.
 *
 * The serial part of a scan at thousands of ranks visits writers and
 * index slots in no order the hardware can guess; it knows them some
 * lines ahead (prepare.c works out each line's writer key), and asks. */
#ifndef CULPRIT_PREFETCH_H
#define CULPRIT_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

enum { CP_CACHE_LINE = 64 };

/* Every cache line of p[0, n). A hint only: it never faults. */
static inline void cp_prefetch_range(const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)(CP_CACHE_LINE - 1);
    for (uintptr_t end = (uintptr_t)p + n; a < end; a += CP_CACHE_LINE)
        __builtin_prefetch((const void *)a);
}

#endif
