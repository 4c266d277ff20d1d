/* ranks.c - writers, identity facts, and resolving both to global ranks.
 *
 * During the scan every matched line is filed under a writer keyed by the
 * best identity its prefixes give. Ranks are often not on every line (a
 * per-node log shows "[default6]:" only; a kernel log shows a pid), so the
 * scan also keeps facts that tie identities together: NCCL's init lines
 * (host, pid, GPU -> rank), torchrun's failure table (rank <-> pid), and
 * lines carrying both a rank and another field. cp_ranks_resolve turns
 * every writer into a global rank where the facts allow.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"
#include "incident.h"
#include "util/buf.h"
#include "util/prefetch.h"
#include "util/strutil.h"

enum { MAX_WRITERS = 1 << 20, MAX_FACTS = 1 << 20 };

typedef struct slot {
    uint64_t hash;
    int entry;    /* index of the writer or fact, -1 empty */
} slot;

typedef struct windex {
    slot *slots;
    size_t cap;   /* power of two */
    size_t used;
} windex;

static uint64_t host_hash(const char *host)
{
    return cp_writer_host_hash(host);
}

static int index_grow(windex *ix)
{
    size_t cap = ix->cap ? ix->cap * 2 : 1024;
    slot *s = malloc(cap * sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < cap; i++)
        s[i].entry = -1;
    for (size_t i = 0; i < ix->cap; i++) {
        if (ix->slots[i].entry < 0)
            continue;
        size_t j = ix->slots[i].hash & (cap - 1);
        while (s[j].entry >= 0)
            j = (j + 1) & (cap - 1);
        s[j] = ix->slots[i];
    }
    free(ix->slots);
    ix->slots = s;
    ix->cap = cap;
    return 0;
}

/* Adds the fields a line knows and the writer does not yet. */
static void writer_learn(cp_writer *w, const cp_origin *o)
{
    if (w->id.local_rank < 0 && o->local_rank >= 0)
        w->id.local_rank = o->local_rank;
    if (w->id.pid < 0 && o->pid >= 0)
        w->id.pid = o->pid;
    if (w->id.task < 0 && o->task >= 0)
        w->id.task = o->task;
    if (w->id.cuda_dev < 0 && o->cuda_dev >= 0)
        w->id.cuda_dev = o->cuda_dev;
    if (!w->id.host[0] && o->host[0])
        memcpy(w->id.host, o->host, sizeof w->id.host);
}

static int writer_new(cp_incident *inc, const cp_origin *o, int stream)
{
    if (inc->n_writers >= MAX_WRITERS)
        return -1;
    cp_writer *grown = cp_grow(inc->writers, &inc->cap_writers, inc->n_writers, sizeof *grown, 64);
    if (!grown)
        return -1;
    inc->writers = grown;
    cp_writer *w = &inc->writers[inc->n_writers];
    memset(w, 0, sizeof *w);
    cp_origin_init(&w->id);
    w->id.rank = o->rank;
    w->id.local_rank = o->local_rank;
    w->id.pid = o->pid;
    w->id.task = o->task;
    w->id.cuda_dev = o->cuda_dev;
    memcpy(w->id.host, o->host, sizeof w->id.host);
    w->stream = stream;
    w->last_step = -1;
    w->rank = -1;
    w->phase_rule = UINT32_MAX;
    return (int)inc->n_writers++;
}

/* An index (writers or identity facts), made on first use, with room for
 * one more entry. */
static windex *index_ready(void **where)
{
    windex *ix = *where;
    if (!ix) {
        if (!(ix = calloc(1, sizeof *ix)))
            return NULL;
        *where = ix;
    }
    if ((ix->used + 1) * 2 > ix->cap && index_grow(ix) != 0)
        return NULL;
    return ix;
}

/* The slot of the writer filed under (kind, value, host_hash): compared
 * with the key it was filed under, so the fields it learns later do not
 * move it. If there is none, the empty slot where it belongs. */
static size_t index_find(const windex *ix, const cp_writer *writers, uint64_t h, char kind, int value,
                         uint64_t key_host)
{
    size_t j = h & (ix->cap - 1);
    for (; ix->slots[j].entry >= 0; j = (j + 1) & (ix->cap - 1)) {
        const cp_writer *w = &writers[ix->slots[j].entry];
        if (ix->slots[j].hash == h && w->key_kind == kind && w->key_value == value && w->key_host == key_host)
            break;
    }
    return j;
}

