/* reader_int.h - what the reader's files share: the run, sources, the
 * line pump's state and the helpers each part calls in another. Internal
 * to reader.c (sources, sniffing, streams), reader_pump.c (text streams
 * into chunks of whole lines), reader_archive.c and reader_dir.c. */
#ifndef CULPRIT_READER_INT_H
#define CULPRIT_READER_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mapping.h"
#include "reader.h"

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

#define KIB ((size_t)1024)
#define MIB (1024 * KIB)

enum {
    HEAD_SIZE = 64 * 1024,  /* sniffed for magic bytes and binary content */
    IN_BLOCK = 64 * 1024,   /* compressed bytes handed to libarchive per call */
    MAX_NEST = 3,           /* archive inside archive inside archive */
    MSG_SIZE = 512,
    CHUNKS_PER_FILE = 8,    /* a file is cut into at least this many chunks (chunk_cap) */
    MAP_MIN = HEAD_SIZE,    /* the least map_min: a mapped file is judged on its
                               head block like any other */
    MAP_SETTLED_S = 5,      /* files modified more recently are read (see
                               worth_mapping) */
};

/* Larger option values are clamped: the line buffer is chunk_size +
 * max_line, allocated once, and must stay a sane size. */
#define MAX_OPT_SIZE (256 * MIB)
/* The ratio check starts only after this much output: the first blocks of
 * any stream have a misleading ratio (headers, read-ahead). */
#define RATIO_GRACE (4 * MIB)
/* A directory listing is kept whole so it can be sorted; beyond these it is
 * cut (and the cut is reported). */
#define MAX_DIR_ENTRIES ((size_t)4 * 1000 * 1000)
#define MAX_DIR_BYTES (512 * MIB)
/* Visited directories (for symlink cycles); slots in the hash set. */
#define MAX_SEEN_SLOTS ((size_t)1 << 23)

typedef struct run run;
typedef struct archive_in archive_in;

/* Where a stream's bytes come from. `a == NULL`: the file descriptor. */
typedef struct source {
    run *r;
    int fd;
    struct archive *a;
    archive_in *in;      /* the archive's input side, for the ratio */
    uint64_t out;        /* bytes produced so far */
    uint64_t in_start;   /* in->consumed when this member began */
    bool failed;         /* sticky; msg says why */
    bool fatal;          /* the archive cannot go on either */
    bool reported;
    char msg[MSG_SIZE];
} source;

/* libarchive's view of the bytes under an archive: first the head block
 * that was sniffed, then the parent source. */
struct archive_in {
    source *parent;
    unsigned char *block;
    size_t pending;      /* bytes of the head still to hand over */
    uint64_t consumed;   /* compressed bytes handed to libarchive */
    uint64_t produced;   /* decompressed bytes taken out of it */
};

typedef struct seen_slot {
    dev_t dev;
    ino_t ino;
    bool used;
} seen_slot;

typedef struct seen_set {
    seen_slot *slot;
    size_t cap, n;
} seen_set;

struct run {
    cp_reader_opts o;
    const cp_reader_cb *cb;
    void *user;
    char *buf;
    size_t cap;
    cp_nlmap newlines;   /* the '\n' bytes of the chunk being delivered */
    bool have_map;       /* newlines maps it (false: out of memory) */
    size_t chunk_now;    /* target size of the next chunk (first_chunk, doubling) */
    uint64_t file_size;  /* size of the plain file being read; 0: stdin, unknown */
    seen_set seen;
    int next_index;
    int delivered;       /* streams that delivered text */
    int failed;          /* inputs that could not be read */
    int open_ahead;      /* descriptors opened ahead, not yet taken */
    int ahead_max;       /* and how many may be (rd_ahead_max) */
    char path[PATH_MAX];
};

/* State of one text stream while it is pumped: from `src` through r->buf
 * (the read path), or straight from a mapped file (`map`). */
typedef struct pump {
    run *r;
    source *src;         /* read path: where more bytes come from */
    cp_mapping *map;     /* mapped path: the file, never written to */
    const char *path;
    uint64_t line;       /* number of the next line to deliver */
    size_t d, s, len;    /* bytes(): [0, d) delivered, [d, s) whole lines
                            checked for length, [s, len) not yet looked at;
                            mapped, offsets in the file and [d, len) the
                            window the read path's buffer would hold */
    size_t chunk_cap;    /* chunks of this stream are at most this long */
    size_t nl_at;        /* mapped path: the offset of a byte to take as '\n',
                            which the read path writes into its buffer (a
                            cut line's end, or one past a last line that has
                            none); SIZE_MAX when none */
    bool delivered, warned_long, skipping, stopped;
} pump;

