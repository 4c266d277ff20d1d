/* render.h - the three reports: text for a person, JSON for machines,
 * Markdown for a bug report. Each writes one diagnosis to a stream. */
#ifndef CULPRIT_RENDER_H
#define CULPRIT_RENDER_H

#include <stdbool.h>
#include <stdio.h>

#include "diagnosis.h"
#include "util/buf.h"

typedef struct cp_render_opts {
    bool color;          /* ANSI colour (text only) */
    int max_evidence;    /* evidence lines shown (text, Markdown); 0 = default */
} cp_render_opts;

int cp_render_text(const cp_diagnosis *d, FILE *out, const cp_render_opts *opts);
int cp_render_json(const cp_diagnosis *d, FILE *out, const cp_render_opts *opts);
int cp_render_markdown(const cp_diagnosis *d, FILE *out, const cp_render_opts *opts);

/* Ranks grouped by (state, first error), each group's ranks as ranges. */
typedef struct cp_rank_group {
    cp_rank_state state;
    const char *error;   /* borrowed from the diagnosis; may be NULL */
    char *ranks;         /* "0-2,4-4095" */
    size_t more_ranges;  /* ranges left out of `ranks` */
    size_t count;
} cp_rank_group;

/* Caller frees with cp_rank_groups_free. Root first, then larger groups.
 * Each group's ranks are written as at most `max_ranges` ranges (all when
 * 0): at 16k ranks a cascade's ranges fill screens. */
int cp_rank_groups(const cp_diagnosis *d, size_t max_ranges, cp_rank_group **out, size_t *n);
void cp_rank_groups_free(cp_rank_group *g, size_t n);
/* "rank 17", "ranks 0-16,18-4095", or with ranges left out "ranks 0-2,4-9
 * and 2333 more ranges (14043 ranks)": a group's ranks as reports say them. */
void cp_rank_group_ranks(FILE *out, const cp_rank_group *g);

/* "rank 3", "rank 3 (node017)", or "an unknown rank" */
void cp_describe_rank(const cp_diagnosis *d, char *buf, size_t n);

#endif
