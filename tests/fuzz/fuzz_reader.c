/* fuzz_reader.c - the reader on arbitrary bytes as a file: plain text,
 * gz, zst, xz, tar, zip, nested archives. Checks the chunk contract: whole
 * lines, each ending in '\n', no NUL bytes, no line longer than max_line.
 *
 * Then the same bytes, repeated to more than the size from which files are
 * mapped and dated back so that they are, go through the mapped path and
 * the read path: the two must hand out the same chunks, line numbers and
 * warnings (a digest of them is compared). */
#include "fuzz_common.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "reader.h"

enum {
    MAX_LINE = 1024,
    MAPPED_SIZE = 64 * 1024 + 1 /* above the least map_min the reader takes */
};

/* What a run handed out, folded into a hash (FNV-1a). */
typedef struct digest {
    uint64_t h;
} digest;

static void fold(digest *d, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        d->h = (d->h ^ b[i]) * 0x100000001b3u;
}

static int on_begin(void *user, const cp_stream_info *info)
{
    if (!info->path || !*info->path)
        abort();
    fold(user, info->path, strlen(info->path) + 1);
    return 0;
}

static int on_chunk(void *user, const char *data, size_t len, uint64_t first_line, cp_nlmap *newlines)
{
    if (!len || data[len - 1] != '\n' || first_line == 0 || memchr(data, '\0', len))
        abort();
    /* the map, when there is one, is the chunk's */
    if (newlines && (newlines->len != len || newlines->nul))
        abort();
    const char *p = data, *end = data + len;
    uint64_t lines = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if ((size_t)(nl - p) > MAX_LINE || (newlines && !cp_nlmap_is_newline(newlines, (size_t)(nl - data))))
            abort();
        p = nl + 1;
        lines++;
    }
    if (newlines && newlines->newlines != lines)
        abort();
    fold(user, &first_line, sizeof first_line);
    fold(user, &len, sizeof len);
    fold(user, data, len);
    return 0;
}

static void on_end(void *user, const cp_stream_info *info)
{
    fold(user, &info->index, sizeof info->index);
}

static void on_warn(void *user, const char *path, const char *message)
{
    if (!path || !message)
        abort();
    fold(user, message, strlen(message) + 1);
}

/* The file at `fd` holding exactly data[0, size). */
static bool write_file(int fd, const uint8_t *data, size_t size)
{
    return ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size;
}

static uint64_t run(const char *path, bool no_map)
{
    cp_reader_opts o;
    cp_reader_opts_default(&o);
    o.max_line = MAX_LINE;
    o.chunk_size = 4096;
    o.max_member_bytes = 8 << 20; /* keep each run fast */
    o.no_map = no_map;
    o.map_min = MAPPED_SIZE - 1; /* the least: small inputs are mapped too */
    cp_reader_cb cb = {on_begin, on_chunk, on_end, on_warn, NULL, NULL, NULL, NULL};
    const char *paths[] = {path};
    digest d = {0xcbf29ce484222325u};
    cp_reader_run(paths, 1, &o, &cb, &d);
    return d.h;
}

/* The bytes repeated past MAPPED_SIZE, dated back an hour (the reader
 * maps only files left alone for a few seconds): both paths must agree. */
static void check_mapped(int fd, const char *path, const uint8_t *data, size_t size)
{
    size_t copies = size >= MAPPED_SIZE ? 1 : MAPPED_SIZE / size + 1;
    uint8_t *big = malloc(copies * size);
    if (!big)
        return;
    for (size_t i = 0; i < copies; i++)
        memcpy(big + i * size, data, size);
    bool written = write_file(fd, big, copies * size);
    free(big);
    struct timespec t[2];
    if (!written || clock_gettime(CLOCK_REALTIME, &t[0]) != 0)
        return;
    t[0].tv_sec -= 3600;
    t[1] = t[0];
    if (futimens(fd, t) != 0)
        return;
    if (run(path, true) != run(path, false))
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
    if (!write_file(fd, data, size))
        return 0;
    (void)run(path, false);
    if (size > 0)
        check_mapped(fd, path, data, size);
    return 0;
}
