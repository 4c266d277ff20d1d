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
    int world_size;    /* 0 unknown */
    size_t n_files;
    uint64_t bytes, lines, n_events;
} cp_diagnosis;

void cp_diagnosis_free(cp_diagnosis *d);

const char *cp_rank_state_name(cp_rank_state s);

#endif
