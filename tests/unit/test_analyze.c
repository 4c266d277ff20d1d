/* test_analyze.c - unit tests of the verdict (analyze.c, suspects.c,
 * timeline.c): small incidents scanned with the real rule catalog, then
 * cp_analyze, and the diagnosis checked field by field: the first rank,
 * kind, owner, phase, hang, per-rank states, and the notes that explain
 * how a hang's culprit was found. Inputs are excerpts adapted from the
 * corpus and the real fixtures. Set CULPRIT_TEST_DUMP=1 to print the
 * events and the verdict. */
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

#include "analyze.h"
#include "catalog.h"
#include "diagnosis.h"
#include "facts.h"
#include "incident.h"
#include "matcher.h"
#include "harness.h"

/* ---- harness ------------------------------------------------------------- */



static void dump(const fixture *f)
{
    const char *env = getenv("CULPRIT_TEST_DUMP");
    if (!env || !*env)
        return;
    const cp_incident *inc = &f->inc;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        int wr = e->writer >= 0 ? inc->writers[e->writer].rank : -1;
        fprintf(stderr, "event %zu: s%d:%llu rank=%d/%d time=%lld/%d rule=%s table=%d | %.90s\n", i, e->stream,
                (unsigned long long)e->line, e->origin.rank, wr, (long long)e->origin.time.ms,
                (int)e->origin.time.kind, e->rule == CP_RULE_STACK ? "(stack)" : g_cat.rules[e->rule].id, e->in_table,
                e->text ? e->text : "");
    }
    const cp_diagnosis *d = &f->d;
    fprintf(stderr, "verdict: failed=%d hang=%d rank=%d kind=%s owner=%s phase=%s rule=%s time=%s world=%d\n",
            d->failed, d->hang, d->first_rank, cp_kind_name(d->kind), cp_owner_name(d->owner),
            cp_phase_name(d->phase), d->rule_id ? d->rule_id : "-", d->first_time ? d->first_time : "-",
            d->world_size);
    for (size_t i = 0; i < d->n_notes; i++)
        fprintf(stderr, "  note: %s\n", d->notes[i]);
    for (size_t i = 0; i < d->n_ranks; i++)
        fprintf(stderr, "  rank %d: %s %s\n", d->ranks[i].rank, cp_rank_state_name(d->ranks[i].state),
                d->ranks[i].first_error ? d->ranks[i].first_error : "");
}

/* Scans the streams in order (each as one chunk from line 1) and analyzes. */
static void diagnose(fixture *f, const stream_in *streams, size_t n)
{
    harness_scan(&f->inc, streams, n);
    assert_int_equal(cp_analyze(&f->d, &f->inc), 0);
    dump(f);
}

static void diagnose_one(fixture *f, const char *path, const char *text)
{
    const stream_in s = {path, text};
    diagnose(f, &s, 1);
}

/* diagnose_one on a log text with variants filled in (printf's format). */
__attribute__((format(printf, 2, 3))) static void diagnose_formatted(fixture *f, const char *fmt, ...)
{
    char text[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof text);
    diagnose_one(f, "train.log", text);
}

static bool note_has(const cp_diagnosis *d, const char *a, const char *b)
{
    for (size_t i = 0; i < d->n_notes; i++)
        if (strstr(d->notes[i], a) && (!b || strstr(d->notes[i], b)))
            return true;
    return false;
}

static const cp_rank_row *row_of(const cp_diagnosis *d, int rank)
{
    for (size_t i = 0; i < d->n_ranks; i++)
        if (d->ranks[i].rank == rank)
            return &d->ranks[i];
    fail_msg("no row for rank %d", rank);
    return NULL;
}

/* ---- a traceback the input ends in ------------------------------------- */

/* torchtitan#3065 (its first line's "[" restored): a paste that stops in
 * rank 0's traceback, after its phase line said a save began. */
static const char cut_traceback_text[] =
    "[rank0]:[titan] 2026-05-12 17:07:23,237 - root - INFO - step: 3000  loss:  3.63069\n"
    "[rank0]:[titan] 2026-05-12 17:07:23,237 - root - INFO - Saving the checkpoint (or staging if async is enabled).\n"
    "[rank0]:wandb: Run history:\n"
    "[rank0]:Traceback (most recent call last):\n"
    "[rank0]:  File \"/torchtitan/torchtitan/train.py\", line 69, in <module>\n"
    "[rank0]:    main()\n"
    "[rank0]:  File \"/torchtitan/torchtitan/trainer.py\", line 998, in train\n"
    "[rank0]:    self.checkpointer.save(\n"
    "[rank0]:    ~~~~~~~~~~~~~~~~~~~~~~^\n"
    "[rank0]:        self.step, last_step=(self.step == config.training.steps)\n"
    "[rank0]:        ^^^^^^^^^^^^^^^^^^^^^^^\n";

static void cut_traceback_is_a_failure(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", cut_traceback_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_int_equal(d->first_rank, 0);
    assert_int_equal(d->kind, CP_KIND_PYTHON_EXCEPTION);
    assert_string_equal(d->rule_id, "engine.cut_traceback");
    assert_int_equal(d->phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_int_equal(d->owner, CP_OWNER_UNKNOWN);
    assert_false(d->hang);
    assert_true(note_has(d, "ends in rank 0's traceback", NULL));
}

/* A paste that begins inside a traceback, below its header, and stops
 * before its exception line (DeepSpeed's pipeline engine, as in
 * Coobiw/MPP-LLaVA#34): its frames are still a raised error, not a dump
 * of a live process, and they say where. */
static const char headless_traceback_text[] =
    "File \"/data/MPP-LLaVA/train_pipeline.py\", line 228, in main\n"
    "    loss = engine.train_batch(data_iter=train_iter)\n"
    "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/pipe/engine.py\", line 388, in train_batch\n"
    "    self._exec_schedule(sched)\n"
    "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/pipe/engine.py\", line 1102, in _exec_backward_pass\n"
    "    torch.autograd.backward(tensors=out_tensors, grad_tensors=grad_tensors)\n";

static void headless_traceback_is_a_failure(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", headless_traceback_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_false(d->hang);
    assert_int_equal(d->kind, CP_KIND_PYTHON_EXCEPTION);
    assert_string_equal(d->rule_id, "engine.cut_traceback");
    assert_int_equal(d->phase, CP_PHASE_BACKWARD);
}

/* pytorch/pytorch#153354, as pasted: cut off five frames deep into
 * torch's backward and activation recomputation (torchtune's checkout
 * is library code too). Frames that already run that deep into library
 * code put the raise on the framework. */
static const char cut_deep_in_library_text[] =
    "[rank4]: Traceback (most recent call last):\n"
    "[rank4]:   File \"/traindata/eugen/torchtune/deepseek_v3/dpo.py\", line 417, in <module>\n"
    "[rank4]:     run_dpo(config)\n"
    "[rank4]:   File \"/traindata/eugen/torchtune/deepseek_v3/dpo.py\", line 269, in run_dpo\n"
    "[rank4]:     loss.backward()\n"
    "[rank4]:   File \"/traindata/eugen/torchtune/.venv/lib/python3.12/site-packages/torch/_tensor.py\", line 648, in backward\n"
    "[rank4]:     torch.autograd.backward(\n"
    "[rank4]:   File \"/traindata/eugen/torchtune/.venv/lib/python3.12/site-packages/torch/autograd/__init__.py\", line 354, in backward\n"
    "[rank4]:     _engine_run_backward(\n"
    "[rank4]:   File \"/traindata/eugen/torchtune/.venv/lib/python3.12/site-packages/torch/autograd/graph.py\", line 824, in _engine_run_backward\n"
    "[rank4]:     return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass\n"
    "[rank4]:   File \"/traindata/eugen/torchtune/.venv/lib/python3.12/site-packages/torch/utils/checkpoint.py\", line 1123, in unpack_hook\n"
    "[rank4]:     frame.recompute_fn(*args)\n"
    "[rank4]:   File \"/train\n";

static void cut_traceback_deep_in_a_library_is_the_frameworks(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", cut_deep_in_library_text);
    const cp_diagnosis *d = &f->d;
    assert_string_equal(d->rule_id, "engine.cut_traceback");
    assert_int_equal(d->first_rank, 4);
    assert_int_equal(d->phase, CP_PHASE_BACKWARD);
    assert_int_equal(d->owner, CP_OWNER_FRAMEWORK);
}

/* Lightning-AI/pytorch-lightning#19626, as pasted (from its traceback
 * on): cut three library frames after the user's call to fit(). The
 * raise may still be in code the library calls back (a module's
 * training_step), so no owner is named. */
static const char cut_near_users_code_text[] =
    "Traceback (most recent call last):\n"
    "  File \"/src/repos/t/experiments/fsdp/repro.py\", line 61, in <module>\n"
    "    test(False) # fails\n"
    "  File \"/src/repos/t/experiments/fsdp/repro.py\", line 58, in test\n"
    "    trainer.fit(model, train_loader)\n"
    "  File \"/src/miniconda3/envs/diffusion/lib/python3.10/site-packages/pytorch_lightning/trainer/trainer.py\", line 543, in fit\n"
    "    call._call_and_handle_interrupt(\n"
    "  File \"/src/miniconda3/envs/diffusion/lib/python3.10/site-packages/pytorch_lightning/trainer/call.py\", line 44, in _call_and_handle_interrupt\n"
    "    return trainer_fn(*args, **kwargs)\n"
    "  File \"/src/miniconda3/envs/diffusion/lib/python3.10/site-packages/pytorch_lightning/trainer/trainer.py\", line 579, in _fit_impl\n"
    "    self._run(model, ckpt_path=ckpt_path)\n";

static void cut_traceback_near_the_users_code_names_no_owner(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", cut_near_users_code_text);
    const cp_diagnosis *d = &f->d;
    assert_string_equal(d->rule_id, "engine.cut_traceback");
    assert_int_equal(d->owner, CP_OWNER_UNKNOWN);
}

/* A faulthandler dump is where a live process was, not an error it
 * raised: it is no cut traceback. Alone, with no error anywhere, it was
 * taken of a process that was stuck (a signal or a timer), a hang. */
static void dump_at_the_end_is_a_hang_not_an_exception(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "rank_0.log",
                 "2026-11-29 16:19:32,293 INFO train: step 2/8 loss=1.3768\n"
                 "Current thread 0x00007fb6064e4040 (most recent call first):\n"
                 "  File \"/home/ml/proj/train.py\", line 34 in forward\n"
                 "  File \"/home/ml/proj/train.py\", line 60 in <module>\n");
    assert_true(f->d.failed);
    assert_true(f->d.hang);
    assert_string_equal(f->d.rule_id, "engine.live_stack_dump");
    assert_int_not_equal(f->d.kind, CP_KIND_PYTHON_EXCEPTION);
    assert_int_equal(f->d.phase, CP_PHASE_FORWARD);
}

/* A traceback whose stream goes on well past it (its exception line not
 * recognised, then more output) is not one the input ends in. */
static void traceback_followed_by_more_output_is_not_cut(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "rank_0.log",
                 "Traceback (most recent call last):\n"
                 "  File \"/home/ml/proj/train.py\", line 60, in <module>\n"
                 "    sys.exit(main())\n"
                 "SystemExit: 3\n"
                 "cleaning up\n"
                 "removing /tmp/run-17\n"
                 "closing the data loader\n"
                 "bye\n");
    assert_false(f->d.failed);
}

/* ---- one rank in another collective ------------------------------------ */

/* accelerate#157 (PyTorch 1.9, no sequence numbers): rank 0 waits in an
 * all-reduce the others never join; they wait in a broadcast. */
static const char odd_collective_text[] =
    "[E ProcessGroupNCCL.cpp:566] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(OpType=ALLREDUCE, "
    "Timeout(ms)=1800000) ran for 1801060 milliseconds before timing out.\n"
    "[E ProcessGroupNCCL.cpp:566] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, "
    "Timeout(ms)=1800000) ran for 1801140 milliseconds before timing out.\n"
    "[E ProcessGroupNCCL.cpp:566] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, "
    "Timeout(ms)=1800000) ran for 1801177 milliseconds before timing out.\n"
    "[E ProcessGroupNCCL.cpp:566] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(OpType=BROADCAST, "
    "Timeout(ms)=1800000) ran for 1801215 milliseconds before timing out.\n";

static void rank_in_another_collective_is_out_of_step(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", odd_collective_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_int_equal(d->first_rank, 0);
    assert_int_equal(d->kind, CP_KIND_COLLECTIVE_MISMATCH);
    assert_string_equal(d->rule_id, "engine.collective_out_of_step");
    assert_true(note_has(d, "Rank 0 timed out in ALLREDUCE", "BROADCAST"));
    bool shows_rank0 = false;
    for (size_t i = 0; i < d->n_evidence; i++)
        shows_rank0 |= d->evidence[i].rank == 0 && strstr(d->evidence[i].text, "OpType=ALLREDUCE") != NULL;
    assert_true(shows_rank0);
}

/* The paste ends inside the last rank's collective type (fairseq-based
 * OFA#271): a cut name is no other collective. */
static void type_cut_by_the_paste_is_not_another_collective(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[E ProcessGroupNCCL.cpp:737] [Rank 1] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 milliseconds "
                 "before timing out.\n"
                 "[E ProcessGroupNCCL.cpp:737] [Rank 3] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802211 milliseconds "
                 "before timing out.\n"
                 "[E ProcessGroupNCCL.cpp:737] [Rank 5] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=469508, OpType=ALLR");
    assert_true(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_TIMEOUT);
    assert_false(note_has(&f->d, "different collectives", NULL));
}

/* Two ranks in each collective: the ranks called different collectives,
 * but no single rank is out of step. */
static void even_split_of_collectives_names_no_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank0]:[E ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600011 "
                 "milliseconds before timing out.\n"
                 "[rank1]:[E ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 "
                 "milliseconds before timing out.\n"
                 "[rank2]:[E ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=9, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 "
                 "milliseconds before timing out.\n"
                 "[rank3]:[E ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=9, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600014 "
                 "milliseconds before timing out.\n");
    assert_true(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_COLLECTIVE_MISMATCH);
    assert_string_equal(f->d.rule_id, "engine.collectives_differ");
    assert_int_equal(f->d.first_rank, -1);
    assert_true(note_has(&f->d, "Rank 0 timed out in ALLREDUCE and rank 2 in BROADCAST", NULL));
}

/* Two ranks time out at one sequence number in ALLREDUCEs of different
 * sizes (axolotl#967, shortened): they called different collectives. */
static void sizes_that_differ_are_different_collectives(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank6]:[E ProcessGroupNCCL.cpp:632] [Rank 6] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=20879, OpType=ALLREDUCE, NumelIn=419044352, NumelOut=419044352, Timeout(ms)=1800000) "
                 "ran for 1800360 milliseconds before timing out.\n"
                 "[rank7]:[E ProcessGroupNCCL.cpp:632] [Rank 7] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=20879, OpType=ALLREDUCE, NumelIn=406069248, NumelOut=406069248, Timeout(ms)=1800000) "
                 "ran for 1800413 milliseconds before timing out.\n");
    assert_int_equal(f->d.kind, CP_KIND_COLLECTIVE_MISMATCH);
    assert_string_equal(f->d.rule_id, "engine.collectives_differ");
    assert_true(note_has(&f->d, "ALLREDUCE of 419044352 elements", "ALLREDUCE of 406069248 elements"));
}

/* DeepSpeedExamples#372: an exception no rule names, raised inside the
 * save (save_hf_format): the checkpoint is what failed. The same
 * exception in a forward stays a Python exception. */
static void unnamed_exception_in_a_save_is_a_checkpoint_failure(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "Traceback (most recent call last):\n"
                 "  File \"main.py\", line 334, in main\n"
                 "    save_hf_format(model, tokenizer, args)\n"
                 "  File \".../applications/DeepSpeed-Chat/training/utils/utils.py\", line 51, in save_hf_format\n"
                 "    os.makedirs(output_dir)\n"
                 "  File \"/usr/lib/python3.8/os.py\", line 223, in makedirs\n"
                 "    mkdir(name, mode)\n"
                 "FileExistsError: [Errno 17] File exists: '.../output/actor/'\n");
    assert_int_equal(f->d.phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_int_equal(f->d.kind, CP_KIND_CHECKPOINT_IO);
    assert_string_equal(f->d.rule_id, "engine.checkpoint_exception");
    assert_non_null(strstr(f->d.signature, "FileExistsError"));
    assert_true(note_has(&f->d, "during a checkpoint save", NULL));
    free_fixture(state);
    new_fixture(state);
    f = *state;
    diagnose_one(f, "train.log",
                 "Traceback (most recent call last):\n"
                 "  File \"train.py\", line 88, in training_step\n"
                 "    logits = model(batch)\n"
                 "  File \"/usr/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1501, in _call_impl\n"
                 "    return forward_call(*args, **kwargs)\n"
                 "  File \"model.py\", line 40, in forward\n"
                 "    os.makedirs(out_dir)\n"
                 "FileExistsError: [Errno 17] File exists: 'out/'\n");
    assert_int_equal(f->d.kind, CP_KIND_PYTHON_EXCEPTION);
    assert_string_not_equal(f->d.rule_id, "engine.checkpoint_exception");
}

/* A rule of its own that says it is the checkpoint's failure inside a
 * save (py.pickle_failed: torch.save of a lambda, as real-42 plants it)
 * is one there, and the same error spawning the ranks is not. */
static void named_exception_in_a_save_is_a_checkpoint_failure(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "Traceback (most recent call last):\n"
                 "  File \"train.py\", line 40, in main\n"
                 "    torch.save({\"model\": model.state_dict(), \"sched\": sched}, path)\n"
                 "  File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 423, in save\n"
                 "    _save(obj, opened_zipfile, pickle_module, pickle_protocol)\n"
                 "  File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 635, in _save\n"
                 "    pickler.dump(obj)\n"
                 "AttributeError: Can't pickle local object 'main.<locals>.<lambda>'\n");
    assert_int_equal(f->d.phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_int_equal(f->d.kind, CP_KIND_CHECKPOINT_IO);
    assert_string_equal(f->d.rule_id, "engine.checkpoint_exception");
    assert_non_null(strstr(f->d.signature, "Can't pickle local object"));
    free_fixture(state);
    new_fixture(state);
    f = *state;
    diagnose_one(f, "train.log", "AttributeError: Can't pickle local object 'FeatureExtractor.get_features.<locals>.hook'\n");
    assert_int_equal(f->d.kind, CP_KIND_PYTHON_EXCEPTION);
    assert_int_equal(f->d.phase, CP_PHASE_INIT);
    assert_string_equal(f->d.rule_id, "py.pickle_failed");
}

/* NVIDIA-NeMo/Speech#14906, shortened: UCX's handler reports a segfault
 * whose native backtrace runs through torch.save's zip writer. A crash
 * in a save leaves the checkpoint unwritten: a checkpoint failure, the
 * segfault its signature. */
static void segfault_in_a_save_is_a_checkpoint_failure(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[c608-061:2760180:0:2760180] Caught signal 11 (Segmentation fault: address not mapped to "
                 "object at address 0x400581d86000)\n"
                 "==== backtrace (tid:2760180) ====\n"
                 " 0  /opt/hpcx/ucx/lib/libucs.so.0(ucs_handle_error+0x2cc) [0x4000f1ce278c]\n"
                 " 1  linux-vdso.so.1(__kernel_rt_sigreturn+0) [0x400038ac07f0]\n"
                 " 2  /usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cpu.so"
                 "(mz_zip_writer_add_mem_ex_v2+0x3c8) [0x40003ed9e308]\n");
    assert_int_equal(f->d.phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_int_equal(f->d.kind, CP_KIND_CHECKPOINT_IO);
    assert_string_equal(f->d.rule_id, "engine.checkpoint_exception");
    assert_non_null(strstr(f->d.signature, "Caught signal 11"));
}

/* FlagEmbedding#764, shortened: ranks 2 and 0 time out in ALLGATHERs of
 * different sizes at work 6207, rank 1 in work 6206, and rank 0 also in
 * an ALLREDUCE of another group (another timeout) at work 6029. Work 6207
 * is where most ranks stopped, and there they called different
 * collectives; the other group's lower number makes no rank a laggard. */
static void sizes_differ_where_most_ranks_stopped(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank2]:[E ProcessGroupNCCL.cpp:523] [Rank 2] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=6207, OpType=ALLGATHER, NumelIn=48128, NumelOut=192512, Timeout(ms)=1800000) "
                 "ran for 1800644 milliseconds before timing out.\n"
                 "[rank0]:[E ProcessGroupNCCL.cpp:523] [Rank 0] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=6207, OpType=ALLGATHER, NumelIn=49152, NumelOut=196608, Timeout(ms)=1800000) "
                 "ran for 1800838 milliseconds before timing out.\n"
                 "[rank0]:[E ProcessGroupNCCL.cpp:523] [Rank 0] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=6029, OpType=ALLREDUCE, NumelIn=65084417, NumelOut=65084417, Timeout(ms)=600000) "
                 "ran for 1801622 milliseconds before timing out.\n"
                 "[rank1]:[E ProcessGroupNCCL.cpp:523] [Rank 1] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=6206, OpType=ALLGATHER, NumelIn=8192, NumelOut=32768, Timeout(ms)=1800000) "
                 "ran for 1801713 milliseconds before timing out.\n");
    assert_true(f->d.hang);
    assert_int_equal(f->d.first_rank, -1);
    assert_int_equal(f->d.kind, CP_KIND_COLLECTIVE_MISMATCH);
    assert_string_equal(f->d.rule_id, "engine.collectives_differ");
    assert_true(note_has(&f->d, "ALLGATHER of 48128 elements", "ALLGATHER of 49152 elements"));
}

/* Reconstruction: two timeouts at one number in groups of different
 * timeouts are two groups' works, whose sizes need not agree, and whose
 * numbers say nothing about which rank is behind. */
static void timeouts_of_two_groups_do_not_compare(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank0]:[E ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=41, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) "
                 "ran for 600360 milliseconds before timing out.\n"
                 "[rank1]:[E ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=41, OpType=ALLREDUCE, NumelIn=4096, NumelOut=4096, Timeout(ms)=1800000) "
                 "ran for 1800413 milliseconds before timing out.\n"
                 "[rank2]:[E ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=4096, NumelOut=4096, Timeout(ms)=1800000) "
                 "ran for 1800413 milliseconds before timing out.\n"
                 "[rank3]:[E ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) "
                 "ran for 600360 milliseconds before timing out.\n");
    assert_true(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_TIMEOUT);
    assert_int_equal(f->d.first_rank, -1);
    assert_false(note_has(&f->d, "different collectives", NULL));
    assert_false(note_has(&f->d, "is behind the other ranks", NULL));
}

/* All-to-all inputs differ in size across ranks by design (uneven
 * splits): sizes alone say nothing there. */
static void alltoall_sizes_do_not_differ(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank6]:[E ProcessGroupNCCL.cpp:632] [Rank 6] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=77, OpType=ALLTOALL_BASE, NumelIn=4096, NumelOut=4096, Timeout(ms)=600000) "
                 "ran for 600360 milliseconds before timing out.\n"
                 "[rank7]:[E ProcessGroupNCCL.cpp:632] [Rank 7] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=77, OpType=ALLTOALL_BASE, NumelIn=5120, NumelOut=3072, Timeout(ms)=600000) "
                 "ran for 600413 milliseconds before timing out.\n");
    assert_int_equal(f->d.kind, CP_KIND_NCCL_TIMEOUT);
}

/* A barrier among the first collectives of the default group times out
 * on ranks 2 and 3 while rank 0 is still grouping its dataset (the
 * progress bar and rank 2's timeout share a line, as tqdm's carriage
 * return leaves them; a field log): set-up, and rank 0 the one waited
 * for. */
static const char startup_barrier_text[] =
    "[default0]:Grouping texts in chunks of 2049:   8%|8         | 726000/9672101 [02:32<30:38, 4866.01 examples/s]"
    "[default2]:[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600888 milliseconds "
    "before timing out.\n"
    "[default3]:[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600892 milliseconds "
    "before timing out.\n";

