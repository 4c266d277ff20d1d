/* events.c - from matched lines to events.
 *
 * The matcher says which rules hit which lines; this module attributes each
 * such line (frame.c), files it under a writer, and assembles multi-line
 * events: a Python traceback with its frames and final exception (chained
 * exceptions included), a C++ "Exception raised from ... frame #N" stack, a
 * faulthandler or Flight Recorder stack. Ranks interleave in combined logs,
 * so a stream keeps one open event per writer; an event closes when its
 * writer has been quiet for GAP lines.
 *
 * Lines without their own prefix (a traceback printed to stderr under a
 * Python logging line) inherit the identity of the matched line just above
 * them, which is how a person reads such a log too.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "util/buf.h"
#include "incident.h"
#include "util/prefetch.h"
#include "util/strutil.h"

enum {
    GAP = 6,            /* lines of silence that close an event */
    MAX_OPEN = 32,      /* open events per stream */
    MAX_CAND = 16,      /* candidate error lines per event */
    TABLE_SPAN = 12     /* lines a failure-table entry stays open */
};

typedef struct candidate {
    uint32_t rule;
    uint64_t line;
    char *text;
} candidate;

typedef struct block {
    bool active;
    int writer;
    cp_origin origin;
    uint64_t first_line, last_line;
    uint64_t traceback_line;  /* the last traceback line (a header, a chain) */
    char *first_text;
    candidate cand[MAX_CAND];
    int n_cand;
    cp_captures caps;
    cp_stackframe frames[CP_FRAMES_MAX];
    size_t n_frames;
    bool in_table, has_traceback;
    bool dump_frames;      /* has frames only stack dumps print (faulthandler's) */
    int raising_frames;    /* frames only tracebacks print (raising_frame) */
    bool chained;          /* the last traceback line links two exceptions */
    bool awaits_time;      /* counted in untimed_open */
    bool time_own;         /* a line of the block carried a time itself */
    cp_time time_before;   /* the stream's last time when the block began */
    cp_time time_after;    /* the first time the stream showed after it began */
} block;

typedef struct stream_scan {
    int index;
    cp_origin path_origin;
    cp_time last_time;
    bool prev_inheritable;
    bool prev_frame;          /* the line before was a traceback's frame */
    uint64_t prev_line;
    cp_origin prev_origin;
    int prev_next_pid;
    size_t first_untimed;     /* events of this stream before this index have times */
    cp_table_entry table;     /* entry being read */
    int table_writer;         /* the writer printing the table (the launcher) */
    bool table_open;
    uint64_t table_until;
    bool root_cause_section;
    char section_busid[CP_CAPTURE_VALUE]; /* the GPU block being read (nvidia-smi) */
    cp_hit_list hits;         /* scratch of cp_incident_feed */
    cp_prepared prep;
    int untimed_open;         /* open blocks still waiting for a time after them */
    int *pending;             /* writers with a progress line in this chunk */
    size_t n_pending, cap_pending;
    uint64_t lines;           /* the stream's lines so far */
    /* Last, as cp_incident_begin_stream clears the fields before it: a
     * block is all zero whenever it is not active (block_reset), and
     * zeroing the 32 of them again cost 350 KB of stores per stream. */
    block open[MAX_OPEN];
} stream_scan;

int cp_incident_init(cp_incident *inc, const cp_catalog *cat, cp_matcher *m)
{
    memset(inc, 0, sizeof *inc);
    inc->cat = cat;
    inc->matcher = m;
    const char *no_thin = getenv("CULPRIT_NO_THIN");
    inc->thin = !no_thin || !*no_thin || *no_thin == '0';
    inc->scan = calloc(1, sizeof(stream_scan));
    return inc->scan ? 0 : -1;
}

static void free_event(cp_event *e)
{
    if (!e->text_is_ev)
        free(e->text);
    cp_capset_free(&e->caps);
    for (size_t i = 0; i < e->n_frames; i++) {
        free(e->frames[i].file);
        free(e->frames[i].func);
        free(e->frames[i].text);
    }
    free(e->frames);
    for (int i = 0; i < e->n_ev; i++)
        free(e->ev[i].text);
    free(e->ev);
}

static void block_reset(block *b)
{
    free(b->first_text);
    for (int i = 0; i < b->n_cand; i++)
        free(b->cand[i].text);
    for (size_t i = 0; i < b->n_frames; i++) {
        free(b->frames[i].file);
        free(b->frames[i].func);
        free(b->frames[i].text);
    }
    memset(b, 0, sizeof *b);
}

void cp_incident_free(cp_incident *inc)
{
    if (!inc)
        return;
    stream_scan *st = inc->scan;
    if (st) {
        for (int i = 0; i < MAX_OPEN; i++)
            block_reset(&st->open[i]);
        cp_hit_list_free(&st->hits);
        cp_prepared_free(&st->prep);
        free(st->pending);
        free(st);
    }
    for (size_t i = 0; i < inc->n_events; i++)
        free_event(&inc->events[i]);
    free(inc->events);
    for (size_t i = 0; i < inc->n_writers; i++)
        free(inc->writers[i].phase_text);
    free(inc->writers);
    cp_ranks_free_index(inc);
    for (size_t i = 0; i < inc->n_streams; i++)
        free(inc->streams[i]);
    free(inc->streams);
    for (size_t i = 0; i < inc->n_warnings; i++)
        free(inc->warnings[i]);
    free(inc->warnings);
    free(inc->table);
    free(inc->idents);
    memset(inc, 0, sizeof *inc);
}

void cp_incident_warn(cp_incident *inc, const char *path, const char *message)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s: %s", path, message);
    /* grown by doubling: a folder of 100,000 unreadable files warns
     * 100,000 times, and a realloc per warning copies the array each time
     * where realloc cannot grow in place (ASan's always copies) */
    char **p = cp_grow(inc->warnings, &inc->cap_warnings, inc->n_warnings, sizeof *p, 16);
    if (!p)
        return;
    inc->warnings = p;
    if ((p[inc->n_warnings] = cp_strdup(buf)))
        inc->n_warnings++;
}

