/* test_prepare.c - unit tests of chunk preparation: line numbers, parsed
 * prefixes, and progress thinning (which lines are skipped, what weight
 * the kept ones carry), on lines in the format of a torchrun + srun log,
 * scanned with the real rule catalog. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "frame.h"
#include "matcher.h"
#include "prepare.h"
#include "util/strutil.h"

typedef struct fixture {
    cp_catalog cat;
    cp_matcher *m;
    cp_hit_list hits;
    cp_prepared prep;
} fixture;

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    char err[512] = "";
    if (!fx)
        return -1;
    cp_catalog_init(&fx->cat);
    if (cp_catalog_load_dir(&fx->cat, CULPRIT_TEST_RULES) <= 0 ||
        cp_matcher_new(&fx->m, &fx->cat, err, sizeof err) != 0) {
        fprintf(stderr, "rules: %s %s\n", fx->cat.error, err);
        return -1;
    }
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    cp_prepared_free(&fx->prep);
    cp_hit_list_free(&fx->hits);
    cp_matcher_free(fx->m);
    cp_catalog_free(&fx->cat);
    free(fx);
    return 0;
}

#define STEP(task, rank, sec, step) \
    task ": [rank" rank "]:[2024-12-21 03:13:" sec ",129] [INFO] [train.py:287:train] step " step "/40000 | loss 1.57\n"

/* Rank 3 and rank 5 log steps; rank 0 also draws a tqdm bar (no level, no
 * time: bare, kept, and it does not end the run); a line that is not hit
 * sits in between; an error line of rank 5 ends the first run. */
static const char chunk[] =
    STEP(" 0", "3", "40", "10")                                 /* 1: first of rank 3 */
    STEP(" 0", "5", "40", "10")                                 /* 2: first of rank 5 */
    STEP(" 0", "3", "41", "11")                                 /* 3: skipped */
    " 0: [rank0]: 11%|#         | 12/40000 [0:01:22<68:08:40,  6.95s/it]\n" /* 4: bare */
    "just words, no rule\n"                                     /* 5: not a hit */
    STEP(" 0", "3", "42", "12")                                 /* 6: skipped */
    STEP(" 0", "5", "42", "11")                                 /* 7: last of rank 5 */
    STEP(" 0", "3", "43", "13")                                 /* 8: last of rank 3, for 3 */
    " 0: [rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n" /* 9 */
    STEP(" 0", "3", "45", "14")                                 /* 10: a new run */
    STEP(" 0", "3", "46", "15")                                 /* 11: skipped */
    STEP(" 0", "3", "47", "16");                                /* 12: last, for 2 */

static void scan_and_prepare(fixture *fx, bool thin)
{
    assert_int_equal(cp_matcher_scan(fx->m, chunk, strlen(chunk), NULL, &fx->hits), 0);
    assert_int_equal(cp_prepare(&fx->cat, cp_matcher_scanner(fx->m), chunk, 100, &fx->hits, thin, &fx->prep), 0);
    assert_int_equal(fx->prep.n, fx->hits.n);
}

static void test_line_numbers_and_prefixes(void **state)
{
    fixture *fx = *state;
    scan_and_prepare(fx, false);
    assert_int_equal(fx->hits.n, 11); /* every line but the plain one */
    static const uint64_t want_no[] = {100, 101, 102, 103, 105, 106, 107, 108, 109, 110, 111};
    for (size_t i = 0; i < fx->prep.n; i++) {
        assert_int_equal(fx->prep.lines[i].no, want_no[i]);
        assert_int_equal(fx->prep.lines[i].weight, 1);
    }
    assert_int_equal(fx->hits.newlines, 12);
    const cp_prefixes *first = &fx->prep.lines[0].parsed;
    assert_int_equal(first->rank, 3);
    assert_int_equal(first->task, 0);
    assert_int_equal(first->level, 'I');
    assert_int_not_equal(first->time.kind, CP_TS_NONE);
    const cp_prefixes *bar = &fx->prep.lines[3].parsed;
    assert_int_equal(bar->rank, 0);
    assert_int_equal(bar->level, 0);
    assert_int_equal(bar->time.kind, CP_TS_NONE);
}

