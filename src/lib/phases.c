/* phases.c - where a failure happened: the lifecycle phase of an event,
 * from its traceback's frames (rules/70-hints.rules), its rule, the same
 * rank's other stacks, and the phase lines its writer or rank logged last;
 * and, when those say nothing, from a peer that raised the same error.
 * See facts.h. */
#include <stdio.h>
#include <stdlib.h>

#include "facts.h"

cp_phase cp_phase_from_frames(const cp_incident *inc, const cp_event *e)
{
    int best_w = -1;
    cp_phase best = CP_PHASE_NONE;
    for (size_t i = 0; i < e->n_frames; i++) {
        uint32_t pr = e->frames[i].phase_rule;
        if (pr == UINT32_MAX)
            continue;
        const cp_rule *r = &inc->cat->rules[pr];
        /* inner frames win ties: they are closer to what failed */
        if (r->weight >= best_w) {
            best_w = r->weight;
            best = r->phase;
        }
    }
    return best;
}

/* Whether writer a's last phase line came after b's: by time when both
 * have one of the same kind, else by stream and line. */
static bool phase_later(const cp_writer *a, const cp_writer *b)
{
    if (a->phase_time.kind != CP_TS_NONE && a->phase_time.kind == b->phase_time.kind)
        return a->phase_time.ms > b->phase_time.ms;
    return a->phase_stream == b->phase_stream && a->phase_line > b->phase_line;
}

/* The phase a writer's last phase line left it in, if that phase is
 * still open. */
cp_phase cp_phase_open(const cp_writer *w)
{
    return w->phase != CP_PHASE_NONE && w->phase_state != CP_STATE_END ? w->phase : CP_PHASE_NONE;
}

cp_phase cp_phase_open_agreed(const cp_incident *inc)
{
    cp_phase agreed = CP_PHASE_NONE;
    for (size_t i = 0; i < inc->n_writers; i++) {
        cp_phase p = cp_phase_open(&inc->writers[i]);
        if (p == CP_PHASE_NONE)
            continue;
        if (agreed != CP_PHASE_NONE && p != agreed)
            return CP_PHASE_NONE;
        agreed = p;
    }
    return agreed;
}

/* The phase the rank's own lines last announced, for an event another
 * writer logged about it (the launcher's "exitcode: -9" names the rank's
 * pid, the kernel names its process): of the rank's writers, the one
 * whose phase line came last. */
static const cp_writer *rank_phase_writer(const cp_incident *inc, int rank)
{
    const cp_writer *last = NULL;
    for (size_t i = 0; rank >= 0 && i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->rank == rank && w->phase != CP_PHASE_NONE && (!last || phase_later(w, last)))
            last = w;
    }
    return last;
}

static cp_phase rank_phase(const cp_incident *inc, int rank)
{
    const cp_writer *last = rank_phase_writer(inc, rank);
    return last ? cp_phase_open(last) : CP_PHASE_NONE;
}

cp_phase cp_phase_open_of_rank(const cp_incident *inc, int rank, const cp_writer **from)
{
    *from = rank_phase_writer(inc, rank);
    cp_phase p = *from ? cp_phase_open(*from) : CP_PHASE_NONE;
    if (p == CP_PHASE_NONE)
        *from = NULL;
    return p;
}

cp_phase cp_phase_before_stall(const cp_incident *inc, int rank, const cp_writer **from)
{
    const cp_writer *best = rank_phase_writer(inc, rank);
    uint64_t best_gap = 0;
    if (best && cp_phase_open(best) != CP_PHASE_NONE) {
        *from = best;
        return best->phase;
    }
    best = NULL;
    uint64_t *first = cp_first_cascade_lines(inc);
    for (size_t i = 0; first && i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (cp_phase_open(w) == CP_PHASE_NONE)
            continue;
        uint64_t c = cp_first_cascade_in(first, inc, w->phase_stream);
        if (c == UINT64_MAX || w->phase_line > c || c - w->phase_line > CP_SAVE_NEAR_LINES)
            continue;
        if (!best || c - w->phase_line < best_gap) {
            best = w;
            best_gap = c - w->phase_line;
        }
    }
    free(first);
    *from = best;
    return best ? best->phase : CP_PHASE_NONE;
}

