/* test_cli_opt.c - unit tests of the declarative option table: parsing of
 * long and short options, bundles, values, repeats, "--" and "-", the
 * error messages, and --help generated from the same table. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opt.h"

enum { O_QUIET, O_VERBOSE, O_RULES, O_FORMAT, O_JSON, O_MAX };

static const cli_opt table[] = {
    {O_QUIET, 'q', "quiet", NULL, "print only the verdict"},
    {O_VERBOSE, 'v', "verbose", NULL, "say more (repeatable)"},
    {O_RULES, 'r', "rules", "FILE", "load extra rules from FILE (repeatable)"},
    {O_FORMAT, 0, "format", "FMT", "report format: text, json or markdown"},
    {O_JSON, 'j', "json", NULL, "same as --format=json"},
    {O_MAX, 'n', "max-evidence", "N", "evidence lines to show"},
};
enum { N_OPTS = sizeof table / sizeof table[0] };

/* Parses a NULL-terminated list after a program name. */
static int parse(cli_args *a, const char **list)
{
    static char *argv[128];
    int argc = 0;
    argv[argc++] = (char *)"culprit";
    for (; *list; list++) {
        assert_true(argc < 127);
        argv[argc++] = (char *)*list;
    }
    argv[argc] = NULL;
    return cli_parse(a, argc, argv, 1, table, N_OPTS);
}

#define ARGS(...) ((const char *[]){__VA_ARGS__, NULL})

static void test_long_options(void **state)
{
    (void)state;
    cli_args a;
    assert_int_equal(parse(&a, ARGS("--rules=a.rules", "--format", "json", "--quiet", "--max-evidence=3")), 0);
    assert_string_equal(a.error, "");
    assert_int_equal(a.count[O_RULES], 1);
    assert_string_equal(cli_value(&a, O_RULES), "a.rules");
    assert_string_equal(cli_value(&a, O_FORMAT), "json");
    assert_int_equal(a.count[O_QUIET], 1);
    assert_string_equal(cli_value(&a, O_MAX), "3");
    assert_int_equal(a.count[O_VERBOSE], 0);
    assert_null(cli_value(&a, O_VERBOSE));
    assert_null(cli_value(&a, O_JSON));
    assert_int_equal(a.n_positional, 0);
    cli_args_free(&a);

    /* "=value" keeps everything after the first '=', and may be empty */
    assert_int_equal(parse(&a, ARGS("--rules=x=y.rules", "--format=")), 0);
    assert_string_equal(cli_value(&a, O_RULES), "x=y.rules");
    assert_string_equal(cli_value(&a, O_FORMAT), "");
    assert_int_equal(a.count[O_FORMAT], 1);
    cli_args_free(&a);

    /* a separate value is taken as is, even when it looks like an option */
    assert_int_equal(parse(&a, ARGS("--rules", "--quiet")), 0);
    assert_string_equal(cli_value(&a, O_RULES), "--quiet");
    assert_int_equal(a.count[O_QUIET], 0);
    cli_args_free(&a);
}

static void test_short_options(void **state)
{
    (void)state;
    cli_args a;
    /* bundled flags */
    assert_int_equal(parse(&a, ARGS("-qv", "log.txt")), 0);
    assert_int_equal(a.count[O_QUIET], 1);
    assert_int_equal(a.count[O_VERBOSE], 1);
    assert_int_equal(a.n_positional, 1);
    assert_string_equal(a.positional[0], "log.txt");
    cli_args_free(&a);

    /* attached value, separate value, and a bundle that ends in a value */
    assert_int_equal(parse(&a, ARGS("-rFILE", "-r", "second", "-vqrthird", "-n5")), 0);
    assert_int_equal(a.count[O_RULES], 3);
    assert_string_equal(a.values[O_RULES][0], "FILE");
    assert_string_equal(a.values[O_RULES][1], "second");
    assert_string_equal(a.values[O_RULES][2], "third");
    assert_int_equal(a.count[O_VERBOSE], 1);
    assert_int_equal(a.count[O_QUIET], 1);
    assert_string_equal(cli_value(&a, O_MAX), "5");
    cli_args_free(&a);

    /* the value of -r swallows the rest of the bundle */
    assert_int_equal(parse(&a, ARGS("-rqv")), 0);
    assert_string_equal(cli_value(&a, O_RULES), "qv");
    assert_int_equal(a.count[O_QUIET], 0);
    assert_int_equal(a.count[O_VERBOSE], 0);
    cli_args_free(&a);
}

static void test_repeats_in_order(void **state)
{
    (void)state;
    cli_args a;
    assert_int_equal(parse(&a, ARGS("-v", "--rules", "a", "--verbose", "-r", "b", "-vv", "--rules=c", "x")), 0);
    assert_int_equal(a.count[O_VERBOSE], 4);
    assert_int_equal(a.count[O_RULES], 3);
    assert_string_equal(a.values[O_RULES][0], "a");
    assert_string_equal(a.values[O_RULES][1], "b");
    assert_string_equal(a.values[O_RULES][2], "c");
    /* cli_value is the last one */
    assert_string_equal(cli_value(&a, O_RULES), "c");
    assert_int_equal(a.n_positional, 1);
    assert_string_equal(a.positional[0], "x");
    cli_args_free(&a);
}

