/* pipeline.c - the scan on worker threads, applied in input order.
 * See pipeline.h for the design. */
#include "pipeline.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/strutil.h"

enum {
    PIPE_MAX_WORKERS = 8,
    PIPE_THRESHOLD = 256 << 10, /* bytes processed inline before threads start */
    /* A slot takes chunks until they reach this many bytes (one larger
     * chunk goes alone): a folder of 4,096 small rank logs then moves
     * through the ring in a quarter of the hand-offs, each of which
     * wakes a thread. */
    PIPE_BATCH_BYTES = 1 << 20,
    PIPE_BATCH_PIECES = 64   /* and at most this many chunks (tiny files) */
};

typedef enum op_kind { OP_BEGIN, OP_CHUNK, OP_END, OP_WARN } op_kind;

typedef struct op {
    op_kind kind;
    size_t piece;       /* OP_CHUNK: its index in the slot's pieces */
    char *path;         /* OP_BEGIN, OP_WARN */
    char *message;      /* OP_WARN */
} op;

/* A chunk in a slot, with what preparing it produced. Its buffer and
 * lists stay with it when the slot is reused. */
typedef struct piece {
    char *buf;          /* a buffer of cap bytes, the piece's own */
    const char *data;   /* the chunk: len bytes in buf, or in map */
    cp_mapping *map;    /* a mapped file the chunk lies in, with one
                           reference the piece holds until it is applied */
    size_t len, cap;
    uint64_t first_line;
    cp_nlmap newlines;  /* the chunk's, from the reader, when has_map */
    bool has_map;
    cp_hit_list hits;
    cp_prepared prep;
    int prepared_rc;
} piece;

/* A slot goes FREE -> FILLED (it has chunks; one without goes straight
 * to READY) -> PREPARING -> READY -> applied, FREE again. It carries its
 * chunks (up to PIPE_BATCH_BYTES) and the operations around them, in
 * order, so that a run of small files does not take a slot per file. */
typedef enum slot_state { SLOT_FREE, SLOT_FILLED, SLOT_PREPARING, SLOT_READY } slot_state;

typedef struct slot {
    slot_state state;
    op *ops;
    size_t n_ops, cap_ops;
    piece *pieces;
    size_t n_pieces, cap_pieces;
    size_t bytes;       /* the pieces' chunks, together */
} slot;

typedef struct worker {
    cp_pipeline *p;
    pthread_t thread;
    cp_scanner *scanner;
} worker;

struct cp_pipeline {
    cp_incident *inc;
    cp_matcher *m;
    cp_pipeline_progress_fn progress;
    void *progress_user;
    uint64_t bytes;
    bool threaded;
    bool inline_only;   /* threads could not start: stay inline */
    worker workers[PIPE_MAX_WORKERS];
    int n_workers;
    pthread_mutex_t lock;
    /* Workers sleep on `work`: a published slot wakes one; a slot made
     * ready needs no wake-up (the worker that prepared it, or the one
     * applying before it, goes on to apply it). The reader sleeps on
     * `space` while the ring is full; an applied slot wakes it. (One
     * condition broadcast on every change woke every thread for each
     * chunk, which a folder of small files paid in context switches.) */
    pthread_cond_t work, space;
    slot *ring;
    size_t n_slots;
    /* monotonic counters, under lock: tail <= next_prep <= head */
    size_t head;        /* slots published by the reader */
    size_t next_prep;   /* the next slot a worker may take to prepare */
    size_t tail;        /* slots applied to the incident */
    bool applying;      /* a worker holds the turn to apply */
    bool closing;
    bool failed;
    slot *filling;      /* the reader's slot, not yet published */
};

static int prepare_piece(cp_pipeline *p, cp_scanner *sc, piece *c)
{
    if (cp_scanner_scan(sc, c->data, c->len, c->has_map ? &c->newlines : NULL, &c->hits) != 0)
        return -1;
    return cp_prepare(p->inc->cat, sc, c->data, c->first_line, &c->hits, p->inc->thin, &c->prep);
}

static void prepare(cp_pipeline *p, cp_scanner *sc, slot *s)
{
    for (size_t i = 0; i < s->n_pieces; i++)
        s->pieces[i].prepared_rc = prepare_piece(p, sc, &s->pieces[i]);
}

