/* frame.c - line attribution: peel the stacked prefixes off a log line.
 *
 * cp_frame_parse loops over the line, dispatching on the byte at the
 * current position, and peels one recognised prefix per turn (at most
 * MAX_PEELS). Every recogniser looks ahead a bounded number of bytes, never
 * allocates and never writes into the caller's origin until the whole line
 * is done: the fields are collected in a `fstate` and committed at the end,
 * so that a half-matched prefix leaves nothing behind.
 *
 * Precedence when a line says a thing twice: the first (outermost) rank,
 * pid, host, task and level win, except that a sub-group "[PG ID 1 ... Rank
 * N]" tag (a group rank, not necessarily the global one) only fills a rank
 * no other marker gave; of several timestamps the most absolute one wins
 * (ABS over NOYEAR over BOOT), the first of equal kinds.
 *
 * What is a prefix (the body starts after it) and what stays text:
 *  - peeled: srun's "12: ", pdsh's "host: ", "slurmstepd-HOST: ", MPI's
 *    "[1,3]<stderr>:", tee's "[role3]:", "[rank3]:" (and the one space
 *    PyTorch puts after it), glog headers, leading rank/PG tags, NCCL's
 *    "host:pid:tid [dev] file:line NCCL WARN ", timestamps with the logging
 *    fields after them (level, rank, "- name -", "[file.py:1:fn]", pid and
 *    uuid brackets, k2's "(rank/world)"), "LEVEL:logger:" and syslog's
 *    "host tag[pid]: ".
 *  - kept: srun's and slurmstepd's own messages (their host and task are
 *    still taken), "WARNING: text" (the level is taken), a "name: " after
 *    a level unless it is clearly a logger (dotted, "__x__", "root"), and
 *    anything not recognised. When unsure, text is kept.
 *  - only the first launcher layers (srun label, pdsh host) may be peeled
 *    as "token: ", so message text such as "node03: ok" after a timestamp
 *    is never taken for a host; see host_ok() for the host rule.
 */
#include "frame.h"
#include "frame_int.h"

#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

enum {
    BODY_SCAN = 200,        /* bytes of the body searched for rank tags */
    TOKEN_MAX = 128,        /* longest token a recogniser looks at */
    MAX_PEELS = 16,         /* prefixes peeled from one line at most */
    BAR_DESC_MAX = 80,      /* a progress bar's description and percentage */
    BAR_MAX = 1024,         /* its bar: 3-byte block characters, wide terminals */
    BAR_STATS_MAX = 200,    /* its " 837/888 [9:42:50<34:08, 40.17s/it, loss=...]" */
    FIELDS_MAX = 8,         /* logging fields after one timestamp */
    ROLE_MAX = 40,          /* longest torchrun role and local rank, "[...]:" */
    PID_LIMIT = 4194304     /* Linux PID_MAX_LIMIT: bigger numbers are tids */
};

/* ----------------------------------------------------------------- state */

typedef struct fstate {
    int32_t rank, local_rank, pid, task, cuda_dev;
    int rank_prio;          /* 0 none, 1 direct marker, 2 sub-group PG tag */
    int launcher;           /* only launcher layers peeled so far */
    int kernel;             /* a kernel log line (dmesg, syslog, journald) */
    char level;
    cp_time time;
    const char *host;       /* points into the line */
    size_t host_len;
} fstate;

static int time_rank(cp_ts_kind k)
{
    return k == CP_TS_ABS ? 3 : k == CP_TS_NOYEAR ? 2 : k == CP_TS_BOOT ? 1 : 0;
}

static void set_time(fstate *st, cp_time t)
{
    if (time_rank(t.kind) > time_rank(st->time.kind))
        st->time = t;
}

static void set_rank(fstate *st, int64_t v, int prio)
{
    if (v < 0 || v > INT32_MAX)
        return;
    if (st->rank_prio == 0 || prio < st->rank_prio) {
        st->rank = (int32_t)v;
        st->rank_prio = prio;
    }
}

static void set_first(int32_t *field, int64_t v)
{
    if (*field < 0 && v >= 0 && v <= INT32_MAX)
        *field = (int32_t)v;
}

static void set_pid(fstate *st, int64_t v)
{
    if (v > 0 && v <= PID_LIMIT)
        set_first(&st->pid, v);
}

static void set_level(fstate *st, char lvl)
{
    if (!st->level)
        st->level = lvl;
}

/* Keeps the short name (up to the first '.') so that NCCL's, pdsh's and the
 * path's spelling of a host agree; addresses are kept whole. */
static void set_host(fstate *st, const char *h, size_t len)
{
    if (st->host_len || len == 0)
        return;
    if (!is_ipv4(h, len)) {
        const char *dot = memchr(h, '.', len);
        if (dot)
            len = (size_t)(dot - h);
    }
    if (len == 0)
        return;
    st->host = h;
    st->host_len = len < CP_HOST_MAX - 1 ? len : CP_HOST_MAX - 1;
}

/* ------------------------------------------------------------ small tags */

/* "DEBUG", "INFO", "WARNING", ... at s[p], as a whole word. */
static size_t level_word(const char *s, size_t n, size_t p, char *lvl)
{
    size_t len = 0;
    char l = 0;
    if (p >= n)
        return 0;
    switch (s[p]) {             /* dispatch on the first letter: hot path */
    case 'I': if (LIT(s, n, p, "INFO")) { len = 4; l = 'I'; } break;
    case 'W':
        if (LIT(s, n, p, "WARNING")) { len = 7; l = 'W'; }
        else if (LIT(s, n, p, "WARN")) { len = 4; l = 'W'; }
        break;
    case 'E': if (LIT(s, n, p, "ERROR")) { len = 5; l = 'E'; } break;
    case 'D': if (LIT(s, n, p, "DEBUG")) { len = 5; l = 'D'; } break;
    case 'C': if (LIT(s, n, p, "CRITICAL")) { len = 8; l = 'F'; } break;
    case 'F': if (LIT(s, n, p, "FATAL")) { len = 5; l = 'F'; } break;
    case 'T': if (LIT(s, n, p, "TRACE")) { len = 5; l = 'D'; } break;
    case 'N': if (LIT(s, n, p, "NOTICE")) { len = 6; l = 'I'; } break;
    default: return 0;
    }
    if (!len || (p + len < n && (is_alnum(s[p + len]) || s[p + len] == '_')))
        return 0;
    *lvl = l;
    return len;
}

