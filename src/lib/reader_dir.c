/* reader_dir.c - folders: their entries sorted by name and read in that
 * order, symlink cycles and special files skipped with a warning. */
#include "reader_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t seen_hash(dev_t dev, ino_t ino, size_t cap)
{
    uint64_t h = ((uint64_t)dev * 0x9e3779b97f4a7c15u) ^ (uint64_t)ino;

    h *= 0xff51afd7ed558ccdu;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static void seen_put(seen_set *set, dev_t dev, ino_t ino)
{
    size_t i = seen_hash(dev, ino, set->cap);

    while (set->slot[i].used)
        i = (i + 1) & (set->cap - 1);
    set->slot[i] = (seen_slot){ .dev = dev, .ino = ino, .used = true };
    set->n++;
}

static int seen_grow(seen_set *set)
{
    seen_set bigger = { .cap = set->cap ? set->cap * 2 : 1024 };

    if (bigger.cap > MAX_SEEN_SLOTS)
        return -1;
    bigger.slot = calloc(bigger.cap, sizeof *bigger.slot);
    if (!bigger.slot)
        return -1;
    for (size_t i = 0; i < set->cap; i++)
        if (set->slot[i].used)
            seen_put(&bigger, set->slot[i].dev, set->slot[i].ino);
    free(set->slot);
    *set = bigger;
    return 0;
}

/* 1 if newly added, 0 if already there, -1 if the set is full. */
static int seen_add(seen_set *set, dev_t dev, ino_t ino)
{
    if (set->cap) {
        for (size_t i = seen_hash(dev, ino, set->cap); set->slot[i].used;
             i = (i + 1) & (set->cap - 1))
            if (set->slot[i].dev == dev && set->slot[i].ino == ino)
                return 0;
    }
    if ((set->n + 1) * 2 > set->cap && seen_grow(set) != 0)
        return -1;
    seen_put(set, dev, ino);
    return 1;
}

typedef struct listing {
    char *names;         /* NUL-terminated names, back to back */
    size_t used, size;
    size_t *off;
    unsigned char *type; /* each entry's d_type (DT_UNKNOWN where the file
                            system does not say) */
    size_t n, n_cap;
    bool cut;
} listing;

/* An entry, to sort by name with its type. */
typedef struct entry {
    const char *name;
    unsigned char type;
} entry;

static int listing_add(listing *l, const char *name, unsigned char type)
{
    const size_t len = strlen(name) + 1;

    if (l->n == MAX_DIR_ENTRIES || l->used + len > MAX_DIR_BYTES) {
        l->cut = true;
        return 0;
    }
    if (l->n == l->n_cap) {
        size_t cap = l->n_cap ? l->n_cap * 2 : 64;
        size_t *off = realloc(l->off, cap * sizeof *off);
        if (!off)
            return -1;
        l->off = off;
        unsigned char *type_of = realloc(l->type, cap * sizeof *type_of);
        if (!type_of)
            return -1;
        l->type = type_of;
        l->n_cap = cap;
    }
    if (l->used + len > l->size) {
        size_t size = l->size ? l->size * 2 : 4096;
        char *names;
        while (size < l->used + len)
            size *= 2;
        names = realloc(l->names, size);
        if (!names)
            return -1;
        l->names = names;
        l->size = size;
    }
    memcpy(l->names + l->used, name, len);
    l->type[l->n] = type;
    l->off[l->n++] = l->used;
    l->used += len;
    return 0;
}

/* Lists a directory and closes it before anything is read from it, so a
 * deep tree never holds more than one directory open. */
static int list_dir(run *r, listing *l)
{
    char e[128];
    DIR *dir = opendir(r->path);
    struct dirent *ent;
    int rc = 0;

    if (!dir) {
        rd_fail(r, r->path, "%s", rd_errtext(errno, e, sizeof e));
        return -1;
    }
    for (errno = 0; (ent = readdir(dir)) != NULL; errno = 0) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
            continue;
        if (listing_add(l, ent->d_name, ent->d_type) != 0) {
            rd_fail(r, r->path, "out of memory listing the folder");
            rc = -1;
            break;
        }
    }
    if (rc == 0 && errno != 0) {
        rd_fail(r, r->path, "%s", rd_errtext(errno, e, sizeof e));
        rc = -1;
    }
    closedir(dir);
    if (l->cut)
        rd_warn(r, r->path, "too many entries; only the first %zu found were read", l->n);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

/* Regular files the walk reaches after the one it reads are opened ahead
 * (rd_ahead): a folder of rank logs read for the first time has its
 * next files in flight while one is scanned. Entries up to `to` are
 * considered; the folder's path is r->path[0, len). */
static void open_ahead(run *r, size_t len, bool slash, const entry *sorted, size_t n, rd_ahead *a, size_t to)
{
    char path[PATH_MAX];
    for (; a->next < n && a->next <= to && rd_ahead_room(r); a->next++) {
        const entry *e = &sorted[a->next];
        if (e->type != DT_REG)
            continue;   /* DT_UNKNOWN too: only what is known to be a file */
        int w = snprintf(path, sizeof path, "%.*s%s%s", (int)len, r->path, slash ? "" : "/", e->name);
        if (w > 0 && (size_t)w < sizeof path)
            rd_ahead_put(r, a, a->next, path);
    }
}

static void walk_dir(run *r, size_t len, const struct stat *st)
{
    listing l = { 0 };
    entry *sorted = NULL;
    const bool slash = len > 0 && r->path[len - 1] == '/';
    int added = seen_add(&r->seen, st->st_dev, st->st_ino);

    if (added <= 0) {
        if (added == 0)
            rd_warn(r, r->path, "folder already read (symbolic link cycle?), skipped");
        else
            rd_fail(r, r->path, "too many folders, skipped");
        return;
    }
    if (list_dir(r, &l) != 0 || l.n == 0)
        goto done;
    sorted = malloc(l.n * sizeof *sorted);
    if (!sorted) {
        rd_fail(r, r->path, "out of memory listing the folder");
        goto done;
    }
    for (size_t i = 0; i < l.n; i++)
        sorted[i] = (entry){l.names + l.off[i], l.type[i]};
    qsort(sorted, l.n, sizeof *sorted, by_name);
    rd_ahead ahead;
    rd_ahead_init(&ahead);
    for (size_t i = 0; i < l.n; i++) {
        const size_t at = slash ? len : len + 1;
        const size_t name_len = strlen(sorted[i].name);
        open_ahead(r, len, slash, sorted, l.n, &ahead, i + RD_AHEAD);
        if (at + name_len >= sizeof r->path) {
            rd_fail(r, r->path, "path of \"%s\" too long, skipped", sorted[i].name);
            rd_ahead_drop(r, &ahead, i);
            continue;
        }
        r->path[len] = '/';
        memcpy(r->path + at, sorted[i].name, name_len + 1);
        rd_ahead_visit(r, &ahead, i, at + name_len);
        r->path[len] = '\0';
    }
done:
    free(sorted);
    free(l.off);
    free(l.type);
    free(l.names);
}

static const char *special_kind(mode_t mode)
{
    return S_ISFIFO(mode) ? "FIFO" : S_ISCHR(mode) ? "character device"
         : S_ISBLK(mode) ? "block device" : S_ISSOCK(mode) ? "socket" : "special file";
}

/* r->path holds a path of `len` bytes. Types are checked before anything is
 * opened: opening a FIFO would wait for a writer. `ahead` is the path
 * opened ahead (rd_ahead), or -1; it is read if the path is still a
 * regular file, and closed otherwise. */
void rd_visit(run *r, size_t len, int ahead)
{
    struct stat st, lst;
    char e[128];

    if (stat(r->path, &st) != 0) {
        int err = errno;
        if (err == ELOOP)
            rd_fail(r, r->path, "symbolic link loop, skipped");
        else if (err == ENOENT && lstat(r->path, &lst) == 0 && S_ISLNK(lst.st_mode))
            rd_fail(r, r->path, "broken symbolic link, skipped");
        else
            rd_fail(r, r->path, "%s", rd_errtext(err, e, sizeof e));
    } else if (S_ISREG(st.st_mode)) {
        rd_read_file(r, r->path, ahead);
        return;
    } else if (S_ISDIR(st.st_mode)) {
        walk_dir(r, len, &st);
    } else {
        rd_fail(r, r->path, "%s, skipped", special_kind(st.st_mode));
    }
    if (ahead >= 0)   /* opened ahead, not a file to read any more */
        close(ahead);
}
