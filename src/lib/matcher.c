#include "matcher.h"

#include <hs.h>

#include "dbcache.h"
#include "hs_target.h"
#include "util/buf.h"
#include "util/nlmap.h"
#include "util/strutil.h"
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include "pcre_jit.h"
#include <pthread.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { MAX_RAW_HITS = 1 << 20 };

typedef struct raw_hit {
    unsigned long long end;
    unsigned int pattern;
} raw_hit;

/* What one thread needs to scan: vectorscan scratch and the raw hits. */
struct cp_scanner {
    const cp_matcher *m;
    hs_scratch_t *scratch;
    raw_hit *raw;
    size_t n_raw, cap_raw;
    bool raw_overflow;
    cp_nlmap newlines;         /* its own map of a chunk's '\n' bytes */
    const cp_nlmap *map;       /* the map of the chunk being scanned */
    pcre2_match_data *md;      /* confirming `scan` hits on this thread */
};

typedef struct step_groups {
    int step, loss;
} step_groups;

struct cp_matcher {
    const cp_catalog *cat;
    hs_database_t *db;
    cp_hs_scan_fn scan;        /* hs_scan, or the build hs_target.h picks */
    cp_scanner *own;           /* the scanner of cp_matcher_scan */
    uint32_t *hs_rule;         /* vectorscan expression id -> rule index */
    size_t n_hs;               /* `scan` of the rules that have one, else `match` */
    /* pattern id (each `match`) -> PCRE2 code, when it has named groups
     * or confirms a `scan`: compiled on first use, by whichever thread
     * needs it first (pattern_code) */
    _Atomic(pcre2_code *) *pattern_re;
    atomic_bool *pattern_tried; /* pattern id -> compilation attempted */
    /* pattern id -> its groups named "step" and "loss", looked up once when
     * its code is stored (a PCRE2 error code where a name is absent or not
     * unique): the step of a progress line is read for every writer in
     * every chunk, and the name table's search cost a third of a read */
    step_groups *groups;
    pthread_mutex_t *compile_lock;
    size_t *rule_first;        /* rule -> its first pattern id */
    size_t n_patterns;
    bool *confirm;             /* rule -> its `scan` hits need `match` on the scan threads */
    bool any_confirm;
    pcre2_code ***frame_re;    /* rule -> if_frame expressions (a library rule: its match) */
    uint32_t *library;         /* the library rules, asked for every frame (cp_matcher_is_library) */
    size_t n_library;
    bool *frame_jit;           /* rule -> its if_frame expressions are JIT compiled */
    pcre2_match_data *md;
};

static bool has_named_group(const char *re)
{
    return strstr(re, "(?<") || strstr(re, "(?P<");
}

static pcre2_code *compile_plain(const char *re, bool nocase, char *error, size_t error_len, const cp_rule *r)
{
    int code;
    PCRE2_SIZE off;
    pcre2_code *p = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, nocase ? PCRE2_CASELESS : 0,
                                  &code, &off, NULL);
    if (!p) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof msg);
        if (error)
            snprintf(error, error_len, "%s:%d: rule '%s': bad expression at offset %zu: %s",
                     r->file, r->line, r->id, (size_t)off, (char *)msg);
        return NULL;
    }
    return p;
}

/* For expressions run on many lines. */
static pcre2_code *compile_pcre(const char *re, bool nocase, char *error, size_t error_len, const cp_rule *r)
{
    pcre2_code *p = compile_plain(re, nocase, error, error_len, r);
    cp_pcre2_jit(p);
    return p;
}

static size_t count_patterns(const cp_catalog *cat)
{
    size_t n = 0;
    for (size_t i = 0; i < cat->n_rules; i++)
        n += cat->rules[i].n_match;
    return n;
}

/* The expressions vectorscan compiles for a rule: its `scan` if it has
 * one (a cheaper superset of `match`), else its `match`; none for a
 * library rule, whose expressions read frames' file paths, not lines. */
static char **hs_exprs(const cp_rule *r, size_t *n)
{
    if (r->role == CP_ROLE_LIBRARY) {
        *n = 0;
        return NULL;
    }
    *n = r->n_scan ? r->n_scan : r->n_match;
    return r->n_scan ? r->scan : r->match;
}

/* The expressions PCRE2 matches against a frame: a rule's if_frame, or a
 * library rule's match (on the frame's file path). */
static char **frame_exprs(const cp_rule *r, size_t *n)
{
    *n = r->role == CP_ROLE_LIBRARY ? r->n_match : r->n_if_frame;
    return r->role == CP_ROLE_LIBRARY ? r->match : r->if_frame;
}

static size_t count_hs(const cp_catalog *cat)
{
    size_t n = 0, k;
    for (size_t i = 0; i < cat->n_rules; i++) {
        hs_exprs(&cat->rules[i], &k);
        n += k;
    }
    return n;
}