int cp_incident_begin_stream(cp_incident *inc, const char *path)
{
    stream_scan *st = inc->scan;
    char **p = cp_grow(inc->streams, &inc->cap_streams, inc->n_streams, sizeof *p, 16);
    if (!p)
        return -1;
    inc->streams = p;
    if (!(p[inc->n_streams] = cp_strdup(path)))
        return -1;
    cp_hit_list hits = st->hits;
    cp_prepared prep = st->prep;
    int *pending = st->pending;
    size_t cap_pending = st->cap_pending;
    for (int i = 0; i < MAX_OPEN; i++)
        if (st->open[i].active)     /* a stream that was never ended */
            block_reset(&st->open[i]);
    memset(st, 0, offsetof(stream_scan, open));
    st->hits = hits;
    st->prep = prep;
    st->pending = pending;
    st->cap_pending = cap_pending;
    st->index = (int)inc->n_streams++;
    cp_origin_init(&st->path_origin);
    cp_frame_from_path(path, &st->path_origin);
    st->first_untimed = inc->n_events;
    return 0;
}

/* ---- events ------------------------------------------------------------ */

static cp_event *event_new(cp_incident *inc)
{
    if (inc->n_events >= CP_EVENTS_MAX) {
        inc->dropped_events++;
        return NULL;
    }
    cp_event *grown = cp_grow(inc->events, &inc->cap_events, inc->n_events, sizeof *grown, 256);
    if (!grown)
        return NULL;
    inc->events = grown;
    cp_event *e = &inc->events[inc->n_events++];
    memset(e, 0, sizeof *e);
    return e;
}

static void add_evidence(cp_event *e, int stream, uint64_t line, const char *text)
{
    if (!text || e->n_ev >= CP_EVIDENCE_MAX)
        return;
    for (int i = 0; i < e->n_ev; i++)
        if (e->ev[i].line == line && e->ev[i].stream == stream)
            return;
    cp_evline *grown = realloc(e->ev, (size_t)(e->n_ev + 1) * sizeof *grown);
    if (!grown)
        return;
    e->ev = grown;
    int at = e->n_ev;
    while (at > 0 && e->ev[at - 1].line > line)
        at--;
    memmove(&e->ev[at + 1], &e->ev[at], (size_t)(e->n_ev - at) * sizeof e->ev[0]);
    e->ev[at].stream = stream;
    e->ev[at].line = line;
    e->ev[at].text = cp_strdup(text);
    e->n_ev++;
}

bool cp_frames_match(const cp_incident *inc, uint32_t rule, const cp_stackframe *frames, size_t n,
                     uint64_t error_line)
{
    const int reach = inc->cat->rules[rule].frame_reach;
    int seen = 0;
    /* innermost first: a traceback prints it last, above its error line
     * (frames after that line are a later traceback's) */
    for (size_t i = n; i-- > 0;) {
        const char *t = frames[i].text;
        if (reach && frames[i].line >= error_line)
            continue;
        if (t && cp_matcher_if_frame(inc->matcher, rule, t, strlen(t)))
            return true;
        if (reach && frames[i].file && ++seen == reach)
            return false;
    }
    return false;
}

/* A frame the rule's if_frame must see; the key line counts too, so a
 * condition can also name text on the error line itself. */
static bool rule_applies(cp_incident *inc, const block *b, const candidate *c)
{
    return !cp_matcher_has_if_frame(inc->matcher, c->rule) ||
           cp_frames_match(inc, c->rule, b->frames, b->n_frames, c->line);
}

/* Where it happened: a stack dump lists the innermost frame first (its
 * first frames matter); a traceback lists it last. Python frames only. */
enum { FRAME_EVIDENCE = 3 };

static void add_frame_evidence(cp_event *e, int stream, bool innermost_first)
{
    int added = 0;
    for (size_t k = 0; k < e->n_frames && added < FRAME_EVIDENCE; k++) {
        size_t i = innermost_first ? k : e->n_frames - 1 - k;
        const cp_stackframe *f = &e->frames[i];
        if (!f->text || !f->file)
            continue;
        add_evidence(e, stream, f->line, f->text);
        added++;
    }
}

/* A native frame (C++'s "frame #3: c10d::...", which names no Python
 * file) was kept for the rules' if_frame, which chose the event's rule in
 * finalize, and nothing reads its line again; at thousands of ranks each
 * watchdog's twenty native frames were the bulk of a cascade's memory. A
 * stack that no rule named keeps them: a `cut` rule may still read them. */
static void drop_native_frame_texts(cp_event *e)
{
    if (e->rule == CP_RULE_STACK)
        return;
    for (size_t i = 0; i < e->n_frames; i++) {
        if (e->frames[i].file)
            continue;
        free(e->frames[i].text);
        e->frames[i].text = NULL;
    }
}

/* The key line is usually among the evidence too (a one-line NCCL
 * timeout is both): the event then uses the evidence's copy instead of
 * keeping a second one, megabytes in a cascade over thousands of ranks. */
static void share_key_text(cp_event *e)
{
    for (int i = 0; i < e->n_ev && e->text; i++) {
        const cp_evline *x = &e->ev[i];
        if (x->stream == e->stream && x->line == e->line && x->text && strcmp(x->text, e->text) == 0) {
            free(e->text);
            e->text = x->text;
            e->text_is_ev = true;
            return;
        }
    }
}

static int best_candidate(cp_incident *inc, const block *b)
{
    int best = -1;
    for (int i = 0; i < b->n_cand; i++) {
        if (!rule_applies(inc, b, &b->cand[i]))
            continue;
        const cp_rule *r = &inc->cat->rules[b->cand[i].rule];
        int heaviest = best < 0 ? -1 : inc->cat->rules[b->cand[best].rule].weight;
        /* of equal weights the earliest line: the slots are not in line
         * order once a full block has replaced its lightest */
        if (best < 0 || r->weight > heaviest || (r->weight == heaviest && b->cand[i].line < b->cand[best].line))
            best = i;
    }
    return best;
}

/* A traceback's last hit line is a frame; the frame's source line and
 * Python 3.11's caret lines follow it, hitting no rule. A block whose last
 * line is this close to its stream's end is one the input ends in. */
enum { END_SLACK = 4 };