enum kind { K_TEXT, K_BINARY, K_NULS, K_ARCHIVE };

/* ---- shared between the reader's files ---------------------------- */

/* reader.c */
PRINTF_LIKE(3, 4) void rd_warn(run *r, const char *path, const char *fmt, ...);
/* A warning about an input that could not be read; the count decides
 * whether the run as a whole failed. */
PRINTF_LIKE(3, 4) void rd_fail(run *r, const char *path, const char *fmt, ...);
/* strerror_r's text for err (strerror is not thread-safe). */
const char *rd_errtext(int err, char *buf, size_t n);
/* Up to n bytes from the source; 0 at its end, -1 on failure (s->msg). */
ssize_t rd_src_read(source *s, char *buf, size_t n);
/* A stream: sniffed, then pumped as text, opened as an archive, or skipped. */
void rd_read_stream(run *r, source *src, const char *path, int depth);
/* reader_prefetch.c: opens a regular file the reader reaches soon (as
 * rd_read_file would) and asks the kernel to start reading its head.
 * Returns the descriptor, for rd_visit when the file's turn comes, or -1:
 * a file that cannot be opened is left to the read that reports it. */
int rd_prefetch_open(const char *path);

/* Inputs opened ahead, by their index in a list the reader goes through
 * in order (a folder's sorted entries, the arguments): entry i is opened
 * when the reader is at most RD_AHEAD entries before it, and handed to
 * rd_read_file when its turn comes. RD_AHEAD_MAX_OPEN descriptors at
 * most are open ahead in the whole run (fewer under a low limit:
 * rd_ahead_max), so that a deep tree of folders, each with its own list,
 * cannot run the reader out of them. */
enum { RD_AHEAD = 8, RD_AHEAD_RING = RD_AHEAD + 1, RD_AHEAD_MAX_OPEN = 64 };

typedef struct rd_ahead {
    int fd[RD_AHEAD_RING];   /* by index mod RD_AHEAD_RING; -1: none */
    size_t next;             /* the next index to consider opening */
} rd_ahead;

void rd_ahead_init(rd_ahead *a);
/* How many descriptors a run may open ahead: RD_AHEAD_MAX_OPEN, or a
 * quarter of the process's limit when that is less. */
int rd_ahead_max(void);
/* Whether another descriptor may be opened ahead. */
bool rd_ahead_room(const run *r);
/* Opens the regular file `path`, entry i, ahead. */
void rd_ahead_put(run *r, rd_ahead *a, size_t i, const char *path);
/* rd_visit for entry i (its path in r->path), with the descriptor opened
 * ahead for it. */
void rd_ahead_visit(run *r, rd_ahead *a, size_t i, size_t len);
/* Closes what was opened ahead for entry i, which is not read. */
void rd_ahead_drop(run *r, rd_ahead *a, size_t i);
/* Opens an input file for reading, never waiting on a FIFO; -1 (errno)
 * when it cannot be. */
int rd_open_file(const char *path);
/* A file named in the arguments or found in a folder; `ahead` is its
 * descriptor if it was opened ahead (rd_ahead), else -1. Closes it. */
void rd_read_file(run *r, const char *path, int ahead);

/* reader_pump.c: a text stream, its first `len` bytes in r->buf; `size`
 * is the file's (0: unknown). */
void rd_read_text(run *r, source *src, const char *path, size_t len, uint64_t size);
/* One text stream, read or mapped: begin, the chunks, end. */
void rd_read_lines(pump *st);
/* The longest chunk of a stream of `size` bytes (0: unknown). */
size_t rd_chunk_cap(const run *r, uint64_t size);

/* reader_archive.c: the archive whose first head_len bytes are in r->buf. */
void rd_read_archive(run *r, source *src, const char *path, size_t head_len, int depth);

/* reader_dir.c: the path in r->path[0, len), a file or a folder; `ahead`
 * is its descriptor if it was opened ahead (rd_ahead), else -1: read if
 * the path is still a regular file, closed in any case. */
void rd_visit(run *r, size_t len, int ahead);

#endif
