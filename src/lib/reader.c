/* reader.c - PATH arguments to streams of whole lines (see reader.h).
 *
 * Every stream, whatever its origin (file, stdin, archive member), goes
 * through one path: read a head block, sniff it (archive? binary? text?),
 * then pump the rest through one line buffer (which a consumer may swap for
 * another at each chunk, see chunk_swap in reader.h). A `source` hides
 * where bytes come from: a file descriptor or an open archive member, so
 * nested archives (a .log.gz inside a .tgz) need no special code.
 *
 * A regular text file is mapped instead (mapping.h) when it is large
 * enough and not being written: the same pump then runs over the mapping,
 * its window standing in for the buffer, and a chunk that needs no fix-up
 * goes out as a pointer into the mapping. The chunks, line numbers and
 * warnings are the ones the read path gives, byte for byte.
 *
 * Nothing here keeps state outside the run: the server runs readers on
 * several threads.
 *
 * This file holds the sources, sniffing and streams; reader_pump.c cuts a
 * text stream into chunks, reader_archive.c opens archives and
 * reader_dir.c walks folders (shared state: reader_int.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memrchr, GNU strerror_r */
#endif

#include "reader_int.h"
#include "archive_lib.h"

#include "util/strutil.h"

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- messages ---------------------------------------------------------- */

PRINTF_LIKE(3, 0)
static void vwarn(run *r, const char *path, const char *fmt, va_list ap)
{
    char msg[MSG_SIZE];

    if (!r->cb->warn)
        return;
    vsnprintf(msg, sizeof msg, fmt, ap);
    r->cb->warn(r->user, path, msg);
}

PRINTF_LIKE(3, 4)
void rd_warn(run *r, const char *path, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vwarn(r, path, fmt, ap);
    va_end(ap);
}

/* A warning about an input that could not be read; the count decides
 * whether the run as a whole failed. */
PRINTF_LIKE(3, 4)
void rd_fail(run *r, const char *path, const char *fmt, ...)
{
    va_list ap;

    r->failed++;
    va_start(ap, fmt);
    vwarn(r, path, fmt, ap);
    va_end(ap);
}

/* strerror is not thread-safe. */
const char *rd_errtext(int err, char *buf, size_t n)
{
#if defined(__GLIBC__)
    return strerror_r(err, buf, n);
#else
    if (strerror_r(err, buf, n) != 0)
        snprintf(buf, n, "error %d", err);
    return buf;
#endif
}

PRINTF_LIKE(2, 3)
static void src_fail(source *s, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    va_end(ap);
    s->failed = true;
}

/* ---- sources ----------------------------------------------------------- */

static ssize_t fd_read(source *s, char *buf, size_t n)
{
    char e[128];

    for (;;) {
        ssize_t k = read(s->fd, buf, n);
        if (k >= 0)
            return k;
        if (errno == EINTR)
            continue;
        /* stdin may be a pipe left non-blocking by whoever made it */
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            struct pollfd p = { .fd = s->fd, .events = POLLIN };
            (void)poll(&p, 1, -1);
            continue;
        }
        src_fail(s, "read error: %s", rd_errtext(errno, e, sizeof e));
        return -1;
    }
}

/* Decompression bombs: the member-wide check allows for one block of input
 * that libarchive may have buffered before the member began; the
 * archive-wide check catches many small members that each stay under it. */
static bool bomb(source *s)
{
    const double ratio = s->r->o.max_ratio;
    const archive_in *in = s->in;
    const double member_in = (double)(in->consumed - s->in_start) + IN_BLOCK;

    if (!(ratio > 0))
        return false;
    if (s->out > RATIO_GRACE && (double)s->out > ratio * member_in) {
        src_fail(s, "decompression ratio above %g (decompression bomb?); "
                 "the rest of the member is skipped", ratio);
        return true;
    }
    if (in->produced > RATIO_GRACE &&
        (double)in->produced > ratio * (double)(in->consumed ? in->consumed : 1)) {
        src_fail(s, "decompression ratio of the archive above %g "
                 "(decompression bomb?); the rest of the archive is skipped", ratio);
        s->fatal = true;
        return true;
    }
    return false;
}

