/* test_matcher.c - unit tests of the matcher: one vectorscan pass over a
 * chunk of lines, hits attributed to lines, PCRE2 captures, nocase rules,
 * if_frame conditions, and compile errors that name the rule. The rules
 * are written at run time into a temporary file. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "catalog.h"
#include "matcher.h"

/* Rule indices in the order the rules below are written. */
enum { R_OOM, R_RANK, R_NOCASE, R_FRAME, R_EOL, R_NL, R_CODE, R_COUNT };

static const char test_rules[] =
    "[rule t.oom]\n"
    "role = root\nkind = cuda_oom\ntitle = OOM\nmeans = m\naction = a\n"
    "match = CUDA out of memory\\. Tried to allocate (?<size>[0-9.]+ [KMGT]i?B)\n"
    "match = OutOfMemoryError\n"
    "test = torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    "\n"
    "[rule t.rank]\n"
    "role = identity\n"
    "match = rank(?<rank>[0-9]+) pid (?<pid>[0-9]+)\n"
    "match = \\[(?<rank>[0-9]+)\\]<stderr>\n"
    "test = rank3 pid 4242\n"
    "\n"
    "[rule t.nocase]\n"
    "role = context\nnocase = yes\n"
    "match = training failed\n"
    "test = ERROR Training FAILED\n"
    "\n"
    "[rule t.frame]\n"
    "role = root\nkind = mixed_dtype_gather\ntitle = T\nmeans = m\naction = a\n"
    "match = RuntimeError: expected scalar type\n"
    "if_frame = partitioned_param_coordinator\\.py\n"
    "if_frame = zero/stage3\\.py\", line [0-9]+\n"
    "test = RuntimeError: expected scalar type Half but found Float\n"
    "\n"
    "[rule t.eol]\n"
    "role = context\n"
    "match = FATAL$\n"
    "test = job FATAL\n"
    "\n"
    "[rule t.nl]\n"
    "role = context\n"
    "match = disk full\\n\n"
    "test = disk full\n"
    "\n"
    "[rule t.code]\n"
    "role = context\nnocase = yes\n"
    "match = error code (?<code>[0-9]+)\n"
    "test = ERROR CODE 7\n";

static char rules_path[PATH_MAX];

typedef struct fixture {
    cp_catalog cat;
    cp_matcher *m;
    cp_hit_list hits;
} fixture;

