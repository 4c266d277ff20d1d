/* analyze.c - the verdict: first failing rank, kind, owner, phase, hang.
 * See analyze.h and docs/internals.md. */
#include "analyze.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drain.h"
#include "facts.h"
#include "frame.h"

enum {
    SKEW_MS = 2000,            /* clocks of different hosts may differ this much */
    HW_WINDOW_MS = 300000      /* a hardware fault this close explains a CUDA error */
};

/* ---- frames: owner (the phase: phases.c) ------------------------------- */

/* Whose code raised: the user's when one of their own frames is among
 * the innermost few Python frames (their code called the library with the
 * bad input, or raised itself); the framework's when the user's frames are
 * only far out (a script that called trainer.train()). Library frames are
 * those a `library` rule hit (rules/05-libraries.rules); a frame whose
 * path the paste cut short counts for neither when none does. */
enum { USER_FRAME_REACH = 4 };

/* The library frames innermost in e, before the first of the user's own
 * (or the outermost frame); *user says whether there was one. */
static int innermost_library_frames(const cp_event *e, bool *user)
{
    int seen = 0;
    *user = false;
    for (size_t i = e->n_frames; i-- > 0;) {
        const char *f = e->frames[i].file;
        if (!f || !strstr(f, ".py") || e->frames[i].unowned)
            continue;
        if (!e->frames[i].library) {
            *user = true;
            break;
        }
        seen++;
    }
    return seen;
}

static cp_owner owner_from_frames(const cp_event *e)
{
    bool user;
    const int seen = innermost_library_frames(e, &user);
    if (user)
        return seen < USER_FRAME_REACH ? CP_OWNER_USER_CODE : CP_OWNER_FRAMEWORK;
    return seen ? CP_OWNER_FRAMEWORK : CP_OWNER_UNKNOWN;
}

/* A traceback cut off before its exception line keeps only its outer
 * frames: the raise was further in, where the library may have called
 * back into the user's code (a model's forward). Only frames that already
 * run USER_FRAME_REACH deep into library code put it on the framework. */
static cp_owner owner_from_cut_frames(const cp_event *e)
{
    bool user;
    return innermost_library_frames(e, &user) >= USER_FRAME_REACH ? CP_OWNER_FRAMEWORK : CP_OWNER_UNKNOWN;
}

/* A root that names no rank (a CUDA assertion printed by the kernel, an
 * exception without a prefix) was raised by some rank; the first rank to
 * report the same kind of error, on a line with a time of its own, within
 * SKEW_MS of it is taken as that one. NULL when none did, or when two
 * ranks did in the same millisecond. */
static const cp_event *first_ranked_of_kind(const cp_incident *inc, const cp_event *root)
{
    const cp_rule *r = rule_of(inc, root);
    if (!r || r->kind == CP_KIND_UNKNOWN)
        return NULL;
    const cp_event *best = NULL;
    bool tie = false;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        const cp_rule *er = rule_of(inc, e);
        if (e == root || e->in_table || !er || er->kind != r->kind || event_rank(inc, e) < 0 ||
            !timed(&e->origin.time) || e->time_estimated)
            continue;
        if (timed(&root->origin.time) && llabs(e->origin.time.ms - root->origin.time.ms) > SKEW_MS)
            continue;
        if (!best || e->origin.time.ms < best->origin.time.ms) {
            best = e;
            tie = false;
        } else if (e->origin.time.ms == best->origin.time.ms && event_rank(inc, e) != event_rank(inc, best)) {
            tie = true;
        }
    }
    return tie ? NULL : best;
}

/* Rule phase hints that name a specific operation beat frame hints only
 * when the frames say nothing. */
static cp_owner owner_of_event(const cp_incident *inc, const cp_event *e)
{
    const cp_rule *r = rule_of(inc, e);
    if (r && r->owner != CP_OWNER_AUTO)
        return r->owner;
    return owner_from_frames(e);
}

/* ---- the launcher's failure table ---------------------------------------- */

/* The table entry a line of the table belongs to: the last one that
 * starts at or before it in its stream. */
static const cp_table_entry *entry_of(const cp_incident *inc, const cp_event *e)
{
    const cp_table_entry *best = NULL;
    for (size_t i = 0; i < inc->n_table; i++) {
        const cp_table_entry *t = &inc->table[i];
        if (t->stream == e->stream && t->line <= e->line && (!best || t->line > best->line))
            best = t;
    }
    return best;
}

static bool ended_by_signal(const cp_table_entry *t)
{
    return t->signal == 9 || t->signal == 15 || t->exitcode == -9 || t->exitcode == -15;
}

static bool stopped_after(const cp_table_entry *t, const cp_table_entry *first)
{
    return ended_by_signal(t) && timed(&t->time) && t->time.ms > first->time.ms;
}

/* The earliest entry of the failure tables that exited with a code of its
 * own (not a signal), when an entry timed after it ended by SIGTERM or
 * SIGKILL: torchrun stops the ranks still running once one fails, with
 * SIGTERM and then SIGKILL for a rank still there when the grace period
 * (30 s) ends, so those signals are its shutdown and not a cause. Of
 * entries at the same time, the one under "Root Cause". NULL when the
 * tables show no such order. */
static const cp_table_entry *exit_before_shutdown(const cp_incident *inc)
{
    const cp_table_entry *first = NULL;
    for (size_t i = 0; i < inc->n_table; i++) {
        const cp_table_entry *t = &inc->table[i];
        /* the "Root Cause" entry is a failure even where a paste cut its
         * exit code */
        bool own_exit = t->exitcode > 0 || (t->root_cause && t->exitcode == -1 && t->signal < 0);
        if (!own_exit || t->rank < 0 || !timed(&t->time))
            continue;
        if (!first || t->time.ms < first->time.ms ||
            (t->time.ms == first->time.ms && t->root_cause && !first->root_cause))
            first = t;
    }
    for (size_t i = 0; first && i < inc->n_table; i++)
        if (stopped_after(&inc->table[i], first))
            return first;
    return NULL;
}

/* Whether the event is a line of a table entry that the launcher's
 * shutdown ended; `shutdown` is exit_before_shutdown's entry, or NULL. */
static bool ended_by_shutdown(const cp_incident *inc, const cp_event *e, const cp_table_entry *shutdown)
{
    const cp_table_entry *t = shutdown && e->in_table ? entry_of(inc, e) : NULL;
    return t && stopped_after(t, shutdown);
}

/* ---- root selection ------------------------------------------------------- */

/* A table row the launcher's shutdown ended (`shutdown`, as for
 * ended_by_shutdown) is no root. */
static bool is_root_candidate(const cp_incident *inc, const cp_event *e, bool allow_table,
                              const cp_table_entry *shutdown)
{
    return role_of(inc, e) == CP_ROLE_ROOT && (allow_table || !e->in_table) &&
           !ended_by_shutdown(inc, e, shutdown);
}

/* The earliest root, where roots within SKEW_MS of the earliest (clocks of
 * different hosts disagree that much) and roots without any time are
 * weighed against each other: the more specific rule wins, and of equal
 * ones without times in one log, the first printed. */
static int pick_root(const cp_incident *inc)
{
    const cp_table_entry *shutdown = exit_before_shutdown(inc);
    for (int pass = 0; pass < 2; pass++) {
        bool allow_table = pass == 1;
        int64_t t0 = INT64_MAX;
        for (size_t i = 0; i < inc->n_events; i++) {
            const cp_event *e = &inc->events[i];
            if (is_root_candidate(inc, e, allow_table, shutdown) && timed(&e->origin.time) && e->origin.time.ms < t0)
                t0 = e->origin.time.ms;
        }
        int best = -1;
        for (size_t i = 0; i < inc->n_events; i++) {
            const cp_event *e = &inc->events[i];
            if (!is_root_candidate(inc, e, allow_table, shutdown))
                continue;
            if (timed(&e->origin.time) && e->origin.time.ms > t0 + SKEW_MS)
                continue;
            if (best < 0) {
                best = (int)i;
                continue;
            }
            const cp_event *b = &inc->events[best];
            int we = weight_of(inc, e), wb = weight_of(inc, b);
            bool better = we > wb;
            if (we == wb && timed(&e->origin.time) && timed(&b->origin.time))
                better = e->origin.time.ms < b->origin.time.ms;
            if (we == wb && timed(&e->origin.time) && !timed(&b->origin.time))
                better = true;
            /* events are in the order their blocks closed, not the log's */
            if (we == wb && !timed(&e->origin.time) && !timed(&b->origin.time) && e->stream == b->stream)
                better = e->line < b->line;
            if (better)
                best = (int)i;
        }
        if (best >= 0)
            return best;
    }
    return -1;
}

/* A CUDA error or timeout on a host whose GPU logged a hardware fault
 * around the same time is the hardware's doing. A fault on the rank's own
 * GPU (the Xid's pid or bus id ties it to the rank) beats one elsewhere on
 * the host; the nearer in time wins among equals. */
static bool near_in_time(const cp_event *a, const cp_event *b)
{
    return !timed(&a->origin.time) || !timed(&b->origin.time) ||
           llabs(a->origin.time.ms - b->origin.time.ms) <= HW_WINDOW_MS;
}

static const char *event_host(const cp_incident *inc, const cp_event *e)
{
    return e->origin.host[0] ? e->origin.host : e->writer >= 0 ? inc->writers[e->writer].id.host : "";
}

/* 2: the same GPU (same rank), 1: the same host, no rank, 0: neither */
static int closeness(const cp_incident *inc, const cp_event *root, const cp_event *e)
{
    int rank = event_rank(inc, root), erank = event_rank(inc, e);
    const char *host = event_host(inc, root);
    if (rank >= 0 && erank == rank)
        return 2;
    return host[0] && erank < 0 && strcmp(host, event_host(inc, e)) == 0 ? 1 : 0;
}

static int64_t time_gap(const cp_event *a, const cp_event *b)
{
    return timed(&a->origin.time) && timed(&b->origin.time) ? llabs(a->origin.time.ms - b->origin.time.ms) : 0;
}

static int hardware_behind(const cp_incident *inc, const cp_event *root)
{
    const cp_rule *r = rule_of(inc, root);
    if (!r || r->kind == CP_KIND_GPU_HARDWARE)
        return -1;
    if (r->kind != CP_KIND_CUDA_ERROR && r->kind != CP_KIND_NCCL_TIMEOUT && r->kind != CP_KIND_NCCL_COMM_ERROR &&
        r->kind != CP_KIND_PYTHON_EXCEPTION && r->kind != CP_KIND_UNKNOWN)
        return -1;
    int best = -1, best_close = 0;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        const cp_rule *er = rule_of(inc, e);
        if (!er || er->kind != CP_KIND_GPU_HARDWARE || er->role != CP_ROLE_ROOT || !near_in_time(e, root))
            continue;
        int c = closeness(inc, root, e);
        if (c > best_close || (c && c == best_close && time_gap(e, root) < time_gap(&inc->events[best], root))) {
            best = (int)i;
            best_close = c;
        }
    }
    return best;
}

/* An Xid NVIDIA attributes to the application (13, 31, 43, ...): a kept
 * context line with an xid capture whose rule does not blame hardware. */
static const cp_event *app_xid_behind(const cp_incident *inc, const cp_event *root)
{
    const cp_rule *r = rule_of(inc, root);
    if (!r || r->kind != CP_KIND_CUDA_ERROR)
        return NULL;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        const cp_rule *er = rule_of(inc, e);
        if (er && er->role == CP_ROLE_CONTEXT && er->owner != CP_OWNER_HARDWARE &&
            cp_capset_get(&e->caps, "xid") && near_in_time(e, root) && closeness(inc, root, e) > 0)
            return e;
    }
    return NULL;
}

/* ---- verdict from a root event ---------------------------------------------- */

static void copy_rule_texts(cp_diagnosis *d, const cp_rule *r)
{
    d->rule_id = cp_strdup(r->id);
    d->title = cp_strdup(r->title ? r->title : r->id);
    d->means = cp_strdup(r->means ? r->means : "");
    d->action = cp_strdup(r->action ? r->action : "");
}

