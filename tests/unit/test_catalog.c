/* test_catalog.c - unit tests of the rule catalog: the file format
 * (docs/rules.md), its error messages with their line numbers, replacement
 * of rules by id, folder loading order, and the real rules folder. Rule
 * files are written at run time into a fresh temporary folder. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"

static char dir[PATH_MAX];

/* ---- helpers ----------------------------------------------------------- */

static const char *at(const char *name)
{
    static char ring[8][PATH_MAX];
    static int i;
    char *p = ring[i++ % 8];
    int n = snprintf(p, PATH_MAX, "%s/%s", dir, name);

    assert_true(n > 0 && n < PATH_MAX);
    return p;
}

static const char *write_str(const char *name, const char *s)
{
    const char *path = at(name);
    FILE *f = fopen(path, "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(s, 1, strlen(s), f), strlen(s));
    assert_int_equal(fclose(f), 0);
    return path;
}

static int remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/culprit-catalog-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

/* Loads `text` as one rule file; returns the load's result. */
static int load_text(cp_catalog *c, const char *name, const char *text)
{
    return cp_catalog_load_file(c, write_str(name, text));
}

/* A complete root rule with id `id`, for tests that need a valid one. */
#define ROOT_RULE(id, title)                                                   \
    "[rule " id "]\n"                                                          \
    "role   = root\n"                                                          \
    "kind   = cuda_oom\n"                                                      \
    "match  = CUDA out of memory\n"                                            \
    "title  = " title "\n"                                                     \
    "means  = The GPU ran out of memory.\n"                                    \
    "action = Lower the batch size.\n"                                         \
    "test   = torch.OutOfMemoryError: CUDA out of memory.\n"

/* ---- a valid rule ------------------------------------------------------ */

static const char valid_rules[] =
    "# culprit test rules\n"                                          /* 1 */
    "\n"                                                              /* 2 */
    "[rule cuda.oom]\n"                                               /* 3 */
    "kind    = cuda_oom\n"                                            /* 4 */
    "owner   = config\n"                                              /* 5 */
    "phase   = forward\n"                                             /* 6 */
    "role    = root\n"                                                /* 7 */
    "weight  = 70\n"                                                  /* 8 */
    "# a comment between keys\n"                                      /* 9 */
    "match   = CUDA out of memory\\. Tried to allocate (?<size>[0-9.]+ [KMGT]i?B)\n" /* 10 */
    "match   = torch\\.OutOfMemoryError\n"                            /* 11 */
    "if_frame = partitioned_param_coordinator\n"                      /* 12 */
    "if_frame = stage3\\.py\n"                                        /* 13 */
    "title   = CUDA out of memory\n"                                  /* 14 */
    "means   = The GPU's memory was exhausted by this rank: the model, its\n" /* 15 */
    "          activations or a temporary buffer\n"                   /* 16 */
    "\tdid not fit.\n"                                                /* 17 */
    "action  = Lower the micro-batch size.   \n"                      /* 18 */
    "test    = torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.35 GiB\n" /* 19 */
    "test    = CUDA out of memory. Tried to allocate 20.00 MiB\n"     /* 20 */
    "\n"                                                              /* 21 */
    "[rule ckpt.save_begin]\n"                                        /* 22 */
    "role  = phase\n"                                                 /* 23 */
    "phase = checkpoint_save\n"                                       /* 24 */
    "state = begin\n"                                                 /* 25 */
    "nocase = yes\n"                                                  /* 26 */
    "match = saving checkpoint a=b\n"                                 /* 27 */
    "test  = Saving checkpoint a=b to /ckpt\n";                       /* 28 */

static void test_valid_rule(void **state)
{
    (void)state;
    cp_catalog c;
    cp_catalog_init(&c);
    const char *path = write_str("valid.rules", valid_rules);

    assert_int_equal(cp_catalog_load_file(&c, path), 0);
    assert_string_equal(c.error, "");
    assert_int_equal(c.n_rules, 2);

    const cp_rule *r = &c.rules[0];
    assert_string_equal(r->id, "cuda.oom");
    assert_int_equal(r->role, CP_ROLE_ROOT);
    assert_int_equal(r->kind, CP_KIND_CUDA_OOM);
    assert_int_equal(r->owner, CP_OWNER_CONFIG);
    assert_int_equal(r->phase, CP_PHASE_FORWARD);
    assert_int_equal(r->state, CP_STATE_NONE);
    assert_int_equal(r->weight, 70);
    assert_false(r->nocase);
    /* repeatable keys keep every value, in order */
    assert_int_equal(r->n_match, 2);
    assert_string_equal(r->match[0], "CUDA out of memory\\. Tried to allocate (?<size>[0-9.]+ [KMGT]i?B)");
    assert_string_equal(r->match[1], "torch\\.OutOfMemoryError");
    assert_int_equal(r->n_if_frame, 2);
    assert_string_equal(r->if_frame[0], "partitioned_param_coordinator");
    assert_string_equal(r->if_frame[1], "stage3\\.py");
    assert_int_equal(r->n_tests, 2);
    assert_string_equal(r->tests[0], "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.35 GiB");
    assert_string_equal(r->tests[1], "CUDA out of memory. Tried to allocate 20.00 MiB");
    assert_string_equal(r->title, "CUDA out of memory");
    /* continuation lines (spaces or a tab) join with exactly one space */
    assert_string_equal(r->means, "The GPU's memory was exhausted by this rank: the model, its "
                                  "activations or a temporary buffer did not fit.");
    assert_string_equal(r->action, "Lower the micro-batch size.");
    assert_string_equal(r->file, path);
    assert_int_equal(r->line, 3);

    r = &c.rules[1];
    assert_string_equal(r->id, "ckpt.save_begin");
    assert_int_equal(r->role, CP_ROLE_PHASE);
    assert_int_equal(r->phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_int_equal(r->state, CP_STATE_BEGIN);
    assert_true(r->nocase);
    assert_int_equal(r->line, 22);
    /* defaults */
    assert_int_equal(r->weight, 50);
    assert_int_equal(r->owner, CP_OWNER_AUTO);
    assert_int_equal(r->kind, CP_KIND_NONE);
    assert_int_equal(r->n_if_frame, 0);
    assert_null(r->title);
    /* only the first '=' separates key and value */
    assert_string_equal(r->match[0], "saving checkpoint a=b");
    assert_string_equal(r->tests[0], "Saving checkpoint a=b to /ckpt");

    assert_int_equal(cp_catalog_find(&c, "cuda.oom"), 0);
    assert_int_equal(cp_catalog_find(&c, "ckpt.save_begin"), 1);
    assert_int_equal(cp_catalog_find(&c, "cuda"), -1);
    assert_int_equal(cp_catalog_find(&c, "nope"), -1);
    cp_catalog_free(&c);
    assert_int_equal(c.n_rules, 0);
    assert_null(c.rules);
}

static void test_crlf_and_state_end(void **state)
{
    (void)state;
    cp_catalog c;
    cp_catalog_init(&c);

    assert_int_equal(load_text(&c, "crlf.rules",
                               "[rule phase.end]\r\n"
                               "role = phase\r\n"
                               "phase = checkpoint_save\r\n"
                               "state = end\r\n"
                               "weight = 0\r\n"
                               "match = checkpoint saved\r\n"
                               "test = checkpoint saved in 3s\r\n"),
                     0);
    assert_int_equal(c.n_rules, 1);
    assert_int_equal(c.rules[0].state, CP_STATE_END);
    assert_int_equal(c.rules[0].weight, 0);
    assert_string_equal(c.rules[0].match[0], "checkpoint saved");
    assert_string_equal(c.rules[0].tests[0], "checkpoint saved in 3s");
    cp_catalog_free(&c);
}

/* "\ " at the start of a value keeps the indentation after it; other
 * backslashes (an expression's "\[") stay as written. */
static void test_value_keeps_escaped_indentation(void **state)
{
    (void)state;
    cp_catalog c;
    cp_catalog_init(&c);

    assert_int_equal(load_text(&c, "indent.rules",
                               "[rule frame.indented]\n"
                               "role  = frame\n"
                               "match = ^    \\w+ \\(\n"
                               "match = \\[rank\\d+\\]\n"
                               "test  = \\    forward (train.py:44)  \n"
                               "test  = \\\tstep (a.py:1)\n"
                               "test  =     trimmed (b.py:2)\n"),
                     0);
    const cp_rule *r = &c.rules[0];
    assert_string_equal(r->match[0], "^    \\w+ \\(");
    assert_string_equal(r->match[1], "\\[rank\\d+\\]");
    assert_int_equal(r->n_tests, 3);
    assert_string_equal(r->tests[0], "    forward (train.py:44)");
    assert_string_equal(r->tests[1], "\tstep (a.py:1)");
    assert_string_equal(r->tests[2], "trimmed (b.py:2)");
    cp_catalog_free(&c);
}

static void test_empty_and_comment_only_files(void **state)
{
    (void)state;
    cp_catalog c;
    cp_catalog_init(&c);

    assert_int_equal(load_text(&c, "empty.rules", ""), 0);
    assert_int_equal(c.n_rules, 0);
    assert_int_equal(load_text(&c, "comments.rules", "# nothing\n\n   \n# here\n"), 0);
    assert_int_equal(c.n_rules, 0);
    /* a final rule without a trailing newline still counts */
    assert_int_equal(load_text(&c, "nonl.rules", "[rule a.b]\nrole = context\nmatch = x y\ntest = x y"), 0);
    assert_int_equal(c.n_rules, 1);
    assert_string_equal(c.rules[0].tests[0], "x y");
    cp_catalog_free(&c);
}

/* ---- errors ------------------------------------------------------------ */

typedef struct bad_case {
    const char *name;
    const char *text;
    int line;             /* expected line in "FILE:LINE: message" */
    const char *message;  /* expected text of the message (a prefix) */
} bad_case;

static const bad_case bad_cases[] = {
    {"unknown key",
     "[rule a.b]\nrole = context\ncolour = red\nmatch = x\ntest = x\n",
     3, "unknown key 'colour'"},
    {"bad role",
     "# c\n[rule a.b]\nrole = boss\nmatch = x\ntest = x\n",
     3, "unknown role 'boss'"},
    {"bad kind",
     "[rule a.b]\nrole = root\nmatch = x\ntest = x\nkind = gpu_on_fire\n",
     5, "unknown kind 'gpu_on_fire'"},
    {"bad owner",
     "[rule a.b]\nrole = context\n\n\nowner = nobody\n",
     5, "unknown owner 'nobody'"},
    {"bad phase",
     "[rule a.b]\nrole = phase\nphase = lunch\n",
     3, "unknown phase 'lunch'"},
    {"bad state",
     "[rule a.b]\nrole = phase\nphase = eval\nstate = middle\n",
     4, "state must be begin or end, not 'middle'"},
    {"weight too high",
     "[rule a.b]\nrole = context\nweight = 101\n",
     3, "weight must be 0-100, not '101'"},
    {"weight negative",
     "[rule a.b]\nrole = context\nweight = -1\n",
     3, "weight must be 0-100, not '-1'"},
    {"weight not a number",
     "[rule a.b]\nrole = context\nweight = heavy\n",
     3, "weight must be 0-100, not 'heavy'"},
    {"missing match",
     "# first\n\n[rule a.b]\nrole = context\ntest = x\n",
     3, "rule 'a.b' has no match"},
    {"missing test",
     "[rule a.b]\nrole = context\nmatch = x\n",
     1, "rule 'a.b' has no test line"},
    {"missing role",
     "[rule a.b]\nmatch = x\ntest = x\n",
     1, "rule 'a.b' has no role"},
    {"root without kind",
     "[rule a.b]\nrole = root\nmatch = x\ntest = x\ntitle = t\nmeans = m\naction = a\n",
     1, "rule 'a.b' (role root) needs a kind"},
    {"root without title",
     "[rule a.b]\nrole = root\nkind = cuda_oom\nmatch = x\ntest = x\nmeans = m\naction = a\n",
     1, "rule 'a.b' (role root) needs title, means and action"},
    {"root without means",
     "[rule a.b]\nrole = root\nkind = cuda_oom\nmatch = x\ntest = x\ntitle = t\naction = a\n",
     1, "rule 'a.b' (role root) needs title, means and action"},
    {"root without action",
     "[rule a.b]\nrole = root\nkind = cuda_oom\nmatch = x\ntest = x\ntitle = t\nmeans = m\n",
     1, "rule 'a.b' (role root) needs title, means and action"},
    {"phase rule with a kind but no texts",
     "[rule a.b]\nrole = phase\nphase = init\nstate = begin\nkind = build_error\nmatch = x\ntest = x\n",
     1, "rule 'a.b' (role phase) has a kind, so needs title, means and action"},
    {"cut without if_frame",
     "[rule a.b]\nrole = root\nkind = checkpoint_io\ncut = yes\nmatch = x\ntest = x\ntitle = t\nmeans = m\naction = a\n",
     1, "rule 'a.b': cut needs role root and an if_frame"},
    {"cut on a cascade",
     "[rule a.b]\nrole = cascade\nkind = nccl_timeout\ncut = yes\nif_frame = y\nmatch = x\ntest = x\ntitle = t\n"
     "means = m\naction = a\n",
     1, "rule 'a.b': cut needs role root and an if_frame"},
    {"in_checkpoint on a cascade",
     "[rule a.b]\nrole = cascade\nkind = nccl_timeout\nin_checkpoint = yes\nmatch = x\ntest = x\ntitle = t\n"
     "means = m\naction = a\n",
     1, "rule 'a.b': in_checkpoint needs role root"},
    {"frame_reach without an if_frame",
     "[rule a.b]\nrole = root\nkind = config_invalid\nframe_reach = 2\nmatch = x\ntest = x\ntitle = t\n"
     "means = m\naction = a\n",
     1, "rule 'a.b': frame_reach needs an if_frame"},
    {"frame_reach out of range",
     "[rule a.b]\nrole = root\nkind = config_invalid\nif_frame = y\nframe_reach = 0\nmatch = x\ntest = x\n",
     5, "frame_reach must be 1-16, not '0'"},
    {"alone on a context line not kept",
     "[rule a.b]\nrole = context\nalone = yes\nmatch = x\ntest = x\n",
     1, "rule 'a.b': alone needs role root or cascade, or a kept context rule"},
    {"under something else than a frame",
     "[rule a.b]\nrole = phase\nphase = backward\nunder = traceback\nmatch = x\ntest = x\n",
     4, "under must be frame, not 'traceback'"},
    {"under = frame on a root",
     "[rule a.b]\nrole = root\nkind = cuda_oom\nunder = frame\nmatch = x\ntest = x\ntitle = t\nmeans = m\naction = a\n",
     1, "rule 'a.b': under = frame needs role phase and no state"},
    {"under = frame opening a phase",
     "[rule a.b]\nrole = phase\nphase = checkpoint_save\nstate = begin\nunder = frame\nmatch = x\ntest = x\n",
     1, "rule 'a.b': under = frame needs role phase and no state"},
    {"cascade without title",
     "[rule a.b]\nrole = cascade\nkind = nccl_timeout\nmatch = x\ntest = x\nmeans = m\naction = a\n",
     1, "rule 'a.b' (role cascade) needs title, means and action"},
    {"key before any header",
     "# leading comment\n\nrole = root\n[rule a.b]\n",
     3, "key outside of a [rule ...] block"},
    {"bad header word",
     "[rul a.b]\nrole = context\n",
     1, "expected a header like [rule some.id]"},
    {"header without closing bracket",
     "# x\n[rule a.b\nrole = context\n",
     2, "expected a header like [rule some.id]"},
    {"header with an empty id",
     "[rule  ]\n",
     1, "bad rule id ''"},
    {"header with a space in the id",
     "[rule a b]\n",
     1, "bad rule id 'a b'"},
    {"line without '='",
     "[rule a.b]\nrole context\n",
     2, "expected key = value"},
};

static void check_error(const bad_case *bc, int idx)
{
    cp_catalog c;
    char name[32], want[PATH_MAX + 128];
    cp_catalog_init(&c);
    snprintf(name, sizeof name, "bad%02d.rules", idx);
    const char *path = write_str(name, bc->text);

    int rc = cp_catalog_load_file(&c, path);
    if (rc != -1)
        fail_msg("case '%s': load returned %d, want -1", bc->name, rc);
    snprintf(want, sizeof want, "%s:%d: %s", path, bc->line, bc->message);
    if (strncmp(c.error, want, strlen(want)) != 0)
        fail_msg("case '%s':\n  got  \"%s\"\n  want \"%s\"", bc->name, c.error, want);
    cp_catalog_free(&c);
}

static void test_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++)
        check_error(&bad_cases[i], (int)i);
}

