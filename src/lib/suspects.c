/* suspects.c - evidence that names a rank. See facts.h. */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"

/* A report stands for `votes` reports when it says so (a Flight Recorder
 * finding is backed by every dump that holds the collective). */
static int votes_of(const cp_event *e)
{
    int64_t v = cap_i64(&e->caps, "votes", 1);
    return v < 1 ? 1 : v > (1 << 20) ? 1 << 20 : (int)v;
}

/* The weight of a report naming a rank, or -1 for an event that names
 * none. */
static int naming_weight(const cp_incident *inc, const cp_event *e)
{
    int64_t r = cap_i64(&e->caps, "culprit_rank", -1);
    const cp_rule *rule = rule_of(inc, e);
    return r < 0 || r >= INT_MAX || e->in_table || !rule ? -1 : rule->weight;
}

typedef struct rank_votes {
    int rank;
    int votes;
} rank_votes;

static int by_rank(const void *a, const void *b)
{
    const rank_votes *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The rank with the most votes, alone at the top; -1 on a tie. Sorting
 * keeps this linear-logarithmic: at thousands of ranks every rank may
 * print a report naming one. */
static int majority(rank_votes *v, size_t n)
{
    qsort(v, n, sizeof *v, by_rank);
    int best = -1, best_votes = 0, second = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        int votes = 0;
        for (; j < n && v[j].rank == v[i].rank; j++)
            votes += v[j].votes;
        if (votes > best_votes) {
            second = best_votes;
            best = v[i].rank;
            best_votes = votes;
        } else if (votes > second) {
            second = votes;
        }
        i = j;
    }
    return best_votes > second ? best : -1;
}

/* The rank that reports name. Each report is one vote: in "Detected
 * mismatch between collectives" every healthy rank names the deviant one,
 * while the deviant names somebody else, so the majority is the culprit.
 * Only the heaviest kind of report present votes: a rank's first-hand
 * finding ("[Rank 0]: Rank 2 failed to pass monitoredBarrier") outranks
 * any number of lighter pointers ("errors from rank 0. Please check rank
 * 0 logs for faulty rank"), which the finding itself caused. */
int cp_suspect_named(const cp_incident *inc)
{
    int tier = -1;
    size_t n = 0;
    for (size_t i = 0; i < inc->n_events; i++) {
        int w = naming_weight(inc, &inc->events[i]);
        tier = w > tier ? w : tier;
    }
    if (tier < 0)
        return -1;
    rank_votes *v = malloc(inc->n_events * sizeof *v);
    if (!v)
        return -1;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        if (naming_weight(inc, e) == tier)
            v[n++] = (rank_votes){(int)cap_i64(&e->caps, "culprit_rank", -1), votes_of(e)};
    }
    int best = majority(v, n);
    free(v);
    return best;
}

/* The strongest event naming `rank` (of those with a `how` capture when
 * `with_how`), or NULL. */
static const cp_event *strongest_naming(const cp_incident *inc, int rank, bool with_how)
{
    const cp_event *by = NULL;
    for (size_t i = 0; i < inc->n_events && rank >= 0; i++) {
        const cp_event *e = &inc->events[i];
        if (e->in_table || cap_i64(&e->caps, "culprit_rank", -1) != rank ||
            (with_how && !cp_capset_get(&e->caps, "how")))
            continue;
        if (!by || votes_of(e) > votes_of(by))
            by = e;
    }
    return by;
}

const char *cp_suspect_named_how(const cp_incident *inc, int rank)
{
    const cp_event *by = strongest_naming(inc, rank, true);
    return by ? cp_capset_get(&by->caps, "how") : NULL;
}

const cp_event *cp_suspect_named_by(const cp_incident *inc, int rank)
{
    return strongest_naming(inc, rank, false);
}

/* The process group a report is in, as far as it says: the watchdog's
 * "[PG 3 Rank 1]" or a Flight Recorder report's "in PG 3" (pg), and the
 * group's timeout (a watchdog's "Timeout(ms)=600000"), which every work
 * of one group shares. -1 where the line does not say. */
typedef struct group_key {
    int64_t pg, timeout_ms;
} group_key;

static group_key group_of(const cp_event *e)
{
    return (group_key){cap_i64(&e->caps, "pg", -1), cap_i64(&e->caps, "timeout_ms", -1)};
}

static bool differs(int64_t a, int64_t b)
{
    return a >= 0 && b >= 0 && a != b;
}

/* Whether an event's process group differs from the one seen so far,
 * which takes what the event says where it said nothing yet. Two
 * timeouts of another length are another group as surely as another
 * PG number: old watchdog lines name no group, and a job's data- and
 * tensor-parallel groups are often given different timeouts. */
static bool other_group(const cp_event *e, group_key *group)
{
    group_key g = group_of(e);
    if (differs(g.pg, group->pg) || differs(g.timeout_ms, group->timeout_ms))
        return true;
    if (group->pg < 0)
        group->pg = g.pg;
    if (group->timeout_ms < 0)
        group->timeout_ms = g.timeout_ms;
    return false;
}

/* Where one rank is in its collectives, from its own reports: the work
 * it waits in (the lowest it timed out in; its last enqueued when it
 * names none), the last work it says it enqueued (-1 when it does not
 * say) and the furthest it enqueued or timed out in. */
typedef struct rank_position {
    int rank;
    int64_t waits_in, enqueued, reached;
} rank_position;