/* The expressions with captures are compiled by PCRE2 only when a line
 * first needs them (most never hit in a given run); if_frame expressions
 * exist only for PCRE2, so they are compiled now, which also checks them.
 * JIT compiling costs about 0.1 ms each, so a rule's are JIT compiled
 * when an event first asks (cp_matcher_if_frame). */
static int compile_pcre_parts(cp_matcher *m, char *error, size_t error_len)
{
    const cp_catalog *cat = m->cat;
    for (size_t i = 0; i < cat->n_rules; i++) {
        const cp_rule *r = &cat->rules[i];
        size_t n;
        char **exprs = frame_exprs(r, &n);
        if (n == 0)
            continue;
        if (r->role == CP_ROLE_LIBRARY)
            m->library[m->n_library++] = (uint32_t)i;
        if (!(m->frame_re[i] = calloc(n, sizeof(pcre2_code *))))
            return -1;
        for (size_t j = 0; j < n; j++)
            if (!(m->frame_re[i][j] = compile_plain(exprs[j], r->role == CP_ROLE_LIBRARY && r->nocase, error, error_len, r)))
                return -1;
    }
    return 0;
}

/* Finds which expression vectorscan rejected, to name its rule. */
static void name_bad_pattern(const cp_matcher *m, int expr, const char *msg, char *error, size_t error_len)
{
    if (!error)
        return;
    if (expr < 0 || (size_t)expr >= m->n_hs) {
        snprintf(error, error_len, "cannot compile the rule catalog: %s", msg);
        return;
    }
    const cp_rule *r = &m->cat->rules[m->hs_rule[expr]];
    snprintf(error, error_len, "%s:%d: rule '%s': expression not supported by vectorscan: %s",
             r->file, r->line, r->id, msg);
}

/* Whether s[i] is escaped by an odd run of backslashes before it. */
static bool escaped(const char *s, size_t i)
{
    size_t k = 0;
    while (k < i && s[i - 1 - k] == '\\')
        k++;
    return k % 2 == 1;
}

/* The form of an expression vectorscan scans for: a trailing repeat is cut
 * to what decides whether a line matches. "frame #\d+: (?<func>\S+)" hits
 * exactly the lines "frame #\d+: (?<func>\S)" hits, but vectorscan reports
 * the first once per character of the name. Captures come from PCRE2 and
 * the full expression, so nothing else changes. Cut: "X+" -> "X" (also just
 * inside a closing group), ".*" and "\w*"-style escapes at the very end.
 * An expression that cannot match the empty string still cannot. Returns
 * a copy the caller frees, or NULL when out of memory. */
char *cp_matcher_scan_form(const char *expr)
{
    char *s = strdup(expr);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    size_t end = n > 0 && s[n - 1] == ')' && !escaped(s, n - 1) ? n - 1 : n;
    if (end >= 2 && s[end - 1] == '+' && !escaped(s, end - 1) && s[end - 2] != '(') {
        memmove(s + end - 1, s + end, n - end + 1);
    } else if (end == n && n >= 3 && s[n - 1] == '*' && s[n - 2] == '.' && !escaped(s, n - 2)) {
        s[n - 2] = '\0';
    } else if (end == n && n >= 4 && s[n - 1] == '*' && s[n - 3] == '\\' && !escaped(s, n - 3) &&
               ((s[n - 2] >= 'a' && s[n - 2] <= 'z') || (s[n - 2] >= 'A' && s[n - 2] <= 'Z'))) {
        s[n - 3] = '\0';
    }
    return s;
}

static void free_exprs(char **exprs, size_t n)
{
    for (size_t i = 0; exprs && i < n; i++)
        free(exprs[i]);
    free(exprs);
}

static int compile_hs(cp_matcher *m, char *error, size_t error_len)
{
    int rc = -1;
    size_t n = m->n_hs;
    char **exprs = calloc(n, sizeof *exprs);
    unsigned *flags = calloc(n, sizeof *flags);
    unsigned *ids = calloc(n, sizeof *ids);
    if (!exprs || !flags || !ids)
        goto done;
    size_t pid = 0;
    for (size_t i = 0; i < m->cat->n_rules; i++) {
        const cp_rule *r = &m->cat->rules[i];
        size_t k;
        char **e = hs_exprs(r, &k);
        for (size_t j = 0; j < k; j++, pid++) {
            if (!(exprs[pid] = cp_matcher_scan_form(e[j])))
                goto done;
            flags[pid] = HS_FLAG_MULTILINE | (r->nocase ? HS_FLAG_CASELESS : 0);
            ids[pid] = (unsigned)pid;
            m->hs_rule[pid] = (uint32_t)i;
        }
    }
    cp_dbkey key;
    cp_dbkey_init(&key);
    for (size_t i = 0; i < n; i++)
        cp_dbkey_add(&key, exprs[i], flags[i], ids[i]);
    if (!(m->db = cp_dbcache_load(&key))) {
        hs_compile_error_t *err = NULL;
        if (hs_compile_multi((const char *const *)exprs, flags, ids, (unsigned)n, HS_MODE_BLOCK, cp_hs_platform(), &m->db,
                             &err) != HS_SUCCESS) {
            name_bad_pattern(m, err ? err->expression : -1, err ? err->message : "?", error, error_len);
            hs_free_compile_error(err);
            goto done;
        }
        cp_dbcache_store(&key, m->db);
    }
    if (cp_scanner_new(&m->own, m) != 0) {
        if (error)
            snprintf(error, error_len, "cannot allocate vectorscan scratch space");
        goto done;
    }
    rc = 0;
done:
    free_exprs(exprs, n);
    free(flags);
    free(ids);
    return rc;
}