/* Turns an open block into an event; `at_end`: the stream has ended. */
static void finalize(cp_incident *inc, stream_scan *st, block *b, bool at_end)
{
    if (!b->active)
        return;
    if (b->awaits_time)
        st->untimed_open--;
    int best = best_candidate(inc, b);
    /* A stack with no error line (faulthandler, py-spy, a traceback cut
     * short) is kept too: it tells where a rank was. Frames in the form
     * only dumps print are a stack even when a paste cut their header;
     * so are two or more in the form only tracebacks print (a paste that
     * begins inside a traceback). */
    bool headless = b->dump_frames || b->raising_frames >= 2;
    bool stack_only = best < 0 && (b->has_traceback || headless) && b->n_frames > 0;
    cp_event *e = best >= 0 || stack_only ? event_new(inc) : NULL;
    if (e) {
        const candidate *c = best >= 0 ? &b->cand[best] : NULL;
        e->origin = b->origin;
        e->writer = b->writer;
        e->stream = st->index;
        e->line = c ? c->line : b->first_line;
        e->rule = c ? c->rule : CP_RULE_STACK;
        e->text = cp_strdup(c && c->text ? c->text : b->first_text ? b->first_text : "");
        cp_capset_pack(&e->caps, &b->caps);
        e->in_table = b->in_table;
        e->has_traceback = b->has_traceback;
        e->ends_input = at_end && st->lines - b->last_line <= END_SLACK;
        e->time_estimated = !b->time_own;
        if (b->n_frames && (e->frames = calloc(b->n_frames, sizeof *e->frames))) {
            memcpy(e->frames, b->frames, b->n_frames * sizeof *e->frames);
            e->n_frames = b->n_frames;
            b->n_frames = 0; /* ownership moved */
        }
        add_evidence(e, st->index, b->first_line, b->first_text);
        for (int i = 0; i < b->n_cand; i++)
            if (inc->cat->rules[b->cand[i].rule].weight >= 10)
                add_evidence(e, st->index, b->cand[i].line, b->cand[i].text);
        if (stack_only || inc->cat->rules[e->rule].role == CP_ROLE_ROOT)
            add_frame_evidence(e, st->index, stack_only);
        drop_native_frame_texts(e);
        share_key_text(e);
        /* No time of its own: the last time before it, else the first
         * after it (note_time fills that in later). */
        if (e->origin.time.kind == CP_TS_NONE)
            e->origin.time = b->time_before.kind != CP_TS_NONE ? b->time_before : b->time_after;
        if (e->writer >= 0)
            inc->writers[e->writer].n_events++;
    }
    block_reset(b);
}

static void finalize_stale(cp_incident *inc, stream_scan *st, uint64_t line_no)
{
    for (int i = 0; i < MAX_OPEN; i++)
        if (st->open[i].active && line_no > st->open[i].last_line + GAP)
            finalize(inc, st, &st->open[i], false);
}

static block *block_for(cp_incident *inc, stream_scan *st, int writer, uint64_t line_no)
{
    block *free_slot = NULL, *oldest = NULL;
    for (int i = 0; i < MAX_OPEN; i++) {
        block *b = &st->open[i];
        if (b->active && b->writer == writer)
            return b;
        if (!b->active && !free_slot)
            free_slot = b;
        if (b->active && (!oldest || b->last_line < oldest->last_line))
            oldest = b;
    }
    if (!free_slot) {
        finalize(inc, st, oldest, false);
        free_slot = oldest;
    }
    free_slot->active = true;
    free_slot->writer = writer;
    free_slot->first_line = line_no;
    return free_slot;
}

/* Whether another candidate of the block has candidate i's rule. */
static bool has_twin(const block *b, int i)
{
    for (int k = 0; k < b->n_cand; k++)
        if (k != i && b->cand[k].rule == b->cand[i].rule)
            return true;
    return false;
}

/* The slot a new candidate of `rule` takes in a full block, or -1. A
 * repeated rule gives up its lightest, latest line first: every rule
 * keeps a line, so four ranks' same RuntimeError, each also hit by
 * conditional rules whose frames do not match, cannot push out the one
 * rule that applies. Else the lightest candidate goes, if lighter. */
static int slot_to_free(const block *b, const cp_catalog *cat, uint32_t rule)
{
    int twin = -1, lightest = 0;
    bool present = false;
    for (int i = 0; i < b->n_cand; i++) {
        int w = cat->rules[b->cand[i].rule].weight;
        present |= b->cand[i].rule == rule;
        if (w < cat->rules[b->cand[lightest].rule].weight)
            lightest = i;
        if (has_twin(b, i) && (twin < 0 || w < cat->rules[b->cand[twin].rule].weight ||
                               (w == cat->rules[b->cand[twin].rule].weight && b->cand[i].line > b->cand[twin].line)))
            twin = i;
    }
    if (twin >= 0)
        return twin;
    if (present || cat->rules[b->cand[lightest].rule].weight >= cat->rules[rule].weight)
        return -1;
    return lightest;
}

static void add_candidate(block *b, const cp_catalog *cat, uint32_t rule, uint64_t line, const char *text)
{
    int at = b->n_cand;
    if (at == MAX_CAND) {
        if ((at = slot_to_free(b, cat, rule)) < 0)
            return;
        free(b->cand[at].text);
    } else {
        b->n_cand++;
    }
    b->cand[at].rule = rule;
    b->cand[at].line = line;
    b->cand[at].text = cp_strdup(text);
}

/* `library`: a library rule matches its file (analyze.c, the owner). */
static void add_frame(block *b, const cp_captures *caps, uint32_t phase_rule, bool library, bool unowned,
                      const char *text, uint64_t line)
{
    const char *file = cp_captures_get(caps, "file");
    const char *func = cp_captures_get(caps, "func");
    if (b->n_frames == CP_FRAMES_MAX) {
        /* the innermost frames matter most: drop the outermost */
        free(b->frames[0].file);
        free(b->frames[0].func);
        free(b->frames[0].text);
        memmove(&b->frames[0], &b->frames[1], (CP_FRAMES_MAX - 1) * sizeof b->frames[0]);
        b->n_frames--;
    }
    cp_stackframe *f = &b->frames[b->n_frames++];
    f->file = file ? cp_strdup(file) : NULL;
    f->func = func ? cp_strdup(func) : NULL;
    f->phase_rule = phase_rule;
    f->library = library;
    f->unowned = !library && unowned;
    f->text = text ? cp_strdup(text) : NULL;
    f->line = line;
}

static void merge_caps(cp_captures *into, const cp_captures *from)
{
    for (int i = 0; i < from->n; i++) {
        if (cp_captures_get(into, from->v[i].name) || into->n >= CP_CAPTURE_MAX)
            continue;
        into->v[into->n++] = from->v[i];
    }
}

/* ---- one matched line ----------------------------------------------------- */

