/* catalog.h - the rule catalog: error signatures and hints as data.
 *
 * Rules are read from plain-text files (format: docs/rules.md). The catalog
 * owns the rules; the matcher compiles their patterns.
 */
#ifndef CULPRIT_CATALOG_H
#define CULPRIT_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vocab.h"

typedef enum cp_phase_state { CP_STATE_NONE = 0, CP_STATE_BEGIN, CP_STATE_END } cp_phase_state;

/* What a rule's line says about the machine it came from (rules key
 * `drain`): nothing, a GPU to take out of service, or the whole node. */
typedef enum cp_drain { CP_DRAIN_NONE = 0, CP_DRAIN_GPU, CP_DRAIN_NODE } cp_drain;

/* The most innermost frames a rule's frame_reach may name. */
enum { CP_FRAME_REACH_MAX = 16 };

typedef struct cp_rule {
    char *id;
    char **match;        /* the expressions that define the rule (PCRE syntax) */
    size_t n_match;
    char **scan;         /* cheaper expressions vectorscan looks for instead of
                            `match`; a line they hit is then confirmed by `match` */
    size_t n_scan;
    char **if_frame;     /* PCRE2 expressions a frame of the event must match */
    size_t n_if_frame;
    int frame_reach;     /* if_frame sees only the innermost this many Python
                            frames above the error line (0: all of them) */
    char **tests;
    size_t n_tests;
    bool nocase;
    cp_role role;
    cp_kind kind;
    cp_owner owner;
    cp_phase phase;
    cp_phase_state state;
    int weight;
    cp_drain drain;
    int drain_after;     /* lines of this rule on one host before it drains (1) */
    bool keep;           /* a context line kept as an event for the analysis */
    bool cut;            /* also names a traceback the input cuts off before its
                            error line, when its frames match if_frame */
    bool under_frame;    /* a phase rule for a frame's source line: it counts
                            only right under a frame, and gives that frame
                            its phase */
    bool alone;          /* a line that reports on another process (a
                            launcher's "failed (exitcode: 1) local_rank: 0"):
                            it starts an event of its own, never joins the
                            error above it */
    bool in_checkpoint;  /* an error that, inside a checkpoint save or
                            load, makes the checkpoint the failure
                            (engine.checkpoint_exception) */
    char *title, *means, *action;
    char *file;          /* where it was defined */
    int line;
} cp_rule;

typedef struct cp_catalog {
    cp_rule *rules;
    size_t n_rules;
    size_t cap;
    /* rule indices by id, open addressing, -1 empty: cp_catalog_find is
     * asked once per rule loaded and once per event of a merged summary */
    int32_t *by_id;
    size_t cap_by_id;    /* a power of two, at least twice n_rules */
    char error[512];     /* message of the last failure */
    /* rules defined again in the folder they were first defined in ("F:L:
     * rule 'x' is defined again at F2:L2"): the later one is used, as a
     * user's folder overrides the catalog's, but within one folder it is
     * a mistake that `rules --check` reports */
    char **redefined;
    size_t n_redefined;
} cp_catalog;

void cp_catalog_init(cp_catalog *c);
void cp_catalog_free(cp_catalog *c);

/* Loads one rule file. A rule whose id exists replaces the old one.
 * Returns 0, or -1 with c->error set to "FILE:LINE: message". */
int cp_catalog_load_file(cp_catalog *c, const char *path);

/* Loads every *.rules file of a folder in name order. Returns the number
 * of files loaded, or -1 with c->error set. */
int cp_catalog_load_dir(cp_catalog *c, const char *dir);

/* Index of the rule with this id, or -1. */
int cp_catalog_find(const cp_catalog *c, const char *id);

#endif
