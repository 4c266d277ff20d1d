/* redact.c - secrets and identities out of every printed string.
 *
 * Each string passes through the secret patterns in order, each rewriting
 * the output of the one before; a pattern replaces its first capture
 * group that took part in the match (the value of "token=VALUE"), or the
 * whole match when it has no group. Anonymizing first replaces the host
 * and user names already known (host fields, home paths) as whole words,
 * then emails, host names, IPv6 and IPv4 addresses found by pattern.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "redact.h"

#include <pcre2.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/strutil.h"

#define REDACTED "[redacted]"

typedef enum alias_kind { A_HOST, A_IP, A_EMAIL, A_USER, A_COUNT } alias_kind;

static const char *const alias_prefix[A_COUNT] = {"host", "ip", "email", "user"};

typedef enum repl { R_SECRET, R_HOST, R_IP4, R_IP6, R_EMAIL } repl;

typedef struct pattern {
    const char *re;
    repl kind;
    bool group;    /* replace the first capture group that matched */
} pattern;

/* A value after "key=" / "key: " / "\"key\": ": quoted, or up to a separator. */
#define VALUE "(?:\"((?:[^\"\\\\]|\\\\.)+)\"|'([^']+)'|([^\\s\"',;&)}\\]]+))"
#define ASSIGN "[\"']?\\s*[:=]\\s*"

static const pattern secret_patterns[] = {
    /* a private key block, or what is left of one on this line */
    {"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\\z)",
     R_SECRET, false},
    /* scheme://user:pass@host */
    {"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://([^/\\s@\"'<>]+)@", R_SECRET, true},
    {"(?i)\\bbearer\\s+([A-Za-z0-9._~+/=-]{8,})", R_SECRET, true},
    {"(?i)\\b(?:proxy-)?authorization" ASSIGN "(?:(?:basic|bearer|token|digest)\\s+)?" VALUE, R_SECRET, true},
    /* the key is the first argument after options (and a --host URL) */
    {"(?i)\\bwandb\\s+login(?:\\s+-\\S+(?:\\s+https?://\\S+)?)*\\s+([0-9a-f]{40})(?![0-9a-z])", R_SECRET, true},
    /* HF_TOKEN=, WANDB_API_KEY=, AWS_SECRET_ACCESS_KEY=, DB_PASSWORD= ... */
    {"\\b[A-Z][A-Z0-9_]*_(?:TOKEN|API_?KEY|SECRET|SECRET_KEY|SECRET_ACCESS_KEY|ACCESS_KEY|PASSWORD|PASSWD)"
     ASSIGN VALUE, R_SECRET, true},
    /* password=, token: , "api_key": "..." (not pad_token=, which is a tokenizer's) */
    {"(?i)(?<![\\w-])(?:password|passwd|token|access[_-]?token|auth[_-]?token|refresh[_-]?token|secret|"
     "client[_-]?secret|secret[_-]?key|api[_-]?key|apikey|private[_-]?key|aws_secret_access_key)" ASSIGN VALUE,
     R_SECRET, true},
    /* --token X, --hf-token=X, --password X */
    {"(?i)(?<![\\w-])--(?:[a-z0-9]+[-_])*(?:token|password|passwd|secret|api[-_]?key)(?:=|\\s+)([^\\s\"']+)",
     R_SECRET, true},
    {"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}", R_SECRET, false},
    {"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})", R_SECRET, false},
    {"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])", R_SECRET, false},
};

