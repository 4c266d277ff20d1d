/* frame_int.h - what the line attribution files share: character classes
 * and small readers (all of them), the timestamp readers of frame_time.c
 * (for frame.c). Internal to frame.c, frame_time.c and frame_path.c. */
#ifndef CULPRIT_FRAME_INT_H
#define CULPRIT_FRAME_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "origin.h"

/* ------------------------------------------------------------ characters */

/* Character classes by table: the recognisers test a few bytes each, on
 * every line, so a load beats a chain of range compares. Bytes >= 0x80 are
 * in no class. */
enum {
    C_DIGIT = 1, C_UPPER = 2, C_LOWER = 4,
    C_TOK = 8,      /* [A-Za-z0-9-._/]: a word-ish token starting a prefix */
    C_NAME = 16,    /* [A-Za-z0-9-._]: host names, syslog tags */
    C_IDENT = 32,   /* [A-Za-z0-9_.]: Python logger names */
    C_ROLE = 64,    /* [A-Za-z_-]: torchrun role names */
    C_PYLOG = 128   /* [A-Za-z0-9_.<>-]: logger in "LEVEL:logger:msg" */
};

#define C_D_ (C_DIGIT | C_TOK | C_NAME | C_IDENT | C_PYLOG)
#define C_U_ (C_UPPER | C_TOK | C_NAME | C_IDENT | C_ROLE | C_PYLOG)
#define C_L_ (C_LOWER | C_TOK | C_NAME | C_IDENT | C_ROLE | C_PYLOG)
static const unsigned char ctab[256] = {
    ['0'] = C_D_, ['1'] = C_D_, ['2'] = C_D_, ['3'] = C_D_, ['4'] = C_D_, ['5'] = C_D_,
    ['6'] = C_D_, ['7'] = C_D_, ['8'] = C_D_, ['9'] = C_D_,
    ['A'] = C_U_, ['B'] = C_U_, ['C'] = C_U_, ['D'] = C_U_, ['E'] = C_U_, ['F'] = C_U_,
    ['G'] = C_U_, ['H'] = C_U_, ['I'] = C_U_, ['J'] = C_U_, ['K'] = C_U_, ['L'] = C_U_,
    ['M'] = C_U_, ['N'] = C_U_, ['O'] = C_U_, ['P'] = C_U_, ['Q'] = C_U_, ['R'] = C_U_,
    ['S'] = C_U_, ['T'] = C_U_, ['U'] = C_U_, ['V'] = C_U_, ['W'] = C_U_, ['X'] = C_U_,
    ['Y'] = C_U_, ['Z'] = C_U_,
    ['a'] = C_L_, ['b'] = C_L_, ['c'] = C_L_, ['d'] = C_L_, ['e'] = C_L_, ['f'] = C_L_,
    ['g'] = C_L_, ['h'] = C_L_, ['i'] = C_L_, ['j'] = C_L_, ['k'] = C_L_, ['l'] = C_L_,
    ['m'] = C_L_, ['n'] = C_L_, ['o'] = C_L_, ['p'] = C_L_, ['q'] = C_L_, ['r'] = C_L_,
    ['s'] = C_L_, ['t'] = C_L_, ['u'] = C_L_, ['v'] = C_L_, ['w'] = C_L_, ['x'] = C_L_,
    ['y'] = C_L_, ['z'] = C_L_,
    ['-'] = C_TOK | C_NAME | C_ROLE | C_PYLOG,
    ['.'] = C_TOK | C_NAME | C_IDENT | C_PYLOG,
    ['_'] = C_TOK | C_NAME | C_IDENT | C_ROLE | C_PYLOG,
    ['/'] = C_TOK,
    ['<'] = C_PYLOG, ['>'] = C_PYLOG,
};
#undef C_D_
#undef C_U_
#undef C_L_

static inline int cls(char c, int m) { return ctab[(unsigned char)c] & m; }
static inline int is_digit(char c) { return cls(c, C_DIGIT); }
static inline int is_upper(char c) { return cls(c, C_UPPER); }
static inline int is_lower(char c) { return cls(c, C_LOWER); }
static inline int is_alpha(char c) { return cls(c, C_UPPER | C_LOWER); }
static inline int is_alnum(char c) { return cls(c, C_DIGIT | C_UPPER | C_LOWER); }
static inline char lower(char c) { return is_upper(c) ? (char)(c + ('a' - 'A')) : c; }