static void write_rules(const char *text)
{
    FILE *f = fopen(rules_path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

static int group_setup(void **state)
{
    (void)state;
    const char *tmp = getenv("TMPDIR");
    snprintf(rules_path, sizeof rules_path, "%s/culprit-matcher-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(rules_path);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    unlink(rules_path);
    return 0;
}

/* Each test gets the test catalog compiled afresh. */
static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    char err[512] = "";
    if (!fx)
        return -1;
    cp_catalog_init(&fx->cat);
    write_rules(test_rules);
    if (cp_catalog_load_file(&fx->cat, rules_path) != 0 || fx->cat.n_rules != R_COUNT) {
        fprintf(stderr, "catalog: %s\n", fx->cat.error);
        cp_catalog_free(&fx->cat);
        free(fx);
        return -1;
    }
    if (cp_matcher_new(&fx->m, &fx->cat, err, sizeof err) != 0) {
        fprintf(stderr, "matcher: %s\n", err);
        cp_catalog_free(&fx->cat);
        free(fx);
        return -1;
    }
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    cp_hit_list_free(&fx->hits);
    cp_matcher_free(fx->m);
    cp_catalog_free(&fx->cat);
    free(fx);
    return 0;
}

/* Asserts that line `i` of the hits is at [start, start+len) of `chunk`,
 * that it is the line `text`, and that its rules are exactly `want`. */
static void check_line(const cp_hit_list *h, size_t i, const char *chunk, const char *text,
                       const uint32_t *want, uint32_t n_want)
{
    assert_true(i < h->n);
    const cp_line_hits *l = &h->lines[i];
    const char *p = strstr(chunk, text);
    assert_non_null(p);
    assert_int_equal(l->start, (size_t)(p - chunk));
    assert_int_equal(l->len, strlen(text));
    assert_memory_equal(chunk + l->start, text, l->len);
    if (l->n_rules != n_want)
        fail_msg("line %zu ('%s'): %u rules, want %u", i, text, l->n_rules, n_want);
    /* every wanted rule exactly once (no duplicates, nothing else) */
    for (uint32_t j = 0; j < n_want; j++) {
        int seen = 0;
        for (uint32_t k = 0; k < l->n_rules; k++)
            seen += l->rules[k] == want[j];
        if (seen != 1)
            fail_msg("line %zu ('%s'): rule %u seen %d times", i, text, want[j], seen);
    }
}

/* Asserts what every hit line of `chunk` must be: a whole line (from just
 * after a '\n' to the next one or the end), numbered by the '\n's before
 * it; and the chunk's '\n's counted in full. */
static void check_numbers(const cp_hit_list *h, const char *chunk, size_t len)
{
    size_t newlines = 0;
    for (size_t i = 0; i < len; i++)
        newlines += chunk[i] == '\n';
    assert_int_equal(h->newlines, newlines);
    for (size_t i = 0; i < h->n; i++) {
        const cp_line_hits *l = &h->lines[i];
        assert_true(l->start == 0 || chunk[l->start - 1] == '\n');
        assert_true(l->start + l->len == len || chunk[l->start + l->len] == '\n');
        assert_null(memchr(chunk + l->start, '\n', l->len));
        size_t before = 0;
        for (size_t k = 0; k < l->start; k++)
            before += chunk[k] == '\n';
        if (l->number != before)
            fail_msg("hit %zu at %zu: line number %zu, want %zu", i, l->start, l->number, before);
    }
}

/* ---- scanning ---------------------------------------------------------- */

static void test_scan_lines(void **state)
{
    fixture *fx = *state;
    static const char chunk[] =
        "CUDA out of memory. Tried to allocate 2.00 GiB; torch.OutOfMemoryError again OutOfMemoryError\n"
        "an ordinary line\n"
        "rank3 pid 4242: Training FAILED\n"
        "\n"
        "[7]<stderr> nothing else here\n"
        "OutOfMemoryError";  /* last line, no newline */

    assert_int_equal(cp_matcher_scan(fx->m, chunk, strlen(chunk), NULL, &fx->hits), 0);
    assert_int_equal(fx->hits.n, 4);
    check_numbers(&fx->hits, chunk, strlen(chunk));
    /* three matches of one rule on the first line count once */
    check_line(&fx->hits, 0, chunk, "CUDA out of memory. Tried to allocate 2.00 GiB; torch.OutOfMemoryError again "
                                    "OutOfMemoryError", (uint32_t[]){R_OOM}, 1);
    check_line(&fx->hits, 1, chunk, "rank3 pid 4242: Training FAILED", (uint32_t[]){R_RANK, R_NOCASE}, 2);
    check_line(&fx->hits, 2, chunk, "[7]<stderr> nothing else here", (uint32_t[]){R_RANK}, 1);
    /* the last line of the chunk, at its very end */
    assert_int_equal(fx->hits.lines[3].start, strlen(chunk) - strlen("OutOfMemoryError"));
    assert_int_equal(fx->hits.lines[3].len, strlen("OutOfMemoryError"));
    assert_int_equal(fx->hits.lines[3].n_rules, 1);
    assert_int_equal(fx->hits.lines[3].rules[0], R_OOM);
}

static void test_scan_first_and_last_line(void **state)
{
    fixture *fx = *state;
    /* a hit on the first byte of the chunk, a trailing newline at the end */
    static const char chunk[] = "OutOfMemoryError\nquiet\nquiet too\nlast: rank0 pid 1\n";

    assert_int_equal(cp_matcher_scan(fx->m, chunk, strlen(chunk), NULL, &fx->hits), 0);
    assert_int_equal(fx->hits.n, 2);
    assert_int_equal(fx->hits.lines[0].start, 0);
    assert_int_equal(fx->hits.lines[0].len, strlen("OutOfMemoryError"));
    assert_int_equal(fx->hits.lines[0].rules[0], R_OOM);
    check_line(&fx->hits, 1, chunk, "last: rank0 pid 1", (uint32_t[]){R_RANK}, 1);

    /* a one-line chunk that is nothing but the match */
    assert_int_equal(cp_matcher_scan(fx->m, "OutOfMemoryError", 16, NULL, &fx->hits), 0);
    assert_int_equal(fx->hits.n, 1);
    assert_int_equal(fx->hits.lines[0].start, 0);
    assert_int_equal(fx->hits.lines[0].len, 16);
}

/* "FATAL$" ends right before the '\n'; "disk full\n" ends right after it.
 * Both belong to the line that holds the text, not to the next one. */
static void test_match_ending_at_newline(void **state)
{
    fixture *fx = *state;
    static const char chunk[] =
        "job FATAL\n"
        "next line\n"
        "disk full\n"
        "after the disk\n"
        "FATAL\n"
        "disk full\n";

    assert_int_equal(cp_matcher_scan(fx->m, chunk, strlen(chunk), NULL, &fx->hits), 0);
    assert_int_equal(fx->hits.n, 4);
    check_numbers(&fx->hits, chunk, strlen(chunk));
    check_line(&fx->hits, 0, chunk, "job FATAL", (uint32_t[]){R_EOL}, 1);
    check_line(&fx->hits, 1, chunk, "disk full", (uint32_t[]){R_NL}, 1);
    assert_int_equal(fx->hits.lines[2].start, strlen("job FATAL\nnext line\ndisk full\nafter the disk\n"));
    assert_int_equal(fx->hits.lines[2].len, 5);
    assert_int_equal(fx->hits.lines[2].rules[0], R_EOL);
    assert_int_equal(fx->hits.lines[3].start, strlen(chunk) - strlen("disk full\n"));
    assert_int_equal(fx->hits.lines[3].len, strlen("disk full"));
    assert_int_equal(fx->hits.lines[3].rules[0], R_NL);

    /* "FATAL" in the middle of a line is no "FATAL$" */
    assert_int_equal(cp_matcher_scan(fx->m, "FATAL error\n", 12, NULL, &fx->hits), 0);
    assert_int_equal(fx->hits.n, 0);
}

static void test_line_numbers(void **state)
{
    fixture *fx = *state;
    char chunk[512];
    int n = snprintf(chunk, sizeof chunk,
                     "disk full\n"                 /* 0: a match ending at the '\n', on the first line */
                     "\n\n"                        /* 1, 2: empty */
                     "OutOfMemoryError\r\n"        /* 3: CRLF, the '\r' stays in the line */
                     "job FATAL\n"                 /* 4: a match ending right before the '\n' */
                     "%0100d OutOfMemoryError\n"   /* 5: a line across two words of the map */
                     "\n"                          /* 6 */
                     "%0200d\n"                    /* 7: quiet, longer than a word */
                     "rank1 pid 2",                /* 8: the last line, no '\n' */
                     0, 0);
    size_t len = (size_t)n;
    assert_int_equal(cp_matcher_scan(fx->m, chunk, len, NULL, &fx->hits), 0);
    check_numbers(&fx->hits, chunk, len);
    static const size_t want_no[] = {0, 3, 4, 5, 8};
    assert_int_equal(fx->hits.n, 5);
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(fx->hits.lines[i].number, want_no[i]);
    check_line(&fx->hits, 0, chunk, "disk full", (uint32_t[]){R_NL}, 1);
    check_line(&fx->hits, 1, chunk, "OutOfMemoryError\r", (uint32_t[]){R_OOM}, 1);
    check_line(&fx->hits, 2, chunk, "job FATAL", (uint32_t[]){R_EOL}, 1);
    check_line(&fx->hits, 4, chunk, "rank1 pid 2", (uint32_t[]){R_RANK}, 1);
    assert_int_equal(fx->hits.lines[3].len, 100 + strlen(" OutOfMemoryError"));

    /* the same text ending with its '\n', and every shorter prefix of it */
    chunk[len++] = '\n';
    for (size_t cut = 0; cut <= len; cut++) {
        assert_int_equal(cp_matcher_scan(fx->m, chunk, cut, NULL, &fx->hits), 0);
        check_numbers(&fx->hits, chunk, cut);
    }
}

static void test_only_newlines(void **state)
{
    fixture *fx = *state;
    char chunk[300];
    memset(chunk, '\n', sizeof chunk);
    assert_int_equal(cp_matcher_scan(fx->m, chunk, sizeof chunk, NULL, &fx->hits), 0);
    assert_int_equal(fx->hits.n, 0);
    assert_int_equal(fx->hits.newlines, sizeof chunk);
    /* "disk full\n" between runs of empty lines, at a word's edge */
    memcpy(chunk + 60, "disk full\n", 10);
    assert_int_equal(cp_matcher_scan(fx->m, chunk, sizeof chunk, NULL, &fx->hits), 0);
    check_numbers(&fx->hits, chunk, sizeof chunk);
    assert_int_equal(fx->hits.n, 1);
    assert_int_equal(fx->hits.lines[0].start, 60);
    assert_int_equal(fx->hits.lines[0].len, 9);
    assert_int_equal(fx->hits.lines[0].number, 60);
    assert_int_equal(fx->hits.newlines, sizeof chunk - 9);
}

/* A chunk of 4 GiB or more is refused before a byte is read: vectorscan
 * would have been handed its length cut to 32 bits. */
static void test_scan_refuses_4gib(void **state)
{
    fixture *fx = *state;
    static const char chunk[] = "disk full\n";
    assert_int_equal(cp_matcher_scan(fx->m, chunk, sizeof chunk - 1, NULL, &fx->hits), 0);
    assert_int_equal(fx->hits.n, 1);
    assert_int_equal(cp_matcher_scan(fx->m, chunk, CP_SCAN_MAX + 1, NULL, &fx->hits), -1);
    assert_int_equal(fx->hits.n, 0);
}

static void test_scan_clears_and_grows(void **state)
{
    fixture *fx = *state;
    assert_int_equal(cp_matcher_scan(fx->m, "OutOfMemoryError\n", 17, NULL, &fx->hits), 0);
    assert_int_equal(fx->hits.n, 1);
    /* hits are cleared by the next scan */
    assert_int_equal(cp_matcher_scan(fx->m, "nothing\nat all\n", 15, NULL, &fx->hits), 0);
    assert_int_equal(fx->hits.n, 0);
    assert_int_equal(cp_matcher_scan(fx->m, "", 0, NULL, &fx->hits), 0);
    assert_int_equal(fx->hits.n, 0);

    /* many hit lines, alternating with quiet ones, stay in line order */
    enum { N = 3000 };
    size_t cap = (size_t)N * 40, len = 0;
    char *big = malloc(cap);
    assert_non_null(big);
    for (int i = 0; i < N; i++)
        len += (size_t)snprintf(big + len, cap - len, "rank%d pid %d\nquiet %d\n", i, 1000 + i, i);
    assert_int_equal(cp_matcher_scan(fx->m, big, len, NULL, &fx->hits), 0);
    assert_int_equal(fx->hits.n, N);
    assert_int_equal(fx->hits.newlines, 2 * N);
    for (size_t i = 0; i < N; i++) {
        const cp_line_hits *l = &fx->hits.lines[i];
        char want[64];
        int n = snprintf(want, sizeof want, "rank%zu pid %zu", i, 1000 + i);
        assert_int_equal(l->len, (size_t)n);
        assert_memory_equal(big + l->start, want, (size_t)n);
        assert_true(l->start == 0 || big[l->start - 1] == '\n');
        assert_int_equal(l->number, 2 * i);
        assert_int_equal(l->n_rules, 1);
        assert_int_equal(l->rules[0], R_RANK);
    }
    free(big);
}

/* ---- captures, nocase, if_frame --------------------------------------- */

static void test_captures(void **state)
{
    fixture *fx = *state;
    cp_captures c;
    const char *line = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.35 GiB. GPU 3";

    memset(&c, 0, sizeof c);
    assert_int_equal(cp_matcher_captures(fx->m, R_OOM, line, strlen(line), &c), 1);
    assert_string_equal(cp_captures_get(&c, "size"), "4.35 GiB");
    assert_null(cp_captures_get(&c, "rank"));

    /* two names from one expression */
    line = "[host] rank12 pid 31337 says hello";
    memset(&c, 0, sizeof c);
    assert_int_equal(cp_matcher_captures(fx->m, R_RANK, line, strlen(line), &c), 2);
    assert_string_equal(cp_captures_get(&c, "rank"), "12");
    assert_string_equal(cp_captures_get(&c, "pid"), "31337");
    assert_null(cp_captures_get(&c, "size"));

    /* the second expression of the rule captures too */
    line = "[5]<stderr> Traceback";
    memset(&c, 0, sizeof c);
    assert_int_equal(cp_matcher_captures(fx->m, R_RANK, line, strlen(line), &c), 1);
    assert_string_equal(cp_captures_get(&c, "rank"), "5");

    /* only `len` bytes of the line are looked at */
    line = "rank7 pid 123456";
    memset(&c, 0, sizeof c);
    assert_int_equal(cp_matcher_captures(fx->m, R_RANK, line, strlen("rank7 pid 12"), &c), 2);
    assert_string_equal(cp_captures_get(&c, "pid"), "12");

    /* a line the rule does not match captures nothing */
    line = "no numbers here";
    memset(&c, 0, sizeof c);
    assert_int_equal(cp_matcher_captures(fx->m, R_RANK, line, strlen(line), &c), 0);
    assert_null(cp_captures_get(&c, "rank"));

    /* a rule without named groups captures nothing even when it matches */
    line = "Training FAILED";
    memset(&c, 0, sizeof c);
    assert_int_equal(cp_matcher_captures(fx->m, R_NOCASE, line, strlen(line), &c), 0);
}

static void test_nocase(void **state)
{
    fixture *fx = *state;
    static const char chunk[] =
        "TRAINING FAILED\n"
        "training failed\n"
        "cuda out of memory. tried to allocate 1.00 GiB\n"  /* t.oom is case-sensitive */
        "outofmemoryerror\n"
        "Error Code 42\n";

    assert_int_equal(cp_matcher_scan(fx->m, chunk, strlen(chunk), NULL, &fx->hits), 0);
    assert_int_equal(fx->hits.n, 3);
    check_line(&fx->hits, 0, chunk, "TRAINING FAILED", (uint32_t[]){R_NOCASE}, 1);
    check_line(&fx->hits, 1, chunk, "training failed", (uint32_t[]){R_NOCASE}, 1);
    check_line(&fx->hits, 2, chunk, "Error Code 42", (uint32_t[]){R_CODE}, 1);

    /* the PCRE2 side of a nocase rule is caseless too */
    cp_captures c;
    memset(&c, 0, sizeof c);
    const char *line = "ERROR CODE 42";
    assert_int_equal(cp_matcher_captures(fx->m, R_CODE, line, strlen(line), &c), 1);
    assert_string_equal(cp_captures_get(&c, "code"), "42");
}

static void test_if_frame(void **state)
{
    fixture *fx = *state;
    const char *yes1 = "  File \"/x/deepspeed/runtime/zero/partitioned_param_coordinator.py\", line 288, in fetch";
    const char *yes2 = "  File \"/x/deepspeed/runtime/zero/stage3.py\", line 1021, in step";
    const char *no1 = "  File \"/home/me/train.py\", line 88, in main";
    const char *no2 = "  File \"/x/deepspeed/runtime/zero/stage3.py\", in step"; /* no line number */

    assert_true(cp_matcher_has_if_frame(fx->m, R_FRAME));
    assert_false(cp_matcher_has_if_frame(fx->m, R_OOM));
    assert_true(cp_matcher_if_frame(fx->m, R_FRAME, yes1, strlen(yes1)));
    assert_true(cp_matcher_if_frame(fx->m, R_FRAME, yes2, strlen(yes2)));
    assert_false(cp_matcher_if_frame(fx->m, R_FRAME, no1, strlen(no1)));
    assert_false(cp_matcher_if_frame(fx->m, R_FRAME, no2, strlen(no2)));
    /* bounded by len: the matching part cut off */
    assert_false(cp_matcher_if_frame(fx->m, R_FRAME, yes1, 20));
    /* a rule without a condition always applies */
    assert_true(cp_matcher_if_frame(fx->m, R_OOM, no1, strlen(no1)));
    assert_true(cp_matcher_if_frame(fx->m, R_OOM, "", 0));
}

/* ---- compile errors ---------------------------------------------------- */

static void test_bad_vectorscan_expression(void **state)
{
    (void)state;
    cp_catalog cat;
    cp_matcher *m = (cp_matcher *)&cat; /* must be reset to NULL */
    char err[512] = "";
    char want[PATH_MAX + 64];

    cp_catalog_init(&cat);
    write_rules("[rule good.one]\nrole = context\nmatch = fine\nmatch = also fine\ntest = fine\n" /* 1-5 */
                "\n"                                                                           /* 6 */
                "[rule bad.lookahead]\n"                                                       /* 7 */
                "role = context\n"
                "match = plain\n"
                "match = a(?=b)\n"
                "test = ab\n");
    assert_int_equal(cp_catalog_load_file(&cat, rules_path), 0);
    assert_int_equal(cp_matcher_new(&m, &cat, err, sizeof err), -1);
    assert_null(m);
    snprintf(want, sizeof want, "%s:7: rule 'bad.lookahead'", rules_path);
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("got \"%s\", want a message starting \"%s\"", err, want);
    /* no error buffer: still a clean failure */
    assert_int_equal(cp_matcher_new(&m, &cat, NULL, 0), -1);
    assert_null(m);
    cp_catalog_free(&cat);
}

/* The step of a progress line: the first expression that matches with its
 * "step" group set gives it, read as an integer; an expression without the
 * group, or with it unset, passes the turn; a name given twice ((?J)) is
 * read as the captures read it; a value that is not a number gives none. */
static void test_step_read(void **state)
{
    (void)state;
    cp_catalog cat;
    cp_matcher *m = NULL;
    char err[512] = "";
    int64_t step = -1;

    cp_catalog_init(&cat);
    write_rules("[rule t.step]\nrole = progress\n"
                "match = epoch (?<epoch>\\d+) done\n"                      /* no step group */
                "match = iter(?:ation (?<step>\\d+)|s left)\n"             /* group may stay unset */
                "match = (?J)(?:it=(?<step>[\\d]+)|step (?<step>\\S+))\n"  /* one name, twice */
                "scan = epoch|iter|it=|step \n"  /* vectorscan takes no (?J) */
                "test = iteration 3\n");
    assert_int_equal(cp_catalog_load_file(&cat, rules_path), 0);
    assert_int_equal(cp_matcher_new(&m, &cat, err, sizeof err), 0);
    cp_scanner *sc = cp_matcher_scanner(m);
#define STEP_OF(line) cp_scanner_step(sc, 0, line, strlen(line), &step, NULL)
    assert_true(STEP_OF("epoch 2 done, iteration 1200 of 5000"));
    assert_int_equal(step, 1200);
    assert_false(STEP_OF("epoch 2 done"));
    assert_true(STEP_OF("iters left; it=77"));  /* the second expression's group unset: the third's */
    assert_int_equal(step, 77);
    assert_true(STEP_OF("step 0042 of the run"));
    assert_int_equal(step, 42);
    assert_false(STEP_OF("step n/a"));
    assert_true(STEP_OF("iteration 000000000000000000000000123 (zero padded past 18 digits)"));
    assert_int_equal(step, 123);
    assert_false(STEP_OF("iteration 99999999999999999999999 overflows"));
#undef STEP_OF
    cp_matcher_free(m);
    cp_catalog_free(&cat);
}

/* A progress expression's `loss` group is read with the step: numbers in
 * any notation, "nan" and "inf" (the values that matter most), and
 * nothing for a line without one or with a value that is no number. */
static void test_loss_read(void **state)
{
    (void)state;
    cp_catalog cat;
    cp_matcher *m = NULL;
    char err[512] = "";
    int64_t step = -1;
    cp_loss loss;

    cp_catalog_init(&cat);
    write_rules("[rule t.step]\nrole = progress\n"
                "match = \\bstep[ =:]+(?<step>\\d+)(?:[^\\n]{0,60}?\\bloss[ =:]+"
                "(?<loss>[-+]?(?:[\\d.]+(?:[eE][-+]?\\d+)?|[a-zA-Z/]+)))?\n"
                "test = step 5 loss 1.25\n");
    assert_int_equal(cp_catalog_load_file(&cat, rules_path), 0);
    assert_int_equal(cp_matcher_new(&m, &cat, err, sizeof err), 0);
    cp_scanner *sc = cp_matcher_scanner(m);
#define LOSS_OF(line) cp_scanner_step(sc, 0, line, strlen(line), &step, &loss)
    assert_true(LOSS_OF("rank 0 step 5 loss 3116404749728698824120074240.0000"));
    assert_int_equal(step, 5);
    assert_true(loss.read);
    assert_true(loss.value > 3e27f && loss.value < 3.2e27f);
    assert_true(LOSS_OF("step: 9  loss: 1.2E+01  grad_norm: 2.4"));
    assert_true(loss.read && loss.value == 12.0f);
    assert_true(LOSS_OF("step=6 loss=nan"));
    assert_true(loss.read && isnan(loss.value));
    assert_true(LOSS_OF("step 7 loss -inf"));
    assert_true(loss.read && isinf(loss.value) && loss.value < 0);
    assert_true(LOSS_OF("step 8 | lr 3e-05"));
    assert_false(loss.read);
    assert_true(LOSS_OF("step 9 loss n/a"));
    assert_false(loss.read);
#undef LOSS_OF
    /* within 22 digits of scale a value reads as strtod reads it (one
     * rounding), beyond them within a float's precision */
    static const char *const exact[] = {"2.2403", "1.700e-06", "0.000001", "3e22", "123456.789e-20",
                                        "-7.5E+3", "9007199254740993"};
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
        cp_loss l = cp_loss_parse(exact[i], strlen(exact[i]));
        assert_true(l.read);
        assert_true(l.value == (float)strtod(exact[i], NULL));
    }
    cp_loss tiny = cp_loss_parse("1.5e-30", 7), huge = cp_loss_parse("2.5e30", 6);
    assert_true(tiny.read && fabsf(tiny.value / 1.5e-30f - 1) < 1e-6f);
    assert_true(huge.read && fabsf(huge.value / 2.5e30f - 1) < 1e-6f);
    cp_matcher_free(m);
    cp_catalog_free(&cat);
}

/* `scan`: vectorscan finds lines by the cheap expression (a superset);
 * captures and confirmation use `match`. A progress line is confirmed
 * when its step is read, any other at the scan. */
static void test_scan_expression(void **state)
{
    (void)state;
    cp_catalog cat;
    cp_matcher *m = NULL;
    cp_hit_list hits = {0};
    char err[512] = "";
    static const char chunk[] =
        "[INFO] step 12/100 | loss 1.5\n"
        "[INFO] timestep: 7 of the scheduler\n"
        "[INFO] nothing to see\n";

    cp_catalog_init(&cat);
    write_rules("[rule t.step]\nrole = progress\n"
                "match = \\bstep[ =:]+(?<step>\\d+)\n"
                "scan = step[ =:]+\\d\n"
                "test = step 3\n");
    assert_int_equal(cp_catalog_load_file(&cat, rules_path), 0);
    assert_int_equal(cp_matcher_new(&m, &cat, err, sizeof err), 0);
    assert_int_equal(cp_matcher_scan(m, chunk, strlen(chunk), NULL, &hits), 0);
    assert_int_equal(hits.n, 2); /* "timestep: 7" passes the scan... */
    const char *second = chunk + hits.lines[1].start;
    assert_true(cp_matcher_confirms(m, 0, chunk, hits.lines[0].len));
    assert_false(cp_matcher_confirms(m, 0, second, hits.lines[1].len)); /* ...not the match */

    cp_captures c;
    memset(&c, 0, sizeof c);
    assert_int_equal(cp_matcher_captures(m, 0, chunk, hits.lines[0].len, &c), 1);
    assert_string_equal(cp_captures_get(&c, "step"), "12");
    memset(&c, 0, sizeof c);
    assert_int_equal(cp_matcher_captures(m, 0, second, hits.lines[1].len, &c), 0);
    cp_hit_list_free(&hits);
    cp_matcher_free(m);
    cp_catalog_free(&cat);

    /* any other rule: the scan itself drops what `match` does not confirm */
    static const char frames[] =
        "    forward (/x/train.py:44)\n"
        "    loss.backward()\n"          /* passes the scan, not the match */
        "[INFO] step (train.py:3)\n";     /* no indentation: not even scanned */
    cp_catalog_init(&cat);
    write_rules("[rule t.frame]\nrole = frame\n"
                "match = ^\\s*(?<func>[\\w.]+) \\((?<file>[^:()]+\\.py):(?<line>\\d+)\\)\\s*$\n"
                "scan = ^\\s+[\\w.]+[ (]\n"
                "test =     forward (/x/train.py:44)\n");
    assert_int_equal(cp_catalog_load_file(&cat, rules_path), 0);
    assert_int_equal(cp_matcher_new(&m, &cat, err, sizeof err), 0);
    assert_int_equal(cp_matcher_scan(m, frames, strlen(frames), NULL, &hits), 0);
    assert_int_equal(hits.n, 1);
    assert_int_equal(hits.lines[0].start, 0);
    assert_int_equal(hits.lines[0].n_rules, 1);
    cp_hit_list_free(&hits);
    cp_matcher_free(m);
    cp_catalog_free(&cat);
}

/* What vectorscan scans for: a trailing repeat cut to one, and nothing
 * else; escaped characters are never taken for operators. */
static void test_scan_form(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"frame #\\d+: (?<func>\\S+)", "frame #\\d+: (?<func>\\S)"},
        {"\\] zero checkpoint saved \\S+", "\\] zero checkpoint saved \\S"},
        {"busId (?<busid>[0-9a-fA-F]+)", "busId (?<busid>[0-9a-fA-F])"},
        {"oom-kill:.*", "oom-kill:"},
        {"Killed process\\s*", "Killed process"},
        {"(?:ab)+", "(?:ab)"},
        {"step (?<step>\\d+)$", "step (?<step>\\d+)$"},   /* anchored: one report per line */
        {"a\\+", "a\\+"},                                  /* an escaped plus is a plus */
        {"a\\\\+", "a\\\\"},                               /* an escaped backslash, repeated */
        {"dots\\.*", "dots\\.*"},
        {"\\d+ (?:x|y)", "\\d+ (?:x|y)"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = cp_matcher_scan_form(cases[i][0]);
        assert_non_null(got);
        assert_string_equal(got, cases[i][1]);
        free(got);
    }
}