static ssize_t member_read(source *s, char *buf, size_t n)
{
    const uint64_t limit = s->r->o.max_member_bytes;
    la_ssize_t k;

    if (s->out >= limit) {
        char probe;
        /* a member of exactly `limit` bytes is whole */
        if (sym_archive_read_data(s->a, &probe, 1) == 0)
            return 0;
        src_fail(s, "more than %llu bytes after decompression; the rest is skipped",
                 (unsigned long long)limit);
        return -1;
    }
    if (bomb(s))
        return -1;
    if (n > limit - s->out)
        n = (size_t)(limit - s->out);
    k = sym_archive_read_data(s->a, buf, n);
    if (k < 0) {
        source *parent = s->in->parent;
        /* A failure below us (a bomb in the outer archive, a read error)
         * is reported once, in its own words. */
        if (parent->failed && !parent->reported) {
            src_fail(s, "%s", parent->msg);
            parent->reported = true;
        } else {
            src_fail(s, "truncated or corrupt archive: %s",
                     sym_archive_error_string(s->a) ? sym_archive_error_string(s->a) : "unknown error");
        }
        s->fatal = k == ARCHIVE_FATAL;
        return -1;
    }
    s->out += (uint64_t)k;
    s->in->produced += (uint64_t)k;
    return (ssize_t)k;
}

/* >0 bytes, 0 at the end, -1 on failure (s->msg says why; later calls fail too). */
ssize_t rd_src_read(source *s, char *buf, size_t n)
{
    if (s->failed)
        return -1;
    return s->a ? member_read(s, buf, n) : fd_read(s, buf, n);
}

static size_t fill(source *s, char *buf, size_t want)
{
    size_t len = 0;

    while (len < want) {
        ssize_t k = rd_src_read(s, buf + len, want - len);
        if (k <= 0)
            break;
        len += (size_t)k;
    }
    return len;
}

/* ---- sniffing ---------------------------------------------------------- */

struct magic {
    size_t off, len;
    const char *bytes;
    enum kind kind;
};

/* Formats we hand to libarchive, and binary formats common next to
 * training logs whose first block could pass the statistics below (sparse
 * headers, JSON or pickle text near the start). */
static const struct magic magics[] = {
    { 0, 2, "\x1f\x8b", K_ARCHIVE },                    /* gzip */
    { 0, 4, "\x28\xb5\x2f\xfd", K_ARCHIVE },            /* zstd */
    { 0, 6, "\xfd" "7zXZ\0", K_ARCHIVE },               /* xz */
    { 0, 4, "\x04\x22\x4d\x18", K_ARCHIVE },            /* lz4 */
    { 0, 4, "LZIP", K_ARCHIVE },                        /* lzip */
    { 0, 2, "\x1f\x9d", K_ARCHIVE },                    /* compress (.Z) */
    { 0, 4, "PK\x03\x04", K_ARCHIVE },                  /* zip */
    { 0, 4, "PK\x05\x06", K_ARCHIVE },                  /* empty zip */
    { 0, 4, "PK\x07\x08", K_ARCHIVE },                  /* spanned zip */
    { 257, 5, "ustar", K_ARCHIVE },                     /* POSIX and GNU tar */
    { 0, 4, "\x7f" "ELF", K_BINARY },                   /* programs, core dumps */
    { 0, 8, "\x89PNG\r\n\x1a\n", K_BINARY },
    { 0, 3, "\xff\xd8\xff", K_BINARY },                 /* JPEG */
    { 0, 4, "GIF8", K_BINARY },
    { 0, 6, "\x93NUMPY", K_BINARY },
    { 0, 8, "\x89HDF\r\n\x1a\n", K_BINARY },
    { 0, 2, "\x80\x02", K_BINARY },                     /* pickle (old torch.save) */
    { 0, 2, "\x80\x03", K_BINARY },
    { 0, 2, "\x80\x04", K_BINARY },
    { 0, 2, "\x80\x05", K_BINARY },
};

static bool is_text_control(unsigned char c)
{
    /* tab, newline, vertical tab, form feed, carriage return (progress
     * bars), backspace, escape (ANSI colours) */
    return c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' ||
           c == '\b' || c == 0x1b;
}

