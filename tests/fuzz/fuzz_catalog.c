/* fuzz_catalog.c - a rule file from arbitrary bytes: load it, and when it
 * loads with a few rules (compiling is slow), compile the matcher
 * (vectorscan and PCRE2) and run its checks. */
#include "fuzz_common.h"

#include "catalog.h"
#include "matcher.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int once;
    if (!once++)
        setenv("CULPRIT_CACHE_DIR", "off", 1);
    char path[64];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    cp_catalog c;
    cp_catalog_init(&c);
    if (cp_catalog_load_file(&c, path) == 0 && c.n_rules > 0 && c.n_rules <= 4) {
        cp_matcher *m = NULL;
        char err[512];
        if (cp_matcher_new(&m, &c, err, sizeof err) == 0)
            cp_matcher_check_all(m, err, sizeof err);
        cp_matcher_free(m);
    }
    cp_catalog_free(&c);
    close(fd);
    return 0;
}