typedef struct line_info {
    const char *text;
    size_t len;
    uint64_t no;
    const cp_line_prep *prep;/* its own prefixes, weight (hit lines it
                                stands for), key and step (prepare.c) */
    const cp_prepared *prepared; /* its chunk's preparation (host names) */
    cp_origin origin;
    cp_captures caps;
    uint32_t err_rules[CP_LINE_RULES_MAX];  /* root/cascade/culprit rules that name the line */
    uint32_t n_err;
    uint32_t phase_rule;    /* heaviest phase rule */
    uint32_t source_phase_rule; /* heaviest phase rule for a frame's source line */
    uint32_t progress_rule; /* a progress rule that hit */
    bool progress_only;     /* nothing but progress: the fast path */
    bool is_frame, is_traceback, is_progress, is_identity, is_context;
    bool inherited;         /* took the identity of the line above (attribute) */
    bool has_own_time;      /* the line carries a timestamp itself */
    bool starts_stack;      /* a traceback rule with state = begin */
    bool dump_frame;        /* a frame rule with state = begin: a dump's frame */
    bool raising_frame;     /* a frame rule with a kind: a traceback's frame */
    bool cut_frame;         /* a frame rule with owner = unknown: its path
                               may be cut, so only a library rule can place it */
    const char *display;    /* prepared (cp_prepared_display) */
} line_info;

/* Whether the line names its process itself; a host prefix alone does
 * not (a node runs many ranks). */
static bool has_own_identity(const cp_origin *o, const cp_origin *path)
{
    return o->rank != path->rank || o->local_rank != path->local_rank || o->pid != path->pid ||
           o->task != path->task;
}

/* A context rule heavier than a line's error rules says what the line
 * really is (a LustreError in a kernel log is not a Python exception):
 * error rules lighter than it do not name the line. */
static void drop_outweighed(const cp_catalog *cat, line_info *li, int context_weight)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < li->n_err; i++)
        if (cat->rules[li->err_rules[i]].weight >= context_weight)
            li->err_rules[n++] = li->err_rules[i];
    li->n_err = n;
}

static void classify(cp_incident *inc, const cp_line_hits *h, line_info *li)
{
    const cp_catalog *cat = inc->cat;
    int context_weight = -1;
    li->phase_rule = li->source_phase_rule = li->progress_rule = UINT32_MAX;
    for (uint32_t i = 0; i < h->n_rules; i++) {
        uint32_t ri = h->rules[i];
        const cp_rule *r = &cat->rules[ri];
        switch (r->role) {
        case CP_ROLE_ROOT:
        case CP_ROLE_CASCADE:
        case CP_ROLE_CULPRIT:
            li->err_rules[li->n_err++] = ri;
            break;
        case CP_ROLE_CONTEXT:
            li->is_context = true;
            if (r->weight > context_weight)
                context_weight = r->weight;
            /* evidence the analysis weighs (an application Xid) or that
             * drains a machine is kept as an event of its own */
            if ((r->keep || r->drain != CP_DRAIN_NONE) && li->n_err < CP_LINE_RULES_MAX)
                li->err_rules[li->n_err++] = ri;
            break;
        case CP_ROLE_PHASE: {
            uint32_t *heaviest = r->under_frame ? &li->source_phase_rule : &li->phase_rule;
            if (*heaviest == UINT32_MAX || r->weight > cat->rules[*heaviest].weight)
                *heaviest = ri;
            break;
        }
        case CP_ROLE_FRAME:
            li->is_frame = true;
            li->dump_frame |= r->state == CP_STATE_BEGIN;
            li->raising_frame |= r->kind != CP_KIND_NONE;
            li->cut_frame |= r->owner == CP_OWNER_UNKNOWN;
            break;
        case CP_ROLE_TRACEBACK:
            li->is_traceback = true;
            li->starts_stack |= r->state == CP_STATE_BEGIN;
            break;
        case CP_ROLE_PROGRESS:
            li->is_progress = true;
            li->progress_rule = ri;
            break;
        case CP_ROLE_IDENTITY: li->is_identity = true; break;
        default: break;
        }
    }
    drop_outweighed(cat, li, context_weight);
}

static int cap_int(const cp_captures *c, const char *name, int dflt)
{
    int64_t v;
    const char *s = cp_captures_get(c, name);
    return s && cp_parse_i64(s, &v) && v >= -2147483647 && v <= 2147483647 ? (int)v : dflt;
}

static void attribute(stream_scan *st, line_info *li)
{
    cp_origin o = st->path_origin;
    cp_prepared_merge_origin(li->prepared, li->prep, &o);
    int line_rank = cap_int(&li->caps, "line_rank", -1);
    if (line_rank >= 0 && o.rank < 0)
        o.rank = line_rank;
    int line_local = cap_int(&li->caps, "line_local_rank", -1);
    if (line_local >= 0 && o.local_rank < 0)
        o.local_rank = line_local;
    /* A line with a logging header of its own (a level or a time) starts
     * a new record; only bare continuation lines inherit. */
    bool bare = o.level == 0 && o.time.kind == CP_TS_NONE;
    if (bare && !has_own_identity(&o, &st->path_origin) && st->prev_inheritable && li->no <= st->prev_line + GAP) {
        cp_time t = o.time;
        char level = o.level;
        char host[CP_HOST_MAX];
        memcpy(host, o.host, sizeof host);
        o = st->prev_origin;
        if (host[0])
            memcpy(o.host, host, sizeof host);
        if (st->prev_next_pid >= 0) {
            o.pid = st->prev_next_pid;
            o.rank = o.local_rank = -1;
        }
        o.time = t;
        o.level = level;
        li->inherited = true;
    }
    li->origin = o;
}

/* nvidia-smi names a GPU's bus id once, at the head of the lines about it
 * ("GPU 00000000:BA:00.0" in -q output, the first line of a table row):
 * a rule captures it as `section_busid`, and later lines that capture
 * `smi_field` (a field of that block) take it as their `busid`. */
static void section_busid(stream_scan *st, line_info *li)
{
    const char *s = cp_captures_get(&li->caps, "section_busid");
    if (s) {
        snprintf(st->section_busid, sizeof st->section_busid, "%s", s);
        if (!cp_captures_get(&li->caps, "busid") && li->caps.n < CP_CAPTURE_MAX) {
            cp_capture *c = &li->caps.v[li->caps.n++];
            snprintf(c->name, sizeof c->name, "busid");
            snprintf(c->value, sizeof c->value, "%s", st->section_busid);
        }
        return;
    }
    if (!st->section_busid[0] || !cp_captures_get(&li->caps, "smi_field") ||
        cp_captures_get(&li->caps, "busid") || li->caps.n >= CP_CAPTURE_MAX)
        return;
    cp_capture *c = &li->caps.v[li->caps.n++];
    snprintf(c->name, sizeof c->name, "busid");
    snprintf(c->value, sizeof c->value, "%s", st->section_busid);
}

