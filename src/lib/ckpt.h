/* ckpt.h - is the checkpoint safe to resume from?
 *
 * Walks a checkpoint folder, recognises the layouts of DeepSpeed,
 * torch.distributed.checkpoint (DCP), the Hugging Face Trainer, Megatron-LM
 * and plain numbered step folders, checks that every shard a layout needs
 * is there, and checks each file's integrity without Python (torch.save
 * ZIPs through libarchive's seekable zip reader, safetensors headers), then
 * gives each checkpoint a verdict. Reads only headers and central
 * directories, so a tree of hundreds of shards takes seconds.
 * docs/checkpoints.md describes the layouts, the checks and the verdicts.
 * Internal to the library; the public face is culprit_ckpt_* in culprit.h.
 */
#ifndef CULPRIT_CKPT_H
#define CULPRIT_CKPT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

enum {
    CP_CKPT_MAX_DEPTH = 6,        /* folder levels walked below DIR */
    CP_CKPT_MAX_ENTRIES = 4096,   /* checkpoints listed */
    CP_CKPT_MAX_FILES = 200000,   /* files looked at in all */
    CP_CKPT_MAX_PROBLEMS = 64,    /* problems kept per checkpoint */
    CP_CKPT_STALE_SECONDS = 3600  /* a shard this much older than its pointer is stale */
};

typedef enum cp_ckpt_format {
    CP_CKPT_DEEPSPEED, CP_CKPT_DCP, CP_CKPT_HF, CP_CKPT_MEGATRON, CP_CKPT_GENERIC
} cp_ckpt_format;

typedef enum cp_ckpt_verdict { CP_CKPT_UNKNOWN = 0, CP_CKPT_SAFE, CP_CKPT_UNSAFE } cp_ckpt_verdict;

typedef struct cp_ckpt_entry {
    char *path;              /* relative to the inspected folder */
    char *root;              /* the folder holding it and its pointer, relative ("." for DIR) */
    int64_t step;            /* -1 unknown */
    cp_ckpt_format format;
    cp_ckpt_verdict verdict;
    char **problems;         /* one sentence each; any makes it unsafe */
    size_t n_problems;
    char **notes;            /* what was checked and how, or could not be */
    size_t n_notes;
    size_t n_files;
    uint64_t bytes;
    time_t mtime;            /* newest file */
    bool unverified;         /* some file could not be checked: no safe verdict */
} cp_ckpt_entry;

struct culprit_ckpt_report {
    char *dir;               /* as given */
    cp_ckpt_entry *entries;  /* by root, then step, then path */
    size_t n_entries;
    char *latest;            /* what the pointer names (relative path), or NULL */
    cp_ckpt_format latest_format;
    int latest_index;        /* entry the pointer names, -1 none */
    int newest_safe;         /* entry, -1 none */
    int newest;              /* entry with the largest step, -1 none */
    char **warnings;         /* about the tree as a whole */
    size_t n_warnings;
    char *resume;            /* how to resume from newest_safe, or NULL */
};
typedef struct culprit_ckpt_report cp_ckpt_report;

typedef struct cp_ckpt_opts {
    int world_size;          /* from the logs; 0 unknown */
    int64_t saving_step;     /* the logs say the run died saving this step; -1 none */
} cp_ckpt_opts;

/* Inspects DIR. `opts` may be NULL. Returns 0 and a report the caller
 * frees with cp_ckpt_report_free, or -1 with a message in err (DIR missing
 * or unreadable, out of memory). A folder without checkpoints is a report
 * with no entries. */
int cp_ckpt_inspect(const char *dir, cp_ckpt_report **out, char *err, size_t errlen);
int cp_ckpt_inspect_opts(const char *dir, const cp_ckpt_opts *opts, cp_ckpt_report **out, char *err, size_t errlen);
void cp_ckpt_report_free(cp_ckpt_report *r);

/* Marks the checkpoint of `step` unsafe because the run died saving it and
 * recomputes the newest safe one. Returns true when such a checkpoint exists. */
bool cp_ckpt_mark_saving(cp_ckpt_report *r, int64_t step);

/* 0 when the newest checkpoint is safe and none is unsafe, else 1. */
int cp_ckpt_status(const cp_ckpt_report *r);

const char *cp_ckpt_format_name(cp_ckpt_format f);

/* The step a checkpoint name or a log line names (global_step600,
 * checkpoint-600, iter_0000600, step_600, ckpt-600, epoch_3), or -1. */
int64_t cp_ckpt_step_in_text(const char *text);

/* ---- file integrity (ckpt_file.c) ---------------------------------------- */

typedef enum cp_file_check {
    CP_FILE_OK = 0,
    CP_FILE_BAD,             /* damaged: the message says how */
    CP_FILE_UNCHECKED        /* a format we cannot check (legacy pickle) */
} cp_file_check;

/* torch.save ZIP: walks the central directory and every entry's bounds. */
cp_file_check cp_ckpt_check_zip(const char *path, char *msg, size_t n);
/* safetensors: header length, JSON, data_offsets, total size. */
cp_file_check cp_ckpt_check_safetensors(const char *path, char *msg, size_t n);
/* By file name: .pt/.pth/.bin -> zip, .safetensors, otherwise OK. */
cp_file_check cp_ckpt_check_file(const char *path, char *msg, size_t n);

/* ---- output (ckpt_render.c) -------------------------------------------- */

/* The "culprit.ckpt/1" object. Caller decrefs. */
json_t *cp_ckpt_json(const cp_ckpt_report *r);
/* A short section for the text report (markdown = false) or Markdown. */
void cp_ckpt_print(const cp_ckpt_report *r, FILE *out, bool markdown, bool section);

#endif