cp_phase cp_phase_of_waiters(const cp_incident *inc, int *rank)
{
    cp_phase agreed = CP_PHASE_NONE;
    *rank = -1;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        const cp_rule *r = rule_of(inc, e);
        if (!r || (r->kind != CP_KIND_NCCL_TIMEOUT && !setup_wait(r)) || e->in_table || e->n_frames == 0)
            continue;
        /* a traceback that names no phase was waiting elsewhere (the
         * rank that took another code path): no agreement */
        cp_phase p = cp_phase_from_frames(inc, e);
        if (p == CP_PHASE_NONE || (agreed != CP_PHASE_NONE && p != agreed))
            return CP_PHASE_NONE;
        agreed = p;
        if (*rank < 0)
            *rank = event_rank(inc, e);
    }
    return agreed;
}

/* The phase the frames of another stack of the same rank show (an error
 * line printed apart from its traceback: NCCL's WARN and the Python
 * traceback of the same process). */
static cp_phase phase_from_own_stack(const cp_incident *inc, const cp_event *e)
{
    int rank = event_rank(inc, e);
    for (size_t i = 0; (rank >= 0 || e->writer >= 0) && i < inc->n_events; i++) {
        const cp_event *s = &inc->events[i];
        /* the same rank's, or with no rank known, the same process's */
        bool own = rank >= 0 ? event_rank(inc, s) == rank : s->writer == e->writer;
        if (s == e || s->rule != CP_RULE_STACK || s->in_table || !own)
            continue;
        cp_phase p = cp_phase_from_frames(inc, s);
        if (p != CP_PHASE_NONE)
            return p;
    }
    return CP_PHASE_NONE;
}

cp_phase cp_phase_of_event(const cp_incident *inc, const cp_event *e)
{
    const cp_rule *r = rule_of(inc, e);
    cp_phase p = cp_phase_from_frames(inc, e);
    if (p != CP_PHASE_NONE)
        return p;
    if (r && r->phase != CP_PHASE_NONE)
        return r->phase;
    if ((p = phase_from_own_stack(inc, e)) != CP_PHASE_NONE)
        return p;
    if (e->writer >= 0 && (p = cp_phase_open(&inc->writers[e->writer])) != CP_PHASE_NONE)
        return p;
    p = rank_phase(inc, event_rank(inc, e));
    return p != CP_PHASE_NONE ? p : CP_PHASE_UNKNOWN;
}

/* A root whose own traceback names no phase (cut short, or all library
 * frames) takes the phase another rank's shows: the ranks run the same
 * program, so one that raised the same error, or whose traceback the log
 * cuts off before its exception line, was at the same place. The first
 * such rank with a phase is named in a note. */
void cp_phase_from_peers(cp_diagnosis *d, const cp_incident *inc, const cp_event *root)
{
    const cp_rule *r = rule_of(inc, root);
    int rank = event_rank(inc, root);
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        int peer = event_rank(inc, e);
        bool same = r && rule_of(inc, e) == r;
        /* the same process printing the same error again, with its traceback */
        bool again = same && root->writer >= 0 && e->writer == root->writer;
        /* the same error with no rank to tell whose (another file of the
         * paste, another process): the ranks run one program */
        bool unowned = same && !again && peer < 0;
        if (e == root || e->in_table || (!again && !unowned && (peer < 0 || peer == rank)))
            continue;
        bool cut = e->rule == CP_RULE_STACK && e->ends_input;
        cp_phase p = same || cut ? cp_phase_from_frames(inc, e) : CP_PHASE_NONE;
        if (p == CP_PHASE_NONE)
            continue;
        d->phase = p;
        if (again)
            cp_diag_note(d, "The phase (%s) is read from the traceback printed with the same error at line %llu.",
                         cp_phase_name(p), (unsigned long long)e->line);
        else if (unowned)
            cp_diag_note(d, "The phase (%s) is read from another traceback of the same error, at line %llu of its "
                            "log.", cp_phase_name(p), (unsigned long long)e->line);
        else if (same)
            cp_diag_note(d, "The phase (%s) is read from rank %d's traceback: it raised the same error.",
                         cp_phase_name(p), peer);
        else
            cp_diag_note(d, "The phase (%s) is read from rank %d's traceback, which the log cuts off before its error.",
                         cp_phase_name(p), peer);
        break;
    }
}
