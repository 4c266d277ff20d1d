/* culprit.c - the public API: glue from inputs to a rendered diagnosis.
 *
 * bytes (reader) -> matched lines (matcher) -> events (events, ranks)
 * -> diagnosis (analyze) -> report (render_*). Data flows one way.
 */
#include "culprit/culprit.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "catalog.h"
#include "ckpt.h"
#include "config.h"
#include "facts.h"
#include "frdump.h"
#include "incident.h"
#include "matcher.h"
#include "pipeline.h"
#include "reader.h"
#include "summary.h"
#include "redact.h"
#include "render.h"
#include "util/strutil.h"

struct culprit_ctx {
    cp_catalog catalog;
    cp_matcher *matcher;
    culprit_warn_fn warn;
    void *warn_user;
    culprit_progress_fn progress;
    void *progress_user;
    size_t max_line;
    char error[1024];
};

struct culprit_diagnosis {
    cp_diagnosis d;
};

__attribute__((format(printf, 3, 4)))
static int set_error(culprit_ctx *ctx, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
    va_end(ap);
    return status;
}

int culprit_ctx_new(culprit_ctx **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return CULPRIT_ERR_NOMEM;
    cp_catalog_init(&(*out)->catalog);
    return CULPRIT_OK;
}

void culprit_ctx_free(culprit_ctx *ctx)
{
    if (!ctx)
        return;
    cp_matcher_free(ctx->matcher);
    cp_catalog_free(&ctx->catalog);
    free(ctx);
}

const char *culprit_ctx_error(const culprit_ctx *ctx)
{
    return ctx->error;
}

void culprit_ctx_set_warn(culprit_ctx *ctx, culprit_warn_fn fn, void *user)
{
    ctx->warn = fn;
    ctx->warn_user = user;
}

void culprit_ctx_set_progress(culprit_ctx *ctx, culprit_progress_fn fn, void *user)
{
    ctx->progress = fn;
    ctx->progress_user = user;
}

void culprit_ctx_set_max_line(culprit_ctx *ctx, size_t bytes)
{
    ctx->max_line = bytes;
}

static void drop_matcher(culprit_ctx *ctx)
{
    cp_matcher_free(ctx->matcher);
    ctx->matcher = NULL;
}

int culprit_ctx_load_rules_dir(culprit_ctx *ctx, const char *dir)
{
    drop_matcher(ctx);
    if (cp_catalog_load_dir(&ctx->catalog, dir) < 0)
        return set_error(ctx, CULPRIT_ERR_RULES, "%s", ctx->catalog.error);
    return CULPRIT_OK;
}

int culprit_ctx_load_rules_file(culprit_ctx *ctx, const char *path)
{
    drop_matcher(ctx);
    if (cp_catalog_load_file(&ctx->catalog, path) != 0)
        return set_error(ctx, CULPRIT_ERR_RULES, "%s", ctx->catalog.error);
    return CULPRIT_OK;
}

int culprit_ctx_compile(culprit_ctx *ctx)
{
    if (ctx->matcher)
        return CULPRIT_OK;
    char err[512] = "";
    if (cp_matcher_new(&ctx->matcher, &ctx->catalog, err, sizeof err) != 0)
        return set_error(ctx, CULPRIT_ERR_RULES, "%s", err[0] ? err : "cannot compile the rules");
    return CULPRIT_OK;
}

const char *culprit_default_rules_dir(void)
{
    const char *env = getenv("CULPRIT_RULES");
    if (env && *env)
        return env;
    if (access(CULPRIT_RULES_DIR, R_OK) == 0)
        return CULPRIT_RULES_DIR;
    return CULPRIT_SOURCE_RULES_DIR;
}

size_t culprit_rules_count(const culprit_ctx *ctx)
{
    return ctx->catalog.n_rules;
}

const char *culprit_version(void)
{
    return CULPRIT_VERSION;
}

/* ---- diagnose ------------------------------------------------------------- */

/* The reader's callbacks go through the pipeline (pipeline.h), which runs
 * the per-line work on a second thread once the input is large enough. */
