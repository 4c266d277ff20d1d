/* test_events.c - unit tests of event assembly (events.c, with ranks.c):
 * log text goes through the real rule catalog and matcher into an
 * incident, and the tests look at what the scan built: the events
 * (tracebacks, C++ stacks, stack dumps, table copies), the writers and
 * their ranks, the torchrun failure table and the NCCL identity facts.
 * Inputs are small excerpts adapted from the corpus and the real
 * fixtures. Set CULPRIT_TEST_DUMP=1 to print every event and writer. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "incident.h"
#include "matcher.h"
#include "harness.h"

/* ---- harness ------------------------------------------------------------- */


/* Each test gets a zeroed incident that the teardown frees, so a failing
 * assertion leaks nothing. */
static int new_incident(void **state)
{
    *state = calloc(1, sizeof(cp_incident));
    return *state ? 0 : -1;
}

static int free_incident(void **state)
{
    cp_incident_free(*state);
    free(*state);
    return 0;
}

static void dump(const cp_incident *inc)
{
    const char *env = getenv("CULPRIT_TEST_DUMP");
    if (!env || !*env)
        return;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        fprintf(stderr, "event %zu: s%d:%llu rank=%d pid=%d writer=%d time=%lld/%d est=%d rule=%s table=%d frames=%zu ev=%d | %.100s\n",
                i, e->stream, (unsigned long long)e->line, e->origin.rank, e->origin.pid, e->writer,
                (long long)e->origin.time.ms, (int)e->origin.time.kind, e->time_estimated,
                e->rule == CP_RULE_STACK ? "(stack)" : g_cat.rules[e->rule].id, e->in_table, e->n_frames, e->n_ev,
                e->text ? e->text : "");
        for (int k = 0; k < e->n_ev; k++)
            fprintf(stderr, "    ev %llu: %.80s\n", (unsigned long long)e->ev[k].line, e->ev[k].text);
    }
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        fprintf(stderr, "writer %zu: rank=%d id.rank=%d local=%d pid=%d host=%s stream=%d\n", i, w->rank, w->id.rank,
                w->id.local_rank, w->id.pid, w->id.host, w->stream);
    }
}

/* Scans the streams in order, each fed as one chunk starting at line 1. */
static void scan(cp_incident *inc, const stream_in *streams, size_t n)
{
    harness_scan(inc, streams, n);
    dump(inc);
}

static void scan_one(cp_incident *inc, const char *path, const char *text)
{
    const stream_in s = {path, text};
    scan(inc, &s, 1);
}

static uint32_t rule(const char *id)
{
    int at = cp_catalog_find(&g_cat, id);
    if (at < 0)
        fail_msg("rule %s is not in the catalog", id);
    return (uint32_t)at;
}

static size_t count_rule(const cp_incident *inc, uint32_t r)
{
    size_t n = 0;
    for (size_t i = 0; i < inc->n_events; i++)
        n += inc->events[i].rule == r;
    return n;
}

/* The event whose key line is `line` of stream `stream`. */
static const cp_event *event_at(const cp_incident *inc, int stream, uint64_t line)
{
    for (size_t i = 0; i < inc->n_events; i++)
        if (inc->events[i].stream == stream && inc->events[i].line == line)
            return &inc->events[i];
    fail_msg("no event at %d:%llu", stream, (unsigned long long)line);
    return NULL;
}

static bool has_evidence_line(const cp_event *e, uint64_t line, const char *needle)
{
    for (int i = 0; i < e->n_ev; i++)
        if (e->ev[i].line == line && e->ev[i].text && strstr(e->ev[i].text, needle))
            return true;
    return false;
}

/* Line `no` (from 1) of `text`, without its newline, into buf. */
static const char *input_line(const char *text, uint64_t no, char *buf, size_t cap)
{
    const char *p = text;
    for (uint64_t i = 1; i < no && p; i++) {
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    if (!p || !*p)
        return NULL;
    size_t len = strcspn(p, "\n");
    if (len >= cap)
        len = cap - 1;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

/* Every evidence line of the event is the input line at that number, and
 * they come in line order. */
static void assert_evidence_true_to(const cp_event *e, const char *text)
{
    char buf[1024];
    assert_true(e->n_ev > 0);
    for (int i = 0; i < e->n_ev; i++) {
        const char *want = input_line(text, e->ev[i].line, buf, sizeof buf);
        assert_non_null(want);
        assert_string_equal(e->ev[i].text, want);
        if (i > 0)
            assert_true(e->ev[i - 1].line < e->ev[i].line);
    }
}

static const cp_writer *writer_of(const cp_incident *inc, const cp_event *e)
{
    assert_true(e->writer >= 0 && (size_t)e->writer < inc->n_writers);
    return &inc->writers[e->writer];
}

/* ---- Python tracebacks ------------------------------------------------- */

/* gen-01: rank 2's forward raises; the traceback goes to stderr unprefixed. */
static const char traceback_text[] =
    "Traceback (most recent call last):\n"                                                   /* 1 */
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 85, in <module>\n"             /* 2 */
    "    main()\n"                                                                           /* 3 */
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 71, in main\n"                 /* 4 */
    "    loss = F.cross_entropy(model(x), y)\n"                                              /* 5 */
    "                           ^^^^^^^^\n"                                                  /* 6 */
    "  File \"/usr/lib/python3/dist-packages/torch/nn/modules/module.py\", line 1194, in _call_impl\n" /* 7 */
    "    return forward_call(*input, **kwargs)\n"                                            /* 8 */
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"                                            /* 9 */
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 39, in forward\n"              /* 10 */
    "    raise ValueError(\n"                                                                /* 11 */
    "ValueError: TinyMLP expected input with 16 features, got tensor of shape (8, 15)\n";    /* 12 */

static void traceback_is_one_event(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", traceback_text);
    assert_int_equal(inc->n_events, 1);
    assert_int_equal(inc->lines, 12);
    const cp_event *e = &inc->events[0];
    assert_int_equal(e->rule, rule("py.exception"));
    assert_int_equal(e->line, 12);
    assert_non_null(strstr(e->text, "ValueError: TinyMLP expected input"));
    assert_true(e->has_traceback);
    assert_false(e->in_table);
    assert_string_equal(cp_capset_get(&e->caps, "exc"), "ValueError");

    /* frames outermost first, as printed */
    assert_int_equal(e->n_frames, 4);
    static const char *const files[] = {
        "/home/ml/proj/s01_forward_valueerror.py", "/home/ml/proj/s01_forward_valueerror.py",
        "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", "/home/ml/proj/s01_forward_valueerror.py",
    };
    static const char *const funcs[] = {"<module>", "main", "_call_impl", "forward"};
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(e->frames[i].file, files[i]);
        assert_string_equal(e->frames[i].func, funcs[i]);
        assert_non_null(strstr(e->frames[i].text, funcs[i]));
    }
    /* phase hints hit the frames they name */
    assert_int_equal(e->frames[3].phase_rule, rule("hint.forward"));
    assert_int_equal(e->frames[1].phase_rule, UINT32_MAX);

    /* evidence: the header first and the exception, at their own line
     * numbers, each the very text of that input line */
    assert_int_equal(e->ev[0].line, 1);
    assert_true(has_evidence_line(e, 1, "Traceback (most recent call last)"));
    assert_true(has_evidence_line(e, 12, "ValueError: TinyMLP"));
    assert_int_equal(e->ev[e->n_ev - 1].line, 12);
    assert_int_equal(e->ev[0].stream, 0);
    assert_evidence_true_to(e, traceback_text);
    /* code lines and caret lines are not evidence */
    assert_false(has_evidence_line(e, 3, "main()"));
    assert_false(has_evidence_line(e, 11, "raise"));
}

/* Two ranks' tracebacks interleaved line by line in a combined log. */
static const char interleaved_text[] =
    "[rank1]: Traceback (most recent call last):\n"                                              /* 1 */
    "[rank3]: Traceback (most recent call last):\n"                                              /* 2 */
    "[rank1]:   File \"/home/ubuntu/train.py\", line 120, in <module>\n"                         /* 3 */
    "[rank3]:   File \"/home/ubuntu/train.py\", line 120, in <module>\n"                         /* 4 */
    "[rank1]:     main()\n"                                                                      /* 5 */
    "[rank3]:     main()\n"                                                                      /* 6 */
    "[rank1]:   File \"/home/ubuntu/train.py\", line 98, in main\n"                              /* 7 */
    "[rank3]:   File \"/home/ubuntu/train.py\", line 101, in main\n"                             /* 8 */
    "[rank1]:     loss = model(batch)\n"                                                         /* 9 */
    "[rank3]:     batch = next(it)\n"                                                            /* 10 */
    "[rank1]:   File \"/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py\", line 1773, in _wrapped_call_impl\n" /* 11 */
    "[rank3]:   File \"/home/ubuntu/data.py\", line 44, in __getitem__\n"                        /* 12 */
    "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.35 GiB. GPU 1 has a total capacity of 63.42 GiB of which 1.70 GiB is free.\n" /* 13 */
    "[rank3]: KeyError: 'input_ids'\n";                                                          /* 14 */

static void interleaved_ranks_are_two_events(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "combined.log", interleaved_text);
    assert_int_equal(inc->n_events, 2);
    const cp_event *oom = event_at(inc, 0, 13);
    const cp_event *key = event_at(inc, 0, 14);
    assert_int_equal(oom->rule, rule("pytorch.cuda_oom"));
    assert_int_equal(oom->origin.rank, 1);
    assert_int_equal(writer_of(inc, oom)->id.rank, 1);
    assert_int_equal(oom->n_frames, 3);
    assert_string_equal(oom->frames[2].func, "_wrapped_call_impl");
    assert_true(has_evidence_line(oom, 1, "Traceback"));
    assert_evidence_true_to(oom, interleaved_text);
    assert_evidence_true_to(key, interleaved_text);
    /* no line of the other rank slipped in */
    for (int i = 0; i < oom->n_ev; i++)
        assert_null(strstr(oom->ev[i].text, "[rank3]"));
    for (int i = 0; i < key->n_ev; i++)
        assert_null(strstr(key->ev[i].text, "[rank1]"));

    assert_int_equal(key->rule, rule("py.exception"));
    assert_int_equal(key->origin.rank, 3);
    assert_int_equal(writer_of(inc, key)->id.rank, 3);
    assert_int_equal(key->n_frames, 3);
    assert_string_equal(key->frames[2].file, "/home/ubuntu/data.py");
    assert_string_equal(key->frames[2].func, "__getitem__");
    assert_true(has_evidence_line(key, 2, "Traceback"));
    assert_int_not_equal(oom->writer, key->writer);
}

