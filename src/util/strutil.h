/* strutil.h - small string helpers shared by the modules. */
#ifndef CULPRIT_STRUTIL_H
#define CULPRIT_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* strdup of at most n bytes; NULL only when out of memory. */
char *cp_strndup(const char *s, size_t n);
char *cp_strdup(const char *s);
/* Copies a line for display: at most `max` bytes, with ANSI colour codes
 * removed, control bytes turned into spaces, text after the last '\r'
 * (progress bars) kept, trailing whitespace trimmed. Caller frees. */
char *cp_display_line(const char *line, size_t len, size_t max);
/* The same into `out`, which has room for min(len, max) + 4 bytes;
 * returns the length written (a NUL follows). */
size_t cp_display_into(char *out, const char *line, size_t len, size_t max);

/* The length of the run of printable ASCII bytes (0x20-0x7e) that
 * s[0, n) starts with, read eight bytes at a time. */
size_t cp_printable_prefix(const char *s, size_t n);
/* Trims leading and trailing whitespace in place; returns s. */
char *cp_trim(char *s);
/* Parses a decimal integer (optional sign); returns false if none. */
bool cp_parse_i64(const char *s, int64_t *out);
/* True when s starts with prefix. */
bool cp_starts_with(const char *s, const char *prefix);
/* Case-insensitive substring search bounded by n bytes of hay. */
const char *cp_memstr(const char *hay, size_t n, const char *needle);
/* The number of '\n' bytes in p[0, n). */
uint64_t cp_count_newlines(const char *p, size_t n);
/* The same, and in the same pass whether p[0, n) holds a NUL byte: sets
 * *nul when it does (leaves it alone otherwise). */
uint64_t cp_count_newlines_nul(const char *p, size_t n, bool *nul);
/* "3,5-7" for the missing members of 0..n-1 (present[i] false), cut
 * with "..." where buf[len] is too short. */
void cp_absent_ranges(const bool *present, size_t n, char *buf, size_t len);

/* FNV-1a, for the in-memory hash tables (writers, identity facts, the
 * thinning table); not a stable format. Start from CP_HASH_SEED and feed
 * values (cp_hash_step) or strings (cp_hash_str). */
#define CP_HASH_SEED UINT64_C(1469598103934665603)

static inline uint64_t cp_hash_step(uint64_t h, uint64_t v)
{
    return (h ^ v) * UINT64_C(1099511628211);
}

static inline uint64_t cp_hash_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = cp_hash_step(h, (unsigned char)*s);
    return h;
}

#endif
