/* pickle.c - a bounded reader of plain-data pickles. See pickle.h. */
#include "pickle.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_BYTES ((size_t)1 << 30)
#define DEFAULT_MAX_DEPTH 64u
#define MAX_MEMO ((size_t)1 << 24) /* memo slots (LONG_BINPUT takes 32-bit indices) */

struct cp_pv_doc {
    cp_pv **all;       /* every node, for freeing */
    size_t n_all, cap_all;
    size_t bytes, max_bytes;
    unsigned max_depth;
    cp_pv *root;
};

/* ---- documents and nodes ------------------------------------------------ */

static void limits_of(const cp_pickle_limits *lim, size_t *bytes, unsigned *depth)
{
    *bytes = lim && lim->max_bytes ? lim->max_bytes : DEFAULT_MAX_BYTES;
    *depth = lim && lim->max_depth ? lim->max_depth : DEFAULT_MAX_DEPTH;
}

cp_pv_doc *cp_pv_doc_new(const cp_pickle_limits *lim)
{
    cp_pv_doc *d = calloc(1, sizeof *d);
    if (d)
        limits_of(lim, &d->max_bytes, &d->max_depth);
    return d;
}

void cp_pv_doc_free(cp_pv_doc *doc)
{
    if (!doc)
        return;
    for (size_t i = 0; i < doc->n_all; i++) {
        free(doc->all[i]->s);
        free(doc->all[i]->items);
        free(doc->all[i]);
    }
    free(doc->all);
    free(doc);
}

const cp_pv *cp_pv_doc_root(const cp_pv_doc *doc)
{
    return doc ? doc->root : NULL;
}

void cp_pv_doc_set_root(cp_pv_doc *doc, cp_pv *root)
{
    doc->root = root;
}

/* Counts `n` bytes against the budget; false when over it. */
static bool charge(cp_pv_doc *d, size_t n)
{
    if (n > d->max_bytes - d->bytes)
        return false;
    d->bytes += n;
    return true;
}

cp_pv *cp_pv_new(cp_pv_doc *d, cp_pv_type type, const char *s, size_t len)
{
    if (!charge(d, sizeof(cp_pv) + sizeof(cp_pv *) + ((type == CP_PV_STR || type == CP_PV_BYTES) ? len + 1 : 0)))
        return NULL;
    if (d->n_all == d->cap_all) {
        size_t cap = d->cap_all ? d->cap_all * 2 : 256;
        cp_pv **p = realloc(d->all, cap * sizeof *p);
        if (!p)
            return NULL;
        d->all = p;
        d->cap_all = cap;
    }
    cp_pv *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    v->type = type;
    v->depth = 1;
    if (type == CP_PV_STR || type == CP_PV_BYTES) {
        if (!(v->s = malloc(len + 1))) {
            free(v);
            return NULL;
        }
        if (len)
            memcpy(v->s, s, len);
        v->s[len] = '\0';
        v->len = len;
    }
    d->all[d->n_all++] = v;
    return v;
}

int cp_pv_append(cp_pv_doc *d, cp_pv *c, cp_pv *item)
{
    if (!c || !item || c == item || c->sealed ||
        (c->type != CP_PV_LIST && c->type != CP_PV_TUPLE && c->type != CP_PV_DICT))
        return CP_PICKLE_EFORMAT;
    if ((unsigned)item->depth + 1 > d->max_depth)
        return CP_PICKLE_EDEPTH;
    if (c->len == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 4;
        if (!charge(d, (cap - c->cap) * sizeof *c->items))
            return CP_PICKLE_ENOMEM;
        cp_pv **p = realloc(c->items, cap * sizeof *p);
        if (!p)
            return CP_PICKLE_ENOMEM;
        c->items = p;
        c->cap = cap;
    }
    c->items[c->len++] = item;
    item->sealed = true; /* from now on it cannot gain elements: no cycles */
    if (item->depth + 1 > c->depth)
        c->depth = (uint16_t)(item->depth + 1);
    return CP_PICKLE_OK;
}

/* ---- lookups ------------------------------------------------------------- */