/* A DataLoader worker's exception re-raised in the main process carries
 * the worker's traceback in its message, after "Original Traceback": one
 * event, whose innermost frames are the worker's (the user's collate). */
static const char dataloader_text[] =
    "3: [rank31]: Traceback (most recent call last):\n"                                           /* 1 */
    "3: [rank31]:   File \"/workspace/train.py\", line 466, in main\n"                           /* 2 */
    "3: [rank31]:     batch = next(data_iter)\n"                                                  /* 3 */
    "3: [rank31]:   File \"/home/ml/.venv/lib/python3.10/site-packages/torch/_utils.py\", line 715, in reraise\n" /* 4 */
    "3: [rank31]:     raise exception\n"                                                          /* 5 */
    "3: [rank31]: ValueError: Caught ValueError in DataLoader worker process 3.\n"                /* 6 */
    "3: [rank31]: Original Traceback (most recent call last):\n"                                  /* 7 */
    "3: [rank31]:   File \"/home/ml/.venv/lib/python3.10/site-packages/torch/utils/data/_utils/fetch.py\", line 55, in fetch\n" /* 8 */
    "3: [rank31]:     return self.collate_fn(data)\n"                                             /* 9 */
    "3: [rank31]:   File \"/workspace/data.py\", line 141, in collate\n"                         /* 10 */
    "3: [rank31]:     raise ValueError(f\"too long\")\n"                                        /* 11 */
    "3: [rank31]: ValueError: sequence of length 2170 exceeds max_seq_len 1024\n";                /* 12 */

static void dataloader_worker_error_is_one_event(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", dataloader_text);
    assert_int_equal(inc->n_events, 1);
    const cp_event *e = &inc->events[0];
    assert_int_equal(e->n_frames, 4);
    assert_string_equal(e->frames[0].func, "main");
    assert_string_equal(e->frames[3].file, "/workspace/data.py");
    assert_true(has_evidence_line(e, 6, "Caught ValueError in DataLoader worker"));
    assert_true(has_evidence_line(e, 12, "exceeds max_seq_len"));
    assert_evidence_true_to(e, dataloader_text);
}

/* gen-06: an exception raised while handling another is one event. */
static const char chained_text[] =
    "[default1]:Traceback (most recent call last):\n"                                            /* 1 */
    "[default1]:  File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 423, in save\n" /* 2 */
    "[default1]:    _save(obj, opened_zipfile, pickle_module, pickle_protocol)\n"                 /* 3 */
    "[default1]:  File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 650, in _save\n" /* 4 */
    "[default1]:    zip_file.write_record(name, storage.data_ptr(), num_bytes)\n"                 /* 5 */
    "[default1]:RuntimeError: [enforce fail at inline_container.cc:445] . PytorchStreamWriter failed writing file data/0: file write failed\n" /* 6 */
    "[default1]:\n"                                                                               /* 7 */
    "[default1]:During handling of the above exception, another exception occurred:\n"           /* 8 */
    "[default1]:\n"                                                                               /* 9 */
    "[default1]:Traceback (most recent call last):\n"                                             /* 10 */
    "[default1]:  File \"/home/ml/proj/s05_checkpoint_enospc.py\", line 66, in <module>\n"        /* 11 */
    "[default1]:    main()\n"                                                                     /* 12 */
    "[default1]:  File \"/home/ml/proj/s05_checkpoint_enospc.py\", line 36, in save_checkpoint\n" /* 13 */
    "[default1]:    torch.save({\"step\": step, \"model\": model.state_dict()}, path)\n"          /* 14 */
    "[default1]:  File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 290, in __exit__\n" /* 15 */
    "[default1]:    self.file_like.write_end_of_file()\n"                                         /* 16 */
    "[default1]:RuntimeError: [enforce fail at inline_container.cc:325] . unexpected pos 1600 vs 1539\n"; /* 17 */

static void chained_exceptions_are_one_event(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", chained_text);
    assert_int_equal(inc->n_events, 1);
    const cp_event *e = &inc->events[0];
    assert_true(e->has_traceback);
    assert_int_equal(e->n_frames, 5);
    assert_string_equal(e->frames[0].func, "save");
    assert_string_equal(e->frames[4].func, "__exit__");
    /* both exceptions are evidence of the one event */
    assert_true(has_evidence_line(e, 6, "PytorchStreamWriter failed writing file"));
    assert_true(has_evidence_line(e, 17, "unexpected pos 1600 vs 1539"));
    assert_true(has_evidence_line(e, 1, "Traceback"));
    assert_evidence_true_to(e, chained_text);
    /* the file-write failure is the more specific rule and names the event */
    assert_int_not_equal(e->rule, rule("py.exception"));
    assert_int_equal(g_cat.rules[e->rule].kind, CP_KIND_CHECKPOINT_IO);
}

/* gen-01: the traceback goes both to stderr and to logging, so the same
 * stream shows two complete tracebacks back to back. */
static const char two_tracebacks_text[] =
    "Traceback (most recent call last):\n"                                                  /* 1 */
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 85, in <module>\n"            /* 2 */
    "    main()\n"                                                                          /* 3 */
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 74, in main\n"                /* 4 */
    "    average_gradients(model)\n"                                                        /* 5 */
    "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:15025\n" /* 6 */
    "Traceback (most recent call last):\n"                                                  /* 7 */
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 85, in <module>\n"            /* 8 */
    "    main()\n"                                                                          /* 9 */
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 39, in forward\n"             /* 10 */
    "    raise ValueError(\n"                                                               /* 11 */
    "ValueError: TinyMLP expected input with 16 features, got tensor of shape (8, 15)\n";   /* 12 */