static void index_put(windex *ix, size_t j, uint64_t h, int entry)
{
    ix->slots[j].hash = h;
    ix->slots[j].entry = entry;
    ix->used++;
}

int cp_writer_for(cp_incident *inc, const cp_origin *o, int stream, const cp_writer_key *key)
{
    windex *ix = index_ready(&inc->writer_index);
    if (!ix)
        return -1;
    size_t j = index_find(ix, inc->writers, key->hash, key->kind, key->value, key->host_hash);
    if (ix->slots[j].entry >= 0) {
        writer_learn(&inc->writers[ix->slots[j].entry], o);
        return ix->slots[j].entry;
    }
    int wi = writer_new(inc, o, stream);
    if (wi < 0)
        return -1;
    inc->writers[wi].key_kind = key->kind;
    inc->writers[wi].key_value = key->value;
    inc->writers[wi].key_host = key->host_hash;
    index_put(ix, j, key->hash, wi);
    return wi;
}

/* Asks the CPU for what looking up `key` will read, some lines ahead of
 * the serial pass: at thousands of ranks the index and the writers do
 * not stay in the cache, and every line waited for both. */
void cp_writer_prefetch_slot(const cp_incident *inc, const cp_writer_key *key)
{
    const windex *ix = inc->writer_index;
    if (ix && ix->cap)
        cp_prefetch_range(&ix->slots[key->hash & (ix->cap - 1)], sizeof(slot));
}

void cp_writer_prefetch(const cp_incident *inc, const cp_writer_key *key)
{
    const windex *ix = inc->writer_index;
    if (!ix || !ix->cap)
        return;
    const slot *s = &ix->slots[key->hash & (ix->cap - 1)];
    if (s->entry < 0 || s->hash != key->hash)
        return;
    cp_prefetch_range(&inc->writers[s->entry], sizeof(cp_writer));
}

/* Files a writer scanned elsewhere (a node summary, summary.c) under its
 * key, as the scan would have had it seen the lines here: a new writer is
 * appended; an existing one learns the fields it lacks and takes the later
 * state (progress, phase, last time) of `w`, whose lines came after its own. */
int cp_writer_adopt(cp_incident *inc, const cp_writer *w)
{
    windex *ix = index_ready(&inc->writer_index);
    if (!ix)
        return -1;
    /* the index hash takes the host only when it is the writer's (as the
     * scan would have hashed it) */
    bool keyed_host = (w->key_kind == 'l' || w->key_kind == 'p') && host_hash(w->id.host) == w->key_host;
    uint64_t h = cp_writer_key_hash(w->key_kind, w->key_value, keyed_host ? w->key_host : host_hash(""));
    size_t j = index_find(ix, inc->writers, h, w->key_kind, w->key_value, w->key_host);
    if (ix->slots[j].entry >= 0) {
        cp_writer *x = &inc->writers[ix->slots[j].entry];
        writer_learn(x, &w->id);
        if (x->first_time.kind == CP_TS_NONE)
            x->first_time = w->first_time;
        if (w->last_time.kind != CP_TS_NONE)
            x->last_time = w->last_time;
        if (w->last_step >= 0 && w->last_step >= x->last_step) {
            x->last_step = w->last_step;
            x->last_step_time = w->last_step_time;
            x->last_loss = w->last_loss;
        }
        if (w->phase_line > 0) {
            free(x->phase_text);
            x->phase = w->phase;
            x->phase_state = w->phase_state;
            x->phase_time = w->phase_time;
            x->phase_stream = w->phase_stream;
            x->phase_line = w->phase_line;
            x->phase_rule = w->phase_rule;
            x->phase_text = w->phase_text ? strdup(w->phase_text) : NULL;
        }
        x->n_hits += w->n_hits;
        x->n_events += w->n_events;
        return ix->slots[j].entry;
    }
    int wi = writer_new(inc, &w->id, w->stream);
    if (wi < 0)
        return -1;
    cp_writer *x = &inc->writers[wi];
    *x = *w;
    x->phase_text = w->phase_text ? strdup(w->phase_text) : NULL;
    x->pending = NULL;
    x->rank = -1;
    index_put(ix, j, h, wi);
    return wi;
}

