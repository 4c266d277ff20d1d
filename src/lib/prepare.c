/* prepare.c - line numbers, prefixes and progress thinning of a chunk
 * (see prepare.h). */
#include "prepare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "util/prefetch.h"
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

/* What thinning needs of a progress line, worked out when it is parsed;
 * `slot` is its identity's, from the first loop of thin_run to the second. */
typedef struct line_scratch {
    uint64_t host_hash, identity_hash;
    uint32_t slot;
} line_scratch;

/* A host name of the chunk, numbered in order of appearance. */
typedef struct prep_host {
    uint64_t hash;
    uint32_t number;
    uint32_t generation;    /* entries of older chunks are free */
} prep_host;

/* What a line is, for thinning and steps: bits of cp_prepared.flags, a
 * byte per line, so that the passes after parsing read the lines' flags
 * and not the lines (megabytes a chunk, out of the cache by then). */
enum {
    LINE_ONLY_PROGRESS = 1, /* every rule that hit is a progress rule */
    LINE_BARE = 2,          /* no level nor time of its own */
    LINE_GROUPED = 4,       /* thinned with the other lines of its identity */
    LINE_TIMED = 8          /* a time of its own */
};

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

/* The fields that decide which writer a line belongs to (ranks.c). */
static uint64_t identity_hash(const cp_origin *o, uint64_t host)
{
    uint64_t h = host;
    h = cp_hash_step(h, (uint32_t)o->rank);
    h = cp_hash_step(h, (uint32_t)o->local_rank);
    h = cp_hash_step(h, (uint32_t)o->pid);
    h = cp_hash_step(h, (uint32_t)o->task);
    return cp_hash_step(h, (uint32_t)o->cuda_dev);
}

static bool same_identity(const prep_key *k, const cp_prefixes *o, uint32_t host)
{
    return k->rank == o->rank && k->local_rank == o->local_rank && k->pid == o->pid && k->task == o->task &&
           k->cuda_dev == o->cuda_dev && k->host == host;
}

/* The identity table is probed for every progress line, so it stays as
 * small as the identities need: it starts at KEYS_MIN slots, and when a
 * run of progress lines fills half of it, it grows fourfold at once and
 * the run is thinned again (thin_each), up to KEYS_MAX. (It used to grow
 * for the next chunk: at 4,096 ranks the first 25 chunks of each slot were
 * then barely thinned.) Beyond KEYS_MAX, lines of identities that do not
 * fit are simply kept. The host table has as many slots, and as many
 * hosts at most as identities. */
enum { KEYS_MIN = 64, KEYS_MAX = 16384, KEYS_GROWTH = 4 };

/* Empty tables of `want` slots in place of the old ones. */
static int new_tables(cp_prepared *p, size_t want)
{
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
    p->generation = 0;      /* calloc's 0: every entry free for the next run */
    p->host_generation = 1; /* and for the hosts of this chunk */
    p->n_hosts = 0;
    return 0;
}

static int size_tables(cp_prepared *p)
{
    return p->cap_keys ? 0 : new_tables(p, KEYS_MIN);
}

/* Most progress lines name no host: "" is told apart without a call. */
static bool same_name(const char *a, const char *b)
{
    return a[0] == b[0] && (a[0] == '\0' || strcmp(a + 1, b + 1) == 0);
}

/* The number of the line's host in this chunk (given the hash of its
 * name), or UINT32_MAX when the table is half full and the name new. */
static uint32_t host_number(cp_prepared *p, const char *host, uint64_t hash)
{
    size_t mask = p->cap_keys - 1;
    for (size_t j = hash & mask;; j = (j + 1) & mask) {
        prep_host *e = &p->hosts[j];
        if (e->generation != p->host_generation) {
            if (2 * (p->n_hosts + 1) > p->cap_keys)
                return UINT32_MAX;
            *e = (prep_host){.hash = hash, .number = (uint32_t)p->n_hosts, .generation = p->host_generation};
            snprintf(p->host_names[p->n_hosts], CP_HOST_MAX, "%s", host);
            return (uint32_t)p->n_hosts++;
        }
        if (e->hash == hash && same_name(p->host_names[e->number], host))
            return e->number;
    }
}