static void add_evidence(cp_diagnosis *d, const cp_incident *inc, const cp_event *e)
{
    for (int i = 0; i < e->n_ev; i++) {
        cp_evidence *p = realloc(d->evidence, (d->n_evidence + 1) * sizeof *p);
        if (!p)
            return;
        d->evidence = p;
        cp_evidence *x = &p[d->n_evidence++];
        x->path = cp_strdup(inc->streams[e->ev[i].stream]);
        x->line = e->ev[i].line;
        x->rank = event_rank(inc, e);
        x->text = cp_strdup(e->ev[i].text ? e->ev[i].text : "");
    }
}

/* The event's evidence, put before what the diagnosis already holds: the
 * cause first, its consequences after. */
static void add_evidence_first(cp_diagnosis *d, const cp_incident *inc, const cp_event *e)
{
    size_t before = d->n_evidence;
    add_evidence(d, inc, e);
    size_t added = d->n_evidence - before;
    cp_evidence *moved = added ? malloc(added * sizeof *moved) : NULL;
    if (!moved)
        return;
    memcpy(moved, d->evidence + before, added * sizeof *moved);
    memmove(d->evidence + added, d->evidence, before * sizeof *moved);
    memcpy(d->evidence, moved, added * sizeof *moved);
    free(moved);
}

static void set_host(cp_diagnosis *d, const cp_incident *inc, const cp_event *e)
{
    const char *h = e->origin.host;
    if (!h[0] && e->writer >= 0)
        h = inc->writers[e->writer].id.host;
    snprintf(d->host, sizeof d->host, "%s", h);
}

/* Whether the rank timed out in a collective: it waited for another. */
static bool rank_timed_out(const cp_incident *inc, int rank)
{
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_rule *r = rule_of(inc, &inc->events[i]);
        if (r && r->kind == CP_KIND_NCCL_TIMEOUT && event_rank(inc, &inc->events[i]) == rank)
            return true;
    }
    return false;
}

/* A rankless error, and one rank the input names at all (a writer's, or a
 * line's subject: torchrun's "failed ... local_rank: 0"): that rank raised
 * it, unless it timed out waiting for another. With no rank named, a world
 * the input states to be one process has only rank 0. Into d->first_rank
 * with a note; false when none or several are named, or that one timed
 * out. */
static bool only_named_rank(cp_diagnosis *d, const cp_incident *inc)
{
    int r = cp_single_known_rank(inc);
    if (r < 0 && inc->world_size_stated == 1) {
        d->first_rank = 0;
        cp_diag_note(d, "The error carries no rank; the input states a world of one process, so it is rank 0's.");
        return true;
    }
    if (r < 0 || rank_timed_out(inc, r))
        return false;
    d->first_rank = r;
    cp_diag_note(d, "The error carries no rank; rank %d is the only rank the input names, so it is taken as the "
                    "one that raised it.", r);
    return true;
}

/* A rankless error, and a launcher failure table that lists one failed
 * rank (the others exited cleanly): the error is that rank's. Into
 * d->first_rank with a note; false when the table lists none or
 * several. */
static bool only_failed_rank(cp_diagnosis *d, const cp_incident *inc)
{
    int r = -1;
    for (size_t i = 0; i < inc->n_table; i++) {
        int t = inc->table[i].rank;
        if (t < 0 || (r >= 0 && t != r))
            return false;
        r = t;
    }
    if (r < 0)
        return false;
    d->first_rank = r;
    cp_diag_note(d, "The error carries no rank; torchrun's failure table lists rank %d alone as failed, so it is "
                    "taken as the one that raised it.", r);
    return true;
}

/* A numeric failure with no rank of its own: the one rank whose logged
 * loss blew up while the others' stayed ordinary, with a note; -1 when
 * none stands out. */
static int loss_outlier(cp_diagnosis *d, const cp_incident *inc)
{
    float its, others;
    int64_t step;
    int r = cp_suspect_loss_outlier(inc, &its, &step, &others);
    if (r >= 0)
        cp_diag_note(d, "The error carries no rank; rank %d logged a loss of %g at step %lld while the ranks' "
                        "median was %g: its batch made the gradients non-finite, and the others inherited them "
                        "when gradients were averaged.",
                     r, (double)its, (long long)step, (double)others);
    return r;
}

/* The rank that raised the root, into d->first_rank, with a note on how
 * it was inferred when the line itself does not say; returns the
 * confidence points the inference costs. */
static int rank_of_root(cp_diagnosis *d, const cp_incident *inc, const cp_event *root)
{
    int doubt = 0;
    d->first_rank = event_rank(inc, root);
    if (root->rank_via == CP_VIA_TABLE_COPY)
        cp_diag_note(d, "The traceback carries no rank; the same error in torchrun's failure table is rank %d's.",
                     d->first_rank);
    else if (root->rank_via == CP_VIA_SUBJECT)
        cp_diag_note(d, "The line names a process (pid, local rank or GPU) that the launcher's and NCCL's own "
                        "lines tie to rank %d.", d->first_rank);
    else if (root->rank_via == CP_VIA_LOCAL_RANK ||
             (root->origin.rank < 0 && root->writer >= 0 && inc->writers[root->writer].rank_is_local)) {
        cp_diag_note(d, "The line names local rank %d; nothing in the input shows a second node, so it is taken as "
                        "the global rank (on a multi-node job, add that node's rank times its GPUs).",
                     d->first_rank);
        doubt += 10;
    } else if (root->origin.rank < 0 && root->writer >= 0 && inc->writers[root->writer].rank_from_device) {
        cp_diag_note(d, "The line names GPU %d of its host and no rank; every rank NCCL lists on that host runs on "
                        "the GPU its rank gives (minus the node's first rank), so it is taken as rank %d.",
                     inc->writers[root->writer].id.cuda_dev, d->first_rank);
        doubt += 10;
    }
    if (d->first_rank < 0 && rule_of(inc, root) && rule_of(inc, root)->kind == CP_KIND_LOSS_SCALE_FLOOR &&
        (d->first_rank = loss_outlier(d, inc)) >= 0)
        doubt += 10;
    if (d->first_rank < 0 && (d->first_rank = cp_suspect_least_progress(inc, false)) >= 0) {
        cp_diag_note(d, "The error carries no rank; rank %d is the only rank whose training progress stopped earlier "
                "than the others', so it is taken as the one that raised it.", d->first_rank);
        doubt += 20;
    }
    int named = cp_suspect_named(inc);
    if (named >= 0 && named != d->first_rank) {
        cp_diag_note(d, "The ranks' own reports name rank %d as the one that deviated; it raised the same error as the "
                "others, so that is where it began.", named);
        d->first_rank = named;
    }
    char its[CP_CAPTURE_VALUE], theirs[CP_CAPTURE_VALUE];
    int odd = named < 0 ? cp_suspect_odd_value(inc, its, theirs) : -1;
    if (odd >= 0 && odd != d->first_rank) {
        cp_diag_note(d, "Every rank raised the same error, but rank %d's gives %s where every other rank's gives "
                        "%s: it is the one whose setting is off.", odd, its, theirs);
        d->first_rank = odd;
    }
    const cp_event *peer = d->first_rank < 0 ? first_ranked_of_kind(inc, root) : NULL;
    if (peer) {
        d->first_rank = event_rank(inc, peer);
        cp_diag_note(d, "The error line names no rank; rank %d was the first to report the same kind of error "
                        "(line %llu), so it is taken as the one that raised it.",
                     d->first_rank, (unsigned long long)peer->line);
        doubt += 15;
    }
    if (d->first_rank < 0 && only_named_rank(d, inc))
        doubt += 10;
    if (d->first_rank < 0 && only_failed_rank(d, inc))
        doubt += 10;
    return doubt;
}

/* A consequence that is a wait run out: a collective's or a pipeline
 * transfer's timeout, or set-up waiting for ranks that never arrived. */
static bool waited_out(const cp_rule *r)
{
    if (!r || r->role != CP_ROLE_CASCADE)
        return false;
    return r->kind == CP_KIND_NCCL_TIMEOUT || r->kind == CP_KIND_PIPELINE_HANG || setup_wait(r);
}

/* Whether any process waited out its timeout. */
static bool any_timeout(const cp_incident *inc)
{
    for (size_t i = 0; i < inc->n_events; i++)
        if (waited_out(rule_of(inc, &inc->events[i])))
            return true;
    return false;
}

/* Whether a process raised an error of its own, not a kernel line: a
 * CUDA error (from Python or the watchdog's C++), or any root with a
 * traceback (an ECC error the driver returned). */
static bool any_raised_root(const cp_incident *inc)
{
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        const cp_rule *r = rule_of(inc, e);
        if (r && r->role == CP_ROLE_ROOT && (e->has_traceback || r->kind == CP_KIND_CUDA_ERROR))
            return true;
    }
    return false;
}

/* A root that is a stall by its kind; or a GPU failing in hardware while
 * its peers time out and no process raised an error: the GPU's process
 * blocked instead of failing, and the others waited for it (a GPU off the
 * bus mid-step). */
static bool root_is_hang(const cp_incident *inc, const cp_rule *r)
{
    if (r->kind == CP_KIND_CHECKPOINT_HANG || r->kind == CP_KIND_PIPELINE_HANG)
        return true;
    return r->kind == CP_KIND_GPU_HARDWARE && any_timeout(inc) && !any_raised_root(inc);
}

/* Whether any writer logged a training step. */
static bool any_progress(const cp_incident *inc)
{
    for (size_t i = 0; i < inc->n_writers; i++)
        if (inc->writers[i].last_step >= 0)
            return true;
    return false;
}

/* A line the analysis keeps that says a rank was setting up its process
 * group (pytorch.process_group_setup): a kept context line of set-up. */
static bool setup_line(const cp_incident *inc, const cp_event *e)
{
    const cp_rule *r = rule_of(inc, e);
    return r && r->role == CP_ROLE_CONTEXT && r->keep && r->phase == CP_PHASE_INIT;
}

/* An NCCL transport failure with no phase of its own, in an input where
 * no rank logged a training step, is NCCL setting up its connections. */
static void nccl_setup_phase(cp_diagnosis *d, const cp_incident *inc)
{
    if (d->phase != CP_PHASE_UNKNOWN || d->kind != CP_KIND_NCCL_COMM_ERROR || any_progress(inc))
        return;
    d->phase = CP_PHASE_INIT;
    cp_diag_note(d, "No rank logged a training step: NCCL failed while setting up its connections (phase init).");
}

/* A rankless error put on a rank by inference (the only rank named, the
 * one behind): that rank's own phase line, still open, says where it was
 * ("Saving model and optim state to ..." right above the error). */
static void phase_of_inferred_rank(cp_diagnosis *d, const cp_incident *inc, const cp_event *root)
{
    const cp_writer *w;
    if (event_rank(inc, root) >= 0 || d->first_rank < 0)
        return;
    cp_phase p = cp_phase_open_of_rank(inc, d->first_rank, &w);
    if (p == CP_PHASE_NONE)
        return;
    d->phase = p;
    if (w->phase_text)
        cp_diag_note(d, "Rank %d's last phase line, never closed, says %s: %s", d->first_rank, cp_phase_name(p),
                     w->phase_text);
}

/* A kill (the kernel's OOM killer) of a process a rank reported as its
 * DataLoader worker (`worker_pid`): the worker was fetching that rank's
 * batches, and the rank's report says where it noticed. */
static void phase_of_killed_worker(cp_diagnosis *d, const cp_incident *inc, const cp_event *root)
{
    int64_t pid = cap_i64(&root->caps, "pid", -1);
    for (size_t i = 0; pid > 0 && i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        if (e == root || cap_i64(&e->caps, "worker_pid", -1) != pid)
            continue;
        cp_phase p = cp_phase_of_event(inc, e);
        if (p == CP_PHASE_UNKNOWN)
            return;
        d->phase = p;
        add_evidence(d, inc, e);
        cp_diag_note(d, "The process killed (pid %lld) was a DataLoader worker, reported lost at line %llu; the "
                        "traceback there says %s.", (long long)pid, (unsigned long long)e->line, cp_phase_name(p));
        return;
    }
}

