/* inputs.c - see inputs.h. */
#include "inputs.h"

#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Entries a walk visits at most: a folder of a million small files would
 * take a second to list before culprit reads any of them. */
enum { WALK_MAX_ENTRIES = 65536 };

/* nftw passes no user pointer: the walk's state */
static unsigned long long walk_total, walk_stop_at;
static size_t walk_entries;

static int add_file(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)path;
    (void)f;
    if (flag == FTW_F && S_ISREG(st->st_mode))
        walk_total += (unsigned long long)st->st_size;
    if (++walk_entries > WALK_MAX_ENTRIES)
        return -1;                            /* too many: the size stays unknown */
    return walk_total >= walk_stop_at;        /* 1 ends the walk: enough is known */
}

unsigned long long cli_input_bytes(const char *const *paths, size_t n, unsigned long long stop_at)
{
    walk_total = 0;
    walk_stop_at = stop_at;
    walk_entries = 0;
    for (size_t i = 0; i < n && walk_total < stop_at; i++) {
        if (strcmp(paths[i], "-") == 0) {
            struct stat st;
            if (fstat(STDIN_FILENO, &st) != 0 || !S_ISREG(st.st_mode))
                return 0;
            walk_total += (unsigned long long)st.st_size;
            continue;
        }
        nftw(paths[i], add_file, 16, FTW_PHYS);
        if (walk_entries > WALK_MAX_ENTRIES)
            return 0;
    }
    return walk_total;
}
