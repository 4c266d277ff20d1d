/* summary.c - serialize an incident to JSON and merge one back (summary.h). */
#include "summary.h"
#include "util/buf.h"

#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/strutil.h"

/* ---- writing -------------------------------------------------------------- */

static json_t *time_json(const cp_time *t)
{
    return t->kind == CP_TS_NONE ? json_null() : json_pack("[Ii]", (json_int_t)t->ms, (int)t->kind);
}

/* Log text need not be UTF-8; JSON strings must be: bytes that are not
 * are written as U+FFFD, as the JSON report does. */
static json_t *jstr(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    size_t n = strlen(s);
    char *b = malloc(n * 3 + 1), *o = b;
    if (!b)
        return json_string("");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x80) {
            *o++ = (char)*p;
        } else {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
        }
    }
    *o = '\0';
    j = json_string(b);
    free(b);
    return j ? j : json_string("");
}

static json_t *str_or_null(const char *s)
{
    return s ? jstr(s) : json_null();
}

static json_t *origin_json(const cp_origin *o)
{
    return json_pack("{s:i,s:i,s:i,s:i,s:i,s:o,s:i,s:o}", "rank", o->rank, "local_rank", o->local_rank,
                     "pid", o->pid, "task", o->task, "cuda_dev", o->cuda_dev, "time", time_json(&o->time),
                     "level", (int)o->level, "host", jstr(o->host));
}

static json_t *rule_json(const cp_incident *inc, uint32_t rule)
{
    return rule == UINT32_MAX || rule >= inc->cat->n_rules ? json_null() : json_string(inc->cat->rules[rule].id);
}

/* A logged loss: a number, "nan" or "inf" (JSON has no such numbers), or
 * null when the line gave none. */
static json_t *loss_json(cp_loss l)
{
    if (!l.read)
        return json_null();
    if (isnan(l.value))
        return json_string("nan");
    if (isinf(l.value))
        return json_string(l.value > 0 ? "inf" : "-inf");
    return json_real(l.value);
}

static cp_loss loss_of(const json_t *v)
{
    if (json_is_number(v))
        return (cp_loss){(float)json_number_value(v), true};
    const char *s = json_string_value(v);
    return s ? cp_loss_parse(s, strlen(s)) : (cp_loss){0, false};
}

static json_t *writer_json(const cp_incident *inc, const cp_writer *w)
{
    char key_host[24];
    snprintf(key_host, sizeof key_host, "%016llx", (unsigned long long)w->key_host);
    json_t *o = json_pack("{s:o,s:i,s:o,s:o,s:I,s:o,s:i,s:i,s:o,s:i,s:I,s:o,s:I,s:I,s:s#,s:i,s:s}",
                          "id", origin_json(&w->id), "stream", w->stream, "first_time",
                          time_json(&w->first_time), "last_time", time_json(&w->last_time), "last_step",
                          (json_int_t)w->last_step, "last_step_time", time_json(&w->last_step_time), "phase",
                          (int)w->phase, "phase_state", (int)w->phase_state, "phase_time",
                          time_json(&w->phase_time), "phase_stream", w->phase_stream, "phase_line",
                          (json_int_t)w->phase_line, "phase_text", str_or_null(w->phase_text), "n_hits",
                          (json_int_t)w->n_hits, "n_events", (json_int_t)w->n_events, "key_kind",
                          &w->key_kind, 1, "key_value", w->key_value, "key_host", key_host);
    if (o) {
        json_object_set_new(o, "phase_rule", rule_json(inc, w->phase_rule));
        json_object_set_new(o, "last_loss", loss_json(w->last_loss));
    }
    return o;
}

