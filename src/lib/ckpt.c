/* ckpt.c - the checkpoint walker: finds checkpoint folders under DIR,
 * hands each to its layout's check (ckpt_layout.c), compares weight files
 * with their peers, follows the pointer files and decides the verdicts.
 *
 * The walk follows symbolic links but remembers every folder it entered
 * (device, inode), so a link loop is entered once; it stops CP_CKPT_MAX_DEPTH
 * levels down and after CP_CKPT_MAX_FILES files.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ckpt_int.h"
#include "util/strutil.h"

/* ---- small helpers -------------------------------------------------------- */

char *ck_join(const char *a, const char *b)
{
    if (!a || !*a || strcmp(a, ".") == 0)
        return cp_strdup(b);
    if (strcmp(b, ".") == 0)
        return cp_strdup(a);
    size_t la = strlen(a);
    bool slash = a[la - 1] == '/';
    size_t n = la + strlen(b) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s%s%s", a, slash ? "" : "/", b);
    return p;
}

static int cmp_file(const void *a, const void *b)
{
    return strcmp(((const ck_file *)a)->name, ((const ck_file *)b)->name);
}

const ck_file *ck_find(const ck_list *l, const char *name)
{
    ck_file key = {.name = (char *)name};
    return l->n ? bsearch(&key, l->v, l->n, sizeof *l->v, cmp_file) : NULL;
}

void ck_list_free(ck_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i].name);
    free(l->v);
    l->v = NULL;
    l->n = 0;
}

int ck_list_dir(const char *path, ck_list *out)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    size_t cap = 0;
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, 0) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
            continue;
        if (out->n == cap) {
            cap = cap ? cap * 2 : 32;
            ck_file *v = realloc(out->v, cap * sizeof *v);
            if (!v) {
                rc = -1;
                break;
            }
            out->v = v;
        }
        ck_file *f = &out->v[out->n];
        if (!(f->name = cp_strdup(de->d_name))) {
            rc = -1;
            break;
        }
        f->size = (int64_t)st.st_size;
        f->mtime = st.st_mtime;
        f->dir = S_ISDIR(st.st_mode);
        out->n++;
    }
    closedir(d);
    if (rc != 0)
        ck_list_free(out);
    else if (out->n)
        qsort(out->v, out->n, sizeof *out->v, cmp_file);
    return rc;
}

static void push_str(ck_walk *w, char ***v, size_t *n, size_t cap, const char *fmt, va_list ap)
{
    if (*n >= cap)
        return;
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    char **p = realloc(*v, (*n + 1) * sizeof *p);
    if (!p || !(p[*n] = cp_strdup(buf))) {
        if (p)
            *v = p;
        w->nomem = true;
        return;
    }
    *v = p;
    (*n)++;
}

void ck_problem(ck_walk *w, size_t entry, const char *fmt, ...)
{
    cp_ckpt_entry *e = &w->r->entries[entry];
    va_list ap;
    va_start(ap, fmt);
    push_str(w, &e->problems, &e->n_problems, CP_CKPT_MAX_PROBLEMS, fmt, ap);
    va_end(ap);
}

void ck_note(ck_walk *w, size_t entry, const char *fmt, ...)
{
    cp_ckpt_entry *e = &w->r->entries[entry];
    va_list ap;
    va_start(ap, fmt);
    push_str(w, &e->notes, &e->n_notes, CP_CKPT_MAX_PROBLEMS, fmt, ap);
    va_end(ap);
}

void ck_warn(ck_walk *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    push_str(w, &w->r->warnings, &w->r->n_warnings, CP_CKPT_MAX_PROBLEMS, fmt, ap);
    va_end(ap);
}

static bool is_weight(const char *name)
{
    static const char *const ext[] = {".pt", ".pth", ".bin", ".safetensors", ".distcp"};
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        size_t k = strlen(ext[i]);
        if (n > k && strcmp(name + n - k, ext[i]) == 0)
            return true;
    }
    return false;
}