/* An incomplete rule is reported at its own header, even when the next
 * header (which triggers the check) is further down. */
static void test_error_in_second_rule(void **state)
{
    (void)state;
    cp_catalog c;
    cp_catalog_init(&c);
    const char *path = write_str("second.rules",
                                 ROOT_RULE("a.one", "One")      /* lines 1-8 */
                                 "\n"                           /* 9 */
                                 "[rule a.two]\n"               /* 10 */
                                 "role = context\n"             /* 11 */
                                 "test = x\n"                   /* 12 */
                                 "\n"                           /* 13 */
                                 ROOT_RULE("a.three", "Three")); /* 14- */
    char want[PATH_MAX + 64];

    assert_int_equal(cp_catalog_load_file(&c, path), -1);
    snprintf(want, sizeof want, "%s:10: rule 'a.two' has no match", path);
    assert_string_equal(c.error, want);
    cp_catalog_free(&c);
}

/* A bad value on a key whose value continues is reported at the key. */
static void test_error_line_of_continued_value(void **state)
{
    (void)state;
    cp_catalog c;
    cp_catalog_init(&c);
    const char *path = write_str("cont.rules",
                                 "[rule a.b]\n"
                                 "role = context\n"
                                 "match = x\n"
                                 "owner = user\n"
                                 "   _code\n"
                                 "test = x\n");
    char want[PATH_MAX + 64];

    assert_int_equal(cp_catalog_load_file(&c, path), -1);
    /* the joined value is "user _code" (one space), which is no owner */
    snprintf(want, sizeof want, "%s:4: unknown owner 'user _code'", path);
    assert_string_equal(c.error, want);
    cp_catalog_free(&c);
}

