#include "nlmap.h"

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

#include <stdlib.h>
#include <string.h>

/* The newline bits of p[0, 64); *nul is set when a NUL is among them. */
static uint64_t newlines_of_64(const char *p, bool *nul)
{
#if defined(__SSE2__) && defined(__x86_64__)
    const __m128i nl = _mm_set1_epi8('\n'), z = _mm_setzero_si128();
    __m128i zeros = z;
    uint64_t w = 0;
    for (int k = 0; k < 4; k++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));
        w |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * k);
        zeros = _mm_or_si128(zeros, _mm_cmpeq_epi8(v, z));
    }
    *nul |= _mm_movemask_epi8(zeros) != 0;
    return w;
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* eight bytes at a time: a zero byte of x ^ "\n\n..." marks a newline,
     * a zero byte of x itself a NUL; the multiply gathers the marks (bit 7
     * of each byte) into one byte */
    const uint64_t ones = 0x0101010101010101u, low7 = 0x7f7f7f7f7f7f7f7fu;
    uint64_t w = 0, zero = 0;
    for (int k = 0; k < 8; k++) {
        uint64_t x, y;
        memcpy(&x, p + 8 * k, 8);
        zero |= ~(((x & low7) + low7) | x) & ~low7;
        y = x ^ ones * '\n';
        y = ~(((y & low7) + low7) | y) & ~low7;
        w |= ((y >> 7) * 0x0102040810204080u) >> 56 << (8 * k);
    }
    *nul |= zero != 0;
    return w;
#else
    uint64_t w = 0;
    for (int i = 0; i < 64; i++) {
        w |= (uint64_t)(p[i] == '\n') << i;
        *nul |= p[i] == '\0';
    }
    return w;
#endif
}

/* Fills bits[0, words) from data; returns the number of newlines. */
static uint64_t map_words(uint64_t *bits, const char *data, size_t words, bool *nul)
{
    uint64_t n = 0;
    for (size_t w = 0; w < words; w++) {
        bits[w] = newlines_of_64(data + 64 * w, nul);
        n += cp_nlmap_popcount(bits[w]);
    }
    return n;
}

#ifdef HAVE_AVX2_PATH
/* AVX2 when the CPU has it (the build targets plain x86-64): a word of the
 * map from two loads. */
__attribute__((target("avx2,popcnt"))) static uint64_t map_words_avx2(uint64_t *bits, const char *data,
                                                                      size_t words, bool *nul)
{
    const __m256i nl = _mm256_set1_epi8('\n'), z = _mm256_setzero_si256();
    __m256i zeros = z;
    uint64_t n = 0;
    for (size_t w = 0; w < words; w++) {
        const char *p = data + 64 * w;
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)p);
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));
        uint64_t lo = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, nl));
        uint64_t hi = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(b, nl));
        bits[w] = lo | hi << 32;
        n += (uint64_t)__builtin_popcountll(bits[w]);
        zeros = _mm256_or_si256(zeros, _mm256_or_si256(_mm256_cmpeq_epi8(a, z), _mm256_cmpeq_epi8(b, z)));
    }
    *nul |= _mm256_movemask_epi8(zeros) != 0;
    return n;
}
#endif

int cp_nlmap_build(cp_nlmap *m, const char *data, size_t len)
{
    size_t words = (len + 63) / 64;
    m->len = 0;
    m->newlines = 0;
    m->nul = false;
    if (words > m->cap) {
        /* no copy of the old bits: they are all rewritten below */
        free(m->bits);
        m->cap = 0;
        if (!(m->bits = malloc(words * sizeof *m->bits)))
            return -1;
        m->cap = words;
    }
    size_t whole = len / 64;
#ifdef HAVE_AVX2_PATH
    if (__builtin_cpu_supports("avx2"))
        m->newlines = map_words_avx2(m->bits, data, whole, &m->nul);
    else
#endif
        m->newlines = map_words(m->bits, data, whole, &m->nul);
    if (whole < words) {
        /* the last, partial word: its bits past len stay clear */
        uint64_t w = 0;
        for (size_t i = 64 * whole; i < len; i++) {
            w |= (uint64_t)(data[i] == '\n') << (i % 64);
            m->nul |= data[i] == '\0';
        }
        m->bits[whole] = w;
        m->newlines += cp_nlmap_popcount(w);
    }
    m->len = len;
    return 0;
}

void cp_nlmap_swap(cp_nlmap *a, cp_nlmap *b)
{
    cp_nlmap t = *a;
    *a = *b;
    *b = t;
}

void cp_nlmap_free(cp_nlmap *m)
{
    if (!m)
        return;
    free(m->bits);
    memset(m, 0, sizeof *m);
}
