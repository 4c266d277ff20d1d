/* diagnosis.h - the result of a diagnosis, as the renderers read it.
 *
 * Built by analyze.c from an incident; owns all its strings (the rule texts
 * are copied so the diagnosis outlives the catalog).
 */
#ifndef CULPRIT_DIAGNOSIS_H
#define CULPRIT_DIAGNOSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "origin.h"
#include "vocab.h"

typedef enum cp_rank_state {
    CP_RS_OK = 0,    /* nothing wrong was seen */
    CP_RS_ROOT,      /* where the incident started */
    CP_RS_ERROR,     /* raised an error of its own (not the first) */
    CP_RS_CASCADE,   /* failed as a consequence (timeout, peer gone) */
    CP_RS_KILLED,    /* killed by a signal */
    CP_RS_EXITED,    /* exited with an error code, no error text */
    CP_RS_SILENT,    /* printed nothing while the others failed */
    CP_RS_COUNT
} cp_rank_state;

typedef struct cp_evidence {
    char *path;
    uint64_t line;
    int rank;          /* -1 unknown */
    char *text;
} cp_evidence;

typedef struct cp_rank_row {
    int rank;
    char host[CP_HOST_MAX];
    cp_rank_state state;
    char *first_error; /* title of its first error, or NULL */
    char *last_time;   /* ISO time of its last line, or NULL */
    int64_t last_step; /* -1 unknown */
} cp_rank_row;

/* A GPU the evidence says to take out of service. */
typedef struct cp_drain_gpu {
    char busid[24];    /* "0000:ba:00.0", "" unknown */
    int index;         /* GPU index (nvidia-smi, NCCL cudaDev), -1 unknown */
    int rank;          /* global rank that ran on it, -1 unknown */
} cp_drain_gpu;

/* One host of the drain list (drain.c): what to drain and why. */
typedef struct cp_drain_host {
    char host[CP_HOST_MAX]; /* "" unknown */
    bool node;         /* evidence against the node itself, not only a GPU */
    cp_drain_gpu *gpus;
    size_t n_gpus;
    char *reason;      /* "Xid 79 on 0000:ba:00 (rank 14)" */
    char *command;     /* the Slurm command to print; NULL when the host is unknown */
} cp_drain_host;

/* Reports print a redacted copy (redact.c): a new string field here must
 * be added to cp_redact_diagnosis as well. */
typedef struct cp_diagnosis {
    bool failed;       /* a failure was found */
    bool hang;
    int first_rank;    /* -1 unknown */
    char host[CP_HOST_MAX];
    cp_kind kind;
    cp_owner owner;
    cp_phase phase;
    char *rule_id, *title, *means, *action;
    char *signature;   /* the key line */
    char *first_time;  /* ISO time of the first failure, or NULL */
    int confidence;    /* 0-100 */
    char *confidence_reason;
    char **notes;      /* how the verdict was reached, one sentence each */
    size_t n_notes;
    cp_evidence *evidence;
    size_t n_evidence;
    cp_rank_row *ranks;
    size_t n_ranks;
    char **warnings;   /* problems with the inputs */
    size_t n_warnings;
    cp_drain_host *drain; /* hosts the hardware evidence says to drain */
    size_t n_drain;
    struct culprit_ckpt_report *ckpt; /* the checkpoint folder's report (ckpt.h), or NULL */
    int64_t saving_step; /* the step a save that never ended was writing; -1 unknown */
    int world_size;    /* 0 unknown */
    size_t n_files;
    uint64_t bytes, lines, n_events;
} cp_diagnosis;

void cp_diagnosis_free(cp_diagnosis *d);

const char *cp_rank_state_name(cp_rank_state s);

#endif