static const pattern anon_patterns[] = {
    {"(?<![\\w.+%-])[A-Za-z0-9._%+-]+@(?:[A-Za-z0-9-]+\\.)+[A-Za-z]{2,}(?![\\w-])", R_EMAIL, false},
    {"(?<![\\w.-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+"
     "(?:com|net|org|io|ai|edu|gov|internal|local|localdomain|lan|cluster|corp|cloud|intra|private|compute)"
     "(?![\\w-])", R_HOST, false},
    /* AWS-style host names that spell an address: ip-10-1-2-3 */
    {"(?<![\\w-])ip-\\d{1,3}-\\d{1,3}-\\d{1,3}-\\d{1,3}(?![\\w-])", R_HOST, false},
    /* the usual cluster names: node017, gpu-node-3, compute-2-14, nid001234, dgx07 */
    {"(?i)(?<![\\w.-])(?:[a-z][a-z0-9]*-)*(?:node|host|worker|compute|dgx|nid|cn|hpc|server)[-_]?\\d+"
     "(?:-[a-z0-9]+)*(?![\\w-])", R_HOST, false},
    {"(?<![\\w:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\\w:])", R_IP6, false},
    {"(?<![\\w.])(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)"
     "(?:\\.(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}(?![\\w]|\\.\\d)", R_IP4, false},
};

/* user names: /home/NAME, /Users/NAME, USER=NAME */
static const char user_re[] =
    "(?:(?<![\\w.-])/(?:home|Users)/([A-Za-z0-9][A-Za-z0-9._-]*)"
    "|\\b(?:USER|LOGNAME|SLURM_JOB_USER)=([A-Za-z0-9][A-Za-z0-9._-]*))";

#define N_SECRET (sizeof secret_patterns / sizeof secret_patterns[0])
#define N_ANON (sizeof anon_patterns / sizeof anon_patterns[0])

static pcre2_code *secret_code[N_SECRET], *anon_code[N_ANON], *user_code;
static bool compiled_ok;
static pthread_once_t compile_once = PTHREAD_ONCE_INIT;

static pcre2_code *compile(const char *re)
{
    int err;
    PCRE2_SIZE off;
    pcre2_code *p = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &err, &off, NULL);
    if (!p) {
        char msg[256];
        pcre2_get_error_message(err, (PCRE2_UCHAR *)msg, sizeof msg);
        fprintf(stderr, "culprit: redaction pattern at %zu: %s: %s\n", (size_t)off, msg, re);
        return NULL;
    }
    /* Interpreted, not JIT-compiled: the JIT took 2.2 M instructions for
     * these 25 patterns, 15% of a small diagnosis, and the strings they
     * then run over (a report's evidence, even at 4,096 ranks) are too
     * few for the JIT's faster matching to pay that back. */
    return p;
}

static void compile_all(void)
{
    bool ok = (user_code = compile(user_re)) != NULL;
    for (size_t i = 0; i < N_SECRET; i++)
        ok &= (secret_code[i] = compile(secret_patterns[i].re)) != NULL;
    for (size_t i = 0; i < N_ANON; i++)
        ok &= (anon_code[i] = compile(anon_patterns[i].re)) != NULL;
    compiled_ok = ok;
}

/* ---- aliases -------------------------------------------------------------- */

typedef struct alias {
    char *orig;
    char *name;     /* "host-3" */
    alias_kind kind;
    bool word;      /* replaced wherever it appears as a whole word */
    size_t next;    /* the next word alias with the same first byte, or SIZE_MAX */
} alias;

struct cp_redactor {
    unsigned flags;
    alias *a;
    size_t n, cap;
    size_t count[A_COUNT];
    size_t first[256];  /* word aliases by first byte: thousands of hosts stay cheap */
    pcre2_match_data *md;
};

static const alias *find_alias(const cp_redactor *r, const char *s, size_t len)
{
    for (size_t i = 0; i < r->n; i++)
        if (strlen(r->a[i].orig) == len && memcmp(r->a[i].orig, s, len) == 0)
            return &r->a[i];
    return NULL;
}

