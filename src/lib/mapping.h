/* mapping.h - a regular file mapped read-only, shared by reference.
 *
 * The reader maps a log file instead of read()-ing it into buffers: the
 * kernel then copies nothing, and the chunks it hands out are pointers into
 * the mapping (reader.h). A chunk may outlive the reader's call (the
 * pipeline keeps it in a slot until the incident has taken it), so the
 * mapping is counted: whoever keeps a chunk holds a reference and gives it
 * back with cp_mapping_release, which also drops the chunk's pages from
 * this process (the page cache keeps them), so that resident memory stays
 * flat however large the file. The last release unmaps.
 *
 * A file that shrinks while mapped makes every access past its new end
 * raise SIGBUS. While any mapping is alive a SIGBUS handler is installed
 * that prints "culprit: PATH shrank while being read; run again" for the
 * mapping the faulting address lies in and exits with status 2 (a fault
 * outside every mapping goes to the handler that was there before). The
 * reader lowers the odds first: it maps only files that have not been
 * modified for a few seconds (reader.c).
 */
#ifndef CULPRIT_MAPPING_H
#define CULPRIT_MAPPING_H

#include <stddef.h>

typedef struct cp_mapping cp_mapping;

/* Maps `size` bytes (> 0) of the regular file open on `fd`; `path` names it
 * in the SIGBUS message. Returns NULL when the file cannot be mapped, for
 * whatever reason (the caller reads it instead). The caller holds the one
 * reference; the mapping does not need `fd` once this returns. */
cp_mapping *cp_mapping_open(int fd, size_t size, const char *path);

/* The mapped bytes (read-only) and their number. */
const char *cp_mapping_data(const cp_mapping *m);
size_t cp_mapping_size(const cp_mapping *m);

/* One more reference, for a holder that keeps bytes of the mapping. */
void cp_mapping_ref(cp_mapping *m);

/* Drops the pages of data[0, len) (bytes of m) from this process's memory,
 * except the page holding data[len], where the next bytes begin: a range
 * consumed in file order thus drops every page once. Reading the bytes
 * again is safe (the pages come back from the page cache), only slower. */
void cp_mapping_drop(cp_mapping *m, const char *data, size_t len);

/* cp_mapping_drop(m, data, len), then gives back one reference; the last
 * one unmaps and frees m. Accepts m == NULL. */
void cp_mapping_release(cp_mapping *m, const char *data, size_t len);

#endif
