/* fuzz_reader.c - the reader on arbitrary bytes as a file: plain text,
 * gz, zst, xz, tar, zip, nested archives. Checks the chunk contract: whole
 * lines, each ending in '\n', no NUL bytes, no line longer than max_line. */
#include "fuzz_common.h"

#include <fcntl.h>

#include "reader.h"

enum { MAX_LINE = 1024 };

static int on_begin(void *user, const cp_stream_info *info)
{
    (void)user;
    if (!info->path || !*info->path)
        abort();
    return 0;
}

static int on_chunk(void *user, const char *data, size_t len, uint64_t first_line)
{
    (void)user;
    if (!len || data[len - 1] != '\n' || first_line == 0 || memchr(data, '\0', len))
        abort();
    const char *p = data, *end = data + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if ((size_t)(nl - p) > MAX_LINE)
            abort();
        p = nl + 1;
    }
    return 0;
}

static void on_end(void *user, const cp_stream_info *info)
{
    (void)user;
    (void)info;
}

static void on_warn(void *user, const char *path, const char *message)
{
    (void)user;
    if (!path || !message)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    static int fd = -1;
    if (fd < 0) {
        snprintf(path, sizeof path, "/tmp/culprit-fuzz-reader-%d", (int)getpid());
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0)
            return 0;
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        return 0;
    cp_reader_opts o;
    cp_reader_opts_default(&o);
    o.max_line = MAX_LINE;
    o.chunk_size = 4096;
    o.max_member_bytes = 8 << 20; /* keep each run fast */
    cp_reader_cb cb = {on_begin, on_chunk, on_end, on_warn, NULL, NULL, NULL, NULL};
    const char *paths[] = {path};
    cp_reader_run(paths, 1, &o, &cb, NULL);
    return 0;
}