static void test_missing_file(void **state)
{
    (void)state;
    cp_catalog c;
    cp_catalog_init(&c);
    const char *path = at("does-not-exist.rules");
    char want[PATH_MAX + 64];

    assert_int_equal(cp_catalog_load_file(&c, path), -1);
    snprintf(want, sizeof want, "%s:0: cannot open rule file", path);
    assert_memory_equal(c.error, want, strlen(want));
    assert_int_equal(c.n_rules, 0);

    assert_int_equal(cp_catalog_load_dir(&c, at("no-such-folder")), -1);
    assert_non_null(strstr(c.error, "no-such-folder"));
    assert_non_null(strstr(c.error, "cannot open rules folder"));
    cp_catalog_free(&c);
}

/* A successful load clears the message of an earlier failure. */
static void test_error_cleared_by_next_load(void **state)
{
    (void)state;
    cp_catalog c;
    cp_catalog_init(&c);
    assert_int_equal(load_text(&c, "e1.rules", "[rule a.b]\nrole = nope\n"), -1);
    assert_true(c.error[0] != '\0');
    assert_int_equal(load_text(&c, "e2.rules", ROOT_RULE("a.ok", "Ok")), 0);
    assert_string_equal(c.error, "");
    assert_int_equal(cp_catalog_find(&c, "a.ok"), (int)c.n_rules - 1);
    cp_catalog_free(&c);
}

