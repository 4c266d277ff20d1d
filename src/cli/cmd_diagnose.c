/* cmd_diagnose.c - `culprit diagnose [options] PATH...` */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "opt.h"
#include "pretouch.h"
#include "progress.h"

enum { O_HELP, O_JSON, O_MARKDOWN, O_TEXT, O_RULES, O_RULES_DIR, O_COLOR, O_NO_COLOR, O_QUIET, O_MAX_LINE,
       O_EVIDENCE, O_NO_REDACT, O_ANONYMIZE, O_CKPT };

static const cli_opt options[] = {
    {O_JSON, 0, "json", NULL, "print the diagnosis as JSON (schema: docs/json-schema.md)"},
    {O_MARKDOWN, 0, "markdown", NULL, "print a Markdown report to paste into a bug report"},
    {O_TEXT, 0, "text", NULL, "print the report for a person (the default)"},
    {O_RULES, 'r', "rules", "FILE", "also load this rule file (repeatable; same ids replace built-ins)"},
    {O_RULES_DIR, 0, "rules-dir", "DIR", "use this folder of built-in rules instead of the installed one"},
    {O_COLOR, 0, "color", NULL, "colour the text report even when not on a terminal"},
    {O_NO_COLOR, 0, "no-color", NULL, "never colour (NO_COLOR in the environment does the same)"},
    {O_QUIET, 'q', "quiet", NULL, "no input warnings (they stay in the report) or progress bar on stderr"},
    {O_MAX_LINE, 0, "max-line", "BYTES", "bytes of a line kept; longer lines are cut (default 65536)"},
    {O_EVIDENCE, 0, "evidence", "N", "evidence lines shown in text and Markdown reports"},
    {O_NO_REDACT, 0, "no-redact", NULL, "print secrets (tokens, keys, passwords) instead of [redacted]"},
    {O_ANONYMIZE, 0, "anonymize", NULL, "also replace host names, IPs, user names and emails (host-1, ip-1...)"},
    {O_CKPT, 0, "ckpt", "DIR", "also check the checkpoints in DIR and name the one to resume from"},
    {O_HELP, 'h', "help", NULL, "show this help"},
};
#define N_OPTIONS (sizeof options / sizeof options[0])

static const char about[] =
    "Reads log files, folders (recursively), archives (tar, tar.gz, zip, .gz, .zst, .xz) or '-'\n"
    "(stdin) as one incident and reports the rank that failed first, the kind of failure, the\n"
    "lifecycle phase, whose move it is, the first action, and the evidence lines.\n"
    "Exit status: 0 no failure found, 1 failure diagnosed, 2 usage error or no usable input.";

static void warn_stderr(void *user, const char *path, const char *message)
{
    (void)user;
    fprintf(stderr, "culprit: %s: %s\n", path, message);
}

static bool want_color(const cli_args *a)
{
    if (a->count[O_NO_COLOR])
        return false;
    if (a->count[O_COLOR])
        return true;
    const char *nc = getenv("NO_COLOR");
    return !(nc && *nc) && isatty(STDOUT_FILENO);
}

static culprit_format format_of(const cli_args *a)
{
    if (a->count[O_JSON])
        return CULPRIT_JSON;
    if (a->count[O_MARKDOWN])
        return CULPRIT_MARKDOWN;
    return CULPRIT_TEXT;
}

static int run(const cli_args *a)
{
    cli_pretouch(a->positional, a->n_positional);
    culprit_ctx *ctx = cli_load_context(a->values[O_RULES], a->count[O_RULES], cli_value(a, O_RULES_DIR));
    if (!ctx)
        return EXIT_USAGE;
    if (!a->count[O_QUIET])
        culprit_ctx_set_warn(ctx, warn_stderr, NULL);
    if (cli_value(a, O_MAX_LINE))
        culprit_ctx_set_max_line(ctx, (size_t)strtoull(cli_value(a, O_MAX_LINE), NULL, 10));
    culprit_diagnosis *d = NULL;
    cli_progress bar;
    cli_progress_start(&bar, ctx, a->positional, a->n_positional, a->count[O_QUIET] > 0);
    int rc = culprit_diagnose(&d, ctx, a->positional, a->n_positional);
    cli_progress_stop(&bar);
    if (rc == CULPRIT_OK && cli_value(a, O_CKPT))
        rc = culprit_diagnose_ckpt(d, ctx, cli_value(a, O_CKPT));
    int status = EXIT_USAGE;
    if (rc != CULPRIT_OK) {
        fprintf(stderr, "culprit: %s\n", culprit_ctx_error(ctx));
    } else if (culprit_diagnosis_files(d) == 0) {
        fprintf(stderr, "culprit: no log text in the input\n");
    } else {
        culprit_render_opts ro = {format_of(a), want_color(a), 0, a->count[O_NO_REDACT] > 0, a->count[O_ANONYMIZE] > 0};
        if (cli_value(a, O_EVIDENCE))
            ro.max_evidence = atoi(cli_value(a, O_EVIDENCE));
        culprit_render(d, stdout, &ro);
        status = culprit_diagnosis_failed(d) ? EXIT_FAILURE_FOUND : EXIT_NO_FAILURE;
    }
    culprit_diagnosis_free(d);
    culprit_ctx_free(ctx);
    return status;
}

int cmd_diagnose(int argc, char **argv)
{
    cli_args a;
    int status;
    if (cli_parse(&a, argc, argv, 2, options, N_OPTIONS) != 0) {
        fprintf(stderr, "culprit diagnose: %s (see 'culprit diagnose --help')\n", a.error);
        status = EXIT_USAGE;
    } else if (a.count[O_HELP]) {
        cli_help(stdout, "culprit diagnose [options] PATH...", about, options, N_OPTIONS);
        status = 0;
    } else if (a.n_positional == 0) {
        fprintf(stderr, "culprit diagnose: no input given (a file, a folder, an archive, or - for stdin)\n");
        status = EXIT_USAGE;
    } else {
        status = run(&a);
    }
    cli_args_free(&a);
    return status;
}