static void early_barrier_timeout_is_startup(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", startup_barrier_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_int_equal(d->kind, CP_KIND_NCCL_TIMEOUT);
    assert_string_equal(d->rule_id, "engine.startup_barrier");
    assert_int_equal(d->phase, CP_PHASE_INIT);
    assert_int_equal(d->owner, CP_OWNER_CONFIG);
    assert_int_equal(d->first_rank, 0);
    assert_true(note_has(d, "Rank 0 did not time out", "rank 2"));
}

/* A one-element broadcast (a seed, a flag) as a group's first collective
 * is set-up too (litgpt#1832, shortened). */
static void early_scalar_broadcast_timeout_is_startup(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank3]:[E ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800085 "
                 "milliseconds before timing out.\n");
    assert_true(f->d.hang);
    assert_string_equal(f->d.rule_id, "engine.startup_barrier");
    assert_int_equal(f->d.phase, CP_PHASE_INIT);
}

/* gv-01, cut down: Lightning's ranks set up, then ranks 1 and 3 time out
 * in the first broadcast. Rank 2 printed its set-up line and no error: in
 * a stall at set-up it was waiting like the others, not silent. */
static void startup_stall_rows_show_set_up_ranks_waiting(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/4\n"
                 "Initializing distributed: GLOBAL_RANK: 2, MEMBER: 3/4\n"
                 "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/4\n"
                 "Initializing distributed: GLOBAL_RANK: 3, MEMBER: 4/4\n"
                 "All distributed processes registered. Starting with 4 processes\n"
                 "[rank1]:[E131 16:15:16.686699493 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective "
                 "operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=1, NumelOut=1, "
                 "Timeout(ms)=1800000) ran for 1800085 milliseconds before timing out.\n"
                 "[rank3]:[E131 16:15:16.688074713 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective "
                 "operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=1, NumelOut=1, "
                 "Timeout(ms)=1800000) ran for 1800087 milliseconds before timing out.\n");
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_int_equal(d->phase, CP_PHASE_INIT);
    assert_string_equal(d->rule_id, "engine.startup_barrier");
    assert_int_equal(d->first_rank, 0);
    assert_int_equal(row_of(d, 2)->state, CP_RS_OK);
}

/* The same one-element all-reduce deep into training (a barrier before a
 * save, a loss average) says nothing of set-up. */
static void late_barrier_timeout_is_not_startup(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[default2]:[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=9387, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600888 "
                 "milliseconds before timing out.\n"
                 "[default3]:[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=9387, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600892 "
                 "milliseconds before timing out.\n");
    assert_true(f->d.hang);
    assert_string_not_equal(f->d.rule_id, "engine.startup_barrier");
    assert_int_not_equal(f->d.phase, CP_PHASE_INIT);
    assert_int_equal(f->d.first_rank, -1);
}

/* A group's first collective need not be set-up: a weight-sync group
 * created for it broadcasts at sequence number 1 mid-run (a field log). */
static void first_broadcast_of_a_group_is_not_startup(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank12]:[E ProcessGroupNCCL.cpp:632] [Rank 12] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=778567680, NumelOut=778567680, Timeout(ms)=600000) "
                 "ran for 600080 milliseconds before timing out.\n");
    assert_true(f->d.hang);
    assert_string_not_equal(f->d.rule_id, "engine.startup_barrier");
    assert_int_not_equal(f->d.phase, CP_PHASE_INIT);
}

/* Ranks that time out right after the HF Trainer's evaluation banner
 * stalled in evaluation (generation on one rank running longer, say):
 * the phase line above the first timeout says where. */
static void stall_takes_the_phase_line_above_it(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[INFO|trainer.py:3831] 2025-01-01 10:00:00,000 >> ***** Running Evaluation *****\n"
                 "[INFO|trainer.py:3833] 2025-01-01 10:00:00,000 >>   Num examples = 2000\n"
                 "[rank1]:[E101 10:30:00.118859045 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective "
                 "operation timeout: WorkNCCL(SeqNum=4482, OpType=ALLGATHER, NumelIn=8, NumelOut=32, "
                 "Timeout(ms)=1800000) ran for 1800020 milliseconds before timing out.\n");
    assert_true(f->d.hang);
    assert_int_equal(f->d.phase, CP_PHASE_EVAL);
    assert_true(note_has(&f->d, "The stall came after this phase line (eval)", "Running Evaluation"));
}

/* A stall inside a phase whose rule has a kind is that kind: ranks that
 * time out at the first collective right after Megatron began building
 * its fused kernels waited on a build that never ended (a stale lock). */
static void stall_inside_an_extension_build_is_a_build_error(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "> compiling and loading fused kernels ...\n"
                 "[rank1]:[E829 16:32:30.656674606 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective "
                 "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                 "Timeout(ms)=600000) ran for 600062 milliseconds before timing out.\n");
    assert_true(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_BUILD_ERROR);
    assert_string_equal(f->d.rule_id, "hint.extension_build");
    assert_int_equal(f->d.phase, CP_PHASE_INIT);
    assert_int_equal(f->d.owner, CP_OWNER_UNKNOWN);
    assert_true(note_has(&f->d, "never printed its end", "compiling and loading fused kernels"));
}

/* A build that printed its end is over: the stall is a plain timeout. */
static void stall_after_a_finished_build_is_a_timeout(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "Building extension module fused_adam...\n"
                 "Loading extension module fused_adam...\n"
                 "[rank1]:[E829 16:32:30.656674606 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective "
                 "operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                 "Timeout(ms)=600000) ran for 600062 milliseconds before timing out.\n");
    assert_true(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_TIMEOUT);
}

/* faulthandler's frames alone, their "Thread 0x..." header cut from the
 * paste, are still a dump of a live process; stuck inside a checkpoint
 * save, the save stalled (DeepSpeed#797: save_checkpoint called on one
 * rank only waits in its tag check forever). */
static void headerless_dump_inside_a_save_is_a_checkpoint_hang(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "dump.log",
                 "  File \"/opt/ds/deepspeed/runtime/engine.py\", line 1456 in _checkpoint_tag_validation\n"
                 "  File \"/opt/ds/deepspeed/runtime/engine.py\", line 1489 in save_checkpoint\n"
                 "  File \"/opt/hf/transformers/trainer.py\", line 1212 in _save_checkpoint\n"
                 "  File \"/opt/hf/transformers/trainer.py\", line 1094 in train\n");
    assert_true(f->d.hang);
    assert_string_equal(f->d.rule_id, "engine.live_stack_dump");
    assert_int_equal(f->d.kind, CP_KIND_CHECKPOINT_HANG);
    assert_int_equal(f->d.phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_true(note_has(&f->d, "inside a checkpoint save", "stalled"));
}

/* Python's own frame lines with neither a header nor an error line are a
 * traceback cut at both ends, not a dump: nothing to diagnose. */
static void headerless_python_frames_are_not_a_dump(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "cut.log",
                 "  File \"/opt/ds/deepspeed/runtime/engine.py\", line 1489, in save_checkpoint\n"
                 "  File \"/opt/hf/transformers/trainer.py\", line 1212, in _save_checkpoint\n");
    assert_false(f->d.hang);
    assert_int_not_equal(f->d.kind, CP_KIND_CHECKPOINT_HANG);
}

/* torchrun's failure table alone (the ranks' output not pasted) still
 * says which rank failed first and how: its root-cause row. */
static void failure_table_alone_names_its_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "agent.log",
                 "  <NO_OTHER_FAILURES>\n"
                 "--------------------------------------------------------\n"
                 "Root Cause (first observed failure):\n"
                 "[0]:\n"
                 "  time      : 2025-11-24_17:05:40\n"
                 "  host      : node-a\n"
                 "  rank      : 1 (local_rank: 1)\n"
                 "  exitcode  : -6 (pid: 2195196)\n"
                 "  error_file: <N/A>\n"
                 "  traceback : Signal 6 (SIGABRT) received by PID 2195196\n"
                 "========================================================\n");
    assert_true(f->d.failed);
    assert_false(f->d.hang);
    assert_int_equal(f->d.first_rank, 1);
    assert_string_equal(f->d.rule_id, "launcher.sigabrt");
    assert_true(note_has(&f->d, "Only the launcher's failure table", "not in the input"));
}

/* The same phase line long before the stall says nothing of it. */
static void stall_far_below_a_phase_line_has_no_phase(void **state)
{
    fixture *f = *state;
    char text[16384] = "[INFO|trainer.py:3831] 2025-01-01 10:00:00,000 >> ***** Running Evaluation *****\n";
    for (int i = 0; i < 60; i++)
        strcat(text, "wandb: uploading artifacts\n");
    strcat(text, "[rank1]:[E101 10:30:00.118859045 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective "
                 "operation timeout: WorkNCCL(SeqNum=4482, OpType=ALLGATHER, NumelIn=8, NumelOut=32, "
                 "Timeout(ms)=1800000) ran for 1800020 milliseconds before timing out.\n");
    diagnose_one(f, "train.log", text);
    assert_true(f->d.hang);
    assert_int_equal(f->d.phase, CP_PHASE_UNKNOWN);
}

/* Without times, the kindless line takes the kind of the line that
 * names one a few lines below it (accelerate's captured stderr of one
 * rank; the what() line carries the rank, the first does not). */
static void untimed_kindless_line_defers_to_the_line_below(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "stderr: [E ProcessGroupNCCL.cpp:456] Some NCCL operations have failed or timed out. Due to the "
                 "asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.\n"
                 "stderr: [E ProcessGroupNCCL.cpp:461] To avoid data inconsistency, we are taking the entire process down.\n"
                 "stderr: terminate called after throwing an instance of 'std::runtime_error'\n"
                 "stderr:   what():  [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
                 "OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1808212 milliseconds before timing out.\n");
    assert_true(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_TIMEOUT);
    assert_string_equal(f->d.rule_id, "pytorch.watchdog_timeout");
}

/* Since PyTorch 2.6 a rank prints "Some NCCL operations have failed or
 * timed out" a millisecond before the watchdog's exception says which:
 * the kind is the exception's. */
static void kindless_line_defers_to_the_next_that_names_one(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "11: [rank11]:[E617 15:17:35.519071987 ProcessGroupNCCL.cpp:681] [Rank 11] Some NCCL operations "
                 "have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU "
                 "operations might run on corrupted/incomplete data.\n"
                 "11: [rank11]:[E617 15:17:35.519087787 ProcessGroupNCCL.cpp:695] [Rank 11] To avoid data "
                 "inconsistency, we are taking the entire process down.\n"
                 "11: [rank11]:[E617 15:17:35.520063769 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) "
                 "Rank 11] Process group watchdog thread terminated with exception: [Rank 11] Watchdog caught "
                 "collective operation timeout: WorkNCCL(SeqNum=52, OpType=ALLREDUCE, NumelIn=11, NumelOut=11, "
                 "Timeout(ms)=240000)\n");
    assert_true(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_TIMEOUT);
    assert_string_equal(f->d.rule_id, "pytorch.watchdog_timeout");
}

/* The error names no rank; the launcher's report of the one worker that
 * failed does (a local rank, with one host in sight). */
static void launcher_names_the_only_failed_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "run.log",
                 "Traceback (most recent call last):\n"
                 "  File \"ini.py\", line 51, in demo_basic\n"
                 "    ddp_model = DDP(model, device_ids=[rank])\n"
                 "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:891, internal "
                 "error, NCCL version 21.0.3\n"
                 "ncclInternalError: Internal check failed. This is either a bug in NCCL or due to memory corruption\n"
                 "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 51428) "
                 "of binary: /data/envs/th110/bin/python\n");
    assert_false(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_COMM_ERROR);
    assert_int_equal(f->d.first_rank, 0);
    assert_true(note_has(&f->d, "rank 0 is the only rank the input names", NULL));
}

/* A kernel's assertion carries no rank; the first rank whose own line
 * reports the same kind of error, 5 ms before the next, raised it. */
static void rankless_root_takes_the_first_rank_of_its_kind(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:402: masked_scatter_size_check: block: [0,0,0], "
                 "thread: [0,0,0] Assertion `totalElements <= srcSize` failed.\n"
                 "[rank11]:[E318 09:26:18.141499142 ProcessGroupNCCL.cpp:2068] [PG ID 0 PG GUID 0(default_pg) Rank 11] "
                 "Process group watchdog thread terminated with exception: CUDA error: device-side assert triggered\n"
                 "[rank8]:[E318 09:26:18.136731159 ProcessGroupNCCL.cpp:2068] [PG ID 0 PG GUID 0(default_pg) Rank 8] "
                 "Process group watchdog thread terminated with exception: CUDA error: device-side assert triggered\n");
    assert_false(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_CUDA_ERROR);
    assert_int_equal(f->d.first_rank, 8);
    assert_true(note_has(&f->d, "rank 8 was the first to report the same kind of error", NULL));
}

/* deepspeedai/DeepSpeed#7869, as pasted (trailing blanks and caret
 * lines dropped): a ValueError from torch.cat, three frames below
 * DeepSpeed's _configure_zero_optimizer. The rule for the engine's own
 * configuration checks names that frame, but only among the innermost
 * two (frame_reach): an error raised further in is no refused setting.
 * The frame the terminal wrapped after "in" is a frame too. */
static const char error_below_a_config_frame_text[] =
    " [rank3]: Traceback (most recent call last):\n"
    " [rank3]:   File \"/home/gma/transfer_qwen/finetune_moe.py\", line 709, in main\n"
    " [rank3]:     model_engine, optimizer, train_dataloader, lr_scheduler = deepspeed.initialize(\n"
    " [rank3]:   File \"/home/gma/DeepSpeed/deepspeed/__init__.py\", line 214, in initialize\n"
    " [rank3]:     engine = DeepSpeedEngine(args=args,\n"
    " [rank3]:   File \"/home/gma/DeepSpeed/deepspeed/runtime/engine.py\", line 363, in __init__\n"
    " [rank3]:     self._configure_optimizer(optimizer, model_parameters)\n"
    " [rank3]:   File \"/home/gma/DeepSpeed/deepspeed/runtime/engine.py\", line 1585, in _configure_optimizer\n"
    " [rank3]:     self.optimizer = self._configure_zero_optimizer(basic_optimizer)\n"
    " [rank3]:   File \"/home/gma/DeepSpeed/deepspeed/runtime/engine.py\", line 1893, in _configure_zero_optimizer\n"
    " [rank3]:     optimizer = Stage1And2ZeroOptimizer(\n"
    " [rank3]:   File \"/home/gma/DeepSpeed/deepspeed/runtime/zero/stage_1_and_2.py\", line 403, in __init__\n"
    " [rank3]:     flattened_buffer = self.flatten_dense_tensors_aligned(\n"
    " [rank3]:   File \"/home/gma/DeepSpeed/deepspeed/runtime/zero/stage_1_and_2.py\", line 1044, in flatten_dense_tensors_aligned\n"
    " [rank3]:     return self.flatten(align_dense_tensors(tensor_list, alignment))\n"
    " [rank3]:   File \"/raid/gma/miniforge3/envs/ds/lib/python3.12/site-packages/torch/_utils.py\", line 571, in\n"
    " _flatten_dense_tensors\n"
    " [rank3]:     return torch._C._nn.flatten_dense_tensors(tensors)\n"
    " [rank3]: ValueError: torch.cat(): expected a non-empty list of Tensors\n";

static void error_below_a_config_check_frame_is_no_config_error(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", error_below_a_config_frame_text);
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->first_rank, 3);
    assert_string_equal(d->rule_id, "py.exception");
    assert_int_equal(d->kind, CP_KIND_PYTHON_EXCEPTION);
    assert_int_equal(d->owner, CP_OWNER_FRAMEWORK);
    assert_int_equal(d->phase, CP_PHASE_INIT);
}

/* Reconstruction: the same engine refusing a setting in
 * _configure_zero_optimizer itself is the configuration's error. */
static void check_raised_in_the_config_frame_is_a_config_error(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank0]: Traceback (most recent call last):\n"
                 "[rank0]:   File \"/home/u/train.py\", line 88, in main\n"
                 "[rank0]:     engine, *_ = deepspeed.initialize(model=model, config=cfg)\n"
                 "[rank0]:   File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py\", line 363, in __init__\n"
                 "[rank0]:     self._configure_optimizer(optimizer, model_parameters)\n"
                 "[rank0]:   File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py\", line 1585, in _configure_optimizer\n"
                 "[rank0]:     self.optimizer = self._configure_zero_optimizer(basic_optimizer)\n"
                 "[rank0]:   File \"/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py\", line 1840, in _configure_zero_optimizer\n"
                 "[rank0]:     assert not self.has_moe_layers, \"MoE not supported with Stage 3\"\n"
                 "[rank0]: AssertionError: MoE not supported with Stage 3\n");
    const cp_diagnosis *d = &f->d;
    assert_string_equal(d->rule_id, "deepspeed.engine_config_assert");
    assert_int_equal(d->kind, CP_KIND_CONFIG_INVALID);
}

/* A traceback the input cuts off inside torch.save is a failed save: the
 * rule marked `cut` whose frame it passes through names it. */
static void cut_traceback_inside_a_save_is_checkpoint_io(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank0]: Traceback (most recent call last):\n"
                 "[rank0]:   File \"/home/ml/train.py\", line 88, in <module>\n"
                 "[rank0]:     torch.save(model.state_dict(), path)\n"
                 "[rank0]:   File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 423, in save\n"
                 "[rank0]:     _save(obj, opened_zipfile, pickle_module, pickle_protocol)\n");
    assert_int_equal(f->d.kind, CP_KIND_CHECKPOINT_IO);
    assert_string_equal(f->d.rule_id, "pytorch.exception_in_torch_save");
    assert_int_equal(f->d.phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_int_equal(f->d.first_rank, 0);
    assert_true(note_has(&f->d, "cut off before its error line; its frames are those of: Saving a checkpoint failed", NULL));
}

/* Every rank logs its steps; all time out, and the one whose last step
 * is behind the others' is the one they waited for. */
static void hang_names_the_rank_behind_in_steps(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[default0]:2026-11-29 17:55:52,148 INFO rank 0 step 5 loss 1.41\n"
                 "[default1]:2026-11-29 17:55:52,149 INFO rank 1 step 5 loss 1.41\n"
                 "[default2]:2026-11-29 17:55:52,150 INFO rank 2 step 5 loss 1.41\n"
                 "[default1]:2026-11-29 17:55:53,160 INFO rank 1 step 6 loss 0.19\n"
                 "[default2]:2026-11-29 17:55:53,162 INFO rank 2 step 6 loss 0.19\n"
                 "[default0]:2026-11-29 18:05:53,160 [E ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective "
                 "operation timeout: WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600011 milliseconds "
                 "before timing out.\n"
                 "[default1]:2026-11-29 18:05:53,161 [E ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective "
                 "operation timeout: WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600012 milliseconds "
                 "before timing out.\n"
                 "[default2]:2026-11-29 18:05:53,162 [E ProcessGroupNCCL.cpp:632] [Rank 2] Watchdog caught collective "
                 "operation timeout: WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600013 milliseconds "
                 "before timing out.\n");
    assert_true(f->d.hang);
    assert_int_equal(f->d.first_rank, 0);
    assert_true(note_has(&f->d, "Rank 0's last logged step is behind every other rank's", NULL));
}

/* Only rank 0 logs its steps: the ranks that log none are not behind. */
static void ranks_that_log_no_steps_are_not_behind(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[default0]:2026-11-29 17:55:52,148 INFO rank 0 step 5 loss 1.41\n"
                 "[default0]:2026-11-29 17:55:53,160 INFO rank 0 step 6 loss 0.19\n"
                 "[default0]:2026-11-29 18:05:53,160 [E ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective "
                 "operation timeout: WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600011 milliseconds "
                 "before timing out.\n"
                 "[default1]:2026-11-29 18:05:53,161 [E ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective "
                 "operation timeout: WorkNCCL(OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600012 milliseconds "
                 "before timing out.\n");
    assert_true(f->d.hang);
    assert_false(note_has(&f->d, "last logged step is behind", NULL));
}

/* Lines without times are read in log order, not in the order their
 * events were closed. */
static void untimed_events_in_log_order(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=80, OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1805926 milliseconds before "
                 "timing out.\n"
                 "[E ProcessGroupNCCL.cpp:828] [Rank 0] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=80, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1805991 milliseconds before "
                 "timing out.\n"
                 "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the "
                 "asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
                 "corrupted/incomplete data.\n"
                 "[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.\n");
    assert_true(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_COLLECTIVE_MISMATCH);
    assert_int_equal(f->d.first_rank, -1);
}

/* Pipeline stages wait in different point-to-point ops by design. */
static void pipeline_send_among_recvs_is_no_mismatch(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank5]:[E ProcessGroupNCCL.cpp:475] [Rank 5] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=2, OpType=SEND, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800493 "
                 "milliseconds before timing out.\n"
                 "[rank6]:[E ProcessGroupNCCL.cpp:475] [Rank 6] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=2, OpType=RECV, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800494 "
                 "milliseconds before timing out.\n"
                 "[rank7]:[E ProcessGroupNCCL.cpp:475] [Rank 7] Watchdog caught collective operation timeout: "
                 "WorkNCCL(SeqNum=2, OpType=RECV, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800495 "
                 "milliseconds before timing out.\n");
    assert_int_equal(f->d.kind, CP_KIND_PIPELINE_HANG);
    assert_true(f->d.hang);
    assert_false(note_has(&f->d, "different collectives", NULL));
}

/* ---- lines of one moment ------------------------------------------------- */

/* LlamaFactory#6849: in one millisecond rank 5 prints PyTorch's generic
 * "failed or timed out" line and the ncclRemoteError it means. */
static void same_moment_names_the_specific_error(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank5]:[E207 19:37:09.983540349 ProcessGroupNCCL.cpp:681] [Rank 5] Some NCCL operations have failed "
                 "or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
                 "corrupted/incomplete data.\n"
                 "[rank5]:[E207 19:37:09.983600771 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 5] "
                 "Process group watchdog thread terminated with exception: NCCL error: remote process exited or there "
                 "was a network error, NCCL version 2.21.5\n");
    assert_int_equal(f->d.kind, CP_KIND_NCCL_COMM_ERROR);
    assert_false(f->d.hang);
    assert_int_equal(f->d.first_rank, 5);
}

/* ---- how much one rank's report says ------------------------------------ */

/* SimpleTuner#3099: only rank 1's watchdog is in the paste, wrapped after
 * its message. No line states the world, so rank 0's silence names
 * nobody: rank 1 may have had many silent peers. */
static void one_speaking_rank_names_no_silent_one(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "Steps: 998/15000 ...\n"
                 "[rank1]:[E ... ProcessGroupNCCL.cpp:689] [Rank 1] Watchdog caught collective operation timeout:\n"
                 "WorkNCCL(SeqNum=34036, OpType=ALLGATHER, NumelIn=8, NumelOut=64, Timeout(ms)=5400000)\n"
                 "ran for 5400073 milliseconds before timing out.\n");
    assert_true(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_TIMEOUT);
    assert_int_equal(f->d.first_rank, -1);
}

/* pytorch#140563: the Flight Recorder analyser's finding names the rank
 * that called the all_reduce with other sizes. */
static void flight_recorder_size_mismatch_names_the_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "fr_trace.txt",
                 "collective: nccl:all_reduce\n"
                 "input sizes: [[1025]]\n"
                 "world size: 128\n"
                 "collective state: scheduled\n"
                 "error msg: Culprit rank 22; Error type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: '[[1025]]' "
                 "does not match found input sizes: '[[262144]]'\n");
    assert_int_equal(f->d.first_rank, 22);
    assert_int_equal(f->d.kind, CP_KIND_COLLECTIVE_MISMATCH);
}

/* ---- a local rank with one host in sight -------------------------------- */

/* DMD2#18: torchrun's agent reports local rank 2 killed and SIGTERMs the
 * other three; nothing names a host or a second node. */