/* "[rank3]", "[rank 0/4]", "[RANK 1]", "[Rank 7]", "[Rank -1]": returns the
 * length through ']' and the rank (-1 for a negative one). */
static size_t parse_rank_tag(const char *s, size_t n, size_t p, int64_t *v)
{
    size_t q = p + 1;
    if (q + 4 >= n || (s[q] | 0x20) != 'r' || (s[q + 1] | 0x20) != 'a' ||
        (s[q + 2] | 0x20) != 'n' || (s[q + 3] | 0x20) != 'k')
        return 0;
    q += 4;
    if (s[q] == ' ' || s[q] == '_')
        q++;
    int neg = q < n && s[q] == '-';
    q += (size_t)neg;
    size_t k = read_num(s, n, q, 9, v);
    if (!k)
        return 0;
    q += k;
    if (q < n && s[q] == '/') {
        int64_t w;
        size_t j = read_num(s, n, q + 1, 9, &w);
        if (!j)
            return 0;
        q += 1 + j;
    }
    if (q >= n || s[q] != ']')
        return 0;
    if (neg)
        *v = -1;
    return q + 1 - p;
}

/* "[PG 0 Rank 144]", "[PG 0 (default_pg) Rank 12]", "[PG ID 0 PG GUID
 * 0(default_pg) Rank 1]", "[PG ID 1 PG GUID 1 Rank 19]". The rank of a
 * group other than the default one is a group rank: priority 2. */
static size_t parse_pg_tag(const char *s, size_t n, size_t p, int64_t *v, int *prio)
{
    if (n - p < 12 || s[p + 1] != 'P' || s[p + 2] != 'G' || s[p + 3] != ' ')
        return 0;
    size_t lim = n - p > TOKEN_MAX ? p + TOKEN_MAX : n;
    const char *close = memchr(s + p, ']', lim - p);
    if (!close)
        return 0;
    size_t e = (size_t)(close - s);
    /* the rank digits end right at ']' and follow the last " Rank " */
    size_t d = e;
    while (d > p && is_digit(s[d - 1]))
        d--;
    if (d == e || d < p + 10 || memcmp(s + d - 6, " Rank ", 6) != 0)
        return 0;
    if (read_num(s, n, d, 9, v) != e - d)
        return 0;
    size_t q = p + 4;
    if (LIT(s, n, q, "ID "))
        q += 3;
    int64_t pg;
    size_t k = read_num(s, n, q, 9, &pg);
    int is_default = (k && pg == 0) || find_bytes(s + p, e - p, "default_pg", 10) != NULL;
    *prio = is_default ? 1 : 2;
    return e + 1 - p;
}

/* "file.cpp:607" ending right before `term` (glog) or before a space. */
static size_t file_line(const char *s, size_t n, size_t p, char term)
{
    size_t lim = n - p > TOKEN_MAX ? p + TOKEN_MAX : n;
    const char *e = memchr(s + p, term, lim - p);
    if (!e || e == s + p || (term != ' ' && memchr(s + p, ' ', (size_t)(e - s) - p)))
        return 0;
    size_t q = (size_t)(e - s);
    size_t d = q;
    while (d > p && is_digit(s[d - 1]))
        d--;
    if (d == q || d <= p + 1 || s[d - 1] != ':')
        return 0;
    return q - p;
}

/* The part of an NCCL line after "[dev] ": optional TRACE timer, optional
 * "file.cc:123", optional "(func)", then "NCCL INFO|WARN|TRACE|CALL". */
static size_t nccl_tail(const char *s, size_t n, size_t p, char *lvl)
{
    size_t q = p;
    if (q < n && is_digit(s[q])) {                  /* TRACE's "%f " timer */
        int64_t v;
        size_t k = read_num(s, n, q, 12, &v);
        if (q + k < n && s[q + k] == '.') {
            size_t r = q + k + 1;
            while (r < n && r - q < 24 && is_digit(s[r]))
                r++;
            if (r < n && s[r] == ' ')
                q = r + 1;
        }
    }
    size_t f = file_line(s, n, q, ' ');
    if (f)
        q += f + 1;
    if (q < n && s[q] == '(') {
        size_t lim = n - q > 96 ? q + 96 : n;
        const char *close = memchr(s + q, ')', lim - q);
        if (close && (size_t)(close - s) + 1 < n && close[1] == ' ')
            q = (size_t)(close - s) + 2;
    }
    if (!LIT(s, n, q, "NCCL "))
        return 0;
    q += 5;
    static const struct { const char *w; size_t len; char lvl; } words[] = {
        {"INFO", 4, 'I'}, {"WARN", 4, 'W'}, {"TRACE", 5, 'D'}, {"CALL", 4, 'D'},
    };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t e = q + words[i].len;
        if (has_lit(s, n, q, words[i].w, words[i].len) && (e == n || s[e] == ' ')) {
            *lvl = words[i].lvl;
            return (e < n ? e + 1 : e) - p;
        }
    }
    return 0;
}

/* ------------------------------------------------------ host heuristics */

/* Words that look like "token: " at the start of a line but are text:
 * a pdsh host needs a digit, so only digit-bearing words matter here. */
static int host_stopword(const char *s, size_t len)
{
    static const char *const stems[] = {
        "python", "pip", "fp", "bf", "int", "uint", "float", "bfloat", "sha", "md",
        "utf", "cuda", "cudnn", "cublas", "nccl", "gcc", "ld", "nvcc", "torch", "sm",
        "x", "e", "v", "step", "steps", "epoch", "iter", "layer", "layers", "rank",
        "stage", "batch", "version", "line", "frame", "task", "tasks", "thread", "proc",
        "pid", "nvidia", "lib", "libc", "tcp", "udp", "port", "http", "https", "loss",
        "lr", "top", "gpt", "llama", "bert", "qwen", "t", "resnet", "vit", "sample",
    };
    size_t k = 0;
    while (k < len && is_alpha(s[k]))
        k++;
    return eq_nocase_any(s, k, stems, sizeof stems / sizeof stems[0]);
}

/* A pdsh-style "host: " prefix: an IPv4 address, "localhost", or a
 * lowercase hostname ([a-z0-9.-], starts alphanumeric) with at least one
 * letter and one digit whose leading word is not a known text word
 * ("python3", "fp16", "sha256", "step10"). Exception names (uppercase),
 * "srun", "WARNING", "Traceback" ... fail the lowercase/digit test. */
