/* frdump.c - Flight Recorder dumps. See frdump.h. */
#include "frdump.h"

#include <ctype.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pickle.h"
#include "util/buf.h"
#include "util/strutil.h"

enum {
    MAX_PGS = 4096,        /* process groups kept per dump */
    MAX_RANKS = 1 << 20,
    MAX_LIST = 120,        /* rank list in a finding line, in characters */
    FINDINGS_MAX = 1 << 20 /* bytes of findings text */
};

typedef enum { ST_SCHEDULED = 0, ST_STARTED, ST_COMPLETED } fr_state;

typedef struct fr_entry {
    int64_t seq;          /* collective_seq_id */
    int64_t time_ns;      /* time_created_ns, 0 unknown */
    int pg;               /* index into the set's groups */
    fr_state state;
    char *op;             /* profiling_name */
    char *sizes;          /* input and output sizes, as text */
    char *dtypes;
} fr_entry;

typedef struct fr_status {
    int pg;
    int64_t enqueued, completed;
} fr_status;

typedef struct fr_dump {
    char *path;
    int rank;
    char version[16];
    fr_entry *entries;    /* collectives only, sorted by (pg, seq) */
    size_t n_entries;
    fr_status *status;
    size_t n_status;
} fr_dump;

typedef struct fr_group {
    char *name, *desc;
    int *ranks;           /* members (global ranks), sorted; NULL unknown */
    size_t n_ranks;
} fr_group;

struct cp_frset {
    fr_dump *dumps;
    size_t n, cap;
    fr_group *groups;
    size_t n_groups, cap_groups;
};

/* ---- sniffing ---------------------------------------------------------- */

static bool has(const unsigned char *p, size_t n, const char *needle)
{
    return memmem(p, n, needle, strlen(needle)) != NULL;
}

bool cp_fr_sniff(const unsigned char *head, size_t len)
{
    if (!head || len < 2)
        return false;
    if (len >= 2 && head[0] == 0x80 && head[1] >= 2 && head[1] <= 5)
        return has(head, len, "pg_config") || (has(head, len, "entries") && has(head, len, "collective_seq_id"));
    size_t i = 0;
    while (i < len && isspace(head[i]))
        i++;
    if (i >= len || head[i] != '{')
        return false;
    return has(head, len, "\"pg_config\"") ||
           (has(head, len, "\"entries\"") && has(head, len, "\"collective_seq_id\"") && has(head, len, "\"version\""));
}

/* ---- the set ----------------------------------------------------------- */

cp_frset *cp_frset_new(void)
{
    return calloc(1, sizeof(cp_frset));
}

static void dump_free(fr_dump *d)
{
    free(d->path);
    for (size_t i = 0; i < d->n_entries; i++) {
        free(d->entries[i].op);
        free(d->entries[i].sizes);
        free(d->entries[i].dtypes);
    }
    free(d->entries);
    free(d->status);
}

void cp_frset_free(cp_frset *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++)
        dump_free(&set->dumps[i]);
    free(set->dumps);
    for (size_t i = 0; i < set->n_groups; i++) {
        free(set->groups[i].name);
        free(set->groups[i].desc);
        free(set->groups[i].ranks);
    }
    free(set->groups);
    free(set);
}

size_t cp_frset_count(const cp_frset *set)
{
    return set->n;
}