static const alias *add_alias(cp_redactor *r, alias_kind kind, const char *s, size_t len, const char *name, bool word)
{
    const alias *old = find_alias(r, s, len);
    if (old)
        return old;
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        alias *p = realloc(r->a, cap * sizeof *p);
        if (!p)
            return NULL;
        r->a = p;
        r->cap = cap;
    }
    char buf[48];
    if (!name) {
        snprintf(buf, sizeof buf, "%s-%zu", alias_prefix[kind], ++r->count[kind]);
        name = buf;
    }
    alias *al = &r->a[r->n];
    al->orig = cp_strndup(s, len);
    al->name = cp_strdup(name);
    al->kind = kind;
    al->word = word;
    if (!al->orig || !al->name) {
        free(al->orig);
        free(al->name);
        return NULL;
    }
    if (word) {
        unsigned char c = (unsigned char)al->orig[0];
        al->next = r->first[c];
        r->first[c] = r->n;
    }
    r->n++;
    return al;
}

static bool is_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool is_ipv4(const char *s)
{
    unsigned a, b, c, d;
    char tail;
    return sscanf(s, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a < 256 && b < 256 && c < 256 && d < 256;
}

int cp_redactor_know_host(cp_redactor *r, const char *host)
{
    size_t len = host ? strlen(host) : 0;
    if (!(r->flags & CP_REDACT_ANONYMIZE) || len < 2)
        return 0;
    if (is_ipv4(host))
        return 0; /* the address patterns number it */
    const alias *al = add_alias(r, A_HOST, host, len, NULL, true);
    if (!al)
        return -1;
    /* node017.cluster.local also appears as node017 */
    const char *dot = strchr(host, '.');
    if (dot && dot - host >= 3 && !add_alias(r, A_HOST, host, (size_t)(dot - host), al->name, true))
        return -1;
    return 0;
}

int cp_redactor_learn(cp_redactor *r, const char *s)
{
    if (!(r->flags & CP_REDACT_ANONYMIZE) || !s)
        return 0;
    size_t len = strlen(s), start = 0;
    while (start < len) {
        int rc = pcre2_match(user_code, (PCRE2_SPTR)s, len, start, 0, r->md, NULL);
        if (rc < 0)
            break;
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
        for (int g = 1; g < rc; g++)
            if (ov[2 * g] != PCRE2_UNSET && ov[2 * g + 1] > ov[2 * g]) {
                const char *u = s + ov[2 * g];
                size_t ulen = ov[2 * g + 1] - ov[2 * g];
                /* "/home/user-1" is already an alias */
                if (!cp_starts_with(u, "user-") && !add_alias(r, A_USER, u, ulen, NULL, true))
                    return -1;
                break;
            }
        start = ov[1] > ov[0] ? ov[1] : ov[1] + 1;
    }
    return 0;
}

/* ---- rewriting ------------------------------------------------------------ */

/* Loopback and unspecified addresses identify nobody and tell a reader
 * something ("connect to 127.0.0.1" on a multi-node job is the bug). */
static bool keep_ip4(const char *s, size_t len)
{
    return (len >= 4 && memcmp(s, "127.", 4) == 0) || (len == 7 && memcmp(s, "0.0.0.0", 7) == 0);
}

/* The IPv6 pattern also matches times and C++ scopes; an address has
 * "::" or eight groups, at least two groups with digits, and is not "::1". */
static bool looks_ip6(const char *s, size_t len)
{
    size_t colons = 0, groups = 0;
    bool in_group = false, dbl = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ':') {
            colons++;
            dbl |= i + 1 < len && s[i + 1] == ':';
            in_group = false;
        } else if (!in_group) {
            in_group = true;
            groups++;
        }
    }
    if (len == 3 && memcmp(s, "::1", 3) == 0)
        return false;
    return groups >= 2 && (dbl || colons == 7) && s[len - 1] != ':';
}

/* "host-3" is already an alias (and looks like a cluster host name). */
static bool is_alias(const char *s, size_t len)
{
    for (int k = 0; k < A_COUNT; k++) {
        size_t p = strlen(alias_prefix[k]);
        if (len > p + 1 && memcmp(s, alias_prefix[k], p) == 0 && s[p] == '-') {
            size_t i = p + 1;
            while (i < len && s[i] >= '0' && s[i] <= '9')
                i++;
            if (i == len)
                return true;
        }
    }
    return false;
}