static int position_by_rank(const void *a, const void *b)
{
    const rank_position *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

static int64_t lower(int64_t a, int64_t b)
{
    return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

static int64_t higher(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* Each rank's position, one entry per rank, in *out (the caller frees it);
 * the count, or -1 when the reports name two process groups or memory ran
 * out. */
static ptrdiff_t rank_positions(const cp_incident *inc, rank_position **out)
{
    rank_position *p = malloc((inc->n_events ? inc->n_events : 1) * sizeof *p);
    size_t n = 0;
    group_key group = {-1, -1};
    *out = p;
    if (!p)
        return -1;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        int64_t enq = cap_i64(&e->caps, "last_enqueued", -1), seq = cap_i64(&e->caps, "seq", -1);
        int rank = event_rank(inc, e);
        if ((enq < 0 && seq < 0) || rank < 0)
            continue;
        if (other_group(e, &group))
            return -1;
        p[n++] = (rank_position){rank, seq, enq, higher(enq, seq)};
    }
    qsort(p, n, sizeof *p, position_by_rank);
    size_t ranks = 0;
    for (size_t i = 0; i < n; i++) {
        if (ranks > 0 && p[i].rank == p[ranks - 1].rank) {
            rank_position *r = &p[ranks - 1];
            r->waits_in = lower(r->waits_in, p[i].waits_in);
            r->enqueued = higher(r->enqueued, p[i].enqueued);
            r->reached = higher(r->reached, p[i].reached);
        } else {
            p[ranks++] = p[i];
        }
    }
    for (size_t i = 0; i < ranks; i++)
        if (p[i].waits_in < 0)
            p[i].waits_in = p[i].reached;   /* only "last enqueued" lines */
    return (ptrdiff_t)ranks;
}

/* Whether rank position a is behind b (< 0): it waits in an earlier work,
 * or in the same one having enqueued less after it. Where either rank
 * does not say what it enqueued (a paste that cut that line), the same
 * work is a tie. */
static int compare_progress(const rank_position *a, const rank_position *b)
{
    if (a->waits_in != b->waits_in)
        return a->waits_in < b->waits_in ? -1 : 1;
    if (a->enqueued < 0 || b->enqueued < 0)
        return 0;
    return (a->enqueued > b->enqueued) - (a->enqueued < b->enqueued);
}

/* The rank that is behind all others in its collectives never reached the
 * collective the others wait in: the one waiting in the earliest work, or
 * of those waiting in the same one, the one whose last enqueued work is
 * lowest. A rank's own reports are one position, never two to compare:
 * its timeout in work 6 and its "last enqueued NCCL work: 516" say it went
 * on to 516, not that another rank did. Sequence numbers count per
 * process group: when the ranks' reports name two groups (pipeline stages
 * timing out in their own send/receive groups), their numbers do not
 * compare and no rank is named. *low is where that rank waits, *high the
 * furthest any other rank reached. */
int cp_suspect_lagging(const cp_incident *inc, int64_t *low, int64_t *high)
{
    rank_position *p;
    ptrdiff_t n = rank_positions(inc, &p);
    ptrdiff_t lag = -1;
    bool unique = true;
    for (ptrdiff_t i = 0; i < n; i++) {
        int c = lag < 0 ? -1 : compare_progress(&p[i], &p[lag]);
        if (c < 0) {
            lag = i;
            unique = true;
        } else if (c == 0) {
            unique = false;
        }
    }
    *low = lag >= 0 ? p[lag].waits_in : INT64_MAX;
    *high = INT64_MIN;
    for (ptrdiff_t i = 0; i < n; i++)
        if (i != lag)
            *high = higher(*high, p[i].reached);
    int rank = lag >= 0 && unique && n >= 2 ? p[lag].rank : -1;
    free(p);
    return rank;
}

bool cp_suspect_odd_waiter(const cp_incident *inc, cp_odd_waiter *out)
{
    memset(out, 0, sizeof *out);
    int n = cp_ranks_extent(inc);
    if (n < 3)
        return false;
    const cp_event **wait = calloc((size_t)n, sizeof *wait);   /* each rank's first timed-out traceback */
    cp_phase *at = malloc((size_t)n * sizeof *at);
    bool clear = wait && at;
    for (size_t i = 0; i < inc->n_events && clear; i++) {
        const cp_event *e = &inc->events[i];
        const cp_rule *rule = rule_of(inc, e);
        int r = event_rank(inc, e);
        if (!rule || rule->role != CP_ROLE_CASCADE || rule->kind != CP_KIND_NCCL_TIMEOUT || e->in_table ||
            e->n_frames == 0 || r < 0 || r >= n || wait[r])
            continue;   /* a rank's first timed-out traceback says where it waited */
        wait[r] = e;
        at[r] = cp_phase_from_frames(inc, e);
        clear = at[r] != CP_PHASE_NONE;   /* one that names no phase: no comparison */
    }
    int waiters = 0, count_a = 0, count_b = 0, rank_a = -1, rank_b = -1;
    cp_phase a = CP_PHASE_NONE, b = CP_PHASE_NONE;
    for (int r = 0; r < n && clear; r++) {
        if (!wait[r])
            continue;
        waiters++;
        if (a == CP_PHASE_NONE || at[r] == a) {
            a = at[r], count_a++, rank_a = r;
        } else if (b == CP_PHASE_NONE || at[r] == b) {
            b = at[r], count_b++, rank_b = r;
        } else {
            clear = false;   /* three places: no single odd one */
        }
    }
    if (clear && waiters >= 3 && count_a == 1 && count_b >= 2)
        *out = (cp_odd_waiter){wait[rank_a], a, b};
    else if (clear && waiters >= 3 && count_b == 1 && count_a >= 2)
        *out = (cp_odd_waiter){wait[rank_b], b, a};
    free(wait);
    free(at);
    return out->wait != NULL;
}

/* A rank's timed-out collective, for cp_suspect_collectives. */
typedef struct rank_op {
    const cp_event *e;
    int rank;
    size_t order;    /* the event's index: a rank's first timeout comes first */
    const char *op;
    int64_t numel;   /* its NumelIn, or -1 when the line does not say */
    int64_t seq;     /* -1 when the line does not say */
} rank_op;

/* Collectives whose input has one size on every rank of the group. Not
 * all-to-all (uneven splits), point-to-point or coalesced work, whose
 * sizes may differ by design. */
static bool same_size_everywhere(const char *op)
{
    static const char *const ops[] = {"ALLREDUCE", "BROADCAST", "REDUCE", "_ALLGATHER_BASE", "ALLGATHER",
                                      "REDUCE_SCATTER", "_REDUCE_SCATTER_BASE"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i]) == 0)
            return true;
    return false;
}

