/* analyze.h - from an incident to a diagnosis.
 *
 * The root cause is the earliest distinct error that is not a consequence
 * of another: rule roles separate roots from cascades, timestamps (with a
 * tolerance for per-host clock skew) order them, and when nothing but
 * cascades was printed (a hang), the watchdog's sequence numbers, PyTorch's
 * desync report and the ranks that stayed silent name the culprit.
 * Algorithm and tie-breaks: docs/internals.md.
 */
#ifndef CULPRIT_ANALYZE_H
#define CULPRIT_ANALYZE_H

#include "diagnosis.h"
#include "incident.h"

/* Fills *d (which the caller zeroes and later frees with
 * cp_diagnosis_free). Returns 0, or -1 when out of memory. */
int cp_analyze(cp_diagnosis *d, cp_incident *inc);

#endif