static void consecutive_tracebacks_are_two_events(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", two_tracebacks_text);
    assert_int_equal(inc->n_events, 2);
    const cp_event *a = event_at(inc, 0, 6);
    const cp_event *b = event_at(inc, 0, 12);
    assert_int_equal(a->rule, rule("pytorch.gloo_connection_closed"));
    assert_int_equal(b->rule, rule("py.exception"));
    assert_int_equal(a->n_frames, 2);
    assert_int_equal(b->n_frames, 2);
    assert_string_equal(a->frames[1].func, "main");
    assert_string_equal(b->frames[1].func, "forward");
    assert_true(has_evidence_line(a, 1, "Traceback"));
    assert_true(has_evidence_line(b, 7, "Traceback"));
    assert_false(has_evidence_line(a, 12, "ValueError"));
    assert_false(has_evidence_line(b, 6, "Connection closed"));
}

/* ---- C++ stacks ------------------------------------------------------- */

static const char cpp_stack_text[] =
    "[rank3]:[E1102 19:32:35.259796380 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6075, OpType=ALLREDUCE, NumelIn=1366, NumelOut=1366, Timeout(ms)=600000) ran for 600033 milliseconds before timing out.\n" /* 1 */
    "[rank3]:terminate called after throwing an instance of 'c10::DistBackendError'\n"             /* 2 */
    "[rank3]:  what():  [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception: [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6075, OpType=ALLREDUCE, NumelIn=1366, NumelOut=1366, Timeout(ms)=600000) ran for 600033 milliseconds before timing out.\n" /* 3 */
    "[rank3]:Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:565 (most recent call first):\n" /* 4 */
    "[rank3]:frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f3acb2c9f86 in /usr/local/lib/python3.10/dist-packages/torch/lib/libc10.so)\n" /* 5 */
    "[rank3]:frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x7f3a7e1a4b22 in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)\n" /* 6 */
    "[rank3]:frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f3a7e1ab123 in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so)\n" /* 7 */
    "[rank3]:frame #3: <unknown function> + 0x145c0 (0x7f3acb7145c0 in /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch.so)\n"; /* 8 */

static void cpp_stack_joins_event_above(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", cpp_stack_text);
    assert_int_equal(inc->n_events, 1);
    const cp_event *e = &inc->events[0];
    assert_int_equal(e->rule, rule("pytorch.watchdog_timeout"));
    assert_int_equal(e->line, 1);
    assert_int_equal(e->origin.rank, 3);
    assert_true(e->has_traceback);
    assert_int_equal(e->n_frames, 4);
    assert_string_equal(e->frames[0].func, "c10::Error::Error(c10::SourceLocation,");
    assert_string_equal(e->frames[2].func, "c10d::ProcessGroupNCCL::watchdogHandler()");
    /* the rule is chosen: native frames keep their function, not their line */
    for (size_t i = 0; i < e->n_frames; i++)
        assert_null(e->frames[i].text);
    assert_string_equal(cp_capset_get(&e->caps, "seq"), "6075");
    assert_true(has_evidence_line(e, 1, "Watchdog caught collective operation timeout"));
    assert_true(has_evidence_line(e, 3, "what():"));
    assert_evidence_true_to(e, cpp_stack_text);
}

/* ---- identity inheritance --------------------------------------------- */

/* gen-01: Python logging names the rank; the traceback under it does not. */
static const char after_error_text[] =
    "2026-11-29 16:19:32,295 [rank2] INFO train: step 2/8 loss=1.4498 time=0.34s\n"     /* 1 */
    "2026-11-29 16:19:32,295 [rank2] ERROR train: training failed\n"                    /* 2 */
    "Traceback (most recent call last):\n"                                              /* 3 */
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 85, in <module>\n"        /* 4 */
    "    main()\n"                                                                      /* 5 */
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 39, in forward\n"         /* 6 */
    "    raise ValueError(\n"                                                           /* 7 */
    "ValueError: TinyMLP expected input with 16 features, got tensor of shape (8, 15)\n"; /* 8 */

static void traceback_under_error_line_takes_its_rank(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", after_error_text);
    assert_int_equal(inc->n_events, 1);
    const cp_event *e = &inc->events[0];
    assert_int_equal(e->line, 8);
    assert_int_equal(e->origin.rank, 2);
    assert_int_equal(writer_of(inc, e)->id.rank, 2);
    assert_int_equal(e->n_frames, 2);
}

/* real-19: the source line under a frame hits a progress rule of its own
 * ("step" in `log.info("eval at step %d", ...)`); it is still part of the
 * traceback, and the frames and exception below it stay rank 3's. */
static const char source_line_hits_rule_text[] =
    "2026-12-01 07:05:03,945 [rank3] ERROR train: training failed\n"                      /* 1 */
    "Traceback (most recent call last):\n"                                                /* 2 */
    "  File \"/work/gen/s19_eval_zero_division.py\", line 60, in main\n"                  /* 3 */
    "    log.info(\"eval at step %d: accuracy=%.3f\", step, evaluate(model, val))\n"       /* 4 */
    "                                                     ^^^^^^^^^^^^^^^^^^^^\n"         /* 5 */
    "  File \"/work/gen/s19_eval_zero_division.py\", line 31, in evaluate\n"              /* 6 */
    "    acc = torch.tensor([correct / len(val)])\n"                                      /* 7 */
    "                        ~~~~~~~~^~~~~~~~~~\n"                                        /* 8 */
    "ZeroDivisionError: division by zero\n";                                             /* 9 */

static void source_line_with_a_rule_keeps_the_rank(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", source_line_hits_rule_text);
    assert_int_equal(inc->n_events, 1);
    const cp_event *e = &inc->events[0];
    assert_int_equal(e->line, 9);
    assert_int_equal(e->origin.rank, 3);
    assert_int_equal(e->n_frames, 2);
}

/* gen-03 layout: a routine progress line does not hand its rank down. */
static const char after_progress_text[] =
    "[2026-11-29 16:19:56,758][INFO][rank 0/4] step=3 loss=1.3850\n"                 /* 1 */
    "[2026-11-29 16:19:56,760][INFO][rank 3/4] step=3 loss=1.3664\n"                 /* 2 */
    "Traceback (most recent call last):\n"                                           /* 3 */
    "  File \"/home/ml/proj/s02b_host_oom.py\", line 77, in <module>\n"              /* 4 */
    "    main()\n"                                                                   /* 5 */
    "  File \"/home/ml/proj/s02b_host_oom.py\", line 65, in main\n"                  /* 6 */
    "    dist.all_reduce(p.grad)\n"                                                  /* 7 */
    "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:7044\n"; /* 8 */

static void traceback_under_progress_line_has_no_rank(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", after_progress_text);
    assert_int_equal(inc->n_events, 1);
    const cp_event *e = &inc->events[0];
    assert_int_equal(e->line, 8);
    assert_int_equal(e->rule, rule("pytorch.gloo_connection_closed"));
    assert_int_equal(e->origin.rank, -1);
    const cp_writer *w = writer_of(inc, e);
    assert_int_equal(w->id.rank, -1);
    /* the progress lines did count for rank 3 itself */
    bool rank3_progress = false;
    for (size_t i = 0; i < inc->n_writers; i++)
        if (inc->writers[i].id.rank == 3 && inc->writers[i].last_step == 3)
            rank3_progress = true;
    assert_true(rank3_progress);
}

/* Two hosts' progress lines in one torchrun log folder: the path gives
 * the local rank, the pdsh prefix the host, so they are two writers,
 * though their own prefixes name no process. The scan threads read the
 * step of only the last such line of the chunk; the first host's step is
 * read on the serial side, and each host gets its own. */
