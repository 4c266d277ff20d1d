#include "strutil.h"

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

char *cp_strndup(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *cp_strdup(const char *s)
{
    return s ? cp_strndup(s, strlen(s)) : NULL;
}

/* Skips an ANSI escape sequence starting at s[0] == ESC; returns its length. */
static size_t ansi_len(const char *s, size_t n)
{
    if (n < 2 || s[1] != '[')
        return 1;
    size_t i = 2;
    while (i < n && (isdigit((unsigned char)s[i]) || s[i] == ';' || s[i] == '?'))
        i++;
    return i < n ? i + 1 : n;
}

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static size_t utf8_len(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t len = u[0] >= 0xF0 && u[0] <= 0xF4 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC2 && u[0] <= 0xDF ? 2 : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((u[i] & 0xC0) != 0x80)
            return 0;
    if ((u[0] == 0xE0 && u[1] < 0xA0) || (u[0] == 0xED && u[1] > 0x9F) || (u[0] == 0xF0 && u[1] < 0x90) ||
        (u[0] == 0xF4 && u[1] > 0x8F))
        return 0; /* overlong, surrogate, or beyond U+10FFFF */
    return len;
}

char *cp_display_line(const char *line, size_t len, size_t max)
{
    char *out = malloc((len < max ? len : max) + 4);
    if (out)
        cp_display_into(out, line, len, max);
    return out;
}

/* The length of the run of printable ASCII bytes (0x20-0x7e) that s[0, n)
 * starts with: the bulk of a log line, which display copies as it is.
 * Eight bytes at a time: a byte below 0x20 borrows into its top bit when
 * 0x20 is taken from it, 0x7f carries into it when 1 is added, and any
 * byte from 0x80 has it set; the lowest such byte gets no borrow or carry
 * from the printable bytes below it, so a word without any is all
 * printable and one with any is not. */
size_t cp_printable_prefix(const char *s, size_t n)
{
    const uint64_t ones = UINT64_C(0x0101010101010101), tops = UINT64_C(0x8080808080808080);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x;
        memcpy(&x, s + i, 8);
        if (((x - 0x20 * ones) | (x + ones) | x) & tops)
            break;
    }
    while (i < n && (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f)
        i++;
    return i;
}

size_t cp_display_into(char *out, const char *line, size_t len, size_t max)
{
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    /* A progress bar rewrites itself with '\r': what a terminal shows is
     * the text after the last one. */
    const char *cr = memrchr(line, '\r', len);
    if (cr) {
        len -= (size_t)(cr + 1 - line);
        line = cr + 1;
    }
    size_t cap = len < max ? len : max;
    size_t o = 0, i = 0;
    bool cut = false;
    while (i < len && !(cut = o >= cap)) {
        size_t run = cp_printable_prefix(line + i, (len - i < cap - o ? len - i : cap - o));
        if (run) {
            memcpy(out + o, line + i, run);
            o += run;
            i += run;
            continue;
        }
        unsigned char c = (unsigned char)line[i];
        if (c == 0x1b) {
            i += ansi_len(line + i, len - i);
            continue;
        }
        if (c >= 0x80) {
            /* keep valid UTF-8 sequences whole; a stray byte becomes '?' so
             * every report (JSON above all) stays valid UTF-8 */
            size_t n = utf8_len(line + i, len - i);
            if (n == 0) {
                out[o++] = '?';
                i++;
            } else if (o + n <= cap) {
                memcpy(out + o, line + i, n);
                o += n;
                i += n;
            } else {
                cut = true; /* no room for the whole sequence */
                break;
            }
            continue;
        }
        out[o++] = (c < 0x20 && c != '\t') || c == 0x7f ? ' ' : (char)c;
        i++;
    }
    if (cut) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    while (o > 0 && isspace((unsigned char)out[o - 1]))
        o--;
    out[o] = '\0';
    return o;
}

char *cp_trim(char *s)
{
    char *b = s;
    while (*b && isspace((unsigned char)*b))
        b++;
    size_t n = strlen(b);
    while (n > 0 && isspace((unsigned char)b[n - 1]))
        n--;
    memmove(s, b, n);
    s[n] = '\0';
    return s;
}

bool cp_parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s)
        return false;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s)
        return false;
    *out = v;
    return true;
}

bool cp_starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

const char *cp_memstr(const char *hay, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    if (m == 0)
        return hay;
    for (size_t i = 0; i + m <= n; i++)
        if (strncasecmp(hay + i, needle, m) == 0)
            return hay + i;
    return NULL;
}

/* Off the hot path: the reader's pass over every byte builds the newline
 * map (nlmap.c), which counts as it goes. This serves where no map is at
 * hand: the line number of a warning, a map that could not be allocated. */
uint64_t cp_count_newlines_nul(const char *p, size_t n, bool *nul)
{
    uint64_t total = 0;
    size_t i = 0;
    bool zero = false;

#if defined(__SSE2__) && defined(__x86_64__)
    const __m128i nl = _mm_set1_epi8('\n');
    const __m128i z = _mm_setzero_si128();
    __m128i zeros = _mm_setzero_si128();
    while (n - i >= 16) {
        /* byte counters would wrap after 255 blocks: fold them before */
        size_t blocks = (n - i) / 16 > 255 ? 255 : (n - i) / 16;
        __m128i acc = _mm_setzero_si128();
        for (size_t b = 0; b < blocks; b++, i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
            zeros = _mm_or_si128(zeros, _mm_cmpeq_epi8(v, z));
        }
        acc = _mm_sad_epu8(acc, z);
        total += (uint64_t)_mm_extract_epi16(acc, 0) + (uint64_t)_mm_extract_epi16(acc, 4);
    }
    zero |= _mm_movemask_epi8(zeros) != 0;
#else
    /* eight bytes at a time: a zero byte of w ^ "\n\n..." marks a newline,
     * a zero byte of w itself a NUL */
    const uint64_t ones = 0x0101010101010101u, low7 = 0x7f7f7f7f7f7f7f7fu;
    for (; n - i >= 8; i += 8) {
        uint64_t w, x;
        memcpy(&w, p + i, 8);
        zero |= (~(((w & low7) + low7) | w) & ~low7) != 0;
        x = w ^ (ones * '\n');
        x = ~(((x & low7) + low7) | x) & ~low7;
        total += ((x >> 7) * ones) >> 56;
    }
#endif
    for (; i < n; i++) {
        total += p[i] == '\n';
        zero |= p[i] == '\0';
    }
    if (zero)
        *nul = true;
    return total;
}

uint64_t cp_count_newlines(const char *p, size_t n)
{
    bool nul = false;
    return cp_count_newlines_nul(p, n, &nul);
}

void cp_absent_ranges(const bool *present, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && used + 24 < len; i++) {
        if (present[i])
            continue;
        size_t j = i;
        while (j + 1 < n && !present[j + 1])
            j++;
        int k = j > i ? snprintf(buf + used, len - used, "%s%zu-%zu", used ? "," : "", i, j)
                      : snprintf(buf + used, len - used, "%s%zu", used ? "," : "", i);
        used += (size_t)k;
        i = j;
    }
    if (used + 24 >= len && len > 4)
        snprintf(buf + len - 5, 5, "...");
}
