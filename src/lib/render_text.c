/* render_text.c - the report a person reads at 3 a.m.: the verdict in one
 * line, the first action, the evidence, then the ranks grouped so that
 * thousands of them stay readable. */
#include <string.h>

#include "ckpt.h"
#include "render.h"

enum { DEFAULT_EVIDENCE = 8, MAX_GROUPS = 12, MAX_RANGES = 8 };

typedef struct style {
    const char *bold, *red, *yellow, *dim, *reset;
} style;

static style style_for(const cp_render_opts *o)
{
    style s = {"", "", "", "", ""};
    if (o && o->color)
        s = (style){"\033[1m", "\033[1;31m", "\033[33m", "\033[2m", "\033[0m"};
    return s;
}

static void headline(const cp_diagnosis *d, FILE *out, const style *s)
{
    char who[160];
    cp_describe_rank(d, who, sizeof who);
    if (d->hang)
        fprintf(out, "%sculprit:%s %s%s stalled first%s: %s [%s]\n", s->bold, s->reset, s->red, who, s->reset,
                d->title ? d->title : "", cp_kind_name(d->kind));
    else
        fprintf(out, "%sculprit:%s %s%s failed first%s: %s [%s]\n", s->bold, s->reset, s->red, who, s->reset,
                d->title ? d->title : "", cp_kind_name(d->kind));
    fprintf(out, "  phase %s, owner %s, %s, confidence %d%%\n", cp_phase_name(d->phase), cp_owner_name(d->owner),
            d->hang ? "hang" : "no hang", d->confidence);
    if (d->first_time)
        fprintf(out, "  first failure at %s\n", d->first_time);
}

static void paragraph(FILE *out, const style *s, const char *title, const char *text)
{
    if (!text || !*text)
        return;
    fprintf(out, "\n%s%s%s\n  %s\n", s->bold, title, s->reset, text);
}

static void evidence(const cp_diagnosis *d, FILE *out, const style *s, int max)
{
    if (!d->n_evidence)
        return;
    fprintf(out, "\n%sEvidence%s\n", s->bold, s->reset);
    for (size_t i = 0; i < d->n_evidence && (int)i < max; i++) {
        const cp_evidence *e = &d->evidence[i];
        fprintf(out, "  %s%s:%llu%s", s->dim, e->path, (unsigned long long)e->line, s->reset);
        if (e->rank >= 0)
            fprintf(out, " [rank %d]", e->rank);
        fprintf(out, "\n    %s\n", e->text);
    }
    if (d->n_evidence > (size_t)max)
        fprintf(out, "  ... %zu more (--json lists all)\n", d->n_evidence - (size_t)max);
}

static void notes(const cp_diagnosis *d, FILE *out, const style *s)
{
    if (!d->n_notes)
        return;
    fprintf(out, "\n%sHow culprit knows%s\n", s->bold, s->reset);
    for (size_t i = 0; i < d->n_notes; i++)
        fprintf(out, "  - %s\n", d->notes[i]);
}

static void ranks(const cp_diagnosis *d, FILE *out, const style *s)
{
    cp_rank_group *g;
    size_t n;
    if (!d->n_ranks || cp_rank_groups(d, MAX_RANGES, &g, &n) != 0)
        return;
    fprintf(out, "\n%sRanks%s (%zu)\n", s->bold, s->reset, d->n_ranks);
    for (size_t i = 0; i < n && i < MAX_GROUPS; i++) {
        fputs("  ", out);
        cp_rank_group_ranks(out, &g[i]);
        fprintf(out, ": %s", cp_rank_state_name(g[i].state));
        if (g[i].error)
            fprintf(out, " - %s", g[i].error);
        fputc('\n', out);
    }
    if (n > MAX_GROUPS)
        fprintf(out, "  ... %zu more groups (--json lists every rank)\n", n - MAX_GROUPS);
    cp_rank_groups_free(g, n);
}

enum { MAX_DRAIN_HOSTS = 16 };

/* The drain list, with the commands an operator would run: printed, never run. */
static void drain(const cp_diagnosis *d, FILE *out, const style *s)
{
    if (!d->n_drain)
        return;
    fprintf(out, "\n%sDrain%s (commands printed, not run)\n", s->bold, s->reset);
    for (size_t i = 0; i < d->n_drain && i < MAX_DRAIN_HOSTS; i++) {
        const cp_drain_host *h = &d->drain[i];
        fprintf(out, "  %s%s: %s\n", h->host[0] ? h->host : "(unknown host)", h->node ? " (node)" : "",
                h->reason ? h->reason : "");
        for (size_t k = 0; k < h->n_gpus; k++) {
            const cp_drain_gpu *g = &h->gpus[k];
            fprintf(out, "    GPU %s", g->busid[0] ? g->busid : "?");
            if (g->index >= 0)
                fprintf(out, " index %d", g->index);
            if (g->rank >= 0)
                fprintf(out, " rank %d", g->rank);
            fputc('\n', out);
        }
        if (h->command)
            fprintf(out, "    %s%s%s\n", s->dim, h->command, s->reset);
    }
    if (d->n_drain > MAX_DRAIN_HOSTS)
        fprintf(out, "  ... %zu more hosts (--json lists all)\n", d->n_drain - MAX_DRAIN_HOSTS);
}

static void footer(const cp_diagnosis *d, FILE *out, const style *s)
{
    fprintf(out, "\n%sRead %zu file%s, %llu lines.%s\n", s->dim, d->n_files, d->n_files == 1 ? "" : "s",
            (unsigned long long)d->lines, s->reset);
    for (size_t i = 0; i < d->n_warnings; i++)
        fprintf(out, "%swarning:%s %s\n", s->yellow, s->reset, d->warnings[i]);
}

int cp_render_text(const cp_diagnosis *d, FILE *out, const cp_render_opts *opts)
{
    style s = style_for(opts);
    int max = opts && opts->max_evidence > 0 ? opts->max_evidence : DEFAULT_EVIDENCE;
    if (!d->failed) {
        fprintf(out, "%sculprit:%s no failure found in the input.\n", s.bold, s.reset);
        drain(d, out, &s);
        if (d->ckpt)
            cp_ckpt_print(d->ckpt, out, false, true);
        footer(d, out, &s);
        return 0;
    }
    headline(d, out, &s);
    paragraph(out, &s, "What it means", d->means);
    paragraph(out, &s, "First action", d->action);
    evidence(d, out, &s, max);
    notes(d, out, &s);
    drain(d, out, &s);
    ranks(d, out, &s);
    if (d->ckpt)
        cp_ckpt_print(d->ckpt, out, false, true);
    footer(d, out, &s);
    return ferror(out) ? -1 : 0;
}