/* With its trailing repeat cut for vectorscan, a rule still hits each of
 * its lines once, and its captures still come from the whole expression
 * (the whole name, not its first character). */
static void test_trailing_repeat_hits_once(void **state)
{
    (void)state;
    cp_catalog cat;
    cp_matcher *m = NULL;
    cp_hit_list hits;
    char error[512] = "";
    memset(&hits, 0, sizeof hits);
    cp_catalog_init(&cat);
    write_rules("[rule t.cppframe]\nrole = frame\n"
                "match = frame #\\d+: (?<func>\\S+)\n"
                "test = frame #0: c10::Error::Error(c10::SourceLocation)\n");
    assert_int_equal(cp_catalog_load_file(&cat, rules_path), 0);
    assert_int_equal(cp_matcher_new(&m, &cat, error, sizeof error), 0);
    const char *data = "frame #0: c10::Error::Error(c10::SourceLocation)\n"
                       "no frame here\n"
                       "frame #1: c10d::ProcessGroupNCCL::watchdogHandler()\n";
    assert_int_equal(cp_matcher_scan(m, data, strlen(data), NULL, &hits), 0);
    assert_int_equal(hits.n, 2);
    assert_int_equal(hits.lines[0].n_rules, 1);
    assert_int_equal(hits.lines[1].start, strlen("frame #0: c10::Error::Error(c10::SourceLocation)\nno frame here\n"));
    cp_captures c;
    memset(&c, 0, sizeof c);
    const char *line = data + hits.lines[1].start;
    assert_int_equal(cp_matcher_captures(m, 0, line, hits.lines[1].len, &c), 1);
    assert_string_equal(cp_captures_get(&c, "func"), "c10d::ProcessGroupNCCL::watchdogHandler()");
    cp_hit_list_free(&hits);
    cp_matcher_free(m);
    cp_catalog_free(&cat);
}

