/* test_render.c - unit tests of the three reports (text, JSON, Markdown)
 * and the rank grouping they share. Diagnoses are built by hand, rendered
 * into memory, and read back (JSON with jansson). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnosis.h"
#include "render.h"

typedef int (*render_fn)(const cp_diagnosis *, FILE *, const cp_render_opts *);

/* ---- helpers ----------------------------------------------------------- */

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    assert_non_null(p);
    return p;
}

static char *render(render_fn fn, const cp_diagnosis *d, const cp_render_opts *opts)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    assert_int_equal(fn(d, f, opts), 0);
    assert_int_equal(fclose(f), 0);
    assert_non_null(out);
    assert_int_equal(strlen(out), len);
    return out;
}

static json_t *render_json(const cp_diagnosis *d)
{
    char *out = render(cp_render_json, d, NULL);
    json_error_t err;
    json_t *root = json_loads(out, 0, &err);
    if (!root)
        fail_msg("JSON does not parse: %s (line %d)\n%s", err.text, err.line, out);
    free(out);
    assert_true(json_is_object(root));
    return root;
}

static void add_evidence(cp_diagnosis *d, const char *path, uint64_t line, int rank, const char *text)
{
    cp_evidence *p = realloc(d->evidence, (d->n_evidence + 1) * sizeof *p);
    assert_non_null(p);
    d->evidence = p;
    p[d->n_evidence].path = xstrdup(path);
    p[d->n_evidence].line = line;
    p[d->n_evidence].rank = rank;
    p[d->n_evidence].text = xstrdup(text);
    d->n_evidence++;
}

static void add_string(char ***v, size_t *n, const char *s)
{
    char **p = realloc(*v, (*n + 1) * sizeof *p);
    assert_non_null(p);
    *v = p;
    p[(*n)++] = xstrdup(s);
}

/* Ranks 0..n-1: `root` is the root rank, the others are in `state`. */
static void add_ranks(cp_diagnosis *d, int n, int root, cp_rank_state state, const char *error)
{
    d->ranks = calloc((size_t)n, sizeof *d->ranks);
    assert_non_null(d->ranks);
    d->n_ranks = (size_t)n;
    for (int i = 0; i < n; i++) {
        cp_rank_row *r = &d->ranks[i];
        r->rank = i;
        snprintf(r->host, sizeof r->host, "node%03d", i / 8);
        r->state = i == root ? CP_RS_ROOT : state;
        r->first_error = xstrdup(i == root ? "CUDA out of memory" : error);
        r->last_time = i % 2 ? xstrdup("2024-11-02 19:11:06.100") : NULL;
        r->last_step = i % 3 ? 259 : -1;
    }
}

