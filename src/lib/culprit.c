/* culprit.c - the public API: glue from inputs to a rendered diagnosis.
 *
 * bytes (reader) -> matched lines (matcher) -> events (events, ranks)
 * -> diagnosis (analyze) -> report (render_*). Data flows one way.
 */
#include "culprit/culprit.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "catalog.h"
#include "config.h"
#include "incident.h"
#include "matcher.h"
#include "reader.h"
#include "render.h"
#include "util/strutil.h"

struct culprit_ctx {
    cp_catalog catalog;
    cp_matcher *matcher;
    culprit_warn_fn warn;
    void *warn_user;
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

typedef struct scan_ctx {
    culprit_ctx *ctx;
    cp_incident *inc;
    int failed;
} scan_ctx;

static int on_begin(void *user, const cp_stream_info *info)
{
    scan_ctx *s = user;
    return cp_incident_begin_stream(s->inc, info->path) != 0;
}

static int on_chunk(void *user, const char *data, size_t len, uint64_t first_line)
{
    scan_ctx *s = user;
    if (cp_incident_feed(s->inc, data, len, first_line) != 0) {
        s->failed = 1;
        return 1;
    }
    return 0;
}

static void on_end(void *user, const cp_stream_info *info)
{
    (void)info;
    cp_incident_end_stream(((scan_ctx *)user)->inc);
}

static void on_warn(void *user, const char *path, const char *message)
{
    scan_ctx *s = user;
    cp_incident_warn(s->inc, path, message);
    if (s->ctx->warn)
        s->ctx->warn(s->ctx->warn_user, path, message);
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
    cp_reader_opts ro;
    cp_reader_opts_default(&ro);
    if (ctx->max_line)
        ro.max_line = ctx->max_line;
    cp_reader_cb cb = {on_begin, on_chunk, on_end, on_warn};
    scan_ctx s = {ctx, &inc, 0};
    int n = cp_reader_run(paths, n_paths, &ro, &cb, &s);
    culprit_diagnosis *d = calloc(1, sizeof *d);
    if (!d) {
        rc = set_error(ctx, CULPRIT_ERR_NOMEM, "out of memory");
    } else if (s.failed) {
        rc = set_error(ctx, CULPRIT_ERR_INTERNAL, "scanning failed");
    } else if (n < 0) {
        rc = set_error(ctx, CULPRIT_ERR_INPUT, "none of the inputs could be read");
    } else {
        rc = cp_analyze(&d->d, &inc) == 0 ? CULPRIT_OK : set_error(ctx, CULPRIT_ERR_NOMEM, "out of memory");
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

int culprit_render(const culprit_diagnosis *d, FILE *out, const culprit_render_opts *opts)
{
    cp_render_opts ro = {opts->color, opts->max_evidence};
    switch (opts->format) {
    case CULPRIT_JSON: return cp_render_json(&d->d, out, &ro);
    case CULPRIT_MARKDOWN: return cp_render_markdown(&d->d, out, &ro);
    default: return cp_render_text(&d->d, out, &ro);
    }
}

/* ---- explain and rules ----------------------------------------------------- */

/* Rules hitting one line (without its newline). */
static int hits_of(culprit_ctx *ctx, const char *line, size_t len, cp_line_hits *out)
{
    char *buf = malloc(len + 1);
    if (!buf)
        return -1;
    memcpy(buf, line, len);
    buf[len] = '\n';
    cp_hit_list hl = {0};
    int rc = cp_matcher_scan(ctx->matcher, buf, len + 1, &hl);
    memset(out, 0, sizeof *out);
    if (rc == 0 && hl.n)
        *out = hl.lines[0];
    cp_hit_list_free(&hl);
    free(buf);
    return rc;
}

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
    if (r->n_if_frame)
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
        if (hits_of(ctx, p, len, &h) != 0)
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
    for (size_t i = 0; i < ctx->catalog.n_rules; i++) {
        const cp_rule *r = &ctx->catalog.rules[i];
        for (size_t j = 0; j < r->n_tests; j++) {
            cp_line_hits h;
            if (hits_of(ctx, r->tests[j], strlen(r->tests[j]), &h) != 0)
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