static bool same_ident(const cp_ident *x, const cp_ident *id)
{
    return x->rank == id->rank && x->nranks == id->nranks && x->pid == id->pid && x->local_rank == id->local_rank &&
           strcmp(x->host, id->host) == 0 && strcmp(x->busid, id->busid) == 0;
}

static uint64_t ident_hash(const cp_ident *id)
{
    uint64_t h = CP_HASH_SEED;
    const int fields[] = {id->rank, id->nranks, id->pid, id->local_rank};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        h = cp_hash_step(h, (uint32_t)fields[i]);
    h = cp_hash_step(h, host_hash(id->host));
    return cp_hash_step(h, host_hash(id->busid));
}

/* Adds a fact unless the same one is known. The facts are indexed: NCCL
 * logs one per rank and communicator, tens of thousands in a large job. */
int cp_ident_add(cp_incident *inc, const cp_ident *id)
{
    windex *ix = index_ready(&inc->ident_index);
    if (!ix)
        return -1;
    uint64_t h = ident_hash(id);
    size_t j = h & (ix->cap - 1);
    for (; ix->slots[j].entry >= 0; j = (j + 1) & (ix->cap - 1))
        if (ix->slots[j].hash == h && same_ident(&inc->idents[ix->slots[j].entry], id))
            return 0;
    cp_ident *p = inc->n_idents < MAX_FACTS ? cp_grow(inc->idents, &inc->cap_idents, inc->n_idents, sizeof *p, 64) : NULL;
    if (!p)
        return -1;
    inc->idents = p;
    index_put(ix, j, h, (int)inc->n_idents);
    inc->idents[inc->n_idents++] = *id;
    if (id->nranks > inc->world_size)
        inc->world_size = id->nranks;
    return 0;
}

int cp_table_add(cp_incident *inc, const cp_table_entry *e)
{
    cp_table_entry *p = inc->n_table < MAX_FACTS ? cp_grow(inc->table, &inc->cap_table, inc->n_table, sizeof *p, 64) : NULL;
    if (!p)
        return -1;
    inc->table = p;
    inc->table[inc->n_table++] = *e;
    return 0;
}

static bool host_match(const char *a, const char *b)
{
    return !a[0] || !b[0] || strcmp(a, b) == 0;
}

/* The rank a (host, local rank) pair has, from rank writers, NCCL world
 * communicator lines and the failure table; -1 when unknown or ambiguous. */
int cp_rank_of_local(const cp_incident *inc, const char *host, int local)
{
    int found = -1;
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->id.rank >= 0 && w->id.local_rank == local && host[0] && strcmp(w->id.host, host) == 0)
            return w->id.rank;
    }
    for (size_t i = 0; i < inc->n_idents; i++) {
        const cp_ident *x = &inc->idents[i];
        if (x->nranks == inc->world_size && x->local_rank == local && host_match(host, x->host)) {
            if (found >= 0 && found != x->rank)
                return -1;
            found = x->rank;
        }
    }
    /* a table row is its agent's node's: the host its row names, or the
     * host prefix its lines carry (pdsh's "node1: " over a row that says
     * "localhost", or a short name over a full one) */
    for (size_t i = 0; found < 0 && i < inc->n_table; i++) {
        const cp_table_entry *t = &inc->table[i];
        bool printed_there = host[0] && t->printed_on[0] && strcmp(host, t->printed_on) == 0;
        if (t->local_rank == local && t->rank >= 0 && (printed_there || host_match(host, t->host)))
            found = t->rank;
    }
    return found;
}

/* The rank of the process using GPU `dev` on `host`, from NCCL's world
 * communicator lines of that host: the line for that very GPU, else the
 * one offset every other rank there keeps from its GPU (torchrun gives a
 * node's ranks in the order of their GPUs: rank = node's first rank + GPU),
 * when at least two agree and none differs. -1 when unknown; *exact: the
 * GPU's own line said it. */