static void progress_steps_of_writers_the_prefixes_do_not_name(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "job/attempt_0/3/stderr.log",
             "node1: [2026-11-29 16:19:56,758][INFO] step=5 loss=1.0\n"
             "node2: [2026-11-29 16:19:56,759][INFO] step=7 loss=1.0\n");
    int64_t steps[2] = {-1, -1};
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        assert_int_equal(w->id.local_rank, 3);
        if (strcmp(w->id.host, "node1") == 0)
            steps[0] = w->last_step;
        if (strcmp(w->id.host, "node2") == 0)
            steps[1] = w->last_step;
    }
    assert_int_equal(steps[0], 5);
    assert_int_equal(steps[1], 7);
}

/* Lines the cheaper scan form of progress.step hits ("step ", "iteration
 * 2") but its match expression does not: a traceback's quoted source line
 * and DDP's logger line. They must not hide the last real step line. */
static void unconfirmed_progress_keeps_the_last_step(void **state)
{
    cp_incident *inc = *state;
    const stream_in streams[] = {
        {"train.log",
         "[rank0]:[titan] 2026-05-12 17:07:23,237 - root - INFO - step: 3000  loss:  3.63069\n"
         "[rank0]:Traceback (most recent call last):\n"
         "[rank0]:  File \"/torchtitan/torchtitan/trainer.py\", line 998, in train\n"
         "[rank0]:    self.checkpointer.save(\n"
         "[rank0]:        self.step, last_step=(self.step == config.training.steps)\n"},
        {"rank_1.log",
         "2026-11-29 17:56:15,363 INFO train step 2 loss 1.4577 mean 1.4292\n"
         "I20261129 17:56:15.363879 30101 logger.cpp:377] [Rank 1 / 4] [before iteration 2] Training "
         "Sequential unused_parameter_size=0\n"},
    };
    scan(inc, streams, 2);
    int64_t steps[2] = {-1, -1};
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->id.rank == 0 || w->id.rank == 1)
            steps[w->id.rank] = w->last_step > steps[w->id.rank] ? w->last_step : steps[w->id.rank];
    }
    assert_int_equal(steps[0], 3000);
    assert_int_equal(steps[1], 2);
}

/* real-07 (without the pdsh prefix): torchrun SIGTERMs the straggler, whose
 * faulthandler prints where it was. */
static const char sigterm_stack_text[] =
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 12924 closing signal SIGTERM\n" /* 1 */
    "Current thread 0x00007fb6064e4040 (most recent call first):\n"                                     /* 2 */
    "  File \"/home/ml/proj/s07_straggler_timeout.py\", line 34 in forward\n"                          /* 3 */
    "  File \"/usr/lib/python3/dist-packages/torch/nn/modules/module.py\", line 1194 in _call_impl\n"   /* 4 */
    "  File \"/home/ml/proj/s07_straggler_timeout.py\", line 51 in main\n"                             /* 5 */
    "  File \"/home/ml/proj/s07_straggler_timeout.py\", line 60 in <module>\n";                        /* 6 */

static void faulthandler_after_sigterm_belongs_to_pid(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "launcher.log", sigterm_stack_text);
    assert_int_equal(count_rule(inc, CP_RULE_STACK), 1);
    const cp_event *stack = NULL;
    for (size_t i = 0; i < inc->n_events; i++)
        if (inc->events[i].rule == CP_RULE_STACK)
            stack = &inc->events[i];
    assert_non_null(stack);
    assert_int_equal(stack->origin.pid, 12924);
    assert_int_equal(stack->origin.rank, -1);
    assert_int_equal(writer_of(inc, stack)->id.pid, 12924);
    assert_true(stack->has_traceback);
    assert_int_equal(stack->line, 2);
    assert_int_equal(stack->n_frames, 4);
    assert_string_equal(stack->frames[0].func, "forward");
    assert_string_equal(stack->frames[0].file, "/home/ml/proj/s07_straggler_timeout.py");
    assert_string_equal(stack->frames[3].func, "<module>");
    /* the launcher's own SIGTERM line is a separate event, not the pid's */
    assert_int_equal(count_rule(inc, rule("launcher.sigterm_fanout")), 1);
    const cp_event *fan = event_at(inc, 0, 1);
    assert_int_not_equal(fan->writer, stack->writer);
    assert_string_equal(cp_capset_get(&fan->caps, "next_pid"), "12924");
}

/* ds-13 / torchrun 2.x: glog launcher lines each start a record. */
static const char glog_launcher_text[] =
    "E1102 19:32:36.645000 31225 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: 4 (pid: 31243) of binary: /usr/bin/python3\n" /* 1 */
    "E1102 19:32:36.646000 31225 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -9) local_rank: 6 (pid: 31245) of binary: /usr/bin/python3\n" /* 2 */
    "W1102 19:32:36.700000 31225 torch/distributed/elastic/multiprocessing/api.py:897] Sending process 31239 closing signal SIGTERM\n"; /* 3 */

static void own_header_starts_new_event(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "launcher.log", glog_launcher_text);
    assert_int_equal(inc->n_events, 3);
    const cp_event *a = event_at(inc, 0, 1);
    const cp_event *b = event_at(inc, 0, 2);
    const cp_event *c = event_at(inc, 0, 3);
    assert_int_equal(a->rule, rule("launcher.worker_failed"));
    assert_int_equal(b->rule, rule("launcher.sigkill"));
    assert_int_equal(c->rule, rule("launcher.sigterm_fanout"));
    assert_string_equal(cp_capset_get(&a->caps, "pid"), "31243");
    assert_string_equal(cp_capset_get(&b->caps, "pid"), "31245");
    assert_int_equal(a->n_ev, 1);
    assert_int_equal(b->n_ev, 1);
    /* same launcher process wrote them all */
    assert_int_equal(a->writer, b->writer);
    assert_int_equal(a->origin.pid, 31225);
    assert_int_equal(a->origin.time.kind, CP_TS_NOYEAR);
    assert_true(b->origin.time.ms > a->origin.time.ms);
}

/* torchrun's agent reports a worker's exit right after that worker's
 * traceback; a progress bar glued in front of the report (the paste lost
 * its carriage return) hides the agent's logging header. The report is
 * still an event of its own, so the exception names the worker's. */
static const char glued_report_text[] =
    "Traceback (most recent call last):\n"                                                       /* 1 */
    "  File \"/workspace/trainer.py\", line 88, in train\n"                                       /* 2 */
    "    p_mask = batch[\"attention_mask\"]\n"                                                    /* 3 */
    "KeyError: 'attention_mask'\n"                                                                /* 4 */
    "steps:   0%|          | 0/186 [00:00<?, ?it/s]ERROR:torch.distributed.elastic.multiprocessing.api:failed "
    "(exitcode: 1) local_rank: 0 (pid: 76781) of binary: /opt/conda/bin/python\n";               /* 5 */

static void launcher_report_is_its_own_event(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", glued_report_text);
    assert_int_equal(inc->n_events, 2);
    assert_int_equal(event_at(inc, 0, 4)->rule, rule("py.exception"));
    assert_int_equal(event_at(inc, 0, 4)->n_frames, 1);
    const cp_event *report = event_at(inc, 0, 5);
    assert_int_equal(report->rule, rule("launcher.worker_failed"));
    assert_string_equal(cp_capset_get(&report->caps, "local_rank"), "0");
}

/* A paste that cut the agent's own frames: torchrun's ChildFailedError
 * right under a worker's exception (host prefix only, no level, so it
 * would continue the worker's record). It is the agent's event, and the
 * worker keeps its exception. */
static void child_failed_is_not_the_workers(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log",
             "node1: [default1]:Traceback (most recent call last):\n"                               /* 1 */
             "node1: [default1]:  File \"/work/gen/s34_two_nodes.py\", line 29, in forward\n"       /* 2 */
             "node1: [default1]:    raise ValueError(f\"expected 16\")\n"                           /* 3 */
             "node1: [default1]:ValueError: expected 16 features per sample, got 15\n"              /* 4 */
             "node1: torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n");        /* 5 */
    assert_int_equal(inc->n_events, 2);
    assert_int_equal(event_at(inc, 0, 4)->rule, rule("py.exception"));
    assert_int_equal(event_at(inc, 0, 5)->rule, rule("launcher.child_failed"));
}