/* The group named `name`, added when new; -1 on no memory or too many. */
static int group_of(cp_frset *set, const char *name, const char *desc)
{
    for (size_t i = 0; i < set->n_groups; i++)
        if (strcmp(set->groups[i].name, name) == 0) {
            if (desc && desc[0] && !set->groups[i].desc[0]) {
                char *d = cp_strdup(desc);
                if (d) {
                    free(set->groups[i].desc);
                    set->groups[i].desc = d;
                }
            }
            return (int)i;
        }
    if (set->n_groups >= MAX_PGS)
        return -1;
    fr_group *grown = cp_grow(set->groups, &set->cap_groups, set->n_groups, sizeof *grown, 8);
    if (!grown)
        return -1;
    set->groups = grown;
    fr_group *g = &set->groups[set->n_groups];
    memset(g, 0, sizeof *g);
    g->name = cp_strdup(name);
    g->desc = cp_strdup(desc ? desc : "");
    if (!g->name || !g->desc) {
        free(g->name);
        free(g->desc);
        return -1;
    }
    return (int)set->n_groups++;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* "[0, 1, 2]" (pg_config's ranks are a string) or a list of ints. */
static void group_ranks(fr_group *g, const cp_pv *v)
{
    if (g->ranks || !v)
        return;
    size_t cap = 0, n = 0;
    int *r = NULL;
    const char *s = cp_pv_str(v);
    for (size_t i = 0;; i++) {
        int64_t x;
        bool got = false;
        if (s) {
            while (*s && !isdigit((unsigned char)*s))
                s++;
            if (!*s)
                break;
            char *end;
            x = strtoll(s, &end, 10);
            s = end;
            got = true;
        } else if (cp_pv_is_seq(v) && i < v->len) {
            got = cp_pv_int(v->items[i], &x);
        } else {
            break;
        }
        if (!got || x < 0 || x >= MAX_RANKS)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            int *p = realloc(r, cap * sizeof *p);
            if (!p) {
                free(r);
                return;
            }
            r = p;
        }
        r[n++] = (int)x;
    }
    if (!n) {
        free(r);
        return;
    }
    qsort(r, n, sizeof *r, cmp_int);
    g->ranks = r;
    g->n_ranks = n;
}

/* ---- reading one dump ---------------------------------------------------- */

/* Text of a value for comparisons: [[3, 4]], ["Float"]. */
static void value_text(cp_buf *b, const cp_pv *v, int depth)
{
    if (!v || depth > 8) {
        cp_buf_puts(b, "?");
        return;
    }
    switch (v->type) {
    case CP_PV_INT: cp_buf_printf(b, "%lld", (long long)v->i); break;
    case CP_PV_FLOAT: cp_buf_printf(b, "%g", v->f); break;
    case CP_PV_STR:
    case CP_PV_BYTES: cp_buf_puts(b, v->s); break;
    case CP_PV_LIST:
    case CP_PV_TUPLE:
        cp_buf_puts(b, "[");
        for (size_t i = 0; i < v->len && b->len < 512; i++) {
            if (i)
                cp_buf_puts(b, ", ");
            value_text(b, v->items[i], depth + 1);
        }
        cp_buf_puts(b, "]");
        break;
    default: cp_buf_puts(b, "-"); break;
    }
}

static char *pair_text(const cp_pv *in, const cp_pv *out)
{
    cp_buf b;
    cp_buf_init(&b, 4096);
    value_text(&b, in, 0);
    cp_buf_puts(&b, " -> ");
    value_text(&b, out, 0);
    return cp_buf_take(&b);
}

static fr_state state_of(const cp_pv *e)
{
    const char *s = cp_pv_str(cp_pv_get(e, "state"));
    if (s && strcmp(s, "completed") == 0)
        return ST_COMPLETED;
    if (s && strcmp(s, "started") == 0)
        return ST_STARTED;
    return ST_SCHEDULED;
}

/* process_group is (name, desc); very old dumps carry only pg_id. */
static int entry_group(cp_frset *set, const cp_pv *e)
{
    const cp_pv *pg = cp_pv_get(e, "process_group");
    const char *name = NULL, *desc = NULL;
    char idbuf[32];
    if (cp_pv_is_seq(pg) && pg->len >= 1) {
        name = cp_pv_str(pg->items[0]);
        desc = pg->len >= 2 ? cp_pv_str(pg->items[1]) : NULL;
    } else if (cp_pv_str(pg)) {
        name = cp_pv_str(pg);
    }
    int64_t id;
    if (!name && cp_pv_int(cp_pv_get(e, "pg_id"), &id)) {
        snprintf(idbuf, sizeof idbuf, "%lld", (long long)id);
        name = idbuf;
    }
    return name ? group_of(set, name, desc) : -1;
}

static int add_entry(cp_frset *set, fr_dump *d, const cp_pv *e, size_t *cap)
{
    const cp_pv *p2p = cp_pv_get(e, "is_p2p");
    if (p2p && p2p->type == CP_PV_BOOL && p2p->i)
        return 0; /* point-to-point ops pair two ranks; not aligned here */
    int64_t seq;
    if (!cp_pv_int(cp_pv_get(e, "collective_seq_id"), &seq) && !cp_pv_int(cp_pv_get(e, "seq_id"), &seq))
        return 0;
    int pg = entry_group(set, e);
    if (pg < 0)
        return 0;
    if (d->n_entries == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        fr_entry *p = realloc(d->entries, c * sizeof *p);
        if (!p)
            return -1;
        d->entries = p;
        *cap = c;
    }
    fr_entry *x = &d->entries[d->n_entries];
    memset(x, 0, sizeof *x);
    x->seq = seq;
    x->pg = pg;
    x->state = state_of(e);
    if (!cp_pv_int(cp_pv_get(e, "time_created_ns"), &x->time_ns))
        x->time_ns = 0;
    const char *op = cp_pv_str(cp_pv_get(e, "profiling_name"));
    x->op = cp_strdup(op ? op : "?");
    x->sizes = pair_text(cp_pv_get(e, "input_sizes"), cp_pv_get(e, "output_sizes"));
    x->dtypes = pair_text(cp_pv_get(e, "input_dtypes"), cp_pv_get(e, "output_dtypes"));
    if (!x->op || !x->sizes || !x->dtypes) {
        free(x->op);
        free(x->sizes);
        free(x->dtypes);
        return -1;
    }
    d->n_entries++;
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    const fr_entry *x = a, *y = b;
    if (x->pg != y->pg)
        return x->pg < y->pg ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* pg_status: {pg_id: {last_enqueued_collective, ..}}, values ints or
 * (JSON) strings. The pg_id names the group through the dump's entries,
 * else it is the group's name (the default group is "0"). */
static void read_status(cp_frset *set, fr_dump *d, const cp_pv *status, const cp_pv *entries)
{
    if (!status || status->type != CP_PV_DICT || !status->len)
        return;
    d->status = calloc(status->len / 2, sizeof *d->status);
    if (!d->status)
        return;
    for (size_t i = 0; i + 1 < status->len; i += 2) {
        const char *id = cp_pv_str(status->items[i]);
        int64_t idn = -1;
        if (!id && cp_pv_int(status->items[i], &idn))
            id = NULL;
        else if (id && !cp_parse_i64(id, &idn))
            idn = -1;
        int pg = -1;
        for (size_t k = 0; entries && k < entries->len && pg < 0 && idn >= 0; k++) {
            int64_t eid;
            if (cp_pv_int(cp_pv_get(entries->items[k], "pg_id"), &eid) && eid == idn)
                pg = entry_group(set, entries->items[k]);
        }
        char buf[32];
        if (pg < 0 && idn >= 0) {
            snprintf(buf, sizeof buf, "%lld", (long long)idn);
            pg = group_of(set, buf, NULL);
        }
        if (pg < 0)
            continue;
        fr_status *s = &d->status[d->n_status++];
        s->pg = pg;
        if (!cp_pv_int(cp_pv_get(status->items[i + 1], "last_enqueued_collective"), &s->enqueued))
            s->enqueued = -1;
        if (!cp_pv_int(cp_pv_get(status->items[i + 1], "last_completed_collective"), &s->completed))
            s->completed = -1;
    }
}

/* Rank = trailing digits of the file name (as fr_trace's loader reads it),
 * after an extension such as .pkl or .json. */
static int rank_of_path(const char *path)
{
    const char *base = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == ':')
            base = p + 1;
    size_t n = strlen(base);
    const char *dot = strrchr(base, '.');
    if (dot && dot > base && !isdigit((unsigned char)dot[1]))
        n = (size_t)(dot - base);
    size_t e = n;
    while (e > 0 && isdigit((unsigned char)base[e - 1]))
        e--;
    if (e == n || n - e > 7)
        return -1;
    return atoi(base + e);
}

static cp_pv *from_json(cp_pv_doc *doc, json_t *j, int depth)
{
    if (depth > 64)
        return NULL;
    cp_pv *v = NULL;
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        v = cp_pv_new(doc, CP_PV_DICT, NULL, 0);
        const char *k;
        json_t *x;
        json_object_foreach(j, k, x) {
            cp_pv *kv = cp_pv_new(doc, CP_PV_STR, k, strlen(k)), *xv = from_json(doc, x, depth + 1);
            if (!v || !kv || !xv || cp_pv_append(doc, v, kv) || cp_pv_append(doc, v, xv))
                return NULL;
        }
        break;
    }
    case JSON_ARRAY: {
        v = cp_pv_new(doc, CP_PV_LIST, NULL, 0);
        size_t i;
        json_t *x;
        json_array_foreach(j, i, x) {
            cp_pv *xv = from_json(doc, x, depth + 1);
            if (!v || !xv || cp_pv_append(doc, v, xv))
                return NULL;
        }
        break;
    }
    case JSON_STRING: v = cp_pv_new(doc, CP_PV_STR, json_string_value(j), json_string_length(j)); break;
    case JSON_INTEGER:
        if ((v = cp_pv_new(doc, CP_PV_INT, NULL, 0)))
            v->i = json_integer_value(j);
        break;
    case JSON_REAL:
        if ((v = cp_pv_new(doc, CP_PV_FLOAT, NULL, 0)))
            v->f = json_real_value(j);
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        if ((v = cp_pv_new(doc, CP_PV_BOOL, NULL, 0)))
            v->i = json_is_true(j);
        break;
    default: v = cp_pv_new(doc, CP_PV_NONE, NULL, 0); break;
    }
    return v;
}