static void local_rank_of_the_only_host_is_the_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 26827 closing signal SIGTERM\n"
                 "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 26828 closing signal SIGTERM\n"
                 "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 26830 closing signal SIGTERM\n"
                 "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 2 (pid: 26829) "
                 "of binary: /home/work/miniconda3/envs/dmd2/bin/python\n");
    assert_int_equal(f->d.first_rank, 2);
    assert_int_equal(f->d.kind, CP_KIND_HOST_OOM);
    assert_true(note_has(&f->d, "local rank 2", "second node"));
}

/* centermask2#9: torch.multiprocessing.spawn relays process 1's error
 * under its own header; detectron2's anomaly check raised it. */
static void spawn_header_names_the_process(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "-- Process 1 terminated with the following error:\n"
                 "Traceback (most recent call last):\n"
                 "  File \"/venv/lib/python3.6/site-packages/torch/multiprocessing/spawn.py\", line 19, in _wrap\n"
                 "    fn(i, *args)\n"
                 "  File \"/venv/lib/python3.6/site-packages/detectron2/engine/train_loop.py\", line 239, in "
                 "_detect_anomaly\n"
                 "    self.iter, loss_dict\n"
                 "FloatingPointError: Loss became infinite or NaN at iteration=137!\n");
    assert_int_equal(f->d.first_rank, 1);
    assert_int_equal(f->d.kind, CP_KIND_LOSS_SCALE_FLOOR);
}

/* Two hosts in sight: the local rank alone does not say which rank. */
static void local_rank_among_two_hosts_is_no_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "node1: [default0]:2026-11-29 16:19:31,588 INFO train: step 1 loss=1.0\n"
                 "node2: [default0]:2026-11-29 16:19:31,589 INFO train: step 1 loss=1.0\n"
                 "node2: ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 2 "
                 "(pid: 26829) of binary: /usr/bin/python3\n");
    assert_int_equal(f->d.kind, CP_KIND_HOST_OOM);
    assert_int_equal(f->d.first_rank, -1);
}

/* ---- ranks from NCCL's init lines ---------------------------------------- */

/* pytorch#82079 (NCCL 2.10): the "Init COMPLETE" line of that release has
 * no ncclCommInitRank prefix and no nvmlDev, and is the only line tying
 * pid 22851 to rank 1. */
static void nccl_2_10_init_line_gives_the_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "ccab4f7a6a8b4707903b4b491c065374000001:22851:22981 [1] NCCL INFO comm 0x7f72fc002f70 rank 1 nranks 2 "
                 "cudaDev 1 busId 200000 - Init COMPLETE\n"
                 "ccab4f7a6a8b4707903b4b491c065374000001:22850:22850 [0] NCCL INFO Launch mode Parallel\n"
                 "ccab4f7a6a8b4707903b4b491c065374000001:22851:22851 [1] enqueue.cc:300 NCCL WARN Cuda failure 'an "
                 "illegal memory access was encountered'\n");
    assert_int_equal(f->d.first_rank, 1);
    assert_int_equal(f->d.kind, CP_KIND_CUDA_ERROR);
}

/* A paste kept as two files (DeepSpeed#5066, shortened): the launcher's
 * stderr with rank 0's error line and no frames, and a traceback of the
 * same error with no rank, in a save. Its frames give the phase. */
static void phase_from_a_rankless_traceback_of_the_same_error(void **state)
{
    fixture *f = *state;
    const stream_in s[] = {
        {"stderr.log",
         "[2024-02-09 09:09:15,164] [INFO] [launch.py:315:sigkill_handler] rank 0: RuntimeError: Detected mismatch "
         "between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint(SequenceNumber=485, "
         "OpType=BROADCAST), but Rank 1 is running collective: CollectiveFingerPrint(SequenceNumber=485, "
         "OpType=ALLREDUCE).\n"},
        {"traceback.log",
         "Traceback (most recent call last):\n"
         "  File \"/home/me/train.py\", line 212, in <module>\n"
         "    trainer.save_checkpoint(path)\n"
         "  File \"/usr/lib/python3/dist-packages/deepspeed/runtime/engine.py\", line 3050, in save_checkpoint\n"
         "    dist.broadcast_object_list(tags, src=0)\n"
         "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 2603, in "
         "broadcast_object_list\n"
         "    broadcast(object_sizes_tensor, src=src, group=group)\n"
         "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
         "CollectiveFingerPrint(SequenceNumber=485, OpType=BROADCAST), but Rank 1 is running collective: "
         "CollectiveFingerPrint(SequenceNumber=485, OpType=ALLREDUCE).\n"},
    };
    diagnose(f, s, 2);
    assert_int_equal(f->d.kind, CP_KIND_COLLECTIVE_MISMATCH);
    assert_int_equal(f->d.phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_true(note_has(&f->d, "another traceback of the same error", NULL));
}

/* The same paste goes on with the process's own Python traceback, apart
 * from NCCL's WARN line: its frames give the error's phase. */
static void phase_from_the_ranks_own_traceback(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "ccab4f7a6a8b4707903b4b491c065374000001:22851:22981 [1] NCCL INFO comm 0x7f72fc002f70 rank 1 nranks 2 "
                 "cudaDev 1 busId 200000 - Init COMPLETE\n"
                 "ccab4f7a6a8b4707903b4b491c065374000001:22851:22851 [1] enqueue.cc:300 NCCL WARN Cuda failure 'an "
                 "illegal memory access was encountered'\n"
                 "Traceback (most recent call last):\n"
                 "  File \"main.py\", line 23, in <module>\n"
                 "    fsdp_model(img, t)\n"
                 "  File \"/opt/conda/lib/python3.7/site-packages/torch/nn/modules/module.py\", line 1186, in _call_impl\n"
                 "    return forward_call(*input, **kwargs)\n"
                 "  File \"/opt/conda/lib/python3.7/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py\", "
                 "line 2412, in forward\n"
                 "    self._rebuild_full_params()\n");
    assert_int_equal(f->d.first_rank, 1);
    assert_int_equal(f->d.kind, CP_KIND_CUDA_ERROR);
    assert_int_equal(f->d.phase, CP_PHASE_FORWARD);
}

/* ---- root over cascade -------------------------------------------------- */

/* gen-01: rank 2's forward raises; the others lose their gloo peer. */
static const char root_cascade_text[] =
    "2026-11-29 16:19:31,588 [rank0] INFO train: process group ready: backend=gloo world_size=4\n"
    "2026-11-29 16:19:32,293 [rank0] INFO train: step 2/8 loss=1.3768 time=0.34s\n"
    "2026-11-29 16:19:32,295 [rank2] INFO train: step 2/8 loss=1.4498 time=0.34s\n"
    "2026-11-29 16:19:32,295 [rank1] INFO train: step 2/8 loss=1.5133 time=0.34s\n"
    "2026-11-29 16:19:32,295 [rank2] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 85, in <module>\n"
    "    main()\n"
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 71, in main\n"
    "    loss = F.cross_entropy(model(x), y)\n"
    "  File \"/usr/lib/python3/dist-packages/torch/nn/modules/module.py\", line 1194, in _call_impl\n"
    "    return forward_call(*input, **kwargs)\n"
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 39, in forward\n"
    "    raise ValueError(\n"
    "ValueError: TinyMLP expected input with 16 features, got tensor of shape (8, 15)\n"
    "2026-11-29 16:19:32,502 [rank1] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 74, in main\n"
    "    average_gradients(model)\n"
    "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 1541, in all_reduce\n"
    "    work.wait()\n"
    "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:15025\n"
    "2026-11-29 16:19:32,513 [rank3] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 74, in main\n"
    "    average_gradients(model)\n"
    "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 1541, in all_reduce\n"
    "    work.wait()\n"
    "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:32647\n"
    "2026-11-29 16:19:32,821 [rank0] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/proj/s01_forward_valueerror.py\", line 74, in main\n"
    "    average_gradients(model)\n"
    "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 1541, in all_reduce\n"
    "    work.wait()\n"
    "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:1936\n";

/* Rank 1's traceback, as pasted, keeps only its innermost (library) frame;
 * rank 7 fails the same way with its whole stack, in the loss step. The
 * frames are torchtune's and PyTorch's (a bug report's paste, shortened). */
#define DTENSOR_INNER \
    "[rank1]:   File \"/env/lib/python3.10/site-packages/torch/distributed/tensor/_dispatch.py\", line 452, in _try_replicate_spec_for_scalar_tensor\n" \
    "[rank1]:     raise RuntimeError(\n" \
    "[rank1]: RuntimeError: aten.mm.default: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor before calling distributed operators!\n"
#define DTENSOR_FULL_STACK(r) \
    "[rank" r "]: Traceback (most recent call last):\n" \
    "[rank" r "]:   File \"/home/u/torchtune/recipes/lora_finetune_distributed.py\", line 818, in train\n" \
    "[rank" r "]:     current_loss = self._loss_step(batch) * current_num_tokens\n" \
    "[rank" r "]:   File \"/home/u/torchtune/recipes/lora_finetune_distributed.py\", line 923, in _loss_step\n" \
    "[rank" r "]:     loss = self._loss_fn(weight, outputs, labels)\n" \
    "[rank" r "]:   File \"/env/lib/python3.10/site-packages/torch/nn/modules/module.py\", line 1773, in _wrapped_call_impl\n" \
    "[rank" r "]:     return self._call_impl(*args, **kwargs)\n"

static void phase_from_rank_with_same_error(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 DTENSOR_INNER DTENSOR_FULL_STACK("7")
                 "[rank7]:   File \"/env/lib/python3.10/site-packages/torch/distributed/tensor/_dispatch.py\", line 452, in _try_replicate_spec_for_scalar_tensor\n"
                 "[rank7]: RuntimeError: aten.mm.default: got mixed torch.Tensor and DTensor, need to convert all torch.Tensor to DTensor before calling distributed operators!\n"
                 "[rank0]:[I1127 10:00:00.000000 1 step.py:1] step 12 done\n");
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->first_rank, 1);
    assert_int_equal(d->phase, CP_PHASE_FORWARD);
    assert_true(note_has(d, "read from rank 7", "same error"));
}

/* The paste ends inside rank 7's traceback: its frames still say where the
 * program was. */
static void phase_from_cut_off_traceback(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", DTENSOR_INNER DTENSOR_FULL_STACK("7"));
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->first_rank, 1);
    assert_int_equal(d->phase, CP_PHASE_FORWARD);
    assert_true(note_has(d, "read from rank 7", "cuts off"));
}

/* A paste cut inside the optimizer step: the frames shown are all in
 * accelerate's backward, but the last one's source line calls the
 * engine's step, so that is where the rank was. The same source line
 * under a frame it does not follow says nothing. */
#define STEP_CUT_STACK(SOURCE_LINE)                                                                                  \
    "[rank0]: Traceback (most recent call last):\n"                                                                  \
    "[rank0]:   File \"/w/train.py\", line 928, in main\n"                                                          \
    "[rank0]:     accelerator.backward(loss)\n"                                                                     \
    "[rank0]:   File \"/env/lib/python3.10/site-packages/accelerate/accelerator.py\", line 2726, in backward\n"      \
    "[rank0]:     self.deepspeed_engine_wrapped.backward(loss, sync_gradients=self.sync_gradients, **kwargs)\n"     \
    "[rank0]:   File \"/env/lib/python3.10/site-packages/accelerate/utils/deepspeed.py\", line 281, in backward\n" \
    SOURCE_LINE

static void phase_from_a_frames_source_line(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", STEP_CUT_STACK("[rank0]:     self.engine.step()\n"));
    assert_int_equal(f->d.first_rank, 0);
    assert_int_equal(f->d.phase, CP_PHASE_OPTIMIZER_STEP);
}

static void source_line_apart_from_its_frame_says_nothing(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", STEP_CUT_STACK("[rank0]:     self.engine.backward(loss)\n\n[rank0]:     self.engine.step()\n"));
    assert_int_equal(f->d.phase, CP_PHASE_BACKWARD);
}

/* NCCL's trace of a failed call ("init.cc:668 -> 2") is all rank 3
 * printed, under mpirun --tag-output: it still names the rank, an NCCL
 * failure, and (init.cc) the set-up. */
static void nccl_return_code_trace_alone(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "mpi.log",
                 "[1,3]<stdout>:node-b:1259:1489 [1] NCCL INFO include/net.h:29 -> 2\n"
                 "[1,3]<stdout>:node-b:1259:1489 [1] NCCL INFO transport/net.cc:360 -> 2\n"
                 "[1,3]<stdout>:node-b:1259:1489 [1] NCCL INFO init.cc:668 -> 2\n"
                 "[1,2]<stdout>:node-b:1258:1486 [0] NCCL INFO Setting affinity for GPU 0 to 03ff,f0003fff\n"
                 "[1,0]<stdout>:node-a:1248:1476 [0] NCCL INFO Ring 00 : 3 -> 0 [receive] via NET/IB/0\n");
    assert_int_equal(f->d.first_rank, 3);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_COMM_ERROR);
    assert_string_equal(f->d.rule_id, "nccl.return_code_trace");
    assert_int_equal(f->d.phase, CP_PHASE_INIT);
}

/* The same trace with the WARN that says what failed a few lines below
 * it: the WARN names the error. */
static void nccl_return_code_trace_defers_to_its_warn(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "node.log",
                 "node-a:183006:183220 [1] NCCL INFO misc/socket.cc:535 -> 6\n"
                 "node-a:183006:183220 [1] NCCL INFO transport/net_socket.cc:368 -> 6\n"
                 "node-a:183006:183220 [1] NCCL INFO proxy.cc:991 -> 6\n"
                 "node-a:183006:183220 [1] proxy.cc:1119 NCCL WARN [Proxy Service 9] Failed to execute operation "
                 "Connect from rank 9, retcode 6\n");
    assert_int_equal(f->d.kind, CP_KIND_NCCL_COMM_ERROR);
    assert_non_null(f->d.rule_id);
    assert_string_not_equal(f->d.rule_id, "nccl.return_code_trace");
}

/* Nothing but a faulthandler dump of a live process, two threads: a hang,
 * and the thread whose frames name a phase (the second) says where. Which
 * rank stalled first a dump does not say. */
static void live_stack_dump_is_a_hang(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "dump.log",
                 "[rank0]:Thread 0x00007f07a6ffd640 (most recent call first):\n"
                 "[rank0]:  File \"/env/lib/python3.11/threading.py\", line 324 in wait\n"
                 "[rank0]:  File \"/env/lib/python3.11/queue.py\", line 180 in get\n"
                 "[rank0]:\n"
                 "[rank0]:Current thread 0x00007f13c65f5400 (most recent call first):\n"
                 "[rank0]:  File \"/env/lib/python3.11/site-packages/torch/cuda/streams.py\", line 95 in synchronize\n"
                 "[rank0]:  File \"/env/lib/python3.11/site-packages/deepspeed/runtime/zero/stage3.py\", line 406 in "
                 "fetch_sub_module\n"
                 "[rank0]:  File \"/env/lib/python3.11/site-packages/torch/nn/modules/module.py\", line 881 in _call_impl\n");
    assert_true(f->d.failed);
    assert_true(f->d.hang);
    assert_string_equal(f->d.rule_id, "engine.live_stack_dump");
    assert_int_equal(f->d.kind, CP_KIND_UNKNOWN);
    assert_int_equal(f->d.phase, CP_PHASE_FORWARD);
    assert_int_equal(f->d.first_rank, -1);
    assert_non_null(strstr(f->d.signature, "streams.py"));
    assert_true(note_has(&f->d, "rank 0's stack was dumped while it ran", NULL));
}

/* Four ranks print the same error in one block, each line also hit by
 * conditional rules whose frames do not match (torch.load/save, the
 * launcher, the loss scaler): the block's candidate slots fill up, and
 * the one rule that applies, the lightest, must keep its place. */
#define FOUR_TIMES(LINE) LINE LINE LINE LINE
static void repeated_error_keeps_the_rule_that_applies(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "  File \"/env/lib/python3.10/site-packages/peft/tuners/lora/layer.py\", line 305, in forward\n"
                 FOUR_TIMES("    result = self.base_layer(x, *args, **kwargs)\n"
                            "RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x0 and 4096x8)\n"));
    assert_true(f->d.failed);
    assert_string_equal(f->d.rule_id, "py.exception");
    assert_int_equal(f->d.kind, CP_KIND_PYTHON_EXCEPTION);
}

/* The same, with a rule that names the error: ZeRO-3's empty placeholder
 * weight met by a LoRA merge. */
static void zero3_placeholder_weight_in_a_lora_merge(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "  File \"/env/lib/python3.10/site-packages/peft/tuners/lora/layer.py\", line 305, in merge\n"
                 FOUR_TIMES("    base_layer.weight.data += self.get_delta_weight(active_adapter)\n"
                            "RuntimeError: The size of tensor a (0) must match the size of tensor b (4096) at "
                            "non-singleton dimension 1\n"));
    assert_string_equal(f->d.rule_id, "deepspeed.zero3_partitioned_weight");
    assert_int_equal(f->d.kind, CP_KIND_ZERO3_PARAM_STATE);
}

/* Two ranks time out in a barrier inside save_checkpoint (torchtune's
 * recipe, gloo): where the waiters waited is where the run stalled, a
 * checkpoint save. */
#define WAITER_IN_SAVE(R)                                                                                        \
    "[rank" R "]: Traceback (most recent call last):\n"                                                           \
    "[rank" R "]:   File \"/env/recipes/lora_finetune_distributed.py\", line 894, in train\n"                     \
    "[rank" R "]:     self.save_checkpoint(epoch=curr_epoch)\n"                                                   \
    "[rank" R "]:   File \"/env/recipes/lora_finetune_distributed.py\", line 745, in save_checkpoint\n"           \
    "[rank" R "]:     torch.distributed.barrier()\n"                                                              \
    "[rank" R "]:   File \"/env/torch/distributed/distributed_c10d.py\", line 4556, in barrier\n"                 \
    "[rank" R "]:     work.wait()\n"                                                                              \
    "[rank" R "]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out "    \
    "waiting 1800000ms for recv operation to complete\n"

static void waiters_in_a_save_make_a_checkpoint_stall(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", WAITER_IN_SAVE("2") WAITER_IN_SAVE("3"));
    assert_true(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_CHECKPOINT_HANG);
    assert_int_equal(f->d.phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_true(note_has(&f->d, "were waiting in checkpoint_save", NULL));
}

/* One of them waits somewhere that names no phase: the waiters do not
 * agree, and say nothing of the stall's phase. */
static void waiters_that_disagree_say_nothing(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 WAITER_IN_SAVE("2")
                 "[rank0]: Traceback (most recent call last):\n"
                 "[rank0]:   File \"/w/train.py\", line 60, in main\n"
                 "[rank0]:     dist.all_reduce(m)\n"
                 "[rank0]:   File \"/env/torch/distributed/distributed_c10d.py\", line 1536, in all_reduce\n"
                 "[rank0]:     work.wait()\n"
                 "[rank0]: RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out "
                 "waiting 1800000ms for recv operation to complete\n");
    assert_true(f->d.hang);
    assert_false(note_has(&f->d, "were waiting in", NULL));
}

/* A rankless OOM and one rank named only by its watchdog timeout (cut
 * by a search window): that rank waited for another, it did not raise. */
static void only_named_rank_that_timed_out_did_not_raise(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "paste.log",
                 "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 564.00 MiB. GPU 1 has a total "
                 "capacty of 22.20 GiB of which 203.12 MiB is free.\n"
                 "[E ProcessGroupNCCL.cpp:456] [Rank 3] Watchdog caught collective ope\n");
    assert_int_equal(f->d.kind, CP_KIND_CUDA_OOM);
    assert_int_equal(f->d.first_rank, -1);
}

/* Ray's report of a dead worker is a consequence; the watchdog timeout
 * of a rank inside the actor says the run stalled. */
static void ray_worker_death_is_a_consequence(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "driver.log",
                 "(WorkerDict pid=1009101) [rank4]:[E519 04:35:55.111951168 ProcessGroupNCCL.cpp:629] [Rank 4] "
                 "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, "
                 "NumelOut=1, Timeout(ms)=600000) ran for 600015 milliseconds before timing out.\n"
                 "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n");
    assert_true(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_TIMEOUT);
}

/* A py-spy dump (a decimal thread id, as some releases print it): its
 * frames are not in Python's traceback form, and still name the phase. */
static void pyspy_dump_frames_name_the_phase(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "pyspy.txt",
                 "Thread 42 (idle): \"MainThread\"\n"
                 "    backward (torch/autograd/__init__.py:266)\n"
                 "    backward (torch/_tensor.py:522)\n"
                 "    backward (deepspeed/runtime/zero/stage3.py:2213)\n"
                 "    training_loop (scripts/fine_tune.py:410)\n");
    assert_true(f->d.hang);
    assert_string_equal(f->d.rule_id, "engine.live_stack_dump");
    assert_int_equal(f->d.phase, CP_PHASE_BACKWARD);
}

/* Ctrl-C after a save began, and no error before it: the save stalled
 * and somebody stopped the run by hand. */
static void interrupt_inside_a_save_is_a_stalled_save(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[INFO|trainer.py:1836] 2024-05-26 14:56:06,884 >> Epoch: [0],Step [4/5]\n"
                 "[INFO|trainer.py:2915] 2024-05-26 14:56:22,776 >> Saving model checkpoint to out/tmp-checkpoint-5\n"
                 "^C[2024-05-26 15:06:40,046] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 22523\n");
    assert_true(f->d.hang);
    assert_string_equal(f->d.rule_id, "engine.interrupted");
    assert_int_equal(f->d.kind, CP_KIND_CHECKPOINT_HANG);
    assert_int_equal(f->d.phase, CP_PHASE_CHECKPOINT_SAVE);
}

/* A KeyboardInterrupt after a real error says nothing: the error is the
 * failure. */
static void interrupt_after_an_error_is_no_hang(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "Traceback (most recent call last):\n"
                 "  File \"/w/train.py\", line 9, in <module>\n"
                 "ValueError: bad batch\n"
                 "Traceback (most recent call last):\n"
                 "  File \"/env/torch/distributed/run.py\", line 905, in run\n"
                 "KeyboardInterrupt\n");
    assert_false(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_PYTHON_EXCEPTION);
}

/* The same with the second traceback's header cut from the paste
 * (OpenNMT-py#1724, frames printed without their indentation): the error
 * line ended the first traceback, so the frames under it begin another,
 * and the interrupt is not the first traceback's exception. */
static void frames_after_an_error_line_begin_another_traceback(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "File \"/home/u/.local/lib/python3.6/site-packages/apex/amp/scaler.py\", line 176, in "
                 "unscale_with_stashed\n"
                 "out_scale/grads_have_scale, # 1./scale,\n"
                 "ZeroDivisionError: float division by zero\n"
                 "File \"/usr/lib/python3.6/multiprocessing/process.py\", line 93, in run\n"
                 "self._target(*self._args, **self._kwargs)\n"
                 "File \"/home/u/OpenNMT-py/train.py\", line 156, in run\n"
                 "error_queue.put((opt.gpu_ranks[device_id], traceback.format_exc()))\n"
                 "KeyboardInterrupt\n");
    assert_true(f->d.failed);
    assert_false(f->d.hang);
    assert_string_not_equal(f->d.rule_id, "engine.interrupted");
    assert_true(strstr(f->d.signature, "ZeroDivisionError") != NULL);
}

/* No error, but the loss went NaN and the run went on (torchtitan#3109's
 * shape): the non-finite numbers are the failure. An fp16 run's skipped
 * step, logged with an infinite gradient norm and a finite loss, is not. */
static void nan_loss_without_an_error_is_the_failure(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank0]:step:  1  loss: 10.9012  grad_norm:  3.2101\n"
                 "[rank0]:step:  2  loss: 10.8123  grad_norm: 97.5520\n"
                 "[rank0]:step:  3  loss:    nan  grad_norm:   nan\n"
                 "[rank0]:step:  4  loss:    nan  grad_norm:   nan\n");
    assert_true(f->d.failed);
    assert_false(f->d.hang);
    assert_string_equal(f->d.rule_id, "engine.nonfinite_training");
    assert_int_equal(f->d.kind, CP_KIND_LOSS_SCALE_FLOOR);
    assert_int_equal(f->d.owner, CP_OWNER_NUMERIC);
    assert_int_equal(f->d.first_rank, 0);
    assert_int_equal(f->d.phase, CP_PHASE_FORWARD);   /* a loss is the forward's output */
    assert_true(strstr(f->d.signature, "step:  3") != NULL);
}

