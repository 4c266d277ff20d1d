/* drain.c - the drain list. See drain.h.
 *
 * Events of rules with a `drain` key are counted per host and rule; the
 * findings that qualify become host entries, their GPUs named by bus id
 * (from the line, or from the GPU index through nvidia-smi's table), by
 * index (nvidia-smi, NCCL's cudaDev) and by the rank NCCL ran there. */
#include "drain.h"
#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"

/* How often one rule's lines came from one host. */
typedef struct finding {
    const char *host;      /* borrowed from the incident */
    uint32_t rule;
    uint32_t count;
    const cp_event *first; /* earliest of them */
    bool drains;
} finding;

typedef struct tally {
    finding *v;
    size_t n, cap;
} tally;

static const char *host_of(const cp_incident *inc, const cp_event *e)
{
    if (e->origin.host[0])
        return e->origin.host;
    return e->writer >= 0 ? inc->writers[e->writer].id.host : "";
}

static bool earlier(const cp_event *a, const cp_event *b)
{
    if (timed(&a->origin.time) && timed(&b->origin.time))
        return a->origin.time.ms < b->origin.time.ms;
    return timed(&a->origin.time) && !timed(&b->origin.time);
}

static int count_event(tally *t, const char *host, const cp_event *e)
{
    for (size_t i = 0; i < t->n; i++) {
        finding *f = &t->v[i];
        if (f->rule == e->rule && strcmp(f->host, host) == 0) {
            f->count++;
            if (earlier(e, f->first))
                f->first = e;
            return 0;
        }
    }
    finding *grown = cp_grow(t->v, &t->cap, t->n, sizeof *grown, 16);
    if (!grown)
        return -1;
    t->v = grown;
    t->v[t->n++] = (finding){host, e->rule, 1, e, false};
    return 0;
}

/* A rule that needs several lines drains only the host they concentrate
 * on: a fabric fault is seen by both ends, the bad link's host sees most. */
static void decide(const cp_incident *inc, tally *t)
{
    for (size_t i = 0; i < t->n; i++) {
        finding *f = &t->v[i];
        const cp_rule *r = &inc->cat->rules[f->rule];
        if (f->count < (uint32_t)r->drain_after)
            continue;
        f->drains = true;
        for (size_t j = 0; r->drain_after > 1 && j < t->n; j++)
            if (j != i && t->v[j].rule == f->rule && t->v[j].count * 2 > f->count)
                f->drains = false;
    }
}

/* The GPU index of a bus id on a host: nvidia-smi's index first, then
 * NCCL's cudaDev. */
static int index_of_busid(const cp_incident *inc, const char *host, const char *norm)
{
    int found = -1;
    char have[8];
    for (size_t i = 0; i < inc->n_idents; i++) {
        const cp_ident *x = &inc->idents[i];
        if (x->cuda_dev < 0 || !x->busid[0] || (host[0] && x->host[0] && strcmp(host, x->host) != 0) ||
            !cp_busid_norm(x->busid, have) || strcmp(have, norm) != 0)
            continue;
        if (x->rank < 0)
            return x->cuda_dev;
        if (found < 0)
            found = x->cuda_dev;
    }
    return found;
}

static bool busid_of_index(const cp_incident *inc, const char *host, int index, char norm[8])
{
    for (size_t i = 0; i < inc->n_idents; i++) {
        const cp_ident *x = &inc->idents[i];
        if (x->cuda_dev == index && x->busid[0] && (!host[0] || !x->host[0] || strcmp(host, x->host) == 0) &&
            cp_busid_norm(x->busid, norm))
            return true;
    }
    return false;
}

static int rank_of_norm(const cp_incident *inc, const char *host, const char *norm)
{
    char have[8];
    for (size_t i = 0; i < inc->n_idents; i++) {
        const cp_ident *x = &inc->idents[i];
        if (x->rank >= 0 && x->nranks == inc->world_size && x->busid[0] &&
            (!host[0] || !x->host[0] || strcmp(host, x->host) == 0) && cp_busid_norm(x->busid, have) &&
            strcmp(have, norm) == 0)
            return x->rank;
    }
    return -1;
}