/* An error no frame or line places, on a rank that printed its process
 * group's set-up line, when no rank ever logged a training step: it came
 * during set-up (reading a config to broadcast, building the data
 * pipeline), before any training. */
static void error_during_setup(cp_diagnosis *d, const cp_incident *inc)
{
    if (d->first_rank < 0 || any_progress(inc))
        return;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        if (setup_line(inc, e) && event_rank(inc, e) == d->first_rank) {
            d->phase = CP_PHASE_INIT;
            cp_diag_note(d, "No rank logged a training step, and rank %d had set up its process group: the error "
                            "came during set-up.", d->first_rank);
            return;
        }
    }
}

/* A line's message without the prefixes that say who printed it. */
static const char *message_of(const char *text)
{
    size_t n = strlen(text);
    size_t at = cp_frame_parse(text, n, NULL);
    return text + (at <= n ? at : n);
}

/* How many ranks raised an error, when every one of them raised the
 * root's own (its rule and message); 0 when some raised another. */
static int ranks_with_the_same_error(const cp_incident *inc, const cp_event *root)
{
    const char *want = message_of(root->text ? root->text : "");
    uint64_t seen[8] = {0};   /* ranks below 512, as a bit set */
    int ranks = 0;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        const cp_rule *r = rule_of(inc, e);
        int rank = event_rank(inc, e);
        if (!r || r->role != CP_ROLE_ROOT || e->in_table || rank < 0)
            continue;
        if (e->rule != root->rule || strcmp(message_of(e->text ? e->text : ""), want) != 0 || rank >= 512)
            return 0;
        if (!(seen[rank / 64] & (1ull << (rank % 64)))) {
            seen[rank / 64] |= 1ull << (rank % 64);
            ranks++;
        }
    }
    return ranks;
}

/* The diagnosis takes rule r's id, texts and kind, and its owner and
 * phase where r fixes them. */
static void name_by_rule(cp_diagnosis *d, const cp_rule *r)
{
    free(d->rule_id);
    free(d->title);
    free(d->means);
    free(d->action);
    copy_rule_texts(d, r);
    d->kind = r->kind;
    if (r->owner != CP_OWNER_AUTO)
        d->owner = r->owner;
    if (r->phase != CP_PHASE_NONE)
        d->phase = r->phase;
}

/* Texts of a conclusion the engine reached (rules/90-conclusions.rules);
 * kept as they are when the catalog lacks the rule. */
static void conclude(cp_diagnosis *d, const cp_incident *inc, const char *id)
{
    int at = cp_catalog_find(inc->cat, id);
    if (at >= 0)
        name_by_rule(d, &inc->cat->rules[at]);
}

/* An error raised while a checkpoint was being saved or loaded, when its
 * rule says so (`in_checkpoint`: an exception no rule knows, py.exception;
 * a value that could not be pickled; a segfault): what failed is the
 * checkpoint, and whether it is usable is the question that follows, so
 * the verdict is a checkpoint failure (engine.checkpoint_exception); the
 * error stays the signature, and owner and phase stay as the frames gave
 * them (the conclusion fixes neither). */
static void exception_in_checkpoint(cp_diagnosis *d, const cp_incident *inc, const cp_event *root)
{
    const cp_rule *r = rule_of(inc, root);
    if (!r || !r->in_checkpoint ||
        (d->phase != CP_PHASE_CHECKPOINT_SAVE && d->phase != CP_PHASE_CHECKPOINT_LOAD))
        return;
    conclude(d, inc, "engine.checkpoint_exception");
    cp_diag_note(d, "The error came during a checkpoint %s, which it stopped.",
                 d->phase == CP_PHASE_CHECKPOINT_SAVE ? "save" : "load");
}

static void verdict_from_root(cp_diagnosis *d, const cp_incident *inc, const cp_event *root)
{
    const cp_rule *r = rule_of(inc, root);
    d->failed = true;
    int doubt = rank_of_root(d, inc, root);   /* confidence points the rank's inference costs */
    const char *how = cp_suspect_named_how(inc, d->first_rank);
    if (how)
        cp_diag_note(d, "Flight Recorder: %s.", how);
    set_host(d, inc, root);
    d->kind = r->kind;
    d->owner = owner_of_event(inc, root);
    d->phase = cp_phase_of_event(inc, root);
    if (d->phase == CP_PHASE_UNKNOWN)
        cp_phase_from_peers(d, inc, root);
    if (d->phase == CP_PHASE_UNKNOWN)
        phase_of_inferred_rank(d, inc, root);
    if (d->phase == CP_PHASE_UNKNOWN)
        error_during_setup(d, inc);
    if (d->phase == CP_PHASE_UNKNOWN)
        phase_of_killed_worker(d, inc, root);
    nccl_setup_phase(d, inc);
    d->hang = root_is_hang(inc, r);
    d->signature = cp_strdup(root->text ? root->text : "");
    d->first_time = cp_format_time(inc, &root->origin.time);
    copy_rule_texts(d, r);
    exception_in_checkpoint(d, inc, root);
    add_evidence(d, inc, root);
    d->confidence = (r->weight >= 40 ? 85 : 65) - doubt;
    if (!timed(&root->origin.time))
        d->confidence -= 15;
    if (d->first_rank < 0)
        d->confidence -= 10;
    int alike = timed(&root->origin.time) || d->first_rank != event_rank(inc, root)
                    ? 0 : ranks_with_the_same_error(inc, root);
    if (alike >= 2)
        cp_diag_note(d, "All %d ranks that reported an error raised this same one, and no time tells them apart: "
                        "rank %d's is only the first in the input, and the cause most likely common to them (code, "
                        "configuration or environment).",
                     alike, d->first_rank);
}

/* "Xid 79: GPU has fallen off the bus", whether or not the title names the Xid */
static void hw_label(const cp_rule *r, const char *xid, char *buf, size_t n)
{
    const char *title = r->title ? r->title : r->id;
    if (xid && strncmp(title, "Xid ", 4) != 0)
        snprintf(buf, n, "Xid %s (%s)", xid, title);
    else
        snprintf(buf, n, "%s", title);
}

static void apply_hardware(cp_diagnosis *d, const cp_incident *inc, const cp_event *root, const cp_event *hw)
{
    const cp_rule *hr = rule_of(inc, hw);
    const char *xid = cp_capset_get(&hw->caps, "xid");
    const char *busid = cp_capset_get(&hw->caps, "busid");
    bool same_gpu = closeness(inc, root, hw) == 2;
    char what[160], gap[64] = "";
    hw_label(hr, xid, what, sizeof what);
    if (timed(&hw->origin.time) && timed(&root->origin.time))
        snprintf(gap, sizeof gap, ", %.1f s %s it", (double)time_gap(hw, root) / 1000.0,
                 hw->origin.time.ms <= root->origin.time.ms ? "before" : "after");
    cp_diag_note(d, "%s%s%s on %s%s explains the %s: NVIDIA attributes it to the hardware, so this is a hardware "
                    "fault (confidence %d%%).",
                 what, busid ? " at PCI " : "", busid ? busid : "",
                 same_gpu ? "the failing rank's own GPU" : "the same host (the GPU is not tied to a rank)", gap,
                 cp_kind_name(rule_of(inc, root)->kind), same_gpu ? 90 : 75);
    d->kind = hr->kind;
    d->owner = hr->owner == CP_OWNER_AUTO ? CP_OWNER_HARDWARE : hr->owner;
    free(d->rule_id);
    free(d->title);
    free(d->means);
    free(d->action);
    copy_rule_texts(d, hr);
    add_evidence(d, inc, hw);
    d->confidence = same_gpu ? 90 : 75;
}

/* The root is itself a hardware fault: say what ties it to the rank and
 * which of the rank's own errors it explains. */
static void note_hardware_root(cp_diagnosis *d, const cp_incident *inc, const cp_event *hw)
{
    const cp_rule *hr = rule_of(inc, hw);
    const char *xid = cp_capset_get(&hw->caps, "xid");
    const char *busid = cp_capset_get(&hw->caps, "busid");
    const cp_event *err = NULL;
    for (size_t i = 0; i < inc->n_events && !err; i++) {
        const cp_event *e = &inc->events[i];
        const cp_rule *r = rule_of(inc, e);
        if (e != hw && r && r->role == CP_ROLE_ROOT && r->kind != CP_KIND_GPU_HARDWARE && !e->in_table &&
            near_in_time(e, hw) && closeness(inc, e, hw) == 2)
            err = e;
    }
    char what[160], after[160] = "";
    hw_label(hr, xid, what, sizeof what);
    if (err && timed(&err->origin.time) && timed(&hw->origin.time))
        snprintf(after, sizeof after, "; the rank's %s %.1f s %s is its consequence",
                 cp_kind_name(rule_of(inc, err)->kind), (double)time_gap(err, hw) / 1000.0,
                 err->origin.time.ms >= hw->origin.time.ms ? "later" : "earlier");
    int conf = d->first_rank >= 0 && event_rank(inc, hw) == d->first_rank ? 90 : 75;
    cp_diag_note(d, "%s%s%s is on %s: NVIDIA attributes it to the hardware%s (confidence %d%%).", what,
                 busid ? " at PCI " : "", busid ? busid : "",
                 conf == 90 ? "the failing rank's own GPU" : "the failing host", after, conf);
}

static void note_app_xid(cp_diagnosis *d, const cp_incident *inc, const cp_event *root, const cp_event *x)
{
    const char *xid = cp_capset_get(&x->caps, "xid");
    cp_diag_note(d, "Xid %s on the same %s is what an application fault produces; no hardware Xid was logged, so "
                    "the %s is the program's, not the GPU's (confidence %d%%).",
                 xid, closeness(inc, root, x) == 2 ? "GPU" : "host", cp_kind_name(rule_of(inc, root)->kind),
                 d->confidence);
    if (d->owner == CP_OWNER_UNKNOWN || d->owner == CP_OWNER_HARDWARE)
        d->owner = CP_OWNER_USER_CODE;
    add_evidence(d, inc, x);
}

/* Fabric errors that concentrate on one host point at that host's link
 * rather than at the program. A fabric error is a communication error
 * whose rule blames the infrastructure (NET/IB completions, resets,
 * failed connects): NCCL's CUDA failures inside its transports, a proxy
 * giving up or a peer closing its socket say nothing about this host's
 * link. */
enum { FABRIC_MIN = 3 };

typedef struct host_count {
    const char *host;
    uint32_t n;
} host_count;

static void fabric_concentration(cp_diagnosis *d, const cp_incident *inc)
{
    host_count *hc = NULL;
    size_t n_hc = 0, cap = 0;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        const cp_rule *r = rule_of(inc, e);
        const char *h = event_host(inc, e);
        if (!r || r->kind != CP_KIND_NCCL_COMM_ERROR || r->owner != CP_OWNER_INFRASTRUCTURE || vague(inc, e) ||
            e->in_table || !h[0])
            continue;
        size_t k = 0;
        while (k < n_hc && strcmp(hc[k].host, h) != 0)
            k++;
        if (k == n_hc) {
            if (n_hc == cap) {
                cap = cap ? cap * 2 : 16;
                host_count *p = realloc(hc, cap * sizeof *p);
                if (!p)
                    break;
                hc = p;
            }
            hc[n_hc++] = (host_count){h, 0};
        }
        hc[k].n++;
    }
    size_t top = 0;
    uint32_t second = 0;
    for (size_t k = 1; k < n_hc; k++)
        if (hc[k].n > hc[top].n)
            top = k;
    for (size_t k = 0; k < n_hc; k++)
        if (k != top && hc[k].n > second)
            second = hc[k].n;
    if (n_hc && hc[top].n >= FABRIC_MIN && hc[top].n >= 2 * second) {
        d->owner = CP_OWNER_INFRASTRUCTURE;
        cp_diag_note(d, "%u fabric errors came from %s against at most %u from any other host: the fault points at "
                        "%s's network link (confidence %d%%).",
                     hc[top].n, hc[top].host, second, hc[top].host, d->confidence);
    }
    free(hc);
}