static json_t *event_json(const cp_incident *inc, const cp_event *e)
{
    json_t *caps = json_object(), *frames = json_array(), *ev = json_array();
    const char *value;
    for (const char *k = cp_capset_next(&e->caps, NULL, &value); k; k = cp_capset_next(&e->caps, k, &value))
        json_object_set_new(caps, k, jstr(value));
    for (size_t i = 0; i < e->n_frames; i++) {
        const cp_stackframe *f = &e->frames[i];
        json_array_append_new(frames, json_pack("{s:o,s:o,s:o,s:I,s:o,s:b,s:b}", "file", str_or_null(f->file), "func",
                                                str_or_null(f->func), "text", str_or_null(f->text), "line",
                                                (json_int_t)f->line, "phase_rule", rule_json(inc, f->phase_rule),
                                                "library", f->library, "unowned", f->unowned));
    }
    for (int i = 0; i < e->n_ev; i++)
        json_array_append_new(ev, json_pack("[iIo]", e->ev[i].stream, (json_int_t)e->ev[i].line,
                                            str_or_null(e->ev[i].text)));
    return json_pack("{s:o,s:i,s:i,s:I,s:o,s:o,s:o,s:o,s:o,s:b,s:i,s:b,s:b,s:b,s:I}", "origin",
                     origin_json(&e->origin), "writer", e->writer, "stream", e->stream, "line",
                     (json_int_t)e->line, "rule", rule_json(inc, e->rule), "text", str_or_null(e->text),
                     "captures", caps, "frames", frames, "evidence", ev, "in_table", e->in_table, "rank_via",
                     (int)e->rank_via, "time_estimated", e->time_estimated, "has_traceback", e->has_traceback,
                     "ends_input", e->ends_input, "repeats", (json_int_t)e->repeats);
}

static json_t *table_json(const cp_table_entry *t)
{
    return json_pack("{s:i,s:i,s:i,s:i,s:i,s:o,s:o,s:b,s:i,s:I}", "rank", t->rank, "local_rank", t->local_rank,
                     "pid", t->pid, "exitcode", t->exitcode, "signal", t->signal, "host", jstr(t->host), "time",
                     time_json(&t->time), "root_cause", t->root_cause, "stream", t->stream, "line",
                     (json_int_t)t->line);
}

static json_t *ident_json(const cp_ident *x)
{
    return json_pack("{s:i,s:i,s:i,s:i,s:i,s:o,s:o}", "rank", x->rank, "nranks", x->nranks, "local_rank",
                     x->local_rank, "pid", x->pid, "cuda_dev", x->cuda_dev, "host", jstr(x->host), "busid", jstr(x->busid));
}

int cp_summary_write(const cp_incident *inc, FILE *out)
{
    json_t *root = json_object(), *a;
    json_object_set_new(root, "schema", json_string(CP_SUMMARY_SCHEMA));
    json_object_set_new(root, "bytes", json_integer((json_int_t)inc->bytes));
    json_object_set_new(root, "lines", json_integer((json_int_t)inc->lines));
    json_object_set_new(root, "hit_lines", json_integer((json_int_t)inc->hit_lines));
    json_object_set_new(root, "world_size", json_integer(inc->world_size));
    json_object_set_new(root, "dropped_events", json_integer((json_int_t)inc->dropped_events));
    json_object_set_new(root, "streams", a = json_array());
    for (size_t i = 0; i < inc->n_streams; i++)
        json_array_append_new(a, jstr(inc->streams[i]));
    json_object_set_new(root, "warnings", a = json_array());
    for (size_t i = 0; i < inc->n_warnings; i++)
        json_array_append_new(a, jstr(inc->warnings[i]));
    json_object_set_new(root, "writers", a = json_array());
    for (size_t i = 0; i < inc->n_writers; i++)
        json_array_append_new(a, writer_json(inc, &inc->writers[i]));
    json_object_set_new(root, "events", a = json_array());
    for (size_t i = 0; i < inc->n_events; i++)
        json_array_append_new(a, event_json(inc, &inc->events[i]));
    json_object_set_new(root, "table", a = json_array());
    for (size_t i = 0; i < inc->n_table; i++)
        json_array_append_new(a, table_json(&inc->table[i]));
    json_object_set_new(root, "idents", a = json_array());
    for (size_t i = 0; i < inc->n_idents; i++)
        json_array_append_new(a, ident_json(&inc->idents[i]));
    int rc = json_dumpf(root, out, JSON_PRESERVE_ORDER | JSON_COMPACT) == 0 && fputc('\n', out) != EOF ? 0 : -1;
    json_decref(root);
    return rc;
}

/* ---- reading ---------------------------------------------------------------- */

bool cp_summary_detect(const char *path)
{
    static const char want[] = "{\"schema\":\"culprit.summary/";
    /* only regular files: opening a FIFO or a device could block */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return false;
    FILE *f = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "rb") : NULL;
    if (!f) {
        close(fd);
        return false;
    }
    char got[sizeof want];
    size_t n = 0;
    int c;
    while (n < sizeof want - 1 && (c = fgetc(f)) != EOF)
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            got[n++] = (char)c;
    fclose(f);
    return n == sizeof want - 1 && memcmp(got, want, n) == 0;
}