void ck_check_files(ck_walk *w, size_t entry, const char *abs, const char *prefix, const ck_list *l)
{
    for (size_t i = 0; i < l->n && !w->nomem; i++) {
        const ck_file *f = &l->v[i];
        if (f->dir)
            continue;
        if (++w->files_seen > CP_CKPT_MAX_FILES) {
            w->capped = true;
            return;
        }
        cp_ckpt_entry *e = &w->r->entries[entry];
        e->n_files++;
        e->bytes += (uint64_t)f->size;
        if (f->mtime > e->mtime)
            e->mtime = f->mtime;
        if (f->size == 0) {
            ck_problem(w, entry, "%s%s is empty (0 bytes)", prefix, f->name);
            continue;
        }
        char *path = ck_join(abs, f->name), msg[512] = "";
        if (!path) {
            w->nomem = true;
            return;
        }
        cp_file_check rc = cp_ckpt_check_file(path, msg, sizeof msg);
        free(path);
        if (rc == CP_FILE_BAD) {
            ck_problem(w, entry, "%s%s: %s", prefix, f->name, msg);
        } else if (rc == CP_FILE_UNCHECKED) {
            ck_note(w, entry, "%s%s: %s", prefix, f->name, msg);
            w->r->entries[entry].unverified = true;
        }
        if (!is_weight(f->name))
            continue;
        if (w->n_recs == w->cap_recs) {
            size_t cap = w->cap_recs ? w->cap_recs * 2 : 256;
            ck_rec *v = realloc(w->recs, cap * sizeof *v);
            if (!v) {
                w->nomem = true;
                return;
            }
            w->recs = v;
            w->cap_recs = cap;
        }
        char *name = malloc(strlen(prefix) + strlen(f->name) + 1);
        if (!name) {
            w->nomem = true;
            return;
        }
        strcpy(name, prefix);
        strcat(name, f->name);
        w->recs[w->n_recs++] = (ck_rec){entry, name, f->size, f->mtime};
    }
}

/* ---- steps ------------------------------------------------------------------ */

static const char *const step_words[] = {"global_step", "checkpoint", "iteration", "iter", "ckpt", "step", "epoch"};

int64_t cp_ckpt_step_in_text(const char *text)
{
    if (!text)
        return -1;
    for (size_t i = 0; i < sizeof step_words / sizeof step_words[0]; i++) {
        int64_t found = -1;
        size_t k = strlen(step_words[i]);
        for (const char *p = cp_memstr(text, strlen(text), step_words[i]); p;
             p = cp_memstr(p + 1, strlen(p + 1), step_words[i])) {
            const char *q = p + k;
            while (*q == '_' || *q == '-' || *q == ' ' || *q == '=' || *q == ':')
                q++;
            if (*q < '0' || *q > '9' || q - (p + k) > 8)
                continue;
            int64_t v = 0;
            for (; *q >= '0' && *q <= '9' && v < INT64_MAX / 10; q++)
                v = v * 10 + (*q - '0');
            found = v;
        }
        if (found >= 0)
            return found;
    }
    return -1;
}

/* A folder named only by a step word and a number (step_600, ckpt-600). */
static bool step_name(const char *name, int64_t *step)
{
    for (size_t i = 0; i < sizeof step_words / sizeof step_words[0]; i++) {
        size_t k = strlen(step_words[i]);
        if (strncmp(name, step_words[i], k) != 0)
            continue;
        const char *q = name + k;
        if (*q == '_' || *q == '-')
            q++;
        if (*q < '0' || *q > '9')
            continue;
        const char *d = q;
        while (*d >= '0' && *d <= '9')
            d++;
        if (*d)
            continue;
        *step = cp_ckpt_step_in_text(name);
        return true;
    }
    return false;
}

