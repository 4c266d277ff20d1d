/* nlmap.h - where the '\n' bytes of a chunk are, one bit per byte.
 *
 * The scanner turns match ends into lines. Built in one SIMD pass, the map
 * answers "where does the line holding byte b start and end" and "how many
 * newlines lie between two offsets" with a few word operations, where
 * memrchr, memchr and a newline count would each read the bytes again for
 * every hit line (nearly every line of a training log). It takes 1/8 of
 * the chunk's size.
 */
#ifndef CULPRIT_NLMAP_H
#define CULPRIT_NLMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cp_nlmap {
    uint64_t *bits;  /* bit i % 64 of bits[i / 64] is set when data[i] == '\n' */
    size_t len;      /* bytes mapped; bits past len are clear */
    size_t cap;      /* words allocated, kept for the next chunk */
    uint64_t newlines; /* '\n' bytes in data[0, len) */
    bool nul;        /* a NUL byte lies in data[0, len) */
} cp_nlmap;

/* Maps data[0, len), reusing the map's memory, and counts its newlines
 * and looks for NUL bytes on the way: the reader's one pass over every
 * byte it delivers, whose map the scanner then uses. Returns 0, or -1
 * when out of memory (the map is then empty). */
int cp_nlmap_build(cp_nlmap *m, const char *data, size_t len);
/* Exchanges two maps (their memory too): a consumer keeps the map of a
 * chunk it keeps, and gives the reader its old one to build the next. */
void cp_nlmap_swap(cp_nlmap *a, cp_nlmap *b);
/* Frees the bits; the map may be built again. Accepts NULL. */
void cp_nlmap_free(cp_nlmap *m);

static inline unsigned cp_nlmap_popcount(uint64_t w)
{
#if defined(__POPCNT__) || defined(__aarch64__)
    return (unsigned)__builtin_popcountll(w);
#else
    /* without a popcount instruction the builtin is a libgcc call */
    w -= (w >> 1) & 0x5555555555555555u;
    w = (w & 0x3333333333333333u) + ((w >> 2) & 0x3333333333333333u);
    w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0fu;
    return (unsigned)((w * 0x0101010101010101u) >> 56);
#endif
}

/* Whether data[b] (b < len) is a '\n'. */
static inline bool cp_nlmap_is_newline(const cp_nlmap *m, size_t b)
{
    return (m->bits[b / 64] >> (b % 64)) & 1;
}

/* Where the line holding byte b (< len) starts: just after the last '\n'
 * before b, or 0. A '\n' belongs to the line it ends. */
static inline size_t cp_nlmap_line_start(const cp_nlmap *m, size_t b)
{
    size_t w = b / 64;
    uint64_t before = m->bits[w] & ((UINT64_C(1) << (b % 64)) - 1);
    while (!before) {
        if (w == 0)
            return 0;
        before = m->bits[--w];
    }
    return w * 64 + (63 - (size_t)__builtin_clzll(before)) + 1;
}

/* Where the line holding byte b (< len) ends: the first '\n' at or after
 * b, or len when the chunk ends without one. */
static inline size_t cp_nlmap_line_end(const cp_nlmap *m, size_t b)
{
    size_t w = b / 64, words = (m->len + 63) / 64;
    uint64_t after = m->bits[w] & (~UINT64_C(0) << (b % 64));
    while (!after) {
        if (++w == words)
            return m->len;
        after = m->bits[w];
    }
    return w * 64 + (size_t)__builtin_ctzll(after);
}

/* The number of '\n' bytes in data[from, to), to <= len. */
static inline size_t cp_nlmap_count(const cp_nlmap *m, size_t from, size_t to)
{
    if (from >= to)
        return 0;
    if (to - from == 1) /* the '\n' between two hit lines: the common case */
        return (unsigned)(m->bits[from / 64] >> (from % 64)) & 1;
    size_t w = from / 64, last = (to - 1) / 64;
    uint64_t head = ~UINT64_C(0) << (from % 64), tail = ~UINT64_C(0) >> (63 - (to - 1) % 64);
    if (w == last)
        return cp_nlmap_popcount(m->bits[w] & head & tail);
    size_t n = cp_nlmap_popcount(m->bits[w] & head);
    for (w++; w < last; w++)
        n += cp_nlmap_popcount(m->bits[w]);
    return n + cp_nlmap_popcount(m->bits[last] & tail);
}

#endif
