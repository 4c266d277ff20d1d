#include "opt.h"

#include <stdlib.h>
#include <string.h>

static const cli_opt *find_long(const cli_opt *t, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(t[i].long_name) == len && strncmp(t[i].long_name, name, len) == 0)
            return &t[i];
    return NULL;
}

static const cli_opt *find_short(const cli_opt *t, size_t n, char c)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].short_name == c)
            return &t[i];
    return NULL;
}

static int store(cli_args *a, const cli_opt *o, const char *value)
{
    int c = a->count[o->id];
    if (c >= CLI_MAX_REPEAT) {
        snprintf(a->error, sizeof a->error, "--%s given too many times", o->long_name);
        return -1;
    }
    a->values[o->id][c] = value;
    a->count[o->id] = c + 1;
    return 0;
}

static int take_long(cli_args *a, int argc, char **argv, int *i, const cli_opt *t, size_t n)
{
    const char *name = argv[*i] + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const cli_opt *o = find_long(t, n, name, len);
    if (!o) {
        snprintf(a->error, sizeof a->error, "unknown option '--%.*s'", (int)len, name);
        return -1;
    }
    if (!o->arg) {
        if (eq) {
            snprintf(a->error, sizeof a->error, "--%s takes no value", o->long_name);
            return -1;
        }
        return store(a, o, "");
    }
    if (eq)
        return store(a, o, eq + 1);
    if (*i + 1 >= argc) {
        snprintf(a->error, sizeof a->error, "--%s needs a value (%s)", o->long_name, o->arg);
        return -1;
    }
    return store(a, o, argv[++*i]);
}

static int take_short(cli_args *a, int argc, char **argv, int *i, const cli_opt *t, size_t n)
{
    for (const char *p = argv[*i] + 1; *p; p++) {
        const cli_opt *o = find_short(t, n, *p);
        if (!o) {
            snprintf(a->error, sizeof a->error, "unknown option '-%c'", *p);
            return -1;
        }
        if (!o->arg) {
            if (store(a, o, "") != 0)
                return -1;
            continue;
        }
        if (p[1])
            return store(a, o, p + 1);
        if (*i + 1 >= argc) {
            snprintf(a->error, sizeof a->error, "-%c needs a value (%s)", *p, o->arg);
            return -1;
        }
        return store(a, o, argv[++*i]);
    }
    return 0;
}

int cli_parse(cli_args *a, int argc, char **argv, int first, const cli_opt *t, size_t n)
{
    memset(a, 0, sizeof *a);
    a->positional = calloc((size_t)argc + 1, sizeof *a->positional);
    if (!a->positional) {
        snprintf(a->error, sizeof a->error, "out of memory");
        return -1;
    }
    bool only_positional = false;
    for (int i = first; i < argc; i++) {
        const char *s = argv[i];
        int rc = 0;
        if (only_positional || s[0] != '-' || strcmp(s, "-") == 0)
            a->positional[a->n_positional++] = s;
        else if (strcmp(s, "--") == 0)
            only_positional = true;
        else if (s[1] == '-')
            rc = take_long(a, argc, argv, &i, t, n);
        else
            rc = take_short(a, argc, argv, &i, t, n);
        if (rc != 0)
            return -1;
    }
    return 0;
}

void cli_args_free(cli_args *a)
{
    free(a->positional);
    a->positional = NULL;
}

const char *cli_value(const cli_args *a, int id)
{
    return a->count[id] ? a->values[id][a->count[id] - 1] : NULL;
}

void cli_help(FILE *out, const char *usage, const char *about, const cli_opt *t, size_t n)
{
    fprintf(out, "usage: %s\n\n%s\n\noptions:\n", usage, about);
    for (size_t i = 0; i < n; i++) {
        char left[64];
        snprintf(left, sizeof left, "%c%c%s--%s%s%s", t[i].short_name ? '-' : ' ',
                 t[i].short_name ? t[i].short_name : ' ', t[i].short_name ? ", " : "  ", t[i].long_name,
                 t[i].arg ? " " : "", t[i].arg ? t[i].arg : "");
        fprintf(out, "  %-26s %s\n", left, t[i].help);
    }
}
