/* reader_prefetch.c - opens the files the reader reaches next and asks
 * the kernel to start reading them (see reader_int.h).
 *
 * The reader reads one file at a time. From the page cache that costs
 * nothing, but logs read for the first time (a job's folder on a shared
 * file system, or just evicted) make it wait for each file's disk reads
 * in turn, while the kernel could have the next ones in flight: a
 * 4,096-file folder of 1 GiB took 1.80 s with caches dropped against
 * 1.15 s warm (rg, reading several files at once: 1.36 s). With the
 * heads of the next eight files asked for (POSIX_FADV_WILLNEED) it took
 * 1.41 s (medians of five, alternating). A larger file goes on by the
 * kernel's own read-ahead once it is read: asking for 4 MiB of each
 * instead of 512 KiB made the 512-file folder (2 MB files) slower cold,
 * 512 KiB leaves it as it was. The descriptor opened to ask is the one
 * the file is then read through, so a folder already in the page cache
 * pays one system call a file for this (1% or less, within the noise). */
#include "reader_int.h"

#include <fcntl.h>   /* posix_fadvise */
#include <sys/resource.h>
#include <unistd.h>

/* the head of each file asked for: a small rank log whole, the start of
 * a larger one (whose reads the kernel's read-ahead then follows) */
enum { PREFETCH_SPAN = 512 << 10 };

int rd_prefetch_open(const char *path)
{
    /* opened as rd_read_file opens a file: the descriptor is the one it reads */
    int fd = rd_open_file(path);
#ifdef POSIX_FADV_WILLNEED
    if (fd >= 0)
        (void)posix_fadvise(fd, 0, PREFETCH_SPAN, POSIX_FADV_WILLNEED);
#endif
    return fd;
}

void rd_ahead_init(rd_ahead *a)
{
    for (size_t k = 0; k < RD_AHEAD_RING; k++)
        a->fd[k] = -1;
    a->next = 1;   /* the first entry: it is read at once */
}

bool rd_ahead_room(const run *r)
{
    return r->open_ahead < r->ahead_max;
}

int rd_ahead_max(void)
{
    /* a quarter of the descriptors the process may have, so that opening
     * ahead never takes the one a read needs */
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY)
        return RD_AHEAD_MAX_OPEN;
    rlim_t quarter = lim.rlim_cur / 4;
    return quarter < RD_AHEAD_MAX_OPEN ? (int)quarter : RD_AHEAD_MAX_OPEN;
}

void rd_ahead_put(run *r, rd_ahead *a, size_t i, const char *path)
{
    int fd = rd_prefetch_open(path);
    if (fd < 0)
        return;
    a->fd[i % RD_AHEAD_RING] = fd;
    r->open_ahead++;
}

/* Takes entry i's descriptor out of the ring; -1 when it has none. */
static int take(run *r, rd_ahead *a, size_t i)
{
    int fd = a->fd[i % RD_AHEAD_RING];
    a->fd[i % RD_AHEAD_RING] = -1;
    if (fd >= 0)
        r->open_ahead--;
    return fd;
}

void rd_ahead_visit(run *r, rd_ahead *a, size_t i, size_t len)
{
    rd_visit(r, len, take(r, a, i));
}

void rd_ahead_drop(run *r, rd_ahead *a, size_t i)
{
    int fd = take(r, a, i);
    if (fd >= 0)
        close(fd);
}
