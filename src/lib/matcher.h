/* matcher.h - scans text against every rule at once.
 *
 * All `match` expressions of the catalog (or a rule's cheaper `scan`
 * expressions, where it has them) are compiled into one vectorscan
 * database; a chunk of many lines is scanned in a single pass and the hits
 * are reported per line. PCRE2 runs only on lines that hit, to pull out
 * named captures and to check `if_frame` conditions.
 */
#ifndef CULPRIT_MATCHER_H
#define CULPRIT_MATCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "util/nlmap.h"

typedef struct cp_matcher cp_matcher;

/* The longest chunk a scan takes: vectorscan's lengths are 32-bit. */
#define CP_SCAN_MAX ((size_t)UINT32_MAX)

/* The rules a line keeps at most, the heaviest (weight) first: an
 * exception line is hit by py.exception and by every rule that applies
 * to any exception inside certain frames (if_frame), 8 of them now. */
enum { CP_LINE_RULES_MAX = 12 };

/* A line of a chunk and the rules that hit it. */
typedef struct cp_line_hits {
    size_t start;        /* offset of the line in the chunk */
    size_t len;          /* without the '\n' */
    size_t number;       /* its line number in the chunk, from 0 (the '\n's before it) */
    uint32_t rules[CP_LINE_RULES_MAX]; /* rule indices, deduplicated, in catalog order */
    uint32_t n_rules;
} cp_line_hits;

typedef struct cp_hit_list {
    cp_line_hits *lines;
    size_t n, cap;
    size_t newlines;     /* '\n' bytes in the whole chunk scanned */
} cp_hit_list;

enum { CP_CAPTURE_MAX = 16, CP_CAPTURE_VALUE = 160 };

typedef struct cp_capture {
    char name[24];
    char value[CP_CAPTURE_VALUE];
} cp_capture;

typedef struct cp_captures {
    cp_capture v[CP_CAPTURE_MAX];
    int n;
} cp_captures;

/* Compiles the catalog (which must outlive the matcher). On failure
 * returns -1 and, if `error` is given, a message naming the rule's
 * file:line. The caller owns *out (cp_matcher_free). */
int cp_matcher_new(cp_matcher **out, const cp_catalog *cat, char *error, size_t error_len);
void cp_matcher_free(cp_matcher *m);

/* Scans `len` bytes of whole lines, less than 4 GiB (CP_SCAN_MAX); fills
 * `hits` (cleared first) with one entry per line that any rule hit, in
 * line order. Returns 0 or -1 (also for a longer `len`).
 * `newlines` is the map of data's '\n' bytes when the caller has one (the
 * reader builds it, reader.h); NULL, or a map of another length, and the
 * scan builds its own.
 * It uses the matcher's own scanner (below), so one thread may scan while
 * another calls cp_matcher_captures / cp_matcher_if_frame (which touch
 * only PCRE2 state); two scans at once need a scanner each. */
int cp_matcher_scan(cp_matcher *m, const char *data, size_t len, const cp_nlmap *newlines, cp_hit_list *hits);

/* A scanner holds what one thread needs to scan (vectorscan scratch, raw
 * hits): threads that scan at once use one each (pipeline.c). The matcher
 * must outlive it; the caller owns *out (cp_scanner_free). */
typedef struct cp_scanner cp_scanner;
int cp_scanner_new(cp_scanner **out, const cp_matcher *m);
void cp_scanner_free(cp_scanner *sc);
int cp_scanner_scan(cp_scanner *sc, const char *data, size_t len, const cp_nlmap *newlines, cp_hit_list *hits);

/* Only the vectorscan pass of a scan, its matches counted and dropped:
 * what any scan with this catalog costs at the least (bench/scan_floor.c
 * measures it). Returns the count of matches, or -1. */
long long cp_scanner_scan_bare(cp_scanner *sc, const char *data, size_t len);

/* Named captures of a rule's expressions on a line (all its expressions
 * that have named groups, first value of a name wins). Returns the count. */
int cp_matcher_captures(cp_matcher *m, uint32_t rule, const char *line, size_t len, cp_captures *out);

/* The same on a scanner's thread: threads that read captures at once use
 * a scanner each (the matcher compiles the codes they share once, for
 * whichever thread needs one first), so captures are read where a line is
 * prepared (prepare.c). */
int cp_scanner_captures(cp_scanner *sc, uint32_t rule, const char *line, size_t len, cp_captures *out);

/* A loss a progress line logs beside its step: `value` is what the line
 * says ("nan" and "inf" included) when `read`. A float: the analysis only
 * compares orders of magnitude, and prepared lines are many. */
typedef struct cp_loss {
    float value;
    bool read;
} cp_loss;

/* The `step` a progress rule captures on a line, as cp_scanner_captures,
 * cp_captures_get and cp_parse_i64 would read it; false when there is
 * none. With `loss` not NULL, also the `loss` the same expression captures
 * (a decimal number, "nan" or "inf"). */
bool cp_scanner_step(cp_scanner *sc, uint32_t rule, const char *line, size_t len, int64_t *step, cp_loss *loss);
/* A captured loss's text as a cp_loss (read false when it is no number). */
cp_loss cp_loss_parse(const char *v, size_t n);

/* The matcher's own scanner (cp_matcher_scan's), for work on the thread
 * that scans with cp_matcher_scan. */
cp_scanner *cp_matcher_scanner(cp_matcher *m);

/* Compiles every expression PCRE2 would otherwise compile on first use,
 * to check them all (culprit rules --check). Returns 0 or -1 with error. */
int cp_matcher_check_all(cp_matcher *m, char *error, size_t error_len);

/* Value of a captured name, or NULL. */
/* Whether a line that vectorscan found with the rule's `scan` expressions
 * also matches its `match` (always true for a rule without `scan`). The
 * scan pass does not confirm: a progress line is confirmed when its step
 * is captured, and explain and rules --check confirm with this. */
bool cp_matcher_confirms(cp_matcher *m, uint32_t rule, const char *line, size_t len);

const char *cp_captures_get(const cp_captures *c, const char *name);

/* The rules one line (without its newline) hits, as a scan would find
 * them and confirmed as cp_matcher_confirms does, into *out. Uses the
 * matcher's own scanner. Returns 0, or -1 when out of memory. */
int cp_matcher_line(cp_matcher *m, const char *line, size_t len, cp_line_hits *out);

/* True when the rule has no if_frame condition or `frame` matches one. */
bool cp_matcher_if_frame(cp_matcher *m, uint32_t rule, const char *frame, size_t len);
bool cp_matcher_has_if_frame(const cp_matcher *m, uint32_t rule);
/* Whether a frame's file path is library code: some `library` rule's
 * match finds it (rule: that one rule's). Ordered pass only, like
 * cp_matcher_if_frame. */
bool cp_matcher_is_library(cp_matcher *m, const char *path);
bool cp_matcher_library_rule(cp_matcher *m, uint32_t rule, const char *path);

/* The form of an expression that vectorscan scans for: a trailing repeat
 * cut to one ("\\S+" -> "\\S"), which hits the same lines but is reported
 * once, not once per character. Caller frees; NULL when out of memory. */
char *cp_matcher_scan_form(const char *expr);

void cp_hit_list_free(cp_hit_list *h);

#endif