static int apply_op(cp_pipeline *p, const op *o, slot *s)
{
    switch (o->kind) {
    case OP_BEGIN: return cp_incident_begin_stream(p->inc, o->path);
    case OP_CHUNK: {
        piece *c = &s->pieces[o->piece];
        if (c->prepared_rc != 0)
            return -1;
        return cp_incident_feed_prepared(p->inc, c->data, c->len, &c->hits, &c->prep);
    }
    case OP_END: cp_incident_end_stream(p->inc); return 0;
    case OP_WARN: cp_incident_warn(p->inc, o->path, o->message); return 0;
    }
    return 0;
}

static int apply(cp_pipeline *p, slot *s)
{
    for (size_t i = 0; i < s->n_ops; i++)
        if (apply_op(p, &s->ops[i], s) != 0)
            return -1;
    return 0;
}

static void clear_ops(slot *s)
{
    for (size_t i = 0; i < s->n_ops; i++) {
        free(s->ops[i].path);
        free(s->ops[i].message);
    }
    s->n_ops = 0;
    s->n_pieces = 0;
    s->bytes = 0;
}

/* Gives back the slot's references to mapped chunks once the incident has
 * taken them, which also drops their pages. Slots and their pieces are
 * applied in order, so a mapped file's pages go in file order, each once
 * (mapping.h). */
static void release_maps(slot *s)
{
    for (size_t i = 0; i < s->n_pieces; i++) {
        piece *c = &s->pieces[i];
        cp_mapping_release(c->map, c->data, c->len);
        c->map = NULL;
    }
}

/* With the lock held: applies the oldest slot if it is ready and nobody
 * else is applying. Returns whether it did. */
static bool try_apply(cp_pipeline *p)
{
    if (p->applying || p->tail == p->head)
        return false;
    slot *s = &p->ring[p->tail % p->n_slots];
    if (s->state != SLOT_READY)
        return false;
    p->applying = true;
    pthread_mutex_unlock(&p->lock);
    int rc = p->failed ? 0 : apply(p, s);
    release_maps(s);
    pthread_mutex_lock(&p->lock);
    if (rc != 0)
        p->failed = true;
    s->state = SLOT_FREE;
    p->tail++;
    p->applying = false;
    pthread_cond_signal(&p->space);
    if (p->closing)     /* the last slot may be the one sleepers wait for */
        pthread_cond_broadcast(&p->work);
    return true;
}

/* With the lock held: prepares the next published slot nobody has taken.
 * Returns whether there was one. */
static bool try_prepare(worker *w)
{
    cp_pipeline *p = w->p;
    if (p->next_prep == p->head)
        return false;
    slot *s = &p->ring[p->next_prep++ % p->n_slots];
    if (s->state != SLOT_FILLED)
        return true;
    s->state = SLOT_PREPARING;
    pthread_mutex_unlock(&p->lock);
    if (!p->failed)
        prepare(p, w->scanner, s);
    pthread_mutex_lock(&p->lock);
    s->state = SLOT_READY;
    return true;
}

static void *work(void *arg)
{
    worker *w = arg;
    cp_pipeline *p = w->p;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        /* applying first keeps the ring moving for the reader */
        if (try_apply(p) || try_prepare(w))
            continue;
        if (p->closing && p->tail == p->head)
            break;
        pthread_cond_wait(&p->work, &p->lock);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

int cp_pipeline_new(cp_pipeline **out, cp_incident *inc, cp_matcher *m)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return -1;
    (*out)->inc = inc;
    (*out)->m = m;
    return 0;
}

void cp_pipeline_set_progress(cp_pipeline *p, cp_pipeline_progress_fn fn, void *user)
{
    p->progress = fn;
    p->progress_user = user;
}

static int worker_count(void)
{
    const char *env = getenv("CULPRIT_THREADS");
    long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > PIPE_MAX_WORKERS ? PIPE_MAX_WORKERS : (int)n;
}

static void stop_workers(cp_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    p->closing = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n_workers; i++) {
        pthread_join(p->workers[i].thread, NULL);
        cp_scanner_free(p->workers[i].scanner);
    }
    p->n_workers = 0;
}