static cp_pv_doc *parse_any(const unsigned char *data, size_t len, char *err, size_t err_len)
{
    cp_pv_doc *doc = NULL;
    if (len >= 2 && data[0] == 0x80) {
        cp_pickle_parse(&doc, data, len, NULL, err, err_len);
        return doc;
    }
    json_error_t je;
    json_t *j = json_loadb((const char *)data, len, JSON_DECODE_INT_AS_REAL * 0, &je);
    if (!j) {
        snprintf(err, err_len, "JSON line %d: %s", je.line, je.text);
        return NULL;
    }
    doc = cp_pv_doc_new(NULL);
    cp_pv *root = doc ? from_json(doc, j, 0) : NULL;
    json_decref(j);
    if (!root) {
        snprintf(err, err_len, "JSON too large or too deep");
        cp_pv_doc_free(doc);
        return NULL;
    }
    cp_pv_doc_set_root(doc, root);
    return doc;
}

static int read_dump(cp_frset *set, fr_dump *d, const cp_pv *root, char *err, size_t err_len)
{
    if (!root || root->type != CP_PV_DICT || (!cp_pv_get(root, "entries") && !cp_pv_get(root, "pg_config"))) {
        snprintf(err, err_len, "not a Flight Recorder dump (no entries or pg_config)");
        return -1;
    }
    const char *ver = cp_pv_str(cp_pv_get(root, "version"));
    snprintf(d->version, sizeof d->version, "%s", ver ? ver : "?");
    const cp_pv *cfg = cp_pv_get(root, "pg_config");
    for (size_t i = 0; cfg && cfg->type == CP_PV_DICT && i + 1 < cfg->len; i += 2) {
        const cp_pv *info = cfg->items[i + 1];
        const char *name = cp_pv_str(cp_pv_get(info, "name"));
        if (!name)
            name = cp_pv_str(cfg->items[i]);
        int g = name ? group_of(set, name, cp_pv_str(cp_pv_get(info, "desc"))) : -1;
        if (g >= 0)
            group_ranks(&set->groups[g], cp_pv_get(info, "ranks"));
    }
    const cp_pv *entries = cp_pv_get(root, "entries");
    size_t cap = 0;
    for (size_t i = 0; cp_pv_is_seq(entries) && i < entries->len; i++)
        if (add_entry(set, d, entries->items[i], &cap) != 0) {
            snprintf(err, err_len, "out of memory");
            return -1;
        }
    if (d->n_entries)
        qsort(d->entries, d->n_entries, sizeof *d->entries, cmp_entry);
    read_status(set, d, cp_pv_get(root, "pg_status"), cp_pv_is_seq(entries) ? entries : NULL);
    return 0;
}