static void busid_of_rank(const cp_incident *inc, int rank, char norm[8])
{
    for (size_t i = 0; i < inc->n_idents; i++) {
        const cp_ident *x = &inc->idents[i];
        if (x->rank == rank && x->nranks == inc->world_size && x->busid[0] && cp_busid_norm(x->busid, norm))
            return;
    }
    norm[0] = '\0';
}

/* The GPU an event is about, when it names one. */
static bool gpu_of(const cp_incident *inc, const char *host, const cp_event *e, cp_drain_gpu *g)
{
    char norm[8] = "";
    const char *busid = cp_capset_get(&e->caps, "busid");
    int64_t index = cap_i64(&e->caps, "gpu_index", -1);
    g->index = index >= 0 && index < 1024 ? (int)index : -1;
    g->rank = event_rank(inc, e);
    g->busid[0] = '\0';
    if (busid && !cp_busid_norm(busid, norm))
        norm[0] = '\0';
    if (!norm[0] && g->index >= 0 && !busid_of_index(inc, host, g->index, norm))
        norm[0] = '\0';
    /* a CUDA error that drains its GPU names the rank: NCCL says which GPU */
    if (!norm[0] && g->index < 0 && g->rank >= 0 && rule_of(inc, e)->drain == CP_DRAIN_GPU)
        busid_of_rank(inc, g->rank, norm);
    if (!norm[0] && g->index < 0)
        return false;
    if (norm[0]) {
        snprintf(g->busid, sizeof g->busid, "0000:%s.0", norm);
        if (g->index < 0)
            g->index = index_of_busid(inc, host, norm);
        if (g->rank < 0)
            g->rank = rank_of_norm(inc, host, norm);
    }
    return true;
}

static cp_drain_host *host_entry(cp_diagnosis *d, const char *host)
{
    for (size_t i = 0; i < d->n_drain; i++)
        if (strcmp(d->drain[i].host, host) == 0)
            return &d->drain[i];
    if (d->n_drain >= CP_DRAIN_HOSTS_MAX)
        return NULL;
    cp_drain_host *p = realloc(d->drain, (d->n_drain + 1) * sizeof *p);
    if (!p)
        return NULL;
    d->drain = p;
    cp_drain_host *h = &p[d->n_drain++];
    memset(h, 0, sizeof *h);
    snprintf(h->host, sizeof h->host, "%s", host);
    return h;
}

static int add_gpu(cp_drain_host *h, const cp_drain_gpu *g)
{
    for (size_t i = 0; i < h->n_gpus; i++) {
        cp_drain_gpu *x = &h->gpus[i];
        bool same = g->busid[0] && x->busid[0] ? strcmp(g->busid, x->busid) == 0 : g->index >= 0 && g->index == x->index;
        if (same) {
            if (x->index < 0)
                x->index = g->index;
            if (x->rank < 0)
                x->rank = g->rank;
            return 0;
        }
    }
    cp_drain_gpu *p = realloc(h->gpus, (h->n_gpus + 1) * sizeof *p);
    if (!p)
        return -1;
    h->gpus = p;
    h->gpus[h->n_gpus++] = *g;
    return 0;
}

/* "Xid 79 on 0000:ba:00 (rank 14)", "5 x InfiniBand/RoCE completion error" */
static void describe(const cp_incident *inc, const finding *f, const cp_drain_gpu *g, bool has_gpu, char *buf,
                     size_t n)
{
    const cp_rule *r = &inc->cat->rules[f->rule];
    const char *xid = cp_capset_get(&f->first->caps, "xid");
    const char *busid = cp_capset_get(&f->first->caps, "busid");
    char label[96], where[48] = "", who[24] = "", times[16] = "";
    if (xid)
        snprintf(label, sizeof label, "%sXid %s", strstr(r->id, "nvswitch") ? "S" : "", xid);
    else
        snprintf(label, sizeof label, "%s", r->title ? r->title : r->id);
    if (has_gpu && busid)
        snprintf(where, sizeof where, " on %s", busid);
    else if (has_gpu && g->busid[0])
        snprintf(where, sizeof where, " on %s", g->busid);
    else if (has_gpu && g->index >= 0)
        snprintf(where, sizeof where, " on GPU %d", g->index);
    if (has_gpu && g->rank >= 0)
        snprintf(who, sizeof who, " (rank %d)", g->rank);
    if (f->count > 1)
        snprintf(times, sizeof times, "%u x ", f->count);
    snprintf(buf, n, "%s%s%s%s", times, label, where, who);
}

