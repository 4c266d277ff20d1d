/* pipeline.h - a scan on every core, in input order.
 *
 * The reader's thread puts the chunks into the slots of a small ring, as
 * many in one slot as fit in about a megabyte (a folder of small rank
 * logs would otherwise cost a thread wake-up per file): it hands its
 * buffer over and takes the one the chunk's place in the slot held back
 * (or copies the chunk, through cp_pipeline_chunk).
 * Worker threads (one per core) take the slots that are not yet prepared,
 * any order, and do the work that needs no incident state: the vectorscan
 * pass (each worker has its own cp_scanner) and cp_prepare (line numbers,
 * prefixes, progress thinning). The slots reach the incident strictly in
 * ring order: whichever worker finds the oldest slot prepared and nobody
 * applying takes the turn and feeds it (cp_incident_feed_prepared). Stream
 * starts, ends and warnings travel through the same ring, so the incident
 * sees exactly the sequence a single-threaded scan would, and the result
 * is the same by construction.
 *
 * Small inputs never start threads: the first PIPE_THRESHOLD bytes are
 * processed inline. Memory: the chunk buffers of each slot (about a
 * megabyte of small chunks, or one large one) with their hit lists.
 * A chunk comes with the newline map the reader built (reader.h): the slot
 * swaps it for its own old one, and the worker's scan reads it.
 * A chunk of a mapped file (cp_pipeline_chunk_mapped) needs no buffer: the
 * slot holds a reference to the mapping instead and gives it back, which
 * drops the chunk's pages, as soon as the incident has taken the chunk.
 * CULPRIT_THREADS=N sets the number of workers (default: online cores, at
 * most 8); CULPRIT_NO_THIN=1 turns progress thinning off. Neither changes
 * the result: tests/synth/synth.sh checks that.
 */
#ifndef CULPRIT_PIPELINE_H
#define CULPRIT_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "incident.h"
#include "mapping.h"

typedef struct cp_pipeline cp_pipeline;

/* Called on the reader's thread after each chunk with the bytes read so far. */
typedef void (*cp_pipeline_progress_fn)(void *user, uint64_t bytes);

/* The caller owns *out; `inc` must outlive it. */
int cp_pipeline_new(cp_pipeline **out, cp_incident *inc, cp_matcher *m);
void cp_pipeline_set_progress(cp_pipeline *p, cp_pipeline_progress_fn fn, void *user);
/* Each returns 0, or -1 once anything failed (the scan should stop). */
int cp_pipeline_begin(cp_pipeline *p, const char *path);
/* `newlines`, when not NULL, maps the chunk's '\n' bytes; the pipeline
 * may swap it for another map (cp_nlmap_swap), as reader.h allows. */
int cp_pipeline_chunk(cp_pipeline *p, const char *data, size_t len, uint64_t first_line, cp_nlmap *newlines);
/* Like cp_pipeline_chunk, but keeps the chunk without copying it, as the
 * reader's chunk_swap (reader.h) allows: the chunk is (*buf)[off, off +
 * len) in the malloc'd *buf of `size` bytes, which the pipeline then owns;
 * *buf becomes a buffer of at least `size` bytes that the caller owns.
 * Small inputs are fed inline and *buf stays as it is. */
int cp_pipeline_chunk_swap(cp_pipeline *p, char **buf, size_t size, size_t off, size_t len,
                           uint64_t first_line, cp_nlmap *newlines);
/* Like cp_pipeline_chunk, for a chunk in a mapped file, without a copy:
 * takes the caller's reference to `m` (success or not) and releases it
 * with cp_mapping_release(m, data, len) once the chunk has reached the
 * incident (inline: before returning). */
int cp_pipeline_chunk_mapped(cp_pipeline *p, cp_mapping *m, const char *data, size_t len,
                             uint64_t first_line, cp_nlmap *newlines);
int cp_pipeline_end(cp_pipeline *p);
int cp_pipeline_warn(cp_pipeline *p, const char *path, const char *message);
/* Waits until every queued operation has reached the incident. Returns 0
 * or -1 when any of them failed. */
int cp_pipeline_finish(cp_pipeline *p);
void cp_pipeline_free(cp_pipeline *p);

#endif
