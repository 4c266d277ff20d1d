#include "catalog.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/strutil.h"

enum { MAX_RULE_LINE = 64 * 1024, MAX_RULES = 100000 };

void cp_catalog_init(cp_catalog *c)
{
    memset(c, 0, sizeof *c);
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void rule_free(cp_rule *r)
{
    free(r->id);
    free_list(r->match, r->n_match);
    free_list(r->scan, r->n_scan);
    free_list(r->if_frame, r->n_if_frame);
    free_list(r->tests, r->n_tests);
    free(r->title);
    free(r->means);
    free(r->action);
    free(r->file);
    memset(r, 0, sizeof *r);
}

void cp_catalog_free(cp_catalog *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_rules; i++)
        rule_free(&c->rules[i]);
    free(c->rules);
    free(c->by_id);
    for (size_t i = 0; i < c->n_redefined; i++)
        free(c->redefined[i]);
    free(c->redefined);
    cp_catalog_init(c);
}

/* The slot of `id` in c->by_id: the one holding it, or the empty one
 * where it would go. The table is never full (twice the rules). */
static size_t id_slot(const cp_catalog *c, const char *id)
{
    size_t mask = c->cap_by_id - 1;
    size_t j = (size_t)cp_hash_str(CP_HASH_SEED, id) & mask;
    while (c->by_id[j] >= 0 && strcmp(c->rules[c->by_id[j]].id, id) != 0)
        j = (j + 1) & mask;
    return j;
}

/* Room in the index for one more rule: rebuilt twice as large when the
 * rules would fill more than half of it. Returns 0 or -1. */
static int index_room(cp_catalog *c)
{
    if (2 * (c->n_rules + 1) <= c->cap_by_id)
        return 0;
    size_t cap = c->cap_by_id ? c->cap_by_id * 2 : 256;
    int32_t *t = malloc(cap * sizeof *t);
    if (!t)
        return -1;
    free(c->by_id);
    c->by_id = t;
    c->cap_by_id = cap;
    for (size_t j = 0; j < cap; j++)
        t[j] = -1;
    for (size_t i = 0; i < c->n_rules; i++)
        t[id_slot(c, c->rules[i].id)] = (int32_t)i;
    return 0;
}

int cp_catalog_find(const cp_catalog *c, const char *id)
{
    if (!c->cap_by_id)
        return -1;
    return c->by_id[id_slot(c, id)];
}

__attribute__((format(printf, 4, 5)))
static int fail(cp_catalog *c, const char *file, int line, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->error, sizeof c->error, "%s:%d: %s", file, line, msg);
    return -1;
}

static int push(char ***v, size_t *n, const char *s)
{
    char **p = realloc(*v, (*n + 1) * sizeof **v);
    if (!p)
        return -1;
    *v = p;
    if (!(p[*n] = cp_strdup(s)))
        return -1;
    (*n)++;
    return 0;
}

static int set_text(char **field, const char *s)
{
    free(*field);
    *field = cp_strdup(s);
    return *field ? 0 : -1;
}

/* A flag's value: yes (or true) sets it, anything else leaves it off. */
static bool flag_on(const char *val)
{
    return strcmp(val, "yes") == 0 || strcmp(val, "true") == 0;
}