static int get_int(json_t *o, const char *k, int dflt)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (int)json_integer_value(v) : dflt;
}

static int64_t get_i64(json_t *o, const char *k, int64_t dflt)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

static const char *get_str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static char *dup_or_null(const char *s)
{
    return s ? cp_strdup(s) : NULL;
}

static cp_time time_of(json_t *v)
{
    cp_time t = {0, CP_TS_NONE};
    if (json_is_array(v) && json_array_size(v) == 2) {
        t.ms = (int64_t)json_integer_value(json_array_get(v, 0));
        t.kind = (cp_ts_kind)json_integer_value(json_array_get(v, 1));
    }
    return t;
}

static void origin_of(json_t *o, cp_origin *out)
{
    cp_origin_init(out);
    out->rank = get_int(o, "rank", -1);
    out->local_rank = get_int(o, "local_rank", -1);
    out->pid = get_int(o, "pid", -1);
    out->task = get_int(o, "task", -1);
    out->cuda_dev = get_int(o, "cuda_dev", -1);
    out->time = time_of(json_object_get(o, "time"));
    out->level = (char)get_int(o, "level", 0);
    snprintf(out->host, sizeof out->host, "%s", get_str(o, "host") ? get_str(o, "host") : "");
}

static uint32_t rule_of(const cp_incident *inc, json_t *v)
{
    const char *id = json_string_value(v);
    int r = id ? cp_catalog_find(inc->cat, id) : -1;
    return r >= 0 ? (uint32_t)r : UINT32_MAX;
}

typedef struct merge_ctx {
    cp_incident *inc;
    int stream_base;
    int *writer_map;
    size_t n_writers;
} merge_ctx;

/* A stream index of the summary as one of the incident's, or -1 when it
 * names no stream of the summary (a damaged or hand-made file). */
static int stream_of(const merge_ctx *m, json_t *v)
{
    json_int_t i = json_integer_value(v);
    return json_is_integer(v) && i >= 0 && i < (json_int_t)m->inc->n_streams - m->stream_base
               ? (int)i + m->stream_base
               : -1;
}

static int merge_writers(merge_ctx *m, json_t *arr)
{
    m->n_writers = json_array_size(arr);
    if (m->n_writers && !(m->writer_map = calloc(m->n_writers, sizeof *m->writer_map)))
        return -1;
    for (size_t i = 0; i < m->n_writers; i++) {
        json_t *o = json_array_get(arr, i);
        cp_writer w;
        memset(&w, 0, sizeof w);
        origin_of(json_object_get(o, "id"), &w.id);
        w.stream = stream_of(m, json_object_get(o, "stream"));
        w.first_time = time_of(json_object_get(o, "first_time"));
        w.last_time = time_of(json_object_get(o, "last_time"));
        w.last_step = get_i64(o, "last_step", -1);
        w.last_step_time = time_of(json_object_get(o, "last_step_time"));
        w.last_loss = loss_of(json_object_get(o, "last_loss"));
        w.phase = (cp_phase)get_int(o, "phase", 0);
        w.phase_state = (cp_phase_state)get_int(o, "phase_state", 0);
        w.phase_time = time_of(json_object_get(o, "phase_time"));
        w.phase_stream = stream_of(m, json_object_get(o, "phase_stream"));
        w.phase_line = (uint64_t)get_i64(o, "phase_line", 0);
        w.phase_text = (char *)get_str(o, "phase_text"); /* copied by adopt */
        w.phase_rule = rule_of(m->inc, json_object_get(o, "phase_rule"));
        w.n_hits = (uint32_t)get_i64(o, "n_hits", 0);
        w.n_events = (uint32_t)get_i64(o, "n_events", 0);
        const char *kk = get_str(o, "key_kind");
        w.key_kind = kk && *kk ? *kk : 's';
        w.key_value = get_int(o, "key_value", 0);
        if (w.key_kind == 's')
            w.key_value = stream_of(m, json_object_get(o, "key_value"));
        const char *kh = get_str(o, "key_host");
        w.key_host = kh ? strtoull(kh, NULL, 16) : 0;
        w.rank = -1;
        if ((m->writer_map[i] = cp_writer_adopt(m->inc, &w)) < 0)
            return -1;
    }
    return 0;
}

