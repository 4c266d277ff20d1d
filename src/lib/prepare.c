/* prepare.c - line numbers, prefixes and progress thinning of a chunk
 * (see prepare.h). */
#include "prepare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "util/strutil.h"

/* A writer identity seen in the current run of progress lines. It holds
 * the identity itself, so a probe compares it without reading the line it
 * came from (at thousands of ranks, that read missed the cache). */
typedef struct prep_key {
    int32_t rank, local_rank, pid, task, cuda_dev;
    uint32_t host;          /* the chunk's host number (host_number) */
    uint32_t first, last;   /* indices of its first and last line in the run */
    uint32_t count;
    uint32_t generation;    /* entries of older runs are free */
} prep_key;

/* A host name of the chunk, numbered in order of appearance. */
typedef struct prep_host {
    uint64_t hash;
    uint32_t number;
    uint32_t generation;    /* entries of older chunks are free */
} prep_host;

static bool only_progress(const cp_catalog *cat, const cp_line_hits *h)
{
    for (uint32_t i = 0; i < h->n_rules; i++)
        if (cat->rules[h->rules[i]].role != CP_ROLE_PROGRESS)
            return false;
    return h->n_rules > 0;
}

/* A line without a level or time of its own may take its identity from
 * the line before it (events.c): it is never skipped, nor grouped. */
static bool bare(const cp_line_prep *lp)
{
    return lp->parsed.level == 0 && lp->parsed.time.kind == CP_TS_NONE;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    return h;
}

/* The fields that decide which writer a line belongs to (ranks.c). */
static uint64_t identity_hash(const cp_origin *o, uint64_t host)
{
    uint64_t h = host;
    h = mix(h, (uint32_t)o->rank);
    h = mix(h, (uint32_t)o->local_rank);
    h = mix(h, (uint32_t)o->pid);
    h = mix(h, (uint32_t)o->task);
    h = mix(h, (uint32_t)o->cuda_dev);
    return h;
}

static bool same_identity(const prep_key *k, const cp_origin *o, uint32_t host)
{
    return k->rank == o->rank && k->local_rank == o->local_rank && k->pid == o->pid && k->task == o->task &&
           k->cuda_dev == o->cuda_dev && k->host == host;
}

/* The identity table is probed for every progress line, so it stays as
 * small as the identities need: it starts at KEYS_MIN slots and doubles
 * for the next chunk whenever a run filled half of it, up to KEYS_MAX.
 * Lines of identities that do not fit are simply kept. The host table
 * has as many slots, and as many hosts at most as identities. */
enum { KEYS_MIN = 64, KEYS_MAX = 16384 };

static int size_tables(cp_prepared *p)
{
    if (p->n > p->cap_grouped) {
        bool *g = realloc(p->grouped, p->n * sizeof *g);
        if (!g)
            return -1;
        p->grouped = g;
        p->cap_grouped = p->n;
    }
    size_t want = p->cap_keys ? p->cap_keys : KEYS_MIN;
    if (p->keys_full && want < KEYS_MAX)
        want *= 2;
    p->keys_full = false;
    if (want == p->cap_keys)
        return 0;
    prep_key *k = calloc(want, sizeof *k);
    prep_host *h = calloc(want, sizeof *h);
    char(*names)[CP_HOST_MAX] = malloc(want / 2 * sizeof *names);
    if (!k || !h || !names) {
        free(k);
        free(h);
        free(names);
        return -1;
    }
    free(p->keys);
    free(p->hosts);
    free(p->host_names);
    p->keys = k;
    p->hosts = h;
    p->host_names = names;
    p->cap_keys = want;
    p->generation = 0;
    p->host_generation = 0;
    return 0;
}

/* The number of the line's host in this chunk (given the hash of its
 * name), or UINT32_MAX when the table is half full and the name new. */