/* The line's identity in the table (added if new), or NULL when a table
 * is half full and the identity new. */
static prep_key *key_for(cp_prepared *p, uint32_t line)
{
    const cp_prefixes *o = &p->lines[line].parsed;
    uint32_t host = host_number(p, cp_prepared_host(p, &p->lines[line]), p->scratch[line].host_hash);
    if (host == UINT32_MAX)
        return NULL;
    uint64_t h = p->scratch[line].identity_hash;
    size_t mask = p->cap_keys - 1;
    for (size_t j = h & mask;; j = (j + 1) & mask) {
        prep_key *k = &p->keys[j];
        if (k->generation != p->generation) {
            if (2 * (p->keys_used + 1) > p->cap_keys)
                return NULL;
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

/* Notes that line i is skipped: it joins the run of skipped lines that
 * ends just before it, or starts one. Returns 0, or -1 when out of memory. */
static int add_skip(cp_prepared *p, uint32_t i)
{
    cp_skip *last = p->n_skips ? &p->skips[p->n_skips - 1] : NULL;
    if (!last || last->to != i) {
        if (p->n_skips == p->cap_skips) {
            size_t cap = p->cap_skips ? 2 * p->cap_skips : 64;
            cp_skip *grown = realloc(p->skips, cap * sizeof *grown);
            if (!grown)
                return -1;
            p->skips = grown;
            p->cap_skips = cap;
        }
        last = &p->skips[p->n_skips++];
        *last = (cp_skip){.from = i, .to = i, .first_timed = CP_SKIP_UNTIMED, .last_timed = CP_SKIP_UNTIMED};
    }
    last->to = i + 1;
    if (p->flags[i] & LINE_TIMED) {
        if (last->first_timed == CP_SKIP_UNTIMED)
            last->first_timed = i;
        last->last_timed = i;
    }
    return 0;
}

/* Lines are thinned a while after they were parsed, the chunk's lines
 * (megabytes) out of the cache by then, and the identity table is larger
 * than the cache at thousands of ranks: the first loop of thin_run asks
 * for line i + THIN_AHEAD's prefixes and its identity's slot. */
enum { THIN_AHEAD = 8 };

static void ask_ahead(const cp_prepared *p, uint32_t i)
{
    if (!(p->flags[i] & LINE_GROUPED))
        return;
    cp_prefetch_range(&p->lines[i].parsed, sizeof p->lines[i].parsed);
    __builtin_prefetch(&p->keys[p->scratch[i].identity_hash & (p->cap_keys - 1)]);
}

enum { RUN_GROW = 1 };

/* Lines [from, to) are a run of progress lines; LINE_GROUPED marks the
 * ones that are not bare. Returns 0; RUN_GROW when the tables are too
 * small for the run's identities and may grow (nothing has been decided
 * yet); -1 when out of memory. */
static int thin_run(cp_prepared *p, uint32_t from, uint32_t to)
{
    if (to - from < 3)
        return 0;
    if (++p->generation == 0) {
        memset(p->keys, 0, p->cap_keys * sizeof *p->keys);
        p->generation = 1;
    }
    p->keys_used = 0;
    uint8_t *flags = p->flags;
    line_scratch *sc = p->scratch;
    for (uint32_t i = from; i < to; i++) {
        if (i + THIN_AHEAD < to)
            ask_ahead(p, i + THIN_AHEAD);
        if (!(flags[i] & LINE_GROUPED))
            continue;
        prep_key *k = key_for(p, i);
        if (!k) {
            if (p->cap_keys < KEYS_MAX)
                return RUN_GROW;
            flags[i] &= (uint8_t)~LINE_GROUPED;
            continue;
        }
        k->last = i;
        k->count++;
        sc[i].slot = (uint32_t)(k - p->keys);
    }
    for (uint32_t i = from; i < to; i++) {
        if (!(flags[i] & LINE_GROUPED))
            continue;
        const prep_key *k = &p->keys[sc[i].slot];
        uint32_t weight = i == k->first ? 1 : i == k->last ? k->count - 1 : 0;
        p->lines[i].weight = weight;
        if (weight == 0 && add_skip(p, i) != 0)
            return -1;
    }
    return 0;
}

/* thin_run, with the tables grown until the run's identities fit. */
static int thin_each(cp_prepared *p, uint32_t from, uint32_t to)
{
    int rc;
    while ((rc = thin_run(p, from, to)) == RUN_GROW) {
        size_t want = p->cap_keys * KEYS_GROWTH;
        if (new_tables(p, want < KEYS_MAX ? want : KEYS_MAX) != 0)
            return -1;
    }
    return rc;
}

/* Runs end at lines that are not only progress (errors, frames, phase
 * and identity lines), which always count in full. */
static int thin(cp_prepared *p)
{
    uint8_t *flags = p->flags;
    if (++p->host_generation == 0) {
        memset(p->hosts, 0, p->cap_keys * sizeof *p->hosts);
        p->host_generation = 1;
    }
    p->n_hosts = 0;
    uint32_t run = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        if ((flags[i] & (LINE_ONLY_PROGRESS | LINE_BARE)) == LINE_ONLY_PROGRESS)
            flags[i] |= LINE_GROUPED;
        if (!(flags[i] & LINE_ONLY_PROGRESS)) {
            if (thin_each(p, run, i) != 0)
                return -1;
            run = i + 1;
        }
    }
    return thin_each(p, run, (uint32_t)p->n);
}

/* The progress rule the incident reads a line's step with: the last one
 * in catalog order (events.c, classify); UINT32_MAX when none hit. */
static uint32_t progress_rule(const cp_catalog *cat, const cp_line_hits *h)
{
    uint32_t rule = UINT32_MAX;
    for (uint32_t i = 0; i < h->n_rules; i++)
        if (cat->rules[h->rules[i]].role == CP_ROLE_PROGRESS)
            rule = h->rules[i];
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

/* The origin cp_frame_parse gave for the line: set_prefixes undone. */
static void prefixes_origin(const cp_prepared *p, const cp_line_prep *lp, cp_origin *out)
{
    const cp_prefixes *f = &lp->parsed;
    out->rank = f->rank;
    out->local_rank = f->local_rank;
    out->pid = f->pid;
    out->task = f->task;
    out->cuda_dev = f->cuda_dev;
    out->time = f->time;
    out->level = f->level;
    out->host[0] = '\0';
    if (f->host)   /* few lines name one: no call for the others */
        snprintf(out->host, sizeof out->host, "%s", cp_prepared_host(p, lp));
}

/* What the incident needs of each kept line besides its prefixes, and
 * the list of kept lines (in order):
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
 * read. Where the key misleads (lines that name no process, over a path
 * that names a local rank, and hosts that differ; hashes that collide),
 * the incident reads the step itself. */
static int finish_lines(const cp_catalog *cat, cp_scanner *sc, const char *data, const cp_hit_list *hits,
                        cp_prepared *p)
{
    if (p->n_later)
        memset(p->later, 0, p->cap_later * sizeof *p->later);
    p->n_later = 0;
    size_t kept = p->n;   /* filled from the end */
    for (size_t i = p->n; i-- > 0;) {
        cp_line_prep *lp = &p->lines[i];
        if (lp->weight == 0)
            continue;
        p->kept[--kept] = i;
        cp_origin own;
        prefixes_origin(p, lp, &own);
        cp_writer_key_of(&own, -1, &lp->key);
        const cp_line_hits *h = &hits->lines[i];
        uint32_t rule = progress_rule(cat, h);
        if (rule == UINT32_MAX)
            continue;
        if ((p->flags[i] & (LINE_ONLY_PROGRESS | LINE_BARE)) == LINE_ONLY_PROGRESS &&
            seen_later(p, lp->key.hash, &lp->superseded) != 0)
            return -1;
        if (lp->superseded)
            continue;
        lp->step_read = true;
        cp_loss loss;
        lp->has_step = cp_scanner_step(sc, rule, data + h->start, h->len, &lp->step, &loss);
        lp->loss = loss.value;
        lp->has_loss = loss.read;
    }
    p->n_kept = p->n - kept;
    if (p->n_kept)
        memmove(p->kept, p->kept + kept, p->n_kept * sizeof *p->kept);
    return 0;
}

/* Room for `need` more bytes of the chunk's texts: where they start, or
 * NULL when out of memory. */
static char *text_room(cp_prepared *p, size_t need)
{
    if (p->text_cap - p->text_len < need) {
        size_t cap = p->text_cap ? p->text_cap : 4096;
        while (cap - p->text_len < need)
            cap *= 2;
        char *t = realloc(p->text, cap);
        if (!t)
            return NULL;
        p->text = t;
        p->text_cap = cap;
    }
    return p->text + p->text_len;
}

/* Keeps what `own` (a line's prefixes) says in lp->parsed, its host name
 * in the chunk's texts. Returns 0, or -1 when out of memory. */
static int set_prefixes(cp_prepared *p, cp_line_prep *lp, const cp_origin *own)
{
    lp->parsed = (cp_prefixes){.rank = own->rank, .local_rank = own->local_rank, .pid = own->pid,
                               .task = own->task, .cuda_dev = own->cuda_dev, .time = own->time,
                               .level = own->level};
    if (!own->host[0])
        return 0;
    size_t n = strnlen(own->host, CP_HOST_MAX - 1);
    if (p->text_len >= UINT32_MAX - CP_HOST_MAX)   /* offsets are 32-bit */
        return -1;
    char *at = text_room(p, n + 1);
    if (!at)
        return -1;
    memcpy(at, own->host, n);
    at[n] = '\0';
    lp->parsed.host = (uint32_t)(p->text_len + 1);
    p->text_len += n + 1;
    return 0;
}

void cp_prepared_merge_origin(const cp_prepared *p, const cp_line_prep *lp, cp_origin *into)
{
    cp_origin own;
    prefixes_origin(p, lp, &own);
    cp_origin_merge(into, &own);
}

/* What events.c reads of a line that is not only progress (it reads no
 * text of the others), kept in the chunk's texts: its display text, then
 * the captures of every rule that hit it, packed as a count and each name
 * and value, NUL-terminated. Returns 0, or -1 when out of memory. */
static int add_evidence(cp_prepared *p, cp_scanner *sc, cp_line_prep *lp, const cp_line_hits *h,
                        const char *line)
{
    cp_captures caps;
    caps.n = 0;
    for (uint32_t i = 0; i < h->n_rules; i++)
        cp_scanner_captures(sc, h->rules[i], line, h->len, &caps);
    /* room for the longest it can be; it takes what it needs */
    size_t need = (h->len < CP_DISPLAY_MAX ? h->len : CP_DISPLAY_MAX) + 4 + 1 + (size_t)caps.n * sizeof caps.v[0];
    char *start = text_room(p, need);
    if (!start)
        return -1;
    if (p->text_len + 1 > UINT32_MAX)
        return -1;   /* display offsets are 32-bit; no chunk's texts come near */
    lp->display = (uint32_t)(p->text_len + 1);
    char *t = start + cp_display_into(start, line, h->len, CP_DISPLAY_MAX) + 1;
    *t++ = (char)caps.n;
    for (int i = 0; i < caps.n; i++) {
        t = stpcpy(t, caps.v[i].name) + 1;
        t = stpcpy(t, caps.v[i].value) + 1;
    }
    p->text_len += (size_t)(t - start);
    return 0;
}

void cp_prepared_captures(const cp_prepared *p, const cp_line_prep *lp, cp_captures *out)
{
    out->n = 0;
    if (!lp->display)
        return;
    const char *t = p->text + lp->display - 1;
    t += strlen(t) + 1;
    int n = (unsigned char)*t++;
    for (int i = 0; i < n; i++) {
        cp_capture *c = &out->v[out->n++];
        size_t k = strlen(t);
        memcpy(c->name, t, k + 1);
        t += k + 1;
        k = strlen(t);
        memcpy(c->value, t, k + 1);
        t += k + 1;
    }
}

/* Room for n lines: their preparations, flags, scratch and the kept list. */
static int size_lines(cp_prepared *p, size_t n)
{
    if (n <= p->cap)
        return 0;
    cp_line_prep *lines = realloc(p->lines, n * sizeof *lines);
    if (lines)
        p->lines = lines;
    uint8_t *flags = realloc(p->flags, n * sizeof *flags);
    if (flags)
        p->flags = flags;
    line_scratch *scratch = realloc(p->scratch, n * sizeof *scratch);
    if (scratch)
        p->scratch = scratch;
    size_t *kept = realloc(p->kept, n * sizeof *kept);
    if (kept)
        p->kept = kept;
    if (!lines || !flags || !scratch || !kept)
        return -1;
    p->cap = n;
    return 0;
}

/* Line number, prefixes, flags and (where it may become evidence) the
 * display text and captures of line i. Returns 0, or -1 when out of
 * memory. */
static int parse_line(const cp_catalog *cat, cp_scanner *sc, const char *data, uint64_t first_line,
                      const cp_line_hits *h, cp_prepared *p, size_t i)
{
    cp_line_prep *lp = &p->lines[i];
    lp->no = first_line + h->number;
    lp->weight = 1;
    lp->key.kind = 0;
    lp->display = 0;
    lp->superseded = lp->step_read = lp->has_step = lp->has_loss = false;
    cp_origin own;
    cp_origin_init(&own);
    cp_frame_parse(data + h->start, h->len, &own);
    if (set_prefixes(p, lp, &own) != 0)
        return -1;
    bool progress = only_progress(cat, h);
    p->flags[i] = (uint8_t)((progress ? LINE_ONLY_PROGRESS : 0) | (bare(lp) ? LINE_BARE : 0) |
                            (lp->parsed.time.kind != CP_TS_NONE ? LINE_TIMED : 0));
    if (progress) {   /* for thinning, while the line is in the cache */
        p->scratch[i].host_hash = cp_hash_str(CP_HASH_SEED, own.host);
        p->scratch[i].identity_hash = identity_hash(&own, p->scratch[i].host_hash);
        return 0;
    }
    return add_evidence(p, sc, lp, h, data + h->start);
}

int cp_prepare(const cp_catalog *cat, cp_scanner *sc, const char *data, uint64_t first_line,
               const cp_hit_list *hits, bool thin_progress, cp_prepared *out)
{
    if (size_lines(out, hits->n) != 0)
        return -1;
    out->n = hits->n;
    out->n_kept = out->n_skips = out->text_len = 0;
    for (size_t i = 0; i < hits->n; i++)
        if (parse_line(cat, sc, data, first_line, &hits->lines[i], out, i) != 0)
            return -1;
    if (thin_progress && out->n >= 3 && out->n <= UINT32_MAX / 2)
        if (size_tables(out) != 0 || thin(out) != 0)
            return -1;
    return finish_lines(cat, sc, data, hits, out);
}

void cp_prepared_free(cp_prepared *p)
{
    free(p->lines);
    free(p->flags);
    free(p->scratch);
    free(p->kept);
    free(p->skips);
    free(p->keys);
    free(p->hosts);
    free(p->host_names);
    free(p->later);
    free(p->text);
    memset(p, 0, sizeof *p);
}