/* One key = value pair into the rule being read. */
static int apply_key(cp_catalog *c, cp_rule *r, const char *file, int line,
                     const char *key, const char *val)
{
    int v;
    if (strcmp(key, "match") == 0)
        return push(&r->match, &r->n_match, val);
    if (strcmp(key, "scan") == 0)
        return push(&r->scan, &r->n_scan, val);
    if (strcmp(key, "if_frame") == 0)
        return push(&r->if_frame, &r->n_if_frame, val);
    if (strcmp(key, "test") == 0)
        return push(&r->tests, &r->n_tests, val);
    if (strcmp(key, "title") == 0)
        return set_text(&r->title, val);
    if (strcmp(key, "means") == 0)
        return set_text(&r->means, val);
    if (strcmp(key, "action") == 0)
        return set_text(&r->action, val);
    if (strcmp(key, "keep") == 0) {
        r->keep = flag_on(val);
        return 0;
    }
    if (strcmp(key, "cut") == 0) {
        r->cut = flag_on(val);
        return 0;
    }
    if (strcmp(key, "alone") == 0) {
        r->alone = flag_on(val);
        return 0;
    }
    if (strcmp(key, "in_checkpoint") == 0) {
        r->in_checkpoint = flag_on(val);
        return 0;
    }
    if (strcmp(key, "under") == 0) {
        if (strcmp(val, "frame") != 0)
            return fail(c, file, line, "under must be frame, not '%s'", val);
        r->under_frame = true;
        return 0;
    }
    if (strcmp(key, "nocase") == 0) {
        r->nocase = flag_on(val);
        return 0;
    }
    if (strcmp(key, "role") == 0) {
        if ((v = cp_role_from_name(val)) < 0)
            return fail(c, file, line, "unknown role '%s'", val);
        r->role = (cp_role)v;
        return 0;
    }
    if (strcmp(key, "kind") == 0) {
        if ((v = cp_kind_from_name(val)) < 0)
            return fail(c, file, line, "unknown kind '%s'", val);
        r->kind = (cp_kind)v;
        return 0;
    }
    if (strcmp(key, "owner") == 0) {
        if ((v = cp_owner_from_name(val)) < 0)
            return fail(c, file, line, "unknown owner '%s'", val);
        r->owner = (cp_owner)v;
        return 0;
    }
    if (strcmp(key, "phase") == 0) {
        if ((v = cp_phase_from_name(val)) < 0)
            return fail(c, file, line, "unknown phase '%s'", val);
        r->phase = (cp_phase)v;
        return 0;
    }
    if (strcmp(key, "state") == 0) {
        if (strcmp(val, "begin") == 0)
            r->state = CP_STATE_BEGIN;
        else if (strcmp(val, "end") == 0)
            r->state = CP_STATE_END;
        else
            return fail(c, file, line, "state must be begin or end, not '%s'", val);
        return 0;
    }
    if (strcmp(key, "drain") == 0) {
        if (strcmp(val, "gpu") == 0)
            r->drain = CP_DRAIN_GPU;
        else if (strcmp(val, "node") == 0 || strcmp(val, "yes") == 0)
            r->drain = CP_DRAIN_NODE;
        else if (strcmp(val, "no") == 0)
            r->drain = CP_DRAIN_NONE;
        else
            return fail(c, file, line, "drain must be gpu, node or no, not '%s'", val);
        return 0;
    }
    if (strcmp(key, "drain_after") == 0) {
        int64_t n;
        if (!cp_parse_i64(val, &n) || n < 1 || n > 1000000)
            return fail(c, file, line, "drain_after must be 1-1000000, not '%s'", val);
        r->drain_after = (int)n;
        return 0;
    }
    if (strcmp(key, "frame_reach") == 0) {
        int64_t n;
        if (!cp_parse_i64(val, &n) || n < 1 || n > CP_FRAME_REACH_MAX)
            return fail(c, file, line, "frame_reach must be 1-%d, not '%s'", CP_FRAME_REACH_MAX, val);
        r->frame_reach = (int)n;
        return 0;
    }
    if (strcmp(key, "weight") == 0) {
        int64_t w;
        if (!cp_parse_i64(val, &w) || w < 0 || w > 100)
            return fail(c, file, line, "weight must be 0-100, not '%s'", val);
        r->weight = (int)w;
        return 0;
    }
    return fail(c, file, line, "unknown key '%s'", key);
}