static int map_writer(const merge_ctx *m, int w)
{
    return w >= 0 && (size_t)w < m->n_writers ? m->writer_map[w] : -1;
}

/* Read through the matcher's fixed slots, so a summary's captures are cut
 * to the same count and lengths as a scan's own. */
static void captures_of(json_t *o, cp_capset *out)
{
    cp_captures caps;
    caps.n = 0;
    const char *k;
    json_t *v;
    json_object_foreach(o, k, v) {
        if (caps.n >= CP_CAPTURE_MAX)
            break;
        snprintf(caps.v[caps.n].name, sizeof caps.v[0].name, "%s", k);
        snprintf(caps.v[caps.n].value, sizeof caps.v[0].value, "%s", json_string_value(v) ? json_string_value(v) : "");
        caps.n++;
    }
    cp_capset_pack(out, &caps);
}

static bool event_of(merge_ctx *m, json_t *o, cp_event *e)
{
    memset(e, 0, sizeof *e);
    if ((e->stream = stream_of(m, json_object_get(o, "stream"))) < 0)
        return false;
    json_t *rule = json_object_get(o, "rule");
    e->rule = json_is_null(rule) ? CP_RULE_STACK : rule_of(m->inc, rule);
    if (!json_is_null(rule) && e->rule == UINT32_MAX)
        return false; /* a rule this catalog does not know */
    origin_of(json_object_get(o, "origin"), &e->origin);
    e->writer = map_writer(m, get_int(o, "writer", -1));
    e->line = (uint64_t)get_i64(o, "line", 0);
    e->text = dup_or_null(get_str(o, "text"));
    captures_of(json_object_get(o, "captures"), &e->caps);
    json_t *frames = json_object_get(o, "frames");
    size_t nf = json_array_size(frames);
    if (nf > CP_FRAMES_MAX)
        nf = CP_FRAMES_MAX;
    if (nf && (e->frames = calloc(nf, sizeof *e->frames))) {
        for (size_t i = 0; i < nf; i++) {
            json_t *f = json_array_get(frames, i);
            e->frames[i].file = dup_or_null(get_str(f, "file"));
            e->frames[i].func = dup_or_null(get_str(f, "func"));
            e->frames[i].text = dup_or_null(get_str(f, "text"));
            e->frames[i].line = (uint64_t)get_i64(f, "line", 0);
            e->frames[i].phase_rule = rule_of(m->inc, json_object_get(f, "phase_rule"));
            e->frames[i].library = json_is_true(json_object_get(f, "library"));
            e->frames[i].unowned = json_is_true(json_object_get(f, "unowned"));
        }
        e->n_frames = nf;
    }
    json_t *ev = json_object_get(o, "evidence");
    size_t ne = json_array_size(ev) < CP_EVIDENCE_MAX ? json_array_size(ev) : CP_EVIDENCE_MAX;
    if (ne && !(e->ev = calloc(ne, sizeof *e->ev)))
        ne = 0;
    for (size_t i = 0; i < json_array_size(ev) && (size_t)e->n_ev < ne; i++) {
        json_t *x = json_array_get(ev, i);
        const char *t = json_string_value(json_array_get(x, 2));
        int es = stream_of(m, json_array_get(x, 0));
        if (es < 0)
            continue;
        e->ev[e->n_ev].stream = es;
        e->ev[e->n_ev].line = (uint64_t)json_integer_value(json_array_get(x, 1));
        e->ev[e->n_ev].text = dup_or_null(t);
        e->n_ev++;
    }
    e->in_table = json_is_true(json_object_get(o, "in_table"));
    e->rank_via = (cp_rank_via)get_int(o, "rank_via", 0);
    e->time_estimated = json_is_true(json_object_get(o, "time_estimated"));
    e->has_traceback = json_is_true(json_object_get(o, "has_traceback"));
    e->ends_input = json_is_true(json_object_get(o, "ends_input"));
    e->repeats = (uint32_t)get_i64(o, "repeats", 0);
    return true;
}

static int merge_events(merge_ctx *m, json_t *arr)
{
    cp_incident *inc = m->inc;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        if (inc->n_events >= CP_EVENTS_MAX) {
            inc->dropped_events++;
            continue;
        }
        cp_event *grown = cp_grow(inc->events, &inc->cap_events, inc->n_events, sizeof *grown, 256);
        if (!grown)
            return -1;
        inc->events = grown;
        if (event_of(m, json_array_get(arr, i), &inc->events[inc->n_events]))
            inc->n_events++;
    }
    return 0;
}

