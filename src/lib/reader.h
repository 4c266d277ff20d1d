/* reader.h - turns PATH arguments into streams of whole lines.
 *
 * A PATH is a file, a folder (walked recursively, in sorted order), an
 * archive (tar, tar.gz/tgz, zip, ...) or a compressed file (.gz, .zst,
 * .xz, .bz2) recognised by its magic bytes through libarchive, or "-" for
 * standard input. Each file (or archive member) is one stream. The reader
 * never holds a whole file: it hands over buffers of complete lines.
 *
 * A regular file of 64 KiB or more that has not been modified for a few
 * seconds is mapped (mapping.h) rather than read: its chunks are then
 * pointers into the mapping wherever the file's bytes already are what a
 * chunk must be, and copies otherwise. Either way the chunks, their line
 * numbers and the warnings are the same. culprit itself sets no_map below
 * unless CULPRIT_MMAP=1 (culprit.c: reading costs less where it was
 * measured). If a mapped file shrinks while it is read, the run
 * ends with a message naming it and status 2 (mapping.h).
 *
 * Bad input never stops the run: a binary file, an unreadable file, a
 * truncated archive, a FIFO or device, a symlink loop is reported through
 * `warn` (naming the file) and the rest is read.
 */
#ifndef CULPRIT_READER_H
#define CULPRIT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapping.h"
#include "util/nlmap.h"

typedef struct cp_reader_opts {
    size_t max_line;          /* bytes of a line kept; longer lines are cut (default 64 KiB) */
    size_t chunk_size;        /* target size of a chunk (default 1 MiB) */
    size_t first_chunk;       /* target size of the run's first chunk; each next one
                                 doubles up to chunk_size (default: chunk_size) */
    uint64_t max_member_bytes;/* decompressed bytes read from one archive member or
                                 compressed file (default 64 GiB); the rest is skipped with a warning */
    double max_ratio;         /* decompression ratio above which an archive member is abandoned
                                 as a bomb (default 1000); 0 = no limit */
    size_t map_min;           /* smaller files are read, larger ones mapped (default
                                 1 MiB, at least 64 KiB); see worth_mapping */
    bool no_map;              /* read every file, map none (for tests and comparisons) */
} cp_reader_opts;

typedef struct cp_stream_info {
    const char *path;   /* display path: "logs/rank_3.log", "run.tgz:node1/rank_3.log", "-" */
    int index;          /* 0, 1, 2 ... in the order streams are read */
} cp_stream_info;

typedef struct cp_reader_cb {
    /* A stream starts. Return nonzero to skip it. */
    int (*begin)(void *user, const cp_stream_info *info);
    /* `data` holds `len` bytes of complete lines, each ending in '\n' (the
     * reader adds one after a last line that has none). NUL bytes have
     * been replaced by spaces. `first_line` is the 1-based number of the
     * first line of the chunk in its stream. The buffer is only valid
     * during the call, and may be a read-only mapping of the file.
     * `newlines` maps the chunk's '\n' bytes (nlmap.h), built on the pass
     * that counted them, or is NULL (out of memory); a consumer that keeps
     * the chunk may keep the map with it by swapping in a map of its own
     * (cp_nlmap_swap), which the reader then builds the next one in.
     * Return nonzero to stop reading this stream. */
    int (*chunk)(void *user, const char *data, size_t len, uint64_t first_line, cp_nlmap *newlines);
    /* The stream ended (also after an error in its middle). */
    void (*end)(void *user, const cp_stream_info *info);
    /* Something about an input the user should know; `path` names it. */
    void (*warn)(void *user, const char *path, const char *message);
    /* Optional: streams another module reads whole (Flight Recorder dumps,
     * which are pickles or one JSON object, not lines). `special` sees the
     * first bytes of every stream before they are judged text or binary;
     * nonzero takes the stream: `whole` then gets all of it (at most
     * CP_READER_MAX_WHOLE bytes; `cut` says more was left), and begin,
     * chunk and end are not called for it. */
    int (*special)(void *user, const char *path, const unsigned char *head, size_t head_len);
    void (*whole)(void *user, const char *path, const unsigned char *data, size_t len, int cut);
    /* Optional: for a consumer that keeps chunks instead of copying them.
     * The reader calls it instead of `chunk` when that saves copying (when
     * the bytes after the chunk in its buffer are fewer than the chunk's).
     * The chunk is (*buf)[off, off + len); *buf is the reader's buffer,
     * malloc'd, of `size` bytes (the same for the whole run). To keep it,
     * the consumer stores in *buf another malloc'd buffer of at least
     * `size` bytes, which the reader then owns (and frees), and owns the
     * kept one from then on. The reader copies the bytes after the chunk
     * out of the kept buffer as soon as the call returns: the consumer must
     * not write there before. Leaving *buf alone is not keeping it.
     * Otherwise as `chunk`, which must be set too. */
    int (*chunk_swap)(void *user, char **buf, size_t size, size_t off, size_t len, uint64_t first_line,
                      cp_nlmap *newlines);
    /* Optional: for a consumer that keeps chunks of mapped files. The
     * reader calls it instead of `chunk` and `chunk_swap` for a chunk that
     * is bytes of the mapping `m` as they are: data[0, len) lies in m. The
     * call hands the consumer one reference to m, which it must give back
     * with cp_mapping_release(m, data, len) once it no longer reads the
     * bytes, during the call or any time later; until then they stay
     * valid. Otherwise as `chunk`, which must be set too. */
    int (*chunk_mapped)(void *user, cp_mapping *m, const char *data, size_t len, uint64_t first_line,
                        cp_nlmap *newlines);
} cp_reader_cb;

#define CP_READER_MAX_WHOLE ((size_t)256 << 20)

/* Sets the defaults above. */
void cp_reader_opts_default(cp_reader_opts *opts);

/* Reads every path in order, calling cb. Returns the number of streams
 * that delivered at least one byte of text, or -1 if a path could not be
 * read at all and nothing else could be read either. */
int cp_reader_run(const char *const *paths, size_t n_paths,
                  const cp_reader_opts *opts, const cp_reader_cb *cb, void *user);

#endif