/* ---- replacement and folders ------------------------------------------- */

static void test_later_rule_replaces(void **state)
{
    (void)state;
    cp_catalog c;
    cp_catalog_init(&c);

    assert_int_equal(load_text(&c, "base.rules",
                               ROOT_RULE("x.first", "First")
                               "\n[rule x.ctx]\nrole = context\nmatch = old\ntest = old\n"
                               "\n" ROOT_RULE("x.last", "Last")),
                     0);
    assert_int_equal(c.n_rules, 3);
    int at_ctx = cp_catalog_find(&c, "x.ctx");
    assert_int_equal(at_ctx, 1);

    const char *user = write_str("user.rules",
                                 "[rule x.ctx]\n"
                                 "role = cascade\n"
                                 "kind = nccl_timeout\n"
                                 "weight = 90\n"
                                 "match = new one\n"
                                 "match = new two\n"
                                 "title = New\nmeans = m\naction = a\n"
                                 "test = new one\n");
    assert_int_equal(cp_catalog_load_file(&c, user), 0);
    assert_int_equal(c.n_rules, 3);
    /* same place, new fields only (nothing of the old rule survives) */
    assert_int_equal(cp_catalog_find(&c, "x.ctx"), at_ctx);
    const cp_rule *r = &c.rules[at_ctx];
    assert_int_equal(r->role, CP_ROLE_CASCADE);
    assert_int_equal(r->kind, CP_KIND_NCCL_TIMEOUT);
    assert_int_equal(r->weight, 90);
    assert_int_equal(r->n_match, 2);
    assert_string_equal(r->match[0], "new one");
    assert_string_equal(r->match[1], "new two");
    assert_int_equal(r->n_tests, 1);
    assert_string_equal(r->tests[0], "new one");
    assert_string_equal(r->title, "New");
    assert_string_equal(r->file, user);
    assert_int_equal(r->line, 1);
    /* the neighbours are untouched */
    assert_string_equal(c.rules[0].title, "First");
    assert_string_equal(c.rules[2].title, "Last");
    cp_catalog_free(&c);
}