static void test_thinning_keeps_first_and_last_per_writer(void **state)
{
    fixture *fx = *state;
    scan_and_prepare(fx, true);
    /* hit index:               1  2  3  4  6  7  8  9 10 11 12 (line) */
    static const uint32_t want[] = {1, 1, 0, 1, 0, 1, 3, 1, 1, 0, 2};
    uint32_t total = 0;
    for (size_t i = 0; i < fx->prep.n; i++) {
        if (fx->prep.lines[i].weight != want[i])
            fail_msg("hit %zu (line %llu): weight %u, want %u", i, (unsigned long long)fx->prep.lines[i].no,
                     fx->prep.lines[i].weight, want[i]);
        total += fx->prep.lines[i].weight;
    }
    assert_int_equal(total, fx->hits.n); /* hit counts stay exact */
    /* the skipped lines, as runs; the others, as the kept list */
    assert_int_equal(fx->prep.n_skips, 3);
    static const uint32_t want_skips[][2] = {{2, 3}, {4, 5}, {9, 10}};
    for (size_t r = 0; r < 3; r++) {
        const cp_skip *sk = &fx->prep.skips[r];
        assert_int_equal(sk->from, want_skips[r][0]);
        assert_int_equal(sk->to, want_skips[r][1]);
        assert_int_equal(sk->first_timed, sk->from); /* each line has its time */
        assert_int_equal(sk->last_timed, sk->to - 1);
    }
    assert_int_equal(fx->prep.n_kept, fx->prep.n - 3);
    for (size_t k = 0, i = 0; k < fx->prep.n_kept; k++, i++) {
        while (fx->prep.lines[i].weight == 0)
            i++;
        assert_int_equal(fx->prep.kept[k], i);
    }
}

static void test_thinning_a_longer_run(void **state)
{
    fixture *fx = *state;
    /* 4 lines of one writer: the middle two go, the last stands for 3 */
    static const char three[] = STEP(" 1", "9", "01", "1") STEP(" 1", "9", "02", "2") STEP(" 1", "9", "03", "3")
        STEP(" 1", "9", "04", "4");
    assert_int_equal(cp_matcher_scan(fx->m, three, strlen(three), NULL, &fx->hits), 0);
    assert_int_equal(cp_prepare(&fx->cat, cp_matcher_scanner(fx->m), three, 1, &fx->hits, true, &fx->prep), 0);
    assert_int_equal(fx->prep.n, 4);
    assert_int_equal(fx->prep.lines[0].weight, 1);
    assert_int_equal(fx->prep.lines[1].weight, 0);
    assert_int_equal(fx->prep.lines[2].weight, 0);
    assert_int_equal(fx->prep.lines[3].weight, 3);
}

/* ROUNDS rounds of one progress line from each of RANKS ranks, as in a
 * combined log; *len gets its length. Caller frees. */
static char *progress_rounds(int ranks, int rounds, size_t *len)
{
    size_t cap = (size_t)ranks * (size_t)rounds * 128;
    char *text = malloc(cap);
    assert_non_null(text);
    *len = 0;
    for (int round = 0; round < rounds; round++)
        for (int r = 0; r < ranks; r++)
            *len += (size_t)snprintf(text + *len, cap - *len,
                                     "[rank%d]:[2024-12-21 03:13:4%d,129] [INFO] [train.py:287:train] step %d/400\n",
                                     r, round, round + 1);
    return text;
}

/* More identities in one run than the table groups (even at its largest,
 * after the run has made it grow): the ones beyond it
 * are kept whole, and the counts still add up. */
