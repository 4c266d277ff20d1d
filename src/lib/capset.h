/* capset.h - the captures an event keeps, packed.
 *
 * The matcher fills a cp_captures per line: 16 fixed slots of name and
 * value (about 2.9 KB), right for a scratch on the stack, wrong for what is
 * kept per event: a cascade over thousands of ranks keeps tens of thousands
 * of events, most with two or three short captures. A cp_capset holds only
 * the captures present, as "name\0value\0" pairs in one heap block, in the
 * order they were captured (so the first value of a name still wins).
 */
#ifndef CULPRIT_CAPSET_H
#define CULPRIT_CAPSET_H

#include <stdint.h>

#include "matcher.h"

typedef struct cp_capset {
    char *packed;   /* n "name\0value\0" pairs; NULL when n == 0 */
    uint32_t size;  /* bytes of packed */
    uint16_t n;
    /* one bit per name present (capset.c's name_bit): the analysis asks
     * every event of a 16k-rank cascade for names few of them have, and
     * a clear bit answers without walking the pairs */
    uint16_t names;
} cp_capset;

/* Packs the captures of `c` into *out, overwriting it. Returns 0, or -1
 * when out of memory (then *out is empty). The caller owns *out and frees
 * it with cp_capset_free. */
int cp_capset_pack(cp_capset *out, const cp_captures *c);

/* Frees what *s holds and leaves it empty. Accepts NULL. */
void cp_capset_free(cp_capset *s);

/* Value of a captured name, or NULL. */
const char *cp_capset_get(const cp_capset *s, const char *name);

/* Walks the captures in order: pass prev = NULL for the first. Returns the
 * next name and its value through *value, or NULL after the last. Both
 * point into s and live as long as it does. */
const char *cp_capset_next(const cp_capset *s, const char *prev, const char **value);

#endif