/* The matcher refuses `rules`, naming the rule at line `line` with `id`. */
static void assert_matcher_refuses(const char *rules, int line, const char *id)
{
    cp_catalog cat;
    cp_matcher *m = NULL;
    char err[512] = "";
    char want[PATH_MAX + 64];

    cp_catalog_init(&cat);
    write_rules(rules);
    assert_int_equal(cp_catalog_load_file(&cat, rules_path), 0);
    assert_int_equal(cp_matcher_new(&m, &cat, err, sizeof err), -1);
    assert_null(m);
    snprintf(want, sizeof want, "%s:%d: rule '%s'", rules_path, line, id);
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("got \"%s\", want a message starting \"%s\"", err, want);
    cp_catalog_free(&cat);
}

static void test_bad_if_frame_expression(void **state)
{
    (void)state;
    assert_matcher_refuses("[rule ok.one]\nrole = context\nmatch = fine\ntest = fine\n"
                           "[rule bad.frame]\n" /* 5 */
                           "role = context\n"
                           "match = fine too\n"
                           "if_frame = (unclosed\n"
                           "test = fine too\n",
                           5, "bad.frame");
}

/* A rule with a `scan` has its `match` compiled only when a line first
 * needs it, but a bad one is still named when the matcher is made. */
static void test_bad_scan_confirmation(void **state)
{
    (void)state;
    assert_matcher_refuses("[rule ok.one]\nrole = context\nmatch = fine\ntest = fine\n"
                           "[rule bad.confirm]\n" /* 5 */
                           "role = context\n"
                           "match = step (?<n>\\d+\n"   /* the group is never closed */
                           "scan = step \\d\n"
                           "test = step 3\n",
                           5, "bad.confirm");
}