const char *cp_ckpt_format_name(cp_ckpt_format f)
{
    static const char *const names[] = {"deepspeed", "dcp", "hf", "megatron", "generic"};
    return f <= CP_CKPT_GENERIC ? names[f] : "generic";
}

/* ---- classification ------------------------------------------------------- */

static bool has_suffix(const ck_list *l, const char *suffix)
{
    size_t k = strlen(suffix);
    for (size_t i = 0; i < l->n; i++) {
        size_t n = strlen(l->v[i].name);
        if (!l->v[i].dir && n >= k && strcmp(l->v[i].name + n - k, suffix) == 0)
            return true;
    }
    return false;
}

static bool has_files(const ck_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (!l->v[i].dir)
            return true;
    return false;
}

/* Returns false when the folder is not a checkpoint. */
static bool classify(const char *name, const ck_list *l, cp_ckpt_format *fmt, bool *staging)
{
    int64_t step;
    *staging = false;
    if (strncmp(name, "iter_", 5) == 0 && step_name(name, &step)) {
        *fmt = CP_CKPT_MEGATRON;
        return true;
    }
    if (strncmp(name, "tmp-checkpoint-", 15) == 0) {
        *fmt = CP_CKPT_HF;
        *staging = true;
        return true;
    }
    if ((strncmp(name, "checkpoint-", 11) == 0 && step_name(name, &step)) || ck_find(l, "trainer_state.json")) {
        *fmt = CP_CKPT_HF;
        return true;
    }
    if (has_suffix(l, "model_states.pt") || has_suffix(l, "optim_states.pt")) {
        *fmt = CP_CKPT_DEEPSPEED;
        return true;
    }
    if (has_suffix(l, ".distcp") || ck_find(l, ".metadata") || ck_find(l, ".metadata.tmp")) {
        *fmt = CP_CKPT_DCP;
        return true;
    }
    if (step_name(name, &step) && has_files(l)) {
        *fmt = CP_CKPT_GENERIC;
        return true;
    }
    return false;
}

/* ---- the walk --------------------------------------------------------------- */

static bool enter_once(ck_walk *w, const char *abs)
{
    struct stat st;
    if (stat(abs, &st) != 0)
        return false;
    for (size_t i = 0; i < w->n_seen; i++)
        if (w->seen[i].dev == st.st_dev && w->seen[i].ino == st.st_ino)
            return false;
    if (w->n_seen == w->cap_seen) {
        size_t cap = w->cap_seen ? w->cap_seen * 2 : 64;
        struct ck_seen *v = realloc(w->seen, cap * sizeof *v);
        if (!v) {
            w->nomem = true;
            return false;
        }
        w->seen = v;
        w->cap_seen = cap;
    }
    w->seen[w->n_seen++] = (struct ck_seen){st.st_dev, st.st_ino};
    return true;
}

static int new_entry(ck_walk *w, const char *rel_root, const char *name, cp_ckpt_format fmt, size_t *idx)
{
    cp_ckpt_report *r = w->r;
    if (r->n_entries >= CP_CKPT_MAX_ENTRIES) {
        w->capped = true;
        return -1;
    }
    cp_ckpt_entry *v = realloc(r->entries, (r->n_entries + 1) * sizeof *v);
    if (!v) {
        w->nomem = true;
        return -1;
    }
    r->entries = v;
    cp_ckpt_entry *e = &v[r->n_entries];
    memset(e, 0, sizeof *e);
    e->path = ck_join(rel_root, name);
    e->root = cp_strdup(rel_root && *rel_root ? rel_root : ".");
    e->format = fmt;
    e->step = cp_ckpt_step_in_text(name);
    if (!e->path || !e->root) {
        free(e->path);
        free(e->root);
        w->nomem = true;
        return -1;
    }
    *idx = r->n_entries++;
    return 0;
}

/* Pointer files of a root: DeepSpeed `latest`, Megatron's tracker, and
 * for the Trainer the newest checkpoint-N. */
