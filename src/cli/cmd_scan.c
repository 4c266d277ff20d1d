/* cmd_scan.c - `culprit scan --summary OUT PATH...`: one node's share. */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "opt.h"
#include "pretouch.h"
#include "progress.h"

enum { O_HELP, O_SUMMARY, O_RULES, O_RULES_DIR, O_QUIET, O_MAX_LINE };

static const cli_opt options[] = {
    {O_SUMMARY, 's', "summary", "OUT", "write the summary here ('-' for stdout); required"},
    {O_RULES, 'r', "rules", "FILE", "also load this rule file (repeatable; same ids replace built-ins)"},
    {O_RULES_DIR, 0, "rules-dir", "DIR", "use this folder of built-in rules instead of the installed one"},
    {O_QUIET, 'q', "quiet", NULL, "do not print input warnings or progress on stderr"},
    {O_MAX_LINE, 0, "max-line", "BYTES", "bytes of a line kept; longer lines are cut (default 65536)"},
    {O_HELP, 'h', "help", NULL, "show this help"},
};
#define N_OPTIONS (sizeof options / sizeof options[0])

static const char about[] =
    "Reads the logs on this node (files, folders, archives, or other summaries) and writes a\n"
    "compact JSON summary of what they say (schema culprit.summary/1, docs/summary.md): streams,\n"
    "writers and their state, events with their evidence, identity facts. 'culprit diagnose\n"
    "SUMMARY...' merges the summaries of all nodes into the diagnosis a scan of all the logs in one\n"
    "place would give. Exit status: 0 summary written, 2 usage error or no usable input.";

static void warn_stderr(void *user, const char *path, const char *message)
{
    (void)user;
    fprintf(stderr, "culprit: %s: %s\n", path, message);
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
    const char *out_path = cli_value(a, O_SUMMARY);
    bool to_stdout = strcmp(out_path, "-") == 0;
    /* written next to the target and renamed, so a reader never sees half a file */
    size_t n = strlen(out_path) + 8;
    char *tmp = malloc(n);
    FILE *out = NULL;
    int status = EXIT_USAGE;
    if (!tmp)
        goto done;
    snprintf(tmp, n, "%s.part", out_path);
    if (!(out = to_stdout ? stdout : fopen(tmp, "w"))) {
        fprintf(stderr, "culprit scan: cannot write %s\n", tmp);
        goto done;
    }
    cli_progress bar;
    cli_progress_start(&bar, ctx, a->positional, a->n_positional, a->count[O_QUIET] > 0);
    int rc = culprit_scan_summary(ctx, a->positional, a->n_positional, out);
    cli_progress_stop(&bar);
    if (!to_stdout && fclose(out) != 0 && rc == CULPRIT_OK)
        rc = CULPRIT_ERR_INTERNAL;
    out = NULL;
    if (rc != CULPRIT_OK) {
        fprintf(stderr, "culprit: %s\n", culprit_ctx_error(ctx)[0] ? culprit_ctx_error(ctx) : "cannot write the summary");
        if (!to_stdout)
            remove(tmp);
    } else if (!to_stdout && rename(tmp, out_path) != 0) {
        fprintf(stderr, "culprit scan: cannot write %s\n", out_path);
    } else {
        status = 0;
    }
done:
    if (out && !to_stdout)
        fclose(out);
    free(tmp);
    culprit_ctx_free(ctx);
    return status;
}

int cmd_scan(int argc, char **argv)
{
    cli_args a;
    int status;
    if (cli_parse(&a, argc, argv, 2, options, N_OPTIONS) != 0) {
        fprintf(stderr, "culprit scan: %s (see 'culprit scan --help')\n", a.error);
        status = EXIT_USAGE;
    } else if (a.count[O_HELP]) {
        cli_help(stdout, "culprit scan --summary OUT [options] PATH...", about, options, N_OPTIONS);
        status = 0;
    } else if (!cli_value(&a, O_SUMMARY)) {
        fprintf(stderr, "culprit scan: --summary OUT is required (see 'culprit scan --help')\n");
        status = EXIT_USAGE;
    } else if (a.n_positional == 0) {
        fprintf(stderr, "culprit scan: no input given (a file, a folder, an archive, or - for stdin)\n");
        status = EXIT_USAGE;
    } else {
        status = run(&a);
    }
    cli_args_free(&a);
    return status;
}
