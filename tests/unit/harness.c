#include "harness.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

cp_catalog g_cat;
cp_matcher *g_matcher;

int harness_load_catalog(void **state)
{
    (void)state;
    char err[512];
    cp_catalog_init(&g_cat);
    if (cp_catalog_load_dir(&g_cat, CULPRIT_TEST_RULES) <= 0) {
        fprintf(stderr, "rules: %s\n", g_cat.error);
        return -1;
    }
    if (cp_matcher_new(&g_matcher, &g_cat, err, sizeof err) != 0) {
        fprintf(stderr, "matcher: %s\n", err);
        return -1;
    }
    return 0;
}

int harness_free_catalog(void **state)
{
    (void)state;
    cp_matcher_free(g_matcher);
    cp_catalog_free(&g_cat);
    return 0;
}

void harness_scan(cp_incident *inc, const stream_in *streams, size_t n)
{
    assert_int_equal(cp_incident_init(inc, &g_cat, g_matcher), 0);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(cp_incident_begin_stream(inc, streams[i].path), 0);
        assert_int_equal(cp_incident_feed(inc, streams[i].text, strlen(streams[i].text), 1, NULL), 0);
        cp_incident_end_stream(inc);
    }
}

int new_fixture(void **state)
{
    *state = calloc(1, sizeof(fixture));
    return *state ? 0 : -1;
}

int free_fixture(void **state)
{
    fixture *f = *state;
    cp_diagnosis_free(&f->d);
    cp_incident_free(&f->inc);
    free(f);
    return 0;
}