/* ---- hangs: only consequences were printed -------------------------------- */

typedef struct hang_facts {
    int culprit;       /* from a desync report */
    int lagging;       /* from watchdog sequence numbers */
    cp_collectives ops;      /* ranks in different kinds of collective */
    int behind;              /* the one rank whose last step is behind, every rank having logged one */
    int saving;        /* a rank that began a save and never ended it */
    int silent;        /* the one rank that printed no error */
    cp_odd_waiter waiter;    /* the one rank that timed out waiting in another phase */
    bool save_near;    /* a checkpoint save just before the stall */
    bool any_timeout;
} hang_facts;

/* Printed at the same moment: the same time, to the millisecond. */
static bool same_time(const cp_event *a, const cp_event *b)
{
    return timed(&a->origin.time) && timed(&b->origin.time) && a->origin.time.ms == b->origin.time.ms;
}

/* How long after a vague line (no kind: "Some NCCL operations have
 * failed or timed out", printed first since PyTorch 2.6; or NCCL's trace
 * of a failed call) the same writer's line that says more may come, and
 * speak for it; without times, how many lines below it in the same log. */
enum { BURST_MS = 1000, BURST_LINES = 8 };

/* How far after `e` the event x comes: in ms when `e` has a time (x must
 * have one too), else in lines of `e`'s stream; -1 when x is not after
 * `e` within the burst. */
static int64_t after_in_burst(const cp_event *e, const cp_event *x)
{
    if (timed(&e->origin.time)) {
        int64_t gap = timed(&x->origin.time) ? x->origin.time.ms - e->origin.time.ms : -1;
        return gap >= 0 && gap <= BURST_MS ? gap : -1;
    }
    if (x->stream != e->stream || x->line <= e->line || x->line - e->line > BURST_LINES)
        return -1;
    return (int64_t)(x->line - e->line);
}

/* For a vague `e`, the first event `want` accepts that is not vague, in
 * the burst after `e`: printed by `e`'s writer, or (without times, when
 * that writer names no rank) by any; `e` itself when none was, or when
 * `e` is not vague. */
static const cp_event *kind_in_burst(const cp_incident *inc, bool (*want)(const cp_incident *, const cp_event *, int),
                                     int rank, const cp_event *e)
{
    if (!vague(inc, e))
        return e;
    bool any_writer = !timed(&e->origin.time) && (e->writer < 0 || inc->writers[e->writer].rank < 0);
    if (!any_writer && e->writer < 0)
        return e;
    const cp_event *named = e;
    int64_t nearest = 0;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *x = &inc->events[i];
        int64_t gap = after_in_burst(e, x);
        if (gap < 0 || x->in_table || (!any_writer && x->writer != e->writer) || vague(inc, x) ||
            !want(inc, x, rank))
            continue;
        if (named == e || gap < nearest) {
            named = x;
            nearest = gap;
        }
    }
    return named;
}

/* The earliest event `want` accepts (untimed ones only when none is
 * timed, then in log order); of several printed in the same
 * millisecond, the most specific rule's; of a vague line, the line its
 * writer printed right after it that says more. Copies in a
 * failure table are left out. */
static const cp_event *first_of(const cp_incident *inc, bool (*want)(const cp_incident *, const cp_event *, int),
                                int rank)
{
    const cp_event *best = NULL;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        if (e->in_table || !want(inc, e, rank))
            continue;
        if (!best || (timed(&e->origin.time) && (!timed(&best->origin.time) || e->origin.time.ms < best->origin.time.ms)))
            best = e;
        else if (same_time(e, best) && weight_of(inc, e) > weight_of(inc, best))
            best = e;   /* one moment, several lines: the most specific names it */
        else if (!timed(&e->origin.time) && !timed(&best->origin.time) && e->stream == best->stream &&
                 e->line < best->line)
            best = e;   /* events are in the order they closed, not in the log's */
    }
    return best ? kind_in_burst(inc, want, rank, best) : NULL;
}

static bool reports_consequence(const cp_incident *inc, const cp_event *e, int rank)
{
    (void)rank;
    cp_role role = role_of(inc, e);
    return role == CP_ROLE_CASCADE || role == CP_ROLE_CULPRIT;
}

static const cp_event *first_cascade(const cp_incident *inc)
{
    return first_of(inc, reports_consequence, -1);
}

static void gather_hang_facts(const cp_incident *inc, hang_facts *h, int64_t *low, int64_t *high, bool *save_unattr)
{
    memset(h, 0, sizeof *h);
    h->culprit = cp_suspect_named(inc);
    h->lagging = cp_suspect_lagging(inc, low, high);
    cp_suspect_collectives(inc, &h->ops);
    h->behind = cp_suspect_least_progress(inc, true);
    h->saving = cp_suspect_saving(inc, save_unattr);
    h->silent = cp_suspect_silent(inc, true);
    cp_suspect_odd_waiter(inc, &h->waiter);
    h->save_near = cp_save_before_stall(inc);
    h->any_timeout = any_timeout(inc);
}

/* A timed-out collective as the notes name it: its type, and its size
 * when the other side's type is the same (ALLREDUCE of 419044352
 * elements). */
static void describe_collective(const cp_event *e, const cp_event *other, char *out, size_t n)
{
    const char *op = cp_capset_get(&e->caps, "optype");
    const char *numel = cp_capset_get(&e->caps, "numel");
    const char *other_op = cp_capset_get(&other->caps, "optype");
    if (numel && other_op && op && strcmp(op, other_op) == 0)
        snprintf(out, n, "%s of %s elements", op, numel);
    else
        snprintf(out, n, "%s", op ? op : "?");
}

static int choose_hang_rank(cp_diagnosis *d, const cp_incident *inc, const hang_facts *h, int64_t low, int64_t high,
                            bool save_unattr)
{
    if (h->culprit >= 0) {
        const char *how = cp_suspect_named_how(inc, h->culprit);
        const cp_event *by = cp_suspect_named_by(inc, h->culprit);
        if (how)
            cp_diag_note(d, "Flight Recorder: %s.", how);
        else if (by && by->text)
            cp_diag_note(d, "The log names rank %d as the rank the others waited for: %s", h->culprit,
                         by->text);
        else
            cp_diag_note(d, "The log names rank %d as the rank the others waited for.", h->culprit);
        d->confidence = 85;
        return h->culprit;
    }
    if (h->lagging >= 0) {
        cp_diag_note(d, "Rank %d is behind the other ranks in their collectives: it waits in work %lld while they "
                        "went on (as far as %lld) and timed out waiting for it.",
                     h->lagging, (long long)low, (long long)high);
        d->confidence = 80;
        return h->lagging;
    }
    if (h->ops.odd) {
        int rank = event_rank(inc, h->ops.odd);
        char odd[96], usual[96];
        describe_collective(h->ops.odd, h->ops.usual, odd, sizeof odd);
        describe_collective(h->ops.usual, h->ops.odd, usual, sizeof usual);
        cp_diag_note(d, "Rank %d timed out in %s while every other rank that reported timed out in %s: they were in "
                        "different collectives.", rank, odd, usual);
        d->confidence = 70;
        return rank;
    }
    if (h->waiter.wait) {
        int rank = event_rank(inc, h->waiter.wait);
        cp_diag_note(d, "Rank %d timed out waiting in a collective it called in %s, while every other rank that timed "
                        "out waited in one called in %s: they were in different collectives.", rank,
                     cp_phase_name(h->waiter.odd), cp_phase_name(h->waiter.usual));
        d->confidence = 65;
        return rank;
    }
    if (h->saving >= 0) {
        cp_diag_note(d, "Rank %d began a checkpoint save and never logged its end.", h->saving);
        d->confidence = 75;
        return h->saving;
    }
    if (h->behind >= 0) {
        cp_diag_note(d, "Rank %d's last logged step is behind every other rank's: it stopped first, and the others "
                        "timed out waiting for it.", h->behind);
        d->confidence = 65;
        return h->behind;
    }
    if (h->silent >= 0) {
        cp_diag_note(d, "Rank %d printed no error while every other rank failed waiting: it is the one they waited for.",
             h->silent);
        d->confidence = 65;
        return h->silent;
    }
    if (save_unattr && (h->save_near || h->saving < 0)) {
        cp_diag_note(d, "The checkpoint save line carries no rank; frameworks log saves from rank 0, so rank 0 is the "
                "likely laggard.");
        d->confidence = 40;
        return 0;
    }
    return -1;
}

/* Ranks stopped at one collective sequence number in different types of
 * collective, none of them alone: both sides as evidence. */
static void note_split(cp_diagnosis *d, const cp_incident *inc, const cp_collectives *ops)
{
    char a[96], b[96];
    describe_collective(ops->split_a, ops->split_b, a, sizeof a);
    describe_collective(ops->split_b, ops->split_a, b, sizeof b);
    add_evidence(d, inc, ops->split_a);
    add_evidence(d, inc, ops->split_b);
    cp_diag_note(d, "Rank %d timed out in %s and rank %d in %s at the same point: the ranks called different "
                    "collectives.", event_rank(inc, ops->split_a), a, event_rank(inc, ops->split_b), b);
}

/* A stall whose cause the ranks' logs do not show, on a host whose own
 * logs show an infrastructure problem (a context rule kept for the
 * analysis and owned by infrastructure: a task hung in I/O, NFS or Lustre
 * losing its server): the infrastructure held the rank up. Takes the
 * first such event on the stalled rank's host. */
static void owner_from_host_trouble(cp_diagnosis *d, const cp_incident *inc)
{
    if (!d->hang || d->owner != CP_OWNER_UNKNOWN || !d->host[0])
        return;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        const cp_rule *r = rule_of(inc, e);
        if (!r || r->role != CP_ROLE_CONTEXT || !r->keep || r->owner != CP_OWNER_INFRASTRUCTURE ||
            strcmp(event_host(inc, e), d->host) != 0)
            continue;
        d->owner = CP_OWNER_INFRASTRUCTURE;
        add_evidence(d, inc, e);
        cp_diag_note(d, "%s's own logs show an infrastructure problem while it was stuck: %s", d->host,
                     e->text ? e->text : "(see the evidence)");
        return;
    }
}

/* A run that just ended (cancelled, out of wall time, or no error at all)
 * with one rank clearly behind the others: a hang that no watchdog
 * reported. Where the rank was comes from its last phase line or a stack
 * dump of it (py-spy). */
static void verdict_from_stall(cp_diagnosis *d, const cp_incident *inc, const cp_stall *st)
{
    d->failed = true;
    d->hang = true;
    d->first_rank = st->rank;
    d->owner = CP_OWNER_UNKNOWN;
    d->phase = CP_PHASE_UNKNOWN;
    d->confidence = 60;
    if (st->step_behind)
        cp_diag_note(d, "No rank reported an error, but rank %d's last logged step is %lld while every other rank "
                        "reached %lld: it stopped first and the others waited for it.",
                     st->rank, (long long)st->its_step, (long long)st->others_step);
    else
        cp_diag_note(d, "No rank reported an error, but rank %d's last line is %lld minutes older than any other "
                        "rank's: it stopped first and the others waited for it.",
                     st->rank, (long long)(st->gap_ms / 60000));
    const cp_writer *w = st->phase_writer >= 0 ? &inc->writers[st->phase_writer] : NULL;
    bool saving = w && cp_phase_open(w) == CP_PHASE_CHECKPOINT_SAVE;
    conclude(d, inc, saving ? "engine.checkpoint_stall" : "engine.progress_stall");
    if (d->kind == CP_KIND_NONE)
        d->kind = saving ? CP_KIND_CHECKPOINT_HANG : CP_KIND_NCCL_TIMEOUT;
    if (w && w->phase != CP_PHASE_NONE) {
        d->phase = w->phase;
        if (w->phase_text)
            cp_diag_note(d, "Rank %d's last phase line%s: %s", st->rank,
                         w->phase_state == CP_STATE_END ? "" : " (it never logged the end)", w->phase_text);
    }
    if (!d->signature && w && w->phase_text)
        d->signature = cp_strdup(w->phase_text);
    for (size_t i = 0; i < inc->n_writers; i++)
        if (inc->writers[i].rank == st->rank && inc->writers[i].id.host[0])
            snprintf(d->host, sizeof d->host, "%s", inc->writers[i].id.host);
    const cp_event *stack = cp_stack_of_rank(inc, st->rank);
    if (stack) {
        cp_phase p = cp_phase_from_frames(inc, stack);
        if (p != CP_PHASE_NONE)
            d->phase = p;
        d->owner = owner_from_frames(stack);
        add_evidence(d, inc, stack);
        cp_diag_note(d, "A stack dump shows where the stuck rank was.");
    }
    owner_from_host_trouble(d, inc);
}