static uint32_t host_number(cp_prepared *p, const char *host, uint64_t hash)
{
    size_t mask = p->cap_keys - 1;
    for (size_t j = hash & mask;; j = (j + 1) & mask) {
        prep_host *e = &p->hosts[j];
        if (e->generation != p->host_generation) {
            if (2 * (p->n_hosts + 1) > p->cap_keys) {
                p->keys_full = true;
                return UINT32_MAX;
            }
            *e = (prep_host){.hash = hash, .number = (uint32_t)p->n_hosts, .generation = p->host_generation};
            snprintf(p->host_names[p->n_hosts], CP_HOST_MAX, "%s", host);
            return (uint32_t)p->n_hosts++;
        }
        if (e->hash == hash && strcmp(p->host_names[e->number], host) == 0)
            return e->number;
    }
}

/* The line's identity in the table (added if new), or NULL when a table
 * is half full and the identity new. */
static prep_key *key_for(cp_prepared *p, uint32_t line)
{
    const cp_origin *o = &p->lines[line].parsed;
    uint64_t hh = cp_hash_str(CP_HASH_SEED, o->host);
    uint32_t host = host_number(p, o->host, hh);
    if (host == UINT32_MAX)
        return NULL;
    uint64_t h = identity_hash(o, hh);
    size_t mask = p->cap_keys - 1;
    for (size_t j = h & mask;; j = (j + 1) & mask) {
        prep_key *k = &p->keys[j];
        if (k->generation != p->generation) {
            if (2 * (p->keys_used + 1) > p->cap_keys) {
                p->keys_full = true;
                return NULL;
            }
            p->keys_used++;
            *k = (prep_key){.rank = o->rank, .local_rank = o->local_rank, .pid = o->pid,
                            .task = o->task, .cuda_dev = o->cuda_dev, .host = host,
                            .first = line, .last = line, .generation = p->generation};
            return k;
        }
        if (same_identity(k, o, host))
            return k;
    }
}

/* Lines [from, to) are a run of progress lines; `grouped` marks the ones
 * that are not bare. */
static void thin_run(cp_prepared *p, bool *grouped, uint32_t from, uint32_t to)
{
    if (to - from < 3)
        return;
    if (++p->generation == 0) {
        memset(p->keys, 0, p->cap_keys * sizeof *p->keys);
        p->generation = 1;
    }
    p->keys_used = 0;
    /* weight temporarily holds the key's slot */
    for (uint32_t i = from; i < to; i++) {
        if (!grouped[i])
            continue;
        prep_key *k = key_for(p, i);
        if (!k) {
            grouped[i] = false;
            continue;
        }
        k->last = i;
        k->count++;
        p->lines[i].weight = (uint32_t)(k - p->keys);
    }
    for (uint32_t i = from; i < to; i++) {
        if (!grouped[i])
            continue;
        const prep_key *k = &p->keys[p->lines[i].weight];
        if (i == k->first)
            p->lines[i].weight = 1;
        else if (i == k->last)
            p->lines[i].weight = k->count - 1;
        else
            p->lines[i].weight = 0;
    }
}

/* Runs end at lines that are not only progress (errors, frames, phase
 * and identity lines), which always count in full. */
static void thin(const cp_catalog *cat, const cp_hit_list *hits, cp_prepared *p)
{
    bool *grouped = p->grouped;
    if (++p->host_generation == 0) {
        memset(p->hosts, 0, p->cap_keys * sizeof *p->hosts);
        p->host_generation = 1;
    }
    p->n_hosts = 0;
    uint32_t run = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        bool progress = only_progress(cat, &hits->lines[i]);
        grouped[i] = progress && !bare(&p->lines[i]);
        if (!progress) {
            thin_run(p, grouped, run, i);
            run = i + 1;
        }
    }
    thin_run(p, grouped, run, (uint32_t)p->n);
}

/* The progress rule the incident reads a line's step with: the last one
 * in catalog order (events.c, classify); UINT32_MAX when none hit.
 * *only: no rule of another role hit. */
static uint32_t progress_rule(const cp_catalog *cat, const cp_line_hits *h, bool *only)
{
    uint32_t rule = UINT32_MAX;
    *only = true;
    for (uint32_t i = 0; i < h->n_rules; i++) {
        if (cat->rules[h->rules[i]].role == CP_ROLE_PROGRESS)
            rule = h->rules[i];
        else
            *only = false;
    }
    return rule;
}