static int merge_facts(merge_ctx *m, json_t *root)
{
    json_t *arr = json_object_get(root, "table"), *o;
    size_t i;
    json_array_foreach(arr, i, o) {
        cp_table_entry t;
        memset(&t, 0, sizeof t);
        t.rank = get_int(o, "rank", -1);
        t.local_rank = get_int(o, "local_rank", -1);
        t.pid = get_int(o, "pid", -1);
        t.exitcode = get_int(o, "exitcode", -1);
        t.signal = get_int(o, "signal", -1);
        snprintf(t.host, sizeof t.host, "%s", get_str(o, "host") ? get_str(o, "host") : "");
        t.time = time_of(json_object_get(o, "time"));
        t.root_cause = json_is_true(json_object_get(o, "root_cause"));
        if ((t.stream = stream_of(m, json_object_get(o, "stream"))) < 0)
            continue;
        t.line = (uint64_t)get_i64(o, "line", 0);
        if (cp_table_add(m->inc, &t) != 0)
            return -1;
    }
    json_array_foreach(json_object_get(root, "idents"), i, o) {
        cp_ident x;
        memset(&x, 0, sizeof x);
        x.rank = get_int(o, "rank", -1);
        x.nranks = get_int(o, "nranks", -1);
        x.local_rank = get_int(o, "local_rank", -1);
        x.pid = get_int(o, "pid", -1);
        x.cuda_dev = get_int(o, "cuda_dev", -1);
        snprintf(x.host, sizeof x.host, "%s", get_str(o, "host") ? get_str(o, "host") : "");
        snprintf(x.busid, sizeof x.busid, "%s", get_str(o, "busid") ? get_str(o, "busid") : "");
        cp_ident_add(m->inc, &x);
    }
    return 0;
}

/* Appends the strings of `arr` to a list that cp_grow grows elsewhere:
 * *cap follows the allocation. */
static int append_strings(char ***list, size_t *n, size_t *cap, json_t *arr)
{
    size_t k = json_array_size(arr);
    if (!k)
        return 0;
    if (*n + k > *cap) {
        char **p = realloc(*list, (*n + k) * sizeof *p);
        if (!p)
            return -1;
        *list = p;
        *cap = *n + k;
    }
    char **p = *list;
    for (size_t i = 0; i < k; i++) {
        const char *s = json_string_value(json_array_get(arr, i));
        if (!(p[*n] = cp_strdup(s ? s : "")))
            return -1;
        (*n)++;
    }
    return 0;
}

int cp_summary_merge(cp_incident *inc, const char *path, char *error, size_t error_len)
{
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    int rc = -1;
    merge_ctx m = {inc, (int)inc->n_streams, NULL, 0};
    const char *schema = root ? get_str(root, "schema") : NULL;
    if (!schema || strncmp(schema, "culprit.summary/", 16) != 0) {
        snprintf(error, error_len, "%s: not a culprit summary (%s)", path, root ? "no schema" : jerr.text);
        goto done;
    }
    if (strcmp(schema, CP_SUMMARY_SCHEMA) != 0) {
        snprintf(error, error_len, "%s: summary schema '%s' is not %s", path, schema, CP_SUMMARY_SCHEMA);
        goto done;
    }
    if (append_strings(&inc->streams, &inc->n_streams, &inc->cap_streams, json_object_get(root, "streams")) != 0 ||
        append_strings(&inc->warnings, &inc->n_warnings, &inc->cap_warnings, json_object_get(root, "warnings")) != 0 ||
        merge_writers(&m, json_object_get(root, "writers")) != 0 ||
        merge_events(&m, json_object_get(root, "events")) != 0 || merge_facts(&m, root) != 0) {
        snprintf(error, error_len, "%s: out of memory", path);
        goto done;
    }
    inc->bytes += (uint64_t)get_i64(root, "bytes", 0);
    inc->lines += (uint64_t)get_i64(root, "lines", 0);
    inc->hit_lines += (uint64_t)get_i64(root, "hit_lines", 0);
    inc->dropped_events += (uint64_t)get_i64(root, "dropped_events", 0);
    int ws = get_int(root, "world_size", 0);
    if (ws > inc->world_size)
        inc->world_size = ws;
    rc = 0;
done:
    free(m.writer_map);
    json_decref(root);
    return rc;
}