static const char *replacement(cp_redactor *r, repl kind, const char *s, size_t len)
{
    const alias *al = NULL;
    if (kind != R_SECRET && is_alias(s, len))
        return NULL;
    switch (kind) {
    case R_SECRET:
        return REDACTED;
    case R_IP4:
        if (keep_ip4(s, len))
            return NULL;
        al = add_alias(r, A_IP, s, len, NULL, false);
        break;
    case R_IP6:
        if (!looks_ip6(s, len))
            return NULL;
        al = add_alias(r, A_IP, s, len, NULL, false);
        break;
    case R_EMAIL:
        al = add_alias(r, A_EMAIL, s, len, NULL, false);
        break;
    case R_HOST: {
        /* the same host may already be known by its short name */
        const char *dot = memchr(s, '.', len);
        const alias *shortname = dot ? find_alias(r, s, (size_t)(dot - s)) : NULL;
        al = add_alias(r, A_HOST, s, len, shortname && shortname->kind == A_HOST ? shortname->name : NULL, false);
        break;
    }
    }
    return al ? al->name : REDACTED; /* out of memory: never print the original */
}

/* One pattern over s; returns a new string or NULL (out of memory). */
static char *apply(cp_redactor *r, const pcre2_code *re, const pattern *p, const char *s)
{
    size_t len = strlen(s), start = 0, copied = 0;
    cp_buf b;
    cp_buf_init(&b, 0);
    int err = 0;
    while (start <= len) {
        int rc = pcre2_match(re, (PCRE2_SPTR)s, len, start, 0, r->md, NULL);
        if (rc < 0)
            break; /* no match, or a resource limit: keep the rest as it is */
        const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
        size_t a = ov[0], e = ov[1], z = ov[1];
        if (p->group) {
            a = z = e;
            for (int g = 1; g < rc; g++)
                if (ov[2 * g] != PCRE2_UNSET) {
                    a = ov[2 * g];
                    z = ov[2 * g + 1];
                    break;
                }
        }
        if (z > a && !cp_starts_with(s + a, REDACTED)) {
            const char *rep = replacement(r, p->kind, s + a, z - a);
            if (rep) {
                err |= cp_buf_append(&b, s + copied, a - copied);
                err |= cp_buf_puts(&b, rep);
                copied = z;
            }
        }
        start = e > ov[0] ? e : e + 1;
    }
    err |= cp_buf_append(&b, s + copied, len - copied);
    if (err) {
        cp_buf_free(&b);
        return NULL;
    }
    return cp_buf_take(&b);
}

/* All address patterns in one left-to-right pass, so that aliases are
 * numbered in order of appearance; where two match at the same place, the
 * earlier pattern wins. */
static char *apply_anon(cp_redactor *r, const char *s)
{
    size_t len = strlen(s), pos = 0, copied = 0;
    size_t at[N_ANON], end[N_ANON]; /* each pattern's next match at or after pos */
    bool have[N_ANON] = {false}, live[N_ANON];
    cp_buf b;
    cp_buf_init(&b, 0);
    int err = 0;
    for (size_t i = 0; i < N_ANON; i++)
        live[i] = true;
    while (pos <= len) {
        size_t best = N_ANON;
        for (size_t i = 0; i < N_ANON; i++) {
            if (live[i] && (!have[i] || at[i] < pos)) {
                if (pcre2_match(anon_code[i], (PCRE2_SPTR)s, len, pos, 0, r->md, NULL) < 0) {
                    live[i] = false;
                    continue;
                }
                const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(r->md);
                at[i] = ov[0];
                end[i] = ov[1];
                have[i] = true;
            }
            if (live[i] && (best == N_ANON || at[i] < at[best]))
                best = i;
        }
        if (best == N_ANON)
            break;
        size_t a = at[best], z = end[best];
        const char *rep = z > a ? replacement(r, anon_patterns[best].kind, s + a, z - a) : NULL;
        if (rep) {
            err |= cp_buf_append(&b, s + copied, a - copied);
            err |= cp_buf_puts(&b, rep);
            copied = pos = z;
        } else {
            pos = a + 1; /* rejected (a time, a C++ scope): look further on */
        }
    }
    err |= cp_buf_append(&b, s + copied, len - copied);
    if (err) {
        cp_buf_free(&b);
        return NULL;
    }
    return cp_buf_take(&b);
}

