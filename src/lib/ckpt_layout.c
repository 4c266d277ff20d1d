/* ckpt_layout.c - what each framework's checkpoint folder must hold.
 *
 * DeepSpeed: every DP rank's ZeRO shard for every model-parallel rank.
 * DCP: the .metadata commit marker, every rank's .distcp files. Trainer:
 * trainer_state.json, weights (and every shard the index names), optimizer,
 * scheduler, RNG states. Megatron: the same files in every rank folder of
 * a complete tp x pp grid. Numbered step folders: the files their siblings
 * have. docs/checkpoints.md lists the rules and where they come from.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_int.h"
#include "util/strutil.h"

enum { MAX_RANK = 1 << 16, RANGES = 256 };

/* ---- DeepSpeed ------------------------------------------------------------- */

typedef enum ds_kind { DS_MODEL, DS_ZERO_MODEL, DS_OPTIM, DS_OTHER } ds_kind;

static ds_kind ds_parse(const char *name, int *dp, int *mp)
{
    int n = 0;
    *dp = *mp = -1;
    if (strncmp(name, "bf16_", 5) == 0 || strncmp(name, "fp16_", 5) == 0)
        name += 5;
    if (sscanf(name, "mp_rank_%d_model_states.pt%n", mp, &n) == 1 && n && !name[n])
        return DS_MODEL;
    n = 0;
    if (sscanf(name, "zero_pp_rank_%d_mp_rank_%d_model_states.pt%n", dp, mp, &n) == 2 && n && !name[n])
        return DS_ZERO_MODEL;
    n = 0;
    if (sscanf(name, "zero_pp_rank_%d_mp_rank_%d_optim_states.pt%n", dp, mp, &n) == 2 && n && !name[n])
        return DS_OPTIM;
    n = 0;
    if (sscanf(name, "zero_pp_rank_%d_mp_rank_%doptim_states.pt%n", dp, mp, &n) == 2 && n && !name[n])
        return DS_OPTIM;
    return DS_OTHER;
}

static bool rank_ok(int r)
{
    return r >= 0 && r < MAX_RANK;
}

int ck_ds_dp_count(const ck_list *l)
{
    int most = 0, dp, mp;
    for (size_t i = 0; i < l->n; i++) {
        ds_kind k = ds_parse(l->v[i].name, &dp, &mp);
        if ((k == DS_OPTIM || k == DS_ZERO_MODEL) && rank_ok(dp) && dp + 1 > most)
            most = dp + 1;
    }
    return most;
}

/* Missing DP ranks of one kind for one mp rank. */
static void ds_missing(ck_walk *w, ck_cand *c, ds_kind kind, int mp, int expect, const char *why)
{
    bool *have = calloc((size_t)expect, sizeof *have);
    if (!have) {
        w->nomem = true;
        return;
    }
    int dp, m, n_have = 0;
    for (size_t i = 0; i < c->list.n; i++)
        if (ds_parse(c->list.v[i].name, &dp, &m) == kind && m == mp && dp >= 0 && dp < expect && !have[dp]) {
            have[dp] = true;
            n_have++;
        }
    if (n_have < expect) {
        char buf[RANGES];
        cp_absent_ranges(have, (size_t)expect, buf, sizeof buf);
        ck_problem(w, c->entry, "missing %d of %d ZeRO %s shards for mp rank %02d: DP ranks %s (%d expected, %s)",
                   expect - n_have, expect, kind == DS_OPTIM ? "optimizer" : "model", mp, buf, expect, why);
    }
    free(have);
}