int cp_frset_add(cp_frset *set, const char *path, const unsigned char *data, size_t len, char *err, size_t err_len)
{
    err[0] = '\0';
    int rank = rank_of_path(path);
    if (rank < 0) {
        snprintf(err, err_len, "Flight Recorder dump without a rank in its file name, skipped");
        return -1;
    }
    cp_pv_doc *doc = parse_any(data, len, err, err_len);
    if (!doc)
        return -1;
    if (set->n == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 16;
        fr_dump *p = realloc(set->dumps, cap * sizeof *p);
        if (!p) {
            cp_pv_doc_free(doc);
            snprintf(err, err_len, "out of memory");
            return -1;
        }
        set->dumps = p;
        set->cap = cap;
    }
    fr_dump *d = &set->dumps[set->n];
    memset(d, 0, sizeof *d);
    d->rank = rank;
    d->path = cp_strdup(path);
    int rc = d->path ? read_dump(set, d, cp_pv_doc_root(doc), err, err_len) : -1;
    cp_pv_doc_free(doc);
    if (rc != 0) {
        dump_free(d);
        return -1;
    }
    /* a second dump of the same rank (a re-run's) replaces nothing: keep the first */
    for (size_t i = 0; i < set->n; i++)
        if (set->dumps[i].rank == rank) {
            dump_free(d);
            snprintf(err, err_len, "a second Flight Recorder dump of rank %d, ignored", rank);
            return -1;
        }
    set->n++;
    return 0;
}

