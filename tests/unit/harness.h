/* harness.h - the shared set-up of the pipeline tests (events, analysis):
 * the real rule catalog and matcher, loaded once per test group, and a
 * helper that feeds in-memory streams through an incident. */
#ifndef CULPRIT_TEST_HARNESS_H
#define CULPRIT_TEST_HARNESS_H

#include <stddef.h>

#include "catalog.h"
#include "diagnosis.h"
#include "incident.h"
#include "matcher.h"

typedef struct stream_in {
    const char *path;  /* display path; folders and names can carry identity */
    const char *text;  /* whole lines, each ending in '\n' */
} stream_in;

extern cp_catalog g_cat;
extern cp_matcher *g_matcher;

/* cmocka group set-up and tear-down: the catalog in CULPRIT_TEST_RULES. */
int harness_load_catalog(void **state);
int harness_free_catalog(void **state);

/* An incident and its diagnosis; cmocka set-up/tear-down per test, so a
 * failing assertion leaks nothing. */
typedef struct fixture {
    cp_incident inc;
    cp_diagnosis d;
} fixture;

int new_fixture(void **state);
int free_fixture(void **state);

/* Initialises *inc and feeds each stream as one chunk starting at line 1. */
void harness_scan(cp_incident *inc, const stream_in *streams, size_t n);

#endif