void ck_ds_tag(ck_walk *w, ck_cand *c, const ck_cand *sib, size_t n_sib)
{
    int dp, mp, max_mp = -1, n_model = 0, n_zmodel = 0, n_optim = 0;
    for (size_t i = 0; i < c->list.n; i++) {
        ds_kind k = ds_parse(c->list.v[i].name, &dp, &mp);
        if (k == DS_OTHER || !rank_ok(mp) || (k != DS_MODEL && !rank_ok(dp)))
            continue;
        max_mp = mp > max_mp ? mp : max_mp;
        n_model += k == DS_MODEL;
        n_zmodel += k == DS_ZERO_MODEL;
        n_optim += k == DS_OPTIM;
    }
    int self = ck_ds_dp_count(&c->list), from_sib = 0, n_mp = max_mp + 1;
    const char *sib_name = NULL;
    for (size_t i = 0; i < n_sib; i++) {
        if (&sib[i] == c || sib[i].entry == SIZE_MAX || sib[i].format != CP_CKPT_DEEPSPEED)
            continue;
        int s = ck_ds_dp_count(&sib[i].list);
        if (s > from_sib) {
            from_sib = s;
            sib_name = sib[i].name;
        }
    }
    int expect = self;
    char why[160];
    snprintf(why, sizeof why, "from the largest rank seen in this tag");
    int ws = w->opts.world_size;
    if (ws > 0 && n_mp > 0 && ws % n_mp == 0 && ws / n_mp >= self) {
        expect = ws / n_mp;
        snprintf(why, sizeof why, "from the log's world size %d over %d mp rank%s", ws, n_mp, n_mp == 1 ? "" : "s");
    } else if (from_sib > self) {
        expect = from_sib;
        snprintf(why, sizeof why, "from tag %s of the same run", sib_name);
    }
    if (expect > 0)
        ck_note(w, c->entry, "expects %d DP rank%s per mp rank, %s", expect, expect == 1 ? "" : "s", why);
    for (int m = 0; m < n_mp && !w->nomem; m++) {
        bool model = false;
        for (size_t i = 0; i < c->list.n && !model; i++)
            model = ds_parse(c->list.v[i].name, &dp, &mp) == DS_MODEL && mp == m;
        if (!model && !n_zmodel)
            ck_problem(w, c->entry, "mp_rank_%02d_model_states.pt is missing", m);
        if (n_optim)
            ds_missing(w, c, DS_OPTIM, m, expect, why);
        if (n_zmodel)
            ds_missing(w, c, DS_ZERO_MODEL, m, expect, why);
    }
    if (!n_model && !n_zmodel)
        ck_problem(w, c->entry, "no model states file (mp_rank_XX_model_states.pt)");
    ck_check_files(w, c->entry, c->abs, "", &c->list);
}

/* ---- torch.distributed.checkpoint ----------------------------------------------- */

static bool match_distcp(const char *name, int *r)
{
    int k, n = 0;
    return sscanf(name, "__%d_%d.distcp%n", r, &k, &n) == 2 && n && !name[n] && rank_ok(*r);
}

static bool match_rng(const char *name, int *r)
{
    int n = 0;
    return sscanf(name, "rng_state_%d.pth%n", r, &n) == 1 && n && !name[n] && rank_ok(*r);
}

/* Ranks of __R_N.distcp files: all of 0..max present. */
static void dcp_ranks(ck_walk *w, ck_cand *c, const ck_list *l, const char *prefix)
{
    int max = -1, r;
    for (size_t i = 0; i < l->n; i++)
        if (match_distcp(l->v[i].name, &r))
            max = r > max ? r : max;
    if (max < 0) {
        ck_problem(w, c->entry, "%sno __R_N.distcp data files", prefix);
        return;
    }
    bool *have = calloc((size_t)max + 1, sizeof *have);
    if (!have) {
        w->nomem = true;
        return;
    }
    for (size_t i = 0; i < l->n; i++)
        if (match_distcp(l->v[i].name, &r))
            have[r] = true;
    char buf[RANGES];
    cp_absent_ranges(have, (size_t)max + 1, buf, sizeof buf);
    if (buf[0])
        ck_problem(w, c->entry, "%sno .distcp file from rank%s %s (rank %d wrote one)", prefix,
                   strpbrk(buf, ",-") ? "s" : "", buf, max);
    free(have);
}

static void dcp_checks(ck_walk *w, ck_cand *c, const ck_list *l, const char *abs, const char *prefix)
{
    const ck_file *meta = ck_find(l, ".metadata");
    if (!meta) {
        ck_problem(w, c->entry, "%sno .metadata: the save never committed (DCP writes it last)", prefix);
    } else if (meta->size > 0) {
        char *p = ck_join(abs, ".metadata");
        FILE *f = p ? fopen(p, "rb") : NULL;
        int b = f ? fgetc(f) : EOF;
        if (f)
            fclose(f);
        free(p);
        if (b != 0x80)
            ck_problem(w, c->entry, "%s.metadata is not a pickle", prefix);
    }
    if (ck_find(l, ".metadata.tmp"))
        ck_problem(w, c->entry, "%s.metadata.tmp is left over: the coordinator died while committing", prefix);
    dcp_ranks(w, c, l, prefix);
}

void ck_dcp(ck_walk *w, ck_cand *c)
{
    dcp_checks(w, c, &c->list, c->abs, "");
    ck_note(w, c->entry, "tensor offsets inside .metadata are not checked (a pickle)");
    ck_check_files(w, c->entry, c->abs, "", &c->list);
}

/* ---- Hugging Face Trainer ----------------------------------------------------------- */

