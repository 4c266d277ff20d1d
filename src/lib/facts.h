/* facts.h - what the analysis modules ask of an incident's events, and
 * the evidence they gather about which rank is to blame.
 *
 * analyze.c decides the verdict; suspects.c collects the independent
 * pieces of evidence that name a rank (desync reports, watchdog sequence
 * numbers, unfinished saves, silent ranks, stalled progress) and ties
 * events to ranks through other events; timeline.c puts every time on one
 * clock. Internal to the library.
 */
#ifndef CULPRIT_FACTS_H
#define CULPRIT_FACTS_H

#include <stdbool.h>
#include <stdint.h>

#include "diagnosis.h"
#include "incident.h"
#include "util/strutil.h"

enum {
    CP_SAVE_NEAR_LINES = 50,   /* a save line this close above a stall implicates the save */
    CP_STARTUP_SEQ = 3,        /* a barrier this early in a process group is start-up */
    CP_SETUP_NUMEL = 1 << 20,  /* set-up moves flags, seeds and small objects, not weights */
    CP_MAX_RANK_ROWS = 1 << 20 /* ranks a diagnosis lists */
};

static inline const cp_rule *rule_of(const cp_incident *inc, const cp_event *e)
{
    return e->rule == CP_RULE_STACK ? NULL : &inc->cat->rules[e->rule];
}

static inline cp_role role_of(const cp_incident *inc, const cp_event *e)
{
    const cp_rule *r = rule_of(inc, e);
    return r ? r->role : CP_ROLE_NONE;
}

static inline int weight_of(const cp_incident *inc, const cp_event *e)
{
    const cp_rule *r = rule_of(inc, e);
    return r ? r->weight : 0;
}

/* A rule under this weight names an error only in general terms (NCCL's
 * "file.cc:123 -> 2" trace of a failed call): a line that says more,
 * printed right after it, speaks for it, and it counts as no fabric
 * error (docs/rules.md). */
enum { CP_VAGUE_WEIGHT = 10 };

/* Whether the event's line says little of what failed: no kind, or a
 * rule of the vague weights. */
static inline bool vague(const cp_incident *inc, const cp_event *e)
{
    const cp_rule *r = rule_of(inc, e);
    return !r || r->kind == CP_KIND_UNKNOWN || r->weight < CP_VAGUE_WEIGHT;
}

static inline int event_rank(const cp_incident *inc, const cp_event *e)
{
    if (e->origin.rank >= 0)
        return e->origin.rank;
    return e->writer >= 0 ? inc->writers[e->writer].rank : -1;
}

static inline int64_t cap_i64(const cp_capset *c, const char *name, int64_t dflt)
{
    int64_t v;
    const char *s = cp_capset_get(c, name);
    return s && cp_parse_i64(s, &v) ? v : dflt;
}

/* A rule whose line is a rank waiting for ranks that never arrived at
 * set-up: a rendezvous error that is a consequence (a cascade) of the
 * init phase (pytorch.store_setup_wait_timeout). Like a collective's
 * timeout, the rank the waiters waited for is the lead. */
static inline bool setup_wait(const cp_rule *r)
{
    return r && r->role == CP_ROLE_CASCADE && r->kind == CP_KIND_RENDEZVOUS_ERROR && r->phase == CP_PHASE_INIT;
}

/* A line of the launcher stopping a process (a `stop_signal` capture:
 * torchrun's "Sending process P closing signal SIGTERM"): it is about P,
 * which was still running, and is no report of P's own. */
static inline bool stopped_by_launcher(const cp_event *e)
{
    return cp_capset_get(&e->caps, "stop_signal") != NULL;
}

static inline bool timed(const cp_time *t)
{
    return t->kind == CP_TS_ABS;
}

/* timeline.c: glog/syslog times get the incident's year; boot-relative
 * kernel times go on the wall clock when their host's boot time can be
 * learnt (a line with both clocks, or one message in both forms), and
 * drop out of ordering otherwise. */
void cp_timeline_normalize(cp_incident *inc);

/* suspects.c: each returns a rank, or -1 when the evidence is absent or
 * not unique. */
int cp_suspect_named(const cp_incident *inc);
/* The `how` capture of the strongest report naming `rank` (a Flight
 * Recorder finding says how it knows), or NULL. */