char *cp_drain_command(const char *host, const char *reason)
{
    char safe[CP_DRAIN_REASON_MAX + 1];
    snprintf(safe, sizeof safe, "%s", reason ? reason : "");
    for (char *p = safe; *p; p++)
        if (*p == '"' || *p == '\\' || *p == '`' || *p == '$')
            *p = '\'';
    size_t n = strlen(host) + strlen(safe) + 96;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "scontrol update NodeName=%s State=DRAIN Reason=\"culprit: %s\"", host, safe);
    return out;
}

static int append_reason(cp_drain_host *h, const char *text, size_t *more)
{
    size_t have = h->reason ? strlen(h->reason) : 0;
    if (have && have + 2 + strlen(text) > CP_DRAIN_REASON_MAX) {
        (*more)++;
        return 0;
    }
    char *p = realloc(h->reason, have + strlen(text) + 3);
    if (!p)
        return -1;
    snprintf(p + have, strlen(text) + 3, "%s%s", have ? "; " : "", text);
    h->reason = p;
    return 0;
}

static int cmp_host(const void *a, const void *b)
{
    return strcmp(((const cp_drain_host *)a)->host, ((const cp_drain_host *)b)->host);
}

static int finish(cp_diagnosis *d, size_t *more)
{
    int rc = 0;
    for (size_t i = 0; i < d->n_drain; i++) {
        cp_drain_host *h = &d->drain[i];
        if (more && more[i] && h->reason) {
            char tail[32];
            snprintf(tail, sizeof tail, " and %zu more", more[i]);
            char *p = realloc(h->reason, strlen(h->reason) + strlen(tail) + 1);
            if (p)
                h->reason = strcat(p, tail);
        }
        if (h->host[0] && !(h->command = cp_drain_command(h->host, h->reason)))
            rc = -1;
    }
    if (d->n_drain > 1)
        qsort(d->drain, d->n_drain, sizeof *d->drain, cmp_host);
    return rc;
}

static int cmp_first(const void *a, const void *b)
{
    const finding *x = a, *y = b;
    return earlier(x->first, y->first) ? -1 : earlier(y->first, x->first) ? 1 : 0;
}

int cp_drain_build(cp_diagnosis *d, const cp_incident *inc)
{
    tally t = {0};
    size_t *more = NULL;
    int rc = 0;
    for (size_t i = 0; i < inc->n_events && rc == 0; i++) {
        const cp_event *e = &inc->events[i];
        const cp_rule *r = rule_of(inc, e);
        if (r && r->drain != CP_DRAIN_NONE && !e->in_table)
            rc = count_event(&t, host_of(inc, e), e);
    }
    decide(inc, &t);
    if (t.n > 1)
        qsort(t.v, t.n, sizeof *t.v, cmp_first); /* reasons in the order things broke */
    more = calloc(CP_DRAIN_HOSTS_MAX, sizeof *more);
    for (size_t i = 0; i < t.n && rc == 0 && more; i++) {
        const finding *f = &t.v[i];
        if (!f->drains)
            continue;
        cp_drain_host *h = host_entry(d, f->host);
        if (!h)
            break;
        size_t hi = (size_t)(h - d->drain);
        h->node |= inc->cat->rules[f->rule].drain == CP_DRAIN_NODE;
        cp_drain_gpu g;
        bool has_gpu = gpu_of(inc, f->host, f->first, &g);
        if (has_gpu)
            rc = add_gpu(h, &g);
        /* other GPUs of the same host hit by the same rule */
        for (size_t j = 0; j < inc->n_events && rc == 0; j++) {
            const cp_event *e = &inc->events[j];
            cp_drain_gpu o;
            if (e != f->first && e->rule == f->rule && !e->in_table && strcmp(host_of(inc, e), f->host) == 0 &&
                gpu_of(inc, f->host, e, &o))
                rc = add_gpu(h, &o);
        }
        char text[CP_DRAIN_REASON_MAX];
        describe(inc, f, &g, has_gpu, text, sizeof text);
        if (rc == 0)
            rc = append_reason(h, text, &more[hi]);
    }
    if (!more)
        rc = -1;
    if (finish(d, more) != 0)
        rc = -1;
    free(more);
    free(t.v);
    return rc;
}
