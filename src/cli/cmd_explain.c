/* cmd_explain.c - `culprit explain "ERROR TEXT"` */
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "opt.h"

enum { O_HELP, O_RULES, O_RULES_DIR };

static const cli_opt options[] = {
    {O_RULES, 'r', "rules", "FILE", "also load this rule file (repeatable)"},
    {O_RULES_DIR, 0, "rules-dir", "DIR", "use this folder of built-in rules"},
    {O_HELP, 'h', "help", NULL, "show this help"},
};
#define N_OPTIONS (sizeof options / sizeof options[0])

static const char about[] =
    "Prints every rule that recognises the given text (one or more lines, or '-' to read stdin):\n"
    "its kind, owner, phase, what it means, the first action, and the fields it captures.\n"
    "Exit status: 0 a rule matched, 1 nothing matched, 2 usage error.";

static char *read_stdin(void)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while (buf && (n = fread(buf + len, 1, cap - len - 1, stdin)) > 0) {
        len += n;
        if (len + 1 == cap && cap < (1u << 24)) {
            char *p = realloc(buf, cap *= 2);
            if (!p) {
                free(buf);
                return NULL;
            }
            buf = p;
        }
    }
    if (buf)
        buf[len] = '\0';
    return buf;
}

static char *joined_text(const cli_args *a)
{
    if (a->n_positional == 1 && strcmp(a->positional[0], "-") == 0)
        return read_stdin();
    size_t len = 1;
    for (size_t i = 0; i < a->n_positional; i++)
        len += strlen(a->positional[i]) + 1;
    char *s = calloc(1, len);
    for (size_t i = 0; s && i < a->n_positional; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, a->positional[i]);
    }
    return s;
}

int cmd_explain(int argc, char **argv)
{
    cli_args a;
    int status = EXIT_USAGE;
    if (cli_parse(&a, argc, argv, 2, options, N_OPTIONS) != 0) {
        fprintf(stderr, "culprit explain: %s\n", a.error);
    } else if (a.count[O_HELP]) {
        cli_help(stdout, "culprit explain [options] \"LOG LINE\"", about, options, N_OPTIONS);
        status = 0;
    } else if (a.n_positional == 0) {
        fprintf(stderr, "culprit explain: give the log line to explain\n");
    } else {
        culprit_ctx *ctx = cli_load_context(a.values[O_RULES], a.count[O_RULES], cli_value(&a, O_RULES_DIR));
        char *text = ctx ? joined_text(&a) : NULL;
        if (text) {
            int n = culprit_explain(ctx, text, stdout);
            if (n == 0)
                printf("No rule recognises this text. If it is an error, consider adding a rule "
                       "(docs/rules.md).\n");
            status = n > 0 ? 0 : n == 0 ? 1 : EXIT_USAGE;
        }
        free(text);
        culprit_ctx_free(ctx);
    }
    cli_args_free(&a);
    return status;
}