/* Length of the UTF-8 sequence at p, 0 if invalid. A sequence cut by the
 * end of the sample counts as valid. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
    size_t len = p[0] >= 0xf5 ? 0 : p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 ? 2 : 0;

    for (size_t i = 1; i < len; i++) {
        if (i >= n)
            return n;
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    }
    return len;
}

static enum kind by_magic(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < sizeof magics / sizeof magics[0]; i++) {
        const struct magic *m = &magics[i];
        if (n >= m->off + m->len && memcmp(p + m->off, m->bytes, m->len) == 0)
            return m->kind;
    }
    if (n >= 4 && memcmp(p, "BZh", 3) == 0 && p[3] >= '1' && p[3] <= '9')
        return K_ARCHIVE; /* bzip2 with its block size digit */
    /* safetensors: 8-byte little-endian header size, then the JSON header */
    if (n >= 9 && p[8] == '{' && p[5] == 0 && p[6] == 0 && p[7] == 0)
        return K_BINARY;
    return K_TEXT;
}

/* How many of the first bytes of p[0, n) are whole 16-byte blocks of
 * printable ASCII, tabs and newlines: what log lines are made of. Where
 * there is no SSE2, none (cp_printable_prefix takes them 8 at a time). */
static size_t plain_text_blocks(const unsigned char *p, size_t n)
{
    size_t i = 0;
#if defined(__SSE2__) && defined(__x86_64__)
    const __m128i below = _mm_set1_epi8(0x1f), del = _mm_set1_epi8(0x7f);
    const __m128i nl = _mm_set1_epi8('\n'), tab = _mm_set1_epi8('\t');
    for (; n - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        /* signed: bytes >= 0x80 are negative, so not above 0x1f */
        __m128i printable = _mm_andnot_si128(_mm_cmpeq_epi8(v, del), _mm_cmpgt_epi8(v, below));
        __m128i ok = _mm_or_si128(printable, _mm_or_si128(_mm_cmpeq_epi8(v, nl), _mm_cmpeq_epi8(v, tab)));
        if (_mm_movemask_epi8(ok) != 0xffff)
            break;
    }
#else
    (void)p;
    (void)n;
#endif
    return i;
}

/* Binary or text, judged on the first block of a stream.
 *
 * Logs are text that may carry damage: runs of NUL bytes where a node
 * crashed before its writes reached the disk, stray Latin-1 bytes, ANSI
 * colour codes, '\r' progress bars. Binary data (programs, core dumps,
 * tensors, images, compressed bytes) is dominated by bytes that text never
 * holds. So NUL bytes are set aside (a block of nothing but NULs is its
 * own case) and the rest is judged: if more than 30% of the non-NUL bytes
 * are control characters text does not use or bytes that are not valid
 * UTF-8, the stream is binary. Random bytes score about 55%; a log in a
 * legacy 8-bit encoding stays well below 30%. */
static enum kind classify(const unsigned char *p, size_t n)
{
    enum kind k = by_magic(p, n);
    size_t nul = 0, odd = 0, i = 0;

    if (k != K_TEXT)
        return k;
    while (i < n) {
        size_t plain = plain_text_blocks(p + i, n - i);
        if (plain) {
            i += plain;
            continue;
        }
        /* printable bytes count as neither NUL nor odd */
        plain = cp_printable_prefix((const char *)p + i, n - i);
        if (plain) {
            i += plain;
            continue;
        }
        unsigned char c = p[i];
        size_t step = 1;
        if (c >= 0x80) {
            step = utf8_seq(p + i, n - i);
            if (step == 0) {
                odd++;
                step = 1;
            }
        } else if (c == 0) {
            nul++;
        } else if ((c < 0x20 && !is_text_control(c)) || c == 0x7f) {
            odd++;
        }
        i += step;
    }
    if (nul == n)
        return K_NULS;
    return odd * 10 > (n - nul) * 3 ? K_BINARY : K_TEXT;
}

/* ---- streams ----------------------------------------------------------- */

/* A stream another module takes whole; its first `len` bytes are in r->buf. */
static void read_whole(run *r, source *src, const char *path, size_t len)
{
    size_t cap = len * 2 > CP_READER_MAX_WHOLE ? CP_READER_MAX_WHOLE : len * 2;
    char *p = malloc(cap);
    if (!p) {
        rd_warn(r, path, "out of memory, skipped");
        return;
    }
    memcpy(p, r->buf, len);
    for (;;) {
        if (len == cap) {
            if (cap == CP_READER_MAX_WHOLE)
                break;
            size_t ncap = cap * 2 > CP_READER_MAX_WHOLE ? CP_READER_MAX_WHOLE : cap * 2;
            char *q = realloc(p, ncap);
            if (!q)
                break;
            p = q;
            cap = ncap;
        }
        size_t k = fill(src, p + len, cap - len);
        len += k;
        if (k == 0 || len < cap)
            break;
    }
    char probe;
    int cut = len == CP_READER_MAX_WHOLE && fill(src, &probe, 1) == 1;
    r->cb->whole(r->user, path, (const unsigned char *)p, len, cut);
    r->delivered++;
    free(p);
}