static void note_time(cp_incident *inc, stream_scan *st, const cp_time *t)
{
    if (t->kind == CP_TS_NONE)
        return;
    st->last_time = *t;
    for (int i = 0; st->untimed_open && i < MAX_OPEN; i++) {
        block *b = &st->open[i];
        if (b->active && b->awaits_time) {
            if (b->origin.time.kind == CP_TS_NONE)
                b->time_after = *t;
            b->awaits_time = false;
            st->untimed_open--;
        }
    }
    /* events of this stream that had no time take the first one after them */
    for (size_t i = st->first_untimed; i < inc->n_events; i++) {
        cp_event *e = &inc->events[i];
        if (e->stream == st->index && e->origin.time.kind == CP_TS_NONE)
            e->origin.time = *t;
    }
    st->first_untimed = inc->n_events;
}

static void table_flush(cp_incident *inc, stream_scan *st)
{
    if (st->table_open && (st->table.rank >= 0 || st->table.pid >= 0))
        cp_table_add(inc, &st->table);
    st->table_open = false;
}

static void table_line(cp_incident *inc, stream_scan *st, const line_info *li)
{
    const cp_captures *c = &li->caps;
    /* An entry lists time, host, rank, exitcode, error_file, traceback: a
     * time, or a rank when the entry already has one, starts the next. */
    bool starts = cp_captures_get(c, "table_time") ||
                  (cp_captures_get(c, "table_rank") && (!st->table_open || st->table.rank >= 0));
    if (starts) {
        table_flush(inc, st);
        memset(&st->table, 0, sizeof st->table);
        st->table.rank = st->table.local_rank = -1;
        st->table.pid = st->table.exitcode = st->table.signal = -1;
        st->table.root_cause = st->root_cause_section;
        st->table.stream = st->index;
        st->table.line = li->no;
        snprintf(st->table.printed_on, sizeof st->table.printed_on, "%s", li->origin.host);
        st->table_open = true;
    }
    if (cp_captures_get(c, "table_rank") && st->table_open) {
        st->table.rank = cap_int(c, "table_rank", -1);
        st->table.local_rank = cap_int(c, "local_rank", -1);
    }
    if (cp_captures_get(c, "table_host") && st->table_open)
        snprintf(st->table.host, sizeof st->table.host, "%s", cp_captures_get(c, "table_host"));
    if (cp_captures_get(c, "table_time")) {
        cp_time t;
        const char *s = cp_captures_get(c, "table_time");
        if (cp_time_parse(s, strlen(s), &t))
            st->table.time = t;
    }
    if (st->table_open) {
        st->table.pid = cap_int(c, "pid", st->table.pid);
        st->table.exitcode = cap_int(c, "exitcode", st->table.exitcode);
        st->table.signal = cap_int(c, "signal", st->table.signal);
    }
    st->table_until = li->no + TABLE_SPAN;
}

static void identity_line(cp_incident *inc, stream_scan *st, line_info *li, int writer)
{
    const cp_captures *c = &li->caps;
    static const char root_cause[] = "Root Cause (first observed failure)";
    if (memmem(li->text, li->len, root_cause, sizeof root_cause - 1)) {
        table_flush(inc, st);
        st->root_cause_section = true;
    }
    int ws = cap_int(c, "world_size", 0);
    if (ws > inc->world_size && ws < (1 << 22))
        inc->world_size = ws;
    if (cp_captures_get(c, "nranks") && cp_captures_get(c, "rank")) {
        cp_ident id;
        memset(&id, 0, sizeof id);
        id.rank = cap_int(c, "rank", -1);
        id.nranks = cap_int(c, "nranks", -1);
        id.cuda_dev = cap_int(c, "cuda_dev", li->origin.cuda_dev);
        id.local_rank = li->origin.local_rank >= 0 ? li->origin.local_rank : id.cuda_dev;
        id.pid = li->origin.pid;
        snprintf(id.host, sizeof id.host, "%s", li->origin.host);
        snprintf(id.busid, sizeof id.busid, "%s", cp_captures_get(c, "busid") ? cp_captures_get(c, "busid") : "");
        cp_ident_add(inc, &id);
    } else if (cp_captures_get(c, "gpu_index") && cp_captures_get(c, "busid")) {
        /* a GPU's index and bus id (nvidia-smi), tied to no rank */
        cp_ident id;
        memset(&id, 0, sizeof id);
        id.rank = id.local_rank = id.pid = -1;
        id.cuda_dev = cap_int(c, "gpu_index", -1);
        snprintf(id.host, sizeof id.host, "%s", li->origin.host);
        snprintf(id.busid, sizeof id.busid, "%s", cp_captures_get(c, "busid"));
        cp_ident_add(inc, &id);
    }
    if (cp_captures_get(c, "table_rank") || cp_captures_get(c, "table_host") ||
        cp_captures_get(c, "table_time") || (st->table_open && li->no <= st->table_until && writer == st->table_writer)) {
        table_line(inc, st, li);
        st->table_writer = writer;
    }
}

/* Whether a line of progress rule `rule` that gives no step is progress
 * all the same. A rule with a cheaper scan form ("step ", "step=") finds
 * lines its match expression does not confirm, as in the source lines a
 * traceback quotes ("self.step == last"): without a step, such a line is
 * none. A rule without one was confirmed by its match, and its line says
 * the writer trained even with no step in it (the HF Trainer's records). */
static bool progress_without_step(const cp_incident *inc, uint32_t rule)
{
    return inc->cat->rules[rule].n_scan == 0;
}

/* Progress lines are most lines of a training log: each writer's last one
 * in a chunk is remembered, and its step (read on the scan threads,
 * cp_prepare) taken at the chunk's end. */