static int check_rule(cp_catalog *c, const cp_rule *r)
{
    if (r->role == CP_ROLE_NONE)
        return fail(c, r->file, r->line, "rule '%s' has no role", r->id);
    if (r->role == CP_ROLE_CONCLUSION) {
        if (r->n_match)
            return fail(c, r->file, r->line, "rule '%s' (role conclusion) takes no match", r->id);
    } else if (r->n_match == 0) {
        return fail(c, r->file, r->line, "rule '%s' has no match", r->id);
    } else if (r->n_tests == 0) {
        return fail(c, r->file, r->line, "rule '%s' has no test line", r->id);
    }
    if (r->role == CP_ROLE_ROOT || r->role == CP_ROLE_CASCADE || r->role == CP_ROLE_CONCLUSION) {
        if (r->kind == CP_KIND_NONE)
            return fail(c, r->file, r->line, "rule '%s' (role %s) needs a kind", r->id, cp_role_name(r->role));
        if (!r->title || !r->means || !r->action)
            return fail(c, r->file, r->line, "rule '%s' (role %s) needs title, means and action",
                        r->id, cp_role_name(r->role));
    }
    if (r->role == CP_ROLE_PHASE && r->kind != CP_KIND_NONE && (!r->title || !r->means || !r->action))
        return fail(c, r->file, r->line, "rule '%s' (role phase) has a kind, so needs title, means and action",
                    r->id);
    if (r->cut && (r->role != CP_ROLE_ROOT || r->n_if_frame == 0))
        return fail(c, r->file, r->line, "rule '%s': cut needs role root and an if_frame", r->id);
    if (r->frame_reach && r->n_if_frame == 0)
        return fail(c, r->file, r->line, "rule '%s': frame_reach needs an if_frame", r->id);
    /* (a line only starts an event when a rule keeps it as one) */
    if (r->in_checkpoint && r->role != CP_ROLE_ROOT)
        return fail(c, r->file, r->line, "rule '%s': in_checkpoint needs role root", r->id);
    if (r->alone && r->role != CP_ROLE_ROOT && r->role != CP_ROLE_CASCADE && !(r->role == CP_ROLE_CONTEXT && r->keep))
        return fail(c, r->file, r->line, "rule '%s': alone needs role root or cascade, or a kept context rule",
                    r->id);
    if (r->under_frame && (r->role != CP_ROLE_PHASE || r->state != CP_STATE_NONE))
        return fail(c, r->file, r->line, "rule '%s': under = frame needs role phase and no state", r->id);
    return 0;
}

/* Whether two rule files lie in one folder. */
static bool same_folder(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    size_t la = sa ? (size_t)(sa - a) : 0, lb = sb ? (size_t)(sb - b) : 0;
    return la == lb && strncmp(a, b, la) == 0;
}

/* Notes a rule defined again in the folder of its first definition. */
static int note_redefined(cp_catalog *c, const cp_rule *old, const cp_rule *r)
{
    if (!same_folder(old->file, r->file))
        return 0;
    char **grown = realloc(c->redefined, (c->n_redefined + 1) * sizeof *grown);
    if (!grown)
        return fail(c, r->file, r->line, "out of memory");
    c->redefined = grown;
    char msg[1024];
    snprintf(msg, sizeof msg, "%s:%d: rule '%s' is defined again at %s:%d", old->file, old->line, r->id, r->file,
             r->line);
    if (!(c->redefined[c->n_redefined] = strdup(msg)))
        return fail(c, r->file, r->line, "out of memory");
    c->n_redefined++;
    return 0;
}

/* Adds (or replaces) a finished rule; takes ownership of *r. */
static int commit_rule(cp_catalog *c, cp_rule *r)
{
    if (check_rule(c, r) != 0)
        return -1;
    int at = cp_catalog_find(c, r->id);
    if (at >= 0 && note_redefined(c, &c->rules[at], r) != 0)
        return -1;
    if (at >= 0) {
        rule_free(&c->rules[at]);
        c->rules[at] = *r;
    } else {
        if (c->n_rules >= MAX_RULES)
            return fail(c, r->file, r->line, "more than %d rules", MAX_RULES);
        if (c->n_rules == c->cap) {
            size_t cap = c->cap ? c->cap * 2 : 128;
            cp_rule *p = realloc(c->rules, cap * sizeof *p);
            if (!p)
                return fail(c, r->file, r->line, "out of memory");
            c->rules = p;
            c->cap = cap;
        }
        if (index_room(c) != 0)
            return fail(c, r->file, r->line, "out of memory");
        c->by_id[id_slot(c, r->id)] = (int32_t)c->n_rules;
        c->rules[c->n_rules++] = *r;
    }
    memset(r, 0, sizeof *r);
    return 0;
}

static int start_rule(cp_catalog *c, cp_rule *r, const char *file, int line, char *hdr)
{
    size_t n = strlen(hdr);
    if (n < 8 || strncmp(hdr, "[rule ", 6) != 0 || hdr[n - 1] != ']')
        return fail(c, file, line, "expected a header like [rule some.id]");
    hdr[n - 1] = '\0';
    char *id = cp_trim(hdr + 6);
    if (!*id || strchr(id, ' '))
        return fail(c, file, line, "bad rule id '%s'", id);
    memset(r, 0, sizeof *r);
    r->weight = 50;
    r->drain_after = 1;
    r->line = line;
    r->id = cp_strdup(id);
    r->file = cp_strdup(file);
    return r->id && r->file ? 0 : fail(c, file, line, "out of memory");
}