static int host_ok(const char *s, size_t len)
{
    int alpha = 0, digit = 0;
    if (len == 0 || len >= CP_HOST_MAX)
        return 0;
    if (is_ipv4(s, len) || (len == 9 && memcmp(s, "localhost", 9) == 0))
        return 1;
    if (!is_alnum(s[0]) || s[len - 1] == '-' || s[len - 1] == '.')
        return 0;
    for (size_t k = 0; k < len; k++) {
        char c = s[k];
        if (is_lower(c))
            alpha = 1;
        else if (is_digit(c))
            digit = 1;
        else if (c != '-' && c != '.')
            return 0;
    }
    return alpha && digit && !host_stopword(s, len);
}

/* --------------------------------------------------------------- peelers */

/* A bracketed logging field at s[q] == '[': "[INFO]", "[rank 0/4]",
 * DeepSpeed's "[engine.py:96:fn]", "[177/train/578 (pid 28936)]", a uuid,
 * "[__main__]" after a level. Returns its length, 0 if none. */
static size_t bracket_field(const char *s, size_t n, size_t q, fstate *st, int prev_level,
                            int seen_level, int *is_level)
{
    char lvl = 0;
    int64_t v;
    size_t k;
    if ((k = level_word(s, n, q + 1, &lvl)) && q + 1 + k < n && s[q + 1 + k] == ']') {
        set_level(st, lvl);
        *is_level = 1;
        return k + 2;
    }
    if ((k = parse_rank_tag(s, n, q, &v))) {
        if (q + k < n && s[q + k] == ':')
            return 0;               /* "[rank7]:" is the prefix form */
        set_rank(st, v, 1);
        return k;
    }
    size_t lim = n - q > 96 ? q + 96 : n;
    const char *close = memchr(s + q, ']', lim - q);
    if (!close)
        return 0;
    size_t e = (size_t)(close - s), len = e + 1 - q;
    const char *sp = memchr(s + q, ' ', e - q);
    const char *pid = sp ? find_bytes(sp, e - (size_t)(sp - s), "(pid ", 5) : NULL;
    if (pid) {
        size_t pp = (size_t)(pid - s) + 5;
        size_t j = read_num(s, n, pp, 9, &v);
        if (!j || pp + j >= n || s[pp + j] != ')')
            return 0;
        set_pid(st, v);
        return len;
    }
    if (len == 38) {                /* "[09c561ee-a44c-4795-967c-7183a83b3160]" */
        size_t j = q + 1;
        while (j < e && (is_digit(s[j]) || (lower(s[j]) >= 'a' && lower(s[j]) <= 'f') ||
                         s[j] == '-'))
            j++;
        if (j == e && s[q + 9] == '-' && s[q + 14] == '-')
            return len;
    }
    if (seen_level && !sp && memchr(s + q, ':', e - q))
        return len;                 /* DeepSpeed's "[engine.py:96:fn]" */
    if (prev_level && !sp && e > q + 1 && span(s, e, q + 1, e, C_IDENT) == e)
        return len;                 /* "ERROR [__main__] msg" */
    return 0;
}

/* Python-logging / launcher fields after a timestamp. `sep` is the
 * separator in front of the field ('-', '|' or 0); `prev_level` says the
 * field before was the level. Returns the field's length, 0 if none. */
static size_t field_at(const char *s, size_t n, size_t q, fstate *st, char sep,
                       int prev_level, int seen_level, int *is_level)
{
    char c = s[q], lvl = 0;
    int64_t v;
    size_t k;
    *is_level = 0;
    if (c == '[')
        return bracket_field(s, n, q, st, prev_level, seen_level, is_level);
    if ((k = level_word(s, n, q, &lvl))) {
        set_level(st, lvl);
        *is_level = 1;
        return q + k < n && s[q + k] == ':' ? k + 1 : k;
    }
    if (lower(c) == 'r' && q + 5 < n && eq_nocase(s + q, 4, "rank") && s[q + 4] == ' ') {
        k = read_num(s, n, q + 5, 9, &v);   /* "| rank 0 |" */
        size_t e = q + 5 + k;
        if (k && ((e + 1 < n && s[e] == ' ' && (s[e + 1] == '|' || s[e + 1] == '-')) ||
                  (sep == '|' && e == n))) {
            set_rank(st, v, 1);
            return e - q;
        }
        return 0;
    }
    /* logger names: "- SimpleTuner - INFO -", "INFO torch.distributed.x: msg",
     * "torch.distributed.elastic.multiprocessing.api: [ERROR] failed" */
    size_t t = span(s, n, q, 64, C_IDENT);
    if (t == q || t >= n)
        return 0;
    if (sep == '-' && LIT(s, n, t, " - "))
        return t - q;
    if (s[t] == ':' && LIT(s, n, t + 1, " [") && level_word(s, n, t + 3, &lvl))
        return t + 1 - q;
    if (prev_level && s[t] == ':' && (t + 1 == n || s[t + 1] == ' ') &&
        (is_lower(c) || c == '_') &&
        (memchr(s + q, '.', t - q) || LIT(s, n, q, "__") || (t - q == 4 && LIT(s, n, q, "root"))))
        return t + 1 - q;
    return 0;
}

/* "(2/4) " after a logging header: k2's recipes (icefall, ZipVoice) log
 * each process's rank and the world size so under DDP. Takes the rank;
 * returns the length read, 0 when there is none at p. */
static size_t rank_of_world(const char *s, size_t n, size_t p, fstate *st)
{
    int64_t rank, world;
    size_t q = p;
    if (q >= n || s[q] != '(')
        return 0;
    q++;
    size_t k = read_num(s, n, q, 9, &rank);
    if (!k || q + k >= n || s[q + k] != '/')
        return 0;
    q += k + 1;
    size_t j = read_num(s, n, q, 9, &world);
    if (!j || q + j + 1 >= n || s[q + j] != ')' || s[q + j + 1] != ' ' || rank >= world)
        return 0;
    set_rank(st, rank, 1);
    return q + j + 2 - p;   /* and the space after it */
}