/* End of the run of class-`m` bytes starting at p, at most `max` long. */
static inline size_t span(const char *s, size_t n, size_t p, size_t max, int m)
{
    size_t lim = n - p > max ? p + max : n;
    while (p < lim && cls(s[p], m))
        p++;
    return p;
}

static inline int has_lit(const char *s, size_t n, size_t p, const char *lit, size_t len)
{
    return p <= n && n - p >= len && memcmp(s + p, lit, len) == 0;
}
#define LIT(s, n, p, l) has_lit((s), (n), (p), (l), sizeof(l) - 1)

static inline int eq_nocase(const char *a, size_t alen, const char *b)
{
    size_t k = 0;
    for (; k < alen; k++)
        if (b[k] == '\0' || lower(a[k]) != b[k])
            return 0;
    return b[k] == '\0';
}

/* Whether a[0, alen) is, in any case, one of the n lowercase words. */
static inline int eq_nocase_any(const char *a, size_t alen, const char *const *words, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (eq_nocase(a, alen, words[i]))
            return 1;
    return 0;
}

/* memmem without _GNU_SOURCE: first occurrence of lit in s[0, n). */
static inline const char *find_bytes(const char *s, size_t n, const char *lit, size_t len)
{
    if (len == 0 || n < len)
        return NULL;
    for (const char *e = s + (n - len), *q = s; q <= e; q++) {
        q = memchr(q, lit[0], (size_t)(e - q) + 1);
        if (!q)
            return NULL;
        if (memcmp(q, lit, len) == 0)
            return q;
    }
    return NULL;
}

/* Reads up to maxd (<= 18) digits at s[p] into *v; returns how many. */
static inline size_t read_num(const char *s, size_t n, size_t p, size_t maxd, int64_t *v)
{
    size_t k = 0;
    int64_t x = 0;
    while (p + k < n && k < maxd && is_digit(s[p + k])) {
        x = x * 10 + (s[p + k] - '0');
        k++;
    }
    *v = x;
    return k;
}

/* Two digits at c (the caller has checked the bytes exist). */
static inline int dig2(const char *c, int64_t *v)
{
    if (!is_digit(c[0]) || !is_digit(c[1]))
        return 0;
    *v = (c[0] - '0') * 10 + (c[1] - '0');
    return 1;
}

/* Reads exactly `want` digits that are not followed by another digit. */
static inline int read_fixed(const char *s, size_t n, size_t p, size_t want, int64_t *v)
{
    return read_num(s, n, p, want, v) == want && !(p + want < n && is_digit(s[p + want]));
}

static inline int is_ipv4(const char *s, size_t len)
{
    size_t p = 0;
    for (int part = 0; part < 4; part++) {
        int64_t v;
        size_t k = read_num(s, len, p, 3, &v);
        if (!k || v > 255)
            return 0;
        p += k;
        if (part < 3) {
            if (p >= len || s[p] != '.')
                return 0;
            p++;
        }
    }
    return p == len;
}

/* ------------------------------------------------------- timestamps */

/* Each reads one form at s[p] (n: the line's length) into *t and returns
 * its length, 0 when there is none (frame_time.c). */

/* "YYYY-MM-DD[T _]HH:MM:SS[.frac][Z|+HH:MM|+HHMM]" (also '/' in the date). */
size_t frame_parse_iso(const char *s, size_t n, size_t p, cp_time *t);
/* glog's "MMDD HH:MM:SS.frac" (no year) or "YYYYMMDD HH:MM:SS.frac". */
size_t frame_parse_glog_date(const char *s, size_t n, size_t p, cp_time *t);
/* ctime: "Sun Nov 29 16:19:56 2026" (dmesg -T). */
size_t frame_parse_ctime(const char *s, size_t n, size_t p, cp_time *t);
/* syslog's "May 18 19:02:39" (no year). */
size_t frame_parse_syslog_date(const char *s, size_t n, size_t p, cp_time *t);
/* Any of the above at s[p]; `inner` (inside brackets) adds dmesg's
 * seconds since boot. */
size_t frame_parse_time_at(const char *s, size_t n, size_t p, cp_time *t, int inner);

#endif