/* Megatron's iteration line with a NaN gradient norm and no NaN loss: it
 * may have begun in backward, so no phase is claimed. */
static void nan_grad_norm_without_an_error_claims_no_phase(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 " iteration     5426/  250000 | consumed samples:        43408 | learning rate: 2.999E-04 | "
                 "global batch size:     8 | lm loss: 6.718E+00 | loss scale: 1.0 | grad norm: 1.234 |\n"
                 " iteration     5427/  250000 | consumed samples:        43416 | learning rate: 2.999E-04 | "
                 "global batch size:     8 | loss scale: 1.0 | grad norm: nan | actual seqlen:  2048 |\n");
    assert_true(f->d.failed);
    assert_string_equal(f->d.rule_id, "engine.nonfinite_training");
    assert_int_equal(f->d.phase, CP_PHASE_UNKNOWN);
}

static void skipped_fp16_step_is_no_failure(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "{'loss': 2.3113, 'grad_norm': inf, 'learning_rate': 2e-05, 'epoch': 0.01}\n"
                 "{'loss': 2.2871, 'grad_norm': 1.9421, 'learning_rate': 2e-05, 'epoch': 0.02}\n");
    assert_false(f->d.failed);
}

/* An uncaught C++ exception's stack is no dump of a live process: the
 * process aborted, it did not hang. */
static void cpp_exception_stack_is_no_live_dump(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "terminate called after throwing an instance of 'c10::Error'\n"
                 "  what():  Trying to free a pointer not allocated here\n"
                 "Exception raised from raw_delete at /pytorch/torch/csrc/cuda/CUDAPluggableAllocator.cpp:151 (most "
                 "recent call first):\n"
                 "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f5b3792f1b6 in "
                 "/env/torch/lib/libc10.so)\n"
                 "frame #1: c10::detail::torchCheckFail(char const*, char const*, unsigned int, char const*) + 0x68 "
                 "(0x7f5b378d8a76 in /env/torch/lib/libc10.so)\n");
    assert_true(f->d.failed);
    assert_false(f->d.hang);
    assert_string_equal(f->d.rule_id, "cpp.terminate");
}

/* A peer that failed otherwise (here the collective its partner left) says
 * nothing of the root's phase. */
static void no_phase_from_other_errors(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 DTENSOR_INNER DTENSOR_FULL_STACK("7")
                 "[rank7]:   File \"/env/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py\", line 1541, in all_reduce\n"
                 "[rank7]: RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:15025\n");
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->first_rank, 1);
    assert_int_equal(d->phase, CP_PHASE_UNKNOWN);
    assert_false(note_has(d, "is read from rank", NULL));
}

static void root_wins_over_cascade(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", root_cascade_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_false(d->hang);
    assert_int_equal(d->first_rank, 2);
    assert_int_equal(d->kind, CP_KIND_PYTHON_EXCEPTION);
    assert_int_equal(d->owner, CP_OWNER_USER_CODE);
    assert_int_equal(d->phase, CP_PHASE_FORWARD);
    assert_string_equal(d->rule_id, "py.exception");
    assert_non_null(strstr(d->signature, "ValueError: TinyMLP"));
    assert_string_equal(d->first_time, "2026-11-29 16:19:32.295");
    assert_int_equal(d->world_size, 4);

    /* one incident, four rows: the root and three consequences */
    assert_int_equal(d->n_ranks, 4);
    assert_int_equal(row_of(d, 2)->state, CP_RS_ROOT);
    assert_int_equal(row_of(d, 0)->state, CP_RS_CASCADE);
    assert_int_equal(row_of(d, 1)->state, CP_RS_CASCADE);
    assert_int_equal(row_of(d, 3)->state, CP_RS_CASCADE);
    assert_string_equal(row_of(d, 1)->first_error, "gloo peer closed the connection");
    assert_int_equal(row_of(d, 1)->last_step, 2);

    /* the evidence starts with the root's own lines */
    assert_true(d->n_evidence >= 2);
    assert_string_equal(d->evidence[0].path, "train.log");
    assert_int_equal(d->evidence[0].rank, 2);
    assert_int_equal(d->evidence[0].line, 6);
}

/* ---- a run that never finished its set-up ------------------------------ */

/* pytorch-lightning#8707: a two-node Slurm job without srun starts only
 * the first node's ranks; they print their set-up line and wait. */
static const char lightning_half_world_text[] =
    "GPU available: True, used: True\n"
    "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/8\n"
    "initializing ddp: GLOBAL_RANK: 2, MEMBER: 3/8\n"
    "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/8\n"
    "initializing ddp: GLOBAL_RANK: 3, MEMBER: 4/8\n";

/* The verdict of a run that stalled while its ranks set up the process
 * group: a hang at init, no rank named. */
static void assert_setup_stall(const cp_diagnosis *d)
{
    assert_true(d->failed);
    assert_true(d->hang);
    assert_string_equal(d->rule_id, "engine.setup_unfinished");
    assert_int_equal(d->kind, CP_KIND_RENDEZVOUS_ERROR);
    assert_int_equal(d->phase, CP_PHASE_INIT);
    assert_int_equal(d->first_rank, -1);
}

static void input_ending_in_setup_is_a_setup_stall(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "slurm-1.out", lightning_half_world_text);
    const cp_diagnosis *d = &f->d;
    assert_setup_stall(d);
    assert_true(note_has(d, "ranks 4-7 printed no set-up line", NULL));
    assert_int_equal(row_of(d, 2)->state, CP_RS_OK);
    assert_int_equal(row_of(d, 5)->state, CP_RS_SILENT);
}

/* Lightning-AI/torchmetrics#2300: the same wait, ended by Slurm
 * cancelling the job. The cancellation is no cause; the set-up that never
 * finished is the verdict, and the cancellation a note. */
static void setup_ended_by_the_scheduler_is_a_setup_stall(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "slurm-168885.out",
                 "[rank: 0] Global seed set to 42\n"
                 "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/96\n"
                 "slurmstepd: error: *** JOB 168885 ON scn67-10g CANCELLED AT 2023-08-31T18:04:42 ***\n");
    const cp_diagnosis *d = &f->d;
    assert_setup_stall(d);
    assert_string_equal(d->signature, "Initializing distributed: GLOBAL_RANK: 0, MEMBER: 1/96");
    assert_true(note_has(d, "ranks 1-95 printed no set-up line", NULL));
    assert_true(note_has(d, "ended from outside", "CANCELLED AT"));
}

/* ---- a run the scheduler ended long after its last step ------------------ */

/* Every rank logged step 120 at 10:00 and nothing after; Slurm ended the
 * job at its time limit at 10:40 (Slurm's step id "4242.0" is no training
 * step). */
static void quiet_end_text(char *buf, size_t len, const char *ended_at)
{
    snprintf(buf, len,
             "0: [2026-11-29 10:00:01,000] [INFO] [rank0] step 120 | loss 2.01\n"
             "1: [2026-11-29 10:00:01,050] [INFO] [rank1] step 120 | loss 2.03\n"
             "slurmstepd: error: *** STEP 4242.0 ON node001 CANCELLED AT %s DUE TO TIME LIMIT ***\n",
             ended_at);
}

static void time_limit_long_after_the_last_step_is_a_stall(void **state)
{
    fixture *f = *state;
    char text[512];
    quiet_end_text(text, sizeof text, "2026-11-29T10:40:03");
    diagnose_one(f, "slurm-4242.out", text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_string_equal(d->rule_id, "engine.stalled_before_end");
    assert_int_equal(d->kind, CP_KIND_NCCL_TIMEOUT);
    assert_int_equal(d->first_rank, -1);
    assert_true(note_has(d, "step the ranks logged, 120, came at 2026-11-29 10:00:01.050, 40 minutes before",
                         "ended at 2026-11-29 10:40:03"));
    assert_int_equal(row_of(d, 1)->last_step, 120);
}

/* NVIDIA-NeMo/Megatron-Bridge#1656, as pasted (its first two lines, nsys's
 * report path, left out): Megatron logged the end of its training loop,
 * and Slurm ended the step at its time limit eight minutes later. */
static void hung_exit_text(char *buf, size_t len, const char *between)
{
    snprintf(buf, len,
             "[after training is done] datetime: 2025-12-03 14:45:03\n"
             "%s"
             "slurmstepd: error: *** STEP 4226796.2 ON eos0117 CANCELLED AT 2025-12-03T14:53:02 DUE TO TIME LIMIT ***\n"
             "No transition in N5Agent6Client3FSM8Profiler8ShutdownE (1) for N5Agent6Client3FSM9InterruptE.\n",
             between);
}

static void time_limit_minutes_after_training_ended_is_a_hung_exit(void **state)
{
    fixture *f = *state;
    char text[512];
    hung_exit_text(text, sizeof text, "");
    diagnose_one(f, "slurm.out", text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_string_equal(d->rule_id, "engine.hung_after_training");
    assert_int_equal(d->kind, CP_KIND_UNKNOWN);
    assert_int_equal(d->phase, CP_PHASE_UNKNOWN);
    assert_int_equal(d->first_rank, -1);
    assert_true(note_has(d, "logged its end at", "7 minutes later"));
}

/* Megatron saves its last checkpoint after that line: a save begun and
 * never ended is where the run stopped, not its exit. */
static void save_begun_after_training_ended_is_no_hung_exit(void **state)
{
    fixture *f = *state;
    char text[512];
    hung_exit_text(text, sizeof text, "saving checkpoint at iteration      50 to /ckpt in torch_dist format\n");
    diagnose_one(f, "slurm.out", text);
    assert_string_not_equal(f->d.rule_id, "engine.hung_after_training");
}

/* Slurm ending the job a minute after the loop's end cut a clean exit
 * short (or a slow one): nothing says it hung. */
static void time_limit_right_after_training_ended_is_no_hung_exit(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "slurm.out",
                 "[after training is done] datetime: 2025-12-03 14:45:03\n"
                 "slurmstepd: error: *** STEP 4226796.2 ON eos0117 CANCELLED AT 2025-12-03T14:46:02 DUE TO TIME LIMIT ***\n");
    assert_string_not_equal(f->d.rule_id, "engine.hung_after_training");
    assert_false(f->d.hang);
}

/* torchrun's agent getting SIGTERM 45 minutes after the last step (its
 * own line's time is the end), in Python 3.10's words for the signal. */
static void launcher_signal_long_after_the_last_step_is_a_stall(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[default0]:[2026-11-29 10:00:01,000] [INFO] [rank0] step 120 | loss 2.01\n"
                 "[default1]:[2026-11-29 10:00:01,050] [INFO] [rank1] step 120 | loss 2.03\n"
                 "W1129 10:45:10.123000 140 torch/distributed/elastic/agent/server/api.py:704] Received "
                 "Signals.SIGTERM death signal, shutting down workers\n");
    assert_true(f->d.hang);
    assert_string_equal(f->d.rule_id, "engine.stalled_before_end");
    assert_true(note_has(&f->d, "45 minutes before the job was ended at 2026-11-29 10:45:10", NULL));
}

/* SIGTERM reaching torchrun's agent while it waits in the rendezvous:
 * raised in the launcher's own frames, and still the signal from outside
 * its message names, not the launcher crashing (launcher.crashed). */
static void signal_in_the_launchers_frames_is_the_signal(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "node1.log",
                 "Traceback (most recent call last):\n"
                 "  File \"/usr/lib/python3/dist-packages/torch/distributed/elastic/agent/server/api.py\", line 850, "
                 "in _initialize_workers\n"
                 "    self._rendezvous(worker_group)\n"
                 "  File \"/usr/lib/python3/dist-packages/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py\", "
                 "line 1160, in next_rendezvous\n"
                 "    self._op_executor.run(join_op, deadline, self._get_deadline)\n"
                 "  File \"/usr/lib/python3/dist-packages/torch/distributed/elastic/multiprocessing/api.py\", line 62, "
                 "in _terminate_process_handler\n"
                 "    raise SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)\n"
                 "torch.distributed.elastic.multiprocessing.api.SignalException: Process 6304 got signal: 15\n");
    assert_string_equal(f->d.rule_id, "launcher.agent_signaled");
}

/* The same end a minute after the last step is a run the time limit cut
 * short; an end whole hours after it may be Slurm's local time against
 * the log's UTC, and says nothing either. */
static void time_limit_right_after_the_last_step_is_no_stall(void **state)
{
    const char *ends[] = {"2026-11-29T10:01:30", "2026-11-29T12:01:03"};
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
        if (i > 0) {
            free_fixture(state);
            new_fixture(state);
        }
        fixture *f = *state;
        char text[512];
        quiet_end_text(text, sizeof text, ends[i]);
        diagnose_one(f, "slurm-4242.out", text);
        assert_false(f->d.hang);
        assert_string_equal(f->d.rule_id, "launcher.slurm_time_limit");
    }
}

/* The same lines, then training steps: set-up finished, nothing failed. */
static void setup_followed_by_steps_is_no_failure(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "slurm-1.out",
                 "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\n"
                 "initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2\n"
                 "All DDP processes registered. Starting ddp with 2 processes\n"
                 "step 10 | loss 2.3113\n");
    assert_false(f->d.failed);
}

/* ---- clock skew --------------------------------------------------------------- */

static const char skew_generic_text[] =
    "2026-11-29 16:19:40,000 [rank0] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/proj/train.py\", line 71, in main\n"
    "    batch = next(loader)\n"
    "RuntimeError: shard 3 of the index returned an empty batch\n";

static void skew_streams(fixture *f, const char *oom_time)
{
    static char oom_text[1024];
    snprintf(oom_text, sizeof oom_text,
             "2026-11-29 %s [rank9] ERROR train: training failed\n"
             "Traceback (most recent call last):\n"
             "  File \"/home/ml/proj/train.py\", line 71, in main\n"
             "    loss = model(batch)\n"
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of "
             "79.10 GiB of which 1.17 GiB is free.\n",
             oom_time);
    const stream_in s[] = {{"node001/train.log", skew_generic_text}, {"node002/train.log", oom_text}};
    diagnose(f, s, 2);
}

static void specific_error_wins_within_skew(void **state)
{
    fixture *f = *state;
    skew_streams(f, "16:19:40,800");
    assert_true(f->d.failed);
    assert_int_equal(f->d.first_rank, 9);
    assert_int_equal(f->d.kind, CP_KIND_CUDA_OOM);
    assert_string_equal(f->d.host, "node002");
}

static void earlier_error_wins_beyond_skew(void **state)
{
    fixture *f = *state;
    skew_streams(f, "16:19:45,000");
    assert_true(f->d.failed);
    assert_int_equal(f->d.first_rank, 0);
    assert_int_equal(f->d.kind, CP_KIND_PYTHON_EXCEPTION);
    assert_string_equal(f->d.host, "node001");
    assert_string_equal(f->d.first_time, "2026-11-29 16:19:40.000");
}

/* ---- hangs ------------------------------------------------------------------ */

static const char watchdog_text[] =
    "[rank0]:[E1122 06:40:00.504952916 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 122, last enqueued NCCL work: 127, last completed NCCL work: 121.\n"
    "[rank1]:[E1122 06:40:00.586033171 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 122, last enqueued NCCL work: 127, last completed NCCL work: 121.\n"
    "[rank3]:[E1122 06:40:00.601413512 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 3] Exception (either an error or timeout) detected by watchdog at work: 122, last enqueued NCCL work: 127, last completed NCCL work: 121.\n"
    "[rank2]:[E1122 06:40:02.586033171 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 2] Timeout at NCCL work: 121, last enqueued NCCL work: 121, last completed NCCL work: 120.\n";

static void watchdog_lowest_enqueued_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", watchdog_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_true(d->hang);
    assert_int_equal(d->first_rank, 2);
    assert_int_equal(d->kind, CP_KIND_NCCL_TIMEOUT);
    assert_true(note_has(d, "121", "127"));
    assert_true(note_has(d, "Rank 2", NULL));
}

/* The same reports, but rank 2's from another process group (pipeline
 * stages time out in their own send/receive groups): sequence numbers
 * count per group, so rank 2's lower one says nothing about the others'. */
static const char watchdog_two_groups_text[] =
    "[rank0]:[E1122 06:40:00.504952916 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 122, last enqueued NCCL work: 127, last completed NCCL work: 121.\n"
    "[rank1]:[E1122 06:40:00.586033171 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 122, last enqueued NCCL work: 127, last completed NCCL work: 121.\n"
    "[rank3]:[E1122 06:40:00.601413512 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 3] Exception (either an error or timeout) detected by watchdog at work: 122, last enqueued NCCL work: 127, last completed NCCL work: 121.\n"
    "[rank2]:[E1122 06:40:02.586033171 ProcessGroupNCCL.cpp:1834] [PG 5 Rank 0] Timeout at NCCL work: 121, last enqueued NCCL work: 121, last completed NCCL work: 120.\n";

static void watchdog_groups_do_not_compare(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", watchdog_two_groups_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_int_equal(d->kind, CP_KIND_NCCL_TIMEOUT);
    assert_int_not_equal(d->first_rank, 2);
    assert_false(note_has(d, "121", "127"));
}

/* A rank's flight-recorder dump request states its counters in the
 * default group; the rank that timed out did so in a sub-group (an MoE
 * all-to-all, PrimeIntellect-ai/prime-rl#3186): 1261 and 1438 count
 * different groups' work, so rank 0 is not behind. */
static const char dump_signal_other_group_text[] =
    "[rank13]:[E804 23:05:54.516665906 ProcessGroupNCCL.cpp:689] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1438, OpType=ALLTOALL_BASE, NumelIn=195004416, NumelOut=195004416, Timeout(ms)=600000) ran for 600093 milliseconds before timing out.\n"
    "[rank13]:[E804 23:05:54.517045067 ProcessGroupNCCL.cpp:2303] [PG ID 3 PG GUID d03ba143833c6bf31b072ffdb22f1745957fcbfb Rank 1]  failure detected by watchdog at work sequence id: 1438 PG status: last enqueued work: 1441, last completed work: 1437\n"
    "[rank0]:[E804 23:05:54.817424543 ProcessGroupNCCL.cpp:1914] [PG ID 0 PG GUID 0(default_pg) Rank 0] Received a dump signal due to a collective timeout from  rank 13 and we will try our best to dump the debug info. Last enqueued NCCL work: 1261, last completed NCCL work: 1261.\n";

static void dump_signal_groups_do_not_compare(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", dump_signal_other_group_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_int_equal(d->kind, CP_KIND_NCCL_TIMEOUT);
    assert_int_not_equal(d->first_rank, 0);
    assert_false(note_has(d, "1261", NULL));
}

/* One rank's two reports of one timeout (as NCCL 2.x's ProcessGroupNCCL
 * prints them, musubi-tuner#77): it timed out in work 6 but had enqueued
 * up to 516, which says the rank went on, not that another was behind. */
static const char watchdog_one_rank_text[] =
    "[rank1]:[E507 18:50:51.334156858 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6, OpType=ALLREDUCE, NumelIn=65536, NumelOut=65536, Timeout(ms)=600000) ran for 600061 milliseconds before timing out.\n"
    "[rank1]:[E507 18:50:51.334374163 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 6, last enqueued NCCL work: 516, last completed NCCL work: 5.\n";

static void watchdog_rank_not_compared_with_itself(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", watchdog_one_rank_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_int_equal(d->kind, CP_KIND_NCCL_TIMEOUT);
    assert_int_not_equal(d->first_rank, 1);
    assert_false(note_has(d, "the others reached", NULL));
}

/* Two ranks that both enqueued past the work they wait in: the one that
 * timed out in the earlier work is behind, whatever each enqueued. */
static const char watchdog_earliest_wait_text[] =
    "[rank0]:[E225 10:00:00.100000000 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=619725, OpType=_ALLGATHER_BASE, NumelIn=1, NumelOut=4, Timeout(ms)=1800000) ran for 1800035 milliseconds before timing out.\n"
    "[rank0]:[E225 10:00:00.100100000 ProcessGroupNCCL.cpp:2241] [PG ID 0 PG GUID 0(default_pg) Rank 0]  failure detected by watchdog at work sequence id: 619725 PG status: last enqueued work: 619732, last completed work: 619724\n"
    "[rank3]:[E225 10:00:02.200000000 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=619727, OpType=_REDUCE_SCATTER_BASE, NumelIn=4, NumelOut=1, Timeout(ms)=1800000) ran for 1800021 milliseconds before timing out.\n"
    "[rank3]:[E225 10:00:02.200100000 ProcessGroupNCCL.cpp:2241] [PG ID 0 PG GUID 0(default_pg) Rank 3]  failure detected by watchdog at work sequence id: 619727 PG status: last enqueued work: 619730, last completed work: 619726\n";

/* The watchdog reports in `text` name `rank` as behind, in a note that
 * holds both strings. */
static void assert_rank_behind(void **state, const char *text, int rank, const char *a, const char *b)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_int_equal(d->first_rank, rank);
    assert_true(note_has(d, a, b));
}

static void watchdog_earliest_wait_is_behind(void **state)
{
    assert_rank_behind(state, watchdog_earliest_wait_text, 0, "Rank 0 is behind", "waits in work 619725");
}

/* Two ranks waiting in the same work (the size of the broadcast tells them
 * apart, ms-swift's DDP buffer sync): the one that enqueued nothing after
 * it is behind the one that went on to enqueue the next. */
static const char watchdog_same_wait_text[] =
    "[rank3]:[E918 19:29:24.436955737 ProcessGroupNCCL.cpp:689] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7219, OpType=BROADCAST, NumelIn=64, NumelOut=64, Timeout(ms)=3000000) ran for 3000021 milliseconds before timing out.\n"
    "[rank3]:[E918 19:29:24.440481846 ProcessGroupNCCL.cpp:2303] [PG ID 0 PG GUID 0(default_pg) Rank 3]  failure detected by watchdog at work sequence id: 7219 PG status: last enqueued work: 7220, last completed work: 7218\n"
    "[rank2]:[E918 19:29:25.950601628 ProcessGroupNCCL.cpp:689] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7219, OpType=BROADCAST, NumelIn=24084544, NumelOut=24084544, Timeout(ms)=3000000) ran for 3000074 milliseconds before timing out.\n"
    "[rank2]:[E918 19:29:25.950900997 ProcessGroupNCCL.cpp:2303] [PG ID 0 PG GUID 0(default_pg) Rank 2]  failure detected by watchdog at work sequence id: 7219 PG status: last enqueued work: 7219, last completed work: 7218\n";

static void watchdog_same_wait_less_enqueued_is_behind(void **state)
{
    assert_rank_behind(state, watchdog_same_wait_text, 2, "Rank 2 is behind", "as far as 7220");
}

/* Every rank refuses to clip a non-finite gradient norm (DDP averaged one
 * rank's overflowing gradients into all of them); the tracebacks name no
 * rank, the log lines before them do, with each rank's loss (real-55's
 * shape). */
static const char loss_outlier_text[] =
    "2026-12-02 07:32:41,661 [rank0] INFO step 4 loss 1.2113\n"
    "2026-12-02 07:32:41,662 [rank1] INFO step 4 loss 1.0577\n"
    "2026-12-02 07:32:41,662 [rank2] INFO step 4 loss 1.3925\n"
    "2026-12-02 07:32:41,663 [rank3] INFO step 4 loss 1.1008\n"
    "2026-12-02 07:32:41,670 [rank0] INFO step 5 loss 3116404749728698824120074240.0000\n"
    "2026-12-02 07:32:41,670 [rank3] INFO step 5 loss %s\n"
    "2026-12-02 07:32:41,673 [rank2] INFO step 5 loss 1.3510\n"
    "2026-12-02 07:32:41,680 [rank1] INFO step 5 loss 0.9879\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/train.py\", line 38, in main\n"
    "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)\n"
    "  File \"/usr/lib/python3/dist-packages/torch/nn/utils/clip_grad.py\", line 54, in clip_grad_norm_\n"
    "    raise RuntimeError(\n"
    "RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be "
    "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
    "`error_if_nonfinite=False`\n";