static size_t peel_fields(const char *s, size_t n, size_t p, fstate *st)
{
    size_t body = p;
    int prev_level = 0, seen_level = 0;
    for (int k = 0; k < FIELDS_MAX; k++) {
        size_t q = p;
        int sp = 0;
        char sep = 0;
        if (prev_level) {           /* "%(levelname)-8s" pads with spaces */
            while (q < n && q - p < 16 && s[q] == ' ')
                q++;
            sp = q > p;
        } else if (q < n && s[q] == ' ') {
            q++;
            sp = 1;
        }
        if (q + 1 < n && (s[q] == '-' || s[q] == '|') && s[q + 1] == ' ' && (sp || s[q] == '|')) {
            sep = s[q];
            q += 2;
        }
        body = q;
        if (q >= n || (!sp && !sep && s[q] != '['))
            break;
        int is_level;
        size_t r = field_at(s, n, q, st, sep, prev_level, seen_level, &is_level);
        if (!r)
            break;
        p = q + r;
        body = p;
        prev_level = is_level;
        seen_level |= is_level;
    }
    /* (k2's format: "LEVEL [file.py:N] (2/4) "; a message of its own may
     * start with a count in parentheses) */
    if (seen_level && body >= 2 && s[body - 1] == ' ' && s[body - 2] == ']')
        body += rank_of_world(s, n, body, st);
    return body;
}

/* After a timestamp: "host kernel: " / "host python3[123]: " (syslog,
 * journald). `strict` (after ISO times) wants "kernel" or a "[pid]". */
static size_t peel_host_tag(const char *s, size_t n, size_t p, fstate *st, int strict)
{
    size_t q = span(s, n, p, CP_HOST_MAX, C_NAME);
    if (q == p || q >= n || s[q] != ' ')
        return 0;
    size_t h = q - p, t = q + 1;
    q = span(s, n, t, 64, C_TOK);
    if (q == t || q >= n)
        return 0;
    int64_t pid = -1;
    if (s[q] == '[') {
        size_t k = read_num(s, n, q + 1, 9, &pid);
        if (!k || q + 1 + k >= n || s[q + 1 + k] != ']')
            return 0;
        q += k + 2;
    } else if (strict && !(q - t == 6 && memcmp(s + t, "kernel", 6) == 0)) {
        return 0;
    }
    if (q >= n || s[q] != ':' || (q + 1 < n && s[q + 1] != ' '))
        return 0;
    set_host(st, s + p, h);
    set_pid(st, pid);
    st->kernel = 1;
    return (q + 1 < n ? q + 2 : q + 1) - p;
}

/* "A<sep>B" at s[q], as in "1,3" or "0604/1024": returns its length. */
static size_t read_num_pair(const char *s, size_t n, size_t q, char sep, int64_t *a, int64_t *b)
{
    size_t k = read_num(s, n, q, 9, a);
    if (!k || q + k >= n || s[q + k] != sep)
        return 0;
    size_t j = read_num(s, n, q + k + 1, 9, b);
    return j ? k + 1 + j : 0;
}

/* "[1,3]<stderr>:" (Open MPI --tag-output) -> rank 3. */
static size_t peel_mpi(const char *s, size_t n, size_t p, fstate *st)
{
    int64_t job, rank;
    size_t q = p + 1, k = read_num_pair(s, n, q, ',', &job, &rank);
    if (!k || !LIT(s, n, q + k, "]<"))
        return 0;
    q += k + 2;
    size_t w = q;
    while (q < n && q - w < 8 && is_lower(s[q]))
        q++;
    if (q == w || !LIT(s, n, q, ">:"))
        return 0;
    set_rank(st, rank, 1);
    st->launcher = 0;
    return q + 2 - p;
}

/* A timestamp of k bytes has been read at p: what may follow it. `kernel`
 * (dmesg, dmesg -T) means a kernel message follows, with nothing between.
 * Returns the total length peeled. */
static size_t after_time(const char *s, size_t n, size_t p, size_t k, cp_time t, fstate *st,
                         int kernel)
{
    set_time(st, t);
    st->launcher = 0;
    size_t q = p + k;
    if (kernel) {
        st->kernel = 1;
        return (q < n && s[q] == ' ' ? q + 1 : q) - p;
    }
    /* a collector's time ended by a colon: "2019-06-02T16:13:44.884Z: [1,12]<stdout>:" */
    if (q + 1 < n && s[q] == ':' && s[q + 1] == ' ')
        q++;
    /* Open MPI's --timestamp-output puts its tag right after the time:
     * "Fri Aug 11 12:31:45 2023[1,0]<stdout>:"; the loop peels it next */
    size_t mpi = q < n && s[q] == '[' ? peel_mpi(s, n, q, st) : 0;
    if (mpi)
        return q + mpi - p;
    if (q < n && s[q] == ' ') {
        size_t h = peel_host_tag(s, n, q + 1, st, t.kind == CP_TS_ABS);
        if (h)
            return q + 1 + h - p;
    }
    return peel_fields(s, n, q, st) - p;
}

/* "[3] NCCL INFO ...", "[3] file.cc:12 NCCL WARN ..." (no host). */
static size_t peel_nccl_dev(const char *s, size_t n, size_t p, fstate *st)
{
    int64_t dev;
    size_t q = p + 1;
    int neg = q < n && s[q] == '-';
    q += (size_t)neg;
    size_t k = read_num(s, n, q, 4, &dev);
    char lvl = 0;
    if (!k || !LIT(s, n, q + k, "] "))
        return 0;
    q += k + 2;
    size_t t = nccl_tail(s, n, q, &lvl);
    if (!t)
        return 0;
    if (!neg)
        set_first(&st->cuda_dev, dev);
    set_level(st, lvl);
    st->launcher = 0;
    return q + t - p;
}

/* glog / c10 header after the level letter at s[p] (the letter is at p,
 * `bracketed` tells whether a '[' came before it). */