/* Starts the workers; false (and scanning stays inline) if none started. */
static bool start_threads(cp_pipeline *p)
{
    if (p->inline_only)
        return false;
    p->inline_only = true; /* until the workers run */
    int want = worker_count();
    /* A slot per worker (one of them applying when its turn comes) and
     * one the reader fills. Each slot in flight holds a chunk, its hit
     * lines and prepared texts (about 3x the chunk in an error-heavy
     * stretch): one more slot of slack made the reader run further ahead
     * but cost 12 MB of peak memory at 4,096 ranks for no gain there. */
    if (!p->ring) {
        p->n_slots = (size_t)want + 1;
        if (!(p->ring = calloc(p->n_slots, sizeof *p->ring)))
            return false;
    }
    if (pthread_mutex_init(&p->lock, NULL) != 0)
        return false;
    if (pthread_cond_init(&p->work, NULL) != 0) {
        pthread_mutex_destroy(&p->lock);
        return false;
    }
    if (pthread_cond_init(&p->space, NULL) != 0) {
        pthread_cond_destroy(&p->work);
        pthread_mutex_destroy(&p->lock);
        return false;
    }
    for (int i = 0; i < want; i++) {
        worker *w = &p->workers[p->n_workers];
        w->p = p;
        if (cp_scanner_new(&w->scanner, p->m) != 0)
            break;
        if (pthread_create(&w->thread, NULL, work, w) != 0) {
            cp_scanner_free(w->scanner);
            break;
        }
        p->n_workers++;
    }
    if (p->n_workers == 0) {
        pthread_cond_destroy(&p->work);
        pthread_cond_destroy(&p->space);
        pthread_mutex_destroy(&p->lock);
        return false;
    }
    p->threaded = true;
    p->inline_only = false;
    return true;
}

/* A free slot for the reader (waits while the ring is full). */
static slot *acquire(cp_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    while (p->head - p->tail == p->n_slots)
        pthread_cond_wait(&p->space, &p->lock);
    pthread_mutex_unlock(&p->lock);
    slot *s = &p->ring[p->head % p->n_slots];
    clear_ops(s);
    return s;
}

/* Hands the reader's slot to the workers. */
static int publish(cp_pipeline *p)
{
    slot *s = p->filling;
    if (!s)
        return 0;
    p->filling = NULL;
    pthread_mutex_lock(&p->lock);
    s->state = s->n_pieces > 0 ? SLOT_FILLED : SLOT_READY;
    p->head++;
    bool failed = p->failed;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
    return failed ? -1 : 0;
}

/* Appends an operation to the reader's slot (taking a new one if none). */
static int add_op(cp_pipeline *p, op_kind kind, const char *path, const char *message)
{
    if (!p->filling)
        p->filling = acquire(p);
    slot *s = p->filling;
    op *grown = cp_grow(s->ops, &s->cap_ops, s->n_ops, sizeof *grown, 4);
    if (!grown)
        return -1;
    s->ops = grown;
    op *o = &s->ops[s->n_ops];
    *o = (op){.kind = kind};
    if ((path && !(o->path = cp_strdup(path))) || (message && !(o->message = cp_strdup(message)))) {
        free(o->path);
        return -1;
    }
    s->n_ops++;
    return 0;
}

/* An operation without a chunk: inline, or into the reader's slot. */
static int small_op(cp_pipeline *p, op_kind kind, const char *path, const char *message)
{
    if (!p->threaded) {
        op o = {.kind = kind, .path = (char *)path, .message = (char *)message};
        return apply_op(p, &o, NULL);
    }
    return add_op(p, kind, path, message);
}

int cp_pipeline_begin(cp_pipeline *p, const char *path)
{
    return small_op(p, OP_BEGIN, path, NULL);
}

int cp_pipeline_end(cp_pipeline *p)
{
    return small_op(p, OP_END, NULL, NULL);
}

int cp_pipeline_warn(cp_pipeline *p, const char *path, const char *message)
{
    return small_op(p, OP_WARN, path, message);
}

/* Counts the chunk's bytes; true when it is to be fed inline (small
 * inputs, or threads could not start). */
static bool feed_inline(cp_pipeline *p, size_t len)
{
    p->bytes += len;
    if (p->progress)
        p->progress(p->progress_user, p->bytes);
    return !p->threaded && (p->bytes <= PIPE_THRESHOLD || !start_threads(p));
}

/* Whether the reader's slot is to go before a chunk of `len` bytes joins
 * it: it has chunks, and they would pass PIPE_BATCH_BYTES with it, or it
 * has PIPE_BATCH_PIECES. */
static bool slot_full(const slot *s, size_t len)
{
    return s->n_pieces > 0 && (s->bytes + len > PIPE_BATCH_BYTES || s->n_pieces == PIPE_BATCH_PIECES);
}

/* A new piece in the reader's slot for a chunk, publishing the slot first
 * when the chunk would overfill it. NULL on failure. */