/* Whether two timeouts were in the same collective: the same type and,
 * where both lines give it, the same size. Ranks that timed out at one
 * sequence number in ALLREDUCEs of different sizes called different
 * collectives as surely as an ALLREDUCE and an ALLGATHER. */
static bool same_collective(const rank_op *a, const rank_op *b)
{
    return strcmp(a->op, b->op) == 0 && (a->numel < 0 || b->numel < 0 || a->numel == b->numel);
}

static int by_rank_then_order(const void *a, const void *b)
{
    const rank_op *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Keeps each rank's first timeout, in rank order (sorted, not searched:
 * at 16k ranks every rank times out). False when a rank timed out in two
 * kinds of collective. */
static bool one_per_rank(rank_op *ops, size_t *n)
{
    qsort(ops, *n, sizeof *ops, by_rank_then_order);
    size_t kept = 0;
    for (size_t i = 0; i < *n; i++) {
        if (kept && ops[kept - 1].rank == ops[i].rank) {
            if (!same_collective(&ops[kept - 1], &ops[i]))
                return false;
            continue;
        }
        ops[kept++] = ops[i];
    }
    *n = kept;
    return true;
}

/* The timeout of the one rank whose collective differs from that of two
 * or more others, when the ranks show exactly two; NULL otherwise.
 * The order of `ops` does not change the answer. */
static const cp_event *odd_one(const rank_op *ops, size_t n, const cp_event **usual)
{
    const rank_op *a = NULL, *b = NULL;   /* the first rank of each type */
    size_t n_a = 0, n_b = 0;
    for (size_t i = 0; i < n; i++) {
        if (!a || same_collective(&ops[i], a)) {
            a = a ? a : &ops[i];
            n_a++;
        } else if (!b || same_collective(&ops[i], b)) {
            b = b ? b : &ops[i];
            n_b++;
        } else {
            return NULL;   /* three types: no single odd one */
        }
    }
    if (!b || (n_a == 1) == (n_b == 1))   /* one of each, or no single one */
        return NULL;
    const rank_op *odd = n_a == 1 ? a : b;
    *usual = (odd == a ? b : a)->e;
    return odd->e;
}

/* The lowest rank's timeout and that of the lowest rank in another type
 * (ops in rank order); false when all agree. */
static bool two_types(const rank_op *ops, size_t n, const cp_event **a, const cp_event **b)
{
    for (size_t i = 1; i < n; i++) {
        if (!same_collective(&ops[i], &ops[0])) {
            *a = ops[0].e;
            *b = ops[i].e;
            return true;
        }
    }
    return false;
}

/* A collective timeout that says which collective it was (not a copy in
 * the launcher's failure table): its type, or NULL. Pipeline stages wait
 * in different point-to-point ops by design; their rules have another
 * kind. */
static const char *timed_out_collective(const cp_incident *inc, const cp_event *e)
{
    if (e->in_table || e->rule == CP_RULE_STACK || inc->cat->rules[e->rule].kind != CP_KIND_NCCL_TIMEOUT)
        return NULL;
    return cp_capset_get(&e->caps, "optype");
}

/* Orders timeouts by the work they stopped in, then by rank and order,
 * so that each work's timeouts form one run. */
static int by_seq_then_rank(const void *a, const void *b)
{
    const rank_op *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return by_rank_then_order(a, b);
}

static size_t ranks_in_run(const rank_op *ops, size_t n)
{
    size_t ranks = n > 0;
    for (size_t i = 1; i < n; i++)
        ranks += ops[i].rank != ops[i - 1].rank;
    return ranks;
}

/* The run of timeouts (ops sorted by sequence number) in the one work
 * where the most ranks stopped: *start and the count. Ranks stopped at
 * one work of one group called the same collective there, or the job was
 * broken; a rank at another work is the lagging rank's case
 * (cp_suspect_lagging), or in another group, and does not compare. */
static size_t busiest_work(const rank_op *ops, size_t n, size_t *start)
{
    size_t best = 0, best_ranks = 0;
    *start = 0;
    for (size_t i = 0, end; i < n; i = end) {
        for (end = i + 1; end < n && ops[end].seq == ops[i].seq; end++)
            ;
        size_t ranks = ranks_in_run(ops + i, end - i);
        if (ranks > best_ranks) {
            best_ranks = ranks;
            best = end - i;
            *start = i;
        }
    }
    return best;
}

/* Whether the timeouts name two process groups: their numbers then
 * happen to be equal and say nothing about each other. */
static bool two_groups(const rank_op *ops, size_t n)
{
    group_key group = {-1, -1};
    for (size_t i = 0; i < n; i++)
        if (other_group(ops[i].e, &group))
            return true;
    return false;
}