static void writer_progress(const cp_incident *inc, stream_scan *st, int wi, cp_writer *w, const line_info *li)
{
    /* A line whose step was read and is not there, and that is no progress
     * without it, sets nothing when the chunk ends: it must not stand in
     * for the writer's last real step line. */
    if (li->prep->step_read && !li->prep->has_step && !progress_without_step(inc, li->progress_rule))
        return;
    if (!w->pending) {
        int *grown = cp_grow(st->pending, &st->cap_pending, st->n_pending, sizeof *grown, 64);
        if (!grown)
            return;
        st->pending = grown;
        st->pending[st->n_pending++] = wi;
    }
    w->pending = li->text;
    w->pending_len = li->len;
    w->pending_rule = li->progress_rule;
    w->pending_time = li->origin.time;
    w->pending_step_read = li->prep->step_read;
    w->pending_has_step = li->prep->has_step;
    w->pending_step = li->prep->step;
    w->pending_loss = (cp_loss){li->prep->loss, li->prep->has_loss};
}

/* The step of a writer's pending line: mostly read already, on the scan
 * threads (cp_prepare); read here only for a line prepare passed over. */
static bool pending_step(cp_incident *inc, const cp_writer *w, int64_t *step, cp_loss *loss)
{
    if (w->pending_step_read) {
        *step = w->pending_step;
        *loss = w->pending_loss;
        return w->pending_has_step;
    }
    cp_captures caps;
    caps.n = 0;
    cp_matcher_captures(inc->matcher, w->pending_rule, w->pending, w->pending_len, &caps);
    const char *s = cp_captures_get(&caps, "step");
    const char *l = cp_captures_get(&caps, "loss");
    *loss = l ? cp_loss_parse(l, strlen(l)) : (cp_loss){0, false};
    return s && cp_parse_i64(s, step);
}

/* The pending writers are thousands at thousands of ranks: each is asked
 * for some writers ahead, so that it is in the cache when its turn comes. */
enum { FLUSH_AHEAD = 8 };

static void flush_progress(cp_incident *inc, stream_scan *st)
{
    for (size_t i = 0; i < st->n_pending; i++) {
        if (i + FLUSH_AHEAD < st->n_pending)
            cp_prefetch_range(&inc->writers[st->pending[i + FLUSH_AHEAD]], sizeof(cp_writer));
        cp_writer *w = &inc->writers[st->pending[i]];
        int64_t step;
        cp_loss loss;
        if (pending_step(inc, w, &step, &loss) && step >= w->last_step) {
            w->last_step = step;
            w->last_step_time = w->pending_time;
            w->last_loss = loss;
        } else if (w->last_step < 0 && progress_without_step(inc, w->pending_rule)) {
            /* a progress line that gives no step (the HF Trainer's
             * {'loss': ..., 'epoch': ...} records) still says the writer
             * trained: step 0, the least a step can be */
            w->last_step = 0;
            w->last_step_time = w->pending_time;
        }
        w->pending = NULL;
    }
    st->n_pending = 0;
}

static void writer_phase(cp_incident *inc, stream_scan *st, cp_writer *w, const line_info *li)
{
    const cp_rule *r = &inc->cat->rules[li->phase_rule];
    w->phase = r->phase;
    w->phase_state = r->state;
    w->phase_time = li->origin.time.kind != CP_TS_NONE ? li->origin.time : st->last_time;
    w->phase_stream = st->index;
    w->phase_line = li->no;
    w->phase_rule = li->phase_rule;
    free(w->phase_text);
    w->phase_text = li->display ? cp_strdup(li->display) : NULL;
}

/* The phase rule of a frame line. The phase hints are written for
 * Python's traceback form; a frame printed otherwise (py-spy's
 * "    backward (torch/_tensor.py:522)") is matched again in that form,
 * made of its captures. */
static uint32_t frame_phase_rule(cp_incident *inc, const line_info *li)
{
    const char *file = cp_captures_get(&li->caps, "file");
    const char *func = cp_captures_get(&li->caps, "func");
    const char *line = cp_captures_get(&li->caps, "line");
    if (li->phase_rule != UINT32_MAX || !file || !func || !line || !inc->matcher ||
        memmem(li->text, li->len, "File \"", 6))
        return li->phase_rule;
    char as_python[512];
    int n = snprintf(as_python, sizeof as_python, "  File \"%s\", line %s, in %s", file, line, func);
    cp_line_hits h;
    if (n <= 0 || (size_t)n >= sizeof as_python || cp_matcher_line(inc->matcher, as_python, (size_t)n, &h) != 0)
        return li->phase_rule;
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < h.n_rules; i++) {
        const cp_rule *r = &inc->cat->rules[h.rules[i]];
        if (r->role == CP_ROLE_PHASE && !r->under_frame &&
            (best == UINT32_MAX || r->weight > inc->cat->rules[best].weight))
            best = h.rules[i];
    }
    return best;
}

/* Whether a rule with `alone` names the line: a report about another
 * process, which a progress bar glued in front of it (a paste that lost
 * the carriage returns) must not make part of the traceback above. */
static bool reports_another(const cp_catalog *cat, const line_info *li)
{
    for (uint32_t i = 0; i < li->n_err; i++)
        if (cat->rules[li->err_rules[i]].alone)
            return true;
    return false;
}

/* Python prints a traceback's frames, then its exception line. When the
 * frames carry no rank and the exception's message names one ("NCCL
 * communicator was aborted on rank 7 ... [Rank 7] Watchdog caught"), the
 * message's rank made it another writer, yet the line still ends that
 * traceback: the open block of a rankless writer whose last hit line is a
 * frame just above (its source and caret lines between), with no error
 * line yet. NULL when there is none. */
static block *traceback_awaiting_error(const cp_incident *inc, stream_scan *st, int writer, const line_info *li)
{
    if (li->n_err == 0 || li->is_frame || li->is_traceback || li->origin.rank < 0)
        return NULL;
    for (int i = 0; i < MAX_OPEN; i++) {
        block *b = &st->open[i];
        if (!b->active || b->writer == writer || b->writer < 0 || b->n_frames == 0 || b->n_cand > 0 ||
            b->origin.rank >= 0 || inc->writers[b->writer].rank >= 0 ||
            b->frames[b->n_frames - 1].line != b->last_line || li->no > b->last_line + END_SLACK)
            continue;
        return b;
    }
    return NULL;
}

/* Whether the block is a whole traceback: frames, then an error line
 * after the last of them and after any header or chain line. (An error
 * line above the frames is a message printed before its stack, which some
 * loggers do; one above "During handling of the above exception" is the
 * first of a chain.) */
