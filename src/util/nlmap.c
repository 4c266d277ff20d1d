#include "nlmap.h"

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#include <stdlib.h>
#include <string.h>

/* The newline bits of p[0, 64). */
static uint64_t newlines_of_64(const char *p)
{
#if defined(__SSE2__) && defined(__x86_64__)
    const __m128i nl = _mm_set1_epi8('\n');
    uint64_t w = 0;
    for (int k = 0; k < 4; k++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        w |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * k);
    }
    return w;
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* eight bytes at a time: a zero byte of x ^ "\n\n..." marks a newline;
     * the multiply gathers the marks (bit 7 of each byte) into one byte */
    const uint64_t ones = 0x0101010101010101u, low7 = 0x7f7f7f7f7f7f7f7fu;
    uint64_t w = 0;
    for (int k = 0; k < 8; k++) {
        uint64_t x;
        memcpy(&x, p + 8 * k, 8);
        x ^= ones * '\n';
        x = ~(((x & low7) + low7) | x) & ~low7;
        w |= ((x >> 7) * 0x0102040810204080u) >> 56 << (8 * k);
    }
    return w;
#else
    uint64_t w = 0;
    for (int i = 0; i < 64; i++)
        w |= (uint64_t)(p[i] == '\n') << i;
    return w;
#endif
}

int cp_nlmap_build(cp_nlmap *m, const char *data, size_t len)
{
    size_t words = (len + 63) / 64;
    m->len = 0;
    if (words > m->cap) {
        /* no copy of the old bits: they are all rewritten below */
        free(m->bits);
        m->cap = 0;
        if (!(m->bits = malloc(words * sizeof *m->bits)))
            return -1;
        m->cap = words;
    }
    size_t whole = len / 64;
    for (size_t w = 0; w < whole; w++)
        m->bits[w] = newlines_of_64(data + 64 * w);
    if (whole < words) {
        /* the last, partial word: its bits past len stay clear */
        uint64_t w = 0;
        for (size_t i = 64 * whole; i < len; i++)
            w |= (uint64_t)(data[i] == '\n') << (i % 64);
        m->bits[whole] = w;
    }
    m->len = len;
    return 0;
}

void cp_nlmap_free(cp_nlmap *m)
{
    if (!m)
        return;
    free(m->bits);
    memset(m, 0, sizeof *m);
}