static void test_empty_catalog(void **state)
{
    (void)state;
    cp_catalog cat;
    cp_matcher *m = (cp_matcher *)&cat;
    char err[128] = "";

    cp_catalog_init(&cat);
    assert_int_equal(cp_matcher_new(&m, &cat, err, sizeof err), -1);
    assert_null(m);
    assert_string_equal(err, "the rule catalog is empty");
    assert_int_equal(cp_matcher_new(&m, &cat, NULL, 0), -1);
    cp_matcher_free(NULL); /* accepted */
    cp_catalog_free(&cat);
}

/* A line holds CP_LINE_RULES_MAX rules; two more that weigh more push out
 * the lightest, so a paste that ran messages together keeps the ones that
 * say most (the catalog order of the rest is kept). */
static void test_full_line_keeps_the_heaviest(void **state)
{
    (void)state;
    enum { N = CP_LINE_RULES_MAX + 2 };
    char text[4096] = "", line[512] = "";
    size_t n = 0, k = 0;
    for (int i = 0; i < N; i++) {
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "[rule t.w%d]\nrole = context\nweight = %d\nmatch = word%c\ntest = word%c\n\n", i,
                              5 * (i + 1), 'a' + i, 'a' + i);
        k += (size_t)snprintf(line + k, sizeof line - k, "word%c ", 'a' + i);
    }
    line[k - 1] = '\n';
    write_rules(text);
    cp_catalog cat;
    cp_matcher *m = NULL;
    cp_hit_list hits = {0};
    char err[512] = "";
    cp_catalog_init(&cat);
    assert_int_equal(cp_catalog_load_file(&cat, rules_path), 0);
    assert_int_equal(cp_matcher_new(&m, &cat, err, sizeof err), 0);
    assert_int_equal(cp_matcher_scan(m, line, strlen(line), NULL, &hits), 0);
    assert_int_equal(hits.n, 1);
    assert_int_equal(hits.lines[0].n_rules, CP_LINE_RULES_MAX);
    for (uint32_t i = 0; i < CP_LINE_RULES_MAX; i++)
        assert_int_equal(hits.lines[0].rules[i], i + 2);   /* all but t.w0 and t.w1 */
    cp_hit_list_free(&hits);
    cp_matcher_free(m);
    cp_catalog_free(&cat);
}