/* The rule that began a stack event, when it stands for a raised error
 * (a traceback rule with a kind: Python's "Traceback (most recent call
 * last)"; a frame rule with one, for a traceback whose header the paste
 * cut); NULL for a dump of a live process (faulthandler, py-spy), whose
 * rules have none. Read again from the stack's first line. */
static const cp_rule *raised_by(const cp_incident *inc, const cp_event *e)
{
    if (!inc->matcher || e->n_ev == 0 || !e->ev[0].text)
        return NULL;
    cp_line_hits h;
    if (cp_matcher_line(inc->matcher, e->ev[0].text, strlen(e->ev[0].text), &h) != 0)
        return NULL;
    for (uint32_t i = 0; i < h.n_rules; i++) {
        const cp_rule *r = &inc->cat->rules[h.rules[i]];
        if ((r->role == CP_ROLE_TRACEBACK || r->role == CP_ROLE_FRAME) && r->kind != CP_KIND_NONE)
            return r;
    }
    return NULL;
}

static bool cut_python_traceback(const cp_incident *inc, const cp_event *e, int rank)
{
    (void)rank;
    return e->rule == CP_RULE_STACK && e->ends_input && raised_by(inc, e);
}

/* The earliest Python traceback its stream ends in with no error line
 * (a paste cut short, or an exception no rule names), or NULL; *raised is
 * the rule that began it. */
static const cp_event *first_cut_traceback(const cp_incident *inc, const cp_rule **raised)
{
    const cp_event *first = first_of(inc, cut_python_traceback, -1);
    if (first)
        *raised = raised_by(inc, first);
    return first;
}

/* The `cut` rule whose if_frame a frame of the traceback matches (the
 * heaviest), or NULL: a traceback cut off inside torch.save is still a
 * failed save. */
static const cp_rule *cut_rule_of(const cp_incident *inc, const cp_event *e)
{
    const cp_rule *best = NULL;
    for (size_t i = 0; inc->matcher && i < inc->cat->n_rules; i++) {
        const cp_rule *r = &inc->cat->rules[i];
        if (r->cut && (!best || r->weight > best->weight) &&
            cp_frames_match(inc, (uint32_t)i, e->frames, e->n_frames, UINT64_MAX))
            best = r;
    }
    return best;
}

/* No error line at all, but a rank's traceback that the input ends in
 * (cut off before its exception line, or ending in one no rule names):
 * the rank raised, and its frames and phase lines say where, though not
 * what, unless a `cut` rule's frames do. The frames may be the outer
 * ones only, so they say whose code raised only when they already run
 * deep into a library (owner_from_cut_frames). */
static void verdict_from_cut_traceback(cp_diagnosis *d, const cp_incident *inc, const cp_event *e,
                                       const cp_rule *raised)
{
    d->failed = true;
    d->first_rank = event_rank(inc, e);
    if (d->first_rank < 0)
        d->first_rank = cp_single_known_rank(inc);
    d->confidence = 30;
    conclude(d, inc, "engine.cut_traceback");
    d->kind = raised->kind;
    d->owner = owner_from_cut_frames(e);
    d->phase = cp_phase_of_event(inc, e);
    const cp_rule *where = cut_rule_of(inc, e);
    if (where) {   /* its frames say what was being done */
        name_by_rule(d, where);
        cp_diag_note(d, "The traceback is cut off before its error line; its frames are those of: %s.",
                     where->title ? where->title : where->id);
    }
    d->signature = cp_strdup(e->text ? e->text : "");
    d->first_time = cp_format_time(inc, &e->origin.time);
    set_host(d, inc, e);
    add_evidence(d, inc, e);
    if (d->first_rank >= 0)
        cp_diag_note(d, "The input ends in rank %d's traceback with no error line that a rule names: cut off before "
                        "its exception line, or raising an exception culprit does not know.", d->first_rank);
    else
        cp_diag_note(d, "The input ends in a traceback with no error line that a rule names: cut off before its "
                        "exception line, or raising an exception culprit does not know.");
}

/* A stack of Python frames (a file each), not a C++ exception's. */
static bool python_frames(const cp_event *e)
{
    for (size_t i = 0; i < e->n_frames; i++)
        if (e->frames[i].file)
            return true;
    return false;
}

static bool live_dump(const cp_incident *inc, const cp_event *e, int rank)
{
    (void)rank;
    return e->rule == CP_RULE_STACK && python_frames(e) && !raised_by(inc, e);
}

/* No error line, but a stack dump of a live process (faulthandler,
 * py-spy): nobody dumps a process that runs well, so it is a hang, and
 * the dump's frames say where. Which rank stalled first a dump does not
 * say, even when only one rank was dumped (it may be one that waited). */
static void verdict_from_live_dump(cp_diagnosis *d, const cp_incident *inc, const cp_event *first)
{
    d->failed = true;
    d->hang = true;
    d->confidence = 25;
    conclude(d, inc, "engine.live_stack_dump");
    d->owner = CP_OWNER_UNKNOWN;
    d->phase = CP_PHASE_UNKNOWN;
    const cp_event *shown = first;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        cp_phase p = live_dump(inc, e, -1) ? cp_phase_from_frames(inc, e) : CP_PHASE_NONE;
        if (p != CP_PHASE_NONE) {
            d->phase = p;
            shown = e;
            break;
        }
    }
    /* as with a run stopped by hand: stuck inside a save, the save stalled */
    if (d->phase == CP_PHASE_CHECKPOINT_SAVE) {
        d->kind = CP_KIND_CHECKPOINT_HANG;
        cp_diag_note(d, "The dump shows the process inside a checkpoint save: the save had stalled.");
    }
    const cp_stackframe *top = &shown->frames[0];   /* dumps list the innermost frame first */
    d->signature = cp_strdup(top->text ? top->text : shown->text ? shown->text : "");
    d->first_time = cp_format_time(inc, &shown->origin.time);
    set_host(d, inc, shown);
    add_evidence(d, inc, shown);
    int rank = event_rank(inc, shown);
    if (rank >= 0)
        cp_diag_note(d, "No line names an error; rank %d's stack was dumped while it ran, at: %s", rank,
                     d->signature);
    else
        cp_diag_note(d, "No line names an error; a process's stack was dumped while it ran, at: %s", d->signature);
}

/* The one event a conclusion rests on: its rank, line, time and host. */
static void take_event(cp_diagnosis *d, const cp_incident *inc, const cp_event *e)
{
    d->first_rank = event_rank(inc, e);
    d->signature = cp_strdup(e->text ? e->text : "");
    d->first_time = cp_format_time(inc, &e->origin.time);
    set_host(d, inc, e);
    add_evidence(d, inc, e);
}

/* Whether e was printed before `first`: above it in the same file, or
 * earlier by the clock. */
static bool printed_before(const cp_event *e, const cp_event *first)
{
    if (e->stream == first->stream)
        return e->line < first->line;
    return timed(&e->origin.time) && timed(&first->origin.time) && e->origin.time.ms <= first->origin.time.ms;
}

/* A line the analysis keeps that says the training's numbers went
 * non-finite (a NaN loss or gradient norm in a progress line). */
static bool nonfinite_numbers(const cp_incident *inc, const cp_event *e, int rank)
{
    (void)rank;
    const cp_rule *r = rule_of(inc, e);
    return r && r->role == CP_ROLE_CONTEXT && r->keep && r->kind == CP_KIND_LOSS_SCALE_FLOOR;
}

/* A non-finite loss or gradient norm that `rank` itself logged. */
static bool nonfinite_of_rank(const cp_incident *inc, const cp_event *e, int rank)
{
    return nonfinite_numbers(inc, e, rank) && event_rank(inc, e) == rank;
}

/* The first non-finite loss or gradient norm, when it was printed before
 * the cut traceback `cut` (above it in its file, or earlier in time);
 * NULL otherwise. */
static const cp_event *nonfinite_before(const cp_incident *inc, const cp_event *cut)
{
    const cp_event *e = first_of(inc, nonfinite_numbers, -1);
    return e && printed_before(e, cut) ? e : NULL;
}

static void verdict_from_nonfinite(cp_diagnosis *d, const cp_incident *inc, const cp_event *first);

/* A traceback cut off before its error line, after the loss went NaN or
 * Inf: the run stopped on the non-finite numbers (a NaN check, a loss
 * scaler giving up), which say more than a traceback without its error. */
static void verdict_from_nonfinite_then_cut(cp_diagnosis *d, const cp_incident *inc, const cp_event *nan,
                                           const cp_event *cut)
{
    verdict_from_nonfinite(d, inc, nan);
    add_evidence(d, inc, cut);
    cp_diag_note(d, "A traceback follows at line %llu, cut off before its error line: the run stopped after the "
                    "numbers went non-finite.", (unsigned long long)cut->line);
}

/* Nothing raised and nothing stalled, but the loss or the gradient norm
 * went NaN or Inf and the run went on: its numbers are garbage from that
 * step on, which is the failure to report. The first rank to print one is
 * the first known to have diverged. */
static void verdict_from_nonfinite(cp_diagnosis *d, const cp_incident *inc, const cp_event *first)
{
    d->failed = true;
    d->confidence = 40;
    conclude(d, inc, "engine.nonfinite_training");
    const cp_rule *r = rule_of(inc, first);   /* a NaN loss: forward */
    d->phase = r && r->phase != CP_PHASE_NONE ? r->phase : CP_PHASE_UNKNOWN;
    take_event(d, inc, first);
    cp_diag_note(d, "No line names an error, but the loss or the gradient norm went NaN or Inf: %s",
                 d->signature);
}


/* The last set-up line of the input, when no writer logged a training
 * step: the run never got past set-up. NULL otherwise. */
static const cp_event *unfinished_setup(const cp_incident *inc)
{
    if (any_progress(inc))
        return NULL;
    const cp_event *last = NULL;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        if (setup_line(inc, e) &&
            (!last || e->stream > last->stream || (e->stream == last->stream && e->line > last->line)))
            last = e;
    }
    return last;
}

/* Marks in joined[0, n) the ranks that printed a set-up line of their own
 * ("GLOBAL_RANK: 3", "for rank: 3"); returns how many did. */
static int ranks_set_up(const cp_incident *inc, bool *joined, int n)
{
    int count = 0;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        int64_t r = setup_line(inc, e) ? cap_i64(&e->caps, "joined_rank", -1) : -1;
        if (r >= 0 && r < n && !joined[r]) {
            joined[r] = true;
            count++;
        }
    }
    return count;
}

/* The ranks of a stated world that printed no set-up line, as ranges into
 * `absent`, when some did and some did not. */
static bool ranks_not_set_up(const cp_incident *inc, char *absent, size_t len)
{
    int n = inc->world_size_stated;
    if (n < 2 || n > CP_MAX_RANK_ROWS)
        return false;
    bool *joined = calloc((size_t)n, sizeof *joined);
    if (!joined)
        return false;
    int count = ranks_set_up(inc, joined, n);
    if (count > 0 && count < n)
        cp_absent_ranges(joined, (size_t)n, absent, len);
    free(joined);
    return count > 0 && count < n;
}