/* ---- analysis --------------------------------------------------------------- */

typedef enum { F_MISSING, F_MISMATCH, F_ABSENT } finding_kind;

/* What one covered member of a group holds: [first, last) of its entries. */
typedef struct member {
    const fr_dump *d;
    size_t first, last;
    int64_t last_enqueued; /* entries or pg_status, whichever is further */
} member;

/* "0-16,18-31", cut at MAX_LIST characters. */
static void rank_list(cp_buf *b, const int *r, size_t n)
{
    size_t start = b->len;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && r[j + 1] == r[j] + 1)
            j++;
        if (b->len - start > MAX_LIST) {
            cp_buf_printf(b, ",... (%zu ranks)", n);
            return;
        }
        cp_buf_printf(b, "%s%d", i ? "," : "", r[i]);
        if (j > i)
            cp_buf_printf(b, "-%d", r[j]);
        i = j + 1;
    }
}

static void iso_time(cp_buf *b, int64_t ns)
{
    if (ns <= 0)
        return;
    time_t t = (time_t)(ns / 1000000000);
    struct tm tm;
    if (!gmtime_r(&t, &tm))
        return;
    char s[40];
    strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%S", &tm);
    cp_buf_printf(b, "%s.%03dZ ", s, (int)((ns / 1000000) % 1000));
}

/* nccl:all_reduce -> ALLREDUCE, as the watchdog names it */
static void op_name(cp_buf *b, const char *op)
{
    const char *c = strchr(op, ':');
    const char *p = c && c - op <= 5 ? c + 1 : op;
    for (; *p && *p != ' '; p++)
        if (*p != '_')
            cp_buf_printf(b, "%c", toupper((unsigned char)*p));
    if (*p)
        cp_buf_puts(b, p);
}