static piece *chunk_piece(cp_pipeline *p, size_t len, uint64_t first_line, cp_nlmap *newlines)
{
    if (p->filling && slot_full(p->filling, len) && publish(p) != 0)
        return NULL;
    if (!p->filling)
        p->filling = acquire(p);
    slot *s = p->filling;
    if (s->n_pieces == s->cap_pieces) {
        size_t cap = s->cap_pieces;
        piece *grown = cp_grow(s->pieces, &cap, s->n_pieces, sizeof *grown, 4);
        if (!grown)
            return NULL;
        /* new pieces start empty: their buffers and lists are kept for reuse */
        memset(grown + s->cap_pieces, 0, (cap - s->cap_pieces) * sizeof *grown);
        s->pieces = grown;
        s->cap_pieces = cap;
    }
    if (add_op(p, OP_CHUNK, NULL, NULL) != 0)
        return NULL;
    s->ops[s->n_ops - 1].piece = s->n_pieces;
    piece *c = &s->pieces[s->n_pieces++];
    s->bytes += len;
    c->len = len;
    c->first_line = first_line;
    c->prepared_rc = 0;
    /* the reader builds its next map in the piece's old one */
    c->has_map = newlines != NULL;
    if (newlines)
        cp_nlmap_swap(&c->newlines, newlines);
    return c;
}

/* Takes back the chunk that chunk_piece added when its bytes could not be
 * stored (out of memory): the scan fails, and the slot must not point
 * workers at a buffer it does not have. */
static int drop_chunk(cp_pipeline *p, piece *c)
{
    slot *s = p->filling;
    s->bytes -= c->len;
    s->n_pieces--;
    s->n_ops--;
    return -1;
}

int cp_pipeline_chunk(cp_pipeline *p, const char *data, size_t len, uint64_t first_line, cp_nlmap *newlines)
{
    if (feed_inline(p, len))
        return cp_incident_feed(p->inc, data, len, first_line, newlines);
    piece *c = chunk_piece(p, len, first_line, newlines);
    if (!c)
        return -1;
    if (len > c->cap) {
        char *b = realloc(c->buf, len);
        if (!b)
            return drop_chunk(p, c);
        c->buf = b;
        c->cap = len;
    }
    memcpy(c->buf, data, len);
    c->data = c->buf;
    return 0;
}

int cp_pipeline_chunk_swap(cp_pipeline *p, char **buf, size_t size, size_t off, size_t len,
                           uint64_t first_line, cp_nlmap *newlines)
{
    if (feed_inline(p, len))
        return cp_incident_feed(p->inc, *buf + off, len, first_line, newlines);
    piece *c = chunk_piece(p, len, first_line, newlines);
    if (!c)
        return -1;
    /* the piece was applied: its old buffer is nobody's now, and goes back */
    char *spare = c->cap >= size ? c->buf : NULL;
    if (!spare) {
        if (!(spare = malloc(size)))
            return drop_chunk(p, c);
        free(c->buf);
    }
    c->buf = *buf;
    c->cap = size;
    c->data = c->buf + off;
    *buf = spare;
    return 0;
}

int cp_pipeline_chunk_mapped(cp_pipeline *p, cp_mapping *m, const char *data, size_t len,
                             uint64_t first_line, cp_nlmap *newlines)
{
    if (feed_inline(p, len)) {
        int rc = cp_incident_feed(p->inc, data, len, first_line, newlines);
        cp_mapping_release(m, data, len);
        return rc;
    }
    piece *c = chunk_piece(p, len, first_line, newlines);
    if (!c) {
        cp_mapping_release(m, data, len);
        return -1;
    }
    c->map = m;
    c->data = data;
    return 0;
}

int cp_pipeline_finish(cp_pipeline *p)
{
    if (!p->threaded)
        return 0;
    int rc = publish(p);
    stop_workers(p);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->space);
    pthread_mutex_destroy(&p->lock);
    p->threaded = false;
    return p->failed || rc != 0 ? -1 : 0;
}

void cp_pipeline_free(cp_pipeline *p)
{
    if (!p)
        return;
    cp_pipeline_finish(p);
    for (size_t i = 0; p->ring && i < p->n_slots; i++) {
        slot *s = &p->ring[i];
        release_maps(s);
        clear_ops(s);
        free(s->ops);
        for (size_t j = 0; j < s->cap_pieces; j++) {
            free(s->pieces[j].buf);
            cp_hit_list_free(&s->pieces[j].hits);
            cp_nlmap_free(&s->pieces[j].newlines);
            cp_prepared_free(&s->pieces[j].prep);
        }
        free(s->pieces);
    }
    free(p->ring);
    free(p);
}
