/* opt.h - a declarative option table: one row per option drives parsing
 * and --help, so the two cannot disagree. */
#ifndef CULPRIT_CLI_OPT_H
#define CULPRIT_CLI_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum { CLI_MAX_OPTS = 32, CLI_MAX_REPEAT = 64 };

typedef struct cli_opt {
    int id;                 /* index into cli_args.values; 0..CLI_MAX_OPTS-1 */
    char short_name;        /* 0 if none */
    const char *long_name;
    const char *arg;        /* name of its value, NULL for a flag */
    const char *help;
} cli_opt;

typedef struct cli_args {
    int count[CLI_MAX_OPTS];                 /* times each option was given */
    const char *values[CLI_MAX_OPTS][CLI_MAX_REPEAT];
    const char **positional;                 /* points into argv */
    size_t n_positional;
    char error[256];
} cli_args;

/* Parses argv[first..argc). Returns 0, or -1 with args->error set.
 * "--" ends options; "-" alone is positional (stdin). */
int cli_parse(cli_args *args, int argc, char **argv, int first, const cli_opt *table, size_t n);
void cli_args_free(cli_args *args);
void cli_help(FILE *out, const char *usage, const char *about, const cli_opt *table, size_t n);
/* The last value of an option, or NULL. */
const char *cli_value(const cli_args *args, int id);

#endif