const char *cp_suspect_named_how(const cp_incident *inc, int rank);
/* The strongest event naming `rank` (a culprit_rank capture), or NULL. */
const cp_event *cp_suspect_named_by(const cp_incident *inc, int rank);
int cp_suspect_lagging(const cp_incident *inc, int64_t *low, int64_t *high);
/* What the ranks' timed-out collectives (nccl_timeout events' optype,
 * and numel where every rank's input has one size) say about the work
 * (sequence number) in which the most ranks stopped, when their reports
 * there name one process group (PG number, timeout):
 *  - odd: the timeout of the one rank in another collective (another
 *    type, or size) than at least two others that agree (usual: one of
 *    theirs): the ranks were blocked in different collectives, and this
 *    rank is the one out of step;
 *  - split_a, split_b: otherwise, timeouts of two ranks in different
 *    collectives: the ranks disagree, but no single one is out of step.
 * Returns whether either was found. */
typedef struct cp_collectives {
    const cp_event *odd;
    const cp_event *usual;  /* a timeout of the others, with odd */
    const cp_event *split_a, *split_b;
} cp_collectives;
bool cp_suspect_collectives(const cp_incident *inc, cp_collectives *out);
/* The one rank whose timed-out collective was called from another phase
 * than every other rank's that timed out (at least two, agreeing): rank
 * 0 waiting in a barrier inside its save while the others wait in
 * backward. It is out of step with them, as a rank in another kind of
 * collective is (cp_suspect_collectives), for transports whose timeouts
 * name no collective (gloo). Returns whether there is one: `wait`, its
 * first timed-out traceback; `odd` and `usual`, the phases. */
typedef struct cp_odd_waiter {
    const cp_event *wait;
    cp_phase odd, usual;
} cp_odd_waiter;
bool cp_suspect_odd_waiter(const cp_incident *inc, cp_odd_waiter *out);
int cp_suspect_saving(const cp_incident *inc, bool *unattributed);
int cp_suspect_silent(const cp_incident *inc, bool count_table);
/* Whether `rank` ended with status 0, as far as one host's torchrun
 * says: its failure table, present, lists every worker that failed and
 * not this one, and no launcher line reports it failed or stopped. */
bool cp_rank_exited_cleanly(const cp_incident *inc, int rank);
/* The one rank of the world that one host's failure table leaves
 * out while it lists every other rank: that rank exited with status 0
 * (see cp_rank_exited_cleanly); -1 when there is no such rank. */
int cp_suspect_absent_from_table(const cp_incident *inc);
/* The one rank whose last logged step is behind every other rank's, or
 * which logged none while the others did (only when every_rank_stepped is
 * false: where only some ranks log progress, a rank that logs none is not
 * behind); -1 when that is not one rank. */
int cp_suspect_least_progress(const cp_incident *inc, bool every_rank_stepped);
/* The one rank whose last logged loss is not finite, or at least
 * CP_LOSS_OUTLIER times the median of all ranks' (and at least that much
 * itself), while two or more others logged an ordinary one: where a
 * numeric failure reaches every rank (DDP averages one rank's overflowing
 * gradients into all of them), the rank whose own batch began it. Its
 * loss and step, and the ranks' median, in *its, *step and *others; -1
 * when no single rank stands out. */
enum { CP_LOSS_OUTLIER = 1000 };
int cp_suspect_loss_outlier(const cp_incident *inc, float *its, int64_t *step, float *others);
/* The one rank whose `odd_value` capture differs from the value every
 * other reporting rank gives (three ranks or more report it): where all
 * ranks raise the same error about a value they exchanged (gloo's
 * address sizes when the ranks disagree on the world size), the rank
 * whose own value is off. Its value in *its, the others' in *theirs (each
 * CP_CAPTURE_VALUE bytes); -1 when no single rank stands out. */
int cp_suspect_odd_value(const cp_incident *inc, char *its, char *theirs);
/* A rank clearly behind the others in a run that ended without a timeout:
 * its last step is below the step all (at least two) other ranks agree
 * on, or its last line is CP_STALL_MS older than every other rank's. */
enum { CP_STALL_MS = 5 * 60 * 1000 };
typedef struct cp_stall {
    int rank;
    bool step_behind;          /* else: by time */
    int64_t its_step, others_step, gap_ms;
    int phase_writer;          /* the writer holding its latest phase line, -1 */
} cp_stall;
bool cp_suspect_stalled(const cp_incident *inc, cp_stall *out);
bool cp_save_before_stall(const cp_incident *inc);
/* Per stream, the line of its first cascade: where a stall surfaced in
 * it; UINT64_MAX when none. Caller frees; NULL when out of memory. */