static const fr_entry *find_entry(const member *m, int64_t seq)
{
    size_t lo = m->first, hi = m->last;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->d->entries[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->last && m->d->entries[lo].seq == seq ? &m->d->entries[lo] : NULL;
}

static bool is_member(const fr_group *g, int rank)
{
    return !g->ranks || bsearch(&rank, g->ranks, g->n_ranks, sizeof rank, cmp_int) != NULL;
}

/* The covered members of group `gi`: dumps with entries or a status for it. */
static size_t members_of(const cp_frset *set, int gi, member *out)
{
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        const fr_dump *d = &set->dumps[i];
        if (!is_member(&set->groups[gi], d->rank))
            continue;
        member m = {d, 0, 0, -1};
        fr_entry key = {.pg = gi, .seq = INT64_MIN};
        size_t lo = 0, hi = d->n_entries;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (cmp_entry(&d->entries[mid], &key) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        m.first = m.last = lo;
        while (m.last < d->n_entries && d->entries[m.last].pg == gi)
            m.last++;
        bool known = m.last > m.first;
        if (known)
            m.last_enqueued = d->entries[m.last - 1].seq;
        for (size_t k = 0; k < d->n_status; k++)
            if (d->status[k].pg == gi) {
                known = true;
                if (d->status[k].enqueued > m.last_enqueued)
                    m.last_enqueued = d->status[k].enqueued;
            }
        if (known)
            out[n++] = m;
    }
    return n;
}

typedef struct line_ctx {
    cp_buf *out;
    const fr_group *g;
} line_ctx;

static void pg_text(cp_buf *b, const fr_group *g)
{
    cp_buf_printf(b, "PG %s", g->name);
    if (g->desc[0])
        cp_buf_printf(b, " (%s)", g->desc);
}

static void emit(line_ctx *c, finding_kind k, int rank, int64_t seq, const fr_entry *ref, const char *field,
                 const char *value, const char *major, const int *others, size_t n_others, int64_t time_ns)
{
    cp_buf *b = c->out;
    iso_time(b, time_ns);
    cp_buf_printf(b, "[rank%d]: [flight-recorder] ", rank);
    switch (k) {
    case F_MISSING:
        cp_buf_printf(b, "rank %d never joined collective #%lld (", rank, (long long)seq);
        op_name(b, ref->op);
        cp_buf_puts(b, ") in ");
        pg_text(b, c->g);
        cp_buf_printf(b, "; votes=%zu; how=rank %d's dump has no entry for ", n_others, rank);
        op_name(b, ref->op);
        cp_buf_printf(b, " #%lld in ", (long long)seq);
        pg_text(b, c->g);
        cp_buf_puts(b, "; ranks ");
        rank_list(b, others, n_others);
        cp_buf_puts(b, " enqueued it\n");
        break;
    case F_MISMATCH:
        cp_buf_printf(b, "ranks disagree on collective #%lld in ", (long long)seq);
        pg_text(b, c->g);
        cp_buf_printf(b, ": rank %d ran ", rank);
        op_name(b, ref->op);
        cp_buf_printf(b, " with %s %s; votes=%zu; how=rank %d's dump has #%lld with %s %s; ranks ", field, value,
                      n_others, rank, (long long)seq, field, value);
        rank_list(b, others, n_others);
        cp_buf_printf(b, " have %s\n", major);
        break;
    case F_ABSENT:
        cp_buf_printf(b, "rank %d left no dump while every rank that did waits in collective #%lld (", rank,
                      (long long)seq);
        op_name(b, ref->op);
        cp_buf_puts(b, ") in ");
        pg_text(b, c->g);
        cp_buf_printf(b, "; votes=1; how=no dump from rank %d; ranks ", rank);
        rank_list(b, others, n_others);
        cp_buf_puts(b, " enqueued ");
        op_name(b, ref->op);
        cp_buf_printf(b, " #%lld and never completed it\n", (long long)seq);
        break;
    }
}

typedef const char *(*field_fn)(const fr_entry *e);
static const char *f_op(const fr_entry *e) { return e->op; }
static const char *f_sizes(const fr_entry *e) { return e->sizes; }
static const char *f_dtypes(const fr_entry *e) { return e->dtypes; }
static const char *f_state(const fr_entry *e) { return e->state == ST_COMPLETED ? "completed" : "not completed"; }

/* Entries of all members for one sequence number disagree in a field: the
 * ranks holding the most common value are taken as healthy (never the
 * first rank compared), the others deviate. True when it found some. */
static bool compare_field(line_ctx *c, const fr_entry **es, const member *ms, size_t n, field_fn f,
                          const char *field, int64_t seq, int *buf)
{
    size_t best = 0, best_n = 0, second_n = 0;
    for (size_t i = 0; i < n; i++) {
        size_t same = 0;
        for (size_t j = 0; j < n; j++)
            same += strcmp(f(es[i]), f(es[j])) == 0;
        if (same > best_n) {
            if (strcmp(f(es[i]), f(es[best])) != 0)
                second_n = best_n;
            best = i;
            best_n = same;
        } else if (same > second_n && strcmp(f(es[i]), f(es[best])) != 0) {
            second_n = same;
        }
    }
    if (best_n == n || best_n == second_n)
        return false;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(f(es[i]), f(es[best])) == 0)
            buf[k++] = ms[i].d->rank;
    qsort(buf, k, sizeof *buf, cmp_int);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(f(es[i]), f(es[best])) == 0)
            continue;
        char value[200], major[200];
        snprintf(value, sizeof value, "%s", f(es[i]));
        snprintf(major, sizeof major, "%s", f(es[best]));
        emit(c, F_MISMATCH, ms[i].d->rank, seq, es[i], field, value, major, buf, k, es[i]->time_ns);
    }
    return true;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The sequence numbers every covered member's buffer may hold, ascending
 * and unique: from the latest first entry (ring buffers start at different
 * points) up. */