typedef struct scan_ctx {
    culprit_ctx *ctx;
    cp_pipeline *pipe;
    cp_frset *fr;       /* Flight Recorder dumps, analysed after the logs */
    int failed;
} scan_ctx;

static int on_begin(void *user, const cp_stream_info *info)
{
    scan_ctx *s = user;
    if (cp_pipeline_begin(s->pipe, info->path) != 0)
        s->failed = 1;
    return s->failed;
}

static int on_chunk(void *user, const char *data, size_t len, uint64_t first_line, cp_nlmap *newlines)
{
    scan_ctx *s = user;
    if (cp_pipeline_chunk(s->pipe, data, len, first_line, newlines) != 0)
        s->failed = 1;
    return s->failed;
}

static int on_chunk_swap(void *user, char **buf, size_t size, size_t off, size_t len, uint64_t first_line,
                         cp_nlmap *newlines)
{
    scan_ctx *s = user;
    if (cp_pipeline_chunk_swap(s->pipe, buf, size, off, len, first_line, newlines) != 0)
        s->failed = 1;
    return s->failed;
}

static int on_chunk_mapped(void *user, cp_mapping *m, const char *data, size_t len, uint64_t first_line,
                           cp_nlmap *newlines)
{
    scan_ctx *s = user;
    if (cp_pipeline_chunk_mapped(s->pipe, m, data, len, first_line, newlines) != 0)
        s->failed = 1;
    return s->failed;
}

static void on_end(void *user, const cp_stream_info *info)
{
    (void)info;
    scan_ctx *s = user;
    if (cp_pipeline_end(s->pipe) != 0)
        s->failed = 1;
}

static void on_warn(void *user, const char *path, const char *message)
{
    scan_ctx *s = user;
    if (cp_pipeline_warn(s->pipe, path, message) != 0)
        s->failed = 1;
    if (s->ctx->warn)
        s->ctx->warn(s->ctx->warn_user, path, message);
}

static int on_special(void *user, const char *path, const unsigned char *head, size_t len)
{
    (void)path;
    return ((scan_ctx *)user)->fr && cp_fr_sniff(head, len);
}

static void on_whole(void *user, const char *path, const unsigned char *data, size_t len, int cut)
{
    scan_ctx *s = user;
    char err[256];
    if (cut)
        on_warn(user, path, "Flight Recorder dump larger than 256 MiB, read in part");
    if (cp_frset_add(s->fr, path, data, len, err, sizeof err) != 0)
        on_warn(user, path, err);
}

/* The dumps' findings join the incident as one more stream of lines, which
 * rules/80-flight-recorder.rules turns into events. */
static int add_flight_recorder(cp_incident *inc, const cp_frset *fr)
{
    if (!fr || !cp_frset_count(fr))
        return 0;
    int world = 0;
    char *text = cp_frset_findings(fr, &world);
    if (!text)
        return -1;
    if (world > inc->world_size)
        inc->world_size = world;
    int rc = 0;
    if (text[0]) {
        rc = cp_incident_begin_stream(inc, "flight-recorder-findings");
        if (rc == 0) {
            rc = cp_incident_feed(inc, text, strlen(text), 1, NULL);
            cp_incident_end_stream(inc);
        }
    }
    free(text);
    return rc;
}

static void on_progress(void *user, uint64_t bytes)
{
    culprit_ctx *ctx = user;
    ctx->progress(ctx->progress_user, bytes);
}

/* Reads `paths` into `inc`, which the caller has initialised. Returns the
 * reader's count of streams with text (negative: none readable), or
 * INT_MIN with the error set when the scan itself failed. */
enum { SCAN_CHUNK = 4 << 20, SCAN_FIRST_CHUNK = 256 << 10 };