/* One stream: a file, stdin, or an archive member at nesting `depth`. */
void rd_read_stream(run *r, source *src, const char *path, int depth)
{
    const size_t len = fill(src, r->buf, HEAD_SIZE);

    if (len == 0) {
        if (!src->failed)
            rd_warn(r, path, "empty file");
    } else if (r->cb->special && r->cb->whole && r->cb->special(r->user, path, (const unsigned char *)r->buf, len)) {
        read_whole(r, src, path, len);
    } else {
        switch (classify((const unsigned char *)r->buf, len)) {
        case K_ARCHIVE:
            if (depth >= MAX_NEST)
                rd_warn(r, path, "archive nested too deep, skipped");
            else
                rd_read_archive(r, src, path, len, depth);
            break;
        case K_BINARY:
            rd_warn(r, path, "binary file, skipped");
            break;
        case K_NULS:
            rd_warn(r, path, "only NUL bytes, skipped");
            break;
        case K_TEXT:
            /* an archive member's size is not the file's */
            rd_read_text(r, src, path, len, depth == 0 ? r->file_size : 0);
            break;
        }
    }
    if (src->failed && !src->reported) {
        rd_fail(r, path, "%s", src->msg);
        src->reported = true;
    }
}

static void read_fd(run *r, int fd, const char *path)
{
    source src = { .r = r, .fd = fd };

    rd_read_stream(r, &src, path, 0);
}

/* Whether to map a regular file rather than read it. A small file is
 * read: tearing a mapping down (its pages dropped, then unmapped) makes the
 * kernel flush the TLB of every core the process runs on, and a folder of
 * thousands of per-rank files of a few hundred KiB paid that more than the
 * copy that one read() into a reused buffer costs (4,096 ranks, 5,120
 * files: 1.18 -> 1.04 s, bench/bench.sh). A file modified in
 * the last few seconds is read: it may be a live log, and logrotate's
 * copytruncate or a restarted job truncating it would make the mapping
 * fault (mapping.h). */
static bool worth_mapping(const run *r, const struct stat *st)
{
    struct timespec now;

    if (r->o.no_map || (uint64_t)st->st_size < r->o.map_min || (uint64_t)st->st_size > SIZE_MAX)
        return false;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0)
        return false;
    return st->st_mtim.tv_sec <= now.tv_sec - MAP_SETTLED_S;
}

/* A stream from a mapped file, judged on its first block like any other:
 * text is pumped from the mapping, and a stream another module takes whole
 * gets the mapping itself. Returns false for anything else (binary,
 * archive), which the read path then reads and judges again. */
static bool read_mapped(run *r, cp_mapping *m, const char *path)
{
    const unsigned char *data = (const unsigned char *)cp_mapping_data(m);
    const size_t size = cp_mapping_size(m);
    const size_t head = size < HEAD_SIZE ? size : HEAD_SIZE;

    if (r->cb->special && r->cb->whole && r->cb->special(r->user, path, data, head)) {
        const size_t len = size < CP_READER_MAX_WHOLE ? size : CP_READER_MAX_WHOLE;
        r->cb->whole(r->user, path, data, len, size > len);
        r->delivered++;
        return true;
    }
    if (classify(data, head) != K_TEXT)
        return false;
    pump st = { .r = r, .map = m, .path = path, .line = 1, .len = head, .nl_at = SIZE_MAX,
                .chunk_cap = rd_chunk_cap(r, size) };
    rd_read_lines(&st);
    return true;
}

int rd_open_file(const char *path)
{
    /* O_NONBLOCK: should the file turn into a FIFO between stat and open,
     * open must not wait for a writer */
    return open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
}

void rd_read_file(run *r, const char *path, int ahead)
{
    struct stat st;
    char e[128];
    /* a folder's walk or the list of arguments may have opened it already */
    int fd = ahead >= 0 ? ahead : rd_open_file(path);

    if (fd < 0) {
        rd_fail(r, path, "%s", rd_errtext(errno, e, sizeof e));
        return;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rd_fail(r, path, "changed while being opened, skipped");
    } else {
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        /* a file that cannot be mapped, for whatever reason, is read */
        cp_mapping *m = worth_mapping(r, &st) ? cp_mapping_open(fd, (size_t)st.st_size, path) : NULL;
        const bool mapped = m && read_mapped(r, m, path);
        cp_mapping_release(m, NULL, 0);
        r->file_size = (uint64_t)st.st_size;
        if (!mapped)
            read_fd(r, fd, path);
        r->file_size = 0;
    }
    close(fd);
}