static bool error_ends_block(const block *b)
{
    if (b->n_cand == 0 || b->n_frames == 0)
        return false;
    uint64_t last_error = 0;
    for (int i = 0; i < b->n_cand; i++)
        if (b->cand[i].line > last_error)
            last_error = b->cand[i].line;
    return last_error > b->frames[b->n_frames - 1].line && last_error > b->traceback_line;
}

static void block_line(cp_incident *inc, stream_scan *st, int writer, line_info *li)
{
    block *b = traceback_awaiting_error(inc, st, writer, li);
    if (b)
        b->origin.rank = li->origin.rank;   /* the traceback was that rank's */
    else
        b = block_for(inc, st, writer, li->no);
    /* A new traceback after a finished one (or after frames: the next
     * thread of a stack dump) is a new event, unless Python said the two
     * are chained; so is a traceback's frame under the error line that
     * ended a traceback, its header cut (or never printed: a paste of
     * interleaved ranks' tracebacks). */
    bool next_stack = (li->starts_stack && (b->n_cand > 0 || b->n_frames > 0)) ||
                      (li->raising_frame && error_ends_block(b));
    if (next_stack && !b->chained && b->first_line != li->no) {
        finalize(inc, st, b, false);
        b = block_for(inc, st, writer, li->no);
    }
    /* A line with a logging header of its own is a new record, not part
     * of the error above it, unless it is a frame or traceback line (some
     * loggers stamp every line of a traceback); so is a report about
     * another process, except as a field of torchrun's failure table. */
    bool own_header = li->origin.level != 0 || li->has_own_time;
    if ((own_header || (reports_another(inc->cat, li) && !b->in_table)) && !li->is_frame && !li->is_traceback &&
        b->n_cand > 0 && b->first_line != li->no) {
        finalize(inc, st, b, false);
        b = block_for(inc, st, writer, li->no);
    }
    b->chained = li->is_traceback && !li->starts_stack;
    if (b->first_line == li->no) {
        b->origin = li->origin;
        b->time_before = st->last_time;
        b->first_text = cp_strdup(li->display);
        b->in_table = li->no <= st->table_until && st->table_open && writer == st->table_writer;
        if (b->origin.time.kind == CP_TS_NONE) {
            b->awaits_time = true;
            st->untimed_open++;
        }
        if (b->in_table && st->table.rank >= 0 && b->origin.rank < 0)
            b->origin.rank = st->table.rank;
    }
    if (li->has_own_time && !b->time_own) {
        b->origin.time = li->origin.time;
        b->time_own = true;
    } else if (b->origin.time.kind == CP_TS_NONE && li->origin.time.kind != CP_TS_NONE) {
        b->origin.time = li->origin.time;
    }
    b->last_line = li->no;
    if (b->in_table)
        st->table_until = li->no + TABLE_SPAN;
    if (li->is_traceback) {
        b->has_traceback = true;
        b->traceback_line = li->no;
    }
    b->dump_frames |= li->dump_frame;
    b->raising_frames += li->raising_frame;
    if (li->is_frame)
        add_frame(b, &li->caps, frame_phase_rule(inc, li),
                  cp_matcher_is_library(inc->matcher, cp_captures_get(&li->caps, "file")), li->cut_frame,
                  li->display, li->no);
    for (uint32_t i = 0; i < li->n_err; i++)
        add_candidate(b, inc->cat, li->err_rules[i], li->no, li->display);
    merge_caps(&b->caps, &li->caps);
}

static void init_line(line_info *li, const char *data, const cp_line_hits *h, const cp_prepared *prepared,
                      const cp_line_prep *lp)
{
    /* not one memset: the captures array is large and mostly unused, and
     * the origin is attribute()'s to set */
    li->text = data + h->start;
    li->len = h->len;
    li->no = lp->no;
    li->prep = lp;
    li->prepared = prepared;
    li->caps.n = 0;
    memset(&li->err_rules, 0, sizeof *li - offsetof(line_info, err_rules));
}

/* A phase rule for a frame's source line ("    optimizer.step()", rule
 * key `under = frame`) says where that frame was: the frames below it,
 * often cut from a paste, run inside that phase. The line must follow its
 * writer's last frame directly; anywhere else it says nothing (an
 * interleaved traceback's source line is not a phase banner). */
static void source_line_phase(cp_incident *inc, stream_scan *st, int wi, const line_info *li)
{
    for (int i = 0; i < MAX_OPEN; i++) {
        block *b = &st->open[i];
        if (!b->active || b->writer != wi)
            continue;
        cp_stackframe *f = b->n_frames ? &b->frames[b->n_frames - 1] : NULL;
        if (!f || f->line + 1 != li->no)
            return;
        const cp_rule *rules = inc->cat->rules;
        if (f->phase_rule == UINT32_MAX || rules[li->source_phase_rule].weight > rules[f->phase_rule].weight)
            f->phase_rule = li->source_phase_rule;
        return;   /* a writer has one open block */
    }
}

static void update_writer(cp_incident *inc, stream_scan *st, int wi, line_info *li)
{
    cp_writer *w = &inc->writers[wi];
    w->n_hits += li->prep->weight;
    if (li->origin.time.kind != CP_TS_NONE) {
        if (w->first_time.kind == CP_TS_NONE)
            w->first_time = li->origin.time;
        w->last_time = li->origin.time;
    }
    if (li->is_progress)
        writer_progress(inc, st, wi, w, li);
    if (li->phase_rule != UINT32_MAX && !li->is_frame)
        writer_phase(inc, st, w, li);
    if (li->source_phase_rule != UINT32_MAX)
        source_line_phase(inc, st, wi, li);
}