/* A CUDA OOM on rank 17 of node03, with evidence, notes and a warning. */
static void make_failed(cp_diagnosis *d)
{
    memset(d, 0, sizeof *d);
    d->failed = true;
    d->hang = false;
    d->first_rank = 17;
    snprintf(d->host, sizeof d->host, "node03");
    d->kind = CP_KIND_CUDA_OOM;
    d->owner = CP_OWNER_CONFIG;
    d->phase = CP_PHASE_FORWARD;
    d->rule_id = xstrdup("cuda.oom");
    d->title = xstrdup("CUDA out of memory");
    d->means = xstrdup("The GPU's memory was exhausted by this rank.");
    d->action = xstrdup("Lower the micro-batch size for one reproduction.");
    d->signature = xstrdup("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.35 GiB");
    d->first_time = xstrdup("2024-11-02 19:01:06.000");
    d->confidence = 90;
    d->confidence_reason = xstrdup("a specific signature with timestamps");
    add_string(&d->notes, &d->n_notes, "Rank 17 raised first; the others timed out after it.");
    add_evidence(d, "logs/rank17.log", 123, 17, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.35 GiB");
    add_evidence(d, "logs/launcher.log", 9, -1, "say \"hi\"\tand \\ back");
    add_string(&d->warnings, &d->n_warnings, "logs/core.1234: binary file, skipped");
    d->world_size = 32;
    d->n_files = 3;
    d->bytes = 988118;
    d->lines = 9876;
    d->n_events = 40;
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* ---- JSON -------------------------------------------------------------- */

static void check_verdict_keys(json_t *v)
{
    static const char *const keys[] = {"first_rank", "kind", "owner", "phase", "hang"};
    assert_true(json_is_object(v));
    assert_int_equal(json_object_size(v), 5);
    for (size_t i = 0; i < 5; i++)
        if (!json_object_get(v, keys[i]))
            fail_msg("verdict has no '%s'", keys[i]);
    assert_true(json_is_integer(json_object_get(v, "first_rank")) || json_is_null(json_object_get(v, "first_rank")));
    assert_true(json_is_string(json_object_get(v, "kind")));
    assert_true(json_is_string(json_object_get(v, "owner")));
    assert_true(json_is_string(json_object_get(v, "phase")));
    assert_true(json_is_boolean(json_object_get(v, "hang")));
}

static void test_json_failed(void **state)
{
    (void)state;
    cp_diagnosis d;
    make_failed(&d);
    add_ranks(&d, 32, 17, CP_RS_CASCADE, "NCCL watchdog timeout");
    json_t *root = render_json(&d);

    assert_string_equal(json_string_value(json_object_get(root, "schema")), "culprit.diagnosis/1");
    assert_true(json_is_true(json_object_get(root, "failed")));

    json_t *v = json_object_get(root, "verdict");
    check_verdict_keys(v);
    assert_int_equal(json_integer_value(json_object_get(v, "first_rank")), 17);
    assert_string_equal(json_string_value(json_object_get(v, "kind")), "cuda_oom");
    assert_string_equal(json_string_value(json_object_get(v, "owner")), "config");
    assert_string_equal(json_string_value(json_object_get(v, "phase")), "forward");
    assert_true(json_is_false(json_object_get(v, "hang")));

    json_t *dg = json_object_get(root, "diagnosis");
    assert_true(json_is_object(dg));
    assert_string_equal(json_string_value(json_object_get(dg, "rule")), "cuda.oom");
    assert_string_equal(json_string_value(json_object_get(dg, "host")), "node03");
    assert_string_equal(json_string_value(json_object_get(dg, "action")), d.action);
    assert_int_equal(json_integer_value(json_object_get(dg, "confidence")), 90);

    json_t *ev = json_object_get(root, "evidence");
    assert_true(json_is_array(ev));
    assert_int_equal(json_array_size(ev), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *e = json_array_get(ev, i);
        assert_true(json_is_object(e));
        assert_true(json_is_string(json_object_get(e, "path")));
        assert_true(json_is_integer(json_object_get(e, "line")));
        assert_non_null(json_object_get(e, "rank"));
        assert_true(json_is_string(json_object_get(e, "text")));
        assert_string_equal(json_string_value(json_object_get(e, "path")), d.evidence[i].path);
        assert_int_equal(json_integer_value(json_object_get(e, "line")), d.evidence[i].line);
        /* quotes, tabs and backslashes survive the round trip */
        assert_string_equal(json_string_value(json_object_get(e, "text")), d.evidence[i].text);
    }
    assert_int_equal(json_integer_value(json_object_get(json_array_get(ev, 0), "rank")), 17);
    assert_true(json_is_null(json_object_get(json_array_get(ev, 1), "rank")));

    json_t *ranks = json_object_get(root, "ranks");
    assert_true(json_is_array(ranks));
    assert_int_equal(json_array_size(ranks), 32);
    for (size_t i = 0; i < 32; i++) {
        json_t *r = json_array_get(ranks, i);
        assert_int_equal(json_integer_value(json_object_get(r, "rank")), (json_int_t)i);
        assert_string_equal(json_string_value(json_object_get(r, "state")), i == 17 ? "root" : "cascade");
        assert_string_equal(json_string_value(json_object_get(r, "host")), d.ranks[i].host);
        assert_true(i % 2 ? json_is_string(json_object_get(r, "last_time")) : json_is_null(json_object_get(r, "last_time")));
        assert_true(i % 3 ? json_integer_value(json_object_get(r, "last_step")) == 259
                          : json_is_null(json_object_get(r, "last_step")));
    }

    assert_int_equal(json_array_size(json_object_get(root, "notes")), 1);
    assert_int_equal(json_array_size(json_object_get(root, "warnings")), 1);
    json_t *in = json_object_get(root, "inputs");
    assert_int_equal(json_integer_value(json_object_get(in, "files")), 3);
    assert_int_equal(json_integer_value(json_object_get(in, "lines")), 9876);
    assert_int_equal(json_integer_value(json_object_get(in, "world_size")), 32);

    json_decref(root);
    cp_diagnosis_free(&d);
}

static void test_json_unknown_rank_and_hang(void **state)
{
    (void)state;
    cp_diagnosis d;
    make_failed(&d);
    d.first_rank = -1;
    d.hang = true;
    d.kind = CP_KIND_CHECKPOINT_HANG;
    d.phase = CP_PHASE_CHECKPOINT_SAVE;
    d.owner = CP_OWNER_INFRASTRUCTURE;
    free(d.first_time);
    d.first_time = NULL;
    json_t *root = render_json(&d);
    json_t *v = json_object_get(root, "verdict");

    check_verdict_keys(v);
    assert_true(json_is_null(json_object_get(v, "first_rank")));
    assert_true(json_is_true(json_object_get(v, "hang")));
    assert_string_equal(json_string_value(json_object_get(v, "kind")), "checkpoint_hang");
    assert_string_equal(json_string_value(json_object_get(v, "phase")), "checkpoint_save");
    assert_string_equal(json_string_value(json_object_get(v, "owner")), "infrastructure");
    /* unknown values are null, never missing */
    json_t *dg = json_object_get(root, "diagnosis");
    assert_non_null(json_object_get(dg, "first_time"));
    assert_true(json_is_null(json_object_get(dg, "first_time")));
    assert_true(json_is_array(json_object_get(root, "ranks")));
    assert_int_equal(json_array_size(json_object_get(root, "ranks")), 0);
    json_decref(root);
    cp_diagnosis_free(&d);
}

static void check_not_failed_json(const cp_diagnosis *d)
{
    json_t *root = render_json(d);
    json_t *v = json_object_get(root, "verdict");

    assert_true(json_is_false(json_object_get(root, "failed")));
    check_verdict_keys(v);
    assert_true(json_is_null(json_object_get(v, "first_rank")));
    assert_string_equal(json_string_value(json_object_get(v, "kind")), "unknown");
    assert_string_equal(json_string_value(json_object_get(v, "owner")), "unknown");
    assert_string_equal(json_string_value(json_object_get(v, "phase")), "unknown");
    assert_true(json_is_false(json_object_get(v, "hang")));
    assert_int_equal(json_array_size(json_object_get(root, "evidence")), 0);
    assert_true(json_is_null(json_object_get(json_object_get(root, "inputs"), "world_size")));
    json_decref(root);
}

static void test_json_not_failed(void **state)
{
    (void)state;
    cp_diagnosis d;

    /* as the analysis leaves it */
    memset(&d, 0, sizeof d);
    d.first_rank = -1;
    d.kind = CP_KIND_NONE;
    d.owner = CP_OWNER_UNKNOWN;
    d.phase = CP_PHASE_UNKNOWN;
    d.n_files = 2;
    d.lines = 100;
    check_not_failed_json(&d);

    /* schema: without a failure the verdict is unknown whatever else the
     * struct holds (here: a zeroed one, whose first_rank is 0, and a stray
     * hang flag) */
    memset(&d, 0, sizeof d);
    d.kind = CP_KIND_CUDA_OOM;
    d.owner = CP_OWNER_CONFIG;
    d.phase = CP_PHASE_FORWARD;
    d.hang = true;
    check_not_failed_json(&d);
    cp_diagnosis_free(&d);
}

/* ---- text -------------------------------------------------------------- */

static void test_text_failed(void **state)
{
    (void)state;
    cp_diagnosis d;
    make_failed(&d);
    add_ranks(&d, 32, 17, CP_RS_CASCADE, "NCCL watchdog timeout");
    cp_render_opts opts = {.color = false};
    char *out = render(cp_render_text, &d, &opts);

    if (strncmp(out, "culprit: rank 17 (node03) failed first", 38) != 0)
        fail_msg("headline:\n%s", out);
    assert_non_null(strstr(out, "CUDA out of memory [cuda_oom]"));
    assert_non_null(strstr(out, "phase forward, owner config, no hang, confidence 90%"));
    assert_non_null(strstr(out, d.action));
    assert_non_null(strstr(out, d.means));
    assert_non_null(strstr(out, "logs/rank17.log:123 [rank 17]"));
    assert_non_null(strstr(out, "logs/launcher.log:9\n"));
    assert_non_null(strstr(out, d.evidence[0].text));
    assert_non_null(strstr(out, "first failure at 2024-11-02 19:01:06.000"));
    assert_non_null(strstr(out, "warning: logs/core.1234: binary file, skipped"));
    assert_null(strchr(out, '\033'));
    free(out);
    cp_diagnosis_free(&d);
}

static void test_text_hang_and_unknown_rank(void **state)
{
    (void)state;
    cp_diagnosis d;
    make_failed(&d);
    d.hang = true;
    d.first_rank = 5;
    snprintf(d.host, sizeof d.host, "gpu-a");
    char *out = render(cp_render_text, &d, NULL);
    if (strncmp(out, "culprit: rank 5 (gpu-a) stalled first", 37) != 0)
        fail_msg("headline:\n%s", out);
    assert_null(strstr(out, "failed first"));
    assert_non_null(strstr(out, ", hang, "));
    free(out);

    d.hang = false;
    d.first_rank = -1;
    d.host[0] = '\0';
    out = render(cp_render_text, &d, NULL);
    if (strncmp(out, "culprit: an unknown rank failed first", 37) != 0)
        fail_msg("headline:\n%s", out);
    free(out);
    cp_diagnosis_free(&d);
}

static void test_text_not_failed(void **state)
{
    (void)state;
    cp_diagnosis d;
    memset(&d, 0, sizeof d);
    d.first_rank = -1;
    d.n_files = 1;
    d.lines = 42;
    char *out = render(cp_render_text, &d, NULL);
    if (strncmp(out, "culprit: no failure found", 25) != 0)
        fail_msg("report:\n%s", out);
    assert_null(strstr(out, "failed first"));
    assert_non_null(strstr(out, "Read 1 file, 42 lines."));
    assert_null(strchr(out, '\033'));
    free(out);

    cp_render_opts color = {.color = true};
    out = render(cp_render_text, &d, &color);
    assert_non_null(strchr(out, '\033'));
    assert_non_null(strstr(out, "no failure found"));
    free(out);
    cp_diagnosis_free(&d);
}

static void test_text_color(void **state)
{
    (void)state;
    cp_diagnosis d;
    make_failed(&d);
    cp_render_opts plain = {.color = false}, color = {.color = true};
    char *a = render(cp_render_text, &d, &plain);
    char *b = render(cp_render_text, &d, &color);

    assert_null(strchr(a, '\033'));
    assert_non_null(strstr(b, "\033["));
    /* the same words, only styled: every escape ends with a reset somewhere */
    assert_non_null(strstr(b, "\033[0m"));
    assert_non_null(strstr(b, "failed first"));
    assert_non_null(strstr(b, d.action));
    free(a);
    free(b);
    cp_diagnosis_free(&d);
}

static void test_text_max_evidence(void **state)
{
    (void)state;
    cp_diagnosis d;
    make_failed(&d);
    for (int i = 0; i < 8; i++)
        add_evidence(&d, "logs/more.log", (uint64_t)(100 + i), i, "more evidence");
    /* 10 lines of evidence, 3 shown */
    cp_render_opts opts = {.max_evidence = 3};
    char *out = render(cp_render_text, &d, &opts);
    assert_int_equal(count_of(out, "logs/more.log:"), 1);
    assert_non_null(strstr(out, "logs/more.log:100 [rank 0]"));
    assert_null(strstr(out, "logs/more.log:101"));
    assert_non_null(strstr(out, "... 7 more"));
    free(out);

    /* the default shows 8 */
    out = render(cp_render_text, &d, NULL);
    assert_int_equal(count_of(out, "logs/more.log:"), 6);
    assert_non_null(strstr(out, "... 2 more"));
    free(out);
    cp_diagnosis_free(&d);
}

/* ---- rank groups ------------------------------------------------------- */

static void test_text_4096_ranks(void **state)
{
    (void)state;
    cp_diagnosis d;
    make_failed(&d);
    add_ranks(&d, 4096, 17, CP_RS_CASCADE, "NCCL watchdog timeout");
    char *out = render(cp_render_text, &d, NULL);

    const char *root = strstr(out, "rank 17: root");
    const char *rest = strstr(out, "ranks 0-16,18-4095: cascade");
    if (!root || !rest)
        fail_msg("rank groups missing:\n%s", out);
    assert_true(root < rest);
    assert_non_null(strstr(out, "Ranks (4096)"));
    /* thousands of ranks stay two lines */
    assert_int_equal(count_of(out, ": cascade"), 1);
    assert_int_equal(count_of(out, ": root"), 1);
    free(out);

    cp_rank_group *g = NULL;
    size_t n = 0;
    assert_int_equal(cp_rank_groups(&d, 0, &g, &n), 0);
    assert_int_equal(n, 2);
    assert_int_equal(g[0].state, CP_RS_ROOT);
    assert_string_equal(g[0].ranks, "17");
    assert_int_equal(g[0].count, 1);
    assert_string_equal(g[0].error, "CUDA out of memory");
    assert_int_equal(g[1].state, CP_RS_CASCADE);
    assert_string_equal(g[1].ranks, "0-16,18-4095");
    assert_int_equal(g[1].count, 4095);
    assert_string_equal(g[1].error, "NCCL watchdog timeout");
    cp_rank_groups_free(g, n);
    cp_diagnosis_free(&d);
}

/* The length of the line of `out` that holds `needle` (0 when none). */
static size_t line_length_of(const char *out, const char *needle)
{
    const char *at = strstr(out, needle);
    if (!at)
        return 0;
    while (at > out && at[-1] != '\n')
        at--;
    return strcspn(at, "\n");
}

/* At 16k ranks a cascade with ranks of other states among it is thousands
 * of ranges: the reports write a few and count the rest. */
static void test_rank_ranges_capped(void **state)
{
    (void)state;
    cp_diagnosis d;
    make_failed(&d);
    add_ranks(&d, 16384, 17, CP_RS_CASCADE, "NCCL watchdog timeout");
    for (int i = 3; i < 16384; i += 7)   /* 2340 ranks that ended well */
        if (i != 17) {
            d.ranks[i].state = CP_RS_OK;
            free(d.ranks[i].first_error);
            d.ranks[i].first_error = NULL;
        }

    cp_rank_group *g = NULL;
    size_t n = 0;
    assert_int_equal(cp_rank_groups(&d, 4, &g, &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(g[1].state, CP_RS_CASCADE);
    assert_string_equal(g[1].ranks, "0-2,4-9,11-16,18-23");
    assert_int_equal(g[1].more_ranges, 2341 - 4);
    assert_int_equal(g[1].count, 16384 - 2340 - 1);
    assert_int_equal(g[2].more_ranges, 2340 - 4);
    cp_rank_groups_free(g, n);
    /* 0: every range */
    assert_int_equal(cp_rank_groups(&d, 0, &g, &n), 0);
    assert_int_equal(g[1].more_ranges, 0);
    assert_non_null(strstr(g[1].ranks, ",16370-16375,16377-16382"));
    cp_rank_groups_free(g, n);

    char *out = render(cp_render_text, &d, NULL);
    const char *want = "  ranks 0-2,4-9,11-16,18-23,25-30,32-37,39-44,46-51 and 2333 more ranges (14043 ranks): "
                       "cascade - NCCL watchdog timeout\n";
    if (!strstr(out, want))
        fail_msg("capped cascade line missing:\n%s", out);
    assert_true(line_length_of(out, ": ok") < 120);
    free(out);
    out = render(cp_render_markdown, &d, NULL);
    assert_non_null(strstr(out, "- ranks 0-2,4-9,"));
    assert_non_null(strstr(out, ",102-107 and 2325 more ranges (14043 ranks): cascade"));
    free(out);
    cp_diagnosis_free(&d);
}

static void set_row(cp_diagnosis *d, int rank, cp_rank_state st, const char *error)
{
    cp_rank_row *r = &d->ranks[rank];
    r->rank = rank;
    r->state = st;
    r->last_step = -1;
    free(r->first_error);
    r->first_error = error ? xstrdup(error) : NULL;
}

static void test_rank_groups_order(void **state)
{
    (void)state;
    cp_diagnosis d;
    memset(&d, 0, sizeof d);
    d.failed = true;
    d.first_rank = 3;
    d.n_ranks = 12;
    d.ranks = calloc(12, sizeof *d.ranks);
    assert_non_null(d.ranks);
    for (int i = 0; i < 12; i++)
        set_row(&d, i, CP_RS_CASCADE, "NCCL watchdog timeout");
    set_row(&d, 3, CP_RS_ROOT, "CUDA out of memory");
    set_row(&d, 8, CP_RS_CASCADE, "Connection reset by peer"); /* same state, other error */
    set_row(&d, 9, CP_RS_KILLED, NULL);
    set_row(&d, 10, CP_RS_KILLED, NULL);
    set_row(&d, 11, CP_RS_ERROR, "CUDA out of memory");

    cp_rank_group *g = NULL;
    size_t n = 0;
    assert_int_equal(cp_rank_groups(&d, 0, &g, &n), 0);
    assert_int_equal(n, 5);
    /* root first, then larger groups, then by state */
    assert_int_equal(g[0].state, CP_RS_ROOT);
    assert_string_equal(g[0].ranks, "3");
    assert_int_equal(g[1].state, CP_RS_CASCADE);
    assert_string_equal(g[1].ranks, "0-2,4-7");
    assert_int_equal(g[1].count, 7);
    assert_string_equal(g[1].error, "NCCL watchdog timeout");
    assert_int_equal(g[2].state, CP_RS_KILLED);
    assert_string_equal(g[2].ranks, "9-10");
    assert_int_equal(g[2].count, 2);
    assert_null(g[2].error);
    /* equal sizes: by state (error before cascade), not by first rank */
    assert_int_equal(g[3].state, CP_RS_ERROR);
    assert_string_equal(g[3].ranks, "11");
    assert_int_equal(g[4].state, CP_RS_CASCADE);
    assert_string_equal(g[4].ranks, "8");
    assert_string_equal(g[4].error, "Connection reset by peer");
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += g[i].count;
    assert_int_equal(total, 12);
    cp_rank_groups_free(g, n);

    /* a root that is not the smallest group still comes first */
    set_row(&d, 0, CP_RS_ROOT, "CUDA out of memory");
    assert_int_equal(cp_rank_groups(&d, 0, &g, &n), 0);
    assert_int_equal(g[0].state, CP_RS_ROOT);
    assert_string_equal(g[0].ranks, "0,3");
    assert_int_equal(g[0].count, 2);
    cp_rank_groups_free(g, n);

    cp_diagnosis_free(&d);
    /* no ranks, no groups */
    assert_int_equal(cp_rank_groups(&d, 0, &g, &n), 0);
    assert_int_equal(n, 0);
    cp_rank_groups_free(g, n);
}

static void test_describe_rank(void **state)
{
    (void)state;
    cp_diagnosis d;
    char buf[160];
    memset(&d, 0, sizeof d);

    d.first_rank = 3;
    cp_describe_rank(&d, buf, sizeof buf);
    assert_string_equal(buf, "rank 3");
    snprintf(d.host, sizeof d.host, "node017");
    cp_describe_rank(&d, buf, sizeof buf);
    assert_string_equal(buf, "rank 3 (node017)");
    d.first_rank = -1;
    cp_describe_rank(&d, buf, sizeof buf);
    assert_string_equal(buf, "a rank on node017");
    d.host[0] = '\0';
    cp_describe_rank(&d, buf, sizeof buf);
    assert_string_equal(buf, "an unknown rank");
    /* a short buffer is cut, not overrun */
    char small[8];
    d.first_rank = 123456;
    snprintf(d.host, sizeof d.host, "node017");
    cp_describe_rank(&d, small, sizeof small);
    assert_string_equal(small, "rank 12");
}

/* ---- Markdown ---------------------------------------------------------- */

/* Number of '|' in a line that are not escaped as "\|". */
static int bars(const char *line, size_t len)
{
    int n = 0;
    for (size_t i = 0; i < len; i++)
        if (line[i] == '|' && (i == 0 || line[i - 1] != '\\'))
            n++;
    return n;
}

static void test_markdown_escapes_cells(void **state)
{
    (void)state;
    cp_diagnosis d;
    make_failed(&d);
    free(d.title);
    d.title = xstrdup("loss|scale hit the floor");
    d.kind = CP_KIND_LOSS_SCALE_FLOOR;
    snprintf(d.host, sizeof d.host, "rack|1");
    add_ranks(&d, 4, 1, CP_RS_CASCADE, "a|b");
    char *out = render(cp_render_markdown, &d, NULL);

    assert_null(strstr(out, "loss|scale"));
    assert_non_null(strstr(out, "### culprit: loss\\|scale hit the floor (`loss_scale_floor`)"));
    assert_non_null(strstr(out, "| First failing rank | rank 17 (rack\\|1) |"));
    assert_non_null(strstr(out, "ranks 0,2-3: cascade - a\\|b"));
    /* every table row has exactly three column bars */
    int rows = 0;
    for (const char *p = out; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (len && p[0] == '|') {
            rows++;
            if (bars(p, len) != 3)
                fail_msg("table row with %d bars: %.*s", bars(p, len), (int)len, p);
        }
        p += len + (nl ? 1 : 0);
    }
    assert_true(rows >= 7);
    free(out);
    cp_diagnosis_free(&d);
}

/* Length of the backtick run at the start of a line. */
static size_t ticks(const char *p)
{
    size_t n = 0;
    while (p[n] == '`')
        n++;
    return n;
}

/* Checks the evidence block: the opening fence is longer than every
 * backtick run in the evidence, and its closing fence (CommonMark: a line
 * of only backticks, at least as many) comes after every evidence line. */
static void check_fence(const char *out, const cp_diagnosis *d, size_t want_len)
{
    const char *open = strstr(out, "\n`");
    assert_non_null(open);
    open++;
    size_t f = ticks(open);
    assert_int_equal(f, want_len);
    assert_memory_equal(open + f, "text\n", 5);

    const char *close = NULL;
    for (const char *p = strchr(open, '\n') + 1; *p; p = strchr(p, '\n') + 1) {
        size_t t = ticks(p);
        if (t >= f && (p[t] == '\n' || p[t] == '\0')) {
            close = p;
            break;
        }
        if (!strchr(p, '\n'))
            break;
    }
    assert_non_null(close);
    assert_int_equal(ticks(close), f);
    for (size_t i = 0; i < d->n_evidence; i++) {
        const char *e = strstr(open, d->evidence[i].text);
        assert_non_null(e);
        assert_true(e < close);
    }
}

static void test_markdown_fence(void **state)
{
    (void)state;
    cp_diagnosis d;
    make_failed(&d);

    /* no backticks: the usual three */
    char *out = render(cp_render_markdown, &d, NULL);
    check_fence(out, &d, 3);
    free(out);

    /* a log line that holds ``` and a run of five */
    add_evidence(&d, "logs/rank0.log", 7, 0, "```");
    add_evidence(&d, "logs/rank0.log", 8, 0, "markdown in a log: ```python and `````");
    out = render(cp_render_markdown, &d, NULL);
    check_fence(out, &d, 6);
    free(out);
    cp_diagnosis_free(&d);
}

static void test_markdown_not_failed(void **state)
{
    (void)state;
    cp_diagnosis d;
    memset(&d, 0, sizeof d);
    d.first_rank = -1;
    d.n_files = 2;
    d.lines = 7;
    char *out = render(cp_render_markdown, &d, NULL);
    if (strncmp(out, "### culprit: no failure found", 29) != 0)
        fail_msg("report:\n%s", out);
    assert_non_null(strstr(out, "Read 2 files, 7 lines."));
    assert_null(strstr(out, "First failing rank"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_failed),
        cmocka_unit_test(test_json_unknown_rank_and_hang),
        cmocka_unit_test(test_json_not_failed),
        cmocka_unit_test(test_text_failed),
        cmocka_unit_test(test_text_hang_and_unknown_rank),
        cmocka_unit_test(test_text_not_failed),
        cmocka_unit_test(test_text_color),
        cmocka_unit_test(test_text_max_evidence),
        cmocka_unit_test(test_text_4096_ranks),
        cmocka_unit_test(test_rank_groups_order),
        cmocka_unit_test(test_rank_ranges_capped),
        cmocka_unit_test(test_describe_rank),
        cmocka_unit_test(test_markdown_escapes_cells),
        cmocka_unit_test(test_markdown_fence),
        cmocka_unit_test(test_markdown_not_failed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
