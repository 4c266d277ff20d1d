#include "dbcache.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "hs_target.h"

enum { MAX_DB_BYTES = 256 << 20 };

static void mix(uint64_t *h, const void *data, size_t n, uint64_t prime)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        *h ^= p[i];
        *h *= prime;
    }
}

static void add_bytes(cp_dbkey *k, const void *data, size_t n)
{
    mix(&k->h1, data, n, 1099511628211ULL);
    mix(&k->h2, data, n, 0x100000001b3ULL ^ 0x9e3779b97f4a7c15ULL);
}

void cp_dbkey_init(cp_dbkey *k)
{
    k->h1 = 1469598103934665603ULL;
    k->h2 = 0x84222325cbf29ce4ULL;
    const char *v = hs_version();
    add_bytes(k, "culprit-db-1 ", 13);
    add_bytes(k, CULPRIT_VERSION, strlen(CULPRIT_VERSION));
    add_bytes(k, v, strlen(v));
    /* a database compiled for the host is not the SSE4.2 one (hs_target.h) */
    const char *t = cp_hs_target_name();
    add_bytes(k, t, strlen(t) + 1);
}

void cp_dbkey_add(cp_dbkey *k, const char *expr, unsigned flags, unsigned id)
{
    add_bytes(k, expr, strlen(expr) + 1);
    add_bytes(k, &flags, sizeof flags);
    add_bytes(k, &id, sizeof id);
}

/* The cache folder, or "" when disabled or unknown. */
static void cache_dir(char *out, size_t n)
{
    const char *dir = getenv("CULPRIT_CACHE_DIR");
    out[0] = '\0';
    if (dir && *dir) {
        if (strcmp(dir, "off") != 0)
            snprintf(out, n, "%s", dir);
        return;
    }
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(out, n, "%s/culprit", xdg);
    else if (home && *home)
        snprintf(out, n, "%s/.cache/culprit", home);
}

static int db_path(const cp_dbkey *k, char *out, size_t n)
{
    char dir[3072];
    cache_dir(dir, sizeof dir);
    if (!dir[0])
        return -1;
    int w = snprintf(out, n, "%s/rules-%016llx%016llx.hsdb", dir, (unsigned long long)k->h1,
                     (unsigned long long)k->h2);
    return w > 0 && (size_t)w < n ? 0 : -1;
}

hs_database_t *cp_dbcache_load(const cp_dbkey *k)
{
    char path[4096];
    if (db_path(k, path, sizeof path) != 0)
        return NULL;
    hs_database_t *db = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size > MAX_DB_BYTES)
        goto done;
    /* mapped, not read: deserializing copies it anyway, and a read into a
     * fresh buffer cost a copy and a page fault per page on top, a tenth
     * of a one-line diagnosis */
    void *bytes = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (bytes == MAP_FAILED)
        goto done;
    if (hs_deserialize_database(bytes, (size_t)st.st_size, &db) != HS_SUCCESS)
        db = NULL;
    munmap(bytes, (size_t)st.st_size);
done:
    if (fd >= 0)
        close(fd);
    return db;
}

static void make_dirs(const char *path)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        mkdir(tmp, 0700);
        *p = '/';
    }
}

void cp_dbcache_store(const cp_dbkey *k, const hs_database_t *db)
{
    char path[4096], tmp[4200];
    if (db_path(k, path, sizeof path) != 0)
        return;
    char *bytes = NULL;
    size_t len = 0;
    if (hs_serialize_database(db, &bytes, &len) != HS_SUCCESS)
        return;
    make_dirs(path);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    bool ok = fd >= 0;
    for (size_t off = 0; ok && off < len;) {
        ssize_t w = write(fd, bytes + off, len - off);
        ok = w > 0;
        off += ok ? (size_t)w : 0;
    }
    if (fd >= 0 && close(fd) != 0)
        ok = false;
    if (ok && rename(tmp, path) == 0)
        tmp[0] = '\0';
    if (tmp[0])
        unlink(tmp);
    free(bytes);
}