static int scan_paths(culprit_ctx *ctx, cp_incident *inc, const char *const *paths, size_t n_paths)
{
    cp_reader_opts ro;
    cp_reader_opts_default(&ro);
    /* Larger chunks than the reader's default: progress lines are thinned
     * per chunk to each writer's first and last (prepare.h), which with
     * thousands of ranks needs many lines per chunk. The first chunks are
     * small so that a paste is spread over the cores at once. */
    ro.chunk_size = SCAN_CHUNK;
    ro.first_chunk = SCAN_FIRST_CHUNK;
    if (ctx->max_line)
        ro.max_line = ctx->max_line;
    /* Files are read, not mapped: every chunk of a mapped file costs a
     * TLB flush on both cores when its pages are dropped, and on the
     * virtual machines these tools run on that cost more than the copy
     * (docs/internals.md, "Mapped files"). CULPRIT_MMAP=1 maps them, to
     * compare the two. */
    const char *map = getenv("CULPRIT_MMAP");
    ro.no_map = !(map && *map && *map != '0');
    cp_reader_cb cb = {on_begin, on_chunk, on_end, on_warn, on_special, on_whole, on_chunk_swap,
                       on_chunk_mapped};
    scan_ctx s = {ctx, NULL, cp_frset_new(), 0};
    if (cp_pipeline_new(&s.pipe, inc, ctx->matcher) != 0) {
        set_error(ctx, CULPRIT_ERR_NOMEM, "out of memory");
        return INT_MIN;
    }
    if (ctx->progress)
        cp_pipeline_set_progress(s.pipe, on_progress, ctx);
    int n = cp_reader_run(paths, n_paths, &ro, &cb, &s);
    if (cp_pipeline_finish(s.pipe) != 0)
        s.failed = 1;
    cp_pipeline_free(s.pipe);
    if (!s.failed && add_flight_recorder(inc, s.fr) != 0)
        s.failed = 1;
    cp_frset_free(s.fr);
    if (s.failed) {
        set_error(ctx, CULPRIT_ERR_INTERNAL, "scanning failed");
        return INT_MIN;
    }
    return n;
}

/* The step of a checkpoint save that began and never ended: named by the
 * save line itself (global_step600, iteration 600), else by the failure's
 * key line or evidence; -1 when nothing names it. */
static int64_t saving_step(const cp_incident *inc, const cp_diagnosis *d)
{
    int64_t step = -1;
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->phase == CP_PHASE_CHECKPOINT_SAVE && w->phase_state != CP_STATE_END) {
            int64_t s = cp_ckpt_step_in_text(w->phase_text);
            step = s > step ? s : step;
        }
    }
    if (step < 0)
        step = cp_ckpt_step_in_text(d->signature);
    for (size_t i = 0; step < 0 && i < d->n_evidence; i++)
        step = cp_ckpt_step_in_text(d->evidence[i].text);
    return step;
}

/* Every path in order: node summaries (summary.h) merge into `inc`, runs
 * of other paths are read. Returns as scan_paths. */
static int gather(culprit_ctx *ctx, cp_incident *inc, const char *const *paths, size_t n_paths)
{
    int total = -1;
    for (size_t i = 0; i < n_paths;) {
        if (strcmp(paths[i], "-") != 0 && cp_summary_detect(paths[i])) {
            if (cp_summary_merge(inc, paths[i], ctx->error, sizeof ctx->error) != 0)
                return INT_MIN;
            total = total < 0 ? 1 : total + 1;
            i++;
            continue;
        }
        size_t j = i;
        while (j < n_paths && (strcmp(paths[j], "-") == 0 || !cp_summary_detect(paths[j])))
            j++;
        int n = scan_paths(ctx, inc, paths + i, j - i);
        if (n == INT_MIN)
            return n;
        if (n >= 0)
            total = total < 0 ? n : total + n;
        i = j;
    }
    return total;
}