const cp_pv *cp_pv_get(const cp_pv *dict, const char *key)
{
    if (!dict || dict->type != CP_PV_DICT)
        return NULL;
    size_t klen = strlen(key);
    for (size_t i = 0; i + 1 < dict->len; i += 2) {
        const cp_pv *k = dict->items[i];
        if ((k->type == CP_PV_STR || k->type == CP_PV_BYTES) && k->len == klen && memcmp(k->s, key, klen) == 0)
            return dict->items[i + 1];
    }
    return NULL;
}

const char *cp_pv_str(const cp_pv *v)
{
    return v && (v->type == CP_PV_STR || v->type == CP_PV_BYTES) ? v->s : NULL;
}

bool cp_pv_int(const cp_pv *v, int64_t *out)
{
    if (!v)
        return false;
    switch (v->type) {
    case CP_PV_INT:
    case CP_PV_BOOL: *out = v->i; return true;
    case CP_PV_FLOAT:
        if (v->f != v->f || v->f < -9.2e18 || v->f > 9.2e18 || (double)(int64_t)v->f != v->f)
            return false;
        *out = (int64_t)v->f;
        return true;
    case CP_PV_STR: {
        char *end;
        errno = 0;
        long long x = strtoll(v->s, &end, 10);
        if (end == v->s || *end || errno)
            return false;
        *out = x;
        return true;
    }
    default: return false;
    }
}

bool cp_pv_is_seq(const cp_pv *v)
{
    return v && (v->type == CP_PV_LIST || v->type == CP_PV_TUPLE);
}

/* ---- the machine ----------------------------------------------------------- */

typedef struct pm {
    cp_pv_doc *d;
    const unsigned char *p, *end, *start;
    cp_pv **stack;
    size_t n, cap;
    size_t *marks;
    size_t n_marks, cap_marks;
    cp_pv **memo;
    size_t n_memo; /* slots allocated */
    size_t memo_next;
    char *err;
    size_t err_len;
} pm;

__attribute__((format(printf, 3, 4)))
static int bad(pm *m, int code, const char *fmt, ...)
{
    if (m->err && m->err_len) {
        char msg[200];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(m->err, m->err_len, "pickle byte %zu: %s", (size_t)(m->p - m->start), msg);
    }
    return code;
}

static bool take(pm *m, size_t n, const unsigned char **out)
{
    if ((size_t)(m->end - m->p) < n)
        return false;
    *out = m->p;
    m->p += n;
    return true;
}

static uint64_t le(const unsigned char *b, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

static int push(pm *m, cp_pv *v)
{
    if (!v)
        return bad(m, CP_PICKLE_ENOMEM, "over the memory limit");
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        if (!charge(m->d, (cap - m->cap) * sizeof *m->stack))
            return bad(m, CP_PICKLE_ENOMEM, "stack over the memory limit");
        cp_pv **p = realloc(m->stack, cap * sizeof *p);
        if (!p)
            return bad(m, CP_PICKLE_ENOMEM, "out of memory");
        m->stack = p;
        m->cap = cap;
    }
    m->stack[m->n++] = v;
    return 0;
}

static size_t floor_of_stack(const pm *m)
{
    return m->n_marks ? m->marks[m->n_marks - 1] : 0;
}

static cp_pv *pop(pm *m)
{
    return m->n > floor_of_stack(m) ? m->stack[--m->n] : NULL;
}

static cp_pv *top(pm *m)
{
    return m->n > floor_of_stack(m) ? m->stack[m->n - 1] : NULL;
}

static int push_mark(pm *m)
{
    if (m->n_marks == m->cap_marks) {
        size_t cap = m->cap_marks ? m->cap_marks * 2 : 16;
        if (!charge(m->d, (cap - m->cap_marks) * sizeof *m->marks))
            return bad(m, CP_PICKLE_ENOMEM, "marks over the memory limit");
        size_t *p = realloc(m->marks, cap * sizeof *p);
        if (!p)
            return bad(m, CP_PICKLE_ENOMEM, "out of memory");
        m->marks = p;
        m->cap_marks = cap;
    }
    m->marks[m->n_marks++] = m->n;
    return 0;
}