static void test_same_id_twice_in_one_file(void **state)
{
    (void)state;
    cp_catalog c;
    cp_catalog_init(&c);
    assert_int_equal(load_text(&c, "twice.rules", ROOT_RULE("d.d", "Old") "\n" ROOT_RULE("d.d", "New")), 0);
    assert_int_equal(c.n_rules, 1);
    assert_string_equal(c.rules[0].title, "New");
    assert_int_equal(c.rules[0].line, 10);
    /* ... and it is noted, for rules --check: within one folder it is a slip */
    assert_int_equal(c.n_redefined, 1);
    assert_non_null(strstr(c.redefined[0], "twice.rules:1: rule 'd.d' is defined again at "));
    assert_non_null(strstr(c.redefined[0], "twice.rules:10"));
    cp_catalog_free(&c);
}

/* Many rules: the id index grows several times while a file loads, and
 * finds every rule where it was put, replaced or not. */
static void test_many_rules_found(void **state)
{
    (void)state;
    enum { N = 1000 };
    cp_catalog c;
    cp_catalog_init(&c);
    size_t cap = (size_t)N * 400, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(text + len, cap - len, ROOT_RULE("many.r%d", "T%d") "\n", i, i);
    assert_true(len < cap);
    assert_int_equal(load_text(&c, "many.rules", text), 0);
    free(text);
    assert_int_equal(c.n_rules, N);
    assert_int_equal(load_text(&c, "more.rules", ROOT_RULE("many.r777", "Replaced") "\n" ROOT_RULE("many.new", "New")),
                     0);
    assert_int_equal(c.n_rules, N + 1);
    char id[32];
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "many.r%d", i);
        assert_int_equal(cp_catalog_find(&c, id), i);
    }
    assert_string_equal(c.rules[777].title, "Replaced");
    assert_int_equal(cp_catalog_find(&c, "many.new"), N);
    assert_int_equal(cp_catalog_find(&c, "many.r1000"), -1);
    assert_int_equal(cp_catalog_find(&c, "many."), -1);
    cp_catalog_free(&c);
    /* a freed catalog finds nothing */
    assert_int_equal(cp_catalog_find(&c, "many.r0"), -1);
}

