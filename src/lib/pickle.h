/* pickle.h - a bounded reader of the pickle subset that data dumps use.
 *
 * PyTorch's Flight Recorder writes its per-rank dumps as pickles of plain
 * data: dicts, lists, tuples, strings, ints, floats, bools and None (see
 * torch/csrc/distributed/c10d/FlightRecorderDetail.hpp). This reader
 * accepts protocol 2-5 opcodes for exactly those, plus marks, memo get/put
 * and frames, and rejects everything else (GLOBAL, REDUCE, BUILD, object
 * construction, persistent ids, buffers) with an error: no code runs and
 * nothing outside the bytes is looked up.
 *
 * Every allocation counts against a byte limit, containers nest at most
 * `max_depth` deep, and memo references cannot make a cycle (a container
 * that became another's element can no longer change), so a consumer may
 * recurse over the result.
 *
 * The same value tree holds JSON dumps: cp_pv_new builds nodes in a
 * document (frdump.c converts jansson values with it).
 */
#ifndef CULPRIT_PICKLE_H
#define CULPRIT_PICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cp_pv_type {
    CP_PV_NONE = 0,
    CP_PV_BOOL,
    CP_PV_INT,
    CP_PV_FLOAT,
    CP_PV_STR,   /* UTF-8 text (may hold NUL bytes: use len) */
    CP_PV_BYTES,
    CP_PV_LIST,
    CP_PV_TUPLE,
    CP_PV_DICT   /* items[2k] is a key, items[2k + 1] its value */
} cp_pv_type;

typedef struct cp_pv cp_pv;
struct cp_pv {
    cp_pv_type type;
    bool sealed;       /* an element of another container: immutable */
    uint16_t depth;    /* 1 for a scalar; 1 + deepest element otherwise */
    int64_t i;         /* INT (clamped to int64), BOOL */
    double f;          /* FLOAT */
    char *s;           /* STR, BYTES: NUL-terminated copy */
    size_t len;        /* STR, BYTES: bytes; containers: items used */
    cp_pv **items;
    size_t cap;
};

typedef struct cp_pv_doc cp_pv_doc;

typedef struct cp_pickle_limits {
    size_t max_bytes;  /* memory the document may take (default 1 GiB) */
    unsigned max_depth;/* container nesting (default 64) */
} cp_pickle_limits;

enum {
    CP_PICKLE_OK = 0,
    CP_PICKLE_ENOMEM = -1,   /* out of memory or over max_bytes */
    CP_PICKLE_EFORMAT = -2,  /* truncated, malformed or unsupported */
    CP_PICKLE_EDEPTH = -3    /* nested deeper than max_depth */
};

/* Parses one pickle from `data`. On success *out is the caller's
 * (cp_pv_doc_free) and cp_pv_doc_root gives the value; on failure *out is
 * NULL and `err` (if given) says why, with the byte offset. `lim` may be
 * NULL for the defaults. */
int cp_pickle_parse(cp_pv_doc **out, const unsigned char *data, size_t len, const cp_pickle_limits *lim,
                    char *err, size_t err_len);

/* An empty document for building a tree by hand (JSON); NULL on no memory. */
cp_pv_doc *cp_pv_doc_new(const cp_pickle_limits *lim);
void cp_pv_doc_free(cp_pv_doc *doc);
const cp_pv *cp_pv_doc_root(const cp_pv_doc *doc);
void cp_pv_doc_set_root(cp_pv_doc *doc, cp_pv *root);

/* A new node of `type` owned by the document (strings: `s`/`len` copied);
 * NULL when over the limits. */
cp_pv *cp_pv_new(cp_pv_doc *doc, cp_pv_type type, const char *s, size_t len);
/* Appends to a list/tuple (one item) or dict (call twice: key, value).
 * Returns 0, or a CP_PICKLE_* error. */
int cp_pv_append(cp_pv_doc *doc, cp_pv *container, cp_pv *item);

/* Lookups that tolerate NULL and wrong types. */
const cp_pv *cp_pv_get(const cp_pv *dict, const char *key);
const char *cp_pv_str(const cp_pv *v);           /* STR or BYTES text, else NULL */
bool cp_pv_int(const cp_pv *v, int64_t *out);    /* INT, BOOL, integral FLOAT, decimal STR */
bool cp_pv_is_seq(const cp_pv *v);               /* LIST or TUPLE */

#endif