int culprit_scan_summary(culprit_ctx *ctx, const char *const *paths, size_t n_paths, FILE *out)
{
    int rc = culprit_ctx_compile(ctx);
    if (rc != CULPRIT_OK)
        return rc;
    cp_incident inc;
    if (cp_incident_init(&inc, &ctx->catalog, ctx->matcher) != 0)
        return set_error(ctx, CULPRIT_ERR_NOMEM, "out of memory");
    int n = gather(ctx, &inc, paths, n_paths);
    if (n == INT_MIN)
        rc = ctx->error[0] ? CULPRIT_ERR_INPUT : CULPRIT_ERR_INTERNAL;
    else if (n < 0)
        rc = set_error(ctx, CULPRIT_ERR_INPUT, "none of the inputs could be read");
    else if (cp_summary_write(&inc, out) != 0)
        rc = set_error(ctx, CULPRIT_ERR_INTERNAL, "cannot write the summary");
    cp_incident_free(&inc);
    return rc;
}

int culprit_diagnose(culprit_diagnosis **out, culprit_ctx *ctx, const char *const *paths, size_t n_paths)
{
    *out = NULL;
    int rc = culprit_ctx_compile(ctx);
    if (rc != CULPRIT_OK)
        return rc;
    cp_incident inc;
    if (cp_incident_init(&inc, &ctx->catalog, ctx->matcher) != 0)
        return set_error(ctx, CULPRIT_ERR_NOMEM, "out of memory");
    ctx->error[0] = '\0';
    int n = gather(ctx, &inc, paths, n_paths);
    culprit_diagnosis *d = calloc(1, sizeof *d);
    if (!d) {
        rc = set_error(ctx, CULPRIT_ERR_NOMEM, "out of memory");
    } else if (n == INT_MIN) {
        rc = CULPRIT_ERR_INPUT;
    } else if (n < 0) {
        rc = set_error(ctx, CULPRIT_ERR_INPUT, "none of the inputs could be read");
    } else {
        rc = cp_analyze(&d->d, &inc) == 0 ? CULPRIT_OK : set_error(ctx, CULPRIT_ERR_NOMEM, "out of memory");
        d->d.saving_step = saving_step(&inc, &d->d);
    }
    cp_incident_free(&inc);
    if (rc != CULPRIT_OK) {
        culprit_diagnosis_free(d);
        return rc;
    }
    *out = d;
    return CULPRIT_OK;
}

void culprit_diagnosis_free(culprit_diagnosis *d)
{
    if (!d)
        return;
    cp_diagnosis_free(&d->d);
    free(d);
}

bool culprit_diagnosis_failed(const culprit_diagnosis *d)
{
    return d->d.failed;
}

size_t culprit_diagnosis_files(const culprit_diagnosis *d)
{
    return d->d.n_files;
}

/* Renderers only ever see the redacted copy: a new format cannot forget. */
int culprit_render(const culprit_diagnosis *d, FILE *out, const culprit_render_opts *opts)
{
    cp_render_opts ro = {opts->color, opts->max_evidence};
    unsigned flags = (opts->no_redact ? 0u : CP_REDACT_SECRETS) | (opts->anonymize ? CP_REDACT_ANONYMIZE : 0u);
    cp_diagnosis red, src = d->d;
    src.ckpt = NULL; /* borrowed by the copy below, never owned by it */
    if (cp_redact_diagnosis(&red, &src, flags) != 0)
        return CULPRIT_ERR_NOMEM;
    red.ckpt = d->d.ckpt;
    int rc;
    switch (opts->format) {
    case CULPRIT_JSON: rc = cp_render_json(&red, out, &ro); break;
    case CULPRIT_MARKDOWN: rc = cp_render_markdown(&red, out, &ro); break;
    default: rc = cp_render_text(&red, out, &ro); break;
    }
    red.ckpt = NULL;
    cp_redacted_free(&red);
    return rc;
}

/* ---- checkpoints ------------------------------------------------------------ */

int culprit_ckpt_inspect(culprit_ckpt_report **out, culprit_ctx *ctx, const char *dir)
{
    char err[512] = "";
    if (cp_ckpt_inspect(dir, out, err, sizeof err) != 0)
        return set_error(ctx, strstr(err, "out of memory") ? CULPRIT_ERR_NOMEM : CULPRIT_ERR_INPUT, "%s", err);
    return CULPRIT_OK;
}