/* Nothing raised, nothing timed out and no training step: the input ends
 * while the ranks set up their process group, where each waits for the
 * whole world. A stall there (or a log cut there); which ranks never
 * printed their set-up line, where the world is stated, is the lead. */
static void verdict_from_setup(cp_diagnosis *d, const cp_incident *inc, const cp_event *last)
{
    d->failed = true;
    d->hang = true;
    d->confidence = 30;
    conclude(d, inc, "engine.setup_unfinished");
    take_event(d, inc, last);
    d->first_rank = -1;
    cp_diag_note(d, "No error and no training step: the input ends during the process group's set-up, after this "
                    "line: %s", d->signature);
    char absent[128];
    if (ranks_not_set_up(inc, absent, sizeof absent))
        cp_diag_note(d, "Of the %d ranks the input states, ranks %s printed no set-up line: the others were waiting "
                        "for them.", inc->world_size_stated, absent);
}

/* The first row of torchrun's failure table (its "Root Cause"), or NULL.
 * first_of passes over such rows: elsewhere they only repeat what the
 * ranks printed. */
static const cp_event *first_table_row(const cp_incident *inc)
{
    const cp_event *best = NULL;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        cp_role role = role_of(inc, e);
        if (!e->in_table || (role != CP_ROLE_ROOT && role != CP_ROLE_CASCADE))
            continue;
        if (!best || e->stream < best->stream || (e->stream == best->stream && e->line < best->line))
            best = e;
    }
    return best;
}

/* Nothing but the launcher's failure table: the ranks' own output is not
 * in the input, and the table's first row still says which rank failed
 * first and how it ended. */
static void verdict_from_table(cp_diagnosis *d, const cp_incident *inc, const cp_event *row)
{
    d->failed = true;
    d->confidence = 35;
    name_by_rule(d, rule_of(inc, row));
    if (d->owner == CP_OWNER_AUTO)
        d->owner = CP_OWNER_UNKNOWN;
    if (d->phase == CP_PHASE_NONE)
        d->phase = CP_PHASE_UNKNOWN;
    take_event(d, inc, row);
    cp_diag_note(d, "Only the launcher's failure table reports the failure; the failing rank's own output is not "
                    "in the input.");
}

/* Ranks stuck in a start-up barrier wait for the rank still setting up.
 * When no evidence named it and every rank that timed out is above 0,
 * that is rank 0, which does the set-up work first under
 * main_process_first and the like. */
static void startup_rank(cp_diagnosis *d, int lowest_timed_out)
{
    if (d->first_rank >= 0 || lowest_timed_out <= 0)
        return;
    d->first_rank = 0;
    d->confidence = 45;
    cp_diag_note(d, "Rank 0 did not time out in the start-up barrier while rank %d and others did: rank 0 was most "
                    "likely still setting up (preparing the dataset first, as main_process_first does).",
                 lowest_timed_out);
}

/* A stall's phase from the phase line it came after (p, from w:
 * cp_phase_before_stall, the stalled rank's or the line right above the
 * first timeout). */
static void phase_of_stall(cp_diagnosis *d, cp_phase p, const cp_writer *w)
{
    if (p == CP_PHASE_NONE)
        return;
    d->phase = p;
    if (w && w->phase_text)
        cp_diag_note(d, "The stall came after this phase line (%s): %s", cp_phase_name(p), w->phase_text);
}

/* A phase rule with a kind says what a stall inside its phase is (an
 * extension build that never finished waits on a stale lock): when the
 * phase line the stall came after (w's, or NULL) is such a rule's, the
 * verdict takes that rule's kind and texts instead of a bare collective
 * timeout. */
static void stall_in_kinded_phase(cp_diagnosis *d, const cp_incident *inc, const cp_writer *w)
{
    if (d->kind != CP_KIND_NCCL_TIMEOUT || !w || w->phase_rule >= inc->cat->n_rules)
        return;
    const cp_rule *r = &inc->cat->rules[w->phase_rule];
    if (r->kind == CP_KIND_NONE)
        return;
    name_by_rule(d, r);
    if (w->phase_text)
        cp_diag_note(d, "The ranks stopped inside this step and never printed its end: %s", w->phase_text);
}

/* Only an interrupt by hand (the `interrupted` capture: Ctrl-C,
 * KeyboardInterrupt) and nothing raised before it: a run stopped by hand
 * had, as a rule, stopped making progress. Where the interrupt found the
 * ranks says where; inside a checkpoint save it is a stalled save. */
static void verdict_from_interrupt(cp_diagnosis *d, const cp_incident *inc, const cp_event *first)
{
    d->hang = true;
    d->confidence = 35;
    conclude(d, inc, "engine.interrupted");
    d->owner = CP_OWNER_UNKNOWN;
    d->phase = cp_phase_of_event(inc, first);
    const cp_writer *w = NULL;
    if (d->phase == CP_PHASE_UNKNOWN) {
        cp_phase p = cp_phase_before_stall(inc, -1, &w);
        if (p != CP_PHASE_NONE)
            d->phase = p;
    }
    if (d->phase == CP_PHASE_CHECKPOINT_SAVE) {
        d->kind = CP_KIND_CHECKPOINT_HANG;
        cp_diag_note(d, "The run was stopped by hand inside a checkpoint save: the save had stalled.");
    } else {
        cp_diag_note(d, "The run was stopped by hand (Ctrl-C) with no error before it: it had, as a rule, stopped "
                        "making progress.");
    }
    if (w && w->phase_text)
        cp_diag_note(d, "The last phase line before it: %s", w->phase_text);
}

/* The ranks that timed out agree where they waited (phases.c). */
static void note_waiters(cp_diagnosis *d, cp_phase waited_in, int waiter)
{
    if (waiter >= 0)
        cp_diag_note(d, "The ranks that timed out were waiting in %s (rank %d's traceback shows where).",
                     cp_phase_name(waited_in), waiter);
    else
        cp_diag_note(d, "The ranks that timed out were waiting in %s (their tracebacks show where).",
                     cp_phase_name(waited_in));
}

/* The rank that left without an error may have left a stack (faulthandler
 * on SIGABRT or SIGSEGV): where it died is the phase. */
static void stack_of_the_rank_that_left(cp_diagnosis *d, const cp_incident *inc, int rank)
{
    const cp_event *stack = cp_stack_of_rank(inc, rank);
    if (!stack || event_rank(inc, stack) != rank)
        return;
    add_evidence(d, inc, stack);
    cp_phase p = cp_phase_from_frames(inc, stack);
    if (p == CP_PHASE_NONE)
        return;
    d->phase = p;
    cp_diag_note(d, "Rank %d's stack dump shows where it was when it died (%s).", rank, cp_phase_name(p));
}

/* Nothing but consequences, and a failure table in which one rank exited
 * with an error before the launcher stopped the others: that rank, whose
 * own output is not in the input. The table's lines that the shutdown
 * ended are the evidence beside the consequence already taken. */
static void verdict_from_exit_before_shutdown(cp_diagnosis *d, const cp_incident *inc, const cp_table_entry *own)
{
    d->first_rank = own->rank;
    d->confidence = 40;
    conclude(d, inc, "engine.exit_before_shutdown");
    free(d->first_time);
    d->first_time = cp_format_time(inc, &own->time);
    for (size_t i = 0; i < inc->n_events; i++)
        if (ended_by_shutdown(inc, &inc->events[i], own))
            add_evidence(d, inc, &inc->events[i]);
    char code[32] = "an error";
    if (own->exitcode > 0)
        snprintf(code, sizeof code, "code %d", own->exitcode);
    cp_diag_note(d, "torchrun's failure table shows rank %d exiting with %s before the others ended by SIGTERM "
                    "or SIGKILL: the launcher stopped them once rank %d had failed.",
                 own->rank, code, own->rank);
}

/* The first error a rank logged as it gave up (log.fatal_error) before
 * the first consequence `first`, or NULL: training code that logs an
 * error and exits rather than raising leaves only that line. */
static const cp_event *logged_error_before(const cp_incident *inc, const cp_event *first)
{
    int rule = cp_catalog_find(inc->cat, "log.fatal_error");
    const cp_event *best = NULL;
    for (size_t i = 0; rule >= 0 && i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        if (e->rule != (uint32_t)rule || e->in_table || event_rank(inc, e) < 0 || !printed_before(e, first))
            continue;
        if (!best || printed_before(e, best))
            best = e;
    }
    return best;
}

/* Every error printed is a consequence of a peer going away, and before
 * them one rank logged an error: that rank left, and its line says why. */
static void verdict_from_logged_error(cp_diagnosis *d, const cp_incident *inc, const cp_event *said)
{
    conclude(d, inc, "engine.logged_error_exit");
    free(d->signature);
    free(d->first_time);
    d->first_rank = event_rank(inc, said);
    d->signature = cp_strdup(said->text ? said->text : "");
    d->first_time = cp_format_time(inc, &said->origin.time);
    set_host(d, inc, said);
    add_evidence_first(d, inc, said);
    cp_diag_note(d, "Every error printed is a consequence of a peer going away; before them rank %d logged an "
                    "error and raised none, so it is the peer that left: %s",
                 d->first_rank, d->signature);
}

/* The phase every writer's open phase line agrees on, if they agree. */
static void take_agreed_phase(cp_diagnosis *d, const cp_incident *inc)
{
    cp_phase p = cp_phase_open_agreed(inc);
    if (p == CP_PHASE_NONE)
        return;
    d->phase = p;
    cp_diag_note(d, "The ranks' last phase lines all say %s.", cp_phase_name(p));
}

/* When a run was ended from outside: the time the ending line states (a
 * scheduler's "CANCELLED AT <time>", captured as ended_at), or the line's
 * own time for a signal the launcher received (captured as ended_by). */
static bool end_time(const cp_event *end, cp_time *ended)
{
    const char *at = cp_capset_get(&end->caps, "ended_at");
    if (at)
        return cp_time_parse(at, strlen(at), ended) > 0 && ended->kind == CP_TS_ABS;
    if (!cp_capset_get(&end->caps, "ended_by") || end->time_estimated || end->origin.time.kind != CP_TS_ABS)
        return false;
    *ended = end->origin.time;
    return true;
}

/* The writer whose training step is the newest the input logged before
 * the run was ended from outside (end_time), when that step came
 * QUIET_MIN_MS or more before the end; NULL otherwise. Slurm prints the
 * controller's local time and training logs often UTC, so a gap within
 * QUIET_TZ_SLACK_MS of a whole number of hours may be that offset and says
 * nothing. */
enum { QUIET_MIN_MS = 10 * 60 * 1000, QUIET_TZ_SLACK_MS = 3 * 60 * 1000, HOUR_MS = 3600 * 1000 };

/* Whether `gap` (from a run's last sign of work to its end from outside)
 * is at least `min_ms` and not within QUIET_TZ_SLACK_MS of whole hours. */
static bool quiet_gap(int64_t gap, int64_t min_ms)
{
    const int64_t off_hour = gap % HOUR_MS;
    return gap >= min_ms && off_hour >= QUIET_TZ_SLACK_MS && off_hour <= HOUR_MS - QUIET_TZ_SLACK_MS;
}

static const cp_writer *quiet_before_end(const cp_incident *inc, const cp_event *end, cp_time *ended, int64_t *gap_ms)
{
    if (!end_time(end, ended))
        return NULL;
    const cp_writer *newest = NULL;
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->last_step >= 0 && w->last_step_time.kind == CP_TS_ABS &&
            (!newest || w->last_step_time.ms > newest->last_step_time.ms))
            newest = w;
    }
    if (!newest)
        return NULL;
    const int64_t gap = ended->ms - newest->last_step_time.ms;
    if (!quiet_gap(gap, QUIET_MIN_MS))
        return NULL;
    *gap_ms = gap;
    return newest;
}

/* The scheduler ended a run whose ranks had all stopped long before, none
 * behind the others (cp_suspect_stalled found none): a hang the end only
 * stopped; the ranks' agreed phase is where they were. */