static void test_load_dir_order_and_filter(void **state)
{
    (void)state;
    cp_catalog c;
    cp_catalog_init(&c);
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s", at("rulesdir"));
    assert_int_equal(mkdir(sub, 0755), 0);

    /* Written in the reverse of name order, so readdir order is unlikely
     * to be name order by accident. */
    write_str("rulesdir/20-late.rules", ROOT_RULE("o.shared", "From late") "\n" ROOT_RULE("o.late", "Late"));
    write_str("rulesdir/10-mid.rules", ROOT_RULE("o.shared", "From mid"));
    write_str("rulesdir/01-early.rules", ROOT_RULE("o.early", "Early") "\n" ROOT_RULE("o.shared", "From early"));
    /* not rule files: each would fail the load if it were read */
    write_str("rulesdir/README", "this is not a rule file\n");
    write_str("rulesdir/notes.txt", "[rule broken\n");
    write_str("rulesdir/30-old.rules.bak", "garbage = 1\n");
    write_str("rulesdir/.rules", "garbage = 1\n");

    assert_int_equal(cp_catalog_load_dir(&c, sub), 3);
    assert_int_equal(c.n_rules, 3);
    /* first definition fixes the place, the last file in name order wins */
    assert_int_equal(cp_catalog_find(&c, "o.early"), 0);
    assert_int_equal(cp_catalog_find(&c, "o.shared"), 1);
    assert_int_equal(cp_catalog_find(&c, "o.late"), 2);
    assert_string_equal(c.rules[1].title, "From late");
    assert_non_null(strstr(c.rules[1].file, "20-late.rules"));
    cp_catalog_free(&c);

    /* an error in one file of the folder stops the load with its message */
    write_str("rulesdir/15-bad.rules", "[rule q.q]\nrole = context\nmatch = x\ntest = x\nphase = tea\n");
    cp_catalog_init(&c);
    assert_int_equal(cp_catalog_load_dir(&c, sub), -1);
    assert_non_null(strstr(c.error, "15-bad.rules:5: unknown phase 'tea'"));
    cp_catalog_free(&c);
}

