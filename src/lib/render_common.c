/* render_common.c - pieces all reports share: rank groups and phrases. */
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "util/strutil.h"

static bool same_group(const cp_rank_row *a, const cp_rank_group *g)
{
    if (a->state != g->state)
        return false;
    if (!a->first_error || !g->error)
        return a->first_error == g->error;
    return strcmp(a->first_error, g->error) == 0;
}

static void append_range(cp_buf *b, int lo, int hi)
{
    if (b->len)
        cp_buf_puts(b, ",");
    if (lo == hi)
        cp_buf_printf(b, "%d", lo);
    else
        cp_buf_printf(b, "%d-%d", lo, hi);
}

/* Writes lo-hi as the next range while fewer than `max_ranges` are
 * written (any number when 0), and counts it either way. */
static void add_range(cp_buf *b, int lo, int hi, size_t max_ranges, size_t *n_ranges)
{
    if (max_ranges == 0 || *n_ranges < max_ranges)
        append_range(b, lo, hi);
    (*n_ranges)++;
}

/* The group's ranks as ranges, the first `max_ranges` of them written
 * (all when 0) and the others counted in g->more_ranges. */
static char *ranges_of(const cp_diagnosis *d, cp_rank_group *g, size_t max_ranges)
{
    cp_buf b;
    cp_buf_init(&b, 1 << 20);
    size_t n_ranges = 0;
    int lo = -1, prev = -2;
    for (size_t i = 0; i < d->n_ranks; i++) {
        if (!same_group(&d->ranks[i], g))
            continue;
        int r = d->ranks[i].rank;
        if (r != prev + 1) {
            if (lo >= 0)
                add_range(&b, lo, prev, max_ranges, &n_ranges);
            lo = r;
        }
        prev = r;
    }
    if (lo >= 0)
        add_range(&b, lo, prev, max_ranges, &n_ranges);
    g->more_ranges = max_ranges && n_ranges > max_ranges ? n_ranges - max_ranges : 0;
    return cp_buf_take(&b);
}

static int group_order(const void *a, const void *b)
{
    const cp_rank_group *x = a, *y = b;
    if ((x->state == CP_RS_ROOT) != (y->state == CP_RS_ROOT))
        return x->state == CP_RS_ROOT ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return (int)x->state - (int)y->state;
}

int cp_rank_groups(const cp_diagnosis *d, size_t max_ranges, cp_rank_group **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    cp_rank_group *g = NULL;
    size_t ng = 0;
    for (size_t i = 0; i < d->n_ranks; i++) {
        const cp_rank_row *row = &d->ranks[i];
        size_t j = 0;
        while (j < ng && !same_group(row, &g[j]))
            j++;
        if (j == ng) {
            cp_rank_group *p = realloc(g, (ng + 1) * sizeof *p);
            if (!p) {
                cp_rank_groups_free(g, ng);
                return -1;
            }
            g = p;
            memset(&g[ng], 0, sizeof g[ng]);
            g[ng].state = row->state;
            g[ng].error = row->first_error;
            ng++;
        }
        g[j].count++;
    }
    for (size_t j = 0; j < ng; j++)
        g[j].ranks = ranges_of(d, &g[j], max_ranges);
    if (ng > 1)
        qsort(g, ng, sizeof *g, group_order);
    *out = g;
    *n = ng;
    return 0;
}

void cp_rank_group_ranks(FILE *out, const cp_rank_group *g)
{
    fprintf(out, "%s %s", g->count == 1 ? "rank" : "ranks", g->ranks);
    if (g->more_ranges)
        fprintf(out, " and %zu more ranges (%zu ranks)", g->more_ranges, g->count);
}

void cp_rank_groups_free(cp_rank_group *g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(g[i].ranks);
    free(g);
}

void cp_describe_rank(const cp_diagnosis *d, char *buf, size_t n)
{
    if (d->first_rank < 0)
        snprintf(buf, n, "%s", d->host[0] ? "a rank on " : "an unknown rank");
    else
        snprintf(buf, n, "rank %d", d->first_rank);
    if (d->host[0]) {
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, d->first_rank < 0 ? "%s" : " (%s)", d->host);
    }
}
