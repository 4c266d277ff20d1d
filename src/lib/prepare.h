/* prepare.h - the per-line work of a chunk that needs no incident state.
 *
 * After the vectorscan pass (cp_scanner_scan), each line that hit gets its
 * line number and its prefixes parsed (cp_frame_parse), and runs of routine
 * progress lines are thinned. None of this reads or writes the incident, so
 * the pipeline runs it on several threads at once; the incident then takes
 * the prepared chunks one at a time, in input order (events.c).
 *
 * Thinning: most lines of a training log are progress lines ("step 812 |
 * loss ..."). Inside a run of consecutive hit lines that are all progress
 * lines, only the first and the last line of each writer identity can
 * change what the writer learns: its first time, and its last time and
 * step. The lines between get weight 0; the last one carries their count,
 * so hit counts stay exact. A skipped line still moves the stream's clock
 * and its "line before" state (events.c), so the lines that are processed
 * see exactly what a line-by-line pass would. Lines that are not progress
 * end a run; bare progress lines (no level, no time: they may inherit the
 * identity of the line before) are kept and not grouped.
 *
 * Also here, off the serial part: the step of each kept progress line
 * (a writer's last one in a chunk sets its progress: events.c), the
 * writer key of each kept line as far as its own prefixes give it, which
 * the incident reuses and looks ahead with, and the display text and the
 * captures of each line that is not only progress (read while the line is
 * in the cache).
 */
#ifndef CULPRIT_PREPARE_H
#define CULPRIT_PREPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "matcher.h"
#include "origin.h"

/* What a line's own prefixes say (cp_frame_parse over an all-unknown
 * origin): a cp_origin's fields but the host name. Few lines name a host,
 * and its 64 bytes were two fifths of every prepared line, written and
 * read for each of millions of progress lines; a name the line has lives
 * in the chunk's texts instead (cp_prepared_host). */
typedef struct cp_prefixes {
    int32_t rank, local_rank, pid, task, cuda_dev;
    uint32_t host;     /* 1 + the offset of its name in cp_prepared.text; 0: none */
    cp_time time;
    char level;
} cp_prefixes;

/* A hit line, prepared: parallel to cp_hit_list.lines. */
typedef struct cp_line_prep {
    cp_prefixes parsed; /* what the line's own prefixes say */
    cp_writer_key key; /* the writer key `parsed` gives (kind 0: the line
                          is skipped); the incident takes it when the
                          line's origin has the same key */
    uint64_t no;       /* line number in its stream */
    int64_t step;      /* its progress step, when has_step */
    float loss;        /* the loss the line logs beside the step, when
                          has_loss (a cp_loss, unpacked: with the bools
                          below the struct keeps its 104 bytes) */
    uint32_t display;  /* 1 + the offset of its display text in
                          cp_prepared.text, its captures after it; 0:
                          none (cp_prepared_display, cp_prepared_captures) */
    uint32_t weight;   /* hit lines it stands for; 0: skip it */
    bool superseded;   /* a later kept line has its writer: it cannot be
                          its writer's last progress line in the chunk */
    bool step_read;    /* step, has_step, loss and has_loss hold what its
                          progress rule reads: read for each kept progress
                          line not superseded */
    bool has_step;
    bool has_loss;
} cp_line_prep;

/* A run of skipped lines (weight 0), [from, to): the incident moves the
 * stream's clock and "line before" state over it at once (events.c), and
 * reads only the lines named here. */
enum { CP_SKIP_UNTIMED = UINT32_MAX };

typedef struct cp_skip {
    uint32_t from, to;
    uint32_t first_timed, last_timed; /* its first and last line with a time
                                         of its own; CP_SKIP_UNTIMED: none */
} cp_skip;

typedef struct cp_prepared {
    cp_line_prep *lines;
    size_t n, cap;
    /* per chunk, for the incident (cp_incident_feed_prepared) */
    size_t *kept;              /* the lines of weight > 0, in order */
    size_t n_kept;
    cp_skip *skips;            /* the runs of the others, in order */
    size_t n_skips, cap_skips;
    uint8_t *flags;            /* per line, what it is (prepare.c) */
    struct line_scratch *scratch; /* per line, for thinning (prepare.c) */
    /* thinning scratch, reused across chunks */
    struct prep_key *keys;
    size_t cap_keys, keys_used;
    struct prep_host *hosts;   /* cap_keys slots */
    char (*host_names)[CP_HOST_MAX];
    size_t n_hosts;
    uint32_t host_generation;
    uint32_t generation;
    uint64_t *later;           /* writer keys seen later in the chunk (their hashes) */
    size_t cap_later, n_later;
    /* per chunk, for the incident: the host names the lines' prefixes
     * give, the display texts of the lines that are not only progress
     * (each at most its line and 5 bytes) and their captures (at most
     * CP_CAPTURE_MAX parts of the line each) */
    char *text;
    size_t text_len, text_cap;
} cp_prepared;

/* The bytes of a line kept for display (evidence, frames, phase lines). */
enum { CP_DISPLAY_MAX = 600 };

/* The display text of a line that hit a rule other than a progress
 * rule, as cp_display_line(line, len, CP_DISPLAY_MAX) gives it; NULL for
 * the others. Valid as long as `p` is unchanged. */
static inline const char *cp_prepared_display(const cp_prepared *p, const cp_line_prep *lp)
{
    return lp->display ? p->text + lp->display - 1 : NULL;
}

/* The host name the line's prefixes give, "" when none. Valid as long
 * as `p` is unchanged. */
static inline const char *cp_prepared_host(const cp_prepared *p, const cp_line_prep *lp)
{
    return lp->parsed.host ? p->text + lp->parsed.host - 1 : "";
}

/* Sets in `into` every field the line's prefixes give, as cp_origin_merge
 * does with a whole origin. */
void cp_prepared_merge_origin(const cp_prepared *p, const cp_line_prep *lp, cp_origin *into);

/* The captures of every rule that hit such a line, as cp_matcher_captures
 * gives them rule by rule, in the line's rule order, into *out (cleared
 * first); none for the others. */
void cp_prepared_captures(const cp_prepared *p, const cp_line_prep *lp, cp_captures *out);

/* Prepares the hit lines of a chunk whose first line is `first_line`;
 * `hits` must come from scanning this very chunk (cp_scanner_scan), which
 * numbered its lines and counted its newlines. `sc` is the calling
 * thread's scanner (it reads steps and captures).
 * `out` is reused (cleared first). With `thin` false every line keeps
 * weight 1. Returns 0, or -1 when out of memory. */
int cp_prepare(const cp_catalog *cat, cp_scanner *sc, const char *data, uint64_t first_line,
               const cp_hit_list *hits, bool thin, cp_prepared *out);
void cp_prepared_free(cp_prepared *p);

#endif