static size_t glog_rest(const char *s, size_t n, size_t p, int bracketed, fstate *st)
{
    cp_time t = {0, CP_TS_NONE};
    int64_t pid = -1;
    size_t q = p + 1;
    if (q >= n)
        return 0;
    if (s[q] == ' ') {              /* old "[E ProcessGroupNCCL.cpp:737]" */
        if (!bracketed)
            return 0;
        q++;
    } else {
        size_t k = frame_parse_glog_date(s, n, q, &t);
        if (!k || q + k >= n || s[q + k] != ' ')
            return 0;
        q += k + 1;
        int64_t v;
        size_t j = read_num(s, n, q, 18, &v);     /* pid or thread id */
        if (j && q + j < n && s[q + j] == ' ') {
            pid = v;
            q += j + 1;
        }
    }
    size_t f = file_line(s, n, q, ']');
    if (!f)
        return 0;
    q += f + 1;
    set_level(st, s[p]);
    if (t.kind != CP_TS_NONE)
        set_time(st, t);
    set_pid(st, pid);
    st->launcher = 0;
    if (q < n && s[q] == ' ')
        q++;
    return q - p;
}

static int glog_letter(char c) { return c == 'I' || c == 'W' || c == 'E' || c == 'F'; }

/* "[rank3]:", "[Rank 7] ", "[PG 0 (default_pg) Rank 12] " at the front. */
static size_t peel_rank_tags(const char *s, size_t n, size_t p, fstate *st)
{
    int64_t v;
    int prio = 1;
    size_t k = parse_rank_tag(s, n, p, &v);
    if (!k)
        k = parse_pg_tag(s, n, p, &v, &prio);
    if (!k)
        return 0;
    set_rank(st, v, prio);
    st->launcher = 0;
    size_t q = p + k;
    if (q < n && s[q] == ':')       /* "[rank1]: Traceback": the space is PyTorch's */
        q++;
    if (q < n && s[q] == ' ')
        q++;
    return q - p;
}

/* torchrun's tee "[default3]:", "[trainer3]:", "[worker12]:" -> local rank:
 * "[{role}{local_rank}]:", where --role may hold digits and colons too
 * ("[gpu187:2]:" for --role gpu187:), so the rank is the digits just before
 * the "]". A role name starting with a letter is needed: "[1]:" is a
 * torchelastic failure-table entry. */
static size_t peel_role(const char *s, size_t n, size_t p, fstate *st)
{
    const size_t r = p + 1, lim = n - r > ROLE_MAX ? r + ROLE_MAX : n;
    if (r >= n || !cls(s[r], C_ROLE))
        return 0;
    size_t q = r;
    while (q < lim && (cls(s[q], C_ROLE | C_DIGIT) || s[q] == ':' || s[q] == '.'))
        q++;
    if (!LIT(s, n, q, "]:"))
        return 0;
    size_t d = q;
    while (d > r && is_digit(s[d - 1]))
        d--;
    int64_t v;
    if (d == q || q - d > 6 || read_num(s, n, d, 6, &v) != q - d)
        return 0;
    set_first(&st->local_rank, v);
    st->launcher = 0;
    return q + 2 - p;
}

/* "[titan] 2024-11-02 19:27:22,123 - root - INFO - ..." : a bare tag in
 * front of a timestamp is a prefix too. */
static size_t peel_tag_before_time(const char *s, size_t n, size_t p)
{
    size_t q = span(s, n, p + 1, 32, C_NAME);
    cp_time t;
    if (q == p + 1 || !LIT(s, n, q, "] ") || !frame_parse_iso(s, n, q + 2, &t))
        return 0;
    return q + 2 - p;
}

/* "host:pid:tid [dev] NCCL INFO", or without a host "shm.h:28 NCCL WARN". */
static size_t peel_nccl_host(const char *s, size_t n, size_t p, size_t t, fstate *st)
{
    int64_t pid, tid, dev = -1;
    char lvl = 0;
    size_t q = t + 1, k = read_num(s, n, q, 10, &pid);
    if (k && q + k < n && s[q + k] == ':' && !memchr(s + p, '/', t - p)) {
        q += k + 1;
        size_t j = read_num(s, n, q, 18, &tid);
        if (j && q + j < n && s[q + j] == ' ') {
            q += j + 1;
            if (q < n && s[q] == '[') {
                int neg = q + 1 < n && s[q + 1] == '-';
                size_t d = read_num(s, n, q + 1 + (size_t)neg, 4, &dev);
                if (!d || !LIT(s, n, q + 1 + (size_t)neg + d, "] "))
                    return 0;
                q += (size_t)neg + d + 3;
                if (neg)
                    dev = -1;
            }
            size_t r = nccl_tail(s, n, q, &lvl);
            if (!r)
                return 0;
            set_host(st, s + p, t - p);
            set_pid(st, pid);
            if (dev >= 0)
                set_first(&st->cuda_dev, dev);
            set_level(st, lvl);
            st->launcher = 0;
            return q + r - p;
        }
        return 0;
    }
    size_t r = nccl_tail(s, n, p, &lvl);
    if (!r)
        return 0;
    set_level(st, lvl);
    st->launcher = 0;
    return r;
}

/* MPICH's and Intel MPI's -prepend-rank: "[56] " opening the line, before
 * the process's own prefixes; peeled together with the NCCL line's
 * "host:pid:tid [dev]" that must follow, so that a line that merely starts
 * with a number in brackets is not read as a rank (peel_nccl_host leaves
 * the state alone when it finds none). */
static size_t peel_prepended_rank(const char *s, size_t n, size_t p, fstate *st)
{
    int64_t rank;
    size_t k = p == 0 ? read_num(s, n, 1, 7, &rank) : 0;
    if (!k || !LIT(s, n, 1 + k, "] "))
        return 0;
    size_t q = k + 3, t = span(s, n, q, TOKEN_MAX, C_TOK);
    size_t r = t + 1 < n && s[t] == ':' && is_digit(s[t + 1]) ? peel_nccl_host(s, n, q, t, st) : 0;
    if (!r)
        return 0;
    set_rank(st, rank, 1);
    return q + r - p;
}

/* "[0604/1024][2025-02-16 22:31:34,422] ...": rank and world size as a
 * tag of their own, glued to the next bracket. The glued "[" and a rank
 * below the world size keep ninja's "[3/8] Compiling ..." and other
 * progress counters out. */
static size_t peel_rank_of_world(const char *s, size_t n, size_t p, fstate *st)
{
    int64_t rank, world;
    size_t q = p + 1, k = read_num_pair(s, n, q, '/', &rank, &world);
    if (!k || !LIT(s, n, q + k, "][") || rank >= world)
        return 0;
    set_rank(st, rank, 1);
    st->launcher = 0;
    return q + k + 1 - p;
}

