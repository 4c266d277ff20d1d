/* drain.h - the drain list: hosts and GPUs the hardware and infrastructure
 * evidence says to take out of service, each with its reason and the Slurm
 * command an operator would run. culprit prints the commands; it never
 * runs them.
 *
 * Which evidence drains is data: a rule's `drain = gpu|node` and
 * `drain_after = N` (docs/rules.md). Internal to the library.
 */
#ifndef CULPRIT_DRAIN_H
#define CULPRIT_DRAIN_H

#include "diagnosis.h"
#include "incident.h"

enum {
    CP_DRAIN_REASON_MAX = 160,  /* Slurm keeps reasons short */
    CP_DRAIN_HOSTS_MAX = 4096   /* hosts a drain list names */
};

/* Fills d->drain from the incident's events (after cp_ranks_resolve and
 * cp_ranks_from_subjects). A rule with drain_after > 1 drains a host only
 * when its lines concentrate there: at least drain_after of them, and at
 * least twice as many as on any other host. Returns 0, or -1 when out of
 * memory (the list is then partial). */
int cp_drain_build(cp_diagnosis *d, const cp_incident *inc);

/* The Slurm command that drains `host` with `reason` ("culprit: " is
 * prefixed, double quotes become single ones); caller frees. */
char *cp_drain_command(const char *host, const char *reason);

#endif