/* A traceback without rank prefixes whose exception names the rank in
 * its message (Qwen2-MoE pre-training, LLaMA-Factory#3237, shortened):
 * the message's rank makes it another writer, yet it ends the traceback
 * above, which becomes that rank's. */
static const char rank_in_message_text[] =
    "  File \"/opt/conda/lib/python3.8/site-packages/torch/nn/modules/module.py\", line 1538, in _call_impl\n"  /* 1 */
    "    result = forward_call(*args, **kwargs)\n"                                                              /* 2 */
    "  File \"/opt/conda/lib/python3.8/site-packages/transformers/models/qwen2_moe/modeling_qwen2_moe.py\", "
    "line 932, in forward\n"                                                                                      /* 3 */
    "    hidden_states = self.mlp(hidden_states)\n"                                                              /* 4 */
    "RuntimeError: NCCL communicator was aborted on rank 7.  Original reason for failure was: [Rank 7] Watchdog "
    "caught collective operation timeout: WorkNCCL(SeqNum=96, OpType=_ALLGATHER_BASE, NumelIn=1, NumelOut=8, "
    "Timeout(ms)=1800000) ran for 1800512 milliseconds before timing out.\n";                                    /* 5 */

static void exception_naming_a_rank_ends_rankless_traceback(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", rank_in_message_text);
    assert_int_equal(inc->n_events, 1);
    const cp_event *e = event_at(inc, 0, 5);
    assert_int_equal(e->n_frames, 2);
    assert_int_equal(e->origin.rank, 7);
    assert_string_equal(e->frames[1].func, "forward");
}

/* rich's traceback box (Lightning, accelerate): frames, source lines with
 * a marker, and the exception under the box are one event. */
static const char rich_traceback_text[] =
    "╭───────────────────── Traceback (most recent call last) ──────────────────────╮\n"  /* 1 */
    "│ /home/ml/proj/train.py:88 in main                                            │\n"  /* 2 */
    "│                                                                              │\n"  /* 3 */
    "│   85 │   for batch_id, batch in enumerate(loader):                           │\n"  /* 4 */
    "│   86 │   │   loss = model(**batch).loss                                      │\n"  /* 5 */
    "│   87 │   │   accelerator.backward(loss)                                      │\n"  /* 6 */
    "│ ❱ 88 │   │   optimizer.step()                                                │\n"  /* 7 */
    "│   89 │   │   optimizer.zero_grad()                                           │\n"  /* 8 */
    "│   90 │   │   lr_scheduler.step()                                             │\n"  /* 9 */
    "│   91                                                                         │\n"  /* 10 */
    "│                                                                              │\n"  /* 11 */
    "│ /usr/local/lib/python3.10/dist-packages/torch/optim/adamw.py:187 in step     │\n"  /* 12 */
    "│                                                                              │\n"  /* 13 */
    "│   184 │   │   │   │   state_steps,                                           │\n"  /* 14 */
    "│   185 │   │   │   )                                                          │\n"  /* 15 */
    "│   186 │   │                                                                  │\n"  /* 16 */
    "│ ❱ 187 │   │   adamw(                                                         │\n"  /* 17 */
    "│   188 │   │   │   params_with_grad,                                          │\n"  /* 18 */
    "│   189 │   │   │   grads,                                                     │\n"  /* 19 */
    "│   190 │   │   │   exp_avgs,                                                  │\n"  /* 20 */
    "╰──────────────────────────────────────────────────────────────────────────────╯\n"  /* 21 */
    "RuntimeError: The size of tensor a (4096) must match the size of tensor b (1024)\n"; /* 22 */

static void rich_traceback_is_one_event(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", rich_traceback_text);
    assert_int_equal(inc->n_events, 1);
    const cp_event *e = event_at(inc, 0, 22);
    assert_int_equal(e->rule, rule("py.exception"));
    assert_true(e->has_traceback);
    assert_int_equal(e->n_frames, 2);
    assert_string_equal(e->frames[0].file, "/home/ml/proj/train.py");
    assert_string_equal(e->frames[0].func, "main");
    assert_string_equal(e->frames[1].func, "step");
    /* the phase hints read rich's frames as Python's */
    assert_int_equal(e->frames[1].phase_rule, rule("hint.optimizer_step"));
}

/* ---- time back-fill ----------------------------------------------------- */

static const char untimed_then_timed_text[] =
    "Traceback (most recent call last):\n"                                                    /* 1 */
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 39, in forward\n"               /* 2 */
    "    raise ValueError(\n"                                                                 /* 3 */
    "ValueError: TinyMLP expected input with 16 features, got tensor of shape (8, 15)\n"      /* 4 */
    "lorem\n" "ipsum\n" "dolor\n" "sit\n" "amet\n" "consectetur\n" "adipiscing\n"             /* 5-11 */
    "2026-11-29 16:19:33,120 [rank0] ERROR train: training failed\n";                         /* 12 */

static void untimed_event_takes_next_time(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", untimed_then_timed_text);
    assert_int_equal(inc->n_events, 1);
    const cp_event *e = &inc->events[0];
    assert_int_equal(e->line, 4);
    assert_true(e->time_estimated);
    assert_int_equal(e->origin.time.kind, CP_TS_ABS);
    /* 2026-11-29 16:19:33.120 UTC */
    assert_int_equal(e->origin.time.ms, 1795969173120LL);
}

/* The event is closed (by an untimed hit line more than GAP lines below)
 * before any time shows up; the first time after it still reaches it. */
static const char closed_then_timed_text[] =
    "Traceback (most recent call last):\n"                                                    /* 1 */
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 39, in forward\n"               /* 2 */
    "    raise ValueError(\n"                                                                 /* 3 */
    "ValueError: TinyMLP expected input with 16 features, got tensor of shape (8, 15)\n"      /* 4 */
    "lorem\n" "ipsum\n" "dolor\n" "sit\n" "amet\n" "consectetur\n" "adipiscing\n"             /* 5-11 */
    "Traceback (most recent call last):\n"                                                    /* 12 */
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 39, in forward\n"               /* 13 */
    "2026-11-29 16:19:33,120 [rank0] INFO train: step 3/8 loss=1.2000 time=0.34s\n";          /* 14 */

static void closed_untimed_event_takes_next_time(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", closed_then_timed_text);
    assert_int_equal(inc->n_events, 2);
    const cp_event *e = event_at(inc, 0, 4);
    assert_true(e->time_estimated);
    assert_int_equal(e->origin.time.kind, CP_TS_ABS);
    assert_int_equal(e->origin.time.ms, 1795969173120LL);
    /* the cut-short traceback at 12-13 is a stack event with the same time */
    const cp_event *stack = event_at(inc, 0, 12);
    assert_int_equal(stack->rule, CP_RULE_STACK);
    assert_int_equal(stack->origin.time.ms, 1795969173120LL);
}

static const char timed_then_untimed_text[] =
    "2026-11-29 16:19:32,295 [rank2] INFO train: step 2/8 loss=1.4498 time=0.34s\n"           /* 1 */
    "lorem\n" "ipsum\n" "dolor\n" "sit\n" "amet\n" "consectetur\n" "adipiscing\n"             /* 2-8 */
    "Traceback (most recent call last):\n"                                                    /* 9 */
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 39, in forward\n"               /* 10 */
    "    raise ValueError(\n"                                                                 /* 11 */
    "ValueError: TinyMLP expected input with 16 features, got tensor of shape (8, 15)\n"      /* 12 */
    "lorem\n" "ipsum\n" "dolor\n" "sit\n" "amet\n" "consectetur\n" "adipiscing\n"             /* 13-19 */
    "2026-11-29 16:19:40,000 [rank0] INFO train: step 3/8 loss=1.2000 time=0.34s\n";          /* 20 */