bool cp_suspect_collectives(const cp_incident *inc, cp_collectives *out)
{
    memset(out, 0, sizeof *out);
    rank_op *ops = malloc((inc->n_events ? inc->n_events : 1) * sizeof *ops);
    if (!ops)
        return false;
    size_t n = 0;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        const char *op = timed_out_collective(inc, e);
        int rank = event_rank(inc, e);
        if (!op || rank < 0)
            continue;
        int64_t numel = same_size_everywhere(op) ? cap_i64(&e->caps, "numel", -1) : -1;
        ops[n++] = (rank_op){e, rank, i, op, numel, cap_i64(&e->caps, "seq", -1)};
    }
    qsort(ops, n, sizeof *ops, by_seq_then_rank);
    size_t start;
    size_t count = busiest_work(ops, n, &start);
    rank_op *at = ops + start;
    if (!two_groups(at, count) && one_per_rank(at, &count) && !(out->odd = odd_one(at, count, &out->usual)))
        two_types(at, count, &out->split_a, &out->split_b);
    free(ops);
    return out->odd || out->split_a;
}

bool cp_timeouts_among_first(const cp_incident *inc)
{
    int seen = 0;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        if (!timed_out_collective(inc, e))
            continue;
        int64_t seq = cap_i64(&e->caps, "seq", -1);
        if (seq < 0 || seq > CP_STARTUP_SEQ || cap_i64(&e->caps, "numel", 0) > CP_SETUP_NUMEL)
            return false;
        seen++;
    }
    return seen > 0;
}

bool cp_stall_at_startup(const cp_incident *inc, int *lowest_rank)
{
    int barriers = 0;
    *lowest_rank = -1;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        /* the watchdog's own lines, not a report naming a culprit */
        const char *op = timed_out_collective(inc, e);
        if (!op || inc->cat->rules[e->rule].role != CP_ROLE_CASCADE)
            continue;
        int64_t seq = cap_i64(&e->caps, "seq", -1), numel = cap_i64(&e->caps, "numel", -1);
        if (seq < 0)
            continue;   /* PyTorch before 1.10 names no sequence number */
        if (seq > CP_STARTUP_SEQ || (strcmp(op, "ALLREDUCE") != 0 && strcmp(op, "BROADCAST") != 0) || numel > 1)
            return false;
        if (numel != 1)
            continue;
        barriers++;
        int r = event_rank(inc, e);
        if (r >= 0 && (*lowest_rank < 0 || r < *lowest_rank))
            *lowest_rank = r;
    }
    return barriers > 0;
}

static bool phase_later(const cp_writer *a, const cp_writer *b)
{
    if (timed(&a->phase_time) && timed(&b->phase_time) && a->phase_time.ms != b->phase_time.ms)
        return a->phase_time.ms > b->phase_time.ms;
    return a->phase_stream == b->phase_stream ? a->phase_line > b->phase_line : a->phase_stream > b->phase_stream;
}

/* One rank may be filed under several writers (lines with and without a
 * rank tag); only its latest phase line tells where it is. Returns, per
 * rank, the writer holding that line (-1 none); caller frees. */
static int *latest_phase_writers(const cp_incident *inc, int *n_out)
{
    int n = cp_ranks_extent(inc);
    *n_out = n;
    int *latest = malloc((size_t)(n > 0 ? n : 1) * sizeof *latest);
    if (!latest)
        return NULL;
    for (int r = 0; r < n; r++)
        latest[r] = -1;
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->rank < 0 || w->rank >= n || w->phase == CP_PHASE_NONE)
            continue;
        if (latest[w->rank] < 0 || phase_later(w, &inc->writers[latest[w->rank]]))
            latest[w->rank] = (int)i;
    }
    return latest;
}

static bool is_current_phase(const cp_incident *inc, const int *latest, int n, size_t wi)
{
    int r = inc->writers[wi].rank;
    return r < 0 || r >= n || !latest || latest[r] == (int)wi;
}

int cp_suspect_saving(const cp_incident *inc, bool *unattributed)
{
    int found = -1, n_begin = 0, n;
    int *latest = latest_phase_writers(inc, &n);
    *unattributed = false;
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->phase != CP_PHASE_CHECKPOINT_SAVE || w->phase_state == CP_STATE_END ||
            !is_current_phase(inc, latest, n, i))
            continue;
        n_begin++;
        if (w->rank < 0)
            *unattributed = true;
        else
            found = w->rank;
    }
    free(latest);
    return n_begin == 1 && found >= 0 ? found : -1;
}

uint64_t *cp_first_cascade_lines(const cp_incident *inc)
{
    uint64_t *first = malloc((inc->n_streams ? inc->n_streams : 1) * sizeof *first);
    if (!first)
        return NULL;
    for (size_t s = 0; s < inc->n_streams; s++)
        first[s] = UINT64_MAX;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        if (e->stream >= 0 && (size_t)e->stream < inc->n_streams && role_of(inc, e) == CP_ROLE_CASCADE &&
            e->line < first[e->stream])
            first[e->stream] = e->line;
    }
    return first;
}

/* A save that began and had not ended right where the stall surfaced. A
 * save line that says the save ended counts only without timestamps: with
 * them, ranks that finished a save and then blocked in the next collective
 * (waiting for a straggler stuck elsewhere) are not stuck in the save. */