/* Known host and user names, as whole words, longest first. */
static char *replace_words(cp_redactor *r, const char *s)
{
    cp_buf b;
    cp_buf_init(&b, 0);
    int err = 0;
    size_t len = strlen(s), i = 0, copied = 0;
    while (i < len) {
        const alias *best = NULL;
        size_t best_len = 0;
        if (i == 0 || !is_alnum(s[i - 1]))
            for (size_t k = r->first[(unsigned char)s[i]]; k != SIZE_MAX; k = r->a[k].next) {
                const alias *al = &r->a[k];
                size_t l = strlen(al->orig);
                if (l > best_len && l <= len - i && memcmp(s + i, al->orig, l) == 0 && !is_alnum(s[i + l])) {
                    best = al;
                    best_len = l;
                }
            }
        if (best) {
            err |= cp_buf_append(&b, s + copied, i - copied);
            err |= cp_buf_puts(&b, best->name);
            i += best_len;
            copied = i;
        } else {
            i++;
        }
    }
    err |= cp_buf_append(&b, s + copied, len - copied);
    if (err) {
        cp_buf_free(&b);
        return NULL;
    }
    return cp_buf_take(&b);
}

/* Evidence lines are cut for display ("...") before they get here, and a
 * cut can leave a secret too short to recognise: "hf_AbC...". The last
 * word before the cut goes too when it could be one (digits and letters,
 * or a value after '=' or ':'). */
static void redact_cut_tail(char **s)
{
    size_t len = strlen(*s);
    if (len < 3 || strcmp(*s + len - 3, "...") != 0)
        return;
    size_t end = len - 3, k = end;
    while (k > 0 && !strchr(" \t\"'`<>()[]{},;=:", (*s)[k - 1]))
        k--;
    bool digit = false, alpha = false;
    for (size_t i = k; i < end; i++) {
        digit |= (*s)[i] >= '0' && (*s)[i] <= '9';
        alpha |= is_alnum((*s)[i]) && !((*s)[i] >= '0' && (*s)[i] <= '9');
    }
    bool value = k > 0 && ((*s)[k - 1] == '=' || (*s)[k - 1] == ':');
    if (end - k < 4 || !(value || (digit && alpha)) || cp_starts_with(*s + k, REDACTED))
        return;
    char *out = malloc(k + sizeof REDACTED + 3);
    if (!out)
        return;
    memcpy(out, *s, k);
    memcpy(out + k, REDACTED "...", sizeof REDACTED + 3);
    free(*s);
    *s = out;
}

static char *step(char *cur, char *next)
{
    free(cur);
    return next;
}

char *cp_redact(cp_redactor *r, const char *s)
{
    if (!s)
        return NULL;
    char *cur = cp_strdup(s);
    if (r->flags & CP_REDACT_SECRETS)
        for (size_t i = 0; i < N_SECRET && cur; i++)
            cur = step(cur, apply(r, secret_code[i], &secret_patterns[i], cur));
    if (cur && (r->flags & CP_REDACT_SECRETS))
        redact_cut_tail(&cur);
    if (r->flags & CP_REDACT_ANONYMIZE) {
        if (cur && r->n)
            cur = step(cur, replace_words(r, cur));
        if (cur)
            cur = step(cur, apply_anon(r, cur));
    }
    return cur;
}