static void test_thinning_more_writers_than_the_table(void **state)
{
    fixture *fx = *state;
    enum { RANKS = 9000, ROUNDS = 3 };
    size_t len;
    char *text = progress_rounds(RANKS, ROUNDS, &len);
    assert_int_equal(cp_matcher_scan(fx->m, text, len, NULL, &fx->hits), 0);
    assert_int_equal(fx->hits.n, RANKS * ROUNDS);
    assert_int_equal(cp_prepare(&fx->cat, cp_matcher_scanner(fx->m), text, 1, &fx->hits, true, &fx->prep), 0);
    uint64_t total = 0;
    for (size_t i = 0; i < fx->prep.n; i++)
        total += fx->prep.lines[i].weight;
    assert_int_equal(total, RANKS * ROUNDS);
    /* rank 0 was grouped: first, skipped, last for two */
    assert_int_equal(fx->prep.lines[0].weight, 1);
    assert_int_equal(fx->prep.lines[RANKS].weight, 0);
    assert_int_equal(fx->prep.lines[2 * RANKS].weight, 2);
    /* the last rank did not fit: every line kept */
    for (int round = 0; round < ROUNDS; round++)
        assert_int_equal(fx->prep.lines[(size_t)round * RANKS + RANKS - 1].weight, 1);
    free(text);
}

/* The table starts small (64 slots) and grows within the run that fills
 * it: even in the first chunk every one of 2,000 ranks is grouped. */
static void test_thinning_table_grows_to_the_writers(void **state)
{
    fixture *fx = *state;
    enum { RANKS = 2000, ROUNDS = 3 };
    size_t len;
    char *text = progress_rounds(RANKS, ROUNDS, &len);
    assert_int_equal(cp_matcher_scan(fx->m, text, len, NULL, &fx->hits), 0);
    assert_int_equal(cp_prepare(&fx->cat, cp_matcher_scanner(fx->m), text, 1, &fx->hits, true, &fx->prep), 0);
    for (int r = 0; r < RANKS; r++) {
        assert_int_equal(fx->prep.lines[r].weight, 1);               /* first */
        assert_int_equal(fx->prep.lines[RANKS + r].weight, 0);       /* skipped */
    }
    assert_int_equal(fx->prep.n_kept, 2 * RANKS);
    assert_int_equal(fx->prep.lines[2 * RANKS + RANKS - 1].weight, 2);
    uint64_t total = 0;
    for (size_t i = 0; i < fx->prep.n; i++)
        total += fx->prep.lines[i].weight;
    assert_int_equal(total, RANKS * ROUNDS);
    free(text);
}

/* Steps are read for the lines that can be a writer's last progress line
 * in the chunk: of the lines that are only progress and not bare, the
 * last kept one of each writer key; bare lines always. */
static void test_steps_of_each_writers_last_line(void **state)
{
    fixture *fx = *state;
    scan_and_prepare(fx, true);
    /* hit index:                          1  2  3  4  6  7  8  9 10 11 12 (line) */
    static const bool want_read[] = {0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1};
    static const int64_t want_step[] = {0, 0, 0, 12, 0, 11, 0, 0, 0, 0, 16};
    for (size_t i = 0; i < fx->prep.n; i++) {
        const cp_line_prep *lp = &fx->prep.lines[i];
        if (lp->step_read != want_read[i])
            fail_msg("hit %zu (line %llu): step read %d", i, (unsigned long long)lp->no, lp->step_read);
        if (lp->step_read) {
            assert_true(lp->has_step);
            assert_int_equal(lp->step, want_step[i]);
        }
    }
    /* rank 3's earlier kept lines (1, 8, 10) stand aside for line 12 */
    assert_true(fx->prep.lines[0].superseded);
    assert_true(fx->prep.lines[6].superseded);
    assert_true(fx->prep.lines[8].superseded);
    assert_false(fx->prep.lines[10].superseded);
    /* every kept line has the key its prefixes give */
    assert_int_equal(fx->prep.lines[0].key.kind, 'r');
    assert_int_equal(fx->prep.lines[0].key.value, 3);
}

