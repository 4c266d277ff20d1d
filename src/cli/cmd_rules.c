/* cmd_rules.c - `culprit rules [--check] [--verbose]` */
#include "commands.h"
#include "opt.h"

enum { O_HELP, O_CHECK, O_VERBOSE, O_RULES, O_RULES_DIR };

static const cli_opt options[] = {
    {O_CHECK, 0, "check", NULL, "verify that every rule hits each of its test lines"},
    {O_VERBOSE, 'v', "verbose", NULL, "also print each rule's expressions"},
    {O_RULES, 'r', "rules", "FILE", "also load this rule file (repeatable)"},
    {O_RULES_DIR, 0, "rules-dir", "DIR", "use this folder of built-in rules"},
    {O_HELP, 'h', "help", NULL, "show this help"},
};
#define N_OPTIONS (sizeof options / sizeof options[0])

static const char about[] =
    "Lists the rule catalog: id, role, kind, owner and title of every rule.\n"
    "With --check, tests each rule against its own test lines (exit 1 if any fails).";

int cmd_rules(int argc, char **argv)
{
    cli_args a;
    int status = EXIT_USAGE;
    if (cli_parse(&a, argc, argv, 2, options, N_OPTIONS) != 0) {
        fprintf(stderr, "culprit rules: %s\n", a.error);
    } else if (a.count[O_HELP]) {
        cli_help(stdout, "culprit rules [--check] [--verbose]", about, options, N_OPTIONS);
        status = 0;
    } else {
        culprit_ctx *ctx = cli_load_context(a.values[O_RULES], a.count[O_RULES], cli_value(&a, O_RULES_DIR));
        if (ctx && a.count[O_CHECK]) {
            int failures = culprit_rules_check(ctx, stdout);
            if (failures == 0)
                printf("%zu rules, every test line hit.\n", culprit_rules_count(ctx));
            status = failures == 0 ? 0 : 1;
        } else if (ctx) {
            culprit_rules_list(ctx, stdout, a.count[O_VERBOSE] > 0);
            status = 0;
        }
        culprit_ctx_free(ctx);
    }
    cli_args_free(&a);
    return status;
}