static pcre2_code *pattern_code(const cp_matcher *m, const cp_rule *r, size_t j, size_t pid);
static bool confirm_with(const cp_matcher *m, pcre2_match_data *md, uint32_t rule, const char *line, size_t len);

/* The `match` expressions that confirm `scan` hits are checked now, so
 * that a bad one is named when the catalog loads; the code the scan
 * threads use is compiled and JIT compiled when a rule's `scan` first hits
 * (pattern_code, under the lock), since most never do in a given run and
 * JIT compiling them all took 1 ms of a 15 ms one-line diagnosis. */
static int compile_scan_confirmations(cp_matcher *m, char *error, size_t error_len)
{
    for (size_t i = 0; i < m->cat->n_rules; i++) {
        const cp_rule *r = &m->cat->rules[i];
        m->confirm[i] = r->n_scan && r->role != CP_ROLE_PROGRESS;
        m->any_confirm |= m->confirm[i];
        for (size_t j = 0; r->n_scan && j < r->n_match; j++) {
            pcre2_code *checked = compile_plain(r->match[j], r->nocase, error, error_len, r);
            if (!checked)
                return -1;
            pcre2_code_free(checked);
        }
    }
    return 0;
}

int cp_matcher_new(cp_matcher **out, const cp_catalog *cat, char *error, size_t error_len)
{
    *out = NULL;
    if (cat->n_rules == 0) {
        if (error)
            snprintf(error, error_len, "the rule catalog is empty");
        return -1;
    }
    cp_matcher *m = calloc(1, sizeof *m);
    if (!m)
        return -1;
    m->cat = cat;
    m->scan = cp_hs_scan_routine();
    m->n_patterns = count_patterns(cat);
    m->n_hs = count_hs(cat);
    m->hs_rule = calloc(m->n_hs, sizeof *m->hs_rule);
    m->pattern_re = calloc(m->n_patterns + 1, sizeof *m->pattern_re);
    m->pattern_tried = calloc(m->n_patterns + 1, sizeof *m->pattern_tried);
    m->groups = calloc(m->n_patterns + 1, sizeof *m->groups);
    for (size_t i = 0; m->pattern_re && m->pattern_tried && i <= m->n_patterns; i++) {
        atomic_init(&m->pattern_re[i], NULL);
        atomic_init(&m->pattern_tried[i], false);
    }
    if ((m->compile_lock = malloc(sizeof *m->compile_lock)) && pthread_mutex_init(m->compile_lock, NULL) != 0) {
        free(m->compile_lock);
        m->compile_lock = NULL;
    }
    m->rule_first = calloc(cat->n_rules, sizeof *m->rule_first);
    for (size_t i = 0, pid = 0; m->rule_first && i < cat->n_rules; pid += cat->rules[i++].n_match)
        m->rule_first[i] = pid;
    m->frame_re = calloc(cat->n_rules, sizeof *m->frame_re);
    m->library = calloc(cat->n_rules, sizeof *m->library);
    m->frame_jit = calloc(cat->n_rules, sizeof *m->frame_jit);
    m->confirm = calloc(cat->n_rules, sizeof *m->confirm);
    m->md = pcre2_match_data_create(32, NULL);
    if (!m->hs_rule || !m->confirm || !m->pattern_re || !m->pattern_tried || !m->groups || !m->compile_lock ||
        !m->rule_first || !m->frame_re || !m->library || !m->frame_jit || !m->md || compile_hs(m, error, error_len) != 0 ||
        compile_pcre_parts(m, error, error_len) != 0 || compile_scan_confirmations(m, error, error_len) != 0) {
        cp_matcher_free(m);
        return -1;
    }
    *out = m;
    return 0;
}

void cp_matcher_free(cp_matcher *m)
{
    if (!m)
        return;
    cp_scanner_free(m->own);
    if (m->db)
        hs_free_database(m->db);
    for (size_t i = 0; i < m->n_patterns && m->pattern_re; i++)
        pcre2_code_free(m->pattern_re[i]);
    for (size_t i = 0; m->frame_re && i < m->cat->n_rules; i++) {
        if (!m->frame_re[i])
            continue;
        size_t n;
        frame_exprs(&m->cat->rules[i], &n);
        for (size_t j = 0; j < n; j++)
            pcre2_code_free(m->frame_re[i][j]);
        free(m->frame_re[i]);
    }
    free(m->frame_re);
    free(m->library);
    free(m->frame_jit);
    free(m->pattern_re);
    free(m->pattern_tried);
    free(m->groups);
    if (m->compile_lock)
        pthread_mutex_destroy(m->compile_lock);
    free(m->compile_lock);
    free(m->rule_first);
    free(m->confirm);
    free(m->hs_rule);
    pcre2_match_data_free(m->md);
    free(m);
}