/* cp_scanner_step reads what the serial captures would. */
static void test_step_reads_as_the_captures(void **state)
{
    fixture *fx = *state;
    static const char *const lines[] = {
        "1: [rank9]:[2024-11-02 18:41:44,845] [INFO] [train.py:287:train] step 8/2000 | loss 2.2612",
        "[2026-11-29 16:19:53,021][INFO][rank 0/4] step=1 loss=1.4085",
        " iteration      100/   50000 | consumed samples:        51200",
        "0: [rank0]: 23%|##        | 470/2000 [33:25<1:48:49,  4.27s/it]",
        "192.168.12.21: {'loss': 0.2411, 'grad_norm': 0.30, 'learning_rate': 9.8e-06, 'epoch': 0.4}",
        "Global_Step: 99999999999999999999999 overflows",
        "steps: none here",
    };
    int checked = 0;
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        const char *line = lines[i];
        assert_int_equal(cp_matcher_scan(fx->m, line, strlen(line), NULL, &fx->hits), 0);
        for (size_t h = 0; h < fx->hits.n; h++) {
            const cp_line_hits *lh = &fx->hits.lines[h];
            for (uint32_t k = 0; k < lh->n_rules; k++) {
                uint32_t rule = lh->rules[k];
                if (fx->cat.rules[rule].role != CP_ROLE_PROGRESS)
                    continue;
                cp_captures caps;
                caps.n = 0;
                cp_matcher_captures(fx->m, rule, line, strlen(line), &caps);
                const char *s = cp_captures_get(&caps, "step");
                int64_t want = 0, got = 0;
                bool want_ok = s && cp_parse_i64(s, &want);
                cp_loss loss;
                bool ok = cp_scanner_step(cp_matcher_scanner(fx->m), rule, line, strlen(line), &got, &loss);
                if (ok != want_ok || (ok && got != want))
                    fail_msg("%s: step %d %lld, captures %d %lld", line, ok, (long long)got, want_ok,
                             (long long)want);
                const char *l = cp_captures_get(&caps, "loss");
                cp_loss want_loss = l ? cp_loss_parse(l, strlen(l)) : (cp_loss){0, false};
                if (ok && (loss.read != want_loss.read ||
                           (loss.read && memcmp(&loss.value, &want_loss.value, sizeof loss.value) != 0)))
                    fail_msg("%s: loss %d %g, captures %d %g", line, loss.read, (double)loss.value,
                             want_loss.read, (double)want_loss.value);
                checked++;
            }
        }
    }
    assert_true(checked >= 6);
}

/* The captures prepared for a line are what the matcher gives for its
 * rules one by one; lines that are only progress have none. */
static void test_captures_as_the_matcher(void **state)
{
    fixture *fx = *state;
    static const char text[] =
        "[default6]:node002:5117:5356 [6] NCCL INFO ncclCommInitRank comm 0x55de5ef0643e rank 14 nranks 16 cudaDev 6 "
        "nvmlDev 6 busId ba000 commId 0xfbf0dc991af1f5e0 - Init START\n"
        "[rank1]:   File \"/usr/local/lib/python3.11/dist-packages/deepspeed/runtime/engine.py\", line 284, in step\n"
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
        STEP(" 0", "3", "40", "10")
        "Process 28696: /usr/bin/python3 -u train.py --config cfg.yaml\n"
        "  0: [rank0]:[2025-02-20 03:24:49,054] [INFO] [logging.py:96:log_dist] [Rank 0] step=630, skipped=4\n";
    assert_int_equal(cp_matcher_scan(fx->m, text, strlen(text), NULL, &fx->hits), 0);
    assert_int_equal(cp_prepare(&fx->cat, cp_matcher_scanner(fx->m), text, 1, &fx->hits, true, &fx->prep), 0);
    int with_captures = 0;
    for (size_t i = 0; i < fx->prep.n; i++) {
        const cp_line_hits *h = &fx->hits.lines[i];
        bool only_progress = true;
        cp_captures want, got;
        want.n = 0;
        for (uint32_t k = 0; k < h->n_rules; k++) {
            only_progress &= fx->cat.rules[h->rules[k]].role == CP_ROLE_PROGRESS;
            cp_matcher_captures(fx->m, h->rules[k], text + h->start, h->len, &want);
        }
        cp_prepared_captures(&fx->prep, &fx->prep.lines[i], &got);
        if (only_progress) {
            assert_int_equal(got.n, 0);
            assert_null(cp_prepared_display(&fx->prep, &fx->prep.lines[i]));
            continue;
        }
        assert_non_null(cp_prepared_display(&fx->prep, &fx->prep.lines[i]));
        assert_int_equal(got.n, want.n);
        for (int c = 0; c < want.n; c++) {
            assert_string_equal(got.v[c].name, want.v[c].name);
            assert_string_equal(got.v[c].value, want.v[c].value);
        }
        with_captures += want.n > 0;
    }
    assert_true(with_captures >= 3);
}