static void test_load_empty_dir(void **state)
{
    (void)state;
    cp_catalog c;
    cp_catalog_init(&c);
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s", at("emptydir"));
    assert_int_equal(mkdir(sub, 0755), 0);
    assert_int_equal(cp_catalog_load_dir(&c, sub), 0);
    assert_int_equal(c.n_rules, 0);
    cp_catalog_free(&c);
}

/* ---- the real catalog --------------------------------------------------- */

static void test_real_rules(void **state)
{
    (void)state;
    cp_catalog c;
    cp_catalog_init(&c);

    int files = cp_catalog_load_dir(&c, CULPRIT_TEST_RULES);
    if (files < 0)
        fail_msg("loading %s: %s", CULPRIT_TEST_RULES, c.error);
    assert_true(files >= 1);
    assert_true(c.n_rules > 20);
    for (size_t i = 0; i < c.n_rules; i++) {
        const cp_rule *r = &c.rules[i];
        assert_non_null(r->id);
        assert_true(r->role > CP_ROLE_NONE && r->role < CP_ROLE_COUNT);
        /* conclusions carry texts only; every other rule matches lines */
        assert_true(r->role == CP_ROLE_CONCLUSION ? r->n_match == 0 : r->n_match > 0 && r->n_tests > 0);
        assert_true(r->weight >= 0 && r->weight <= 100);
        if (r->role == CP_ROLE_ROOT || r->role == CP_ROLE_CASCADE || r->role == CP_ROLE_CONCLUSION) {
            assert_true(r->kind != CP_KIND_NONE);
            assert_non_null(r->title);
            assert_non_null(r->means);
            assert_non_null(r->action);
        }
        /* ids are unique after loading */
        assert_int_equal(cp_catalog_find(&c, r->id), (int)i);
    }
    cp_catalog_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_rule),
        cmocka_unit_test(test_crlf_and_state_end),
        cmocka_unit_test(test_value_keeps_escaped_indentation),
        cmocka_unit_test(test_empty_and_comment_only_files),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_error_in_second_rule),
        cmocka_unit_test(test_error_line_of_continued_value),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_error_cleared_by_next_load),
        cmocka_unit_test(test_later_rule_replaces),
        cmocka_unit_test(test_same_id_twice_in_one_file),
        cmocka_unit_test(test_many_rules_found),
        cmocka_unit_test(test_load_dir_order_and_filter),
        cmocka_unit_test(test_load_empty_dir),
        cmocka_unit_test(test_real_rules),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
