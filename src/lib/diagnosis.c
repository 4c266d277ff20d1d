/* diagnosis.c - the diagnosis object: notes, times, freeing. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt.h"
#include "facts.h"
#include "util/timeutil.h"

void cp_diag_note(cp_diagnosis *d, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **p = realloc(d->notes, (d->n_notes + 1) * sizeof *p);
    if (!p)
        return;
    d->notes = p;
    if ((p[d->n_notes] = cp_strdup(buf)))
        d->n_notes++;
}

char *cp_format_time(const cp_incident *inc, const cp_time *t)
{
    if (!timed(t))
        return NULL;
    char buf[40];
    cp_format_ms(t->ms, buf, sizeof buf);
    /* "1970-11-22 ..." would be a lie: drop the guessed year */
    return cp_strdup(inc->year_known ? buf : buf + 5);
}

const char *cp_rank_state_name(cp_rank_state s)
{
    static const char *const names[CP_RS_COUNT] = {
        "ok", "root", "error", "cascade", "killed", "exited", "silent",
    };
    return s < CP_RS_COUNT ? names[s] : "unknown";
}

void cp_diagnosis_free(cp_diagnosis *d)
{
    if (!d)
        return;
    free(d->rule_id);
    free(d->title);
    free(d->means);
    free(d->action);
    free(d->signature);
    free(d->first_time);
    free(d->confidence_reason);
    for (size_t i = 0; i < d->n_notes; i++)
        free(d->notes[i]);
    free(d->notes);
    for (size_t i = 0; i < d->n_evidence; i++) {
        free(d->evidence[i].path);
        free(d->evidence[i].text);
    }
    free(d->evidence);
    for (size_t i = 0; i < d->n_ranks; i++) {
        free(d->ranks[i].first_error);
        free(d->ranks[i].last_time);
    }
    free(d->ranks);
    for (size_t i = 0; i < d->n_warnings; i++)
        free(d->warnings[i]);
    free(d->warnings);
    cp_ckpt_report_free(d->ckpt);
    for (size_t i = 0; i < d->n_drain; i++) {
        free(d->drain[i].gpus);
        free(d->drain[i].reason);
        free(d->drain[i].command);
    }
    free(d->drain);
    memset(d, 0, sizeof *d);
}