static void root_pointers(ck_walk *w, const char *abs, const char *rel, const ck_list *l, const ck_cand *c,
                          size_t n)
{
    size_t n_ds = 0, n_hf = 0, n_mlm = 0;
    int64_t hf_step = -1;
    const char *hf_name = NULL;
    for (size_t i = 0; i < n; i++) {
        n_ds += c[i].format == CP_CKPT_DEEPSPEED;
        n_mlm += c[i].format == CP_CKPT_MEGATRON;
        if (c[i].format == CP_CKPT_HF && !c[i].staging) {
            n_hf++;
            int64_t s = cp_ckpt_step_in_text(c[i].name);
            if (s >= hf_step) {
                hf_step = s;
                hf_name = c[i].name;
            }
        }
    }
    const char *label = NULL;
    char target[512] = "";
    cp_ckpt_format fmt = CP_CKPT_GENERIC;
    if (n_ds && ck_find(l, "latest")) {
        label = "latest";
        fmt = CP_CKPT_DEEPSPEED;
    } else if (n_mlm && ck_find(l, "latest_checkpointed_iteration.txt")) {
        label = "latest_checkpointed_iteration.txt";
        fmt = CP_CKPT_MEGATRON;
    }
    if (label) {
        char *p = ck_join(abs, label);
        FILE *f = p ? fopen(p, "r") : NULL;
        if (f && fgets(target, sizeof target, f))
            cp_trim(target);
        if (f)
            fclose(f);
        free(p);
        if (!target[0]) {
            ck_warn(w, "%s%s%s is empty or unreadable", rel && *rel ? rel : "", rel && *rel ? "/" : "", label);
            return;
        }
        int64_t it;
        if (fmt == CP_CKPT_MEGATRON && cp_parse_i64(target, &it))
            snprintf(target, sizeof target, "iter_%07lld", (long long)it);
    } else if (n_hf) {
        label = "the newest checkpoint-N";
        fmt = CP_CKPT_HF;
        snprintf(target, sizeof target, "%s", hf_name);
    }
    if (n_ds && !ck_find(l, "latest"))
        ck_warn(w, "%s has DeepSpeed tags but no `latest` file: load_checkpoint needs an explicit tag",
                rel && *rel ? rel : ".");
    if (n_ds && !ck_find(l, "zero_to_fp32.py"))
        ck_warn(w, "%s has no zero_to_fp32.py (DeepSpeed copies it there to consolidate ZeRO shards offline)",
                rel && *rel ? rel : ".");
    if (!label || w->r->latest)
        return;
    w->r->latest = ck_join(rel, target);
    w->r->latest_format = fmt;
    if (!w->r->latest)
        w->nomem = true;
}

static void check_cand(ck_walk *w, ck_cand *c, ck_cand *all, size_t n)
{
    if (c->staging) {
        ck_problem(w, c->entry, "leftover staging folder %s: a save was interrupted before its final rename",
                   c->name);
        ck_check_files(w, c->entry, c->abs, "", &c->list);
        return;
    }
    switch (c->format) {
    case CP_CKPT_DEEPSPEED: ck_ds_tag(w, c, all, n); break;
    case CP_CKPT_DCP: ck_dcp(w, c); break;
    case CP_CKPT_HF: ck_hf(w, c); break;
    case CP_CKPT_MEGATRON: ck_megatron(w, c); break;
    default: ck_generic(w, c, all, n); break;
    }
}