void culprit_ckpt_free(culprit_ckpt_report *r)
{
    cp_ckpt_report_free(r);
}

size_t culprit_ckpt_count(const culprit_ckpt_report *r)
{
    return r->n_entries;
}

int culprit_ckpt_status(const culprit_ckpt_report *r)
{
    return cp_ckpt_status(r);
}

int culprit_ckpt_render(const culprit_ckpt_report *r, FILE *out, const culprit_render_opts *opts)
{
    if (opts->format == CULPRIT_JSON) {
        json_t *o = cp_ckpt_json(r);
        int rc = o ? json_dumpf(o, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII) : -1;
        fputc('\n', out);
        json_decref(o);
        return rc == 0 ? CULPRIT_OK : CULPRIT_ERR_NOMEM;
    }
    bool md = opts->format == CULPRIT_MARKDOWN;
    fprintf(out, md ? "### culprit: checkpoints in `%s`\n\n" : "culprit: checkpoints in %s\n", r->dir);
    cp_ckpt_print(r, out, md, false);
    return ferror(out) ? CULPRIT_ERR_INTERNAL : CULPRIT_OK;
}

int culprit_diagnose_ckpt(culprit_diagnosis *d, culprit_ctx *ctx, const char *dir)
{
    cp_ckpt_opts o = {d->d.world_size, -1};
    bool saving = d->d.failed && d->d.phase == CP_PHASE_CHECKPOINT_SAVE;
    char err[512] = "";
    cp_ckpt_report *r = NULL;
    if (cp_ckpt_inspect_opts(dir, &o, &r, err, sizeof err) != 0)
        return set_error(ctx, strstr(err, "out of memory") ? CULPRIT_ERR_NOMEM : CULPRIT_ERR_INPUT, "%s", err);
    if (saving && d->d.saving_step >= 0 && !cp_ckpt_mark_saving(r, d->d.saving_step))
        cp_diag_note(&d->d, "The run failed while saving step %lld; %s holds no checkpoint of that step.",
                     (long long)d->d.saving_step, dir);
    else if (saving && d->d.saving_step < 0)
        cp_diag_note(&d->d, "The run failed while saving a checkpoint, but no line names its step: check the newest "
                     "checkpoint in %s by hand.", dir);
    cp_ckpt_report_free(d->d.ckpt);
    d->d.ckpt = r;
    return CULPRIT_OK;
}

/* ---- explain and rules ----------------------------------------------------- */

static void explain_rule(culprit_ctx *ctx, uint32_t ri, const char *line, size_t len, FILE *out)
{
    const cp_rule *r = &ctx->catalog.rules[ri];
    const char *base = strrchr(r->file, '/');
    fprintf(out, "%s (%s:%d)\n  role %s", r->id, base ? base + 1 : r->file, r->line, cp_role_name(r->role));
    if (r->kind != CP_KIND_NONE)
        fprintf(out, ", kind %s", cp_kind_name(r->kind));
    fprintf(out, ", owner %s, phase %s, weight %d\n", cp_owner_name(r->owner), cp_phase_name(r->phase), r->weight);
    if (r->title)
        fprintf(out, "  %s\n", r->title);
    if (r->means)
        fprintf(out, "  means:  %s\n", r->means);
    if (r->action)
        fprintf(out, "  action: %s\n", r->action);
    if (r->n_if_frame && r->frame_reach)
        fprintf(out, "  applies only inside a traceback with one of its %d innermost frames matching: %s\n",
                r->frame_reach, r->if_frame[0]);
    else if (r->n_if_frame)
        fprintf(out, "  applies only inside a traceback with a frame matching: %s\n", r->if_frame[0]);
    cp_captures caps = {0};
    cp_matcher_captures(ctx->matcher, ri, line, len, &caps);
    for (int i = 0; i < caps.n; i++)
        fprintf(out, "  captured %s = %s\n", caps.v[i].name, caps.v[i].value);
}

/* Rules that apply to the line as it stands come first, heaviest first;
 * rules that also need a traceback frame follow. */