static void verdict_from_quiet_end(cp_diagnosis *d, const cp_incident *inc, const cp_writer *newest,
                                   const cp_time *ended, int64_t gap_ms)
{
    d->hang = true;
    d->first_rank = -1;
    conclude(d, inc, "engine.stalled_before_end");
    take_agreed_phase(d, inc);
    char *when = cp_format_time(inc, &newest->last_step_time), *end_when = cp_format_time(inc, ended);
    cp_diag_note(d, "The newest training step the ranks logged, %lld, came at %s, %lld minutes before the job was "
                    "ended at %s: the run had stopped, and the end only stopped a hang.",
                 (long long)newest->last_step, when ? when : "?", (long long)(gap_ms / 60000),
                 end_when ? end_when : "?");
    free(when);
    free(end_when);
}

/* The newest line a trainer logged that its training loop was done, with
 * the time it states (launcher.training_done captures done_at), or NULL. */
static const cp_event *training_done(const cp_incident *inc, cp_time *done)
{
    const cp_event *newest = NULL;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        const char *at = cp_capset_get(&e->caps, "done_at");
        cp_time t;
        if (!at || cp_time_parse(at, strlen(at), &t) <= 0 || t.kind != CP_TS_ABS)
            continue;
        if (!newest || t.ms > done->ms) {
            newest = e;
            *done = t;
        }
    }
    return newest;
}

/* A clean exit takes seconds; a last save or evaluation after the loop
 * logs lines of its own. */
enum { HUNG_EXIT_MIN_MS = 5 * 60 * 1000 };

/* The training loop logged its end (*done), no training step came after
 * it, and the run was ended from outside (*ended) HUNG_EXIT_MIN_MS or more
 * later (a gap of whole hours, give or take, may be time zones): the
 * event that said so, or NULL. */
static const cp_event *hung_after_training(const cp_incident *inc, const cp_event *end, cp_time *done,
                                           cp_time *ended)
{
    const cp_event *said = training_done(inc, done);
    if (!said || !end_time(end, ended))
        return NULL;
    if (!quiet_gap(ended->ms - done->ms, HUNG_EXIT_MIN_MS))
        return NULL;
    /* a step after it (training went on), or a phase begun after it and
     * never ended (a final save that stalled says more) */
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->last_step >= 0 && w->last_step_time.kind == CP_TS_ABS && w->last_step_time.ms > done->ms)
            return NULL;
        if (cp_phase_open(w) != CP_PHASE_NONE &&
            ((w->phase_time.kind == CP_TS_ABS && w->phase_time.ms > done->ms) ||
             (w->phase_stream == said->stream && w->phase_line > said->line)))
            return NULL;
    }
    return said;
}

static void verdict_from_hung_exit(cp_diagnosis *d, const cp_incident *inc, const cp_event *said,
                                   const cp_time *done, const cp_time *ended)
{
    d->hang = true;
    d->first_rank = -1;
    conclude(d, inc, "engine.hung_after_training");
    d->phase = CP_PHASE_UNKNOWN;
    add_evidence(d, inc, said);
    char *done_when = cp_format_time(inc, done), *end_when = cp_format_time(inc, ended);
    cp_diag_note(d, "The training loop logged its end at %s; nothing followed until the job was ended at %s, %lld "
                    "minutes later.",
                 done_when ? done_when : "?", end_when ? end_when : "?", (long long)((ended->ms - done->ms) / 60000));
    free(done_when);
    free(end_when);
}

/* The scheduler ended the job (its time limit, scancel) while the ranks
 * were still setting up their process group: the end says nothing of a
 * cause, the set-up that never finished does (verdict_from_setup). */
static void verdict_from_ended_setup(cp_diagnosis *d, const cp_incident *inc, const cp_event *setup)
{
    char *ended = d->signature;
    free(d->first_time);
    d->signature = NULL;
    d->first_time = NULL;
    verdict_from_setup(d, inc, setup);
    cp_diag_note(d, "The job was ended from outside while the ranks were still setting up: %s", ended);
    free(ended);
}

/* A first cascade with no kind of its own (a scheduler's cancellation, a
 * signal to the launcher) ended the run from outside; what the run did
 * before says more, in order: a rank that stopped before the others, a
 * training loop that ended minutes before, every rank quiet long before
 * the end, a set-up that never finished. Whether one of them gave the
 * verdict. */
static bool verdict_from_ending(cp_diagnosis *d, const cp_incident *inc, const cp_event *end)
{
    cp_stall st;
    if (cp_suspect_stalled(inc, &st)) {
        d->kind = CP_KIND_NONE;
        verdict_from_stall(d, inc, &st);
        return true;
    }
    cp_time done, ended;
    const cp_event *said = hung_after_training(inc, end, &done, &ended);
    if (said) {
        verdict_from_hung_exit(d, inc, said, &done, &ended);
        return true;
    }
    int64_t gap_ms = 0;
    const cp_writer *newest = quiet_before_end(inc, end, &ended, &gap_ms);
    if (newest) {
        verdict_from_quiet_end(d, inc, newest, &ended, gap_ms);
        return true;
    }
    const cp_event *setup = unfinished_setup(inc);
    if (setup) {
        verdict_from_ended_setup(d, inc, setup);
        return true;
    }
    return false;
}

static void verdict_from_cascades(cp_diagnosis *d, const cp_incident *inc, const cp_event *first)
{
    const cp_rule *r = rule_of(inc, first);
    hang_facts h;
    int64_t low, high;
    int lowest;
    bool save_unattr;
    gather_hang_facts(inc, &h, &low, &high, &save_unattr);
    d->failed = true;
    d->hang = h.any_timeout || h.culprit >= 0 || h.lagging >= 0;
    d->kind = r->kind;
    d->owner = CP_OWNER_UNKNOWN;
    d->phase = CP_PHASE_UNKNOWN;
    d->confidence = 50;
    copy_rule_texts(d, r);
    d->signature = cp_strdup(first->text ? first->text : "");
    d->first_time = cp_format_time(inc, &first->origin.time);
    add_evidence(d, inc, first);
    if (!d->hang) {
        if (cp_capset_get(&first->caps, "interrupted")) {
            verdict_from_interrupt(d, inc, first);
            return;
        }
        const cp_table_entry *own = exit_before_shutdown(inc);
        if (own) {
            verdict_from_exit_before_shutdown(d, inc, own);
            return;
        }
        const cp_event *said = logged_error_before(inc, first);
        if (said) {
            verdict_from_logged_error(d, inc, said);
            return;
        }
        int quiet = cp_suspect_silent(inc, false);
        if (quiet >= 0) {
            d->first_rank = quiet;
            conclude(d, inc, "engine.silent_exit");
            cp_diag_note(d, "Every error printed is a consequence of a peer going away; rank %d is the only rank "
                            "that printed none, so it is the peer that left.", quiet);
            if (cp_rank_exited_cleanly(inc, quiet)) {
                conclude(d, inc, "engine.left_early");
                cp_diag_note(d, "torchrun's failure table lists the ranks that failed and not rank %d, and it did "
                                "not stop it: rank %d exited with status 0 while the others were still in "
                                "collectives.", quiet, quiet);
            }
            stack_of_the_rank_that_left(d, inc, quiet);
            return;
        }
        /* the errors carry no rank, but the failure table says who failed:
         * every rank but one, which left with status 0 */
        int gone = cp_suspect_absent_from_table(inc);
        if (gone >= 0) {
            d->first_rank = gone;
            conclude(d, inc, "engine.left_early");
            cp_diag_note(d, "Every error printed is a consequence of a peer going away; torchrun's failure table "
                            "lists every rank but %d, and it did not stop rank %d: rank %d exited with status 0 "
                            "while the others were still in collectives.", gone, gone, gone);
            const cp_event *nan = first_of(inc, nonfinite_of_rank, gone);
            if (nan) {
                add_evidence(d, inc, nan);
                cp_diag_note(d, "Rank %d logged a non-finite loss or gradient norm before it left: a step it "
                                "skipped on its own (a guard that drops a bad batch) puts it out of step with "
                                "the others.", gone);
            }
            return;
        }
        if (r->kind == CP_KIND_UNKNOWN && verdict_from_ending(d, inc, first))
            return;
        d->first_rank = event_rank(inc, first);
        if (d->first_rank < 0 && only_named_rank(d, inc))
            d->confidence -= 10;
        d->phase = cp_phase_of_event(inc, first);
        if (d->phase == CP_PHASE_UNKNOWN)
            take_agreed_phase(d, inc);   /* the ranks run in step: where they all are, this one was */
        nccl_setup_phase(d, inc);
        /* a consequence's frames are not the cause's: only an owner the
         * rule states (the launcher's SIGKILL: infrastructure) stands */
        if (r->owner != CP_OWNER_AUTO)
            d->owner = r->owner;
        set_host(d, inc, first);
        return;
    }
    d->first_rank = choose_hang_rank(d, inc, &h, low, high, save_unattr);
    bool timeout_kind = d->kind == CP_KIND_NCCL_TIMEOUT || d->kind == CP_KIND_NONE;
    int waiter;
    cp_phase waited_in = cp_phase_of_waiters(inc, &waiter);
    if (h.ops.odd && d->first_rank == event_rank(inc, h.ops.odd) && timeout_kind) {
        conclude(d, inc, "engine.collective_out_of_step");
        add_evidence(d, inc, h.ops.odd);   /* the odd rank's own timeout */
    } else if (h.waiter.wait && d->first_rank == event_rank(inc, h.waiter.wait) && timeout_kind) {
        /* it waited in a collective its own code path called: that
         * traceback, and whose code made the call (the innermost frames) */
        conclude(d, inc, "engine.collective_out_of_step");
        d->phase = h.waiter.odd;
        add_evidence(d, inc, h.waiter.wait);
        d->owner = owner_from_frames(h.waiter.wait);
    } else if (h.ops.split_a && d->first_rank < 0 && timeout_kind) {
        conclude(d, inc, "engine.collectives_differ");
        note_split(d, inc, &h.ops);
    } else if ((h.saving >= 0 || h.save_near) && timeout_kind) {
        conclude(d, inc, "engine.checkpoint_stall");
        cp_diag_note(d, "The stall began at a checkpoint save: the ranks stopped right after its start.");
    } else if (waited_in == CP_PHASE_CHECKPOINT_SAVE && timeout_kind) {
        conclude(d, inc, "engine.checkpoint_stall");
        note_waiters(d, waited_in, waiter);
    } else if (timeout_kind && cp_stall_at_startup(inc, &lowest)) {
        conclude(d, inc, "engine.startup_barrier");
        startup_rank(d, lowest);
    } else if (d->first_rank >= 0 && timeout_kind) {
        conclude(d, inc, "engine.stalled_rank");
    }
    /* a report naming a rank without a kind of its own, or a line that
     * names none ("taking the process down") in a stall: the ranks waited
     * out a collective */
    if (d->kind == CP_KIND_NONE || d->kind == CP_KIND_UNKNOWN)
        d->kind = CP_KIND_NCCL_TIMEOUT;
    const cp_event *stack = cp_stack_of_rank(inc, d->first_rank);
    if (stack) {
        cp_phase p = cp_phase_from_frames(inc, stack);
        if (p != CP_PHASE_NONE && d->phase == CP_PHASE_UNKNOWN)
            d->phase = p;
        d->owner = owner_from_frames(stack);
        add_evidence(d, inc, stack);
        cp_diag_note(d, "A stack dump shows where the stuck rank was.");
    }
    const cp_writer *before = NULL;
    cp_phase phase_before = cp_phase_before_stall(inc, d->first_rank, &before);
    if (phase_before == CP_PHASE_NONE)
        before = NULL;
    if (d->phase == CP_PHASE_UNKNOWN)
        phase_of_stall(d, phase_before, before);
    /* where the others waited says where the stuck rank had not got to,
     * not where it was, once its own stack is in sight */
    if (d->phase == CP_PHASE_UNKNOWN && waited_in != CP_PHASE_NONE && !stack) {
        d->phase = waited_in;
        note_waiters(d, waited_in, waiter);
    }
    if (d->phase == CP_PHASE_UNKNOWN && !any_progress(inc) && cp_timeouts_among_first(inc)) {
        d->phase = CP_PHASE_INIT;
        cp_diag_note(d, "No rank logged a training step and the collectives that timed out were among their "
                        "group's first: the stall came during set-up.");
    }
    /* the wait that surfaced the stall says where it was (a store wait
     * for a peer's key: set-up), unless the ranks had been training (a
     * store wait mid-run is for a new communicator or a peer's check) */
    if (d->phase == CP_PHASE_UNKNOWN && r->phase != CP_PHASE_NONE &&
        !(r->phase == CP_PHASE_INIT && any_progress(inc)))
        d->phase = r->phase;
    stall_in_kinded_phase(d, inc, before);
    if (d->first_rank >= 0) {
        for (size_t i = 0; i < inc->n_writers; i++) {
            const cp_writer *w = &inc->writers[i];
            if (w->rank == d->first_rank && w->id.host[0])
                snprintf(d->host, sizeof d->host, "%s", w->id.host);
        }
    }
    owner_from_host_trouble(d, inc);
}

