/* redact.h - secrets and identities out of every printed string.
 *
 * culprit_render hands each renderer a redacted copy of the diagnosis, so
 * no report (and no report added later) can print a string that did not
 * pass through here. Secrets (tokens, keys, passwords, credentials in
 * URLs, private keys) become "[redacted]"; with anonymizing, host names,
 * IP addresses, user names and emails become host-1, ip-1, user-1,
 * email-1, numbered in order of first appearance within one report.
 * The patterns are PCRE2, compiled once per process (thread-safe).
 */
#ifndef CULPRIT_REDACT_H
#define CULPRIT_REDACT_H

#include <stddef.h>

#include "diagnosis.h"

enum {
    CP_REDACT_SECRETS = 1 << 0,   /* the default */
    CP_REDACT_ANONYMIZE = 1 << 1, /* hosts, IPs, user names, emails */
};

typedef struct cp_redactor cp_redactor;

/* A redactor keeps the alias tables of one report. Returns 0 or -1 (out
 * of memory or the patterns do not compile). Caller frees *out. */
int cp_redactor_new(cp_redactor **out, unsigned flags);
void cp_redactor_free(cp_redactor *r);

/* Registers a host name or user name seen outside free text (a host
 * field), so that every later occurrence is replaced; numbering follows
 * the order of registration. No-op unless anonymizing. */
int cp_redactor_know_host(cp_redactor *r, const char *host);

/* Learns user names from home paths and USER= in `s` (anonymizing only),
 * so they are replaced wherever they appear. */
int cp_redactor_learn(cp_redactor *r, const char *s);

/* A redacted copy of s (caller frees), or NULL when out of memory.
 * s == NULL gives NULL. */
char *cp_redact(cp_redactor *r, const char *s);

/* Redacts a fixed-size host field in place (alias, or "[redacted]"). */
void cp_redact_host(cp_redactor *r, char *host, size_t n);

/* Fills *out (free with cp_redacted_free, not cp_diagnosis_free) with a
 * copy of d in which every string is redacted according to `flags`.
 * Returns 0, or -1 when out of memory (then *out is empty). A string field
 * added to cp_diagnosis must be added here too; until it is, the copy
 * shares it unredacted (the checkpoint report does, for now). */
int cp_redact_diagnosis(cp_diagnosis *out, const cp_diagnosis *d, unsigned flags);
void cp_redacted_free(cp_diagnosis *out);

#endif