/* A library rule reads frames' file paths, never log lines: the scan
 * does not report it, and the path check does. */
static void test_library_rule_reads_paths_not_lines(void **state)
{
    (void)state;
    cp_catalog cat;
    cp_matcher *m = NULL;
    cp_hit_list hits = {0};
    char err[512] = "";
    cp_catalog_init(&cat);
    write_rules("[rule library.ours]\nrole = library\nmatch = ^/opt/mlplatform/\n"
                "test = /opt/mlplatform/trainer/loop.py\n\n"
                "[rule some.error]\nrole = root\nkind = python_exception\nmatch = boom\n"
                "title = t\nmeans = m\naction = a\ntest = boom\n");
    assert_int_equal(cp_catalog_load_file(&cat, rules_path), 0);
    assert_int_equal(cp_matcher_new(&m, &cat, err, sizeof err), 0);
    const char line[] = "/opt/mlplatform/trainer/loop.py boom\n";
    assert_int_equal(cp_matcher_scan(m, line, strlen(line), NULL, &hits), 0);
    assert_int_equal(hits.n, 1);
    assert_int_equal(hits.lines[0].n_rules, 1);
    assert_int_equal(hits.lines[0].rules[0], 1);
    assert_true(cp_matcher_is_library(m, "/opt/mlplatform/trainer/loop.py"));
    assert_false(cp_matcher_is_library(m, "/home/me/train.py"));
    assert_false(cp_matcher_is_library(m, NULL));
    cp_hit_list_free(&hits);
    cp_matcher_free(m);
    cp_catalog_free(&cat);
}