/* Beside the root: the first rank's own error when the root is another
 * line about it (an Xid, an OOM kill), and the first consequence seen on
 * another rank, so a reader sees both ends of the incident. */
static bool own_error(const cp_incident *inc, const cp_event *e, int rank)
{
    return rank >= 0 && event_rank(inc, e) == rank && e->rank_via == CP_VIA_LINE && role_of(inc, e) == CP_ROLE_ROOT;
}

static bool consequence_elsewhere(const cp_incident *inc, const cp_event *e, int rank)
{
    const cp_rule *r = rule_of(inc, e);
    return r && r->role == CP_ROLE_CASCADE && r->kind != CP_KIND_UNKNOWN && event_rank(inc, e) != rank;
}

static void add_corroboration(cp_diagnosis *d, const cp_incident *inc, const cp_event *root)
{
    const cp_event *own = first_of(inc, own_error, d->first_rank);
    if (own && own != root) {
        add_evidence(d, inc, own);
        /* an Xid or a kill says nothing of the phase; the rank's own
         * traceback does */
        if (d->phase == CP_PHASE_UNKNOWN)
            d->phase = cp_phase_of_event(inc, own);
    }
    const cp_event *other = first_of(inc, consequence_elsewhere, d->first_rank);
    if (other)
        add_evidence(d, inc, other);
}

/* ---- per-rank states -------------------------------------------------------- */

static cp_rank_state state_of_event(const cp_incident *inc, const cp_event *e)
{
    switch (role_of(inc, e)) {
    case CP_ROLE_ROOT: return CP_RS_ERROR;
    case CP_ROLE_CASCADE:
    case CP_ROLE_CULPRIT: return CP_RS_CASCADE; /* the reporter waited for someone else */
    default: return CP_RS_OK;
    }
}

/* A stall in set-up: the ranks that printed their set-up line were
 * waiting for the others, not silent. */
static void waiting_in_setup(cp_diagnosis *d, const cp_incident *inc, int n)
{
    bool *joined = calloc((size_t)n, sizeof *joined);
    if (!joined)
        return;
    ranks_set_up(inc, joined, n);
    for (int r = 0; r < n; r++)
        if (joined[r] && d->ranks[r].state == CP_RS_SILENT)
            d->ranks[r].state = CP_RS_OK;
    free(joined);
}

static void rank_rows(cp_diagnosis *d, const cp_incident *inc)
{
    int n = cp_ranks_extent(inc);
    if (d->first_rank >= n && d->first_rank < CP_MAX_RANK_ROWS)
        n = d->first_rank + 1; /* named by others, never heard from */
    if (n <= 0)
        return;
    d->ranks = calloc((size_t)n, sizeof *d->ranks);
    if (!d->ranks)
        return;
    d->n_ranks = (size_t)n;
    for (int r = 0; r < n; r++) {
        d->ranks[r].rank = r;
        d->ranks[r].last_step = -1;
        d->ranks[r].state = d->hang ? CP_RS_SILENT : CP_RS_OK;
    }
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->rank < 0 || w->rank >= n)
            continue;
        cp_rank_row *row = &d->ranks[w->rank];
        if (!row->host[0])
            snprintf(row->host, sizeof row->host, "%s", w->id.host);
        if (w->last_step > row->last_step)
            row->last_step = w->last_step;
        if (timed(&w->last_time)) {
            free(row->last_time);
            row->last_time = cp_format_time(inc, &w->last_time);
        }
    }
    const cp_table_entry *shutdown = exit_before_shutdown(inc);
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        int r = event_rank(inc, e);
        cp_rank_state s = state_of_event(inc, e);
        if (r < 0 || r >= n || s == CP_RS_OK)
            continue;
        /* the launcher's shutdown: the table's signal says so below */
        if (ended_by_shutdown(inc, e, shutdown))
            continue;
        cp_rank_row *row = &d->ranks[r];
        if (row->first_error && !(s == CP_RS_ERROR && row->state == CP_RS_CASCADE))
            continue;
        row->state = s;
        free(row->first_error);
        const cp_rule *rule = rule_of(inc, e);
        row->first_error = cp_strdup(rule->title ? rule->title : rule->id);
    }
    for (size_t i = 0; i < inc->n_table; i++) {
        const cp_table_entry *t = &inc->table[i];
        if (t->rank < 0 || t->rank >= n)
            continue;
        cp_rank_row *row = &d->ranks[t->rank];
        /* SIGKILL is done to a rank; SIGABRT or SIGTERM after an error of its
         * own is how the rank ended, not why */
        if (t->signal == 9 || t->exitcode == -9)
            row->state = row->state == CP_RS_ERROR ? CP_RS_ERROR : CP_RS_KILLED;
        else if ((t->exitcode != 0 || t->signal > 0) && (row->state == CP_RS_OK || row->state == CP_RS_SILENT))
            row->state = t->signal > 0 || t->exitcode < 0 ? CP_RS_KILLED : CP_RS_EXITED;
    }
    if (d->first_rank >= 0 && d->first_rank < n)
        d->ranks[d->first_rank].state = CP_RS_ROOT;
    if (d->hang && d->phase == CP_PHASE_INIT)
        waiting_in_setup(d, inc, n);
}

/* ---- notes on what the launcher claimed ------------------------------------ */

static void launcher_claim(cp_diagnosis *d, const cp_incident *inc)
{
    for (size_t i = 0; i < inc->n_table; i++) {
        const cp_table_entry *t = &inc->table[i];
        if (!t->root_cause || t->rank < 0 || d->first_rank < 0)
            continue;
        if (t->rank != d->first_rank)
            cp_diag_note(d, "torchrun's \"Root Cause\" table names rank %d; it orders failures by when its agent noticed "
                    "them, not by when they happened.", t->rank);
        return;
    }
}

static void copy_warnings(cp_diagnosis *d, const cp_incident *inc)
{
    if (!inc->n_warnings)
        return;
    d->warnings = calloc(inc->n_warnings, sizeof *d->warnings);
    if (!d->warnings)
        return;
    for (size_t i = 0; i < inc->n_warnings; i++)
        if ((d->warnings[d->n_warnings] = cp_strdup(inc->warnings[i])))
            d->n_warnings++;
}

static void confidence_reason(cp_diagnosis *d)
{
    const char *why;
    if (!d->failed)
        why = "no error signature was found in the input";
    else if (d->confidence >= 80)
        why = "a specific signature with timestamps, or direct evidence naming the rank";
    else if (d->confidence >= 60)
        why = "a recognised error, but ordering or attribution rests on partial evidence";
    else
        why = "inferred from indirect evidence; check the evidence lines";
    d->confidence_reason = cp_strdup(why);
}

/* CULPRIT_DEBUG=1 lists every event and writer on stderr: the quickest
 * way to see why a verdict came out as it did. */
static void debug_dump(const cp_incident *inc)
{
    const char *env = getenv("CULPRIT_DEBUG");
    if (!env || !*env)
        return;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        const cp_rule *r = rule_of(inc, e);
        fprintf(stderr, "event %zu: %s:%llu rank=%d writer=%d time=%lld/%d rule=%s table=%d frames=%zu | %.120s\n", i,
                inc->streams[e->stream], (unsigned long long)e->line, event_rank(inc, e), e->writer,
                (long long)e->origin.time.ms, (int)e->origin.time.kind, r ? r->id : "(stack)", e->in_table,
                e->n_frames, e->text ? e->text : "");
    }
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        fprintf(stderr, "writer %zu: rank=%d id.rank=%d local=%d pid=%d task=%d host=%s stream=%d hits=%u step=%lld phase=%s/%d\n",
                i, w->rank, w->id.rank, w->id.local_rank, w->id.pid, w->id.task, w->id.host, w->stream, w->n_hits,
                (long long)w->last_step, cp_phase_name(w->phase), (int)w->phase_state);
    }
    fprintf(stderr, "world_size=%d idents=%zu table=%zu\n", inc->world_size, inc->n_idents, inc->n_table);
}

int cp_analyze(cp_diagnosis *d, cp_incident *inc)
{
    memset(d, 0, sizeof *d);
    d->first_rank = -1;
    d->kind = CP_KIND_NONE;
    d->owner = CP_OWNER_UNKNOWN;
    d->phase = CP_PHASE_UNKNOWN;
    cp_ranks_resolve(inc);
    cp_timeline_normalize(inc);
    cp_ranks_from_table_copies(inc);
    cp_ranks_from_subjects(inc);
    debug_dump(inc);
    d->world_size = inc->world_size;
    d->n_files = inc->n_streams;
    d->bytes = inc->bytes;
    d->lines = inc->lines;
    d->n_events = inc->n_events;

    int ri = pick_root(inc);
    const cp_event *cascade = first_cascade(inc);
    if (ri >= 0) {
        const cp_event *root = &inc->events[ri];
        verdict_from_root(d, inc, root);
        int hw = hardware_behind(inc, root);
        const cp_event *app = hw < 0 ? app_xid_behind(inc, root) : NULL;
        if (hw >= 0)
            apply_hardware(d, inc, root, &inc->events[hw]);
        else if (rule_of(inc, root)->kind == CP_KIND_GPU_HARDWARE)
            note_hardware_root(d, inc, root);
        else if (app)
            note_app_xid(d, inc, root, app);
        if (d->kind == CP_KIND_NCCL_COMM_ERROR)
            fabric_concentration(d, inc);
        add_corroboration(d, inc, root);
    } else if (cascade) {
        verdict_from_cascades(d, inc, cascade);
    } else {
        cp_stall st;
        const cp_rule *raised = NULL;
        const cp_event *cut = NULL, *dump = NULL, *nan = NULL, *row = NULL, *setup = NULL;
        if (cp_suspect_stalled(inc, &st))
            verdict_from_stall(d, inc, &st);
        else if ((cut = first_cut_traceback(inc, &raised)) && !cut_rule_of(inc, cut) &&
                 (nan = nonfinite_before(inc, cut)))
            verdict_from_nonfinite_then_cut(d, inc, nan, cut);
        else if (cut)
            verdict_from_cut_traceback(d, inc, cut, raised);
        else if ((dump = first_of(inc, live_dump, -1)))
            verdict_from_live_dump(d, inc, dump);
        else if ((nan = first_of(inc, nonfinite_numbers, -1)))
            verdict_from_nonfinite(d, inc, nan);
        else if ((row = first_table_row(inc)))
            verdict_from_table(d, inc, row);
        else if ((setup = unfinished_setup(inc)))
            verdict_from_setup(d, inc, setup);
    }
    if (d->failed) {
        rank_rows(d, inc);
        launcher_claim(d, inc);
    }
    cp_drain_build(d, inc);
    confidence_reason(d);
    copy_warnings(d, inc);
    return 0;
}