/* Items above the last mark: [*first, m->n). Pops the mark. */
static int pop_mark(pm *m, size_t *first)
{
    if (!m->n_marks)
        return bad(m, CP_PICKLE_EFORMAT, "no mark on the stack");
    *first = m->marks[--m->n_marks];
    return 0;
}

static int memo_put(pm *m, uint64_t idx)
{
    cp_pv *v = top(m);
    if (!v)
        return bad(m, CP_PICKLE_EFORMAT, "memo put on an empty stack");
    if (idx >= MAX_MEMO)
        return bad(m, CP_PICKLE_EFORMAT, "memo index %llu too large", (unsigned long long)idx);
    if (idx >= m->n_memo) {
        size_t n = m->n_memo ? m->n_memo : 64;
        while (n <= idx)
            n *= 2;
        if (!charge(m->d, (n - m->n_memo) * sizeof *m->memo))
            return bad(m, CP_PICKLE_ENOMEM, "memo over the memory limit");
        cp_pv **p = realloc(m->memo, n * sizeof *p);
        if (!p)
            return bad(m, CP_PICKLE_ENOMEM, "out of memory");
        memset(p + m->n_memo, 0, (n - m->n_memo) * sizeof *p);
        m->memo = p;
        m->n_memo = n;
    }
    m->memo[idx] = v;
    return 0;
}

static int memo_get(pm *m, uint64_t idx)
{
    if (idx >= m->n_memo || !m->memo[idx])
        return bad(m, CP_PICKLE_EFORMAT, "memo get of unknown index %llu", (unsigned long long)idx);
    return push(m, m->memo[idx]);
}

static int op_str(pm *m, cp_pv_type t, int width)
{
    const unsigned char *b, *s;
    if (!take(m, (size_t)width, &b))
        return bad(m, CP_PICKLE_EFORMAT, "truncated length");
    uint64_t n = le(b, width);
    if (n > (uint64_t)(m->end - m->p) || !take(m, (size_t)n, &s))
        return bad(m, CP_PICKLE_EFORMAT, "string of %llu bytes runs past the end", (unsigned long long)n);
    return push(m, cp_pv_new(m->d, t, (const char *)s, (size_t)n));
}

static int op_int(pm *m, int width, bool is_signed)
{
    const unsigned char *b;
    if (!take(m, (size_t)width, &b))
        return bad(m, CP_PICKLE_EFORMAT, "truncated integer");
    uint64_t u = le(b, width);
    int64_t v = (int64_t)u;
    if (is_signed && width < 8 && (u >> (width * 8 - 1)) & 1)
        v = (int64_t)(u | ~(((uint64_t)1 << (width * 8)) - 1));
    cp_pv *x = cp_pv_new(m->d, CP_PV_INT, NULL, 0);
    if (x)
        x->i = v;
    return push(m, x);
}

static int op_long(pm *m, int width)
{
    const unsigned char *b, *s;
    if (!take(m, (size_t)width, &b))
        return bad(m, CP_PICKLE_EFORMAT, "truncated long length");
    uint64_t n = le(b, width);
    if (n > 8)
        return bad(m, CP_PICKLE_EFORMAT, "integer of %llu bytes is out of range", (unsigned long long)n);
    if (!take(m, (size_t)n, &s))
        return bad(m, CP_PICKLE_EFORMAT, "truncated long");
    uint64_t u = le(s, (int)n);
    if (n && n < 8 && (s[n - 1] & 0x80))
        u |= ~(((uint64_t)1 << (n * 8)) - 1);
    cp_pv *x = cp_pv_new(m->d, CP_PV_INT, NULL, 0);
    if (x)
        x->i = (int64_t)u;
    return push(m, x);
}

static int op_float(pm *m)
{
    const unsigned char *b;
    if (!take(m, 8, &b))
        return bad(m, CP_PICKLE_EFORMAT, "truncated float");
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u = u << 8 | b[i]; /* big-endian */
    double f;
    memcpy(&f, &u, sizeof f);
    cp_pv *x = cp_pv_new(m->d, CP_PV_FLOAT, NULL, 0);
    if (x)
        x->f = f;
    return push(m, x);
}

