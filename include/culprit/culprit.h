/* culprit.h - the library's whole public API.
 *
 * A context holds the rule catalog and options; culprit_diagnose reads
 * log files, folders, archives or stdin and returns a diagnosis, which the
 * render functions print as text, JSON or Markdown. The CLI (and any other
 * front end) uses nothing else.
 *
 * Ownership: whatever comes back through an `**out` parameter belongs to
 * the caller, who frees it with the matching _free function. Every _free
 * accepts NULL. Functions return 0 on success or a negative culprit_status;
 * the message is in culprit_ctx_error(ctx).
 */
#ifndef CULPRIT_CULPRIT_H
#define CULPRIT_CULPRIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum culprit_status {
    CULPRIT_OK = 0,
    CULPRIT_ERR_NOMEM = -1,
    CULPRIT_ERR_RULES = -2,   /* a rule file is missing or invalid */
    CULPRIT_ERR_INPUT = -3,   /* nothing could be read */
    CULPRIT_ERR_INTERNAL = -4
} culprit_status;

typedef struct culprit_ctx culprit_ctx;
typedef struct culprit_diagnosis culprit_diagnosis;

/* Called for each problem with an input (unreadable, binary, truncated);
 * `path` names the input. */
typedef void (*culprit_warn_fn)(void *user, const char *path, const char *message);

int culprit_ctx_new(culprit_ctx **out);
void culprit_ctx_free(culprit_ctx *ctx);
const char *culprit_ctx_error(const culprit_ctx *ctx);
void culprit_ctx_set_warn(culprit_ctx *ctx, culprit_warn_fn fn, void *user);
/* Called now and then during a scan with the bytes read so far (on the
 * calling thread), e.g. to draw a progress bar. */
typedef void (*culprit_progress_fn)(void *user, unsigned long long bytes);
void culprit_ctx_set_progress(culprit_ctx *ctx, culprit_progress_fn fn, void *user);
/* Bytes of a line kept (default 64 KiB); longer lines are cut. */
void culprit_ctx_set_max_line(culprit_ctx *ctx, size_t bytes);

/* Rules: load the built-in folder (culprit_default_rules_dir()) and any
 * user files, then compile once. A rule with an existing id replaces it. */
int culprit_ctx_load_rules_dir(culprit_ctx *ctx, const char *dir);
int culprit_ctx_load_rules_file(culprit_ctx *ctx, const char *path);
int culprit_ctx_compile(culprit_ctx *ctx);
/* The folder of built-in rules: $CULPRIT_RULES, else the source tree's
 * rules/ when running from a build folder, else the installed one. */
const char *culprit_default_rules_dir(void);

/* Reads every path ("-" is stdin) as one incident and diagnoses it. A
 * path whose content is a node summary (culprit_scan_summary) is merged
 * as if its logs had been read at that point. */
int culprit_diagnose(culprit_diagnosis **out, culprit_ctx *ctx, const char *const *paths, size_t n_paths);
void culprit_diagnosis_free(culprit_diagnosis *d);
/* Reads every path like culprit_diagnose but, instead of a diagnosis,
 * writes what it learnt as a compact JSON summary ("culprit.summary/1",
 * docs/summary.md) to `out`, for a later culprit_diagnose to merge with
 * the summaries of other nodes. */
int culprit_scan_summary(culprit_ctx *ctx, const char *const *paths, size_t n_paths, FILE *out);
/* True when a failure was found. */
bool culprit_diagnosis_failed(const culprit_diagnosis *d);
/* Number of inputs that delivered text. */
size_t culprit_diagnosis_files(const culprit_diagnosis *d);

typedef enum culprit_format { CULPRIT_TEXT, CULPRIT_JSON, CULPRIT_MARKDOWN } culprit_format;
typedef struct culprit_render_opts {
    culprit_format format;
    bool color;
    int max_evidence; /* 0 = the format's default */
    bool no_redact;   /* print secrets (tokens, keys, passwords) as they are */
    bool anonymize;   /* also replace host names, IPs, user names, emails */
} culprit_render_opts;
/* Every report passes through redaction first (README: "What is
 * redacted"): secrets become "[redacted]" unless no_redact; with
 * anonymize, host-1, ip-1, user-1, email-1, consistent within the report. */
int culprit_render(const culprit_diagnosis *d, FILE *out, const culprit_render_opts *opts);

/* Checkpoints (docs/checkpoints.md): is the checkpoint safe to resume from?
 * culprit_ckpt_inspect walks `dir` (DeepSpeed, torch.distributed.checkpoint,
 * Hugging Face Trainer, Megatron-LM, numbered step folders), checks every
 * shard and file, and gives each checkpoint a verdict; the report is the
 * caller's, freed with culprit_ckpt_free. CULPRIT_ERR_INPUT when `dir`
 * cannot be read. culprit_ckpt_render prints it as text, Markdown or the
 * "culprit.ckpt/1" JSON object. culprit_ckpt_status: 0 when the newest
 * checkpoint is safe and none is unsafe, 1 otherwise. */
typedef struct culprit_ckpt_report culprit_ckpt_report;
int culprit_ckpt_inspect(culprit_ckpt_report **out, culprit_ctx *ctx, const char *dir);
void culprit_ckpt_free(culprit_ckpt_report *r);
int culprit_ckpt_render(const culprit_ckpt_report *r, FILE *out, const culprit_render_opts *opts);
int culprit_ckpt_status(const culprit_ckpt_report *r);
size_t culprit_ckpt_count(const culprit_ckpt_report *r);
/* Inspects `dir` with what the logs know (world size; a save the run died
 * in makes that step's checkpoint unsafe) and attaches the report to the
 * diagnosis: the renderers then show it, and JSON adds `checkpoint` and
 * `verdict.resume`. */
int culprit_diagnose_ckpt(culprit_diagnosis *d, culprit_ctx *ctx, const char *dir);

/* What the catalog knows about one line of text: prints each rule that
 * hits it (id, role, kind, owner, phase, title, means, action, captures).
 * Returns the number of rules hit, or a negative status. */
int culprit_explain(culprit_ctx *ctx, const char *text, FILE *out);

/* The catalog as a table; with `check`, verifies every rule hits its own
 * test lines and returns the number of failures. */
int culprit_rules_list(culprit_ctx *ctx, FILE *out, bool verbose);
int culprit_rules_check(culprit_ctx *ctx, FILE *out);
size_t culprit_rules_count(const culprit_ctx *ctx);

const char *culprit_version(void);

#ifdef __cplusplus
}
#endif

#endif