static void walk_dir(ck_walk *w, const char *abs, const char *rel, int depth)
{
    ck_list l;
    if (!enter_once(w, abs) || ck_list_dir(abs, &l) != 0)
        return;
    ck_cand *c = calloc(l.n ? l.n : 1, sizeof *c);
    size_t n = 0;
    if (!c)
        w->nomem = true;
    for (size_t i = 0; c && i < l.n && !w->nomem; i++) {
        if (!l.v[i].dir)
            continue;
        ck_cand *k = &c[n];
        k->name = l.v[i].name;
        if (!(k->abs = ck_join(abs, k->name)) || ck_list_dir(k->abs, &k->list) != 0) {
            free(k->abs);
            continue;
        }
        if (classify(k->name, &k->list, &k->format, &k->staging) && new_entry(w, rel, k->name, k->format, &k->entry) == 0) {
            n++;
        } else {
            ck_list_free(&k->list);
            k->list.n = 0;
            /* not a checkpoint: keep its path for the descent */
            c[n].entry = SIZE_MAX;
            n++;
        }
    }
    for (size_t i = 0; i < n && !w->nomem; i++)
        if (c[i].entry != SIZE_MAX)
            check_cand(w, &c[i], c, n);
    root_pointers(w, abs, rel, &l, c, n);
    for (size_t i = 0; i < n; i++) {
        bool descend = c[i].entry == SIZE_MAX || (c[i].format == CP_CKPT_HF && !c[i].staging);
        if (descend && depth < CP_CKPT_MAX_DEPTH && !w->nomem && !w->capped) {
            char *sub = ck_join(rel, c[i].name);
            if (sub)
                walk_dir(w, c[i].abs, sub, depth + 1);
            free(sub);
        }
        free(c[i].abs);
        ck_list_free(&c[i].list);
    }
    free(c);
    ck_list_free(&l);
}

/* DIR itself may be one checkpoint (a tag folder, a DCP folder). */
static bool walk_self(ck_walk *w, const char *dir)
{
    ck_list l;
    if (ck_list_dir(dir, &l) != 0)
        return false;
    const char *base = strrchr(dir, '/');
    char name[256];
    snprintf(name, sizeof name, "%s", base && base[1] ? base + 1 : dir);
    ck_cand c = {.name = name, .abs = (char *)dir, .list = l};
    bool is = classify(name, &l, &c.format, &c.staging);
    if (is && new_entry(w, "", ".", c.format, &c.entry) == 0) {
        w->r->entries[c.entry].step = cp_ckpt_step_in_text(name);
        check_cand(w, &c, &c, 1);
    }
    ck_list_free(&l);
    /* a Trainer checkpoint may hold a DeepSpeed save: walk it too */
    return is && c.format != CP_CKPT_HF;
}

/* ---- after the walk: peers, staleness, verdicts ------------------------------ */

static int cmp_rec(const void *a, const void *b, void *ctx)
{
    const ck_rec *x = a, *y = b;
    const cp_ckpt_report *r = ctx;
    int c = strcmp(r->entries[x->entry].root, r->entries[y->entry].root);
    return c ? c : strcmp(x->name, y->name);
}

