/* fuzz_events.c - the whole pipeline on arbitrary bytes as one stream:
 * matcher, incident feed (events, ranks), analyze, and every report. */
#include "fuzz_common.h"

#include "analyze.h"
#include "catalog.h"
#include "incident.h"
#include "matcher.h"
#include "render.h"

#ifndef CULPRIT_FUZZ_RULES
#define CULPRIT_FUZZ_RULES "rules"
#endif

enum { MAX_LINE = 64 * 1024 };

static cp_catalog catalog;
static cp_matcher *matcher;
static FILE *devnull;

static int setup(void)
{
    const char *dir = getenv("CULPRIT_RULES");
    setenv("CULPRIT_CACHE_DIR", "off", 0);
    cp_catalog_init(&catalog);
    char err[512];
    if (cp_catalog_load_dir(&catalog, dir && *dir ? dir : CULPRIT_FUZZ_RULES) < 0 ||
        cp_matcher_new(&matcher, &catalog, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_events: cannot load the rules: %s\n", catalog.error);
        abort();
    }
    devnull = fopen("/dev/null", "w");
    return devnull ? 0 : -1;
}

/* What the reader guarantees: whole lines ending in '\n', no NUL bytes,
 * no line longer than max_line. */
static char *as_reader_would(const uint8_t *data, size_t size, size_t *out_len)
{
    char *b = malloc(size + 1);
    if (!b)
        return NULL;
    size_t n = 0, col = 0;
    for (size_t i = 0; i < size; i++) {
        char c = data[i] ? (char)data[i] : ' ';
        if (c == '\n') {
            col = 0;
        } else if (col++ >= MAX_LINE) {
            continue;
        }
        b[n++] = c;
    }
    if (n == 0 || b[n - 1] != '\n')
        b[n++] = '\n';
    *out_len = n;
    return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready++ && setup() != 0)
        return 0;
    size_t len;
    char *text = as_reader_would(data, size, &len);
    if (!text)
        return 0;
    cp_incident inc;
    if (cp_incident_init(&inc, &catalog, matcher) != 0) {
        free(text);
        return 0;
    }
    if (cp_incident_begin_stream(&inc, "node017/rank_3.log") == 0) {
        cp_incident_feed(&inc, text, len, 1, NULL);
        cp_incident_end_stream(&inc);
    }
    cp_diagnosis d;
    memset(&d, 0, sizeof d);
    if (cp_analyze(&d, &inc) == 0) {
        cp_render_opts ro = {true, 0};
        cp_render_text(&d, devnull, &ro);
        cp_render_json(&d, devnull, &ro);
        cp_render_markdown(&d, devnull, &ro);
    }
    cp_diagnosis_free(&d);
    cp_incident_free(&inc);
    free(text);
    return 0;
}