/* A pending key = value, kept until continuation lines are joined. */
typedef struct pending {
    char key[32];
    cp_buf val;
    int line;
} pending;

static int flush_pending(cp_catalog *c, cp_rule *r, const char *file, pending *p)
{
    if (!p->key[0])
        return 0;
    int rc = apply_key(c, r, file, p->line, p->key, p->val.data ? p->val.data : "");
    if (rc != 0 && !c->error[0])
        fail(c, file, p->line, "out of memory");
    p->key[0] = '\0';
    cp_buf_clear(&p->val);
    return rc;
}

static int parse_kv(cp_catalog *c, const char *file, int line, char *text, pending *p)
{
    char *eq = strchr(text, '=');
    if (!eq)
        return fail(c, file, line, "expected key = value");
    *eq = '\0';
    char *key = cp_trim(text);
    size_t key_len = strlen(key);
    if (!*key || key_len >= sizeof p->key)
        return fail(c, file, line, "bad key '%s'", key);
    memcpy(p->key, key, key_len + 1);
    p->line = line;
    char *val = eq + 1;
    while (*val == ' ' || *val == '\t')
        val++;
    size_t n = strlen(val);
    while (n && (val[n - 1] == ' ' || val[n - 1] == '\t'))
        n--;
    /* "\ " keeps the whitespace after the backslash: a test line's
     * indentation can be what its rule matches (py-spy's four spaces). In
     * an expression "\ " is a space anyway. */
    if (val[0] == '\\' && (val[1] == ' ' || val[1] == '\t')) {
        val++;
        n--;
    }
    return cp_buf_append(&p->val, val, n);
}

static int parse_line(cp_catalog *c, const char *file, int line, char *text,
                      cp_rule *r, bool *in_rule, pending *p)
{
    if (text[0] == '#' || text[strspn(text, " \t")] == '\0')
        return 0;
    if ((text[0] == ' ' || text[0] == '\t') && p->key[0]) {
        /* continuation of the previous value */
        char *t = cp_trim(text);
        if (p->val.len)
            cp_buf_append(&p->val, " ", 1);
        return cp_buf_puts(&p->val, t);
    }
    if (flush_pending(c, r, file, p) != 0)
        return -1;
    if (text[0] == '[') {
        if (*in_rule && commit_rule(c, r) != 0)
            return -1;
        *in_rule = true;
        return start_rule(c, r, file, line, cp_trim(text));
    }
    if (!*in_rule)
        return fail(c, file, line, "key outside of a [rule ...] block");
    return parse_kv(c, file, line, text, p);
}

int cp_catalog_load_file(cp_catalog *c, const char *path)
{
    int rc = -1;
    cp_rule r;
    memset(&r, 0, sizeof r);
    bool in_rule = false;
    pending p = {0};
    cp_buf_init(&p.val, MAX_RULE_LINE);
    char *text = NULL;
    size_t text_cap = 0;
    c->error[0] = '\0';

    FILE *f = fopen(path, "r");
    if (!f) {
        fail(c, path, 0, "cannot open rule file: %s", strerror(errno));
        goto done;
    }
    int line = 0;
    ssize_t n;
    while ((n = getline(&text, &text_cap, f)) >= 0) {
        line++;
        while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
            text[--n] = '\0';
        if (parse_line(c, path, line, text, &r, &in_rule, &p) != 0)
            goto done;
    }
    if (flush_pending(c, &r, path, &p) != 0)
        goto done;
    if (in_rule && commit_rule(c, &r) != 0)
        goto done;
    rc = 0;
done:
    if (f)
        fclose(f);
    free(text);
    cp_buf_free(&p.val);
    rule_free(&r);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cp_catalog_load_dir(cp_catalog *c, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(c->error, sizeof c->error, "%s: cannot open rules folder: %s", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 6 && strcmp(e->d_name + len - 6, ".rules") == 0 && push(&names, &n, e->d_name) != 0) {
            rc = -1;
            break;
        }
    }
    closedir(d);
    if (n > 1)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (cp_catalog_load_file(c, path) != 0)
            rc = -1;
    }
    free_list(names, n);
    return rc == 0 ? (int)n : -1;
}