static void process_line(cp_incident *inc, stream_scan *st, const char *data, const cp_line_hits *h,
                         const cp_prepared *prep, const cp_line_prep *lp)
{
    uint64_t line_no = lp->no;
    line_info li;
    init_line(&li, data, h, prep, lp);
    classify(inc, h, &li);
    bool in_event = li.is_frame || li.is_traceback || li.n_err > 0;
    li.progress_only = li.is_progress && !in_event && !li.is_identity && !li.is_context &&
                       li.phase_rule == UINT32_MAX && li.source_phase_rule == UINT32_MAX;
    /* the captures of every rule that hit the line (prepare.c); a line
     * that is only progress has none here: its step counts apart */
    if (!li.progress_only) {
        cp_prepared_captures(prep, lp, &li.caps);
        section_busid(st, &li);
    }
    attribute(st, &li);
    li.has_own_time = li.origin.time.kind != CP_TS_NONE;
    note_time(inc, st, &li.origin.time);
    if (!li.progress_only) {
        li.display = cp_prepared_display(prep, lp);
        finalize_stale(inc, st, line_no);
    }
    if (li.origin.time.kind == CP_TS_NONE)
        li.origin.time = st->last_time;

    cp_writer_key key;
    cp_writer_key_reuse(&li.origin, st->index, &lp->key, cp_prepared_host(prep, lp), &key);
    int wi = cp_writer_for(inc, &li.origin, st->index, &key);
    if (wi >= 0)
        update_writer(inc, st, wi, &li);
    if (li.is_identity)
        identity_line(inc, st, &li, wi);
    if (wi >= 0 && in_event)
        block_line(inc, st, wi, &li);

    /* Only an error-ish line hands its identity down: a traceback under a
     * rank's "ERROR ... failed" line is that rank's, one under its routine
     * progress line may be anybody's. A frame's source line is part of its
     * traceback even when it hits a rule of its own (the "step" of
     * `log.info("eval at step %d", ...)` is a progress rule's). */
    bool source_line = li.inherited && st->prev_frame && line_no == st->prev_line + 1;
    st->prev_inheritable = in_event || source_line || li.is_context || li.origin.level == 'E' ||
                           li.origin.level == 'F';
    st->prev_frame = li.is_frame;
    st->prev_line = line_no;
    st->prev_origin = li.origin;
    st->prev_next_pid = cap_int(&li.caps, "next_pid", -1);
}

int cp_incident_feed(cp_incident *inc, const char *data, size_t len, uint64_t first_line,
                     const cp_nlmap *newlines)
{
    stream_scan *st = inc->scan;
    if (cp_matcher_scan(inc->matcher, data, len, newlines, &st->hits) != 0 ||
        cp_prepare(inc->cat, cp_matcher_scanner(inc->matcher), data, first_line, &st->hits, inc->thin,
                   &st->prep) != 0)
        return -1;
    return cp_incident_feed_prepared(inc, data, len, &st->hits, &st->prep);
}

/* Progress lines thinned out (prepare.h), a run of them in a chunk:
 * their writers hear of them through later lines, but the stream's clock
 * and "line before" state move as they would line by line. Only the
 * first time in the run can settle untimed events and blocks (note_time
 * settles them all at once), the clock keeps the last, and the state
 * "before" the next line is the run's last line. A thinned line is never
 * bare, so its origin is its own prefixes over the path's. */
static void skip_run(cp_incident *inc, stream_scan *st, const cp_prepared *prep, const cp_skip *run)
{
    const cp_line_prep *lines = prep->lines;
    if (run->first_timed != CP_SKIP_UNTIMED) {   /* a path gives no time: only the lines' own count */
        note_time(inc, st, &lines[run->first_timed].parsed.time);
        st->last_time = lines[run->last_timed].parsed.time;
    }
    const cp_line_prep *lp = &lines[run->to - 1];
    cp_origin o = st->path_origin;
    cp_prepared_merge_origin(prep, lp, &o);
    if (o.time.kind == CP_TS_NONE)
        o.time = st->last_time;
    st->prev_inheritable = o.level == 'E' || o.level == 'F';
    st->prev_frame = false;
    st->prev_line = lp->no;
    st->prev_origin = o;
    st->prev_next_pid = -1;
}

/* How far ahead of the kept line being processed (in kept lines) its
 * preparation, its writer's index slot and its writer are asked for: each
 * step reads what the one before asked for, which must have arrived by
 * then. The prepared lines were written on another core, and at
 * thousands of ranks the writers are not in the cache. Runs of skipped
 * lines are asked for AHEAD_SKIP runs ahead. */
enum { AHEAD_LINE = 32, AHEAD_SLOT = 16, AHEAD_WRITER = 8, AHEAD_SKIP = 4 };

/* The lines skip_run will read of a run of skipped lines. */
static void ask_for_run(const cp_prepared *prep, const cp_skip *run)
{
    if (run->first_timed != CP_SKIP_UNTIMED) {
        __builtin_prefetch(&prep->lines[run->first_timed].parsed.time);
        __builtin_prefetch(&prep->lines[run->last_timed].parsed.time);
    }
    cp_prefetch_range(&prep->lines[run->to - 1], sizeof prep->lines[0]);
}

static void look_ahead(const cp_incident *inc, const cp_hit_list *hits, const cp_prepared *prep, size_t k)
{
    if (k + AHEAD_LINE < prep->n_kept) {
        size_t i = prep->kept[k + AHEAD_LINE];
        cp_prefetch_range(&prep->lines[i], sizeof prep->lines[0]);
        cp_prefetch_range(&hits->lines[i], sizeof hits->lines[0]);
    }
    if (k + AHEAD_SLOT < prep->n_kept)
        cp_writer_prefetch_slot(inc, &prep->lines[prep->kept[k + AHEAD_SLOT]].key);
    if (k + AHEAD_WRITER < prep->n_kept)
        cp_writer_prefetch(inc, &prep->lines[prep->kept[k + AHEAD_WRITER]].key);
}

int cp_incident_feed_prepared(cp_incident *inc, const char *data, size_t len, const cp_hit_list *hits,
                              const cp_prepared *prep)
{
    stream_scan *st = inc->scan;
    inc->bytes += len;
    inc->hit_lines += hits->n;
    size_t s = 0;   /* the next run of skipped lines */
    for (size_t k = 0; k < prep->n_kept; k++) {
        size_t i = prep->kept[k];
        for (; s < prep->n_skips && prep->skips[s].from < i; s++) {
            if (s + AHEAD_SKIP < prep->n_skips)
                ask_for_run(prep, &prep->skips[s + AHEAD_SKIP]);
            skip_run(inc, st, prep, &prep->skips[s]);
        }
        look_ahead(inc, hits, prep, k);
        process_line(inc, st, data, &hits->lines[i], prep, &prep->lines[i]);
    }
    for (; s < prep->n_skips; s++)
        skip_run(inc, st, prep, &prep->skips[s]);
    inc->lines += hits->newlines;
    st->lines += hits->newlines;
    flush_progress(inc, st); /* the chunk's lines are valid until we return */
    return 0;
}

void cp_incident_end_stream(cp_incident *inc)
{
    stream_scan *st = inc->scan;
    for (int i = 0; i < MAX_OPEN; i++)
        finalize(inc, st, &st->open[i], true);
    table_flush(inc, st);
}