static int cmp_size(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The same file in sibling checkpoints of one root: one much smaller than
 * the others (< 50% of their median) was cut short. */
static void compare_peers(ck_walk *w)
{
    if (w->n_recs > 1)
        qsort_r(w->recs, w->n_recs, sizeof *w->recs, cmp_rec, w->r);
    int64_t *sz = malloc((w->n_recs ? w->n_recs : 1) * sizeof *sz);
    if (!sz) {
        w->nomem = true;
        return;
    }
    for (size_t i = 0, j; i < w->n_recs; i = j) {
        for (j = i + 1; j < w->n_recs && cmp_rec(&w->recs[i], &w->recs[j], w->r) == 0; j++)
            ;
        size_t k = j - i;
        if (k < 2)
            continue;
        for (size_t m = 0; m < k; m++)
            sz[m] = w->recs[i + m].size;
        qsort(sz, k, sizeof *sz, cmp_size);
        for (size_t m = i; m < j; m++) {
            const ck_rec *x = &w->recs[m];
            /* the lower median of the others */
            size_t self = 0;
            while (sz[self] != x->size)
                self++;
            size_t mid = (k - 2) / 2;
            int64_t med = sz[mid < self ? mid : mid + 1];
            if (x->size > 0 && x->size * 2 < med)
                ck_problem(w, x->entry, "%s is %lld bytes, under half of the same file in the other checkpoints "
                           "(median %lld): probably cut short", x->name, (long long)x->size, (long long)med);
        }
    }
    free(sz);
}

/* A weight file far older than the rest of its checkpoint is left from an
 * earlier save into the same folder. */
static void check_stale(ck_walk *w)
{
    for (size_t i = 0; i < w->n_recs; i++) {
        const ck_rec *x = &w->recs[i];
        const cp_ckpt_entry *e = &w->r->entries[x->entry];
        if (x->mtime + CP_CKPT_STALE_SECONDS < e->mtime)
            ck_problem(w, x->entry, "%s is %lld minutes older than the newest file of this checkpoint: left "
                       "from an earlier save", x->name, (long long)(e->mtime - x->mtime) / 60);
    }
}

static int cmp_entry(const void *a, const void *b)
{
    const cp_ckpt_entry *x = a, *y = b;
    int c = strcmp(x->root, y->root);
    if (c)
        return c;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return strcmp(x->path, y->path);
}

static void decide(cp_ckpt_report *r)
{
    r->newest = r->newest_safe = r->latest_index = -1;
    for (size_t i = 0; i < r->n_entries; i++) {
        cp_ckpt_entry *e = &r->entries[i];
        if (e->n_problems)
            e->verdict = CP_CKPT_UNSAFE;
        else if (e->unverified)
            e->verdict = CP_CKPT_UNKNOWN;
        else
            e->verdict = CP_CKPT_SAFE;
        if (r->newest < 0 || e->step >= r->entries[r->newest].step)
            r->newest = (int)i;
        if (e->verdict == CP_CKPT_SAFE && (r->newest_safe < 0 || e->step >= r->entries[r->newest_safe].step))
            r->newest_safe = (int)i;
        if (r->latest && strcmp(e->path, r->latest) == 0)
            r->latest_index = (int)i;
    }
}

static char *resume_hint(const cp_ckpt_report *r)
{
    if (r->newest_safe < 0)
        return NULL;
    const cp_ckpt_entry *e = &r->entries[r->newest_safe];
    char *path = ck_join(r->dir, e->path), *root = ck_join(r->dir, e->root), buf[2048];
    const char *tag = strrchr(e->path, '/');
    tag = tag ? tag + 1 : e->path;
    switch (e->format) {
    case CP_CKPT_DEEPSPEED:
        snprintf(buf, sizeof buf, "engine.load_checkpoint(\"%s\", tag=\"%s\")", root, tag);
        break;
    case CP_CKPT_HF:
        snprintf(buf, sizeof buf, "--resume_from_checkpoint %s", path);
        break;
    case CP_CKPT_MEGATRON:
        snprintf(buf, sizeof buf, "echo %lld > %s/latest_checkpointed_iteration.txt", (long long)e->step, root);
        break;
    case CP_CKPT_DCP:
        snprintf(buf, sizeof buf, "dcp.load(state_dict, checkpoint_id=\"%s\")", path);
        break;
    default:
        snprintf(buf, sizeof buf, "load the files in %s", path);
        break;
    }
    free(path);
    free(root);
    return cp_strdup(buf);
}

static void finish(cp_ckpt_report *r)
{
    decide(r);
    free(r->resume);
    r->resume = resume_hint(r);
}

bool cp_ckpt_mark_saving(cp_ckpt_report *r, int64_t step)
{
    bool found = false;
    for (size_t i = 0; step >= 0 && i < r->n_entries; i++) {
        cp_ckpt_entry *e = &r->entries[i];
        if (e->step != step)
            continue;
        ck_walk w = {.r = r};
        ck_problem(&w, i, "the run failed while saving this step (the logs show the save began and never ended)");
        found = true;
    }
    if (found) {
        finish(r);
        char buf[512];
        const char *safe = r->newest_safe >= 0 ? r->entries[r->newest_safe].path : NULL;
        snprintf(buf, sizeof buf, "The run failed while saving step %lld; %s%s.", (long long)step,
                 safe ? "resume from " : "no checkpoint is safe to resume from", safe ? safe : "");
        ck_walk w = {.r = r};
        ck_warn(&w, "%s", buf);
    }
    return found;
}

static void pointer_warning(ck_walk *w)
{
    cp_ckpt_report *r = w->r;
    if (!r->latest)
        return;
    const char *safe = r->newest_safe >= 0 ? r->entries[r->newest_safe].path : NULL;
    if (r->latest_index < 0) {
        ck_warn(w, "the pointer names %s, which does not exist%s%s", r->latest, safe ? "; resume from " : "",
                safe ? safe : "");
    } else if (r->entries[r->latest_index].verdict == CP_CKPT_UNSAFE) {
        ck_warn(w, "the pointer names %s, which is unsafe%s%s", r->latest, safe ? "; resume from " : "",
                safe ? safe : "");
    }
}

int cp_ckpt_status(const cp_ckpt_report *r)
{
    if (r->newest < 0 || r->entries[r->newest].verdict != CP_CKPT_SAFE)
        return 1;
    if (r->latest && (r->latest_index < 0 || r->entries[r->latest_index].verdict != CP_CKPT_SAFE))
        return 1;
    for (size_t i = 0; i < r->n_entries; i++)
        if (r->entries[i].verdict == CP_CKPT_UNSAFE)
            return 1;
    return 0;
}

void cp_ckpt_report_free(cp_ckpt_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_entries; i++) {
        cp_ckpt_entry *e = &r->entries[i];
        free(e->path);
        free(e->root);
        for (size_t j = 0; j < e->n_problems; j++)
            free(e->problems[j]);
        free(e->problems);
        for (size_t j = 0; j < e->n_notes; j++)
            free(e->notes[j]);
        free(e->notes);
    }
    free(r->entries);
    for (size_t i = 0; i < r->n_warnings; i++)
        free(r->warnings[i]);
    free(r->warnings);
    free(r->dir);
    free(r->latest);
    free(r->resume);
    free(r);
}