/* Each line's prefixes as cp_frame_parse gives them, the host names
 * among them kept in the chunk's texts (cp_prepared_host), and merged
 * into an origin as cp_origin_merge would merge the parsed origin. */
static void test_prefixes_as_the_parser(void **state)
{
    fixture *fx = *state;
    static const char text[] =
        "[default6]:node002:5117:5356 [6] NCCL INFO ncclCommInitRank comm 0x55de5ef0643e rank 14 nranks 16 cudaDev 6 "
        "nvmlDev 6 busId ba000 commId 0xfbf0dc991af1f5e0 - Init START\n"
        STEP(" 0", "3", "40", "10")
        "gpu-node-117:2281:2390 [3] NCCL WARN NET/IB : mlx5_0:1 Got async event : port error\n"
        "Nov 29 16:19:56 node017 kernel: NVRM: Xid (PCI:0000:ba:00): 79, pid=4242, name=python3, GPU has fallen off the bus.\n"
        "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n";
    assert_int_equal(cp_matcher_scan(fx->m, text, strlen(text), NULL, &fx->hits), 0);
    assert_int_equal(cp_prepare(&fx->cat, cp_matcher_scanner(fx->m), text, 1, &fx->hits, true, &fx->prep), 0);
    assert_int_equal(fx->prep.n, 5);
    static const char *const want_host[] = {"node002", "", "gpu-node-117", "node017", ""};
    for (size_t i = 0; i < fx->prep.n; i++) {
        const cp_line_hits *h = &fx->hits.lines[i];
        const cp_line_prep *lp = &fx->prep.lines[i];
        cp_origin want, got;
        cp_origin_init(&want);
        cp_frame_parse(text + h->start, h->len, &want);
        assert_string_equal(cp_prepared_host(&fx->prep, lp), want_host[i]);
        assert_string_equal(want.host, want_host[i]);
        /* over a known origin, as the incident merges them */
        cp_origin_init(&got);
        got.rank = 99;
        snprintf(got.host, sizeof got.host, "%s", "path-host");
        cp_prepared_merge_origin(&fx->prep, lp, &got);
        cp_origin expect;
        cp_origin_init(&expect);
        expect.rank = 99;
        snprintf(expect.host, sizeof expect.host, "%s", "path-host");
        cp_origin_merge(&expect, &want);
        assert_int_equal(got.rank, expect.rank);
        assert_int_equal(got.local_rank, expect.local_rank);
        assert_int_equal(got.pid, expect.pid);
        assert_int_equal(got.task, expect.task);
        assert_int_equal(got.cuda_dev, expect.cuda_dev);
        assert_int_equal(got.level, expect.level);
        assert_int_equal(got.time.kind, expect.time.kind);
        assert_true(got.time.ms == expect.time.ms);
        assert_string_equal(got.host, expect.host);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_line_numbers_and_prefixes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thinning_keeps_first_and_last_per_writer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thinning_a_longer_run, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thinning_more_writers_than_the_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thinning_table_grows_to_the_writers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_steps_of_each_writers_last_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_step_reads_as_the_captures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_captures_as_the_matcher, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefixes_as_the_parser, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
