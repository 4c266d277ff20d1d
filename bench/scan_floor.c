/* scan_floor.c - the least any scan with the rule catalog costs.
 *
 *   scan-floor RULES_DIR FILE...
 *
 * Runs only vectorscan's pass over the files (in 4 MiB chunks of whole
 * lines, on one thread, best of three) with the database culprit scans
 * with, and prints its throughput in MB/s. Whatever culprit does besides
 * (line numbers, prefixes, events, analysis) comes on top, so twice this
 * figure bounds culprit's throughput on two cores. bench/bench.sh prints
 * it next to rg's.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/catalog.h"
#include "lib/matcher.h"

enum { CHUNK = 4 << 20, ROUNDS = 3 };

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Scans one mapped file chunk by chunk; returns its matches or -1. */
static long long scan_file(cp_scanner *sc, const char *data, size_t len)
{
    long long total = 0;
    for (size_t off = 0; off < len;) {
        size_t n = len - off < CHUNK ? len - off : CHUNK;
        const char *nl = off + n < len ? memrchr(data + off, '\n', n) : NULL;
        if (nl)
            n = (size_t)(nl - (data + off)) + 1;
        long long c = cp_scanner_scan_bare(sc, data + off, n);
        if (c < 0)
            return -1;
        total += c;
        off += n;
    }
    return total;
}

typedef struct mapped {
    const char *data;
    size_t len;
} mapped;

static int map_file(const char *path, mapped *out)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(path);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    out->len = (size_t)st.st_size;
    out->data = out->len ? mmap(NULL, out->len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0) : "";
    close(fd);
    if (out->data == MAP_FAILED) {
        perror(path);
        return -1;
    }
    return 0;
}

/* The best of ROUNDS passes over every file, in seconds; -1 on failure. */
static double best_pass(cp_scanner *sc, const mapped *files, int n, size_t *bytes)
{
    double best = -1;
    for (int round = 0; round < ROUNDS; round++) {
        double start = seconds();
        *bytes = 0;
        for (int i = 0; i < n; i++) {
            if (scan_file(sc, files[i].data, files[i].len) < 0)
                return -1;
            *bytes += files[i].len;
        }
        double t = seconds() - start;
        if (best < 0 || t < best)
            best = t;
    }
    return best;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: scan-floor RULES_DIR FILE...\n");
        return 2;
    }
    cp_catalog cat;
    cp_catalog_init(&cat);
    cp_matcher *m = NULL;
    cp_scanner *sc = NULL;
    char error[512];
    int n = argc - 2, rc = 1;
    mapped *files = calloc((size_t)n, sizeof *files);
    if (!files)
        goto done;
    if (cp_catalog_load_dir(&cat, argv[1]) < 0) {
        fprintf(stderr, "scan-floor: %s\n", cat.error);
        goto done;
    }
    if (cp_matcher_new(&m, &cat, error, sizeof error) != 0 || cp_scanner_new(&sc, m) != 0) {
        fprintf(stderr, "scan-floor: %s\n", m ? "cannot allocate a scanner" : error);
        goto done;
    }
    for (int i = 0; i < n; i++)
        if (map_file(argv[i + 2], &files[i]) != 0)
            goto done;
    size_t bytes = 0;
    double t = best_pass(sc, files, n, &bytes);
    if (t <= 0) {
        fprintf(stderr, "scan-floor: the scan failed\n");
        goto done;
    }
    printf("%.0f\n", (double)bytes / t / 1e6);
    rc = 0;
done:
    for (int i = 0; files && i < n; i++)
        if (files[i].len)
            munmap((void *)files[i].data, files[i].len);
    free(files);
    cp_scanner_free(sc);
    cp_matcher_free(m);
    cp_catalog_free(&cat);
    return rc;
}