static int append_all(pm *m, cp_pv *c, size_t first)
{
    for (size_t i = first; i < m->n; i++) {
        int rc = cp_pv_append(m->d, c, m->stack[i]);
        if (rc == CP_PICKLE_EDEPTH)
            return bad(m, rc, "nested deeper than %u", m->d->max_depth);
        if (rc != 0)
            return bad(m, rc, rc == CP_PICKLE_ENOMEM ? "over the memory limit" : "bad container update");
    }
    m->n = first;
    return 0;
}

/* TUPLE, LIST, DICT (items from the mark) and TUPLE1-3 (the top n). */
static int op_build(pm *m, cp_pv_type t, int n_top)
{
    size_t first = 0;
    if (n_top >= 0) {
        if (m->n < floor_of_stack(m) + (size_t)n_top)
            return bad(m, CP_PICKLE_EFORMAT, "tuple of %d with fewer items on the stack", n_top);
        first = m->n - (size_t)n_top;
    } else if (pop_mark(m, &first) != 0) {
        return CP_PICKLE_EFORMAT;
    }
    if (t == CP_PV_DICT && (m->n - first) % 2)
        return bad(m, CP_PICKLE_EFORMAT, "dict with an odd number of items");
    cp_pv *c = cp_pv_new(m->d, t, NULL, 0);
    if (!c)
        return bad(m, CP_PICKLE_ENOMEM, "over the memory limit");
    int rc = append_all(m, c, first);
    return rc ? rc : push(m, c);
}

/* APPEND, APPENDS, SETITEM, SETITEMS: into the container below the items. */
static int op_extend(pm *m, bool marked, cp_pv_type want, size_t n_items)
{
    size_t first = 0;
    if (marked) {
        if (pop_mark(m, &first) != 0)
            return CP_PICKLE_EFORMAT;
        if (want == CP_PV_DICT && (m->n - first) % 2)
            return bad(m, CP_PICKLE_EFORMAT, "SETITEMS with an odd number of items");
    } else {
        if (m->n < floor_of_stack(m) + n_items + 1)
            return bad(m, CP_PICKLE_EFORMAT, "too few items on the stack");
        first = m->n - n_items;
    }
    if (first == 0 || first - 1 < floor_of_stack(m))
        return bad(m, CP_PICKLE_EFORMAT, "no container below the items");
    cp_pv *c = m->stack[first - 1];
    if (c->type != want)
        return bad(m, CP_PICKLE_EFORMAT, "items added to a value that is not a %s",
                   want == CP_PV_DICT ? "dict" : "list");
    return append_all(m, c, first);
}

