/* fuzz_common.h - helpers the fuzz targets share. Each target defines
 * LLVMFuzzerTestOneInput; libFuzzer drives it under clang (run.sh), and
 * replay.c feeds it a corpus folder as an ordinary test under any compiler. */
#ifndef CULPRIT_FUZZ_COMMON_H
#define CULPRIT_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The bytes as an anonymous file; returns its /proc path in `path` and the
 * descriptor (close it when done), or -1. Nothing is written to disk. */
static inline int fuzz_memfile(const uint8_t *data, size_t size, char *path, size_t n)
{
    int fd = memfd_create("fuzz", 0);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < size) {
        ssize_t w = write(fd, data + off, size - off);
        if (w <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)w;
    }
    snprintf(path, n, "/proc/self/fd/%d", fd);
    return fd;
}

/* A NUL-terminated copy (the caller frees). */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return NULL;
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
