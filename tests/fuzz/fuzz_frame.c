/* fuzz_frame.c - line attribution on arbitrary bytes: each input line goes
 * through cp_frame_parse and cp_time_parse, the whole input through
 * cp_frame_from_path. */
#include "fuzz_common.h"

#include "frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* exact-size copies so ASan catches any read past the end */
    const char *p = (const char *)data;
    const char *end = p + size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char *line = malloc(len ? len : 1);
        if (!line)
            return 0;
        memcpy(line, p, len);
        cp_origin o;
        cp_origin_init(&o);
        size_t body = cp_frame_parse(line, len, &o);
        if (body > len)
            abort();
        cp_time t;
        memset(&t, 0, sizeof t);
        if (cp_time_parse(line, len, &t) > len)
            abort();
        free(line);
        p += len + 1;
    }
    char *path = fuzz_strndup(data, size < 4096 ? size : 4096);
    if (path) {
        cp_origin o;
        cp_origin_init(&o);
        cp_frame_from_path(path, &o);
        free(path);
    }
    return 0;
}