static int64_t *candidate_seqs(const member *ms, size_t n, size_t *n_out)
{
    int64_t start = INT64_MIN;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (ms[i].last > ms[i].first && ms[i].d->entries[ms[i].first].seq > start)
            start = ms[i].d->entries[ms[i].first].seq;
        total += ms[i].last - ms[i].first;
    }
    int64_t *s = malloc((total ? total : 1) * sizeof *s);
    size_t k = 0;
    for (size_t i = 0; s && i < n; i++)
        for (size_t j = ms[i].first; j < ms[i].last; j++)
            if (ms[i].d->entries[j].seq >= start)
                s[k++] = ms[i].d->entries[j].seq;
    if (s && k)
        qsort(s, k, sizeof *s, cmp_i64);
    size_t u = 0;
    for (size_t i = 0; s && i < k; i++)
        if (!u || s[u - 1] != s[i])
            s[u++] = s[i];
    *n_out = u;
    return s;
}

/* One sequence number of a group; true when it held a finding. */
static bool check_seq(line_ctx *c, const member *ms, size_t n, int64_t seq, const fr_entry **es, const member **held,
                      int *present, int *missing)
{
    size_t n_held = 0, n_missing = 0;
    const fr_entry *ref = NULL;
    int64_t t = 0;
    for (size_t i = 0; i < n; i++) {
        const fr_entry *e = find_entry(&ms[i], seq);
        if (e) {
            es[n_held] = e;
            held[n_held] = &ms[i];
            present[n_held++] = ms[i].d->rank;
            ref = ref ? ref : e;
            if (e->time_ns && (!t || e->time_ns < t))
                t = e->time_ns;
        } else if (ms[i].last_enqueued < seq) {
            missing[n_missing++] = ms[i].d->rank;
        }
    }
    if (n_missing && n_held >= n_missing) {
        qsort(present, n_held, sizeof *present, cmp_int);
        for (size_t i = 0; i < n_missing; i++)
            emit(c, F_MISSING, missing[i], seq, ref, NULL, NULL, NULL, present, n_held, t);
        return true;
    }
    if (n_missing || n_held != n)
        return false;
    member *hm = malloc(n_held * sizeof *hm);
    if (!hm)
        return false;
    for (size_t i = 0; i < n_held; i++)
        hm[i] = *held[i];
    bool found = compare_field(c, es, hm, n_held, f_op, "type", seq, missing) ||
                 compare_field(c, es, hm, n_held, f_sizes, "sizes", seq, missing) ||
                 compare_field(c, es, hm, n_held, f_dtypes, "dtypes", seq, missing) ||
                 compare_field(c, es, hm, n_held, f_state, "state", seq, missing);
    free(hm);
    return found;
}