/* The real catalog compiles, and each rule hits its own test lines. */
typedef struct text_buf {
    char *data;
    size_t cap;
} text_buf;

/* Whether `rule` hits `line` scanned between `before` and `after` bytes
 * of filler lines (each "...\n", no rule's text). */
static bool hits_test_line(cp_matcher *m, cp_hit_list *hits, uint32_t rule, const char *line, size_t before,
                           size_t after, text_buf *buf)
{
    const size_t len = strlen(line), n = before + len + 1 + after;
    if (n > buf->cap) {
        buf->data = realloc(buf->data, n);
        assert_non_null(buf->data);
        buf->cap = n;
    }
    memset(buf->data, '.', n);
    if (before)
        buf->data[before - 1] = '\n';
    memcpy(buf->data + before, line, len);
    buf->data[before + len] = '\n';
    if (after)
        buf->data[n - 1] = '\n';
    assert_int_equal(cp_matcher_scan(m, buf->data, n, NULL, hits), 0);
    for (size_t k = 0; k < hits->n; k++)
        if (hits->lines[k].start == before)
            for (uint32_t j = 0; j < hits->lines[k].n_rules; j++)
                if (hits->lines[k].rules[j] == rule)
                    return true;
    return false;
}

/* The built-in catalog (the source tree's rules/) and its matcher. */
static void load_real_catalog(cp_catalog *cat, cp_matcher **m)
{
    char err[512] = "";
    cp_catalog_init(cat);
    if (cp_catalog_load_dir(cat, CULPRIT_TEST_RULES) < 0)
        fail_msg("%s", cat->error);
    if (cp_matcher_new(m, cat, err, sizeof err) != 0)
        fail_msg("%s", err);
}

static void test_real_catalog_hits_its_tests(void **state)
{
    static const size_t fill[] = { 0, 1, 15, 31, 63, 64, 65, 100, 127 };
    text_buf buf = { NULL, 0 };
    (void)state;
    cp_catalog cat;
    cp_matcher *m = NULL;
    cp_hit_list hits = {0};

    load_real_catalog(&cat, &m);
    for (size_t i = 0; i < cat.n_rules; i++) {
        const cp_rule *r = &cat.rules[i];
        for (size_t t = 0; t < r->n_tests; t++) {
            if (r->role == CP_ROLE_LIBRARY) {   /* its tests are frames' file paths */
                if (!cp_matcher_library_rule(m, (uint32_t)i, r->tests[t]))
                    fail_msg("library rule %s misses its test path '%s'", r->id, r->tests[t]);
                continue;
            }
            /* alone, and with lines of filler around it: vectorscan's
             * SIMD builds read 16 to 64 bytes at a time, and Debian's
             * AVX-512 build missed lines at some places in a buffer
             * (hs_target.h) */
            for (size_t b = 0; b < sizeof fill / sizeof fill[0]; b++)
                for (size_t e = 0; e < sizeof fill / sizeof fill[0]; e++) {
                    if (!hits_test_line(m, &hits, (uint32_t)i, r->tests[t], fill[b], fill[e], &buf))
                        fail_msg("rule %s misses its test line '%s' after %zu and before %zu bytes", r->id,
                                 r->tests[t], fill[b], fill[e]);
                }
        }
    }
    free(buf.data);
    cp_hit_list_free(&hits);
    cp_matcher_free(m);
    cp_catalog_free(&cat);
}