static size_t peel_bracket(const char *s, size_t n, size_t p, fstate *st)
{
    size_t q = p + 1, r;
    char c, lvl = 0;
    cp_time t;
    if (q >= n)
        return 0;
    c = s[q];
    if (is_digit(c) || c == ' ' || c == '-') {
        /* times first, being the most common; no MPI tag reads as one (its
         * digits end at ',', a time's at '-', '/', ' ' or '.') */
        size_t k = frame_parse_time_at(s, n, q, &t, 1);
        if (k && q + k < n && s[q + k] == ']')
            return after_time(s, n, p, k + 2, t, st, t.kind == CP_TS_BOOT);
        if ((r = peel_mpi(s, n, p, st)))
            return r;
        if ((r = peel_nccl_dev(s, n, p, st)))
            return r;
        if ((r = peel_rank_of_world(s, n, p, st)))
            return r;
        return peel_prepended_rank(s, n, p, st);
    }
    if (glog_letter(c) && (r = glog_rest(s, n, q, 1, st)))
        return r + 1;
    if ((r = peel_rank_tags(s, n, p, st)))
        return r;
    if ((r = level_word(s, n, q, &lvl)) && q + r < n && s[q + r] == ']') {
        set_level(st, lvl);         /* "[ERROR] msg" */
        st->launcher = 0;
        r = q + r + 1;
        return (r < n && s[r] == ' ' ? r + 1 : r) - p;
    }
    if (is_upper(c)) {              /* dmesg -T "[Sun Nov 29 16:19:56 2026]" */
        size_t k = frame_parse_ctime(s, n, q, &t);
        if (k && q + k < n && s[q + k] == ']')
            return after_time(s, n, p, k + 2, t, st, 1);
    }
    if ((r = peel_role(s, n, p, st)))
        return r;
    return peel_tag_before_time(s, n, p);
}

/* "srun: error: gpu20-15: task 0: Out Of Memory": srun speaks about a
 * task; the line stays whole (it is srun's message), but the host and task
 * it names are the line's origin. */
static void srun_message(const char *s, size_t n, size_t p, fstate *st)
{
    if (!LIT(s, n, p, "error: "))
        return;
    set_level(st, 'E');
    size_t h = p + 7, q = span(s, n, h, CP_HOST_MAX, C_NAME);
    if (q == h || !LIT(s, n, q, ": task") || !host_ok(s + h, q - h))
        return;
    set_host(st, s + h, q - h);
    q += 6;
    int64_t v;
    size_t k = q < n && s[q] == ' ' ? read_num(s, n, q + 1, 9, &v) : 0;
    if (k && LIT(s, n, q + 1 + k, ": "))
        set_first(&st->task, v);
}

/* "slurmstepd: error: *** STEP 9411285.0 ON gpu20-15 CANCELLED AT ..." */
static void slurmstepd_message(const char *s, size_t n, size_t p, fstate *st)
{
    if (!LIT(s, n, p, "error: "))
        return;
    set_level(st, 'E');
    size_t lim = n - p > BODY_SCAN ? p + BODY_SCAN : n;
    const char *on = find_bytes(s + p, lim - p, " ON ", 4);
    if (!on || !find_bytes(s + p, (size_t)(on - s) - p, "*** ", 4))
        return;
    size_t h = (size_t)(on - s) + 4, q = span(s, n, h, CP_HOST_MAX, C_NAME);
    if (LIT(s, n, q, " CANCELLED"))
        set_host(st, s + h, q - h);
}

/* "token: " at the front: srun task, pdsh host, slurmstepd-HOST, or a
 * level word; t is the end of the token. */
static size_t peel_colon_space(const char *s, size_t n, size_t p, size_t t, fstate *st)
{
    size_t tl = t - p;
    char lvl = 0;
    int64_t v;
    if (st->launcher && st->task < 0 && read_num(s, n, p, 6, &v) == tl) {
        set_first(&st->task, v);    /* srun -l "12: " */
        return tl + 2;
    }
    if (tl == 4 && memcmp(s + p, "srun", 4) == 0) {
        srun_message(s, n, t + 2, st);
        return 0;
    }
    if (tl > 11 && memcmp(s + p, "slurmstepd-", 11) == 0 && st->launcher) {
        set_host(st, s + p + 11, tl - 11);
        if (LIT(s, n, t + 2, "error: "))
            set_level(st, 'E');
        return tl + 2;
    }
    if (tl == 10 && memcmp(s + p, "slurmstepd", 10) == 0) {
        slurmstepd_message(s, n, t + 2, st);
        return 0;
    }
    if (st->launcher && !st->host_len && host_ok(s + p, tl)) {
        set_host(st, s + p, tl);    /* pdsh "node017: " */
        return tl + 2;
    }
    /* "WARNING: msg": the word stays text; the kernel's "INFO: task blocked"
     * is no logging level */
    if (!st->kernel && level_word(s, n, p, &lvl) == tl)
        set_level(st, lvl);
    return 0;
}

/* "rank0]:" opening the line: PyTorch's "[rank0]:" prefix with its "["
 * lost, as a paste that starts one character late has it. `t` ends the
 * word "rankN". */
static size_t peel_cut_rank_prefix(const char *s, size_t n, size_t p, size_t t, fstate *st)
{
    int64_t v;
    if (p != 0 || t - p < 5 || memcmp(s + p, "rank", 4) != 0 || read_num(s, n, p + 4, 9, &v) != t - p - 4 ||
        !LIT(s, n, t, "]:"))
        return 0;
    set_rank(st, v, 1);
    st->launcher = 0;
    size_t q = t + 2;
    return (q < n && s[q] == ' ' ? q + 1 : q) - p;
}