static void numeric_failure_names_the_rank_whose_loss_blew_up(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, loss_outlier_text, "1.0451");
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->kind, CP_KIND_LOSS_SCALE_FLOOR);
    assert_int_equal(d->first_rank, 0);
    assert_true(note_has(d, "rank 0 logged a loss of 3.1164e+27 at step 5", "median was 1.351"));
}

/* A rank logs that it gives up and exits without raising (sys.exit after
 * log.error); the others lose it in their all-reduce, with tracebacks
 * that carry no rank (real-61's shape). */
static const char logged_error_text[] =
    "[2026-12-02 08:08:14,877] [INFO] rank 0: step 3 loss 1.3075\n"
    "[2026-12-02 08:08:14,878] [INFO] rank 1: step 3 loss 1.3860\n"
    "[2026-12-02 08:08:14,879] [INFO] rank 3: step 3 loss 1.4712\n"
    "[2026-12-02 08:08:14,880] [INFO] rank 2: step 3 loss 1.3548\n"
    "[2026-12-02 08:08:14,880] [%s] rank 2: data shard /data/train/shard-00002-of-00004.tar not found%s\n"
    "[2026-12-02 08:08:14,881] [INFO] rank 0: step 4 begins\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/train.py\", line 44, in main\n"
    "    loss.backward()\n"
    "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:37563\n";

static void rank_that_logged_giving_up_is_the_one_that_left(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, logged_error_text, "ERROR", ", cannot continue");
    const cp_diagnosis *d = &f->d;
    assert_string_equal(d->rule_id, "engine.logged_error_exit");
    assert_int_equal(d->first_rank, 2);
    assert_false(d->hang);
    assert_true(strstr(d->signature, "not found, cannot continue") != NULL);
    assert_true(d->n_evidence > 0 && strstr(d->evidence[0].text, "cannot continue") != NULL);
}

/* An ERROR line that does not say the process stops, or a line at
 * another level, names nobody: the peer-gone error stays the verdict. */
static void error_line_that_goes_on_names_nobody(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, logged_error_text, "ERROR", ", retrying from the next shard");
    assert_string_not_equal(f->d.rule_id, "engine.logged_error_exit");
}

static void info_line_names_nobody(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, logged_error_text, "INFO", ", cannot continue");
    assert_string_not_equal(f->d.rule_id, "engine.logged_error_exit");
}

/* One rank skips a batch whose loss is NaN, so it runs one all-reduce
 * fewer, finishes and exits 0; the others' tracebacks carry no rank, and
 * torchrun's failure table lists all of them but that rank (real-67's
 * shape). The fourth row, when present, is that rank stopped by torchrun:
 * then nobody is known to have left early. */
static const char skipped_batch_text[] =
    "2026-12-02 13:48:47,557 WARNING [rank2] non-finite loss nan at step 4, skipping batch\n"
    "2026-12-02 13:48:47,566 INFO [rank1] step 4 loss 1.4642\n"
    "2026-12-02 13:48:47,572 INFO [rank2] step 6 loss 1.4538\n"
    "2026-12-02 13:48:47,572 INFO [rank2] training done\n"
    "2026-12-02 13:48:47,574 INFO [rank3] step 5 loss 1.4608\n"
    "2026-12-02 13:48:47,575 INFO [rank0] step 5 loss 1.3114\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/train.py\", line 48, in main\n"
    "    loss.backward()\n"
    "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:28548\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "============================================================\n"
    "train.py FAILED\n"
    "------------------------------------------------------------\n"
    "Failures:\n"
    "[1]:\n"
    "  time      : 2026-12-02_13:48:48\n"
    "  host      : localhost\n"
    "  rank      : 1 (local_rank: 1)\n"
    "  exitcode  : 1 (pid: 3934)\n"
    "[2]:\n"
    "  time      : 2026-12-02_13:48:48\n"
    "  host      : localhost\n"
    "  rank      : 3 (local_rank: 3)\n"
    "  exitcode  : 1 (pid: 3936)\n"
    "%s"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2026-12-02_13:48:48\n"
    "  host      : localhost\n"
    "  rank      : 0 (local_rank: 0)\n"
    "  exitcode  : 1 (pid: 3933)\n"
    "============================================================\n";

static void rank_the_table_leaves_out_left_early(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, skipped_batch_text, "");
    const cp_diagnosis *d = &f->d;
    assert_string_equal(d->rule_id, "engine.left_early");
    assert_int_equal(d->first_rank, 2);
    assert_int_equal(d->kind, CP_KIND_COLLECTIVE_MISMATCH);
    assert_false(d->hang);
    assert_true(note_has(d, "lists every rank but 2", NULL));
    assert_true(note_has(d, "Rank 2 logged a non-finite loss", NULL));
    bool nan_shown = false;
    for (size_t i = 0; i < d->n_evidence; i++)
        nan_shown = nan_shown || strstr(d->evidence[i].text, "skipping batch") != NULL;
    assert_true(nan_shown);
}

/* The skipped-batch table with one more row: nobody left early. */
static void no_left_early_with_row(void **state, const char *row)
{
    fixture *f = *state;
    diagnose_formatted(f, skipped_batch_text, row);
    assert_string_not_equal(f->d.rule_id, "engine.left_early");
}

static void rank_the_launcher_stopped_did_not_leave_early(void **state)
{
    no_left_early_with_row(state, "[3]:\n"
                                  "  time      : 2026-12-02_13:48:48\n"
                                  "  host      : localhost\n"
                                  "  rank      : 2 (local_rank: 2)\n"
                                  "  exitcode  : -15 (pid: 3935)\n");
}

/* A rank the table lists as killed by a signal of its own (here SIGFPE)
 * failed on its own account: the others' errors need not be about a peer
 * that left, so the rank missing from the table is not taken for one. */
static void table_with_a_signal_death_is_no_left_early(void **state)
{
    no_left_early_with_row(state, "[3]:\n"
                                  "  time      : 2026-12-02_13:48:48\n"
                                  "  host      : localhost\n"
                                  "  rank      : 4 (local_rank: 4)\n"
                                  "  exitcode  : -8 (pid: 3937)\n"
                                  "  traceback : Signal 8 (SIGFPE) received by PID 3937\n");
}

/* Only the table's root cause, one rank killed by SIGFPE, in a world no
 * line states (zhi-xuan-chen/Reg2RG#6, as pasted): rank 1 failed, and nothing
 * says a rank 0 left early. */
static void one_listed_rank_is_no_left_early(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[2025-09-09 10:30:47,123] torch.distributed.elastic.multiprocessing.api: [ERROR] failed "
                 "(exitcode: -8) local_rank: 1 (pid: 52782) of binary:\n"
                 "Root Cause (first observed failure):\n"
                 "[0]:\n"
                 "  time      : 2025-09-09_10:30:38\n"
                 "  host      : normandy-mlflow-debug-4x7tta-036504-bc75f\n"
                 "  rank      : 1 (local_rank: 1)\n"
                 "  exitcode  : -8 (pid: 52782)\n"
                 "  error_file: <N/A>\n"
                 "  traceback : Signal 8 (SIGFPE) received by PID 52782\n"
                 "=======================================================\n");
    assert_string_not_equal(f->d.rule_id, "engine.left_early");
    assert_int_equal(f->d.first_rank, 1);
}

/* PyTorch 1.x ranks waiting on the c10d store for a key rank 0 never
 * writes (rwth-i6/returnn#1621: rank 0 evaluating alone): a stall. While
 * the ranks still set up, the wait is set-up's; once they logged steps,
 * the store wait says nothing about the phase. */
static const char store_wait_text[] =
    "%s"
    "Unhandled exception <class 'RuntimeError'> in thread <_MainThread(MainThread, started 129187316453376)>, "
    "proc 25928.\n"
    "RuntimeError: Socket Timeout\n"
    "Exception raised from doWait at ../torch/csrc/distributed/c10d/TCPStore.cpp:445 (most recent call "
    "first):\n";

static void store_wait_after_steps_is_no_setup_stall(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, store_wait_text,
                       "ep 1 dev eval, step 98, min_wer -0.187, ce 0.469, fer 0.964, mem_usage:cuda:0 1.6GB\n"
                       "ep 1 dev eval, step 99, min_wer 0.083, ce 0.286, fer 0.969, mem_usage:cuda:0 1.6GB\n");
    assert_true(f->d.hang);
    assert_int_not_equal(f->d.phase, CP_PHASE_INIT);
}

static void store_wait_before_steps_is_a_setup_stall(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, store_wait_text, "");
    assert_true(f->d.hang);
    assert_int_equal(f->d.phase, CP_PHASE_INIT);
}

/* Ranks waiting for rank 0's NCCL unique id in the store
 * (hiyouga/LlamaFactory#81's older spelling, "retreiving"): a
 * communicator being created, set-up while no step was logged; once the
 * ranks trained, a new communicator says nothing of the phase. */
static const char unique_id_wait_text[] =
    "%s"
    "[rank1]: RuntimeError: [1] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d "
    "key-value store by key '0', but store->get('0') got error: Socket Timeout\n";

static void unique_id_wait_before_steps_is_set_up(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, unique_id_wait_text, "");
    assert_true(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_TIMEOUT);
    assert_int_equal(f->d.phase, CP_PHASE_INIT);
    assert_int_equal(f->d.first_rank, 0);
}

static void unique_id_wait_after_steps_is_not_set_up(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, unique_id_wait_text,
                       "[rank1]:[2024-11-02 18:41:44,845] [INFO] [train.py:287:train] step 40/2000 | loss 1.2031\n"
                       "[rank1]:[2024-11-02 18:42:04,112] [INFO] [train.py:287:train] step 50/2000 | loss 1.1875\n");
    assert_true(f->d.hang);
    assert_int_not_equal(f->d.phase, CP_PHASE_INIT);
    free_fixture(state);
    new_fixture(state);
    f = *state;
    /* the HF Trainer's records give no step, and still say the ranks trained */
    diagnose_formatted(f, unique_id_wait_text,
                       "[rank1]: {'loss': 0.2411, 'grad_norm': 0.306, 'learning_rate': 9.8e-06, 'epoch': 0.4}\n"
                       "[rank1]: {'loss': 0.2311, 'grad_norm': 0.301, 'learning_rate': 9.8e-06, 'epoch': 0.5}\n");
    assert_true(f->d.hang);
    assert_int_not_equal(f->d.phase, CP_PHASE_INIT);
}

/* Rank 2 deadlocks between forward and backward; faulthandler's timer
 * dumps its stack (and rank 0's, waiting in backward), and ranks 0, 1, 3
 * time out in backward's all-reduce (real-68's shape). The stuck rank's
 * own stack, which names no phase, says more than where the others
 * waited: they wait where rank 2 never got to. Without its stack, the
 * waiters' phase is all there is. */
static const char deadlock_dump_text[] =
    "[default0]:2026-12-02 14:08:48,575 INFO [rank0] step 2 loss 1.4577\n"
    "[default1]:2026-12-02 14:08:48,576 INFO [rank1] step 2 loss 1.3528\n"
    "[default2]:2026-12-02 14:08:48,574 INFO [rank2] step 2 loss 1.4390\n"
    "[default3]:2026-12-02 14:08:48,573 INFO [rank3] step 2 loss 1.4672\n"
    "[default0]:Timeout (0:00:20)!\n"
    "[default0]:Thread 0x00007f6166e9b040 (most recent call first):\n"
    "[default0]:  File \"/usr/lib/python3/dist-packages/torch/autograd/__init__.py\", line 197 in backward\n"
    "[default0]:  File \"/usr/lib/python3/dist-packages/torch/_tensor.py\", line 488 in backward\n"
    "[default0]:  File \"/home/ml/train.py\", line 51 in main\n"
    "%s"
    "[default1]:Traceback (most recent call last):\n"
    "[default1]:  File \"/home/ml/train.py\", line 51, in main\n"
    "[default1]:    loss.backward()\n"
    "[default1]:  File \"/usr/lib/python3/dist-packages/torch/autograd/__init__.py\", line 197, in backward\n"
    "[default1]:RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 30000ms for recv operation to complete\n"
    "[default0]:Traceback (most recent call last):\n"
    "[default0]:  File \"/home/ml/train.py\", line 51, in main\n"
    "[default0]:    loss.backward()\n"
    "[default0]:  File \"/usr/lib/python3/dist-packages/torch/autograd/__init__.py\", line 197, in backward\n"
    "[default0]:RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 30000ms for recv operation to complete\n"
    "[default3]:Traceback (most recent call last):\n"
    "[default3]:  File \"/home/ml/train.py\", line 51, in main\n"
    "[default3]:    loss.backward()\n"
    "[default3]:  File \"/usr/lib/python3/dist-packages/torch/autograd/__init__.py\", line 197, in backward\n"
    "[default3]:RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 30000ms for send operation to complete\n";

static const char deadlocked_rank_stack[] =
    "[default2]:Timeout (0:00:20)!\n"
    "[default2]:Thread 0x00007f6e648a6040 (most recent call first):\n"
    "[default2]:  File \"/home/ml/train.py\", line 28 in record\n"
    "[default2]:  File \"/home/ml/train.py\", line 30 in record\n"
    "[default2]:  File \"/home/ml/train.py\", line 48 in main\n";

static void stuck_ranks_own_stack_outranks_where_the_others_waited(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, deadlock_dump_text, deadlocked_rank_stack);
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_int_equal(d->first_rank, 2);
    assert_int_equal(d->phase, CP_PHASE_UNKNOWN);
    assert_int_equal(d->owner, CP_OWNER_USER_CODE);
    assert_true(note_has(d, "A stack dump shows where the stuck rank was", NULL));
}

static void without_its_stack_the_waiters_phase_stands(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, deadlock_dump_text, "");
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_int_equal(d->first_rank, 2);
    assert_int_equal(d->phase, CP_PHASE_BACKWARD);
}

/* DeepSpeed's launcher reports a SIGKILLed worker with the command line
 * its launch loop built last, whatever worker died: --local_rank=7 there
 * names no rank; --local_rank=0 does (the node ran one process). */
static const char ds_launcher_kill_text[] =
    "[2024-02-06 06:23:39,498] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 1001\n"
    "%s"
    "[2024-02-06 06:23:39,510] [ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', "
    "'train.py', '--local_rank=%d', '--deepspeed', 'ds.json'] exits with return code = -9\n";

static void ds_launcher_line_names_no_rank(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, ds_launcher_kill_text,
                       "[2024-02-06 06:23:39,499] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 1008\n", 7);
    assert_int_equal(f->d.kind, CP_KIND_HOST_OOM);
    assert_int_equal(f->d.first_rank, -1);
}

static void ds_launcher_line_names_the_only_rank(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, ds_launcher_kill_text, "", 0);
    assert_int_equal(f->d.kind, CP_KIND_HOST_OOM);
    assert_int_equal(f->d.first_rank, 0);
}

/* Every rank fails gloo's address-size check as the process group is
 * created; rank 3, told another world size, received other sizes than
 * everyone else (real-62's shape). With two ranks no value is odd. */
static const char odd_value_text[] =
    "[default0]:RuntimeError: [enforce fail at ./gloo/transport/tcp/address.cc:45] sizeof(impl_) == bytes.size(). 136 vs 181\n"
    "[default1]:RuntimeError: [enforce fail at ./gloo/transport/tcp/address.cc:45] sizeof(impl_) == bytes.size(). 136 vs 181\n"
    "[default3]:RuntimeError: [enforce fail at ./gloo/transport/tcp/address.cc:45] sizeof(impl_) == bytes.size(). 136 vs 102\n"
    "[default2]:RuntimeError: [enforce fail at ./gloo/transport/tcp/address.cc:45] sizeof(impl_) == bytes.size(). 136 vs 181\n";

static void rank_whose_value_differs_is_named(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", odd_value_text);
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->kind, CP_KIND_CONFIG_INVALID);
    assert_int_equal(d->first_rank, 3);
    assert_true(note_has(d, "rank 3's gives 102", "every other rank's gives 181"));
}

static void two_ranks_have_no_odd_value(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[default0]:RuntimeError: [enforce fail at ./gloo/transport/tcp/address.cc:45] sizeof(impl_) == "
                 "bytes.size(). 136 vs 181\n"
                 "[default1]:RuntimeError: [enforce fail at ./gloo/transport/tcp/address.cc:45] sizeof(impl_) == "
                 "bytes.size(). 136 vs 102\n");
    assert_false(note_has(&f->d, "setting is off", NULL));
}

/* Every rank raises the same error and nothing orders them: the rank
 * named is only the first in the input, and the report says so. */
static const char same_error_text[] =
    "[default2]:Traceback (most recent call last):\n"
    "[default2]:  File \"/home/ml/train.py\", line 9, in main\n"
    "[default2]:RuntimeError: trying to initialize the default process group twice!\n"
    "[default1]:Traceback (most recent call last):\n"
    "[default1]:  File \"/home/ml/train.py\", line 9, in main\n"
    "[default1]:RuntimeError: trying to initialize the default process group twice!\n"
    "[default0]:Traceback (most recent call last):\n"
    "[default0]:  File \"/home/ml/train.py\", line 9, in main\n"
    "[default0]:RuntimeError: trying to initialize the default process group %s!\n";

static void every_rank_alike_is_said(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, same_error_text, "twice");
    assert_int_equal(f->d.first_rank, 2);
    assert_true(note_has(&f->d, "All 3 ranks that reported an error raised this same one", "only the first"));
}

static void one_rank_unlike_the_others_is_not_alike(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, same_error_text, "a third time");
    assert_false(note_has(&f->d, "raised this same one", NULL));
}

/* Two ranks whose losses blew up: no single one is named by its loss. */
static void two_blown_up_losses_name_no_rank(void **state)
{
    fixture *f = *state;
    diagnose_formatted(f, loss_outlier_text, "nan");
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->kind, CP_KIND_LOSS_SCALE_FLOOR);
    assert_false(note_has(d, "logged a loss of", NULL));
}

/* NCCL's trace of a failed call on two processes: the first to print one
 * shows no set-up code, the other's goes up through bootstrap.cc. */
static const char nccl_trace_peers_text[] =
    "node3:2351:2678 [2] NCCL INFO group.cc:65 -> 2 [Async thread]\n"
    "node3:2354:2687 [5] NCCL INFO misc/socket.cc:567 -> 2\n"
    "node3:2354:2687 [5] NCCL INFO bootstrap.cc:270 -> 2\n"
    "node3:2351:2351 [2] NCCL INFO group.cc:406 -> 2\n";

static void cascade_takes_the_phase_the_ranks_agree_on(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "nccl.log", nccl_trace_peers_text);
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->kind, CP_KIND_NCCL_COMM_ERROR);
    assert_int_equal(d->phase, CP_PHASE_INIT);
    assert_true(note_has(d, "phase lines all say init", NULL));
}

/* DeepSpeed's launcher with one local process, and an error with no rank:
 * a world of one has only rank 0. */
static const char world_of_one_text[] =
    "[2023-04-21 22:17:06,284] [INFO] [launch.py:161:main] global_rank_mapping=defaultdict(<class 'list'>, {'localhost': [0]})\n"
    "[2023-04-21 22:17:06,284] [INFO] [launch.py:162:main] dist_world_size=1\n"
    "Traceback (most recent call last):\n"
    "  File \"/work/train.py\", line 12, in <module>\n"
    "    main()\n"
    "ValueError: no training data found in /data/shards\n";

static void world_of_one_is_rank_zero(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", world_of_one_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_int_equal(d->first_rank, 0);
    assert_true(note_has(d, "world of one process", NULL));
}

static const char desync_text[] =
    "[rank0]:[E1102 19:32:35.258672475 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=183, OpType=ALLREDUCE, NumelIn=1366, NumelOut=1366, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n"
    "[rank1]:[E1102 19:32:35.261000000 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=183, OpType=ALLREDUCE, NumelIn=1366, NumelOut=1366, Timeout(ms)=600000) ran for 600014 milliseconds before timing out.\n"
    "[rank0]:[E1102 19:32:36.100000000 ProcessGroupNCCL.cpp:1050] [Rank 0] Timeout at collective: ALLREDUCE, #183\n"
    "[rank0]:[E1102 19:32:36.100100000 ProcessGroupNCCL.cpp:1050]          - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:\n"
    "[rank0]:             [7] finished collective #182, but didn't join collective #183 (count from 1)\n"
    "[rank5]:[E1102 19:32:35.270000000 ProcessGroupNCCL.cpp:632] [Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=183, OpType=ALLREDUCE, NumelIn=1366, NumelOut=1366, Timeout(ms)=600000) ran for 600020 milliseconds before timing out.\n";

static void desync_report_names_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", desync_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_true(d->hang);
    assert_int_equal(d->first_rank, 7);
    assert_int_equal(d->kind, CP_KIND_NCCL_TIMEOUT);
    assert_true(note_has(d, "The log names rank 7 as the rank the others waited for", "didn't join collective #183"));
}

/* gloo's monitored barrier (CosyVoice#180, as pasted): rank 0 finds
 * rank 2 late; ranks 1 and 3, whose barrier rank 0 then failed, point at
 * rank 0's logs. Two pointers do not outvote the finding they point to. */
static void barrier_finding_outranks_pointers(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[E ProcessGroupGloo.cpp:138] Rank 3 successfully reached monitoredBarrier, but received errors while "
                 "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n"
                 "[E ProcessGroupGloo.cpp:138] [Rank 0]: Rank 2 failed to pass monitoredBarrier in 30000 ms\n"
                 "[E ProcessGroupGloo.cpp:138] Rank 1 successfully reached monitoredBarrier, but received errors while "
                 "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n");
    assert_int_equal(f->d.first_rank, 2);
    assert_true(f->d.hang);
}

/* Without rank 0's own line, the pointers name rank 0. */
static void barrier_pointers_alone_name_rank_zero(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[E ProcessGroupGloo.cpp:138] Rank 3 successfully reached monitoredBarrier, but received errors while "
                 "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n");
    assert_int_equal(f->d.first_rank, 0);
}

/* The rank a desync report names gets a per-rank row even when no line of
 * that rank is in the input. Input: desync_text (ranks 0, 1 and 5 time
 * out at SeqNum 183; rank 0's report says "[7] finished collective #182,
 * but didn't join collective #183"). */
static void desync_named_rank_has_a_row(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", desync_text);
    assert_int_equal(f->d.first_rank, 7);
    assert_true(f->d.n_ranks >= 8);
    assert_int_equal(row_of(&f->d, 7)->state, CP_RS_ROOT);
}

/* A rank whose watchdog timeout is followed by its own desync report is a
 * victim like the others (the report names rank 7), and the first failure
 * time is its timeout, the earliest (19:32:35.258). */
static void desync_reporter_is_cascade(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", desync_text);
    assert_int_equal(row_of(&f->d, 1)->state, CP_RS_CASCADE);
    assert_int_equal(row_of(&f->d, 0)->state, CP_RS_CASCADE);
    assert_non_null(strstr(f->d.first_time, "11-02 19:32:35.258"));
}

/* gen-05: rank 0 sleeps; ranks 1-3 give up on their gloo sends/receives. */
static const char silent_text[] =
    "2026-11-29 16:20:15,900 [rank0] INFO train: process group ready: backend=gloo world_size=4\n"
    "2026-11-29 16:20:15,901 [rank1] INFO train: process group ready: backend=gloo world_size=4\n"
    "2026-11-29 16:20:16,945 [rank3] INFO train: step 2/8 loss=1.4631\n"
    "2026-11-29 16:20:16,945 [rank1] INFO train: step 2/8 loss=1.3557\n"
    "2026-11-29 16:20:16,946 [rank2] INFO train: step 2/8 loss=1.4378\n"
    "2026-11-29 16:20:16,947 [rank0] INFO train: step 2/8 loss=1.4593\n"
    "2026-11-29 16:20:36,963 [rank1] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/proj/s04_straggler.py\", line 63, in main\n"
    "    dist.all_reduce(p.grad)\n"
    "RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 20000ms for send operation to complete\n"
    "2026-11-29 16:20:36,973 [rank3] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/proj/s04_straggler.py\", line 63, in main\n"
    "    dist.all_reduce(p.grad)\n"
    "RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 20000ms for recv operation to complete\n"
    "2026-11-29 16:20:36,978 [rank2] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/proj/s04_straggler.py\", line 63, in main\n"
    "    dist.all_reduce(p.grad)\n"
    "RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 20000ms for recv operation to complete\n";