static int rank_of_device(const cp_incident *inc, const char *host, int dev, bool *exact)
{
    int same = -1, offset = 0, agree = 0;
    bool differ = false;
    *exact = false;
    for (size_t i = 0; host[0] && i < inc->n_idents; i++) {
        const cp_ident *x = &inc->idents[i];
        if (x->nranks != inc->world_size || x->cuda_dev < 0 || x->rank < 0 || strcmp(x->host, host) != 0)
            continue;
        if (x->cuda_dev == dev) {
            if (same >= 0 && same != x->rank)
                return -1;
            same = x->rank;
        }
        if (agree > 0 && x->rank - x->cuda_dev != offset)
            differ = true;
        offset = x->rank - x->cuda_dev;
        agree++;
    }
    if (same >= 0) {
        *exact = true;
        return same;
    }
    return agree >= 2 && !differ && dev + offset < inc->world_size ? dev + offset : -1;
}

/* A process whose rank a line states, for cp_pid_ranks_find. */
struct cp_pid_rank {
    int pid, rank;
    int source;          /* 0 a writer, 1 an NCCL line, 2 the failure table */
    size_t order;        /* its index there */
    const char *host;    /* borrowed; NULL: any host (the table's) */
};

static int by_pid_source_order(const void *a, const void *b)
{
    const cp_pid_rank *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->source != y->source)
        return x->source < y->source ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* The one process torchrun's agent stopped ("Sending process P closing
 * signal SIGTERM") that its failure table does not list, and how many
 * such processes there were (*count); -1 when none. */
static int stopped_unlisted_pid(const cp_incident *inc, int *count)
{
    int pid = -1;
    *count = 0;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        int64_t p = stopped_by_launcher(e) ? cap_i64(&e->caps, "next_pid", -1) : -1;
        if (p <= 0 || p > INT_MAX || p == pid)
            continue;
        bool listed = false;
        for (size_t t = 0; t < inc->n_table && !listed; t++)
            listed = inc->table[t].pid == p;
        if (!listed) {
            pid = (int)p;
            ++*count;
        }
    }
    return pid;
}

/* The local rank missing from a failure table whose rows are local ranks
 * 0..m of one node save one, with the global rank offset its rows agree
 * on (*offset); -1 when the rows are not so. */
static int table_missing_local(const cp_incident *inc, int *offset)
{
    size_t m = inc->n_table;
    if (m == 0 || m > CP_MAX_RANK_ROWS)
        return -1;
    bool *seen = calloc(m + 1, sizeof *seen);
    if (!seen)
        return -1;
    int missing = -1;
    bool fits = true;
    for (size_t t = 0; t < m && fits; t++) {
        const cp_table_entry *e = &inc->table[t];
        fits = e->local_rank >= 0 && (size_t)e->local_rank <= m && !seen[e->local_rank] && e->rank >= e->local_rank &&
               (t == 0 || (e->rank - e->local_rank == *offset && strcmp(e->host, inc->table[0].host) == 0));
        if (fits) {
            seen[e->local_rank] = true;
            *offset = e->rank - e->local_rank;
        }
    }
    for (size_t l = 0; fits && l <= m; l++)
        if (!seen[l])
            missing = (int)l;
    free(seen);
    return fits ? missing : -1;
}

/* torchrun's agent lists every worker that failed in its table and stops
 * the ones still running. When it stopped exactly one process the table
 * does not list, and the table holds local ranks 0..m of one node save
 * one, that process is the missing local rank: the one still busy when
 * the others failed (often the one they were waiting for). */
static bool stopped_worker(const cp_incident *inc, cp_pid_rank *out)
{
    int count, offset = 0;
    int pid = stopped_unlisted_pid(inc, &count);
    if (pid < 0 || count != 1)
        return false;
    int local = table_missing_local(inc, &offset);
    if (local < 0)
        return false;
    *out = (cp_pid_rank){pid, offset + local, 2, inc->n_table, NULL};
    return true;
}