uint64_t *cp_first_cascade_lines(const cp_incident *inc);
/* Its entry for `stream` (a writer's phase_stream, which a merged summary
 * may give out of range): UINT64_MAX when there is none. */
static inline uint64_t cp_first_cascade_in(const uint64_t *first, const cp_incident *inc, int stream)
{
    return stream >= 0 && (size_t)stream < inc->n_streams ? first[stream] : UINT64_MAX;
}
/* Whether the ranks timed out in a barrier among the first collectives of
 * their process group (a one-element all-reduce or broadcast at a
 * sequence number up to CP_STARTUP_SEQ), before training began: every
 * collective timeout that gives its sequence number must be one. *lowest_rank: the lowest
 * rank that timed out there (-1 when none is known). */
bool cp_stall_at_startup(const cp_incident *inc, int *lowest_rank);
/* Whether every timed-out collective names its sequence number, is among
 * its group's first CP_STARTUP_SEQ and moves at most CP_SETUP_NUMEL
 * elements (a group made mid-run to broadcast weights starts at 1 too);
 * and at least one timed out. */
bool cp_timeouts_among_first(const cp_incident *inc);
int cp_ranks_extent(const cp_incident *inc);
/* ---- phases (phases.c) ---- */

/* The phase the event's own frames name (the heaviest phase hint; inner
 * frames win ties); CP_PHASE_NONE when none does. */
cp_phase cp_phase_from_frames(const cp_incident *inc, const cp_event *e);
/* The phase a writer's last phase line left it in, if still open. */
cp_phase cp_phase_open(const cp_writer *w);
/* The phase every writer's open phase line agrees on; CP_PHASE_NONE when
 * none has one, or two differ. */
cp_phase cp_phase_open_agreed(const cp_incident *inc);
/* The phase of an event: its frames, its rule, the same rank's other
 * stacks, its writer's open phase, its rank's last phase line;
 * CP_PHASE_UNKNOWN when nothing says. */
cp_phase cp_phase_of_event(const cp_incident *inc, const cp_event *e);
/* Sets d->phase (and a note saying from where) from another rank's
 * traceback of the same error, or one the log cuts off, or the same
 * process's repeat of the error; leaves d alone when none names one. */
void cp_phase_from_peers(cp_diagnosis *d, const cp_incident *inc, const cp_event *root);
/* The phase a stall happened in, from phase lines: the open phase of the
 * stalled rank's last phase line (rank >= 0), else of the phase line
 * closest above where the stall surfaced in its stream (the first
 * timeout), at most CP_SAVE_NEAR_LINES above it or on its very line (a
 * progress bar the timeout was printed onto). *from: the writer of that
 * line. CP_PHASE_NONE when none says. */
cp_phase cp_phase_before_stall(const cp_incident *inc, int rank, const cp_writer **from);
/* The phase rank's latest phase line left open (a save begun and not
 * ended), with the writer holding it (*from); CP_PHASE_NONE and NULL when
 * none. */
cp_phase cp_phase_open_of_rank(const cp_incident *inc, int rank, const cp_writer **from);
/* The phase the tracebacks of the ranks that timed out agree on (the
 * frames they waited in: a barrier inside save_checkpoint); CP_PHASE_NONE
 * when none names one, or one names none or another. *rank: a rank that
 * showed it. */
cp_phase cp_phase_of_waiters(const cp_incident *inc, int *rank);

/* The one rank any writer or event names; -1 when none or several. */
int cp_single_known_rank(const cp_incident *inc);
/* A stack dump of the rank, or the only stack nobody could place. */
const cp_event *cp_stack_of_rank(const cp_incident *inc, int rank);
/* Give events without a rank the rank of the process they are about, or of
 * the same error copied into the launcher's failure table. */
void cp_ranks_from_subjects(cp_incident *inc);
/* A PCI bus id in any of the kernel's, nvidia-smi's or NCCL's spellings
 * ("0000:9a:00", "00000000:9A:00.0", "9a000") as "9a:00" (bus:device). */
bool cp_busid_norm(const char *s, char out[8]);
void cp_ranks_from_table_copies(cp_incident *inc);

/* diagnosis.c */
__attribute__((format(printf, 2, 3))) void cp_diag_note(cp_diagnosis *d, const char *fmt, ...);
/* "2026-11-29 16:19:32.295" ("11-29 16:19:32.295" when no line gave the
 * year), or NULL when not on the wall clock; caller frees. */
char *cp_format_time(const cp_incident *inc, const cp_time *t);

#endif