static void silent_rank_is_the_one_waited_for(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", silent_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_true(d->hang);
    assert_int_equal(d->first_rank, 0);
    assert_int_equal(d->kind, CP_KIND_NCCL_TIMEOUT);
    assert_int_equal(d->world_size, 4);
    assert_true(note_has(d, "Rank 0", "no error"));
    assert_int_equal(row_of(d, 0)->state, CP_RS_ROOT);
    assert_int_equal(row_of(d, 2)->state, CP_RS_CASCADE);
}

/* ---- checkpoints ----------------------------------------------------------- */

/* A save line without a rank, then the watchdog fires 20 minutes later. */
static const char save_stall_text[] =
    "2026-02-18T10:28:20.101Z [rank7]:[2026-02-18 10:28:20,100] [INFO] [train.py:287:train] step 369000/400000 | loss 0.2033\n"
    "2026-02-18T10:28:25.497Z 2026-02-18 10:28:25,496 - root - INFO - Saving latest checkpoint model trained for 3 complete epochs and 36738 additional batches, or 369000 total batches, with best_validation_loss 0.20325350761413574\n"
    "2026-02-18T10:48:25.681Z [rank7]:[E218 10:48:25.033625188 ProcessGroupNCCL.cpp:632] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1512677, OpType=ALLREDUCE, NumelIn=306176, NumelOut=306176, Timeout(ms)=1200000) ran for 1200027 milliseconds before timing out.\n";

static void stall_after_save_is_checkpoint_hang(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", save_stall_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_true(d->hang);
    assert_int_equal(d->kind, CP_KIND_CHECKPOINT_HANG);
    assert_int_equal(d->phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_string_equal(d->rule_id, "engine.checkpoint_stall");
}

/* Every rank logged the end of its save (with times); then ranks 0-2 wait
 * in the next collective for rank 3, which is behind in its own work. */
static const char save_done_text[] =
    "[default0]:2026-11-29 16:20:45,261 | INFO | rank 0 | saving checkpoint to /home/ml/runs/ckpt/rank0/step4.pt\n"
    "[default1]:2026-11-29 16:20:45,262 | INFO | rank 1 | saving checkpoint to /home/ml/runs/ckpt/rank1/step4.pt\n"
    "[default2]:2026-11-29 16:20:45,262 | INFO | rank 2 | saving checkpoint to /home/ml/runs/ckpt/rank2/step4.pt\n"
    "[default3]:2026-11-29 16:20:45,263 | INFO | rank 3 | saving checkpoint to /home/ml/runs/ckpt/rank3/step4.pt\n"
    "[default0]:2026-11-29 16:20:45,266 | INFO | rank 0 | checkpoint saved (428177 bytes)\n"
    "[default1]:2026-11-29 16:20:45,267 | INFO | rank 1 | checkpoint saved (428177 bytes)\n"
    "[default2]:2026-11-29 16:20:45,266 | INFO | rank 2 | checkpoint saved (428177 bytes)\n"
    "[default3]:2026-11-29 16:20:45,268 | INFO | rank 3 | checkpoint saved (428177 bytes)\n"
    "[default0]:[rank0]:[E1129 16:30:45.300148516 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 0] Exception (either an error or timeout) detected by watchdog at work: 41, last enqueued NCCL work: 41, last completed NCCL work: 40.\n"
    "[default1]:[rank1]:[E1129 16:30:45.301148516 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 41, last enqueued NCCL work: 41, last completed NCCL work: 40.\n"
    "[default2]:[rank2]:[E1129 16:30:45.302148516 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 2] Exception (either an error or timeout) detected by watchdog at work: 41, last enqueued NCCL work: 41, last completed NCCL work: 40.\n"
    "[default3]:[rank3]:[E1129 16:30:47.402148516 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 3] Timeout at NCCL work: 40, last enqueued NCCL work: 40, last completed NCCL work: 39.\n";

static void stall_after_finished_save_is_not_checkpoint_hang(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", save_done_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_true(d->hang);
    assert_int_equal(d->first_rank, 3);
    assert_int_equal(d->kind, CP_KIND_NCCL_TIMEOUT);
    assert_int_not_equal(d->kind, CP_KIND_CHECKPOINT_HANG);
    assert_int_not_equal(d->phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_true(note_has(d, "40", "41"));
}

/* NCCL's init lines on node002 show ranks 8, 9 and 11 on GPUs 0, 1 and 3;
 * the process on GPU 2, whose own init line is not in the input, logs an
 * InfiniBand completion error: rank 10. */
static const char device_rank_text[] =
    "node002:24142:24263 [1] NCCL INFO comm 0x5562191160f0 rank 9 nranks 16 cudaDev 1 busId 13000 - Init COMPLETE\n"
    "node002:24148:24269 [3] NCCL INFO comm 0x55cede6d3870 rank 11 nranks 16 cudaDev 3 busId 8e000 - Init COMPLETE\n"
    "node002:24139:24253 [0] NCCL INFO comm 0x5634028d2ec0 rank 8 nranks 16 cudaDev 0 busId 5000 - Init COMPLETE\n"
    "node002:24141:24296 [2] ib_plugin.c:978 NCCL WARN NET/IB : Got completion from peer 10.226.98.98<48598> with "
    "error 12, opcode 0, len 0, vendor err 129\n";

static void gpu_of_a_host_gives_the_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "node002.log", device_rank_text);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_COMM_ERROR);
    assert_int_equal(f->d.first_rank, 10);
    assert_true(note_has(&f->d, "names GPU 2 of its host", "rank 10"));
}

/* Every process sees its one GPU as device 0 (CUDA_VISIBLE_DEVICES set per
 * rank): the GPU says nothing of the rank. */
static void gpu_zero_everywhere_gives_no_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "node002.log",
                 "node002:24142:24263 [0] NCCL INFO comm 0x5562191160f0 rank 9 nranks 16 cudaDev 0 busId 13000 - Init COMPLETE\n"
                 "node002:24139:24253 [0] NCCL INFO comm 0x5634028d2ec0 rank 8 nranks 16 cudaDev 0 busId 5000 - Init COMPLETE\n"
                 "node002:24141:24296 [0] ib_plugin.c:978 NCCL WARN NET/IB : Got completion from peer 10.226.98.98<48598> "
                 "with error 12, opcode 0, len 0, vendor err 129\n");
    assert_int_equal(f->d.kind, CP_KIND_NCCL_COMM_ERROR);
    assert_int_equal(f->d.first_rank, -1);
}

/* Three InfiniBand completion errors from node002 and none from any
 * other host: its link is at fault. */
static void fabric_errors_on_one_host_blame_its_link(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "cluster.log",
                 "node002:24141:24296 [2] ib_plugin.c:978 NCCL WARN NET/IB : Got completion from peer 10.226.98.98<48598> "
                 "with error 12, opcode 0, len 0, vendor err 129\n"
                 "node002:24142:24297 [3] ib_plugin.c:978 NCCL WARN NET/IB : Got completion from peer 10.226.98.97<48598> "
                 "with error 12, opcode 0, len 0, vendor err 129\n"
                 "node002:24143:24298 [4] ib_plugin.c:978 NCCL WARN NET/IB : Got completion from peer 10.226.98.96<48598> "
                 "with error 12, opcode 0, len 0, vendor err 129\n"
                 "node001:11111:11222 [0] NCCL INFO comm 0x5562191160f0 rank 0 nranks 16 cudaDev 0 busId 13000 - Init COMPLETE\n");
    assert_int_equal(f->d.kind, CP_KIND_NCCL_COMM_ERROR);
    assert_int_equal(f->d.owner, CP_OWNER_INFRASTRUCTURE);
    assert_true(note_has(&f->d, "3 fabric errors came from node002", "network link"));
}

/* NCCL's CUDA failures setting up its shared-memory transport, on one host
 * (NVIDIA/nccl#957, shortened): communication errors, but nothing about
 * the host's network link. */
static void transport_cuda_failures_are_not_fabric_errors(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "mpirun.log",
                 "Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 NCCL WARN Cuda failure 'invalid argument'\n"
                 "Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881358 [0] proxy.cc:1519 NCCL WARN [Proxy Service 0] Failed to execute operation Connect from rank 0, retcode 3\n"
                 "Fri Aug 11 12:31:45 2023[1,3]<stdout>:tomte401:1850304:1881110 [3] transport.cc:154 NCCL WARN Cuda failure 'invalid argument'\n"
                 "Fri Aug 11 12:31:45 2023[1,3]<stdout>:tomte401:1850304:1881127 [3] proxy.cc:1519 NCCL WARN [Proxy Service 3] Failed to execute operation Connect from rank 3, retcode 3\n");
    assert_int_equal(f->d.kind, CP_KIND_NCCL_COMM_ERROR);
    /* Open MPI's tag after its --timestamp-output time gives the rank */
    assert_int_equal(f->d.first_rank, 0);
    assert_int_equal(f->d.phase, CP_PHASE_INIT);
    assert_int_not_equal(f->d.owner, CP_OWNER_INFRASTRUCTURE);
    assert_false(note_has(&f->d, "fabric errors", NULL));
}

/* A bus error in NCCL's thread (UCX prints its native stack), then
 * faulthandler's dump of the same process's Python stack, in Megatron's
 * set-up (Megatron-DeepSpeed#341, shortened). No rank anywhere: the
 * phase comes from the process's own other stack. */
static void rankless_error_takes_phase_from_its_process_stack(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[610867610e4b:2498 :0:2599] Caught signal 7 (Bus error: nonexistent physical address)\n"
                 "\n"
                 " 0 0x0000000000014420 __funlockfile()  ???:0\n"
                 " 2 0x000000000006929c ncclGroupEnd()  ???:0\n"
                 " 4 0x0000000000050853 ncclGetUniqueId()  ???:0\n"
                 "\n"
                 "Fatal Python error: Bus error\n"
                 "\n"
                 "Thread 0x00007f8bf451b740 (most recent call first):\n"
                 "  File \"/opt/conda/lib/python3.8/site-packages/torch/distributed/distributed_c10d.py\", line 2792 in barrier\n"
                 "  File \"/workspace/Megatron-DeepSpeed/megatron/initialize.py\", line 164 in initialize_megatron\n"
                 "  File \"/workspace/Megatron-DeepSpeed/megatron/training.py\", line 99 in pretrain\n");
    assert_int_equal(f->d.kind, CP_KIND_NCCL_COMM_ERROR);
    assert_string_equal(f->d.rule_id, "nccl.sigbus_in_nccl");
    assert_int_equal(f->d.phase, CP_PHASE_INIT);
}

/* A KeyError out of torch.distributed.checkpoint's loader (its pre-2.0
 * _shard path; pytorch#85949): a checkpoint that does not hold the
 * model's keys, not a generic exception. */
static void dcp_loader_exception_is_checkpoint_io(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "Traceback (most recent call last):\n"
                 "  File \"/opt/conda/envs/pytorch/lib/python3.9/site-packages/torch/distributed/_shard/checkpoint/"
                 "state_dict_loader.py\", line 89, in local_step\n"
                 "    local_plan = planner.create_local_plan()\n"
                 "  File \"/opt/conda/envs/pytorch/lib/python3.9/site-packages/torch/distributed/_shard/checkpoint/"
                 "default_planner.py\", line 131, in create_default_local_load_plan\n"
                 "    md = metadata.state_dict_metadata[fqn]\n"
                 "KeyError: 'pos_embedding'\n");
    assert_int_equal(f->d.kind, CP_KIND_CHECKPOINT_IO);
    assert_int_equal(f->d.phase, CP_PHASE_CHECKPOINT_LOAD);
    assert_string_equal(f->d.rule_id, "pytorch.exception_in_torch_load");
}

/* axolotl-ai-cloud/axolotl#1813, shortened: a terminal 100 columns wide
 * wrapped each frame, so its second piece has no rank prefix, and may
 * begin inside the path or right after it; the paste begins below the
 * traceback's header. The pieces stay in rank 1's traceback, and its
 * frames still say backward. */
static void wrapped_frames_stay_in_the_ranks_traceback(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank1]:   File \"/home/owen/miniconda3/envs/axolotl/lib/python3.11/site-packages/torch/_tensor.py\",\n"
                 " line 525, in backward\n"
                 "[rank1]:     torch.autograd.backward(\n"
                 "[rank1]:   File \"/home/owen/miniconda3/envs/axolotl/lib/python3.11/site-packages/torch/autograd/__i\n"
                 "nit__.py\", line 267, in backward\n"
                 "[rank1]:     _engine_run_backward(\n"
                 "[rank1]:   File \"/home/owen/miniconda3/envs/axolotl/lib/python3.11/site-packages/torch/autograd/gra\n"
                 "ph.py\", line 744, in _engine_run_backward\n"
                 "[rank1]:     return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run th\n"
                 "e backward pass\n"
                 "[rank1]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
                 "^^^^^^^^^^^^^^^\n"
                 "[rank1]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n");
    assert_int_equal(f->d.kind, CP_KIND_CUDA_OOM);
    assert_int_equal(f->d.first_rank, 1);
    assert_int_equal(f->d.phase, CP_PHASE_BACKWARD);
}

/* A kernel's failed assertion names the kernel: a loss's forward. */
static void kernel_assertion_names_its_phase(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[rank0]:/pytorch/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: "
                 "block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.\n"
                 "[rank0]:RuntimeError: CUDA error: device-side assert triggered\n");
    assert_int_equal(f->d.kind, CP_KIND_CUDA_ERROR);
    assert_int_equal(f->d.first_rank, 0);
    assert_int_equal(f->d.phase, CP_PHASE_FORWARD);
}

/* A framework run from its source checkout (torchtitan's train.py) raised
 * in torch's pipelining code: library frames all the way in, the
 * framework's to fix (rules/05-libraries.rules). The same error raised in
 * the user's own script is theirs. */
static const char checkout_traceback[] =
    "[rank3]: Traceback (most recent call last):\n"
    "[rank3]:   File \"/home/danvm/torchtitan/torchtitan/train.py\", line 420, in train_step\n"
    "[rank3]:     self.pp_schedule.step(inputs)\n"
    "[rank3]:   File \"/miniconda3/envs/tt/lib/python3.10/site-packages/torch/distributed/pipelining/schedules.py\", "
    "line 1194, in step\n"
    "[rank3]:     self._step_microbatches(args_split, kwargs_split, targets_split, losses)\n"
    "[rank3]:   File \"/miniconda3/envs/tt/lib/python3.10/site-packages/torch/distributed/pipelining/schedules.py\", "
    "line 1251, in _step_microbatches\n"
    "[rank3]:     stage = stage_index_to_stage[stage_index]\n"
    "[rank3]: KeyError: 6\n";

static void framework_checkout_frames_are_library(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", checkout_traceback);
    assert_int_equal(f->d.kind, CP_KIND_PYTHON_EXCEPTION);
    assert_int_equal(f->d.owner, CP_OWNER_FRAMEWORK);
}

static void own_script_frames_are_the_users(void **state)
{
    fixture *f = *state;
    char text[sizeof checkout_traceback + 16];
    snprintf(text, sizeof text, "%s", checkout_traceback);
    char *at = strstr(text, "/home/danvm/torchtitan/torchtitan/train.py");
    assert_non_null(at);
    memcpy(at, "/home/danvm/my_project_/pipelines/train.py", strlen("/home/danvm/my_project_/pipelines/train.py"));
    diagnose_one(f, "train.log", text);
    assert_int_equal(f->d.owner, CP_OWNER_USER_CODE);
}

/* A paste that begins inside a frame's path (DeepSpeed#4434): what is
 * left of it still names DeepSpeed's engine, so the exception is the
 * framework's; a stub that names no library is nobody's (a path cut down
 * to "untime/fp16/..." is no proof of the user's own code). */
static void cut_frame_naming_a_library_is_the_frameworks(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 ".env/lib/python3.11/site-packages/deepspeed/runtime/engine.py\", line 3288, in "
                 "_get_zero_param_shapes\n"
                 "    ) == 2 else self.optimizer.fp16_groups\n"
                 "AttributeError: 'BF16_Optimizer' object has no attribute 'fp16_groups'\n");
    /* raised in the save (_get_zero_param_shapes), but a missing
     * attribute is the program's error, not the checkpoint's
     * (py.attribute_missing) */
    assert_int_equal(f->d.kind, CP_KIND_PYTHON_EXCEPTION);
    assert_int_equal(f->d.phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_int_equal(f->d.owner, CP_OWNER_FRAMEWORK);
}

static void cut_frame_naming_no_library_is_nobodys(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "untime/fp16/scaler.py\", line 175, in update_scale\n"
                 "    raise Exception(\"scale at minimum\")\n"
                 "AttributeError: 'Scaler' object has no attribute 'cur_scale'\n");
    assert_int_equal(f->d.kind, CP_KIND_PYTHON_EXCEPTION);
    assert_int_equal(f->d.owner, CP_OWNER_UNKNOWN);
}

/* An assertion in DeepSpeed's engine set-up is its configuration refused,
 * whatever it says (here nothing); the same AssertionError raised in the
 * user's training step is not. */
static void deepspeed_engine_assert_is_config(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "Traceback (most recent call last):\n"
                 "  File \"/envs/trl/lib/python3.10/site-packages/deepspeed/runtime/engine.py\", line 314, in __init__\n"
                 "    self.optimizer = self._configure_zero_optimizer(optimizer=None)\n"
                 "  File \"/envs/trl/lib/python3.10/site-packages/deepspeed/runtime/engine.py\", line 1404, in "
                 "_configure_zero_optimizer\n"
                 "    assert not isinstance(optimizer, DummyOptim)\n"
                 "AssertionError\n");
    assert_int_equal(f->d.kind, CP_KIND_CONFIG_INVALID);
    assert_string_equal(f->d.rule_id, "deepspeed.engine_config_assert");
    assert_int_equal(f->d.phase, CP_PHASE_INIT);
}

/* ZeRO without an optimizer is named by its message, frames or not (a
 * paste cut before them). */
static void zero_without_optimizer_is_config(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", "AssertionError: zero stage 2 requires an optimizer\n");
    assert_int_equal(f->d.kind, CP_KIND_CONFIG_INVALID);
    assert_string_equal(f->d.rule_id, "deepspeed.zero_needs_optimizer");
}

static void assert_in_training_step_is_no_config(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "Traceback (most recent call last):\n"
                 "  File \"/home/me/train.py\", line 88, in training_step\n"
                 "    assert loss.isfinite()\n"
                 "AssertionError\n");
    assert_int_not_equal(f->d.kind, CP_KIND_CONFIG_INVALID);
}

/* An NCCL transport failure before any rank logged a training step is
 * NCCL setting up its connections; after steps, nothing says the phase. */
static const char nccl_connect_refused[] =
    "id-d3:715:790 [1] include/socket.h:382 NCCL WARN Connect to 172.18.0.1<49273> failed : Connection refused\n";

static void nccl_transport_error_before_any_step_is_init(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", nccl_connect_refused);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_COMM_ERROR);
    assert_int_equal(f->d.phase, CP_PHASE_INIT);
    assert_true(note_has(&f->d, "No rank logged a training step", NULL));
}

/* The same when the only NCCL lines are consequences (the trace of an
 * error code up NCCL's source, tagged by mpirun, as in horovod#3752): no
 * training step yet, so it is the set-up. */
static void nccl_trace_before_any_step_is_init(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "[1,1]<stdout>:slave1:126624:126758 [1] NCCL INFO enqueue.cc:1450 -> 4\n"
                 "[1,1]<stdout>:slave1:126624:126758 [1] NCCL INFO enqueue.cc:1462 -> 4\n");
    assert_int_equal(f->d.kind, CP_KIND_NCCL_COMM_ERROR);
    assert_int_equal(f->d.phase, CP_PHASE_INIT);
    assert_true(note_has(&f->d, "No rank logged a training step", NULL));
}

static void nccl_transport_error_after_steps_has_no_phase(void **state)
{
    fixture *f = *state;
    char text[1024];
    snprintf(text, sizeof text, "%s%s",
             "[2024-12-21 02:33:47,436] [INFO] [train.py:287:train] step 9/40000 | loss 2.2017\n",
             nccl_connect_refused);
    diagnose_one(f, "train.log", text);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_COMM_ERROR);
    assert_int_equal(f->d.phase, CP_PHASE_UNKNOWN);
}

/* ---- hardware and the host ------------------------------------------------- */

static void hardware_streams(fixture *f, const char *xid_time)
{
    static char dmesg[512];
    snprintf(dmesg, sizeof dmesg,
             "[Sat Nov  2 18:40:02 2024] NVRM: GPU at PCI:0000:ba:00: GPU-5d31525a-bcfd-72ee-bc0c-7ad2471c60fc\n"
             "[Sat Nov  2 %s 2024] NVRM: Xid (PCI:0000:ba:00): 79, pid=5117, name=python3, GPU has fallen off the bus.\n",
             xid_time);
    static const char train[] =
        "[default6]:node002:5117:5356 [6] NCCL INFO ncclCommInitRank comm 0x55de5ef0643e rank 14 nranks 16 cudaDev 6 nvmlDev 6 busId ba000 commId 0xfbf0dc991af1f5e0 - Init START\n"
        "[default5]:node002:5116:5351 [5] NCCL INFO ncclCommInitRank comm 0x55de5ef06111 rank 13 nranks 16 cudaDev 5 nvmlDev 5 busId ab000 commId 0xfbf0dc991af1f5e0 - Init START\n"
        "[default6]:[2024-11-02 18:59:40,101] [INFO] [train.py:287:train] step 100/2000 | loss 2.2612\n"
        "[default6]:[rank14]:[E1102 19:01:07.406255799 ProcessGroupNCCL.cpp:1895] [PG ID 0 PG GUID 0(default_pg) Rank 14] Process group watchdog thread terminated with exception: CUDA error: unspecified launch failure\n"
        "[default6]:CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
        "[default5]:[rank13]:[E1102 19:11:07.500000000 ProcessGroupNCCL.cpp:632] [Rank 13] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6075, OpType=ALLREDUCE, NumelIn=1366, NumelOut=1366, Timeout(ms)=600000) ran for 600033 milliseconds before timing out.\n";
    const stream_in s[] = {{"node002/dmesg.log", dmesg}, {"node002/train.log", train}};
    diagnose(f, s, 2);
}

static void check_hardware(const cp_diagnosis *d)
{
    assert_true(d->failed);
    assert_false(d->hang);
    assert_int_equal(d->kind, CP_KIND_GPU_HARDWARE);
    assert_int_equal(d->owner, CP_OWNER_HARDWARE);
    assert_int_equal(d->first_rank, 14);
    assert_string_equal(d->rule_id, "xid.79_off_bus");
}

/* The GPU fell off the bus and its process raised nothing: it blocked in
 * CUDA, and its peer's watchdog timed out waiting for it. A stall, caused
 * by the hardware. */