/* No dump from exactly one member, and every dump that exists is waiting
 * in the same collective: that member is the one they wait for. */
static void check_absent(line_ctx *c, const cp_frset *set, const member *ms, size_t n, int *buf)
{
    const fr_group *g = c->g;
    if (!g->ranks || !n)
        return;
    int absent = -1, n_absent = 0;
    for (size_t i = 0; i < g->n_ranks; i++) {
        bool have = false;
        for (size_t j = 0; j < set->n && !have; j++)
            have = set->dumps[j].rank == g->ranks[i];
        if (!have) {
            absent = g->ranks[i];
            n_absent++;
        }
    }
    if (n_absent != 1)
        return;
    const fr_entry *stuck = NULL;
    for (size_t i = 0; i < n; i++) {
        const fr_entry *first_open = NULL;
        for (size_t j = ms[i].first; j < ms[i].last && !first_open; j++)
            if (ms[i].d->entries[j].state != ST_COMPLETED)
                first_open = &ms[i].d->entries[j];
        if (!first_open || (stuck && first_open->seq != stuck->seq))
            return;
        stuck = first_open;
        buf[i] = ms[i].d->rank;
    }
    qsort(buf, n, sizeof *buf, cmp_int);
    emit(c, F_ABSENT, absent, stuck->seq, stuck, NULL, NULL, NULL, buf, n, stuck->time_ns);
}

static void analyze_group(const cp_frset *set, int gi, cp_buf *out)
{
    member *ms = calloc(set->n ? set->n : 1, sizeof *ms);
    const fr_entry **es = calloc(set->n ? set->n : 1, sizeof *es);
    const member **held = calloc(set->n ? set->n : 1, sizeof *held);
    int *a = calloc(set->n ? set->n : 1, sizeof *a), *b = calloc(set->n ? set->n : 1, sizeof *b);
    size_t n_seqs = 0;
    int64_t *seqs = NULL;
    line_ctx c = {out, &set->groups[gi]};
    if (!ms || !es || !held || !a || !b)
        goto done;
    size_t n = members_of(set, gi, ms);
    if (!(seqs = candidate_seqs(ms, n, &n_seqs)))
        goto done;
    bool found = false;
    for (size_t i = 0; i < n_seqs && !found; i++)
        found = check_seq(&c, ms, n, seqs[i], es, held, a, b);
    if (!found)
        check_absent(&c, set, ms, n, a);
done:
    free(seqs);
    free(ms);
    free(es);
    free(held);
    free(a);
    free(b);
}

char *cp_frset_findings(const cp_frset *set, int *world)
{
    cp_buf out;
    cp_buf_init(&out, FINDINGS_MAX);
    *world = 0;
    for (size_t i = 0; i < set->n_groups; i++)
        for (size_t k = 0; k < set->groups[i].n_ranks; k++)
            if (set->groups[i].ranks[k] + 1 > *world)
                *world = set->groups[i].ranks[k] + 1;
    for (size_t i = 0; i < set->n; i++)
        if (set->dumps[i].rank + 1 > *world)
            *world = set->dumps[i].rank + 1;
    for (size_t i = 0; i < set->n_groups; i++)
        analyze_group(set, (int)i, &out);
    cp_buf_puts(&out, "");
    char *s = cp_buf_take(&out);
    return s ? s : cp_strdup("");
}
