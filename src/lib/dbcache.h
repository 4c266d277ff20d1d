/* dbcache.h - compiled vectorscan databases kept between runs.
 *
 * Compiling the catalog takes most of a second; loading a serialized
 * database takes about a millisecond, which is what lets a 10 MB paste be
 * diagnosed in tens of milliseconds. The cache is keyed by a hash of every
 * expression, its flags and id, and the vectorscan version, so an edited
 * rule file or a new library compiles afresh. Location:
 * $CULPRIT_CACHE_DIR, else $XDG_CACHE_HOME/culprit, else ~/.cache/culprit;
 * CULPRIT_CACHE_DIR=off disables it. Any failure just means compiling.
 */
#ifndef CULPRIT_DBCACHE_H
#define CULPRIT_DBCACHE_H

#include <hs.h>
#include <stddef.h>
#include <stdint.h>

/* Incremental key: feed every expression with its flags and id. */
typedef struct cp_dbkey {
    uint64_t h1, h2;
} cp_dbkey;

void cp_dbkey_init(cp_dbkey *k);
void cp_dbkey_add(cp_dbkey *k, const char *expr, unsigned flags, unsigned id);

/* Returns a database (caller frees with hs_free_database) or NULL. */
hs_database_t *cp_dbcache_load(const cp_dbkey *k);
/* Best effort: writes atomically (temporary file, then rename). */
void cp_dbcache_store(const cp_dbkey *k, const hs_database_t *db);

#endif