static void hf_state(ck_walk *w, ck_cand *c)
{
    if (!ck_find(&c->list, "trainer_state.json")) {
        ck_problem(w, c->entry, "trainer_state.json is missing");
        return;
    }
    char *p = ck_join(c->abs, "trainer_state.json");
    json_error_t err;
    json_t *j = p ? json_load_file(p, 0, &err) : NULL;
    free(p);
    if (!json_is_object(j)) {
        ck_problem(w, c->entry, "trainer_state.json does not parse: %s", j ? "not an object" : err.text);
        json_decref(j);
        return;
    }
    json_t *gs = json_object_get(j, "global_step"), *best = json_object_get(j, "best_model_checkpoint");
    cp_ckpt_entry *e = &w->r->entries[c->entry];
    if (json_is_integer(gs)) {
        if (e->step < 0)
            e->step = json_integer_value(gs);
        else if (json_integer_value(gs) != e->step)
            ck_problem(w, c->entry, "trainer_state.json says global_step %lld, the folder name says %lld",
                       (long long)json_integer_value(gs), (long long)e->step);
    }
    if (json_is_string(best))
        ck_note(w, c->entry, "best model checkpoint: %s", json_string_value(best));
    json_decref(j);
}

/* Every shard the index's weight_map names must be there. */
static bool hf_index(ck_walk *w, ck_cand *c, const char *index)
{
    if (!ck_find(&c->list, index))
        return false;
    char *p = ck_join(c->abs, index);
    json_error_t err;
    json_t *j = p ? json_load_file(p, 0, &err) : NULL;
    free(p);
    json_t *map = json_object_get(j, "weight_map");
    if (!json_is_object(map)) {
        ck_problem(w, c->entry, "%s has no weight_map", index);
    } else {
        const char *key;
        json_t *v;
        int missing = 0;
        char first[256] = "";
        json_object_foreach(map, key, v) {
            const char *shard = json_string_value(v);
            if (shard && !ck_find(&c->list, shard) && !strstr(first, shard)) {
                if (!missing++)
                    snprintf(first, sizeof first, "%s", shard);
            }
        }
        if (missing)
            ck_problem(w, c->entry, "%s names shard %s, which is missing%s", index, first,
                       missing > 1 ? " (and others)" : "");
    }
    json_decref(j);
    return true;
}

static bool has_prefix_entry(const ck_list *l, const char *prefix, bool dir)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].dir == dir && cp_starts_with(l->v[i].name, prefix))
            return true;
    return false;
}

static void hf_rng(ck_walk *w, ck_cand *c)
{
    int r, max = -1;
    for (size_t i = 0; i < c->list.n; i++)
        if (match_rng(c->list.v[i].name, &r))
            max = r > max ? r : max;
    if (max < 0) {
        if (!ck_find(&c->list, "rng_state.pth"))
            ck_note(w, c->entry, "no rng_state file: a resumed run will not replay the same data order");
        return;
    }
    bool *have = calloc((size_t)max + 1, sizeof *have);
    if (!have) {
        w->nomem = true;
        return;
    }
    for (size_t i = 0; i < c->list.n; i++)
        if (match_rng(c->list.v[i].name, &r) && r <= max)
            have[r] = true;
    char buf[RANGES];
    cp_absent_ranges(have, (size_t)max + 1, buf, sizeof buf);
    if (buf[0])
        ck_problem(w, c->entry, "rng_state files missing for process%s %s", strpbrk(buf, ",-") ? "es" : "", buf);
    free(have);
}

void ck_hf(ck_walk *w, ck_cand *c)
{
    const ck_list *l = &c->list;
    bool ds = has_prefix_entry(l, "global_step", true);
    hf_state(w, c);
    bool weights = hf_index(w, c, "model.safetensors.index.json") | hf_index(w, c, "pytorch_model.bin.index.json");
    weights = weights || ck_find(l, "model.safetensors") || ck_find(l, "pytorch_model.bin") ||
              ck_find(l, "adapter_model.safetensors") || ck_find(l, "adapter_model.bin") ||
              has_prefix_entry(l, "pytorch_model_fsdp", true);
    if (!weights && !ds)
        ck_problem(w, c->entry, "no model weights (model.safetensors, its index's shards, or pytorch_model.bin)");
    bool optim = ck_find(l, "optimizer.pt") || ck_find(l, "optimizer.bin") || has_prefix_entry(l, "optimizer_", true);
    if (!optim && !ds)
        ck_problem(w, c->entry, "optimizer.pt is missing: the optimizer state cannot be resumed");
    if (optim && !ck_find(l, "scheduler.pt"))
        ck_problem(w, c->entry, "scheduler.pt is missing: the learning-rate schedule would restart");
    if (ds)
        ck_note(w, c->entry, "optimizer state is in the DeepSpeed folder inside it");
    hf_rng(w, c);
    ck_check_files(w, c->entry, c->abs, "", l);
}