bool cp_save_before_stall(const cp_incident *inc)
{
    int n;
    int *latest = latest_phase_writers(inc, &n);
    uint64_t *first = cp_first_cascade_lines(inc);
    bool near = false;
    for (size_t j = 0; first && j < inc->n_writers && !near; j++) {
        const cp_writer *w = &inc->writers[j];
        if (w->phase != CP_PHASE_CHECKPOINT_SAVE || !is_current_phase(inc, latest, n, j))
            continue;
        if (w->phase_state == CP_STATE_END && timed(&w->phase_time))
            continue;
        uint64_t c = cp_first_cascade_in(first, inc, w->phase_stream);
        near = c != UINT64_MAX && w->phase_line < c && c - w->phase_line <= CP_SAVE_NEAR_LINES;
    }
    free(first);
    free(latest);
    return near;
}

int cp_ranks_extent(const cp_incident *inc)
{
    int n = inc->world_size;
    for (size_t i = 0; i < inc->n_writers; i++)
        if (inc->writers[i].rank + 1 > n)
            n = inc->writers[i].rank + 1;
    return n > CP_MAX_RANK_ROWS ? CP_MAX_RANK_ROWS : n;
}

/* Whether the event is another process's report about the rank it names
 * (the launcher's "failed (exitcode: -6) local_rank: 3", "Sending process
 * P closing signal SIGTERM", its failure table's "Signal 6 (SIGABRT)"
 * row), not the rank's own output. A traceback the table copies from the
 * rank's error file is the rank's own. */
static bool report_about_rank(const cp_incident *inc, const cp_event *e)
{
    const cp_rule *r = rule_of(inc, e);
    if (!r)
        return false;
    if (e->in_table)
        return r->role == CP_ROLE_CASCADE;
    return r->alone && (e->rank_via == CP_VIA_SUBJECT || e->rank_via == CP_VIA_LOCAL_RANK);
}

bool cp_rank_exited_cleanly(const cp_incident *inc, int rank)
{
    if (rank < 0 || inc->n_table == 0 || !cp_single_host(inc))
        return false;
    for (size_t i = 0; i < inc->n_table; i++)
        if (inc->table[i].rank == rank)
            return false;
    for (size_t i = 0; i < inc->n_events; i++)
        if (event_rank(inc, &inc->events[i]) == rank && report_about_rank(inc, &inc->events[i]))
            return false;
    return true;
}

/* The one rank of 0..n-1 that `marked` leaves false; -1 when none or
 * several are. A world no line stated is only as large as the highest
 * rank seen: then one rank marked says too little about who else there
 * was, and -1 too. */
static int the_one_unmarked(const cp_incident *inc, const bool *marked, int n)
{
    int rank = -1, count = 0;
    for (int r = 0; r < n; r++)
        if (!marked[r]) {
            rank = r;
            count++;
        }
    if (count != 1 || (inc->world_size_stated < 2 && n - count < 2))
        return -1;
    return rank;
}

/* Whether a row of the failure table died by a signal of its own
 * (SIGFPE, SIGSEGV, SIGKILL): that rank failed on its own account, not
 * because a peer went away. An abort (the watchdog's) or the launcher's
 * SIGTERM can follow a peer's leaving. */
static bool own_signal_death(const cp_table_entry *t)
{
    return t->signal > 0 && t->signal != 6 && t->signal != 15;
}

int cp_suspect_absent_from_table(const cp_incident *inc)
{
    /* the world stated, or seen: a rank the table leaves out below the
     * highest rank seen exists (ranks are 0..N-1) */
    int n = cp_ranks_extent(inc);
    if (n < 2 || inc->n_table == 0)
        return -1;
    for (size_t i = 0; i < inc->n_table; i++)
        if (own_signal_death(&inc->table[i]))
            return -1;
    bool *listed = calloc((size_t)n, sizeof *listed);
    if (!listed)
        return -1;
    for (size_t i = 0; i < inc->n_table; i++)
        if (inc->table[i].rank >= 0 && inc->table[i].rank < n)
            listed[inc->table[i].rank] = true;
    int absent = the_one_unmarked(inc, listed, n);
    free(listed);
    return absent >= 0 && cp_rank_exited_cleanly(inc, absent) ? absent : -1;
}

/* The only rank of a known world that printed no error while the others
 * timed out is the one they were waiting for. The launcher's reports about
 * a rank count as the rank's own only with count_table (its failure table
 * says the rank failed on its own account), and its stopping a rank never
 * does. */
int cp_suspect_silent(const cp_incident *inc, bool count_table)
{
    if (inc->world_size < 2)
        return -1;
    int n = cp_ranks_extent(inc);
    bool *spoke = calloc((size_t)n, sizeof *spoke);
    if (!spoke)
        return -1;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        int r = event_rank(inc, e);
        /* a context line (a set-up line, a NaN loss) is no error report */
        bool about = report_about_rank(inc, e);
        if (r >= 0 && r < n && e->rule != CP_RULE_STACK && role_of(inc, e) != CP_ROLE_CONTEXT &&
            !(about && (!count_table || stopped_by_launcher(e))))
            spoke[r] = true;
    }
    /* a rank in the launcher's failure table failed on its own account;
     * the rank the others waited for is the one the launcher had to stop */
    for (size_t i = 0; count_table && i < inc->n_table; i++)
        if (inc->table[i].rank >= 0 && inc->table[i].rank < n && inc->table[i].signal != 15)
            spoke[inc->table[i].rank] = true;
    int silent = the_one_unmarked(inc, spoke, n);
    free(spoke);
    return silent;
}

/* Whether a stack is faulthandler's "Current thread": the thread that ran
 * Python when the signal came, the main thread; the others of the same
 * dump ("Thread 0x...") are helpers (a DataLoader's queue feeder). */
