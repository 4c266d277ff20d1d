/* incident.h - everything learned from the inputs of one diagnosis.
 *
 * The scan fills an incident: the streams read, the writers (ranks, or
 * whatever identity the lines carry before ranks are known), the events
 * (tracebacks, error lines, stack dumps assembled from matched lines), and
 * the identity facts that later tie writers to global ranks. The analysis
 * reads an incident and derives the diagnosis. Memory grows with ranks and
 * events, never with bytes of log.
 */
#ifndef CULPRIT_INCIDENT_H
#define CULPRIT_INCIDENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capset.h"
#include "catalog.h"
#include "matcher.h"
#include "origin.h"
#include "prepare.h"
#include "vocab.h"

enum {
    CP_EVIDENCE_MAX = 10,   /* evidence lines kept per event */
    CP_FRAMES_MAX = 48,     /* frames kept per event */
    CP_EVENTS_MAX = 200000, /* events kept per incident; the rest are counted */
    CP_PER_WRITER_EVENTS = 8
};

/* How an event's rank was learnt when its own line did not carry it. */
typedef enum cp_rank_via {
    CP_VIA_LINE = 0,       /* its prefixes, or the line it continues */
    CP_VIA_SUBJECT,        /* the process the line is about (pid, local rank, GPU) */
    CP_VIA_TABLE_COPY,     /* the same error in the launcher's failure table */
    CP_VIA_LOCAL_RANK      /* the local rank it names, with one host in sight */
} cp_rank_via;

/* cp_event.rule of a stack dump that carries no error line. */
#define CP_RULE_STACK UINT32_MAX

typedef struct cp_evline {
    int stream;
    uint64_t line;
    char *text;
} cp_evline;

typedef struct cp_stackframe {
    char *file;
    char *func;
    char *text;            /* the frame line as printed (if_frame matches it) */
    uint64_t line;
    uint32_t phase_rule;   /* best phase hint rule hitting this frame, or UINT32_MAX */
    bool library;          /* a library rule hit it: not the user's code */
    bool unowned;          /* neither: a path the input cut short, which no
                              library rule recognises (py.frame.cut) */
} cp_stackframe;

typedef struct cp_event {
    cp_origin origin;      /* identity and time of the event */
    int writer;
    int stream;
    uint64_t line;         /* line of the key text */
    uint32_t rule;         /* the rule that names the event */
    bool text_is_ev;       /* text is the same line's evidence text (ev owns it) */
    char *text;            /* the key line, for display; owned unless text_is_ev */
    cp_capset caps;        /* captures merged over the event's lines (owned) */
    cp_stackframe *frames; /* outermost first, innermost last */
    size_t n_frames;
    cp_evline *ev;         /* n_ev lines in line order, at most CP_EVIDENCE_MAX;
                              sized to fit, since most events keep one or two */
    int n_ev;
    bool in_table;         /* a copy inside a launcher's failure table */
    cp_rank_via rank_via;  /* how the rank was learnt, when not from the line */
    bool time_estimated;   /* time taken from a neighbouring line */
    bool has_traceback;
    bool ends_input;       /* a stack its stream ends in: its last line is
                              among the stream's last few (events.c) */
    uint32_t repeats;      /* further identical events merged into this one */
} cp_event;

/* One source of lines as the scan first sees it: a global rank, or what
 * the prefixes say before ranks are known (host + local rank, host + pid,
 * a Slurm task, or just the stream). */
typedef struct cp_writer {
    cp_origin id;          /* identity fields; id.time unused */
    int stream;            /* the stream that introduced it */
    cp_time first_time, last_time;
    int64_t last_step;     /* -1 none */
    cp_time last_step_time;
    cp_loss last_loss;     /* the loss logged beside last_step, if any */
    cp_phase phase;        /* last phase line */
    cp_phase_state phase_state;
    cp_time phase_time;
    int phase_stream;
    uint64_t phase_line;
    char *phase_text;
    uint32_t phase_rule;   /* the rule of that line, UINT32_MAX none */
    uint32_t n_hits;
    uint32_t n_events;
    int rank;              /* resolved global rank (analysis), -1 */
    bool rank_is_local;    /* rank taken from the local rank, one host in sight */
    bool rank_from_device; /* rank taken from its GPU and the offset its host's
                              other ranks keep from theirs (ranks.c) */
    char key_kind;         /* the identity it is filed under (ranks.c) */
    int key_value;
    uint64_t key_host;
    /* the last progress line of the current chunk, read at its end: its
     * step as prepared (cp_prepare), or where that was not read, with
     * the text and rule */
    const char *pending;
    size_t pending_len;
    uint32_t pending_rule;
    bool pending_step_read, pending_has_step;
    int64_t pending_step;
    cp_loss pending_loss;
    cp_time pending_time;
} cp_writer;

/* A launcher failure-table entry (torchelastic ChildFailedError). */
typedef struct cp_table_entry {
    int rank, local_rank, pid, exitcode, signal;
    char host[CP_HOST_MAX];      /* its "host :" row */
    char printed_on[CP_HOST_MAX];/* the host prefix its lines carry (pdsh's "node1: "), or "" */
    cp_time time;
    bool root_cause;       /* listed under "Root Cause" */
    int stream;
    uint64_t line;
} cp_table_entry;