int cp_ckpt_inspect(const char *dir, cp_ckpt_report **out, char *err, size_t errlen)
{
    return cp_ckpt_inspect_opts(dir, NULL, out, err, errlen);
}

int cp_ckpt_inspect_opts(const char *dir, const cp_ckpt_opts *opts, cp_ckpt_report **out, char *err, size_t errlen)
{
    *out = NULL;
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: not a folder", dir);
        return -1;
    }
    ck_walk w = {.opts = {0, -1}};
    if (opts)
        w.opts = *opts;
    if (!(w.r = calloc(1, sizeof *w.r)) || !(w.r->dir = cp_strdup(dir))) {
        free(w.r);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (!walk_self(&w, dir))
        walk_dir(&w, dir, "", 0);
    compare_peers(&w);
    check_stale(&w);
    for (size_t i = 0; i < w.n_recs; i++)
        free(w.recs[i].name);
    free(w.recs);
    free(w.seen);
    if (w.nomem) {
        cp_ckpt_report_free(w.r);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (w.capped)
        ck_warn(&w, "stopped after %d checkpoints or %d files; the rest was not checked", CP_CKPT_MAX_ENTRIES,
                CP_CKPT_MAX_FILES);
    if (w.r->n_entries)
        qsort(w.r->entries, w.r->n_entries, sizeof *w.r->entries, cmp_entry);
    finish(w.r);
    pointer_warning(&w);
    if (w.opts.saving_step >= 0)
        cp_ckpt_mark_saving(w.r, w.opts.saving_step);
    *out = w.r;
    return 0;
}