static void untimed_event_takes_earlier_time(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", timed_then_untimed_text);
    assert_int_equal(inc->n_events, 1);
    const cp_event *e = &inc->events[0];
    assert_int_equal(e->line, 12);
    assert_int_equal(e->origin.rank, -1);
    assert_int_equal(e->origin.time.kind, CP_TS_ABS);
    /* 2026-11-29 16:19:32.295, not the later 16:19:40 */
    assert_int_equal(e->origin.time.ms, 1795969172295LL);
}

/* An event whose lines carry no timestamp and that took the time of the
 * line above (timed_then_untimed_text: the traceback at lines 9-12 under
 * the progress line 1) says so, as it does when it takes a later line's. */
static void earlier_time_is_marked_estimated(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", timed_then_untimed_text);
    assert_int_equal(inc->n_events, 1);
    assert_true(inc->events[0].time_estimated);
}

/* ---- torchrun failure table ----------------------------------------------- */

/* gen-03 */
static const char table_text[] =
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"     /* 1 */
    "============================================================\n"             /* 2 */
    "/home/ml/proj/s02b_host_oom.py FAILED\n"                                   /* 3 */
    "------------------------------------------------------------\n"             /* 4 */
    "Failures:\n"                                                               /* 5 */
    "[1]:\n"                                                                    /* 6 */
    "  time      : 2026-11-29_16:19:58\n"                                       /* 7 */
    "  host      : localhost\n"                                                 /* 8 */
    "  rank      : 1 (local_rank: 1)\n"                                         /* 9 */
    "  exitcode  : -9 (pid: 12850)\n"                                           /* 10 */
    "  error_file: <N/A>\n"                                                     /* 11 */
    "  traceback : Signal 9 (SIGKILL) received by PID 12850\n"                  /* 12 */
    "[2]:\n"                                                                    /* 13 */
    "  time      : 2026-11-29_16:19:58\n"                                       /* 14 */
    "  host      : localhost\n"                                                 /* 15 */
    "  rank      : 2 (local_rank: 2)\n"                                         /* 16 */
    "  exitcode  : 1 (pid: 12851)\n"                                            /* 17 */
    "  error_file: <N/A>\n"                                                     /* 18 */
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n" /* 19 */
    "------------------------------------------------------------\n"             /* 20 */
    "Root Cause (first observed failure):\n"                                    /* 21 */
    "[0]:\n"                                                                    /* 22 */
    "  time      : 2026-11-29_16:19:58\n"                                       /* 23 */
    "  host      : localhost\n"                                                 /* 24 */
    "  rank      : 0 (local_rank: 0)\n"                                         /* 25 */
    "  exitcode  : 1 (pid: 12849)\n"                                            /* 26 */
    "  error_file: <N/A>\n"                                                     /* 27 */
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n" /* 28 */
    "============================================================\n";           /* 29 */

static const cp_table_entry *table_rank(const cp_incident *inc, int rank)
{
    for (size_t i = 0; i < inc->n_table; i++)
        if (inc->table[i].rank == rank)
            return &inc->table[i];
    fail_msg("no table entry for rank %d", rank);
    return NULL;
}

static void check_gen03_table(const cp_incident *inc)
{
    assert_int_equal(inc->n_table, 3);
    const cp_table_entry *t1 = table_rank(inc, 1);
    assert_int_equal(t1->local_rank, 1);
    assert_int_equal(t1->pid, 12850);
    assert_int_equal(t1->exitcode, -9);
    assert_int_equal(t1->signal, 9);
    assert_false(t1->root_cause);
    assert_string_equal(t1->host, "localhost");
    assert_int_equal(t1->time.kind, CP_TS_ABS);
    assert_int_equal(t1->time.ms, 1795969198000LL); /* 2026-11-29 16:19:58 */
    assert_int_equal(t1->line, 7);

    const cp_table_entry *t2 = table_rank(inc, 2);
    assert_int_equal(t2->pid, 12851);
    assert_int_equal(t2->exitcode, 1);
    assert_int_equal(t2->signal, -1);
    assert_false(t2->root_cause);

    const cp_table_entry *t0 = table_rank(inc, 0);
    assert_int_equal(t0->pid, 12849);
    assert_int_equal(t0->exitcode, 1);
    assert_int_equal(t0->signal, -1);
    assert_true(t0->root_cause);
}

static void failure_table_entries(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "launcher.log", table_text);
    check_gen03_table(inc);
    /* the SIGKILL line of the table is an event inside the table */
    const cp_event *kill = event_at(inc, 0, 10);
    assert_int_equal(kill->rule, rule("launcher.sigkill"));
    assert_true(kill->in_table);
    assert_int_equal(kill->origin.rank, 1);
}

/* The same table piped through pdsh: every line starts with "node017: ". */
static char *with_prefix(const char *prefix, const char *text)
{
    size_t lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    size_t n = strlen(text) + lines * strlen(prefix) + 1;
    char *out = malloc(n);
    assert_non_null(out);
    char *o = out;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = (size_t)(nl - p) + 1;
        o += sprintf(o, "%s", prefix);
        memcpy(o, p, len);
        o += len;
        p += len;
    }
    *o = '\0';
    return out;
}

/* real-04: with @record, the worker's traceback is copied into the table. */
static const char table_copy_text[] =
    "Failures:\n"                                                                   /* 1 */
    "[1]:\n"                                                                        /* 2 */
    "  time      : 2026-11-29_17:54:44\n"                                           /* 3 */
    "  host      : localhost\n"                                                     /* 4 */
    "  rank      : 1 (local_rank: 1)\n"                                             /* 5 */
    "  exitcode  : 1 (pid: 28293)\n"                                                /* 6 */
    "  error_file: /tmp/torchelastic_zt4cuk8h/none_k9w8p30g/attempt_0/1/error.json\n" /* 7 */
    "  traceback : Traceback (most recent call last):\n"                            /* 8 */
    "    File \"/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py\", line 346, in wrapper\n" /* 9 */
    "      return f(*args, **kwargs)\n"                                             /* 10 */
    "             ^^^^^^^^^^^^^^^^^^\n"                                             /* 11 */
    "    File \"/work/main/tests/fixtures/real/gen/s04_nan_loss.py\", line 40, in main\n" /* 12 */
    "      raise FloatingPointError(f\"loss is {loss.item()} at step {step}; aborting\")\n" /* 13 */
    "  FloatingPointError: loss is nan at step 5; aborting\n"                        /* 14 */
    "  \n"                                                                          /* 15 */
    "[2]:\n"                                                                        /* 16 */
    "  time      : 2026-11-29_17:54:44\n"                                           /* 17 */
    "  host      : localhost\n"                                                     /* 18 */
    "  rank      : 2 (local_rank: 2)\n"                                             /* 19 */
    "  exitcode  : 1 (pid: 28294)\n"                                                /* 20 */
    "  error_file: /tmp/torchelastic_zt4cuk8h/none_k9w8p30g/attempt_0/2/error.json\n" /* 21 */
    "  traceback : Traceback (most recent call last):\n"                            /* 22 */
    "    File \"/work/main/tests/fixtures/real/gen/s04_nan_loss.py\", line 42, in main\n" /* 23 */
    "      loss.backward()\n"                                                       /* 24 */
    "    File \"/usr/lib/python3/dist-packages/torch/_tensor.py\", line 488, in backward\n" /* 25 */
    "      torch.autograd.backward(\n"                                              /* 26 */
    "  RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:35222\n" /* 27 */
    "  \n"                                                                          /* 28 */
    "============================================================\n";               /* 29 */