/* ---- Megatron-LM ----------------------------------------------------------------- */

void ck_megatron(ck_walk *w, ck_cand *c)
{
    int tp, pp, n, max_tp = -1, max_pp = -1, n_dirs = 0;
    const ck_list *l = &c->list;
    for (size_t i = 0; i < l->n; i++) {
        if (!l->v[i].dir)
            continue;
        pp = 0;
        n = 0;
        if (sscanf(l->v[i].name, "mp_rank_%d%n", &tp, &n) != 1 || !n || !rank_ok(tp))
            continue;
        sscanf(l->v[i].name + n, "_%d", &pp);
        max_tp = tp > max_tp ? tp : max_tp;
        max_pp = pp > max_pp ? pp : max_pp;
        n_dirs++;
    }
    if (!n_dirs) {
        /* torch_dist: DCP files straight in iter_N/ */
        if (ck_find(l, ".metadata") || ck_find(l, ".metadata.tmp") || ck_find(l, "common.pt"))
            dcp_checks(w, c, l, c->abs, "");
        else
            ck_problem(w, c->entry, "no mp_rank_XX folders and no torch_dist files");
        ck_check_files(w, c->entry, c->abs, "", l);
        return;
    }
    if (max_tp >= 1024 || max_pp >= 1024) {
        ck_problem(w, c->entry, "rank folder numbers out of range");
        return;
    }
    /* the reference file set: the union over rank folders */
    const char *ref[2] = {"model_optim_rng.pt", "distrib_optim.pt"};
    bool any_distopt = false;
    for (int t = 0; t <= max_tp; t++)
        for (int p = 0; p <= max_pp; p++) {
            char name[64];
            if (max_pp > 0)
                snprintf(name, sizeof name, "mp_rank_%02d_%03d", t, p);
            else
                snprintf(name, sizeof name, "mp_rank_%02d", t);
            const ck_file *d = ck_find(l, name);
            if (!d || !d->dir) {
                ck_problem(w, c->entry, "rank folder %s is missing", name);
                continue;
            }
            char *abs = ck_join(c->abs, name), prefix[80];
            ck_list sub;
            if (!abs || ck_list_dir(abs, &sub) != 0) {
                free(abs);
                ck_problem(w, c->entry, "cannot read %s", name);
                continue;
            }
            snprintf(prefix, sizeof prefix, "%s/", name);
            any_distopt |= ck_find(&sub, ref[1]) != NULL;
            if (!ck_find(&sub, ref[0]))
                ck_problem(w, c->entry, "%s%s is missing", prefix, ref[0]);
            ck_check_files(w, c->entry, abs, prefix, &sub);
            ck_list_free(&sub);
            free(abs);
        }
    if (!any_distopt)
        goto files;
    for (int t = 0; t <= max_tp; t++)
        for (int p = 0; p <= max_pp; p++) {
            char name[64], *path;
            if (max_pp > 0)
                snprintf(name, sizeof name, "mp_rank_%02d_%03d/%s", t, p, ref[1]);
            else
                snprintf(name, sizeof name, "mp_rank_%02d/%s", t, ref[1]);
            if ((path = ck_join(c->abs, name))) {
                FILE *f = fopen(path, "rb");
                if (!f)
                    ck_problem(w, c->entry, "%s is missing (other rank folders have one)", name);
                else
                    fclose(f);
            }
            free(path);
        }
files:
    ck_check_files(w, c->entry, c->abs, "", l);
}

/* ---- numbered step folders ------------------------------------------------------- */

void ck_generic(ck_walk *w, ck_cand *c, const ck_cand *sib, size_t n_sib)
{
    /* a file every other numbered sibling has must be here too */
    const ck_cand *ref = NULL;
    for (size_t i = 0; i < n_sib && !ref; i++)
        if (&sib[i] != c && sib[i].entry != SIZE_MAX && sib[i].format == CP_CKPT_GENERIC)
            ref = &sib[i];
    for (size_t k = 0; ref && k < ref->list.n; k++) {
        const ck_file *f = &ref->list.v[k];
        if (f->dir || ck_find(&c->list, f->name))
            continue;
        bool everywhere = true;
        for (size_t j = 0; j < n_sib && everywhere; j++)
            if (&sib[j] != c && sib[j].entry != SIZE_MAX && sib[j].format == CP_CKPT_GENERIC)
                everywhere = ck_find(&sib[j].list, f->name) != NULL;
        if (everywhere)
            ck_problem(w, c->entry, "%s is missing (the other step folders have it)", f->name);
    }
    ck_check_files(w, c->entry, c->abs, "", &c->list);
}