static void xid_with_peer_timeouts_and_no_error_is_a_hang(void **state)
{
    fixture *f = *state;
    static const char dmesg[] =
        "[Sat Nov  2 18:40:02 2024] NVRM: GPU at PCI:0000:ba:00: GPU-5d31525a-bcfd-72ee-bc0c-7ad2471c60fc\n"
        "[Sat Nov  2 19:01:06 2024] NVRM: Xid (PCI:0000:ba:00): 79, pid=5117, name=python3, GPU has fallen off the bus.\n";
    static const char train[] =
        "[default6]:node002:5117:5356 [6] NCCL INFO ncclCommInitRank comm 0x55de5ef0643e rank 14 nranks 16 cudaDev 6 nvmlDev 6 busId ba000 commId 0xfbf0dc991af1f5e0 - Init START\n"
        "[default5]:node002:5116:5351 [5] NCCL INFO ncclCommInitRank comm 0x55de5ef06111 rank 13 nranks 16 cudaDev 5 nvmlDev 5 busId ab000 commId 0xfbf0dc991af1f5e0 - Init START\n"
        "[default6]:[2024-11-02 18:59:40,101] [INFO] [train.py:287:train] step 100/2000 | loss 2.2612\n"
        "[default5]:[rank13]:[E1102 19:11:07.500000000 ProcessGroupNCCL.cpp:632] [Rank 13] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6075, OpType=ALLREDUCE, NumelIn=1366, NumelOut=1366, Timeout(ms)=600000) ran for 600033 milliseconds before timing out.\n";
    const stream_in s[] = {{"node002/dmesg.log", dmesg}, {"node002/train.log", train}};
    diagnose(f, s, 2);
    assert_true(f->d.hang);
    assert_int_equal(f->d.kind, CP_KIND_GPU_HARDWARE);
    assert_int_equal(f->d.owner, CP_OWNER_HARDWARE);
    assert_int_equal(f->d.first_rank, 14);
}

/* The kernel logged the Xid just before the rank's CUDA error. */
static void xid_before_cuda_error(void **state)
{
    fixture *f = *state;
    hardware_streams(f, "19:01:06");
    check_hardware(&f->d);
}

/* The Xid was logged after the CUDA error (beyond the skew window): the
 * CUDA error is the first root, and the Xid on its GPU explains it. */
static void xid_after_cuda_error(void **state)
{
    fixture *f = *state;
    hardware_streams(f, "19:01:15");
    check_hardware(&f->d);
    assert_true(note_has(&f->d, "hardware", NULL));
}

/* gen-03: the kernel kills rank 1 for memory; only the pid ties it to rank 1. */
static const char oom_train_text[] =
    "[2026-11-29 16:19:56,764][INFO][rank 1/4] step=3 loss=1.4047\n"
    "[2026-11-29 16:19:57,605][ERROR][rank 0/4] training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/proj/s02b_host_oom.py\", line 65, in main\n"
    "    dist.all_reduce(p.grad)\n"
    "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:7044\n"
    "[2026-11-29 16:19:57,653][ERROR][rank 2/4] training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/proj/s02b_host_oom.py\", line 65, in main\n"
    "    dist.all_reduce(p.grad)\n"
    "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:19347\n"
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 12849) of binary: /usr/bin/python3\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "============================================================\n"
    "/home/ml/proj/s02b_host_oom.py FAILED\n"
    "------------------------------------------------------------\n"
    "Failures:\n"
    "[1]:\n"
    "  time      : 2026-11-29_16:19:58\n"
    "  host      : localhost\n"
    "  rank      : 1 (local_rank: 1)\n"
    "  exitcode  : -9 (pid: 12850)\n"
    "  error_file: <N/A>\n"
    "  traceback : Signal 9 (SIGKILL) received by PID 12850\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2026-11-29_16:19:58\n"
    "  host      : localhost\n"
    "  rank      : 0 (local_rank: 0)\n"
    "  exitcode  : 1 (pid: 12849)\n"
    "  error_file: <N/A>\n"
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
    "============================================================\n";

static const char oom_dmesg_text[] =
    "[Sun Nov 29 16:19:56 2026] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
    "[Sun Nov 29 16:19:56 2026] CPU: 1 UID: 0 PID: 12850 Comm: python3 Not tainted 6.18.44-fc-v782 #1 PREEMPT(none) \n"
    "[Sun Nov 29 16:19:56 2026] Memory cgroup out of memory: Killed process 12850 (python3) total-vm:1456956kB, anon-rss:523920kB, file-rss:127332kB, shmem-rss:0kB, UID:0 pgtables:1856kB oom_score_adj:0\n";

static void kernel_oom_kill_names_rank_by_pid(void **state)
{
    fixture *f = *state;
    const stream_in s[] = {{"gen-03.log", oom_train_text}, {"gen-03.dmesg.log", oom_dmesg_text}};
    diagnose(f, s, 2);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_false(d->hang);
    assert_int_equal(d->first_rank, 1);
    assert_int_equal(d->kind, CP_KIND_HOST_OOM);
    assert_int_equal(d->owner, CP_OWNER_INFRASTRUCTURE);
    /* torchrun's root-cause claim (rank 0) is noted as wrong */
    assert_true(note_has(d, "Root Cause", "rank 0"));
    assert_int_equal(row_of(d, 1)->state, CP_RS_ROOT);
    assert_int_equal(row_of(d, 0)->state, CP_RS_CASCADE);
}

/* Only torchrun's failure table, as a paste keeps it: rank 1 exits with
 * code 1, and 31 s later rank 0 ends by SIGKILL and rank 2 by SIGTERM.
 * torchrun stopped them (SIGTERM, then SIGKILL when the 30 s grace period
 * ran out): the SIGKILL is no host OOM, and rank 1 failed first.
 * Adapted from vllm-project/speculators#1115. */
static const char table_shutdown_text[] =
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "============================================================\n"
    "/root/proj/scripts/train.py FAILED\n"
    "------------------------------------------------------------\n"
    "Failures:\n"
    "[1]:\n"
    "  time      : 2026-09-07_13:03:29\n"
    "  host      : localhost\n"
    "  rank      : 0 (local_rank: 0)\n"
    "  exitcode  : -9 (pid: 14689)\n"
    "  error_file: <N/A>\n"
    "  traceback : Signal 9 (SIGKILL) received by PID 14689\n"
    "[2]:\n"
    "  time      : 2026-09-07_13:03:29\n"
    "  host      : localhost\n"
    "  rank      : 2 (local_rank: 2)\n"
    "  exitcode  : -15 (pid: 14691)\n"
    "  error_file: <N/A>\n"
    "  traceback : Signal 15 (SIGTERM) received by PID 14691\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2026-09-07_13:02:58\n"
    "  host      : localhost\n"
    "  rank      : 1 (local_rank: 1)\n"
    "  exitcode  : 1 (pid: 14690)\n"
    "  error_file: <N/A>\n"
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n"
    "============================================================\n";

static void signals_after_a_rank_exited_are_the_launchers_shutdown(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", table_shutdown_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_false(d->hang);
    assert_int_equal(d->first_rank, 1);
    assert_int_not_equal(d->kind, CP_KIND_HOST_OOM);
    assert_string_equal(d->rule_id, "engine.exit_before_shutdown");
    assert_true(note_has(d, "rank 1 exiting with code 1", "launcher stopped them"));
    assert_int_equal(row_of(d, 1)->state, CP_RS_ROOT);
    assert_int_equal(row_of(d, 0)->state, CP_RS_KILLED);
    assert_int_equal(row_of(d, 2)->state, CP_RS_KILLED);
}

/* The same table with the SIGKILL first: rank 0 died before rank 1 exited,
 * so the kill is no shutdown and stays the cause. */
static void a_sigkill_before_the_exit_is_still_the_cause(void **state)
{
    fixture *f = *state;
    char *text = strdup(table_shutdown_text);
    assert_non_null(text);
    char *kill_time = strstr(text, "13:03:29");
    assert_non_null(kill_time);
    memcpy(kill_time, "13:02:10", 8);
    diagnose_one(f, "train.log", text);
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->first_rank, 0);
    assert_int_equal(d->kind, CP_KIND_HOST_OOM);
    free(text);
}

/* Rank 1 is killed while its optimizer shard is being saved: only the
 * launcher speaks of the death, so the phase is the one rank 1's own
 * lines left open. */
static const char killed_in_save_text[] =
    "[default0]:[2026-11-29 16:19:50,100] [INFO] [logging.py:96:log_dist] [Rank 0] step=10, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]\n"
    "[default1]:[2026-11-29 16:19:50,101] [INFO] [logging.py:96:log_dist] [Rank 1] step=10, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]\n"
    "[default0]:[2026-11-29 16:19:55,200] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Saving /ckpt/global_step10/zero_pp_rank_0_mp_rank_00_optim_states.pt...\n"
    "[default1]:[2026-11-29 16:19:55,201] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Saving /ckpt/global_step10/zero_pp_rank_1_mp_rank_00_optim_states.pt...\n"
    "[default0]:[2026-11-29 16:19:57,300] [INFO] [torch_checkpoint_engine.py:23:save] [Torch] Saved /ckpt/global_step10/zero_pp_rank_0_mp_rank_00_optim_states.pt.\n"
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 1 (pid: 12850) of binary: /usr/bin/python3\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "============================================================\n"
    "train.py FAILED\n"
    "------------------------------------------------------------\n"
    "Failures:\n"
    "  <NO_OTHER_FAILURES>\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2026-11-29_16:19:58\n"
    "  host      : node001\n"
    "  rank      : 1 (local_rank: 1)\n"
    "  exitcode  : -9 (pid: 12850)\n"
    "  error_file: <N/A>\n"
    "  traceback : Signal 9 (SIGKILL) received by PID 12850\n"
    "============================================================\n";

static void phase_from_the_ranks_own_lines(void **state)
{
    fixture *f = *state;
    const stream_in s[] = {{"train.log", killed_in_save_text}};
    diagnose(f, s, 1);
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->first_rank, 1);
    assert_int_equal(d->kind, CP_KIND_HOST_OOM);
    assert_int_equal(d->phase, CP_PHASE_CHECKPOINT_SAVE);
}

/* Rank 0 finished its save: a closed phase names nothing. */
static void no_phase_from_a_closed_save(void **state)
{
    fixture *f = *state;
    const char *text = strstr(killed_in_save_text, "ERROR:torch");
    char *mine = malloc(strlen(killed_in_save_text) + 256);
    assert_non_null(mine);
    /* the same log, rank 1's save begun and finished before the kill */
    size_t head = (size_t)(text - killed_in_save_text);
    memcpy(mine, killed_in_save_text, head);
    strcpy(mine + head, "[default1]:[2026-11-29 16:19:57,400] [INFO] [torch_checkpoint_engine.py:23:save] [Torch] Saved "
                        "/ckpt/global_step10/zero_pp_rank_1_mp_rank_00_optim_states.pt.\n");
    strcat(mine, text);
    const stream_in s[] = {{"train.log", mine}};
    diagnose(f, s, 1);
    assert_int_equal(f->d.first_rank, 1);
    assert_int_equal(f->d.phase, CP_PHASE_UNKNOWN);
    free(mine);
}

/* ---- mismatch, silent exit, health ---------------------------------------------- */

static const char mismatch_text[] =
    "[default0]:RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[], TensorDtypes=Float), but Rank 2 is running collective: CollectiveFingerPrint(OpType=BROADCAST).\n"
    "[default1]:RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[], TensorDtypes=Float), but Rank 2 is running collective: CollectiveFingerPrint(OpType=BROADCAST).\n"
    "[default2]:RuntimeError: Detected mismatch between collectives on ranks. Rank 2 is running collective: CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[4], TensorDtypes=Long), but Rank 0 is running collective: CollectiveFingerPrint(OpType=ALLREDUCE).\n"
    "[default3]:RuntimeError: Detected mismatch between collectives on ranks. Rank 3 is running collective: CollectiveFingerPrint(OpType=ALLREDUCE, TensorShape=[], TensorDtypes=Float), but Rank 2 is running collective: CollectiveFingerPrint(OpType=BROADCAST).\n";

static void collective_mismatch_majority(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", mismatch_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_int_equal(d->first_rank, 2);
    assert_int_equal(d->kind, CP_KIND_COLLECTIVE_MISMATCH);
    assert_string_equal(d->rule_id, "pytorch.collective_mismatch_detail");
}

/* Rank 2 stops after step 3 without a word; the others lose their peer. */
static const char silent_exit_text[] =
    "2026-11-29 17:54:40,100 [rank0] INFO train: process group ready: backend=gloo world_size=4\n"
    "2026-11-29 17:54:43,100 [rank2] INFO train: step 3/8 loss=1.2000 time=0.34s\n"
    "2026-11-29 17:54:43,101 [rank0] INFO train: step 3/8 loss=1.2100 time=0.34s\n"
    "2026-11-29 17:54:44,001 [rank0] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/proj/train.py\", line 74, in main\n"
    "    average_gradients(model)\n"
    "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:15025\n"
    "2026-11-29 17:54:44,013 [rank1] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/proj/train.py\", line 74, in main\n"
    "    average_gradients(model)\n"
    "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:32647\n"
    "2026-11-29 17:54:44,021 [rank3] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/home/ml/proj/train.py\", line 74, in main\n"
    "    average_gradients(model)\n"
    "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:1936\n";

static void silent_exit_is_unknown_on_that_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", silent_exit_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_false(d->hang);
    assert_int_equal(d->first_rank, 2);
    assert_int_equal(d->kind, CP_KIND_UNKNOWN);
    assert_string_equal(d->rule_id, "engine.silent_exit");
    assert_true(note_has(d, "rank 2", NULL));
}

/* real-20, cut down: ranks 0-2 time out in init_process_group waiting
 * for rank 3, which was still building a cache; torchrun lists them in
 * its table and stops the one process it does not list, whose
 * faulthandler stack follows. The stopped pid is local rank 3, the one
 * the table lacks, and it is the rank the others waited for. */
static const char late_rank_text[] =
    "Traceback (most recent call last):\n"
    "  File \"/work/gen/s20_late_rank_init.py\", line 38, in main\n"
    "    dist.init_process_group(\"gloo\", timeout=timedelta(seconds=15))\n"
    "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 761, in init_process_group\n"
    "    default_pg = _new_process_group_helper(\n"
    "RuntimeError: Socket Timeout\n"
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 13247 closing signal SIGTERM\n"
    "Current thread 0x00007fa999459040 (most recent call first):\n"
    "  File \"/work/gen/s20_late_rank_init.py\", line 27 in build_token_cache\n"
    "  File \"/work/gen/s20_late_rank_init.py\", line 37 in main\n"
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 13244) of binary: /usr/bin/python3\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "============================================================\n"
    "/work/gen/s20_late_rank_init.py FAILED\n"
    "------------------------------------------------------------\n"
    "Failures:\n"
    "[1]:\n"
    "  time      : 2026-12-01_07:06:35\n"
    "  host      : localhost\n"
    "  rank      : 1 (local_rank: 1)\n"
    "  exitcode  : 1 (pid: 13245)\n"
    "[2]:\n"
    "  time      : 2026-12-01_07:06:35\n"
    "  host      : localhost\n"
    "  rank      : 2 (local_rank: 2)\n"
    "  exitcode  : 1 (pid: 13246)\n"
    "------------------------------------------------------------\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2026-12-01_07:06:35\n"
    "  host      : localhost\n"
    "  rank      : 0 (local_rank: 0)\n"
    "  exitcode  : 1 (pid: 13244)\n"
    "============================================================\n";

static void set_up_waiters_point_at_the_stopped_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", late_rank_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_true(d->hang);
    assert_int_equal(d->first_rank, 3);
    assert_int_equal(d->kind, CP_KIND_RENDEZVOUS_ERROR);
    assert_int_equal(d->phase, CP_PHASE_INIT);
    assert_true(note_has(d, "Rank 3", "printed no error"));
    assert_int_equal(d->n_ranks, 4);
    assert_int_equal(d->ranks[3].state, CP_RS_ROOT);
}

/* OLMo#827: rank 0 begins a save and an error with no rank follows;
 * rank 0 is the only rank named, and its save line, never closed, says
 * where it was. */
static const char rankless_error_in_save_text[] =
    "[2025-04-14 19:37:32] INFO     [olmo.checkpoint:1927, rank=0] Saving model and optim state to olmo-7b-test/step0-tmp...\n"
    "OLMoConfigurationError: Checkpoint for step 0 already exists, use --save_overwrite to overwrite it\n";

static void rankless_error_takes_the_inferred_ranks_open_phase(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", rankless_error_in_save_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_int_equal(d->first_rank, 0);
    assert_int_equal(d->phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_true(note_has(d, "Rank 0's last phase line", "Saving model and optim state"));
}

/* real-29, cut down: rank 2 runs out of batches, logs that its epoch is
 * done and exits 0; the others fail in the next all_reduce. torchrun's
 * table lists ranks 0, 1 and 3 and not rank 2, which it never stopped. */
static const char left_early_text[] =
    "[default2]:2026-12-01 07:36:29,725 INFO rank 2 step 5 loss 1.4583\n"
    "[default2]:2026-12-01 07:36:29,725 INFO rank 2: epoch done after 5 steps\n"
    "[default3]:2026-12-01 07:36:29,724 INFO rank 3 step 5 loss 1.4558\n"
    "[default3]:Traceback (most recent call last):\n"
    "[default3]:  File \"/work/gen/s29_uneven_batches.py\", line 40, in main\n"
    "[default3]:    loss.backward()\n"
    "[default3]:RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:4495\n"
    "[default1]:2026-12-01 07:36:29,723 INFO rank 1 step 5 loss 1.4209\n"
    "[default1]:Traceback (most recent call last):\n"
    "[default1]:  File \"/work/gen/s29_uneven_batches.py\", line 40, in main\n"
    "[default1]:    loss.backward()\n"
    "[default1]:RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:37051\n"
    "[default0]:2026-12-01 07:36:29,722 INFO rank 0 step 5 loss 1.3083\n"
    "[default0]:Traceback (most recent call last):\n"
    "[default0]:  File \"/work/gen/s29_uneven_batches.py\", line 40, in main\n"
    "[default0]:    loss.backward()\n"
    "[default0]:RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:11690\n"
    "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 30426) of binary: /usr/bin/python3\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
    "Failures:\n"
    "[1]:\n"
    "  time      : 2026-12-01_07:36:30\n"
    "  host      : localhost\n"
    "  rank      : 1 (local_rank: 1)\n"
    "  exitcode  : 1 (pid: 30427)\n"
    "[2]:\n"
    "  time      : 2026-12-01_07:36:30\n"
    "  host      : localhost\n"
    "  rank      : 3 (local_rank: 3)\n"
    "  exitcode  : 1 (pid: 30429)\n"
    "Root Cause (first observed failure):\n"
    "[0]:\n"
    "  time      : 2026-12-01_07:36:30\n"
    "  host      : localhost\n"
    "  rank      : 0 (local_rank: 0)\n"
    "  exitcode  : 1 (pid: 30426)\n";

static void rank_that_exited_cleanly_left_early(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", left_early_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_false(d->hang);
    assert_int_equal(d->first_rank, 2);
    assert_int_equal(d->kind, CP_KIND_COLLECTIVE_MISMATCH);
    assert_string_equal(d->rule_id, "engine.left_early");
    assert_true(note_has(d, "rank 2 exited with status 0", NULL));
}

/* real-27, cut down: rank 3 aborts in a custom backward (faulthandler's
 * dump, no exception); torchrun's table and its "failed (exitcode: -6)"
 * line are about rank 3, not rank 3's own words. It is the rank the
 * others lost, and its dump says backward. */
static const stream_in aborted_rank_streams[] = {
    {"job/launcher.log",
     "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 29396 closing signal SIGTERM\n"
     "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 3 (pid: 29399) of binary: /usr/bin/python3\n"
     "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
     "Root Cause (first observed failure):\n"
     "[0]:\n"
     "  time      : 2026-12-01_07:36:05\n"
     "  host      : localhost\n"
     "  rank      : 3 (local_rank: 3)\n"
     "  exitcode  : -6 (pid: 29399)\n"
     "  error_file: <N/A>\n"
     "  traceback : Signal 6 (SIGABRT) received by PID 29399\n"},
    {"job/rank_0.log",
     "2026-12-01 07:36:04,528 INFO step 2 loss 1.4587\n"
     "Traceback (most recent call last):\n"
     "  File \"/work/gen/s27_abort.py\", line 63, in main\n"
     "    loss.backward()\n"
     "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:33167\n"},
    {"job/rank_1.log",
     "2026-12-01 07:36:04,527 INFO step 2 loss 1.4311\n"
     "Traceback (most recent call last):\n"
     "  File \"/work/gen/s27_abort.py\", line 63, in main\n"
     "    loss.backward()\n"
     "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:28309\n"},
    {"job/rank_2.log",
     "2026-12-01 07:36:04,526 INFO step 2 loss 1.3920\n"
     "Traceback (most recent call last):\n"
     "  File \"/work/gen/s27_abort.py\", line 63, in main\n"
     "    loss.backward()\n"
     "RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:19656\n"},
    {"job/rank_3.log",
     "2026-12-01 07:36:04,527 INFO step 2 loss 1.4587\n"
     "Fatal Python error: Aborted\n"
     "\n"
     "Current thread 0x00007f0ad805d040 (most recent call first):\n"
     "  File \"/work/gen/s27_abort.py\", line 34 in backward\n"
     "  File \"/usr/lib/python3/dist-packages/torch/autograd/function.py\", line 267 in apply\n"
     "  File \"/usr/lib/python3/dist-packages/torch/_tensor.py\", line 488 in backward\n"
     "  File \"/work/gen/s27_abort.py\", line 63 in main\n"},
};

static void aborted_rank_is_the_peer_the_others_lost(void **state)
{
    fixture *f = *state;
    diagnose(f, aborted_rank_streams, sizeof aborted_rank_streams / sizeof aborted_rank_streams[0]);
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_int_equal(d->first_rank, 3);
    assert_string_equal(d->rule_id, "engine.silent_exit");
    assert_int_equal(d->phase, CP_PHASE_BACKWARD);
    assert_true(note_has(d, "Rank 3's stack dump", "backward"));
}

/* jr-09, cut down: icefall's ranks report the fp16 grad scale collapsing,
 * then a traceback the paste cuts before its error line. The run stopped
 * on the collapse; the traceback without its error says less. */
static void nonfinite_numbers_before_a_cut_traceback_name_the_failure(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "2024-01-14 01:03:00,826 WARNING [train.py:1057] (2/4) Grad scale is small: 1.2924697071141057e-26\n"
                 "2024-01-14 01:03:01,769 WARNING [train.py:1057] (0/4) Grad scale is small: 1.2924697071141057e-26\n"
                 "Traceback (most recent call last):\n"
                 "  File \"/work/icefall/egs/zipformer/train.py\", line 1446, in <module>\n"
                 "    main()\n"
                 "  File \"/work/icefall/egs/zipformer/train.py\", line 1437, in main\n"
                 "    mp.spawn(run, args=(world_size, args), nprocs=world_size, join=True)\n");
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_int_equal(d->kind, CP_KIND_LOSS_SCALE_FLOOR);
    assert_int_equal(d->first_rank, 2);
    assert_true(note_has(d, "cut off before its error line", "non-finite"));
}

/* gf-11, cut down: an all-gather, the group's first collective, times out
 * and no rank logged a training step: a stall during set-up, though the
 * collective is no barrier (so not engine.startup_barrier). */
static void first_collectives_timing_out_before_any_step_is_init(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "stderr:   what():  [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
                 "OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1808212 milliseconds before timing out.\n"
                 "stderr:   what():  [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, "
                 "OpType=ALLGATHER, Timeout(ms)=1800000) ran for 1808214 milliseconds before timing out.\n");
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_int_equal(d->phase, CP_PHASE_INIT);
    assert_true(note_has(d, "among their group's first", NULL));
}

/* real-34, cut down: two agents' output in one file under pdsh-style
 * host prefixes; "[default1]" on node1 is a local rank, and node1's
 * failure table, whose rows say "host : localhost", is printed under
 * "node1: ": its "rank : 3 (local_rank: 1)" gives the global rank. */