static void check_table_copies(const cp_incident *inc)
{
    assert_int_equal(inc->n_table, 2);
    assert_int_equal(table_rank(inc, 1)->pid, 28293);
    assert_int_equal(table_rank(inc, 2)->pid, 28294);
    const cp_event *fpe = event_at(inc, 0, 14);
    assert_int_equal(fpe->rule, rule("pytorch.nonfinite_loss"));
    assert_true(fpe->in_table);
    assert_int_equal(fpe->origin.rank, 1);
    assert_int_equal(fpe->n_frames, 2);
    assert_string_equal(fpe->frames[1].func, "main");
    assert_true(has_evidence_line(fpe, 8, "Traceback"));
    const cp_event *gloo = event_at(inc, 0, 27);
    assert_int_equal(gloo->rule, rule("pytorch.gloo_connection_closed"));
    assert_true(gloo->in_table);
    assert_int_equal(gloo->origin.rank, 2);
    assert_int_equal(gloo->n_frames, 2);
}

static void failure_table_traceback_copy(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "launcher.log", table_copy_text);
    check_table_copies(inc);
}

static void failure_table_pdsh_prefix(void **state)
{
    cp_incident *inc = *state;
    char *a = with_prefix("node017: ", table_text);
    char *b = with_prefix("node017: ", table_copy_text);
    const stream_in s[] = {{"table.log", a}, {"copy.log", b}};
    scan(inc, s, 2);
    free(a);
    free(b);
    /* five entries over the two streams, each as without the prefix */
    assert_int_equal(inc->n_table, 5);
    const cp_table_entry *t0 = NULL, *t1 = NULL;
    for (size_t i = 0; i < inc->n_table; i++) {
        if (inc->table[i].stream == 0 && inc->table[i].rank == 0)
            t0 = &inc->table[i];
        if (inc->table[i].stream == 0 && inc->table[i].rank == 1)
            t1 = &inc->table[i];
    }
    assert_non_null(t0);
    assert_non_null(t1);
    assert_true(t0->root_cause);
    assert_false(t1->root_cause);
    assert_int_equal(t1->pid, 12850);
    assert_int_equal(t1->exitcode, -9);
    assert_int_equal(t1->signal, 9);
    assert_string_equal(t1->host, "localhost");

    const cp_event *fpe = event_at(inc, 1, 14);
    assert_int_equal(fpe->rule, rule("pytorch.nonfinite_loss"));
    assert_true(fpe->in_table);
    assert_int_equal(fpe->origin.rank, 1);
    assert_string_equal(fpe->origin.host, "node017");
    const cp_event *gloo = event_at(inc, 1, 27);
    assert_true(gloo->in_table);
    assert_int_equal(gloo->origin.rank, 2);
}

/* ---- NCCL identity ---------------------------------------------------------- */

static const char nccl_node1_text[] =
    "[default6]:node001:61153:61406 [6] NCCL INFO ncclCommInitRank comm 0x55d365744eb3 rank 6 nranks 16 cudaDev 6 nvmlDev 6 busId ba000 commId 0x8c994adbe3a5db4e - Init START\n"
    "[default6]:node001:61153:61406 [6] NCCL INFO ncclCommInitRank comm 0x55d365744eb3 rank 6 nranks 16 cudaDev 6 nvmlDev 6 busId ba000 commId 0x8c994adbe3a5db4e - Init COMPLETE\n"
    "[default6]:RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [10.141.1.2]:36763\n";

static const char nccl_node2_text[] =
    "[default6]:node002:5117:5356 [6] NCCL INFO ncclCommInitRank comm 0x55de5ef0643e rank 14 nranks 16 cudaDev 6 nvmlDev 6 busId ba000 commId 0x8c994adbe3a5db4e - Init START\n"
    "[default6]:node002:5117:5356 [6] NCCL INFO ncclCommInitRank comm 0x55de5ef0aaaa rank 3 nranks 8 cudaDev 6 nvmlDev 6 busId ba000 commId 0x11aa22bb33cc44dd - Init START\n"
    "[default6]:RuntimeError: CUDA error: an illegal memory access was encountered\n";

static const cp_ident *ident_of(const cp_incident *inc, const char *host, int rank, int nranks)
{
    for (size_t i = 0; i < inc->n_idents; i++) {
        const cp_ident *x = &inc->idents[i];
        if (x->rank == rank && x->nranks == nranks && strcmp(x->host, host) == 0)
            return x;
    }
    fail_msg("no ident %s rank %d/%d", host, rank, nranks);
    return NULL;
}

static void nccl_init_lines_give_idents(void **state)
{
    cp_incident *inc = *state;
    scan_one(inc, "train.log", nccl_node2_text);
    /* one fact per communicator (the same line twice would be one) */
    assert_int_equal(inc->n_idents, 2);
    const cp_ident *x = ident_of(inc, "node002", 14, 16);
    assert_int_equal(x->pid, 5117);
    assert_int_equal(x->cuda_dev, 6);
    assert_int_equal(x->local_rank, 6);
    assert_string_equal(x->busid, "ba000");
    assert_non_null(ident_of(inc, "node002", 3, 8));
    /* the world communicator sets the world size, the sub-communicator not */
    assert_int_equal(inc->world_size, 16);
}

static void nccl_per_node_layout_resolves_ranks(void **state)
{
    cp_incident *inc = *state;
    const stream_in s[] = {{"node001/train.log", nccl_node1_text}, {"node002/train.log", nccl_node2_text}};
    scan(inc, s, 2);
    assert_int_equal(inc->n_idents, 3);
    assert_int_equal(inc->n_events, 2);
    const cp_event *e1 = event_at(inc, 0, 3);
    const cp_event *e2 = event_at(inc, 1, 3);
    /* before resolving, the writers know host + local rank only */
    assert_int_equal(e2->origin.rank, -1);
    assert_int_equal(writer_of(inc, e2)->id.local_rank, 6);
    assert_string_equal(writer_of(inc, e2)->id.host, "node002");
    assert_int_not_equal(e1->writer, e2->writer);
    cp_ranks_resolve(inc);
    dump(inc);
    assert_int_equal(writer_of(inc, e1)->rank, 6);
    assert_int_equal(writer_of(inc, e2)->rank, 14);
    assert_int_equal(cp_rank_of_local(inc, "node002", 6), 14);
    assert_int_equal(cp_rank_of_local(inc, "node001", 6), 6);
    cp_pid_ranks by_pid;
    assert_int_equal(cp_pid_ranks_build(inc, &by_pid), 0);
    assert_int_equal(cp_pid_ranks_find(&by_pid, "node002", 5117), 14);
    assert_int_equal(cp_pid_ranks_find(&by_pid, "node002", 4242), -1);
    cp_pid_ranks_free(&by_pid);
    /* every writer of node002's stream resolves to 14 */
    for (size_t i = 0; i < inc->n_writers; i++)
        if (inc->writers[i].stream == 1)
            assert_int_equal(inc->writers[i].rank, 14);
}

/* ---- chunks ------------------------------------------------------------------ */

enum { BIG_LINES = 20000, FILLER_WIDTH = 52 };

static void big_chunk_traceback_at_end(void **state)
{
    cp_incident *inc = *state;
    static const char *const tail[] = {
        "[rank5]: Traceback (most recent call last):\n",
        "[rank5]:   File \"/home/ubuntu/train.py\", line 98, in main\n",
        "[rank5]:     loss = model(batch)\n",
        "[rank5]:   File \"/home/ubuntu/model.py\", line 216, in forward\n",
        "[rank5]:     attn = torch.matmul(q, k)\n",
        "[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 896.00 MiB. GPU 5 has a total capacity of 79.10 GiB\n",
    };
    size_t n_tail = sizeof tail / sizeof tail[0];
    size_t cap = (size_t)BIG_LINES * (FILLER_WIDTH + 1) + 4096;
    char *buf = malloc(cap);
    assert_non_null(buf);
    size_t len = 0;
    for (size_t i = 0; i < BIG_LINES - n_tail; i++) {
        /* lines no rule hits (the common case in a real log) */
        int w = snprintf(buf + len, cap - len, "data shard %07zu prefetched to pinned buffer", i);
        assert_true(w > 0 && w <= FILLER_WIDTH);
        while (w < FILLER_WIDTH)
            buf[len + (size_t)w++] = '.';
        buf[len + (size_t)w] = '\n';
        len += (size_t)w + 1;
    }
    for (size_t i = 0; i < n_tail; i++) {
        size_t l = strlen(tail[i]);
        memcpy(buf + len, tail[i], l);
        len += l;
    }
    assert_true(len >= (size_t)1 << 20);
    assert_int_equal(cp_incident_init(inc, &g_cat, g_matcher), 0);
    assert_int_equal(cp_incident_begin_stream(inc, "rank5.log"), 0);
    assert_int_equal(cp_incident_feed(inc, buf, len, 1, NULL), 0);
    cp_incident_end_stream(inc);
    free(buf);
    dump(inc);
    assert_int_equal(inc->lines, BIG_LINES);
    assert_int_equal(inc->bytes, len);
    assert_int_equal(inc->hit_lines, 4); /* header, two frames, the error */
    assert_int_equal(inc->n_events, 1);
    const cp_event *e = &inc->events[0];
    assert_int_equal(e->rule, rule("pytorch.cuda_oom"));
    assert_int_equal(e->line, BIG_LINES);
    assert_int_equal(e->origin.rank, 5);
    assert_int_equal(e->n_frames, 2);
    assert_string_equal(e->frames[1].func, "forward");
    assert_true(has_evidence_line(e, BIG_LINES - 5, "Traceback"));
}