/* The built-in tqdm rule reads a step from bars counting iterations, the
 * training loop's, and none from bars of examples (datasets' map) or
 * bytes (a download): preparing data is no training step. */
static void test_real_catalog_tqdm_steps(void **state)
{
    (void)state;
    cp_catalog cat;
    cp_matcher *m = NULL;
    int64_t step = -1;

    load_real_catalog(&cat, &m);
    int at = cp_catalog_find(&cat, "progress.tqdm");
    assert_true(at >= 0);
    cp_scanner *sc = cp_matcher_scanner(m);
#define STEP_OF(line) cp_scanner_step(sc, (uint32_t)at, line, strlen(line), &step, NULL)
    assert_true(STEP_OF(" 23%|\xe2\x96\x88\xe2\x96\x8e       | 470/2000 [33:25<1:48:49,  4.27s/it]"));
    assert_int_equal(step, 470);
    assert_true(STEP_OF("Epoch 1:  45%|####5     | 45/100 [00:10<00:12,  4.40it/s, loss=2.31, v_num=0]"));
    assert_int_equal(step, 45);
    /* field case hr-02: datasets' map on the main process */
    assert_false(STEP_OF("Tokenizing Prompts (num_proc=64):  92%|#########1| 328986/359152 [29:58<12:05, "
                         "41.59 examples/s]"));
    assert_false(STEP_OF("Downloading: 100%|##########| 1.20G/1.20G [00:40<00:00, 30.1MB/s]"));
#undef STEP_OF
    /* Slurm's job-step id is no training step (field case if-03) */
    at = cp_catalog_find(&cat, "progress.step");
    assert_true(at >= 0);
    const char *slurm = "slurmstepd: error: *** STEP 1250740.1 ON ptyche0181 CANCELLED AT 2025-11-24T22:14:50 "
                        "DUE TO TIME LIMIT ***";
    assert_false(cp_scanner_step(sc, (uint32_t)at, slurm, strlen(slurm), &step, NULL));
    const char *train = "[rank0] step 120. loss 2.01";
    assert_true(cp_scanner_step(sc, (uint32_t)at, train, strlen(train), &step, NULL));
    assert_int_equal(step, 120);
    /* "global_step" counts (its "global_" a lookbehind), another word
     * ending in "step" does not, and the first of the two forms wins */
    cp_loss loss;
    const char *global = "[1] global_step=7, preemption_count=0, train/loss=10.99";
    assert_true(cp_scanner_step(sc, (uint32_t)at, global, strlen(global), &step, &loss));
    assert_int_equal(step, 7);
    const char *upper = "GLOBAL_STEP: 8 | loss: 2.5";
    assert_true(cp_scanner_step(sc, (uint32_t)at, upper, strlen(upper), &step, &loss));
    assert_int_equal(step, 8);
    assert_true(loss.read && loss.value == 2.5f);
    const char *other = "max_step: 500, warmup_step=20";
    assert_false(cp_scanner_step(sc, (uint32_t)at, other, strlen(other), &step, NULL));
    const char *both = "x_global_step 3 then global_step 4 then step 5";
    assert_true(cp_scanner_step(sc, (uint32_t)at, both, strlen(both), &step, NULL));
    assert_int_equal(step, 4);
    cp_matcher_free(m);
    cp_catalog_free(&cat);
}

/* Lines that look like a rule's but are not its failure: NCCL names the
 * optional rdma-core verbs an older libmlx5 lacks ("undefined symbol"),
 * which no loader error is (NVIDIA/nccl#2213). */
static void test_real_catalog_leaves_lookalikes(void **state)
{
    (void)state;
    text_buf buf = { NULL, 0 };
    cp_catalog cat;
    cp_matcher *m = NULL;
    cp_hit_list hits = {0};

    load_real_catalog(&cat, &m);
    int at = cp_catalog_find(&cat, "deepspeed.op_import_failed");
    assert_true(at >= 0);
    assert_false(hits_test_line(m, &hits, (uint32_t)at,
                                "dlvsym failed on mlx5dv_reg_dmabuf_mr - /lib/aarch64-linux-gnu/libmlx5.so: undefined "
                                "symbol: mlx5dv_reg_dmabuf_mr, version MLX5_1.25",
                                0, 0, &buf));
    assert_true(hits_test_line(m, &hits, (uint32_t)at,
                               "ImportError: /opt/x/flash_attn_2_cuda.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
                               0, 0, &buf));
    free(buf.data);
    cp_hit_list_free(&hits);
    cp_matcher_free(m);
    cp_catalog_free(&cat);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_scan_lines, setup, teardown),
        cmocka_unit_test(test_full_line_keeps_the_heaviest),
        cmocka_unit_test(test_real_catalog_tqdm_steps),
        cmocka_unit_test_setup_teardown(test_scan_first_and_last_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_match_ending_at_newline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_clears_and_grows, setup, teardown),
        cmocka_unit_test_setup_teardown(test_line_numbers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_only_newlines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_scan_refuses_4gib, setup, teardown),
        cmocka_unit_test_setup_teardown(test_captures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nocase, setup, teardown),
        cmocka_unit_test_setup_teardown(test_if_frame, setup, teardown),
        cmocka_unit_test(test_bad_vectorscan_expression),
        cmocka_unit_test(test_scan_expression),
        cmocka_unit_test(test_step_read),
        cmocka_unit_test(test_loss_read),
        cmocka_unit_test(test_scan_form),
        cmocka_unit_test(test_trailing_repeat_hits_once),
        cmocka_unit_test(test_bad_if_frame_expression),
        cmocka_unit_test(test_bad_scan_confirmation),
        cmocka_unit_test(test_empty_catalog),
        cmocka_unit_test(test_library_rule_reads_paths_not_lines),
        cmocka_unit_test(test_real_catalog_hits_its_tests),
        cmocka_unit_test(test_real_catalog_leaves_lookalikes),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