int cp_scanner_new(cp_scanner **out, const cp_matcher *m)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return -1;
    (*out)->m = m;
    if (hs_alloc_scratch(m->db, &(*out)->scratch) != HS_SUCCESS ||
        !((*out)->md = pcre2_match_data_create(32, NULL))) {
        if ((*out)->scratch)
            hs_free_scratch((*out)->scratch);
        free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

void cp_scanner_free(cp_scanner *sc)
{
    if (!sc)
        return;
    hs_free_scratch(sc->scratch);
    pcre2_match_data_free(sc->md);
    cp_nlmap_free(&sc->newlines);
    free(sc->raw);
    free(sc);
}

/* The last byte of the line a match ending at `end` belongs to (a match
 * that ends with the '\n' belongs to the line before it). It asks the
 * newline map, not the chunk: the chunk's bytes at the match ends are out
 * of the cache by the time the hits are turned into lines. */
static size_t line_byte(const cp_nlmap *map, unsigned long long end)
{
    size_t b = end > 0 ? (size_t)end - 1 : 0;
    return b > 0 && cp_nlmap_is_newline(map, b) ? b - 1 : b;
}

/* Whether a match is the same expression ending again on the line of the
 * previous match: vectorscan reports every end of a trailing repeat
 * ("frame #3: \S+" once per character of the name), and a line needs it
 * once. */
static bool repeats_last(const cp_scanner *m, unsigned int id, unsigned long long to)
{
    if (m->n_raw == 0 || m->raw[m->n_raw - 1].pattern != id || to < m->raw[m->n_raw - 1].end)
        return false;
    size_t a = line_byte(m->map, m->raw[m->n_raw - 1].end), b = line_byte(m->map, to);
    return b <= a || cp_nlmap_line_end(m->map, a) >= b;
}

static int on_match(unsigned int id, unsigned long long from, unsigned long long to,
                    unsigned int flags, void *ctx)
{
    (void)from;
    (void)flags;
    cp_scanner *m = ctx;
    if (repeats_last(m, id, to))
        return 0;
    if (m->n_raw == m->cap_raw) {
        raw_hit *grown = m->cap_raw < MAX_RAW_HITS ? cp_grow(m->raw, &m->cap_raw, m->n_raw, sizeof *grown, 1024) : NULL;
        if (!grown) {
            /* Too many hits in one chunk: keep what we have rather than fail. */
            m->raw_overflow = true;
            return 1;
        }
        m->raw = grown;
    }
    m->raw[m->n_raw].end = to;
    m->raw[m->n_raw].pattern = id;
    m->n_raw++;
    return 0;
}

static int by_end(const void *a, const void *b)
{
    const raw_hit *x = a, *y = b;
    return x->end < y->end ? -1 : x->end > y->end;
}

static cp_line_hits *line_for(cp_hit_list *h, size_t start, size_t len, size_t number)
{
    if (h->n && h->lines[h->n - 1].start == start)
        return &h->lines[h->n - 1];
    if (h->n == h->cap) {
        /* checked here: nearly every line of a training log is a hit line */
        cp_line_hits *grown = cp_grow(h->lines, &h->cap, h->n, sizeof *grown, 256);
        if (!grown)
            return NULL;
        h->lines = grown;
    }
    cp_line_hits *l = &h->lines[h->n++];
    l->start = start;
    l->len = len;
    l->number = number;
    l->n_rules = 0;
    return l;
}

/* Drops the lightest of a full line's rules to make room for `rule`, when
 * `rule` weighs more; false when it weighs no more than any of them. A
 * line that hits more rules than it holds is a paste that ran several
 * messages together: the heaviest say what they are. */
static bool make_room(const cp_catalog *cat, cp_line_hits *l, uint32_t rule)
{
    uint32_t light = 0;
    for (uint32_t i = 1; i < l->n_rules; i++)
        if (cat->rules[l->rules[i]].weight < cat->rules[l->rules[light]].weight)
            light = i;
    if (cat->rules[rule].weight <= cat->rules[l->rules[light]].weight)
        return false;
    memmove(&l->rules[light], &l->rules[light + 1], (l->n_rules - light - 1) * sizeof l->rules[0]);
    l->n_rules--;
    return true;
}

/* Keeps a line's rules sorted in catalog order, so ties between rules of
 * equal weight break the same way wherever the matches end. */
static void add_rule(const cp_catalog *cat, cp_line_hits *l, uint32_t rule)
{
    uint32_t at = 0;
    while (at < l->n_rules && l->rules[at] < rule)
        at++;
    if (at < l->n_rules && l->rules[at] == rule)
        return;
    if (l->n_rules == sizeof l->rules / sizeof l->rules[0]) {
        if (!make_room(cat, l, rule))
            return;
        for (at = 0; at < l->n_rules && l->rules[at] < rule; at++)
            ;
    }
    if (at < l->n_rules)   /* most lines hit one rule: no call for them */
        memmove(&l->rules[at + 1], &l->rules[at], (l->n_rules - at) * sizeof l->rules[0]);
    l->rules[at] = rule;
    l->n_rules++;
}

int cp_matcher_scan(cp_matcher *m, const char *data, size_t len, const cp_nlmap *newlines, cp_hit_list *hits)
{
    return cp_scanner_scan(m->own, data, len, newlines, hits);
}

/* Hits of a `scan` expression stand only where the rule's `match` agrees
 * (progress rules excepted: their lines are confirmed when the step is
 * read, and nearly every line of a training log is one). Lines left
 * without rules are dropped. */
static void confirm_hits(cp_scanner *sc, const char *data, cp_hit_list *hits)
{
    const cp_matcher *m = sc->m;
    size_t kept_lines = 0;
    for (size_t i = 0; i < hits->n; i++) {
        cp_line_hits *l = &hits->lines[i];
        uint32_t kept = 0;
        for (uint32_t k = 0; k < l->n_rules; k++) {
            uint32_t r = l->rules[k];
            if (!m->confirm[r] || confirm_with(m, sc->md, r, data + l->start, l->len))
                l->rules[kept++] = r;
        }
        l->n_rules = kept;
        if (kept && kept_lines++ != i)
            hits->lines[kept_lines - 1] = *l;
    }
    hits->n = kept_lines;
}

/* How far counting the chunk's '\n's has got: `newlines` of them lie
 * before `at`. Hit lines come in order, so each count moves on from the
 * last one and reads each word of the map about once. */
typedef struct line_counter {
    size_t at, newlines;
} line_counter;

static size_t newlines_before(const cp_nlmap *map, line_counter *c, size_t at)
{
    if (at >= c->at)
        c->newlines += cp_nlmap_count(map, c->at, at);
    else
        c->newlines -= cp_nlmap_count(map, at, c->at);
    c->at = at;
    return c->newlines;
}

/* Turns the sorted raw hits into hit lines, numbered from 0 in the chunk. */
static int hit_lines(cp_scanner *m, size_t len, cp_hit_list *hits)
{
    const cp_nlmap *map = m->map;
    line_counter counted = {0, 0};
    size_t line_start = 0, line_end = 0, number = 0; /* current line [start, end) */
    bool have_line = false;
    for (size_t i = 0; i < m->n_raw; i++) {
        size_t end = (size_t)m->raw[i].end;
        if (!have_line || end > line_end) {
            /* a match ending with a '\n' belongs to the line it ends */
            size_t b = line_byte(map, end);
            line_start = cp_nlmap_line_start(map, b);
            line_end = cp_nlmap_line_end(map, b);
            number = newlines_before(map, &counted, line_start);
            /* a line holds no '\n': counting resumes at its end, so the
             * bytes of hit lines (most of a busy chunk) are not read twice */
            counted.at = line_end;
            have_line = true;
        }
        cp_line_hits *l = line_for(hits, line_start, line_end - line_start, number);
        if (!l)
            return -1;
        add_rule(m->m->cat, l, m->m->hs_rule[m->raw[i].pattern]);
    }
    hits->newlines = newlines_before(map, &counted, len);
    return 0;
}

int cp_scanner_scan(cp_scanner *m, const char *data, size_t len, const cp_nlmap *newlines, cp_hit_list *hits)
{
    hits->n = 0;
    hits->newlines = 0;
    m->n_raw = 0;
    m->raw_overflow = false;
    if (len == 0)
        return 0;
    if (len > CP_SCAN_MAX)   /* hs_scan would read a length cut to 32 bits */
        return -1;
    if (!newlines || newlines->len != len) {
        if (cp_nlmap_build(&m->newlines, data, len) != 0)
            return -1;
        newlines = &m->newlines;
    }
    m->map = newlines;
    hs_error_t e = m->m->scan(m->m->db, data, (unsigned)len, 0, m->scratch, on_match, m);
    if (e != HS_SUCCESS && e != HS_SCAN_TERMINATED)
        return -1;
    /* vectorscan reports in end order almost always; sort only if not */
    bool sorted = true;
    for (size_t i = 1; i < m->n_raw && sorted; i++)
        sorted = m->raw[i - 1].end <= m->raw[i].end;
    if (!sorted)
        qsort(m->raw, m->n_raw, sizeof *m->raw, by_end);
    if (hit_lines(m, len, hits) != 0)
        return -1;
    if (m->m->any_confirm)
        confirm_hits(m, data, hits);
    return 0;
}

static int count_match(unsigned id, unsigned long long from, unsigned long long to, unsigned flags, void *ctx)
{
    (void)id;
    (void)from;
    (void)to;
    (void)flags;
    (*(long long *)ctx)++;
    return 0;
}

long long cp_scanner_scan_bare(cp_scanner *sc, const char *data, size_t len)
{
    long long count = 0;
    if (len > CP_SCAN_MAX)
        return -1;
    hs_error_t e = sc->m->scan(sc->m->db, data, (unsigned)len, 0, sc->scratch, count_match, &count);
    return e == HS_SUCCESS ? count : -1;
}

/* A name is kept cut to fit, as snprintf would; copied by hand, since
 * this runs for every capture of every hit line. */
static void put_capture(cp_captures *out, const char *name, const char *v, size_t n)
{
    for (int i = 0; i < out->n; i++)
        if (strcmp(out->v[i].name, name) == 0)
            return;
    if (out->n >= CP_CAPTURE_MAX)
        return;
    cp_capture *c = &out->v[out->n++];
    size_t k = strnlen(name, sizeof c->name - 1);
    memcpy(c->name, name, k);
    c->name[k] = '\0';
    if (n >= sizeof c->value)
        n = sizeof c->value - 1;
    memcpy(c->value, v, n);
    c->value[n] = '\0';
}

static void collect_named(pcre2_code *re, pcre2_match_data *md, const char *line, cp_captures *out)
{
    uint32_t count = 0, entry = 0;
    PCRE2_SPTR table = NULL;
    pcre2_pattern_info(re, PCRE2_INFO_NAMECOUNT, &count);
    pcre2_pattern_info(re, PCRE2_INFO_NAMEENTRYSIZE, &entry);
    pcre2_pattern_info(re, PCRE2_INFO_NAMETABLE, &table);
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    uint32_t pairs = pcre2_get_ovector_count(md);
    for (uint32_t i = 0; i < count; i++) {
        const unsigned char *e = table + i * entry;
        uint32_t group = (uint32_t)(e[0] << 8 | e[1]);
        if (group >= pairs || ov[2 * group] == PCRE2_UNSET)
            continue;
        put_capture(out, (const char *)e + 2, line + ov[2 * group], ov[2 * group + 1] - ov[2 * group]);
    }
}

/* Stores a pattern's code (NULL: none) and the groups cp_scanner_step
 * reads from it; the caller then marks the pattern tried. */
static void store_code(const cp_matcher *m, size_t pid, pcre2_code *re)
{
    step_groups *g = &m->groups[pid];
    g->step = re ? pcre2_substring_number_from_name(re, (PCRE2_SPTR) "step") : PCRE2_ERROR_NOSUBSTRING;
    g->loss = re ? pcre2_substring_number_from_name(re, (PCRE2_SPTR) "loss") : PCRE2_ERROR_NOSUBSTRING;
    atomic_store_explicit(&m->pattern_re[pid], re, memory_order_relaxed);
}

/* PCRE2 code of a pattern that has named groups or confirms a `scan`,
 * compiled on first use (most never hit in a given run). Any thread may
 * ask: the first to need a code compiles it under the lock, and marks it
 * tried after storing it, so one that sees it tried sees the code. The
 * codes are a cache: this changes nothing else of a const matcher. */
static pcre2_code *pattern_code(const cp_matcher *m, const cp_rule *r, size_t j, size_t pid)
{
    if (atomic_load_explicit(&m->pattern_tried[pid], memory_order_acquire))
        return atomic_load_explicit(&m->pattern_re[pid], memory_order_relaxed);
    pthread_mutex_lock(m->compile_lock);
    if (!atomic_load_explicit(&m->pattern_tried[pid], memory_order_relaxed)) {
        if (has_named_group(r->match[j]) || r->n_scan)
            store_code(m, pid, compile_pcre(r->match[j], r->nocase, NULL, 0, r));
        atomic_store_explicit(&m->pattern_tried[pid], true, memory_order_release);
    }
    pthread_mutex_unlock(m->compile_lock);
    return atomic_load_explicit(&m->pattern_re[pid], memory_order_relaxed);
}

/* pcre2_match through the JIT's own entry when the code has one, which
 * skips the checks pcre2_match repeats on every call: captures are read on
 * every evidence line, and the step of a progress line for every writer in
 * every chunk, thousands of times a chunk at thousands of ranks. */
static int match_fast(const pcre2_code *re, const char *line, size_t len, pcre2_match_data *md)
{
    int rc = pcre2_jit_match(re, (PCRE2_SPTR)line, len, 0, 0, md, NULL);
    if (rc == PCRE2_ERROR_JIT_BADOPTION) /* not JIT compiled (CULPRIT_PCRE2_NO_JIT) */
        rc = pcre2_match(re, (PCRE2_SPTR)line, len, 0, 0, md, NULL);
    return rc;
}

static int captures_with(const cp_matcher *m, pcre2_match_data *md, uint32_t rule, const char *line, size_t len,
                         cp_captures *out)
{
    const cp_rule *r = &m->cat->rules[rule];
    size_t pid = m->rule_first[rule];
    for (size_t j = 0; j < r->n_match; j++, pid++) {
        pcre2_code *re = pattern_code(m, r, j, pid);
        if (re && match_fast(re, line, len, md) >= 0)
            collect_named(re, md, line, out);
    }
    return out->n;
}

int cp_matcher_captures(cp_matcher *m, uint32_t rule, const char *line, size_t len, cp_captures *out)
{
    return captures_with(m, m->md, rule, line, len, out);
}

int cp_scanner_captures(cp_scanner *sc, uint32_t rule, const char *line, size_t len, cp_captures *out)
{
    return captures_with(sc->m, sc->md, rule, line, len, out);
}

/* The integer a capture holds, as cp_parse_i64 reads the capture's value
 * (cut to CP_CAPTURE_VALUE - 1 bytes, as put_capture keeps it); a run of
 * at most 18 digits, the usual case, without the copy and strtoll. */
static bool capture_i64(const char *v, size_t n, int64_t *out)
{
    if (n > 0 && n <= 18) {
        int64_t x = 0;
        size_t i = 0;
        while (i < n && v[i] >= '0' && v[i] <= '9')
            x = x * 10 + (v[i++] - '0');
        if (i == n) {
            *out = x;
            return true;
        }
    }
    char buf[CP_CAPTURE_VALUE];
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    memcpy(buf, v, n);
    buf[n] = '\0';
    return cp_parse_i64(buf, out);
}

/* The value of group `group` (a PCRE2 error code: none) in the last
 * match, or NULL (the length in *n). */
static const char *group_value(pcre2_match_data *md, const char *line, int group, size_t *n)
{
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
    if (group < 0 || (uint32_t)group >= pcre2_get_ovector_count(md) || ov[2 * group] == PCRE2_UNSET)
        return NULL;
    *n = ov[2 * group + 1] - ov[2 * group];
    return line + ov[2 * group];
}

/* The loss is read on every writer's last progress line of every chunk,
 * millions of lines at thousands of ranks: digits are summed here rather
 * than by strtod (whose locale lookups cost more than the match), to a
 * float's precision, which is all an order-of-magnitude comparison needs. */
cp_loss cp_loss_parse(const char *v, size_t n)
{
    cp_loss l = {0, false};
    size_t i = 0;
    bool neg = n > 0 && v[0] == '-';
    if (n > 0 && (v[0] == '-' || v[0] == '+'))
        i++;
    if (n - i == 3 && (strncasecmp(v + i, "nan", 3) == 0 || strncasecmp(v + i, "inf", 3) == 0)) {
        l.value = (v[i] | 0x20) == 'n' ? NAN : (neg ? -INFINITY : INFINITY);
        l.read = true;
        return l;
    }
    double x = 0;
    int scale = 0, digits = 0;
    for (; i < n && v[i] >= '0' && v[i] <= '9'; i++, digits++)
        x = x * 10 + (v[i] - '0');
    if (i < n && v[i] == '.')
        for (i++; i < n && v[i] >= '0' && v[i] <= '9'; i++, digits++, scale--)
            x = x * 10 + (v[i] - '0');
    if (digits == 0)
        return l;
    if (i < n && (v[i] | 0x20) == 'e') {
        int e = 0, sign = 1;
        if (++i < n && (v[i] == '-' || v[i] == '+'))
            sign = v[i++] == '-' ? -1 : 1;
        if (i == n || v[i] < '0' || v[i] > '9')
            return l;
        for (; i < n && v[i] >= '0' && v[i] <= '9'; i++)
            e = e < 10000 ? e * 10 + (v[i] - '0') : e;
        scale += sign * e;
    }
    if (i != n)
        return l;
    /* 1e0..1e22 are exact doubles: one multiply or divide by them rounds
     * once, and costs a tenth of pow(), which the usual "2.2403" needs */
    static const double exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const int top = (int)(sizeof exact / sizeof exact[0]) - 1;
    if (scale >= 0 && scale <= top)
        x *= exact[scale];
    else if (scale < 0 && scale >= -top)
        x /= exact[-scale];
    else
        x *= pow(10, scale);
    l.value = (float)(neg ? -x : x);
    l.read = true;
    return l;
}

/* The step a line's match gives, as cp_matcher_captures would read it
 * with this thread's match data: from the first of the rule's expressions
 * that matches with its "step" group set (the first value of a name wins,
 * so the later ones could not change it). The group is read from the
 * match data, not from a copy of every capture (collect_named), except
 * where a pattern names "step" twice and the name table decides which one
 * counts. */
bool cp_scanner_step(cp_scanner *sc, uint32_t rule, const char *line, size_t len, int64_t *step, cp_loss *loss)
{
    const cp_matcher *m = sc->m;
    const cp_rule *r = &m->cat->rules[rule];
    size_t pid = m->rule_first[rule];
    if (loss)
        loss->read = false;
    for (size_t j = 0; j < r->n_match; j++, pid++) {
        pcre2_code *re = pattern_code(m, r, j, pid);
        if (!re || match_fast(re, line, len, sc->md) < 0)
            continue;
        const step_groups *g = &m->groups[pid];
        if (g->step == PCRE2_ERROR_NOUNIQUESUBSTRING) {
            cp_captures caps;
            caps.n = 0;
            collect_named(re, sc->md, line, &caps);
            const char *s = cp_captures_get(&caps, "step");
            const char *l = cp_captures_get(&caps, "loss");
            if (loss && l)
                *loss = cp_loss_parse(l, strlen(l));
            if (s)
                return cp_parse_i64(s, step);
            continue;
        }
        size_t n;
        const char *v = group_value(sc->md, line, g->step, &n);
        if (!v)
            continue;
        const char *l;
        size_t ln;
        if (loss && (l = group_value(sc->md, line, g->loss, &ln)))
            *loss = cp_loss_parse(l, ln);
        return capture_i64(v, n, step);
    }
    return false;
}

cp_scanner *cp_matcher_scanner(cp_matcher *m)
{
    return m->own;
}

int cp_matcher_check_all(cp_matcher *m, char *error, size_t error_len)
{
    for (size_t i = 0; i < m->cat->n_rules; i++) {
        const cp_rule *r = &m->cat->rules[i];
        for (size_t j = 0; j < r->n_match; j++) {
            size_t pid = m->rule_first[i] + j;
            if ((has_named_group(r->match[j]) || r->n_scan) && !m->pattern_re[pid]) {
                pcre2_code *re = compile_pcre(r->match[j], r->nocase, error, error_len, r);
                if (!re)
                    return -1;
                store_code(m, pid, re);
            }
            m->pattern_tried[pid] = true;
        }
    }
    return 0;
}

/* Whether one of the rule's `match` expressions matches the line. The
 * codes of rules with `scan` were checked when the matcher was made
 * (compile_scan_confirmations) and are compiled on first use. */
static bool confirm_with(const cp_matcher *m, pcre2_match_data *md, uint32_t rule, const char *line, size_t len)
{
    const cp_rule *r = &m->cat->rules[rule];
    if (r->n_scan == 0)
        return true;
    size_t pid = m->rule_first[rule];
    for (size_t j = 0; j < r->n_match; j++, pid++) {
        pcre2_code *re = pattern_code(m, r, j, pid);
        if (re && match_fast(re, line, len, md) >= 0)
            return true;
    }
    return false;
}

bool cp_matcher_confirms(cp_matcher *m, uint32_t rule, const char *line, size_t len)
{
    return confirm_with(m, m->md, rule, line, len);
}

int cp_matcher_line(cp_matcher *m, const char *line, size_t len, cp_line_hits *out)
{
    memset(out, 0, sizeof *out);
    char *buf = malloc(len + 1);
    if (!buf)
        return -1;
    memcpy(buf, line, len);
    buf[len] = '\n';
    cp_hit_list hl = {0};
    int rc = cp_matcher_scan(m, buf, len + 1, NULL, &hl);
    if (rc == 0 && hl.n)
        *out = hl.lines[0];
    cp_hit_list_free(&hl);
    free(buf);
    /* keep the rules whose `match` agrees with what their `scan` found */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < out->n_rules; i++)
        if (cp_matcher_confirms(m, out->rules[i], line, len))
            out->rules[kept++] = out->rules[i];
    out->n_rules = kept;
    return rc;
}