/* Prefixes that start with a letter or digit. */
static size_t peel_word(const char *s, size_t n, size_t p, fstate *st)
{
    cp_time tm;
    char lvl = 0;
    size_t k;
    if (is_digit(s[p]) && (k = frame_parse_iso(s, n, p, &tm)))
        return after_time(s, n, p, k, tm, st, 0);
    size_t t = span(s, n, p, TOKEN_MAX, C_TOK);
    if (t >= n)
        return 0;
    size_t tl = t - p;
    if (s[t] == ']')
        return peel_cut_rank_prefix(s, n, p, t, st);
    if (s[t] == ':') {
        char d = t + 1 < n ? s[t + 1] : '\0';
        if (d == ' ')
            return peel_colon_space(s, n, p, t, st);
        if (is_digit(d))
            return peel_nccl_host(s, n, p, t, st);
        if ((is_alpha(d) || d == '_' || d == '<') && level_word(s, n, p, &lvl) == tl) {
            /* "WARNING:torch.distributed...api:msg" */
            size_t u = span(s, n, t + 1, TOKEN_MAX, C_PYLOG);
            if (u >= n || s[u] != ':')
                return 0;
            set_level(st, lvl);
            st->launcher = 0;
            return u + 1 - p;
        }
        return 0;
    }
    if (s[t] == ' ') {
        if (glog_letter(s[p]) && tl >= 4 && is_digit(s[p + 1]))
            return glog_rest(s, n, p, 0, st);
        /* ctime, as Open MPI's --timestamp-output writes it */
        if (tl == 3 && (k = frame_parse_ctime(s, n, p, &tm)))
            return after_time(s, n, p, k, tm, st, 0);
        if (tl == 3 && (k = frame_parse_syslog_date(s, n, p, &tm)))
            return after_time(s, n, p, k, tm, st, 0);
    }
    return 0;
}

/* srun pads its label to the width of the largest task id: "  3: ". */
static size_t peel_padded_task(const char *s, size_t n, fstate *st)
{
    size_t q = 0;
    int64_t v;
    while (q < n && q < 6 && s[q] == ' ')
        q++;
    size_t k = read_num(s, n, q, 6, &v);
    if (!k || !LIT(s, n, q + k, ": "))
        return 0;
    set_first(&st->task, v);
    return q + k + 2;
}

/* Bytes of a progress bar's count before its statistics: " 837/888 ",
 * " 1.2k/5.0k ", " 3/? ". */
static int bar_count_bytes(const char *s, size_t p, size_t e)
{
    for (size_t q = p; q < e; q++)
        if (!is_alnum(s[q]) && s[q] != ' ' && s[q] != '/' && s[q] != '.' && s[q] != '?')
            return 0;
    return 1;
}

/* A tqdm progress bar with the next output glued to it: tqdm redraws its
 * line with '\r' and no '\n', so whatever a process prints next lands
 * right after the bar ("Desc:  94%|█████▉  | 837/888 [9:42:50<34:08,
 * 40.17s/it][rank7]:[E ...] ..."). The bar is peeled so that the glued
 * line's own prefixes (rank, time) are read; a bar with nothing after it
 * stays the line's text, for the progress rules. */
static size_t peel_progress_bar(const char *s, size_t n, size_t p)
{
    size_t lim = n - p > BAR_DESC_MAX ? p + BAR_DESC_MAX : n;
    const char *pct = find_bytes(s + p, lim - p, "%|", 2);
    if (!pct)
        return 0;
    size_t q = (size_t)(pct - s), d = q;
    while (d > p && q - d < 3 && is_digit(s[d - 1]))
        d--;
    if (d == q || memchr(s + p, '[', d - p))   /* a description holds no prefix */
        return 0;
    size_t b = q + 2, blim = n - b > BAR_MAX ? b + BAR_MAX : n;
    const char *bar_end = memchr(s + b, '|', blim - b);
    if (!bar_end)
        return 0;
    size_t c = (size_t)(bar_end - s) + 1, slim = n - c > BAR_STATS_MAX ? c + BAR_STATS_MAX : n;
    const char *open = memchr(s + c, '[', slim - c);
    if (!open || !bar_count_bytes(s, c, (size_t)(open - s)))
        return 0;
    size_t o = (size_t)(open - s);
    const char *close = memchr(s + o, ']', slim - o);
    /* the statistics are "elapsed<remaining, rate" */
    if (!close || !memchr(s + o, '<', (size_t)(close - open)))
        return 0;
    size_t e = (size_t)(close - s) + 1;
    return e < n ? e - p : 0;
}

/* "... rank 2 | ..." ending right before the '|' at b, within [p, b). */
static int rank_before_bar(const char *s, size_t p, size_t b, int64_t *v)
{
    size_t d = b;
    if (d < p + 7 || s[d - 1] != ' ')
        return 0;
    d--;
    size_t e = d;
    while (d > p && e - d < 9 && is_digit(s[d - 1]))
        d--;
    /* a word of its own: not "prank 2 |", nor "local_rank 2 |" */
    if (d == e || d < p + 5 || !eq_nocase(s + d - 5, 4, "rank") || s[d - 1] != ' ' ||
        (d > p + 5 && (is_alnum(s[d - 6]) || s[d - 6] == '_')))
        return 0;
    return read_num(s, e, d, 9, v) == e - d;
}

/* "rank=3" as a field of the logging header (not "local_rank=3", and not
 * inside a message's parentheses): weaker than a bracketed tag. Only the
 * first HEADER_FIELD_SCAN bytes of the body count as header. */
enum { HEADER_FIELD_SCAN = 48 };

static void rank_assignment(const char *s, size_t p, size_t end, fstate *st)
{
    if (end > p + HEADER_FIELD_SCAN)
        end = p + HEADER_FIELD_SCAN;
    const char *paren = memchr(s + p, '(', end - p);
    if (paren)
        end = (size_t)(paren - s);
    for (size_t q = p; q + 6 <= end; q++) {
        const char *r = memchr(s + q, '=', end - q);
        if (!r)
            return;
        q = (size_t)(r - s);
        int64_t v;
        if (q >= p + 4 && eq_nocase(s + q - 4, 4, "rank") && (q == p + 4 || (!is_alnum(s[q - 5]) && s[q - 5] != '_')) &&
            read_num(s, end, q + 1, 9, &v) > 0) {
            set_rank(st, v, 2);
            return;
        }
    }
}

/* "rank 2: data shard ... not found" opening the message: training code
 * that logs its rank in the text (f"rank {rank}: ...") and PyTorch's own
 * "Rank 1: Completed store-based barrier" both name the printing process.
 * Only at the message's start and with the colon: "rank 3 received ..."
 * may speak of another rank. Weak, as a header's "rank=3". */
static void rank_opening_message(const char *s, size_t p, size_t end, fstate *st)
{
    while (p < end && s[p] == ' ')
        p++;
    if (end - p < 6 || !eq_nocase(s + p, 4, "rank"))
        return;
    size_t q = p + 4;
    if (s[q] == ' ')
        q++;
    int64_t v;
    size_t k = read_num(s, end, q, 9, &v);
    if (k && q + k < end && s[q + k] == ':')
        set_rank(st, v, 2);
}