int cp_pid_ranks_build(const cp_incident *inc, cp_pid_ranks *out)
{
    size_t cap = inc->n_writers + inc->n_idents + inc->n_table + 1, n = 0;
    out->v = malloc((cap ? cap : 1) * sizeof *out->v);
    out->n = 0;
    if (!out->v)
        return -1;
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->id.rank >= 0 && w->id.pid >= 0)
            out->v[n++] = (cp_pid_rank){w->id.pid, w->id.rank, 0, i, w->id.host};
    }
    for (size_t i = 0; i < inc->n_idents; i++) {
        const cp_ident *x = &inc->idents[i];
        if (x->nranks == inc->world_size && x->pid >= 0)
            out->v[n++] = (cp_pid_rank){x->pid, x->rank, 1, i, x->host};
    }
    for (size_t i = 0; i < inc->n_table; i++) {
        const cp_table_entry *t = &inc->table[i];
        if (t->rank >= 0 && t->pid >= 0)
            out->v[n++] = (cp_pid_rank){t->pid, t->rank, 2, i, NULL};
    }
    if (stopped_worker(inc, &out->v[n]))
        n++;
    qsort(out->v, n, sizeof *out->v, by_pid_source_order);
    out->n = n;
    return 0;
}

/* Writers first, then NCCL's lines, then the table, each in the order
 * they were seen: the first whose host fits. */
int cp_pid_ranks_find(const cp_pid_ranks *ix, const char *host, int pid)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->v[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < ix->n && ix->v[i].pid == pid; i++)
        if (!ix->v[i].host || host_match(host, ix->v[i].host))
            return ix->v[i].rank;
    return -1;
}

void cp_pid_ranks_free(cp_pid_ranks *ix)
{
    free(ix->v);
    ix->v = NULL;
    ix->n = 0;
}

/* A Slurm task is a rank only when the job launched one task per rank:
 * no line ties a task to several ranks. */
static int rank_of_task(const cp_incident *inc, int task)
{
    bool any_rank = false;
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->id.rank < 0)
            continue;
        any_rank = true;
        if (w->id.task == task && w->id.rank != task)
            return -1;
    }
    return any_rank && inc->world_size > 0 && task >= inc->world_size ? -1 : task;
}

bool cp_single_host(const cp_incident *inc)
{
    const char *h = NULL;
    for (size_t i = 0; i < inc->n_writers; i++) {
        const char *x = inc->writers[i].id.host;
        if (!x[0])
            continue;
        if (h && strcmp(h, x) != 0)
            return false;
        h = x;
    }
    return true;
}

void cp_ranks_resolve(cp_incident *inc)
{
    inc->world_size_stated = inc->world_size;
    for (size_t i = 0; i < inc->n_writers; i++)
        if (inc->writers[i].id.rank + 1 > inc->world_size)
            inc->world_size = inc->writers[i].id.rank + 1;
    for (size_t i = 0; i < inc->n_table; i++)
        if (inc->table[i].rank + 1 > inc->world_size)
            inc->world_size = inc->table[i].rank + 1;
    bool one_host = cp_single_host(inc);
    cp_pid_ranks by_pid;
    cp_pid_ranks_build(inc, &by_pid);   /* out of memory: empty, finds nothing */
    for (size_t i = 0; i < inc->n_writers; i++) {
        cp_writer *w = &inc->writers[i];
        int r = w->id.rank;
        w->rank_is_local = w->rank_from_device = false;
        if (r < 0 && w->id.local_rank >= 0) {
            r = cp_rank_of_local(inc, w->id.host, w->id.local_rank);
            if (r < 0 && one_host) {
                r = w->id.local_rank;
                w->rank_is_local = true;
            }
        }
        if (r < 0 && w->id.pid >= 0)
            r = cp_pid_ranks_find(&by_pid, w->id.host, w->id.pid);
        if (r < 0 && w->id.task >= 0)
            r = rank_of_task(inc, w->id.task);
        if (r < 0 && w->id.cuda_dev >= 0) {
            bool exact;
            r = rank_of_device(inc, w->id.host, w->id.cuda_dev, &exact);
            w->rank_from_device = r >= 0 && !exact;
        }
        w->rank = r;
    }
    cp_pid_ranks_free(&by_pid);
}

static void free_index(void **where)
{
    windex *ix = *where;
    if (ix)
        free(ix->slots);
    free(ix);
    *where = NULL;
}

void cp_ranks_free_index(cp_incident *inc)
{
    free_index(&inc->writer_index);
    free_index(&inc->ident_index);
}