static void test_positionals(void **state)
{
    (void)state;
    cli_args a;
    /* options and positionals mix; "-" is stdin; "--" ends the options */
    assert_int_equal(parse(&a, ARGS("a.log", "-q", "-", "b.log", "--", "--verbose", "-r", "-", "--")), 0);
    assert_int_equal(a.count[O_QUIET], 1);
    assert_int_equal(a.count[O_VERBOSE], 0);
    assert_int_equal(a.count[O_RULES], 0);
    assert_int_equal(a.n_positional, 7);
    const char *want[] = {"a.log", "-", "b.log", "--verbose", "-r", "-", "--"};
    for (size_t i = 0; i < 7; i++)
        assert_string_equal(a.positional[i], want[i]);
    cli_args_free(&a);

    /* nothing at all */
    assert_int_equal(parse(&a, (const char *[]){NULL}), 0);
    assert_int_equal(a.n_positional, 0);
    for (int i = 0; i < CLI_MAX_OPTS; i++)
        assert_int_equal(a.count[i], 0);
    cli_args_free(&a);
}

/* The parse of `args` fails with exactly `message`. */
static void check_error(const char **args, const char *message)
{
    cli_args a;
    int rc = parse(&a, args);
    if (rc != -1)
        fail_msg("'%s...' parsed (rc %d), want error \"%s\"", args[0], rc, message);
    if (strcmp(a.error, message) != 0)
        fail_msg("'%s...': error \"%s\", want \"%s\"", args[0], a.error, message);
    cli_args_free(&a);
}

static void test_errors(void **state)
{
    (void)state;
    check_error(ARGS("--nope"), "unknown option '--nope'");
    check_error(ARGS("--nope=3"), "unknown option '--nope'");
    /* no prefix matching: "--rule" is not "--rules" */
    check_error(ARGS("--rule", "x"), "unknown option '--rule'");
    check_error(ARGS("--rulesx"), "unknown option '--rulesx'");
    check_error(ARGS("-x"), "unknown option '-x'");
    check_error(ARGS("-qx"), "unknown option '-x'");
    check_error(ARGS("a.log", "--rules"), "--rules needs a value (FILE)");
    check_error(ARGS("-r"), "-r needs a value (FILE)");
    check_error(ARGS("-qr"), "-r needs a value (FILE)");
    check_error(ARGS("--quiet=1"), "--quiet takes no value");
    check_error(ARGS("--verbose="), "--verbose takes no value");
    /* an option with no short name cannot be reached by a letter */
    check_error(ARGS("-f", "json"), "unknown option '-f'");
}

static void test_too_many_repeats(void **state)
{
    (void)state;
    cli_args a;
    const char *args[CLI_MAX_REPEAT + 2];
    for (int i = 0; i < CLI_MAX_REPEAT; i++)
        args[i] = "-v";
    args[CLI_MAX_REPEAT] = NULL;
    assert_int_equal(parse(&a, args), 0);
    assert_int_equal(a.count[O_VERBOSE], CLI_MAX_REPEAT);
    cli_args_free(&a);

    /* one more than fits: an error, not an overflow (bundled, so argv fits) */
    char many[CLI_MAX_REPEAT + 3];
    many[0] = '-';
    memset(many + 1, 'v', CLI_MAX_REPEAT + 1);
    many[CLI_MAX_REPEAT + 2] = '\0';
    assert_int_equal(parse(&a, ARGS(many)), -1);
    assert_string_equal(a.error, "--verbose given too many times");
    assert_int_equal(a.count[O_VERBOSE], CLI_MAX_REPEAT);
    cli_args_free(&a);
}

static void test_args_free_twice(void **state)
{
    (void)state;
    cli_args a;
    assert_int_equal(parse(&a, ARGS("x")), 0);
    cli_args_free(&a);
    assert_null(a.positional);
    cli_args_free(&a); /* harmless */
}

static void test_help(void **state)
{
    (void)state;
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    cli_help(f, "culprit diagnose [options] PATH...", "Finds the rank that failed first.", table, N_OPTS);
    assert_int_equal(fclose(f), 0);

    assert_true(strncmp(out, "usage: culprit diagnose [options] PATH...\n", 42) == 0);
    assert_non_null(strstr(out, "Finds the rank that failed first."));
    for (size_t i = 0; i < N_OPTS; i++) {
        char name[64];
        snprintf(name, sizeof name, "--%s", table[i].long_name);
        const char *at = strstr(out, name);
        if (!at)
            fail_msg("help lacks %s:\n%s", name, out);
        /* the help text is on the same line as the name */
        const char *eol = strchr(at, '\n');
        const char *help = strstr(at, table[i].help);
        if (!help || (eol && help > eol))
            fail_msg("help for %s missing or on another line:\n%s", name, out);
        if (table[i].short_name) {
            char both[80];
            snprintf(both, sizeof both, "-%c, --%s", table[i].short_name, table[i].long_name);
            assert_non_null(strstr(out, both));
        }
    }
    assert_non_null(strstr(out, "--rules FILE"));
    assert_non_null(strstr(out, "--max-evidence N"));
    assert_null(strstr(out, "--quiet "
                            "FILE"));
    /* one line per option after the "options:" header */
    const char *opts = strstr(out, "options:\n");
    assert_non_null(opts);
    int lines = 0;
    for (const char *p = opts + 9; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, N_OPTS);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_long_options),
        cmocka_unit_test(test_short_options),
        cmocka_unit_test(test_repeats_in_order),
        cmocka_unit_test(test_positionals),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_too_many_repeats),
        cmocka_unit_test(test_args_free_twice),
        cmocka_unit_test(test_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