static bool current_thread(const cp_event *e)
{
    return e->text && strstr(e->text, "Current thread ") != NULL;
}

const cp_event *cp_stack_of_rank(const cp_incident *inc, int rank)
{
    const cp_event *only = NULL, *own = NULL;
    int n_unknown = 0;
    for (size_t i = 0; i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        if (e->rule != CP_RULE_STACK)
            continue;
        int r = event_rank(inc, e);
        if (r == rank && rank >= 0) {
            if (current_thread(e))
                return e;
            if (!own)
                own = e;
        }
        if (r < 0) {
            only = e;
            n_unknown++;
        }
    }
    if (own)
        return own;
    /* one stack nobody could place, in a hang with one suspect: it is the
     * suspect's (the launcher makes the stuck rank dump it on SIGTERM) */
    return n_unknown == 1 ? only : NULL;
}

/* Whether `x` is the one rank seen so far (*r, -1 none); false on a second. */
static bool only_rank(int x, int *r)
{
    if (x < 0)
        return true;
    if (*r >= 0 && *r != x)
        return false;
    *r = x;
    return true;
}

int cp_single_known_rank(const cp_incident *inc)
{
    int r = -1;
    for (size_t i = 0; i < inc->n_writers; i++)
        if (!only_rank(inc->writers[i].rank, &r))
            return -1;
    /* and the ranks lines name as their subject: the launcher's "failed
     * (exitcode: 1) local_rank: 0" from an unranked writer */
    for (size_t i = 0; i < inc->n_events; i++)
        if (!only_rank(event_rank(inc, &inc->events[i]), &r))
            return -1;
    /* and the failure table's rows: a table listing several ranks says
     * the launcher's one "failed ... local_rank: 0" is only the first
     * failure its agent noticed */
    for (size_t i = 0; i < inc->n_table; i++)
        if (!only_rank(inc->table[i].rank, &r))
            return -1;
    return r;
}

static const char *skip_space(const char *s)
{
    while (s && (*s == ' ' || *s == '\t'))
        s++;
    return s ? s : "";
}

/* A copy in torchrun's failure table of an error line, found by the
 * hash of its rule and text. */
typedef struct table_copy {
    uint64_t hash;
    size_t event;
} table_copy;

static uint64_t copy_hash(const cp_event *e)
{
    return cp_hash_str(cp_hash_step(CP_HASH_SEED, e->rule), skip_space(e->text));
}