void cp_redact_host(cp_redactor *r, char *host, size_t n)
{
    if (!host[0])
        return;
    const alias *al = (r->flags & CP_REDACT_ANONYMIZE) ? find_alias(r, host, strlen(host)) : NULL;
    char *red = al ? NULL : cp_redact(r, host);
    snprintf(host, n, "%s", al ? al->name : red ? red : REDACTED);
    free(red);
}

int cp_redactor_new(cp_redactor **out, unsigned flags)
{
    *out = NULL;
    pthread_once(&compile_once, compile_all);
    if (!compiled_ok)
        return -1;
    cp_redactor *r = calloc(1, sizeof *r);
    if (!r)
        return -1;
    r->flags = flags;
    for (size_t i = 0; i < 256; i++)
        r->first[i] = SIZE_MAX;
    r->md = pcre2_match_data_create(16, NULL);
    if (!r->md) {
        free(r);
        return -1;
    }
    *out = r;
    return 0;
}

void cp_redactor_free(cp_redactor *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->a[i].orig);
        free(r->a[i].name);
    }
    free(r->a);
    pcre2_match_data_free(r->md);
    free(r);
}

/* ---- a whole diagnosis ---------------------------------------------------- */

static int redact_list(cp_redactor *r, char ***out, size_t *n_out, char *const *v, size_t n)
{
    *out = NULL;
    *n_out = 0;
    if (!n)
        return 0;
    if (!(*out = calloc(n, sizeof **out)))
        return -1;
    *n_out = n;
    for (size_t i = 0; i < n; i++)
        if (v[i] && !((*out)[i] = cp_redact(r, v[i])))
            return -1;
    return 0;
}

static void learn_all(cp_redactor *r, const cp_diagnosis *d)
{
    cp_redactor_know_host(r, d->host);
    for (size_t i = 0; i < d->n_ranks; i++)
        cp_redactor_know_host(r, d->ranks[i].host);
    for (size_t i = 0; i < d->n_drain; i++)
        cp_redactor_know_host(r, d->drain[i].host);
    const char *fields[] = {d->title, d->signature, d->means, d->action, d->confidence_reason};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        cp_redactor_learn(r, fields[i]);
    for (size_t i = 0; i < d->n_evidence; i++) {
        cp_redactor_learn(r, d->evidence[i].path);
        cp_redactor_learn(r, d->evidence[i].text);
    }
    for (size_t i = 0; i < d->n_notes; i++)
        cp_redactor_learn(r, d->notes[i]);
    for (size_t i = 0; i < d->n_warnings; i++)
        cp_redactor_learn(r, d->warnings[i]);
}