/* ---- entry points ------------------------------------------------------ */

void cp_reader_opts_default(cp_reader_opts *opts)
{
    assert(opts);
    *opts = (cp_reader_opts){
        .max_line = 64 * KIB,
        .chunk_size = MIB,
        .first_chunk = MIB,
        .max_member_bytes = (uint64_t)64 << 30,
        .max_ratio = 1000,
        .map_min = MIB,
    };
}

/* Zero sizes mean the default; sizes are clamped so the buffer stays sane. */
static cp_reader_opts sane_opts(const cp_reader_opts *in)
{
    cp_reader_opts o;

    cp_reader_opts_default(&o);
    if (!in)
        return o;
    if (in->max_line)
        o.max_line = in->max_line < MAX_OPT_SIZE ? in->max_line : MAX_OPT_SIZE;
    if (in->chunk_size)
        o.chunk_size = in->chunk_size < MAX_OPT_SIZE ? in->chunk_size : MAX_OPT_SIZE;
    o.first_chunk = in->first_chunk && in->first_chunk < o.chunk_size ? in->first_chunk : o.chunk_size;
    if (in->map_min)
        o.map_min = in->map_min > MAP_MIN ? in->map_min : MAP_MIN;
    if (in->max_member_bytes)
        o.max_member_bytes = in->max_member_bytes;
    o.max_ratio = in->max_ratio > 0 ? in->max_ratio : 0;
    o.no_map = in->no_map;
    return o;
}

/* Arguments that name regular files are opened ahead of their turn, as a
 * folder's files are (rd_ahead): `culprit diagnose logs/rank*` read for
 * the first time has the next files in flight while one is scanned. */
static void open_args_ahead(run *r, const char *const *paths, size_t n, rd_ahead *a, size_t to)
{
    struct stat st;
    for (; a->next < n && a->next <= to && rd_ahead_room(r); a->next++) {
        const char *p = paths[a->next];
        if (strcmp(p, "-") != 0 && stat(p, &st) == 0 && S_ISREG(st.st_mode))
            rd_ahead_put(r, a, a->next, p);
    }
}

/* Argument i, `path`. */
static void read_path(run *r, const char *path, rd_ahead *a, size_t i)
{
    const size_t len = strlen(path);

    if (strcmp(path, "-") == 0) {
        read_fd(r, STDIN_FILENO, "-");
        return;
    }
    if (len == 0 || len >= sizeof r->path) {
        rd_fail(r, path, len ? "path too long, skipped" : "empty path, skipped");
        rd_ahead_drop(r, a, i);
        return;
    }
    memcpy(r->path, path, len + 1);
    rd_ahead_visit(r, a, i, len);
}

int cp_reader_run(const char *const *paths, size_t n_paths,
                  const cp_reader_opts *opts, const cp_reader_cb *cb, void *user)
{
    run *r = calloc(1, sizeof *r);
    int result = -1;

    assert(cb && (paths || n_paths == 0));
    if (!r)
        goto done;
    r->o = sane_opts(opts);
    r->cb = cb;
    r->user = user;
    r->chunk_now = r->o.first_chunk;
    r->ahead_max = rd_ahead_max();
    r->cap = r->o.chunk_size + r->o.max_line + 2;
    if (r->cap < HEAD_SIZE + 1)
        r->cap = HEAD_SIZE + 1;
    r->buf = malloc(r->cap);
    if (!r->buf) {
        rd_fail(r, n_paths ? paths[0] : "-", "out of memory");
        goto done;
    }
    rd_ahead ahead;
    rd_ahead_init(&ahead);
    for (size_t i = 0; i < n_paths; i++) {
        open_args_ahead(r, paths, n_paths, &ahead, i + RD_AHEAD);
        read_path(r, paths[i], &ahead, i);
    }
    result = r->delivered == 0 && r->failed > 0 ? -1 : r->delivered;
done:
    if (r) {
        free(r->seen.slot);
        free(r->buf);
        cp_nlmap_free(&r->newlines);
    }
    free(r);
    return result;
}
