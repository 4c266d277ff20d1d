/* render_json.c - the machine report. Schema: docs/json-schema.md.
 * `verdict` holds exactly the scored keys; everything else sits beside it. */
#include <jansson.h>
#include <string.h>

#include "ckpt.h"
#include "config.h"
#include "render.h"

#define CP_JSON_SCHEMA "culprit.diagnosis/1"

static json_t *str_or_null(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

static json_t *verdict(const cp_diagnosis *d)
{
    json_t *v = json_object();
    json_object_set_new(v, "first_rank", d->failed && d->first_rank >= 0 ? json_integer(d->first_rank) : json_null());
    json_object_set_new(v, "kind", json_string(d->failed && d->kind != CP_KIND_NONE ? cp_kind_name(d->kind) : "unknown"));
    json_object_set_new(v, "owner", json_string(d->failed ? cp_owner_name(d->owner) : "unknown"));
    json_object_set_new(v, "phase", json_string(d->failed ? cp_phase_name(d->phase) : "unknown"));
    json_object_set_new(v, "hang", json_boolean(d->failed && d->hang));
    /* only with --ckpt: without it the verdict keeps its five scored keys */
    if (d->ckpt)
        json_object_set_new(v, "resume", d->ckpt->newest_safe >= 0
                                             ? json_string(d->ckpt->entries[d->ckpt->newest_safe].path)
                                             : json_null());
    return v;
}

static json_t *details(const cp_diagnosis *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "host", str_or_null(d->host));
    json_object_set_new(o, "rule", str_or_null(d->rule_id));
    json_object_set_new(o, "title", str_or_null(d->title));
    json_object_set_new(o, "means", str_or_null(d->means));
    json_object_set_new(o, "action", str_or_null(d->action));
    json_object_set_new(o, "signature", str_or_null(d->signature));
    json_object_set_new(o, "first_time", str_or_null(d->first_time));
    json_object_set_new(o, "confidence", json_integer(d->confidence));
    json_object_set_new(o, "confidence_reason", str_or_null(d->confidence_reason));
    return o;
}

static json_t *strings(char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(v[i]));
    return a;
}

static json_t *evidence(const cp_diagnosis *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < d->n_evidence; i++) {
        const cp_evidence *e = &d->evidence[i];
        json_t *o = json_object();
        json_object_set_new(o, "path", json_string(e->path));
        json_object_set_new(o, "line", json_integer((json_int_t)e->line));
        json_object_set_new(o, "rank", e->rank >= 0 ? json_integer(e->rank) : json_null());
        json_object_set_new(o, "text", json_string(e->text));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *ranks(const cp_diagnosis *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < d->n_ranks; i++) {
        const cp_rank_row *r = &d->ranks[i];
        json_t *o = json_object();
        json_object_set_new(o, "rank", json_integer(r->rank));
        json_object_set_new(o, "host", str_or_null(r->host));
        json_object_set_new(o, "state", json_string(cp_rank_state_name(r->state)));
        json_object_set_new(o, "first_error", str_or_null(r->first_error));
        json_object_set_new(o, "last_time", str_or_null(r->last_time));
        json_object_set_new(o, "last_step", r->last_step >= 0 ? json_integer(r->last_step) : json_null());
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *drain(const cp_diagnosis *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < d->n_drain; i++) {
        const cp_drain_host *h = &d->drain[i];
        json_t *o = json_object(), *gpus = json_array();
        for (size_t k = 0; k < h->n_gpus; k++) {
            const cp_drain_gpu *g = &h->gpus[k];
            json_array_append_new(gpus, json_pack("{s:o, s:o, s:o}", "busid", str_or_null(g->busid), "index",
                                                  g->index >= 0 ? json_integer(g->index) : json_null(), "rank",
                                                  g->rank >= 0 ? json_integer(g->rank) : json_null()));
        }
        json_object_set_new(o, "host", str_or_null(h->host));
        json_object_set_new(o, "scope", json_string(h->node ? "node" : "gpu"));
        json_object_set_new(o, "gpus", gpus);
        json_object_set_new(o, "reason", str_or_null(h->reason));
        json_object_set_new(o, "command", str_or_null(h->command));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *inputs(const cp_diagnosis *d)
{
    json_t *o = json_object();
    json_object_set_new(o, "files", json_integer((json_int_t)d->n_files));
    json_object_set_new(o, "bytes", json_integer((json_int_t)d->bytes));
    json_object_set_new(o, "lines", json_integer((json_int_t)d->lines));
    json_object_set_new(o, "events", json_integer((json_int_t)d->n_events));
    json_object_set_new(o, "world_size", d->world_size > 0 ? json_integer(d->world_size) : json_null());
    return o;
}

int cp_render_json(const cp_diagnosis *d, FILE *out, const cp_render_opts *opts)
{
    (void)opts;
    json_t *root = json_object();
    if (!root)
        return -1;
    json_object_set_new(root, "schema", json_string(CP_JSON_SCHEMA));
    json_object_set_new(root, "tool", json_pack("{s:s, s:s}", "name", "culprit", "version", CULPRIT_VERSION));
    json_object_set_new(root, "failed", json_boolean(d->failed));
    json_object_set_new(root, "verdict", verdict(d));
    json_object_set_new(root, "diagnosis", details(d));
    json_object_set_new(root, "notes", strings(d->notes, d->n_notes));
    json_object_set_new(root, "evidence", evidence(d));
    json_object_set_new(root, "ranks", ranks(d));
    json_object_set_new(root, "drain", drain(d));
    if (d->ckpt)
        json_object_set_new(root, "checkpoint", cp_ckpt_json(d->ckpt));
    json_object_set_new(root, "inputs", inputs(d));
    json_object_set_new(root, "warnings", strings(d->warnings, d->n_warnings));
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    fputc('\n', out);
    json_decref(root);
    return rc == 0 ? 0 : -1;
}
