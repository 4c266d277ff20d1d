/* summary.h - an incident as a compact JSON file ("culprit.summary/1").
 *
 * `culprit scan --summary` writes what one node's logs taught (streams,
 * writers and their state, events and their evidence, identity facts, the
 * failure table, world size, warnings) without the bytes of log; `culprit
 * diagnose` merges such files as if it had read the logs itself, in the
 * order given. Memory and size grow with ranks and findings, not bytes.
 * Rules are named by id, so a summary survives a catalog that renumbers;
 * events of rules the reading catalog lacks are dropped. docs/summary.md
 * describes the fields.
 */
#ifndef CULPRIT_SUMMARY_H
#define CULPRIT_SUMMARY_H

#include <stdbool.h>
#include <stdio.h>

#include "incident.h"

#define CP_SUMMARY_SCHEMA "culprit.summary/1"

/* Writes `inc` (a finished scan) as JSON. Returns 0 or -1. */
int cp_summary_write(const cp_incident *inc, FILE *out);

/* True when the file at `path` is a summary: a JSON object whose first key
 * is "schema" with a value starting "culprit.summary/". Reads a few bytes. */
bool cp_summary_detect(const char *path);

/* Appends the summary's streams, writers, events and facts to `inc`,
 * renumbering stream and writer indices. Returns 0, or -1 with a message
 * in `error`. */
int cp_summary_merge(cp_incident *inc, const char *path, char *error, size_t error_len);

#endif