/* Whether "rank", in any case, starts at one of s[i, i + count); the
 * bytes through s[i + count + 2] exist. */
static int rank_word_among(const char *s, size_t i, size_t count)
{
    for (size_t k = i; k < i + count; k++)
        if (eq_nocase(s + k, 4, "rank"))
            return 1;
    return 0;
}

/* Whether some j in [0, RANK_BLOCK) has 'r' or 'R' at s[j] and 'k' or 'K'
 * at s[j + 3], as "rank" does: few places in text do, so the exact test
 * after it runs rarely. The bytes through s[RANK_BLOCK + 2] exist. OR-ing
 * 0x20 folds the case of exactly these letters and maps no other byte onto
 * them. */
#if defined(__SSE2__) && defined(__x86_64__)
enum { RANK_BLOCK = 16 };

static int maybe_rank_in_block(const char *s)
{
    const __m128i fold = _mm_set1_epi8(0x20);
    __m128i r = _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)s), fold);
    __m128i k = _mm_or_si128(_mm_loadu_si128((const __m128i *)(const void *)(s + 3)), fold);
    __m128i both = _mm_and_si128(_mm_cmpeq_epi8(r, _mm_set1_epi8('r')),
                                 _mm_cmpeq_epi8(k, _mm_set1_epi8('k')));
    return _mm_movemask_epi8(both) != 0;
}
#else
enum { RANK_BLOCK = 8 };

/* The high bit of each zero byte of w, and no other bit. */
static uint64_t zero_bytes(uint64_t w)
{
    const uint64_t low7 = 0x7f7f7f7f7f7f7f7fu;
    return ~(((w & low7) + low7) | w) & ~low7;
}

static int maybe_rank_in_block(const char *s)
{
    const uint64_t ones = 0x0101010101010101u;
    uint64_t r, k;
    memcpy(&r, s, 8);
    memcpy(&k, s + 3, 8);
    uint64_t r_at = zero_bytes((r | ones * 0x20) ^ ones * 'r');
    uint64_t k_at = zero_bytes((k | ones * 0x20) ^ ones * 'k');
    return (r_at & k_at) != 0;
}
#endif

/* Whether "rank", in any case, lies within s[from, to). Every body rank
 * tag spells the word and most lines have none: one pass over the bytes,
 * RANK_BLOCK starts at a time, spares those lines a pass per recogniser.
 * The last block is moved back to end at `to`, so it may look at some
 * starts twice. */
static int has_rank_word(const char *s, size_t from, size_t to)
{
    const size_t span_bytes = RANK_BLOCK + 3;
    if (to - from < span_bytes)
        return to - from >= 4 && rank_word_among(s, from, to - from - 3);
    size_t last = to - span_bytes;
    for (size_t i = from;; i += RANK_BLOCK) {
        if (i > last)
            i = last;
        if (maybe_rank_in_block(s + i) && rank_word_among(s, i, RANK_BLOCK))
            return 1;
        if (i == last)
            return 0;
    }
}

/* Rank tags in the first BODY_SCAN bytes of the message: "[Rank 3]",
 * "[PG ... Rank 1]", "[rank 1/4]", "rank 2 |", "rank=3". */
static void scan_body_tags(const char *s, size_t n, size_t p, fstate *st)
{
    size_t end = n - p > BODY_SCAN ? p + BODY_SCAN : n;
    /* every tag spells "rank": "rank=3" and "rank 2 |" before `end`, a
     * "[Rank 3]" or "[PG ... Rank 1]" that opens before it within TOKEN_MAX */
    size_t reach = n - end > TOKEN_MAX ? end + TOKEN_MAX : n;
    if (!has_rank_word(s, p, reach))
        return;
    rank_assignment(s, p, end, st);
    rank_opening_message(s, p, end, st);
    for (const char *b = memchr(s + p, '|', end - p); b; ) {
        int64_t v;
        size_t q = (size_t)(b - s);
        if (rank_before_bar(s, p, q, &v)) {
            set_rank(st, v, 1);
            return;
        }
        b = q + 1 < end ? memchr(b + 1, '|', end - q - 1) : NULL;
    }
    for (size_t q = p; q < end; q++) {
        const char *b = memchr(s + q, '[', end - q);
        if (!b)
            return;
        q = (size_t)(b - s);
        int64_t v;
        int prio = 1;
        size_t k = parse_rank_tag(s, n, q, &v);
        if (!k)
            k = parse_pg_tag(s, n, q, &v, &prio);
        if (k) {
            set_rank(st, v, prio);
            if (st->rank_prio == 1)
                return;
        }
    }
}

size_t cp_frame_parse(const char *line, size_t len, cp_origin *out)
{
    fstate st;
    size_t n = len, p = 0;
    if (!line)
        return 0;
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    memset(&st, 0, sizeof st);
    st.rank = st.local_rank = st.pid = st.task = st.cuda_dev = -1;
    st.launcher = 1;
    for (int k = 0; k < MAX_PEELS && p < n; k++) {
        char c = line[p];
        size_t r = 0;
        if (c == '[')
            r = peel_bracket(line, n, p, &st);
        else if (is_alnum(c))
            r = peel_word(line, n, p, &st);
        else if (c == ' ' && p == 0)
            r = peel_padded_task(line, n, &st);
        if (r == 0 && (c == ' ' || is_alnum(c)))
            r = peel_progress_bar(line, n, p);
        if (r == 0)
            break;
        p += r;
    }
    if (st.rank_prio != 1 && p < n)
        scan_body_tags(line, n, p, &st);
    if (!out)
        return p;
    if (st.rank >= 0)
        out->rank = st.rank;
    if (st.local_rank >= 0)
        out->local_rank = st.local_rank;
    if (st.pid >= 0)
        out->pid = st.pid;
    if (st.task >= 0)
        out->task = st.task;
    if (st.cuda_dev >= 0)
        out->cuda_dev = st.cuda_dev;
    if (st.time.kind != CP_TS_NONE)
        out->time = st.time;
    if (st.level)
        out->level = st.level;
    if (st.host_len) {
        memcpy(out->host, st.host, st.host_len);
        out->host[st.host_len] = '\0';
    }
    return p;
}