static void table_printed_under_a_host_prefix_places_local_ranks(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "node0: [default0]:2026-12-01 08:11:21,817 INFO step 2 loss 1.4064\n"
                 "node0: [default1]:2026-12-01 08:11:21,818 INFO step 2 loss 1.4841\n"
                 "node1: [default0]:2026-12-01 08:11:21,818 INFO step 2 loss 1.4390\n"
                 "node1: [default1]:2026-12-01 08:11:21,815 INFO step 2 loss 1.4672\n"
                 "node1: [default1]:Traceback (most recent call last):\n"
                 "node1: [default1]:  File \"/work/gen/s34_two_nodes.py\", line 29, in forward\n"
                 "node1: [default1]:    raise ValueError(f\"expected 16 features per sample, got {x.shape[1]}\")\n"
                 "node1: [default1]:ValueError: expected 16 features per sample, got 15\n"
                 "node1: ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 "
                 "(pid: 10043) of binary: /usr/bin/python3\n"
                 "node1: Traceback (most recent call last):\n"
                 "node1:   File \"/usr/lib/python3/dist-packages/torch/distributed/launcher/api.py\", line 246, in "
                 "launch_agent\n"
                 "node1:     raise ChildFailedError(\n"
                 "node1: torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
                 "node1: Failures:\n"
                 "node1: [1]:\n"
                 "node1:   time      : 2026-12-01_08:11:23\n"
                 "node1:   host      : localhost\n"
                 "node1:   rank      : 3 (local_rank: 1)\n"
                 "node1:   exitcode  : 1 (pid: 10044)\n"
                 "node1: Root Cause (first observed failure):\n"
                 "node1: [0]:\n"
                 "node1:   time      : 2026-12-01_08:11:23\n"
                 "node1:   host      : localhost\n"
                 "node1:   rank      : 2 (local_rank: 0)\n"
                 "node1:   exitcode  : 1 (pid: 10043)\n");
    const cp_diagnosis *d = &f->d;
    assert_true(d->failed);
    assert_int_equal(d->first_rank, 3);
    assert_int_equal(d->kind, CP_KIND_PYTHON_EXCEPTION);
    assert_string_equal(d->host, "node1");
}

/* real-38, cut down: rank 0 calls a barrier inside its rank-0-only save
 * while ranks 1-3 go on to the next step's all_reduce; gloo's timeouts
 * name no collective, but the tracebacks say where each rank waited:
 * rank 0 in the save, every other rank in backward. Rank 0 is out of
 * step with them. */
static const char odd_waiter_text[] =
    "2026-12-01 08:26:08,900 [rank0] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/work/gen/s38.py\", line 47, in main\n"
    "    save_checkpoint(model, step, log)\n"
    "  File \"/work/gen/s38.py\", line 25, in save_checkpoint\n"
    "    dist.barrier()\n"
    "  File \"/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py\", line 3152, in barrier\n"
    "    work.wait()\n"
    "RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 15000ms for recv operation to complete\n"
    "2026-12-01 08:26:08,910 [rank1] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/work/gen/s38.py\", line 43, in main\n"
    "    loss.backward()\n"
    "  File \"/usr/lib/python3/dist-packages/torch/_tensor.py\", line 488, in backward\n"
    "    torch.autograd.backward(\n"
    "RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 15000ms for send operation to complete\n"
    "2026-12-01 08:26:08,923 [rank3] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/work/gen/s38.py\", line 43, in main\n"
    "    loss.backward()\n"
    "  File \"/usr/lib/python3/dist-packages/torch/_tensor.py\", line 488, in backward\n"
    "    torch.autograd.backward(\n"
    "RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 15000ms for recv operation to complete\n"
    "2026-12-01 08:26:08,926 [rank2] ERROR train: training failed\n"
    "Traceback (most recent call last):\n"
    "  File \"/work/gen/s38.py\", line 43, in main\n"
    "    loss.backward()\n"
    "  File \"/usr/lib/python3/dist-packages/torch/_tensor.py\", line 488, in backward\n"
    "    torch.autograd.backward(\n"
    "RuntimeError: [./gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 15000ms for recv operation to complete\n";

static void rank_waiting_in_another_phase_is_out_of_step(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", odd_waiter_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_int_equal(d->first_rank, 0);
    assert_int_equal(d->kind, CP_KIND_COLLECTIVE_MISMATCH);
    assert_int_equal(d->phase, CP_PHASE_CHECKPOINT_SAVE);
    assert_int_equal(d->owner, CP_OWNER_USER_CODE);
    assert_true(note_has(d, "Rank 0 timed out waiting", "backward"));
}

/* real-40, cut down: rank 0 cannot read the config it would broadcast,
 * right after the process group's set-up, before any training step: no
 * frame names a phase, but the error came during set-up. */
static void error_after_set_up_before_any_step_is_init(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "2026-12-01 08:31:48,388 [rank0] INFO torch.distributed.distributed_c10d: Added key: "
                 "store_based_barrier_key:1 to store for rank: 0\n"
                 "2026-12-01 08:31:48,398 [rank1] INFO torch.distributed.distributed_c10d: Added key: "
                 "store_based_barrier_key:1 to store for rank: 1\n"
                 "2026-12-01 08:31:48,409 [rank0] ERROR train: set-up failed\n"
                 "Traceback (most recent call last):\n"
                 "  File \"/work/gen/s40_config_broadcast.py\", line 19, in load_config\n"
                 "    with open(path) as f:\n"
                 "FileNotFoundError: [Errno 2] No such file or directory: '/work/configs/run7.json'\n");
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->first_rank, 0);
    assert_int_equal(d->phase, CP_PHASE_INIT);
    assert_true(note_has(d, "No rank logged a training step", "during set-up"));
}

/* real-41, cut down: the straggler's faulthandler dump (its own file)
 * has a helper thread first ("Thread 0x...", the DataLoader's queue
 * feeder) and then the "Current thread", the main thread, waiting for a
 * batch: that one says where the rank stalled. */
static const stream_in two_thread_dump_streams[] = {
    {"job/rank_1.log",
     "2026-12-01 08:31:56,101 INFO step 3 loss 1.3860\n"
     "Thread 0x00007f92f0e1f6c0 (most recent call first):\n"
     "  File \"/usr/lib/python3.11/threading.py\", line 320 in wait\n"
     "  File \"/usr/lib/python3.11/multiprocessing/queues.py\", line 231 in _feed\n"
     "\n"
     "Current thread 0x00007f9315256040 (most recent call first):\n"
     "  File \"/usr/lib/python3.11/multiprocessing/queues.py\", line 113 in get\n"
     "  File \"/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py\", line 1282 in _get_data\n"
     "  File \"/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py\", line 628 in __next__\n"
     "  File \"/work/gen/s41.py\", line 49 in main\n"},
};

static void current_thread_of_a_dump_is_where_the_rank_stalled(void **state)
{
    fixture *f = *state;
    diagnose(f, two_thread_dump_streams, 1);
    const cp_event *stack = cp_stack_of_rank(&f->inc, 1);
    assert_non_null(stack);
    assert_non_null(strstr(stack->text, "Current thread"));
    assert_int_equal(cp_phase_from_frames(&f->inc, stack), CP_PHASE_FORWARD);
}

/* real-44, cut down: the kernel's OOM killer takes a pid no launcher line
 * ties to a rank; a rank's traceback reports the same pid as its lost
 * DataLoader worker, inside the loader's signal handler: the kill was
 * the worker's, and it was fetching data (forward). */
static const stream_in killed_worker_streams[] = {
    {"job/train.log",
     "Traceback (most recent call last):\n"
     "  File \"/work/gen/s44.py\", line 55, in main\n"
     "    for step, (x, y) in enumerate(loader, 1):\n"
     "  File \"/usr/lib/python3/dist-packages/torch/utils/data/_utils/signal_handling.py\", line 66, in handler\n"
     "    _error_if_any_worker_fails()\n"
     "RuntimeError: DataLoader worker (pid 28420) is killed by signal: Killed. \n"},
    {"job/train.dmesg.log",
     "[Tue Dec  1 08:37:17 2026] Memory cgroup out of memory: Killed process 28420 (python3) "
     "total-vm:1390988kB, anon-rss:523132kB, file-rss:20200kB, shmem-rss:0kB, UID:0 pgtables:1560kB "
     "oom_score_adj:0\n"},
};

static void kernel_kill_of_a_loader_worker_takes_its_phase(void **state)
{
    fixture *f = *state;
    diagnose(f, killed_worker_streams, 2);
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->kind, CP_KIND_HOST_OOM);
    assert_int_equal(d->phase, CP_PHASE_FORWARD);
    assert_true(note_has(d, "was a DataLoader worker", NULL));
}

/* real-43, cut down: a traceback with no rank, the launcher's "failed
 * ... local_rank: 0" (the first failure its agent noticed) and a failure
 * table listing four ranks: local rank 0 is not "the one rank the input
 * names", and the raising rank stays unknown. */
static void launcher_first_noticed_is_not_the_only_rank(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "Traceback (most recent call last):\n"
                 "  File \"/work/gen/s43.py\", line 29, in forward\n"
                 "    raise ValueError(f\"batch has {x.shape[1]} features, the model takes 16\")\n"
                 "ValueError: batch has 15 features, the model takes 16\n"
                 "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 1001) "
                 "of binary: /usr/bin/python3\n"
                 "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
                 "Failures:\n"
                 "[1]:\n  time      : 2026-12-01_08:37:12\n  host      : localhost\n  rank      : 1 (local_rank: 1)\n"
                 "  exitcode  : 1 (pid: 1002)\n"
                 "[2]:\n  time      : 2026-12-01_08:37:12\n  host      : localhost\n  rank      : 2 (local_rank: 2)\n"
                 "  exitcode  : 1 (pid: 1003)\n"
                 "[3]:\n  time      : 2026-12-01_08:37:12\n  host      : localhost\n  rank      : 3 (local_rank: 3)\n"
                 "  exitcode  : 1 (pid: 1004)\n"
                 "Root Cause (first observed failure):\n"
                 "[0]:\n  time      : 2026-12-01_08:37:12\n  host      : localhost\n  rank      : 0 (local_rank: 0)\n"
                 "  exitcode  : 1 (pid: 1001)\n");
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->kind, CP_KIND_PYTHON_EXCEPTION);
    assert_int_equal(d->first_rank, -1);
}

/* real-48, cut down: training ends, then a traceback with no rank; the
 * failure table lists rank 0 alone (the others exited cleanly), so the
 * error is rank 0's. */
static void only_failed_rank_in_the_table_raised_the_rankless_error(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log",
                 "2026-12-01 08:53:16,866 [rank0] INFO train: step 6/6 loss=1.4418\n"
                 "2026-12-01 08:53:16,867 [rank1] INFO train: step 6/6 loss=1.4286\n"
                 "2026-12-01 08:53:16,867 [rank2] INFO train: step 6/6 loss=1.4342\n"
                 "Traceback (most recent call last):\n"
                 "  File \"/usr/lib/python3.11/json/encoder.py\", line 180, in default\n"
                 "    raise TypeError(f'Object of type {o.__class__.__name__} '\n"
                 "TypeError: Object of type Tensor is not JSON serializable\n"
                 "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 1001) "
                 "of binary: /usr/bin/python3\n"
                 "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
                 "Failures:\n"
                 "  <NO_OTHER_FAILURES>\n"
                 "Root Cause (first observed failure):\n"
                 "[0]:\n  time      : 2026-12-01_08:53:17\n  host      : localhost\n  rank      : 0 (local_rank: 0)\n"
                 "  exitcode  : 1 (pid: 1001)\n");
    const cp_diagnosis *d = &f->d;
    assert_int_equal(d->kind, CP_KIND_PYTHON_EXCEPTION);
    assert_int_equal(d->first_rank, 0);
    assert_true(note_has(d, "lists rank 0 alone", NULL));
}

static const char healthy_text[] =
    "2026-11-29 16:19:31,588 [rank0] INFO train: process group ready: backend=gloo world_size=2\n"
    "2026-11-29 16:19:31,596 [rank1] INFO train: process group ready: backend=gloo world_size=2\n"
    "2026-11-29 16:19:31,955 [rank0] INFO train: step 1/8 loss=1.4841 time=0.36s\n"
    "2026-11-29 16:19:31,956 [rank1] INFO train: step 1/8 loss=1.3443 time=0.33s\n"
    "2026-11-29 16:19:32,293 [rank0] INFO train: step 2/8 loss=1.3768 time=0.34s\n"
    "2026-11-29 16:19:32,295 [rank1] INFO train: step 2/8 loss=1.4498 time=0.34s\n"
    "2026-11-29 16:19:34,701 [rank0] INFO train: training done in 3.11s\n";

static void healthy_run_has_no_failure(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", healthy_text);
    const cp_diagnosis *d = &f->d;
    assert_false(d->failed);
    assert_false(d->hang);
    assert_int_equal(d->first_rank, -1);
    assert_int_equal(d->kind, CP_KIND_NONE);
    assert_null(d->rule_id);
    assert_null(d->signature);
    assert_int_equal(d->n_ranks, 0);
    assert_int_equal(f->inc.n_events, 0);
    assert_int_equal(d->lines, 7);
}

/* ---- per-rank rows and the timeline ---------------------------------------------- */

/* A hang in which rank 3 lags (lower enqueued work), ranks 1 and 2 time
 * out, and rank 0 printed nothing at all. */
static const char rows_text[] =
    "2026-11-29 16:20:15,900 [rank0] INFO train: process group ready: backend=nccl world_size=4\n"
    "[rank1]:[E1129 16:40:00.504952916 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 122, last enqueued NCCL work: 127, last completed NCCL work: 121.\n"
    "[rank2]:[E1129 16:40:00.586033171 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank 2] Exception (either an error or timeout) detected by watchdog at work: 122, last enqueued NCCL work: 127, last completed NCCL work: 121.\n"
    "[rank3]:[E1129 16:40:02.586033171 ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 3] Timeout at NCCL work: 121, last enqueued NCCL work: 121, last completed NCCL work: 120.\n";

static void rank_rows_root_cascade_silent(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", rows_text);
    const cp_diagnosis *d = &f->d;
    assert_true(d->hang);
    assert_int_equal(d->first_rank, 3);
    assert_int_equal(d->n_ranks, 4);
    assert_int_equal(row_of(d, 3)->state, CP_RS_ROOT);
    assert_int_equal(row_of(d, 1)->state, CP_RS_CASCADE);
    assert_int_equal(row_of(d, 2)->state, CP_RS_CASCADE);
    assert_int_equal(row_of(d, 0)->state, CP_RS_SILENT);
    assert_null(row_of(d, 0)->first_error);
    assert_non_null(row_of(d, 1)->first_error);
    /* glog times took the year of the ISO line */
    assert_string_equal(row_of(d, 1)->last_time, "2026-11-29 16:40:00.504");
}

/* 2024 is a leap year: a glog "E301" (1 March, no year) must land on the
 * same instant as the ISO time 2024-03-01 10:00:00. */
static const char leap_text[] =
    "2024-03-01 10:00:00,000 [rank0] ERROR train: training failed\n"
    "RuntimeError: shard 3 of the index returned an empty batch\n"
    "[rank1]:[E301 10:00:00.000000000 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.\n";

static void noyear_glog_time_takes_incident_year(void **state)
{
    fixture *f = *state;
    diagnose_one(f, "train.log", leap_text);
    const cp_incident *inc = &f->inc;
    assert_int_equal(inc->n_events, 2);
    const cp_event *iso = &inc->events[0], *glog = &inc->events[1];
    if (iso->line > glog->line) {
        const cp_event *t = iso;
        iso = glog;
        glog = t;
    }
    assert_int_equal(glog->origin.rank, 1);
    assert_int_equal(iso->origin.time.kind, CP_TS_ABS);
    assert_int_equal(glog->origin.time.kind, CP_TS_ABS);
    assert_int_equal(glog->origin.time.ms, iso->origin.time.ms);
    assert_int_equal(iso->origin.time.ms, 1709287200000LL); /* 2024-03-01 10:00:00 UTC */
    /* the writer's times were normalised too */
    const cp_writer *w = &inc->writers[glog->writer];
    assert_int_equal(w->last_time.kind, CP_TS_ABS);
    assert_int_equal(w->last_time.ms, 1709287200000LL);
    assert_string_equal(row_of(&f->d, 1)->last_time, "2024-03-01 10:00:00.000");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(cut_traceback_is_a_failure, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(headless_traceback_is_a_failure, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(cut_traceback_deep_in_a_library_is_the_frameworks, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(cut_traceback_near_the_users_code_names_no_owner, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(error_below_a_config_check_frame_is_no_config_error, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(check_raised_in_the_config_frame_is_a_config_error, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(dump_at_the_end_is_a_hang_not_an_exception, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(traceback_followed_by_more_output_is_not_cut, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(rank_in_another_collective_is_out_of_step, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(input_ending_in_setup_is_a_setup_stall, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(setup_ended_by_the_scheduler_is_a_setup_stall, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(time_limit_long_after_the_last_step_is_a_stall, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(time_limit_minutes_after_training_ended_is_a_hung_exit, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(save_begun_after_training_ended_is_no_hung_exit, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(time_limit_right_after_training_ended_is_no_hung_exit, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(time_limit_right_after_the_last_step_is_no_stall, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(launcher_signal_long_after_the_last_step_is_a_stall, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(signal_in_the_launchers_frames_is_the_signal, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(setup_followed_by_steps_is_no_failure, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(type_cut_by_the_paste_is_not_another_collective, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(even_split_of_collectives_names_no_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(sizes_that_differ_are_different_collectives, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(unnamed_exception_in_a_save_is_a_checkpoint_failure, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(named_exception_in_a_save_is_a_checkpoint_failure, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(segfault_in_a_save_is_a_checkpoint_failure, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(wrapped_frames_stay_in_the_ranks_traceback, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(sizes_differ_where_most_ranks_stopped, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(timeouts_of_two_groups_do_not_compare, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(alltoall_sizes_do_not_differ, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(early_barrier_timeout_is_startup, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(early_scalar_broadcast_timeout_is_startup, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(startup_stall_rows_show_set_up_ranks_waiting, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(late_barrier_timeout_is_not_startup, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(first_broadcast_of_a_group_is_not_startup, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(stall_takes_the_phase_line_above_it, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(stall_far_below_a_phase_line_has_no_phase, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(failure_table_alone_names_its_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(headerless_dump_inside_a_save_is_a_checkpoint_hang, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(headerless_python_frames_are_not_a_dump, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(stall_inside_an_extension_build_is_a_build_error, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(stall_after_a_finished_build_is_a_timeout, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(kindless_line_defers_to_the_next_that_names_one, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(untimed_kindless_line_defers_to_the_line_below, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(untimed_events_in_log_order, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(launcher_names_the_only_failed_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(rankless_root_takes_the_first_rank_of_its_kind, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(cut_traceback_inside_a_save_is_checkpoint_io, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(hang_names_the_rank_behind_in_steps, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(ranks_that_log_no_steps_are_not_behind, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(pipeline_send_among_recvs_is_no_mismatch, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(same_moment_names_the_specific_error, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(one_speaking_rank_names_no_silent_one, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(flight_recorder_size_mismatch_names_the_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(local_rank_of_the_only_host_is_the_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(spawn_header_names_the_process, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(local_rank_among_two_hosts_is_no_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(nccl_2_10_init_line_gives_the_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(phase_from_the_ranks_own_traceback, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(phase_from_a_rankless_traceback_of_the_same_error, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(root_wins_over_cascade, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(specific_error_wins_within_skew, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(earlier_error_wins_beyond_skew, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(watchdog_lowest_enqueued_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(watchdog_groups_do_not_compare, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(dump_signal_groups_do_not_compare, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(watchdog_rank_not_compared_with_itself, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(watchdog_earliest_wait_is_behind, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(watchdog_same_wait_less_enqueued_is_behind, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(numeric_failure_names_the_rank_whose_loss_blew_up, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(two_blown_up_losses_name_no_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(every_rank_alike_is_said, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(one_rank_unlike_the_others_is_not_alike, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(rank_whose_value_differs_is_named, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(two_ranks_have_no_odd_value, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(rank_that_logged_giving_up_is_the_one_that_left, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(error_line_that_goes_on_names_nobody, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(info_line_names_nobody, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(cascade_takes_the_phase_the_ranks_agree_on, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(world_of_one_is_rank_zero, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(desync_report_names_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(barrier_finding_outranks_pointers, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(barrier_pointers_alone_name_rank_zero, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(desync_named_rank_has_a_row, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(desync_reporter_is_cascade, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(silent_rank_is_the_one_waited_for, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(stall_after_save_is_checkpoint_hang, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(stall_after_finished_save_is_not_checkpoint_hang, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(rankless_error_takes_phase_from_its_process_stack, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(dcp_loader_exception_is_checkpoint_io, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(kernel_assertion_names_its_phase, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(framework_checkout_frames_are_library, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(cut_frame_naming_a_library_is_the_frameworks, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(cut_frame_naming_no_library_is_nobodys, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(own_script_frames_are_the_users, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(deepspeed_engine_assert_is_config, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(zero_without_optimizer_is_config, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(assert_in_training_step_is_no_config, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(nccl_transport_error_before_any_step_is_init, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(nccl_trace_before_any_step_is_init, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(nccl_transport_error_after_steps_has_no_phase, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(gpu_of_a_host_gives_the_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(gpu_zero_everywhere_gives_no_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(fabric_errors_on_one_host_blame_its_link, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(transport_cuda_failures_are_not_fabric_errors, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(xid_before_cuda_error, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(xid_with_peer_timeouts_and_no_error_is_a_hang, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(xid_after_cuda_error, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(kernel_oom_kill_names_rank_by_pid, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(collective_mismatch_majority, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(silent_exit_is_unknown_on_that_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(set_up_waiters_point_at_the_stopped_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(rankless_error_takes_the_inferred_ranks_open_phase, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(rank_that_exited_cleanly_left_early, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(aborted_rank_is_the_peer_the_others_lost, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(nonfinite_numbers_before_a_cut_traceback_name_the_failure, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(first_collectives_timing_out_before_any_step_is_init, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(table_printed_under_a_host_prefix_places_local_ranks, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(rank_waiting_in_another_phase_is_out_of_step, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(error_after_set_up_before_any_step_is_init, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(current_thread_of_a_dump_is_where_the_rank_stalled, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(kernel_kill_of_a_loader_worker_takes_its_phase, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(launcher_first_noticed_is_not_the_only_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(only_failed_rank_in_the_table_raised_the_rankless_error, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(healthy_run_has_no_failure, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(rank_rows_root_cascade_silent, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(noyear_glog_time_takes_incident_year, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(phase_from_rank_with_same_error, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(phase_from_cut_off_traceback, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(phase_from_a_frames_source_line, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(source_line_apart_from_its_frame_says_nothing, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(nccl_return_code_trace_alone, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(nccl_return_code_trace_defers_to_its_warn, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(live_stack_dump_is_a_hang, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(repeated_error_keeps_the_rule_that_applies, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(zero3_placeholder_weight_in_a_lora_merge, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(waiters_in_a_save_make_a_checkpoint_stall, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(waiters_that_disagree_say_nothing, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(only_named_rank_that_timed_out_did_not_raise, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(ray_worker_death_is_a_consequence, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(pyspy_dump_frames_name_the_phase, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(interrupt_inside_a_save_is_a_stalled_save, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(interrupt_after_an_error_is_no_hang, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(frames_after_an_error_line_begin_another_traceback, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(nan_loss_without_an_error_is_the_failure, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(nan_grad_norm_without_an_error_claims_no_phase, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(skipped_fp16_step_is_no_failure, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(cpp_exception_stack_is_no_live_dump, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(no_phase_from_other_errors, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(signals_after_a_rank_exited_are_the_launchers_shutdown, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(a_sigkill_before_the_exit_is_still_the_cause, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(phase_from_the_ranks_own_lines, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(no_phase_from_a_closed_save, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(rank_the_table_leaves_out_left_early, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(table_with_a_signal_death_is_no_left_early, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(one_listed_rank_is_no_left_early, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(store_wait_after_steps_is_no_setup_stall, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(store_wait_before_steps_is_a_setup_stall, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(unique_id_wait_before_steps_is_set_up, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(unique_id_wait_after_steps_is_not_set_up, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(rank_the_launcher_stopped_did_not_leave_early, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(stuck_ranks_own_stack_outranks_where_the_others_waited, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(without_its_stack_the_waiters_phase_stands, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(ds_launcher_line_names_no_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(ds_launcher_line_names_the_only_rank, new_fixture, free_fixture),
    };
    return cmocka_run_group_tests(tests, harness_load_catalog, harness_free_catalog);
}