static void traceback_split_across_feeds(void **state)
{
    cp_incident *inc = *state;
    /* cut traceback_text after line 6 */
    const char *cut = traceback_text;
    for (int i = 0; i < 6; i++)
        cut = strchr(cut, '\n') + 1;
    size_t first = (size_t)(cut - traceback_text);
    assert_int_equal(cp_incident_init(inc, &g_cat, g_matcher), 0);
    assert_int_equal(cp_incident_begin_stream(inc, "train.log"), 0);
    assert_int_equal(cp_incident_feed(inc, traceback_text, first, 1, NULL), 0);
    assert_int_equal(inc->n_events, 0); /* still open */
    assert_int_equal(cp_incident_feed(inc, cut, strlen(cut), 7, NULL), 0);
    cp_incident_end_stream(inc);
    dump(inc);
    assert_int_equal(inc->lines, 12);
    assert_int_equal(inc->n_events, 1);
    const cp_event *e = &inc->events[0];
    assert_int_equal(e->rule, rule("py.exception"));
    assert_int_equal(e->line, 12);
    assert_int_equal(e->n_frames, 4);
    assert_string_equal(e->frames[1].func, "main");
    assert_string_equal(e->frames[2].func, "_call_impl");
    assert_true(has_evidence_line(e, 1, "Traceback"));
    assert_true(has_evidence_line(e, 12, "ValueError"));
}

static void add_rank_writer(cp_incident *inc, const char *host, int pid, int rank)
{
    cp_origin o;
    cp_origin_init(&o);
    o.rank = rank;
    o.pid = pid;
    snprintf(o.host, sizeof o.host, "%s", host);
    cp_writer_key key;
    cp_writer_key_of(&o, 0, &key);
    assert_true(cp_writer_for(inc, &o, 0, &key) >= 0);
}

/* A process's rank: what a rank's own lines say first, then NCCL's lines
 * of the world communicator, then the failure table (which names no host
 * a lookup must match); an empty host matches any. */
static void pid_ranks_take_writers_then_nccl_then_table(void **state)
{
    cp_incident *inc = *state;
    assert_int_equal(cp_incident_init(inc, &g_cat, g_matcher), 0);
    add_rank_writer(inc, "node002", 5117, 14);
    add_rank_writer(inc, "node004", 5117, 30);
    assert_int_equal(cp_ident_add(inc, &(cp_ident){.rank = 9, .nranks = 32, .pid = 5117, .host = "node003"}), 0);
    assert_int_equal(cp_ident_add(inc, &(cp_ident){.rank = 3, .nranks = 32, .pid = 700, .host = "node001"}), 0);
    /* a sub-communicator's rank is not the process's rank */
    assert_int_equal(cp_ident_add(inc, &(cp_ident){.rank = 1, .nranks = 2, .pid = 800, .host = "node001"}), 0);
    assert_int_equal(cp_table_add(inc, &(cp_table_entry){.rank = 5, .pid = 700, .host = "node009"}), 0);
    assert_int_equal(cp_table_add(inc, &(cp_table_entry){.rank = 7, .pid = 800}), 0);
    assert_int_equal(cp_table_add(inc, &(cp_table_entry){.rank = -1, .pid = 900}), 0);
    assert_int_equal(inc->world_size, 32);
    cp_pid_ranks by_pid;
    assert_int_equal(cp_pid_ranks_build(inc, &by_pid), 0);
    assert_int_equal(cp_pid_ranks_find(&by_pid, "node002", 5117), 14);
    assert_int_equal(cp_pid_ranks_find(&by_pid, "node004", 5117), 30);
    assert_int_equal(cp_pid_ranks_find(&by_pid, "node003", 5117), 9);
    assert_int_equal(cp_pid_ranks_find(&by_pid, "", 5117), 14);     /* the first writer */
    assert_int_equal(cp_pid_ranks_find(&by_pid, "node001", 700), 3);
    assert_int_equal(cp_pid_ranks_find(&by_pid, "node008", 700), 5); /* the table, any host */
    assert_int_equal(cp_pid_ranks_find(&by_pid, "node001", 800), 7);
    assert_int_equal(cp_pid_ranks_find(&by_pid, "node001", 900), -1);
    assert_int_equal(cp_pid_ranks_find(&by_pid, "node001", 4242), -1);
    cp_pid_ranks_free(&by_pid);
}

/* The chunk ends right after the logging line that names the rank: the
 * traceback in the next chunk still inherits it. */
static void identity_inherited_across_feeds(void **state)
{
    cp_incident *inc = *state;
    const char *cut = after_error_text;
    for (int i = 0; i < 2; i++)
        cut = strchr(cut, '\n') + 1;
    assert_int_equal(cp_incident_init(inc, &g_cat, g_matcher), 0);
    assert_int_equal(cp_incident_begin_stream(inc, "train.log"), 0);
    assert_int_equal(cp_incident_feed(inc, after_error_text, (size_t)(cut - after_error_text), 1, NULL), 0);
    assert_int_equal(cp_incident_feed(inc, cut, strlen(cut), 3, NULL), 0);
    cp_incident_end_stream(inc);
    dump(inc);
    assert_int_equal(inc->n_events, 1);
    assert_int_equal(inc->events[0].line, 8);
    assert_int_equal(inc->events[0].origin.rank, 2);
    assert_int_equal(inc->events[0].origin.time.ms, 1795969172295LL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(traceback_is_one_event, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(interleaved_ranks_are_two_events, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(chained_exceptions_are_one_event, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(dataloader_worker_error_is_one_event, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(consecutive_tracebacks_are_two_events, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(cpp_stack_joins_event_above, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(traceback_under_error_line_takes_its_rank, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(traceback_under_progress_line_has_no_rank, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(source_line_with_a_rule_keeps_the_rank, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(faulthandler_after_sigterm_belongs_to_pid, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(own_header_starts_new_event, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(launcher_report_is_its_own_event, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(child_failed_is_not_the_workers, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(rich_traceback_is_one_event, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(exception_naming_a_rank_ends_rankless_traceback, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(untimed_event_takes_next_time, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(closed_untimed_event_takes_next_time, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(untimed_event_takes_earlier_time, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(earlier_time_is_marked_estimated, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(failure_table_entries, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(failure_table_traceback_copy, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(failure_table_pdsh_prefix, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(nccl_init_lines_give_idents, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(nccl_per_node_layout_resolves_ranks, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(big_chunk_traceback_at_end, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(traceback_split_across_feeds, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(identity_inherited_across_feeds, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(pid_ranks_take_writers_then_nccl_then_table, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(unconfirmed_progress_keeps_the_last_step, new_incident, free_incident),
        cmocka_unit_test_setup_teardown(progress_steps_of_writers_the_prefixes_do_not_name, new_incident,
                                        free_incident),
    };
    return cmocka_run_group_tests(tests, harness_load_catalog, harness_free_catalog);
}
