/* ckpt_int.h - what the checkpoint walker (ckpt.c) shares with the layout
 * checks (ckpt_layout.c). Internal to those two files. */
#ifndef CULPRIT_CKPT_INT_H
#define CULPRIT_CKPT_INT_H

#include <sys/types.h>

#include "ckpt.h"

typedef struct ck_file {
    char *name;
    int64_t size;
    time_t mtime;
    bool dir;
} ck_file;

/* One folder's entries, sorted by name. */
typedef struct ck_list {
    ck_file *v;
    size_t n;
} ck_list;

/* A checkpoint folder found among a root's children. */
typedef struct ck_cand {
    const char *name;
    char *abs;
    ck_list list;
    cp_ckpt_format format;
    bool staging;          /* tmp-checkpoint-*: an interrupted HF save */
    size_t entry;
} ck_cand;

typedef struct ck_rec {    /* a weight file, for the size comparisons */
    size_t entry;
    char *name;            /* relative to its checkpoint */
    int64_t size;
    time_t mtime;
} ck_rec;

typedef struct ck_walk {
    cp_ckpt_report *r;
    cp_ckpt_opts opts;
    size_t files_seen;
    ck_rec *recs;
    size_t n_recs, cap_recs;
    struct ck_seen { dev_t dev; ino_t ino; } *seen;
    size_t n_seen, cap_seen;
    bool nomem, capped;
} ck_walk;

const ck_file *ck_find(const ck_list *l, const char *name);
int ck_list_dir(const char *path, ck_list *out);
void ck_list_free(ck_list *l);
char *ck_join(const char *a, const char *b);

__attribute__((format(printf, 3, 4)))
void ck_problem(ck_walk *w, size_t entry, const char *fmt, ...);
__attribute__((format(printf, 3, 4)))
void ck_note(ck_walk *w, size_t entry, const char *fmt, ...);
__attribute__((format(printf, 2, 3)))
void ck_warn(ck_walk *w, const char *fmt, ...);

/* Checks every plain file of `l` (integrity, empty files) and records the
 * weight files; `prefix` is prepended to names ("mp_rank_00/"). */
void ck_check_files(ck_walk *w, size_t entry, const char *abs, const char *prefix, const ck_list *l);

/* Layout checks (ckpt_layout.c). `sib` are the root's candidates. */
int ck_ds_dp_count(const ck_list *l);
void ck_ds_tag(ck_walk *w, ck_cand *c, const ck_cand *sib, size_t n_sib);
void ck_dcp(ck_walk *w, ck_cand *c);
void ck_hf(ck_walk *w, ck_cand *c);
void ck_megatron(ck_walk *w, ck_cand *c);
void ck_generic(ck_walk *w, ck_cand *c, const ck_cand *sib, size_t n_sib);

#endif
