/* pipeline.c - the vectorscan pass and the per-line work on two threads.
 * See pipeline.h for the design; the ring keeps the order of operations. */
#include "pipeline.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

enum {
    PIPE_SLOTS = 4,
    PIPE_THRESHOLD = 2 << 20  /* bytes processed inline before the thread starts */
};

typedef enum op_kind { OP_BEGIN, OP_CHUNK, OP_END, OP_WARN } op_kind;

typedef struct slot {
    op_kind kind;
    char *buf;          /* chunk copy, or the path */
    size_t len, cap;
    char *message;      /* OP_WARN */
    uint64_t first_line;
    cp_hit_list hits;
} slot;

struct cp_pipeline {
    cp_incident *inc;
    cp_matcher *m;
    cp_pipeline_progress_fn progress;
    void *progress_user;
    uint64_t bytes;
    bool threaded;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    slot ring[PIPE_SLOTS];
    size_t head, tail;  /* produced, consumed (monotonic) */
    bool closing;
    bool failed;        /* written under lock by the consumer */
    cp_hit_list inline_hits;
};

static int apply(cp_pipeline *p, slot *s)
{
    switch (s->kind) {
    case OP_BEGIN: return cp_incident_begin_stream(p->inc, s->buf);
    case OP_CHUNK: return cp_incident_feed_hits(p->inc, s->buf, s->len, s->first_line, &s->hits);
    case OP_END: cp_incident_end_stream(p->inc); return 0;
    case OP_WARN: cp_incident_warn(p->inc, s->buf, s->message); return 0;
    }
    return 0;
}

static void *consumer(void *arg)
{
    cp_pipeline *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->tail == p->head && !p->closing)
            pthread_cond_wait(&p->changed, &p->lock);
        if (p->tail == p->head)
            break;
        slot *s = &p->ring[p->tail % PIPE_SLOTS];
        pthread_mutex_unlock(&p->lock);
        int rc = p->failed ? 0 : apply(p, s);
        pthread_mutex_lock(&p->lock);
        if (rc != 0)
            p->failed = true;
        p->tail++;
        pthread_cond_broadcast(&p->changed);
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

static bool start_thread(cp_pipeline *p)
{
    if (pthread_mutex_init(&p->lock, NULL) != 0)
        return false;
    if (pthread_cond_init(&p->changed, NULL) != 0) {
        pthread_mutex_destroy(&p->lock);
        return false;
    }
    if (pthread_create(&p->thread, NULL, consumer, p) != 0) {
        pthread_cond_destroy(&p->changed);
        pthread_mutex_destroy(&p->lock);
        return false;
    }
    p->threaded = true;
    return true;
}

/* A free slot for the producer (waits while the ring is full). */
static slot *acquire(cp_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    while (p->head - p->tail == PIPE_SLOTS)
        pthread_cond_wait(&p->changed, &p->lock);
    pthread_mutex_unlock(&p->lock);
    return &p->ring[p->head % PIPE_SLOTS];
}

static int publish(cp_pipeline *p)
{
    pthread_mutex_lock(&p->lock);
    p->head++;
    bool failed = p->failed;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    return failed ? -1 : 0;
}

static bool put_text(slot *s, const char *text)
{
    size_t n = strlen(text) + 1;
    if (n > s->cap) {
        char *b = realloc(s->buf, n);
        if (!b)
            return false;
        s->buf = b;
        s->cap = n;
    }
    memcpy(s->buf, text, n);
    s->len = n - 1;
    return true;
}

/* An operation without a chunk: inline, or through the ring. */
static int small_op(cp_pipeline *p, op_kind kind, const char *path, const char *message)
{
    if (!p->threaded) {
        slot s = {.kind = kind, .buf = (char *)path, .message = (char *)message};
        return apply(p, &s);
    }
    slot *s = acquire(p);
    s->kind = kind;
    free(s->message);
    s->message = NULL;
    if ((path && !put_text(s, path)) || (message && !(s->message = cp_strdup(message))))
        return -1;
    return publish(p);
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

int cp_pipeline_chunk(cp_pipeline *p, const char *data, size_t len, uint64_t first_line)
{
    p->bytes += len;
    if (p->progress)
        p->progress(p->progress_user, p->bytes);
    if (!p->threaded && (p->bytes <= PIPE_THRESHOLD || !start_thread(p))) {
        if (cp_matcher_scan(p->m, data, len, &p->inline_hits) != 0)
            return -1;
        return cp_incident_feed_hits(p->inc, data, len, first_line, &p->inline_hits);
    }
    slot *s = acquire(p);
    if (len > s->cap) {
        char *b = realloc(s->buf, len);
        if (!b)
            return -1;
        s->buf = b;
        s->cap = len;
    }
    memcpy(s->buf, data, len);
    s->kind = OP_CHUNK;
    s->len = len;
    s->first_line = first_line;
    if (cp_matcher_scan(p->m, s->buf, len, &s->hits) != 0)
        return -1;
    return publish(p);
}

int cp_pipeline_finish(cp_pipeline *p)
{
    if (!p->threaded)
        return 0;
    pthread_mutex_lock(&p->lock);
    p->closing = true;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
    pthread_join(p->thread, NULL);
    pthread_cond_destroy(&p->changed);
    pthread_mutex_destroy(&p->lock);
    p->threaded = false;
    return p->failed ? -1 : 0;
}

void cp_pipeline_free(cp_pipeline *p)
{
    if (!p)
        return;
    cp_pipeline_finish(p);
    for (size_t i = 0; i < PIPE_SLOTS; i++) {
        free(p->ring[i].buf);
        free(p->ring[i].message);
        cp_hit_list_free(&p->ring[i].hits);
    }
    cp_hit_list_free(&p->inline_hits);
    free(p);
}