static int redact_all(cp_redactor *r, cp_diagnosis *o, const cp_diagnosis *d)
{
    char **fields[] = {&o->rule_id, &o->title, &o->means, &o->action, &o->signature, &o->first_time,
                       &o->confidence_reason};
    const char *src[] = {d->rule_id, d->title, d->means, d->action, d->signature, d->first_time,
                         d->confidence_reason};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (src[i] && !(*fields[i] = cp_redact(r, src[i])))
            return -1;
    cp_redact_host(r, o->host, sizeof o->host);
    if (redact_list(r, &o->notes, &o->n_notes, d->notes, d->n_notes) != 0 ||
        redact_list(r, &o->warnings, &o->n_warnings, d->warnings, d->n_warnings) != 0)
        return -1;
    if (d->n_evidence) {
        if (!(o->evidence = calloc(d->n_evidence, sizeof *o->evidence)))
            return -1;
        o->n_evidence = d->n_evidence;
        for (size_t i = 0; i < d->n_evidence; i++) {
            o->evidence[i] = d->evidence[i];
            o->evidence[i].path = o->evidence[i].text = NULL;
            o->evidence[i].path = cp_redact(r, d->evidence[i].path);
            o->evidence[i].text = cp_redact(r, d->evidence[i].text);
            if ((d->evidence[i].path && !o->evidence[i].path) || (d->evidence[i].text && !o->evidence[i].text))
                return -1;
        }
    }
    if (d->n_ranks) {
        if (!(o->ranks = calloc(d->n_ranks, sizeof *o->ranks)))
            return -1;
        o->n_ranks = d->n_ranks;
        for (size_t i = 0; i < d->n_ranks; i++) {
            cp_rank_row *row = &o->ranks[i];
            *row = d->ranks[i];
            row->first_error = row->last_time = NULL;
            cp_redact_host(r, row->host, sizeof row->host);
            row->first_error = cp_redact(r, d->ranks[i].first_error);
            row->last_time = cp_redact(r, d->ranks[i].last_time);
            if ((d->ranks[i].first_error && !row->first_error) || (d->ranks[i].last_time && !row->last_time))
                return -1;
        }
    }
    if (d->n_drain) {
        if (!(o->drain = calloc(d->n_drain, sizeof *o->drain)))
            return -1;
        o->n_drain = d->n_drain;
        for (size_t i = 0; i < d->n_drain; i++) {
            cp_drain_host *h = &o->drain[i];
            *h = d->drain[i];
            h->gpus = NULL;
            h->reason = h->command = NULL;
            cp_redact_host(r, h->host, sizeof h->host);
            if (d->drain[i].n_gpus) {
                if (!(h->gpus = malloc(d->drain[i].n_gpus * sizeof *h->gpus)))
                    return -1;
                memcpy(h->gpus, d->drain[i].gpus, d->drain[i].n_gpus * sizeof *h->gpus);
            }
            h->reason = cp_redact(r, d->drain[i].reason);
            h->command = cp_redact(r, d->drain[i].command);
            if ((d->drain[i].reason && !h->reason) || (d->drain[i].command && !h->command))
                return -1;
        }
    }
    return 0;
}

/* Frees exactly what cp_redact_diagnosis made; what it shares with the
 * original (the checkpoint report) stays. Not cp_diagnosis_free: a field
 * added to the diagnosis later must not be freed twice. */
void cp_redacted_free(cp_diagnosis *o)
{
    char *fields[] = {o->rule_id, o->title, o->means, o->action, o->signature, o->first_time,
                      o->confidence_reason};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        free(fields[i]);
    for (size_t i = 0; i < o->n_notes; i++)
        free(o->notes[i]);
    free(o->notes);
    for (size_t i = 0; i < o->n_warnings; i++)
        free(o->warnings[i]);
    free(o->warnings);
    for (size_t i = 0; i < o->n_evidence; i++) {
        free(o->evidence[i].path);
        free(o->evidence[i].text);
    }
    free(o->evidence);
    for (size_t i = 0; i < o->n_ranks; i++) {
        free(o->ranks[i].first_error);
        free(o->ranks[i].last_time);
    }
    free(o->ranks);
    for (size_t i = 0; i < o->n_drain; i++) {
        free(o->drain[i].gpus);
        free(o->drain[i].reason);
        free(o->drain[i].command);
    }
    free(o->drain);
    memset(o, 0, sizeof *o);
}

int cp_redact_diagnosis(cp_diagnosis *out, const cp_diagnosis *d, unsigned flags)
{
    memset(out, 0, sizeof *out);
    cp_redactor *r = NULL;
    if (cp_redactor_new(&r, flags) != 0)
        return -1;
    /* the scalars; every pointer is replaced below */
    *out = *d;
    out->rule_id = out->title = out->means = out->action = out->signature = NULL;
    out->first_time = out->confidence_reason = NULL;
    out->notes = out->warnings = NULL;
    out->evidence = NULL;
    out->ranks = NULL;
    out->drain = NULL;
    out->n_notes = out->n_warnings = out->n_evidence = out->n_ranks = out->n_drain = 0;
    learn_all(r, d);
    int rc = redact_all(r, out, d);
    cp_redactor_free(r);
    if (rc != 0)
        cp_redacted_free(out);
    return rc;
}