/* The set of writer keys seen later in the chunk: open addressing over
 * their hashes (never 0), at most half full. */
static int later_grow(cp_prepared *p)
{
    size_t cap = p->cap_later ? 2 * p->cap_later : 256;
    uint64_t *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < p->cap_later; i++) {
        uint64_t h = p->later[i];
        size_t j = h & (cap - 1);
        while (h && t[j])
            j = (j + 1) & (cap - 1);
        t[j] = h;
    }
    free(p->later);
    p->later = t;
    p->cap_later = cap;
    return 0;
}

/* Adds a hash to the set; *seen: it was there. */
static int seen_later(cp_prepared *p, uint64_t hash, bool *seen)
{
    if (2 * (p->n_later + 1) > p->cap_later && later_grow(p) != 0)
        return -1;
    size_t mask = p->cap_later - 1;
    size_t j = hash & mask;
    while (p->later[j] && p->later[j] != hash)
        j = (j + 1) & mask;
    *seen = p->later[j] == hash;
    if (!*seen) {
        p->later[j] = hash;
        p->n_later++;
    }
    return 0;
}

/* What the incident needs of each kept line besides its prefixes:
 *
 * Its writer key as far as its own prefixes give it (the incident works
 * out the rest: the stream's identity, the line before's).
 *
 * The step of a progress line that may be its writer's last in the chunk
 * (events.c reads a writer's step from that one). A kept line that is
 * only progress and not bare has the writer its stream and its own
 * prefixes give, with no state in between, so of such lines with the
 * same key only the last can be its writer's last: walking back from the
 * chunk's end, the others are marked superseded and their steps are not
 * read. Where the key misleads (hashes that collide), the incident reads
 * the step itself. */
static int finish_lines(const cp_catalog *cat, cp_scanner *sc, const char *data, const cp_hit_list *hits,
                        cp_prepared *p)
{
    if (p->n_later)
        memset(p->later, 0, p->cap_later * sizeof *p->later);
    p->n_later = 0;
    for (size_t i = p->n; i-- > 0;) {
        cp_line_prep *lp = &p->lines[i];
        if (lp->weight == 0)
            continue;
        cp_writer_key_of(&lp->parsed, -1, &lp->key);
        const cp_line_hits *h = &hits->lines[i];
        bool only;
        uint32_t rule = progress_rule(cat, h, &only);
        if (rule == UINT32_MAX)
            continue;
        if (only && !bare(lp) && seen_later(p, lp->key.hash, &lp->superseded) != 0)
            return -1;
        if (lp->superseded)
            continue;
        lp->step_read = true;
        lp->has_step = cp_scanner_step(sc, rule, data + h->start, h->len, &lp->step);
    }
    return 0;
}

int cp_prepare(const cp_catalog *cat, cp_scanner *sc, const char *data, uint64_t first_line,
               const cp_hit_list *hits, bool thin_progress, cp_prepared *out)
{
    if (hits->n > out->cap) {
        cp_line_prep *grown = realloc(out->lines, hits->n * sizeof *grown);
        if (!grown)
            return -1;
        out->lines = grown;
        out->cap = hits->n;
    }
    out->n = hits->n;
    for (size_t i = 0; i < hits->n; i++) {
        const cp_line_hits *h = &hits->lines[i];
        cp_line_prep *lp = &out->lines[i];
        lp->no = first_line + h->number;
        lp->weight = 1;
        lp->key.kind = 0;
        lp->superseded = lp->step_read = lp->has_step = false;
        cp_origin_init(&lp->parsed);
        cp_frame_parse(data + h->start, h->len, &lp->parsed);
    }
    if (thin_progress && out->n >= 3 && out->n <= UINT32_MAX / 2) {
        if (size_tables(out) != 0)
            return -1;
        thin(cat, hits, out);
    }
    return finish_lines(cat, sc, data, hits, out);
}

void cp_prepared_free(cp_prepared *p)
{
    free(p->lines);
    free(p->keys);
    free(p->hosts);
    free(p->host_names);
    free(p->grouped);
    free(p->later);
    memset(p, 0, sizeof *p);
}