static int by_hash(const void *a, const void *b)
{
    const table_copy *x = a, *y = b;
    return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/* The same error copied into torchrun's failure table (with @record)
 * carries the rank its own traceback did not. `copies` (sorted by hash)
 * are the events of the table that have a rank; every copy of the error
 * must agree on it. */
static int rank_from_table_copy(const cp_incident *inc, const cp_event *ev, const table_copy *copies,
                                size_t n_copies)
{
    const uint64_t h = copy_hash(ev);
    size_t lo = 0, hi = n_copies;
    while (lo < hi) {   /* the first copy with this hash */
        size_t mid = lo + (hi - lo) / 2;
        if (copies[mid].hash < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    int found = -1;
    for (size_t i = lo; i < n_copies && copies[i].hash == h; i++) {
        const cp_event *e = &inc->events[copies[i].event];
        if (e == ev || e->rule != ev->rule || strcmp(skip_space(e->text), skip_space(ev->text)) != 0)
            continue;
        int r = event_rank(inc, e);
        if (found >= 0 && found != r)
            return -1;
        found = r;
    }
    return found;
}

/* A line about another process (the kernel's "Killed process 28696", the
 * launcher's "failed (exitcode: -9) local_rank: 0 (pid: 28696)") belongs
 * to the rank of that process. */
/* PCI bus ids come as "0000:9a:00", "00000000:9A:00.0" (kernel) or NCCL's
 * "9a000" (the hex digits of domain, bus, device and function run
 * together): both become "9a:00". Returns false for anything else. */
bool cp_busid_norm(const char *s, char out[8])
{
    unsigned parts[4] = {0};
    int n = 0;
    bool colon = strchr(s, ':') != NULL;
    if (colon) {
        const char *p = s;
        while (*p && n < 4) {
            char *end;
            unsigned long v = strtoul(p, &end, 16);
            if (end == p)
                return false;
            parts[n++] = (unsigned)v;
            p = *end == ':' || *end == '.' ? end + 1 : end;
            if (*end == '.')
                break;
        }
        if (n < 2)
            return false;
        unsigned bus = n >= 3 ? parts[1] : parts[0], dev = n >= 3 ? parts[2] : parts[1];
        snprintf(out, 8, "%02x:%02x", bus & 0xff, dev & 0xff);
        return true;
    }
    char *end;
    unsigned long long v = strtoull(s, &end, 16);
    if (end == s || *end)
        return false;
    snprintf(out, 8, "%02x:%02x", (unsigned)((v >> 12) & 0xff), (unsigned)((v >> 4) & 0xff));
    return true;
}

static int rank_of_busid(const cp_incident *inc, const char *host, const char *busid)
{
    char want[8], have[8];
    if (!cp_busid_norm(busid, want))
        return -1;
    for (size_t i = 0; i < inc->n_idents; i++) {
        const cp_ident *x = &inc->idents[i];
        if (x->nranks != inc->world_size || !x->busid[0] || (host[0] && x->host[0] && strcmp(host, x->host) != 0))
            continue;
        if (cp_busid_norm(x->busid, have) && strcmp(want, have) == 0)
            return x->rank;
    }
    return -1;
}

void cp_ranks_from_subjects(cp_incident *inc)
{
    const bool one_host = cp_single_host(inc);
    cp_pid_ranks by_pid;
    cp_pid_ranks_build(inc, &by_pid);   /* out of memory: empty, finds nothing */
    for (size_t i = 0; i < inc->n_events; i++) {
        cp_event *e = &inc->events[i];
        if (event_rank(inc, e) >= 0 || e->rule == CP_RULE_STACK)
            continue;
        const char *host = e->origin.host;
        int64_t pid = cap_i64(&e->caps, "pid", cap_i64(&e->caps, "next_pid", -1));
        int64_t local = cap_i64(&e->caps, "local_rank", -1);
        int r = pid > 0 && pid < INT_MAX ? cp_pid_ranks_find(&by_pid, host, (int)pid) : -1;
        if (r < 0 && local >= 0 && local < INT_MAX)
            r = cp_rank_of_local(inc, host, (int)local);
        const char *busid = cp_capset_get(&e->caps, "busid");
        if (r < 0 && busid)
            r = rank_of_busid(inc, host, busid);
        cp_rank_via via = CP_VIA_SUBJECT;
        if (r < 0 && local >= 0 && local < INT_MAX && one_host) {
            r = (int)local;   /* as cp_ranks_resolve does for writers */
            via = CP_VIA_LOCAL_RANK;
        }
        e->origin.rank = r;
        if (r >= 0)
            e->rank_via = via;
    }
    cp_pid_ranks_free(&by_pid);
}

void cp_ranks_from_table_copies(cp_incident *inc)
{
    if (!inc->n_table)
        return;
    /* the table's copies, by hash: the events to place may be thousands
     * (a timeout on every rank), and so may the copies */
    size_t n_copies = 0;
    table_copy *copies = malloc((inc->n_events ? inc->n_events : 1) * sizeof *copies);
    if (!copies)
        return;
    for (size_t i = 0; i < inc->n_events; i++)
        if (inc->events[i].in_table && event_rank(inc, &inc->events[i]) >= 0)
            copies[n_copies++] = (table_copy){copy_hash(&inc->events[i]), i};
    qsort(copies, n_copies, sizeof *copies, by_hash);
    for (size_t i = 0; n_copies && i < inc->n_events; i++) {
        cp_event *e = &inc->events[i];
        if (!e->in_table && event_rank(inc, e) < 0 && e->rule != CP_RULE_STACK &&
            (e->origin.rank = rank_from_table_copy(inc, e, copies, n_copies)) >= 0)
            e->rank_via = CP_VIA_TABLE_COPY;
    }
    free(copies);
}

/* The one rank whose last logged step is behind every other rank's (or
 * which logged none while the others did); -1 when that is not unique. */
int cp_suspect_least_progress(const cp_incident *inc, bool every_rank_stepped)
{
    int n = inc->world_size;
    for (size_t i = 0; i < inc->n_writers; i++)
        if (inc->writers[i].rank + 1 > n)
            n = inc->writers[i].rank + 1;
    if (n < 2 || n > (1 << 20))
        return -1;
    int64_t *step = malloc((size_t)n * sizeof *step);
    if (!step)
        return -1;
    for (int r = 0; r < n; r++)
        step[r] = -1;
    bool any = false;
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->rank >= 0 && w->rank < n && w->last_step > step[w->rank]) {
            step[w->rank] = w->last_step;
            any = true;
        }
    }
    int low = -1, count = 0;
    int64_t low_step = INT64_MAX, high_step = -1;
    for (int r = 0; r < n; r++) {
        if (step[r] > high_step)
            high_step = step[r];
        if (step[r] < low_step) {
            low_step = step[r];
            low = r;
            count = 1;
        } else if (step[r] == low_step) {
            count++;
        }
    }
    free(step);
    if (every_rank_stepped && low_step < 0)
        return -1;
    return any && count == 1 && low_step < high_step ? low : -1;
}

/* Each rank's last logged loss (of its writer with the furthest step). */
typedef struct rank_loss {
    int rank;
    int64_t step;
    float loss;
} rank_loss;

static int by_loss_rank(const void *a, const void *b)
{
    const rank_loss *x = a, *y = b;
    if (x->rank != y->rank)
        return (x->rank > y->rank) - (x->rank < y->rank);
    return (x->step < y->step) - (x->step > y->step);   /* furthest step first */
}

static int by_magnitude(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* One entry per rank with a logged loss, in *out (the caller frees it). */
static size_t rank_losses(const cp_incident *inc, rank_loss **out)
{
    rank_loss *l = malloc((inc->n_writers ? inc->n_writers : 1) * sizeof *l);
    size_t n = 0;
    *out = l;
    for (size_t i = 0; l && i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->rank >= 0 && w->last_loss.read)
            l[n++] = (rank_loss){w->rank, w->last_step, w->last_loss.value};
    }
    if (!l)
        return 0;
    qsort(l, n, sizeof *l, by_loss_rank);
    size_t ranks = 0;
    for (size_t i = 0; i < n; i++)
        if (ranks == 0 || l[i].rank != l[ranks - 1].rank)
            l[ranks++] = l[i];
    return ranks;
}

int cp_suspect_loss_outlier(const cp_incident *inc, float *its, int64_t *step, float *others)
{
    rank_loss *l;
    size_t n = rank_losses(inc, &l);
    float *finite = n ? malloc(n * sizeof *finite) : NULL;
    int found = -1;
    if (n >= 3 && finite) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (isfinite(l[i].loss))
                finite[k++] = fabsf(l[i].loss);
        qsort(finite, k, sizeof *finite, by_magnitude);
        /* the median of the finite ones, which a single outlier cannot move much */
        float median = k ? finite[k / 2] : 0;
        /* under a loss of 1 the bar stays at CP_LOSS_OUTLIER itself: a
         * run converged near zero spreads by more than a factor between
         * ranks without anything wrong */
        float floor = median > 1 ? median : 1;
        size_t odd = n;
        int outliers = 0;
        for (size_t i = 0; i < n; i++)
            if (!isfinite(l[i].loss) || fabsf(l[i].loss) >= floor * CP_LOSS_OUTLIER)
                odd = i, outliers++;
        if (outliers == 1) {
            found = l[odd].rank;
            *its = l[odd].loss;
            *step = l[odd].step;
            *others = median;
        }
    }
    free(finite);
    free(l);
    return found;
}