const char *cp_captures_get(const cp_captures *c, const char *name)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->v[i].name, name) == 0)
            return c->v[i].value;
    return NULL;
}

bool cp_matcher_has_if_frame(const cp_matcher *m, uint32_t rule)
{
    return m->cat->rules[rule].n_if_frame > 0;
}

/* Whether one of the rule's frame expressions matches `text`. */
static bool frame_matches(cp_matcher *m, uint32_t rule, const char *text, size_t len)
{
    size_t n;
    frame_exprs(&m->cat->rules[rule], &n);
    if (!m->frame_jit[rule]) {  /* the ordered pass is the only caller */
        for (size_t j = 0; j < n; j++)
            cp_pcre2_jit(m->frame_re[rule][j]);
        m->frame_jit[rule] = true;
    }
    for (size_t j = 0; j < n; j++)
        if (pcre2_match(m->frame_re[rule][j], (PCRE2_SPTR)text, len, 0, 0, m->md, NULL) >= 0)
            return true;
    return false;
}

bool cp_matcher_if_frame(cp_matcher *m, uint32_t rule, const char *frame, size_t len)
{
    return m->cat->rules[rule].n_if_frame == 0 || frame_matches(m, rule, frame, len);
}

bool cp_matcher_library_rule(cp_matcher *m, uint32_t rule, const char *path)
{
    return m->cat->rules[rule].role == CP_ROLE_LIBRARY && frame_matches(m, rule, path, strlen(path));
}

bool cp_matcher_is_library(cp_matcher *m, const char *path)
{
    for (size_t i = 0; m && path && i < m->n_library; i++)
        if (frame_matches(m, m->library[i], path, strlen(path)))
            return true;
    return false;
}

void cp_hit_list_free(cp_hit_list *h)
{
    free(h->lines);
    memset(h, 0, sizeof *h);
}