static int explain_order(const cp_catalog *cat, uint32_t a, uint32_t b)
{
    const cp_rule *x = &cat->rules[a], *y = &cat->rules[b];
    if ((x->n_if_frame > 0) != (y->n_if_frame > 0))
        return x->n_if_frame > 0 ? 1 : -1;
    return y->weight - x->weight;
}

static void sort_hits(const cp_catalog *cat, cp_line_hits *h)
{
    for (uint32_t i = 1; i < h->n_rules; i++)
        for (uint32_t j = i; j > 0 && explain_order(cat, h->rules[j - 1], h->rules[j]) > 0; j--) {
            uint32_t t = h->rules[j];
            h->rules[j] = h->rules[j - 1];
            h->rules[j - 1] = t;
        }
}

int culprit_explain(culprit_ctx *ctx, const char *text, FILE *out)
{
    int rc = culprit_ctx_compile(ctx);
    if (rc != CULPRIT_OK)
        return rc;
    int total = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        cp_line_hits h;
        if (cp_matcher_line(ctx->matcher, p, len, &h) != 0)
            return set_error(ctx, CULPRIT_ERR_INTERNAL, "scanning failed");
        sort_hits(&ctx->catalog, &h);
        for (uint32_t i = 0; i < h.n_rules; i++, total++) {
            fputs(total ? "\n" : "", out);
            explain_rule(ctx, h.rules[i], p, len, out);
        }
        p += len + (nl ? 1 : 0);
    }
    return total;
}

int culprit_rules_list(culprit_ctx *ctx, FILE *out, bool verbose)
{
    for (size_t i = 0; i < ctx->catalog.n_rules; i++) {
        const cp_rule *r = &ctx->catalog.rules[i];
        fprintf(out, "%-40s %-9s %-20s %-15s %s\n", r->id, cp_role_name(r->role),
                r->kind != CP_KIND_NONE ? cp_kind_name(r->kind) : "-", cp_owner_name(r->owner),
                r->title ? r->title : "");
        if (verbose)
            for (size_t j = 0; j < r->n_match; j++)
                fprintf(out, "    match %s\n", r->match[j]);
    }
    return (int)ctx->catalog.n_rules;
}

int culprit_rules_check(culprit_ctx *ctx, FILE *out)
{
    int rc = culprit_ctx_compile(ctx);
    if (rc != CULPRIT_OK)
        return rc;
    char err[512];
    if (cp_matcher_check_all(ctx->matcher, err, sizeof err) != 0)
        return set_error(ctx, CULPRIT_ERR_RULES, "%s", err);
    int failures = 0;
    for (size_t i = 0; i < ctx->catalog.n_redefined; i++, failures++)
        fprintf(out, "%s; the later one is used\n", ctx->catalog.redefined[i]);
    for (size_t i = 0; i < ctx->catalog.n_rules; i++) {
        const cp_rule *r = &ctx->catalog.rules[i];
        for (size_t j = 0; j < r->n_tests; j++) {
            if (r->role == CP_ROLE_LIBRARY) {   /* its tests are file paths */
                if (!cp_matcher_library_rule(ctx->matcher, (uint32_t)i, r->tests[j])) {
                    fprintf(out, "%s:%d: rule '%s' does not match its test path: %s\n", r->file, r->line, r->id,
                            r->tests[j]);
                    failures++;
                }
                continue;
            }
            cp_line_hits h;
            if (cp_matcher_line(ctx->matcher, r->tests[j], strlen(r->tests[j]), &h) != 0)
                return set_error(ctx, CULPRIT_ERR_INTERNAL, "scanning failed");
            bool hit = false;
            for (uint32_t k = 0; k < h.n_rules; k++)
                hit |= h.rules[k] == i;
            if (!hit) {
                fprintf(out, "%s:%d: rule '%s' does not hit its test line: %s\n", r->file, r->line, r->id,
                        r->tests[j]);
                failures++;
            }
        }
    }
    return failures;
}