/* Each rank's odd_value capture, the first it reported (`order`: the
 * event's index, so that sorting keeps that one first). */
typedef struct rank_value {
    int rank;
    size_t order;
    const char *value;
} rank_value;

static int value_by_rank(const void *a, const void *b)
{
    const rank_value *x = a, *y = b;
    if (x->rank != y->rank)
        return (x->rank > y->rank) - (x->rank < y->rank);
    return (x->order > y->order) - (x->order < y->order);
}

int cp_suspect_odd_value(const cp_incident *inc, char *its, char *theirs)
{
    rank_value *v = malloc((inc->n_events ? inc->n_events : 1) * sizeof *v);
    size_t n = 0;
    int found = -1;
    for (size_t i = 0; v && i < inc->n_events; i++) {
        const cp_event *e = &inc->events[i];
        const char *x = cp_capset_get(&e->caps, "odd_value");
        int r = event_rank(inc, e);
        if (x && r >= 0 && !e->in_table)
            v[n++] = (rank_value){r, i, x};
    }
    if (v && n >= 3) {
        qsort(v, n, sizeof *v, value_by_rank);
        size_t ranks = 0;
        for (size_t i = 0; i < n; i++)
            if (ranks == 0 || v[i].rank != v[ranks - 1].rank)
                v[ranks++] = v[i];
        /* the majority value is the one the first two agreeing ranks give */
        const char *common = NULL;
        for (size_t i = 0; i < ranks && !common; i++)
            for (size_t j = i + 1; j < ranks && !common; j++)
                if (strcmp(v[i].value, v[j].value) == 0)
                    common = v[i].value;
        size_t odd = ranks;
        int odds = 0;
        for (size_t i = 0; common && i < ranks; i++)
            if (strcmp(v[i].value, common) != 0)
                odd = i, odds++;
        if (common && odds == 1 && ranks >= 3) {
            found = v[odd].rank;
            snprintf(its, CP_CAPTURE_VALUE, "%s", v[odd].value);
            snprintf(theirs, CP_CAPTURE_VALUE, "%s", common);
        }
    }
    free(v);
    return found;
}

typedef struct rank_progress {
    int64_t step;     /* -1 none */
    int64_t last_ms;  /* INT64_MIN: no timed line */
} rank_progress;

static bool stall_by_step(const rank_progress *p, int n, cp_stall *out)
{
    int low = -1, n_steps = 0;
    int64_t high = -1;
    for (int r = 0; r < n; r++) {
        if (p[r].step < 0)
            continue;
        n_steps++;
        if (low < 0 || p[r].step < p[low].step)
            low = r;
        if (p[r].step > high)
            high = p[r].step;
    }
    if (n_steps < 3 || p[low].step >= high)
        return false;
    for (int r = 0; r < n; r++) /* the others agree */
        if (r != low && p[r].step >= 0 && p[r].step != high)
            return false;
    *out = (cp_stall){.rank = low, .step_behind = true, .its_step = p[low].step, .others_step = high};
    return true;
}

static bool stall_by_time(const rank_progress *p, int n, cp_stall *out)
{
    int low = -1, n_timed = 0;
    int64_t second = INT64_MAX;
    for (int r = 0; r < n; r++) {
        if (p[r].last_ms == INT64_MIN)
            continue;
        n_timed++;
        if (low < 0 || p[r].last_ms < p[low].last_ms) {
            if (low >= 0)
                second = p[low].last_ms;
            low = r;
        } else if (p[r].last_ms < second) {
            second = p[r].last_ms;
        }
    }
    if (n_timed < 3 || second == INT64_MAX || second - p[low].last_ms < CP_STALL_MS)
        return false;
    *out = (cp_stall){.rank = low, .gap_ms = second - p[low].last_ms};
    return true;
}

bool cp_suspect_stalled(const cp_incident *inc, cp_stall *out)
{
    int n = cp_ranks_extent(inc);
    if (n < 3)
        return false;
    rank_progress *p = malloc((size_t)n * sizeof *p);
    if (!p)
        return false;
    for (int r = 0; r < n; r++)
        p[r] = (rank_progress){-1, INT64_MIN};
    for (size_t i = 0; i < inc->n_writers; i++) {
        const cp_writer *w = &inc->writers[i];
        if (w->rank < 0 || w->rank >= n)
            continue;
        if (w->last_step > p[w->rank].step)
            p[w->rank].step = w->last_step;
        if (timed(&w->last_time) && w->last_time.ms > p[w->rank].last_ms)
            p[w->rank].last_ms = w->last_time.ms;
    }
    bool found = stall_by_step(p, n, out) || stall_by_time(p, n, out);
    free(p);
    if (!found)
        return false;
    int m;
    int *latest = latest_phase_writers(inc, &m);
    out->phase_writer = latest && out->rank < m ? latest[out->rank] : -1;
    free(latest);
    return true;
}
