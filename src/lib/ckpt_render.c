/* ckpt_render.c - the checkpoint report as JSON ("culprit.ckpt/1", the
 * same object under `checkpoint` in a diagnosis) and as text or Markdown.
 * Schema: docs/checkpoints.md. */
#include <string.h>

#include "ckpt.h"

#define CP_CKPT_SCHEMA "culprit.ckpt/1"

enum { TEXT_PROBLEMS = 6 };

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *strings(char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *verdict_json(cp_ckpt_verdict v)
{
    return v == CP_CKPT_UNKNOWN ? json_null() : json_boolean(v == CP_CKPT_SAFE);
}

json_t *cp_ckpt_json(const cp_ckpt_report *r)
{
    json_t *o = json_object(), *a = json_array();
    json_object_set_new(o, "schema", json_string(CP_CKPT_SCHEMA));
    for (size_t i = 0; i < r->n_entries; i++) {
        const cp_ckpt_entry *e = &r->entries[i];
        json_t *c = json_object();
        json_object_set_new(c, "path", json_string(e->path));
        json_object_set_new(c, "step", e->step >= 0 ? json_integer(e->step) : json_null());
        json_object_set_new(c, "format", json_string(cp_ckpt_format_name(e->format)));
        json_object_set_new(c, "safe", verdict_json(e->verdict));
        json_object_set_new(c, "problems", strings(e->problems, e->n_problems));
        json_object_set_new(c, "notes", strings(e->notes, e->n_notes));
        json_object_set_new(c, "files", json_integer((json_int_t)e->n_files));
        json_object_set_new(c, "bytes", json_integer((json_int_t)e->bytes));
        json_array_append_new(a, c);
    }
    json_object_set_new(o, "checkpoints", a);
    json_object_set_new(o, "newest_safe", r->newest_safe >= 0 ? json_string(r->entries[r->newest_safe].path)
                                                              : json_null());
    json_object_set_new(o, "latest", str_or_null(r->latest));
    json_object_set_new(o, "resume", str_or_null(r->resume));
    json_object_set_new(o, "warnings", strings(r->warnings, r->n_warnings));
    return o;
}

static const char *verdict_word(cp_ckpt_verdict v)
{
    return v == CP_CKPT_SAFE ? "safe" : v == CP_CKPT_UNSAFE ? "UNSAFE" : "unknown";
}

void cp_ckpt_print(const cp_ckpt_report *r, FILE *out, bool md, bool section)
{
    if (section)
        fprintf(out, md ? "\n**Checkpoints** (%s)\n\n" : "\nCheckpoints (%s)\n", r->dir);
    if (!r->n_entries)
        fprintf(out, "%sno checkpoint found\n", md ? "- " : "  ");
    for (size_t i = 0; i < r->n_entries; i++) {
        const cp_ckpt_entry *e = &r->entries[i];
        fprintf(out, md ? "- `%s` (%s" : "  %-28s %s", e->path, cp_ckpt_format_name(e->format));
        if (e->step >= 0)
            fprintf(out, ", step %lld", (long long)e->step);
        fprintf(out, md ? "): **%s**" : ": %s", verdict_word(e->verdict));
        if ((int)i == r->latest_index)
            fputs(" <- pointer", out);
        if ((int)i == r->newest_safe)
            fputs(" <- newest safe", out);
        fputc('\n', out);
        for (size_t j = 0; j < e->n_problems && j < TEXT_PROBLEMS; j++)
            fprintf(out, md ? "  - %s\n" : "      - %s\n", e->problems[j]);
        if (e->n_problems > TEXT_PROBLEMS)
            fprintf(out, md ? "  - ... %zu more\n" : "      ... %zu more (--json lists all)\n",
                    e->n_problems - TEXT_PROBLEMS);
    }
    for (size_t i = 0; i < r->n_warnings; i++)
        fprintf(out, md ? "\n> warning: %s\n" : "  warning: %s\n", r->warnings[i]);
    if (r->resume)
        fprintf(out, md ? "\n**Resume from** `%s`: `%s`\n" : "  Resume from %s:\n    %s\n",
                r->entries[r->newest_safe].path, r->resume);
    else if (r->n_entries)
        fprintf(out, md ? "\n**No checkpoint is safe to resume from.**\n" : "  No checkpoint is safe to resume from.\n");
}