static int step(pm *m, unsigned char op, bool *stop)
{
    const unsigned char *b;
    switch (op) {
    case 0x80: /* PROTO */
        if (!take(m, 1, &b))
            return bad(m, CP_PICKLE_EFORMAT, "truncated PROTO");
        if (b[0] < 2 || b[0] > 5)
            return bad(m, CP_PICKLE_EFORMAT, "protocol %u is not supported", b[0]);
        return 0;
    case 0x95: /* FRAME: a length hint only */
        return take(m, 8, &b) ? 0 : bad(m, CP_PICKLE_EFORMAT, "truncated FRAME");
    case '.': *stop = true; return 0;
    case '(': return push_mark(m);
    case '0': return pop(m) ? 0 : bad(m, CP_PICKLE_EFORMAT, "POP on an empty stack");
    case '1': { size_t f = 0; int rc = pop_mark(m, &f); if (!rc) m->n = f; return rc; }
    case '2': { cp_pv *v = top(m); return v ? push(m, v) : bad(m, CP_PICKLE_EFORMAT, "DUP on an empty stack"); }
    case 'N': return push(m, cp_pv_new(m->d, CP_PV_NONE, NULL, 0));
    case 0x88:
    case 0x89: {
        cp_pv *v = cp_pv_new(m->d, CP_PV_BOOL, NULL, 0);
        if (v)
            v->i = op == 0x88;
        return push(m, v);
    }
    case 'J': return op_int(m, 4, true);
    case 'K': return op_int(m, 1, false);
    case 'M': return op_int(m, 2, false);
    case 0x8a: return op_long(m, 1);
    case 0x8b: return op_long(m, 4);
    case 'G': return op_float(m);
    case 'X': return op_str(m, CP_PV_STR, 4);
    case 0x8c: return op_str(m, CP_PV_STR, 1);
    case 0x8d: return op_str(m, CP_PV_STR, 8);
    case 'U': return op_str(m, CP_PV_BYTES, 1);
    case 'T': return op_str(m, CP_PV_BYTES, 4);
    case 'C': return op_str(m, CP_PV_BYTES, 1);
    case 'B': return op_str(m, CP_PV_BYTES, 4);
    case 0x8e: return op_str(m, CP_PV_BYTES, 8);
    case '}': return push(m, cp_pv_new(m->d, CP_PV_DICT, NULL, 0));
    case ']': return push(m, cp_pv_new(m->d, CP_PV_LIST, NULL, 0));
    case ')': return push(m, cp_pv_new(m->d, CP_PV_TUPLE, NULL, 0));
    case 't': return op_build(m, CP_PV_TUPLE, -1);
    case 0x85: return op_build(m, CP_PV_TUPLE, 1);
    case 0x86: return op_build(m, CP_PV_TUPLE, 2);
    case 0x87: return op_build(m, CP_PV_TUPLE, 3);
    case 'l': return op_build(m, CP_PV_LIST, -1);
    case 'd': return op_build(m, CP_PV_DICT, -1);
    case 'a': return op_extend(m, false, CP_PV_LIST, 1);
    case 'e': return op_extend(m, true, CP_PV_LIST, 0);
    case 's': return op_extend(m, false, CP_PV_DICT, 2);
    case 'u': return op_extend(m, true, CP_PV_DICT, 0);
    case 'q': return take(m, 1, &b) ? memo_put(m, b[0]) : bad(m, CP_PICKLE_EFORMAT, "truncated BINPUT");
    case 'r': return take(m, 4, &b) ? memo_put(m, le(b, 4)) : bad(m, CP_PICKLE_EFORMAT, "truncated LONG_BINPUT");
    case 0x94: return memo_put(m, m->memo_next++);
    case 'h': return take(m, 1, &b) ? memo_get(m, b[0]) : bad(m, CP_PICKLE_EFORMAT, "truncated BINGET");
    case 'j': return take(m, 4, &b) ? memo_get(m, le(b, 4)) : bad(m, CP_PICKLE_EFORMAT, "truncated LONG_BINGET");
    case 'c': case 0x93: case 'R': case 'b': case 'i': case 'o': case 0x81: case 0x92:
    case 'P': case 'Q': case 0x82: case 0x83: case 0x84: case 0x97: case 0x98:
        return bad(m, CP_PICKLE_EFORMAT, "opcode 0x%02x builds objects or imports code: refused", op);
    default:
        return bad(m, CP_PICKLE_EFORMAT, "opcode 0x%02x is not supported", op);
    }
}

int cp_pickle_parse(cp_pv_doc **out, const unsigned char *data, size_t len, const cp_pickle_limits *lim,
                    char *err, size_t err_len)
{
    *out = NULL;
    if (err && err_len)
        err[0] = '\0';
    pm m = {.p = data, .end = data + len, .start = data, .err = err, .err_len = err_len};
    int rc = 0;
    if (!(m.d = cp_pv_doc_new(lim)))
        return CP_PICKLE_ENOMEM;
    bool stop = false;
    while (!rc && !stop) {
        if (m.p >= m.end) {
            rc = bad(&m, CP_PICKLE_EFORMAT, "truncated: no STOP");
            break;
        }
        unsigned char op = *m.p++;
        rc = step(&m, op, &stop);
    }
    if (!rc && (m.n != 1 || m.n_marks))
        rc = bad(&m, CP_PICKLE_EFORMAT, "%zu values left on the stack at STOP", m.n);
    if (!rc) {
        m.d->root = m.stack[0];
        *out = m.d;
        m.d = NULL;
    }
    free(m.stack);
    free(m.marks);
    free(m.memo);
    cp_pv_doc_free(m.d);
    return rc;
}