/* Tie between a communicator rank and a process (NCCL init lines). */
typedef struct cp_ident {
    int rank, nranks, local_rank, pid, cuda_dev;
    char host[CP_HOST_MAX];
    char busid[24];
} cp_ident;

typedef struct cp_incident {
    const cp_catalog *cat;
    cp_matcher *matcher;
    bool thin;             /* progress thinning (prepare.h); CULPRIT_NO_THIN=1 turns it off */
    char **streams;        /* display paths */
    size_t n_streams, cap_streams;
    cp_writer *writers;
    size_t n_writers, cap_writers;
    void *writer_index;    /* hash: identity key -> writer */
    void *ident_index;     /* hash: identity fact -> its index in idents */
    cp_event *events;
    size_t n_events, cap_events;
    uint64_t dropped_events;
    cp_table_entry *table;
    size_t n_table, cap_table;
    cp_ident *idents;
    size_t n_idents, cap_idents;
    int world_size;        /* largest world size any line stated, 0 unknown;
                              the analysis raises it to the highest rank seen */
    int world_size_stated; /* what the lines stated, kept by cp_ranks_resolve */
    bool year_known;       /* some line carried a full date (set by the timeline) */
    char **warnings;
    size_t n_warnings, cap_warnings;
    uint64_t bytes, lines, hit_lines;
    void *scan;            /* per-stream scan state (events.c) */
} cp_incident;

/* The incident borrows the catalog and matcher. */
int cp_incident_init(cp_incident *inc, const cp_catalog *cat, cp_matcher *m);
void cp_incident_free(cp_incident *inc);

/* Streams are fed one at a time, in chunks of whole lines. */
int cp_incident_begin_stream(cp_incident *inc, const char *path);
/* `newlines` is the chunk's newline map when the reader built one, or
 * NULL. */
int cp_incident_feed(cp_incident *inc, const char *data, size_t len, uint64_t first_line,
                     const cp_nlmap *newlines);
/* The same, with the chunk already scanned and prepared (cp_prepare),
 * possibly on another thread: see pipeline.h. */
int cp_incident_feed_prepared(cp_incident *inc, const char *data, size_t len, const cp_hit_list *hits,
                              const cp_prepared *prep);
void cp_incident_end_stream(cp_incident *inc);
/* Whether one of the frames (as printed) matches one of the rule's
 * if_frame expressions; with the rule's frame_reach, one of that many
 * innermost Python frames printed before line `error_line`. */
bool cp_frames_match(const cp_incident *inc, uint32_t rule, const cp_stackframe *frames, size_t n,
                     uint64_t error_line);
void cp_incident_warn(cp_incident *inc, const char *path, const char *message);

/* ranks.c: writers and identity. The writer of a line with origin `o`
 * in `stream` filed under `key` (cp_writer_key_of): found, or made. */
int cp_writer_for(cp_incident *inc, const cp_origin *o, int stream, const cp_writer_key *key);
/* Prefetches for a later cp_writer_for with `key`: the index slot, and
 * once that is in the cache (call this some lines later), the writer. */
void cp_writer_prefetch_slot(const cp_incident *inc, const cp_writer_key *key);
void cp_writer_prefetch(const cp_incident *inc, const cp_writer_key *key);
/* A writer from another incident (its stream already remapped): merged
 * into the one with the same key, or appended. Returns its index or -1. */
int cp_writer_adopt(cp_incident *inc, const cp_writer *w);
int cp_ident_add(cp_incident *inc, const cp_ident *id);
int cp_table_add(cp_incident *inc, const cp_table_entry *e);
/* Resolves every writer's global rank from the facts collected. */
void cp_ranks_resolve(cp_incident *inc);
void cp_ranks_free_index(cp_incident *inc);
/* The rank of a (host, local rank); -1 when unknown. An empty host
 * matches any. Valid once cp_ranks_resolve has run. */
int cp_rank_of_local(const cp_incident *inc, const char *host, int local);
/* The ranks of processes, by pid: what rank writers, NCCL's world
 * communicator lines and the failure table say (sorted, searched in log
 * time: at 16k ranks a pass over them per writer was quadratic). Build
 * it once the world size is known; the incident must not change while it
 * is used. */
typedef struct cp_pid_rank cp_pid_rank;
typedef struct cp_pid_ranks {
    cp_pid_rank *v;
    size_t n;
} cp_pid_ranks;
int cp_pid_ranks_build(const cp_incident *inc, cp_pid_ranks *out);   /* -1: out of memory, left empty */
/* The rank of process `pid` on `host`; -1 when unknown. */
int cp_pid_ranks_find(const cp_pid_ranks *ix, const char *host, int pid);
void cp_pid_ranks_free(cp_pid_ranks *ix);
/* Whether every writer that names a host names the same one (or none
 * does): then a local rank nothing else places is taken as the rank. */
bool cp_single_host(const cp_incident *inc);

#endif
