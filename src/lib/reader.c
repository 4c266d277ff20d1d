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
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memrchr, GNU strerror_r */
#endif

#include "reader.h"

#include "mapping.h"
#include "util/strutil.h"

#if defined(__SSE2__) && defined(__x86_64__)
#include <emmintrin.h>
#endif

#include <archive.h>
#include <archive_entry.h>
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

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

#define KIB ((size_t)1024)
#define MIB (1024 * KIB)

enum {
    HEAD_SIZE = 64 * 1024,  /* sniffed for magic bytes and binary content */
    IN_BLOCK = 64 * 1024,   /* compressed bytes handed to libarchive per call */
    MAX_NEST = 3,           /* archive inside archive inside archive */
    MSG_SIZE = 512,
    CHUNKS_PER_FILE = 8,    /* a file is cut into at least this many chunks (chunk_cap) */
    MAP_MIN = HEAD_SIZE,    /* smaller files are read: one read() costs less
                               than a mapping's setup and teardown */
    MAP_SETTLED_S = 5,      /* files modified more recently are read (see
                               worth_mapping) */
};

/* Larger option values are clamped: the line buffer is chunk_size +
 * max_line, allocated once, and must stay a sane size. */
#define MAX_OPT_SIZE (256 * MIB)
/* The ratio check starts only after this much output: the first blocks of
 * any stream have a misleading ratio (headers, read-ahead). */
#define RATIO_GRACE (4 * MIB)
/* A directory listing is kept whole so it can be sorted; beyond these it is
 * cut (and the cut is reported). */
#define MAX_DIR_ENTRIES ((size_t)4 * 1000 * 1000)
#define MAX_DIR_BYTES (512 * MIB)
/* Visited directories (for symlink cycles); slots in the hash set. */
#define MAX_SEEN_SLOTS ((size_t)1 << 23)

typedef struct run run;
typedef struct archive_in archive_in;

/* Where a stream's bytes come from. `a == NULL`: the file descriptor. */
typedef struct source {
    run *r;
    int fd;
    struct archive *a;
    archive_in *in;      /* the archive's input side, for the ratio */
    uint64_t out;        /* bytes produced so far */
    uint64_t in_start;   /* in->consumed when this member began */
    bool failed;         /* sticky; msg says why */
    bool fatal;          /* the archive cannot go on either */
    bool reported;
    char msg[MSG_SIZE];
} source;

/* libarchive's view of the bytes under an archive: first the head block
 * that was sniffed, then the parent source. */
struct archive_in {
    source *parent;
    unsigned char *block;
    size_t pending;      /* bytes of the head still to hand over */
    uint64_t consumed;   /* compressed bytes handed to libarchive */
    uint64_t produced;   /* decompressed bytes taken out of it */
};

typedef struct seen_slot {
    dev_t dev;
    ino_t ino;
    bool used;
} seen_slot;

typedef struct seen_set {
    seen_slot *slot;
    size_t cap, n;
} seen_set;

struct run {
    cp_reader_opts o;
    const cp_reader_cb *cb;
    void *user;
    char *buf;
    size_t cap;
    size_t chunk_now;    /* target size of the next chunk (first_chunk, doubling) */
    uint64_t file_size;  /* size of the plain file being read; 0: stdin, unknown */
    seen_set seen;
    int next_index;
    int delivered;       /* streams that delivered text */
    int failed;          /* inputs that could not be read */
    char path[PATH_MAX];
};

/* State of one text stream while it is pumped: from `src` through r->buf
 * (the read path), or straight from a mapped file (`map`). */
typedef struct pump {
    run *r;
    source *src;         /* read path: where more bytes come from */
    cp_mapping *map;     /* mapped path: the file, never written to */
    const char *path;
    uint64_t line;       /* number of the next line to deliver */
    size_t d, s, len;    /* bytes(): [0, d) delivered, [d, s) whole lines
                            checked for length, [s, len) not yet looked at;
                            mapped, offsets in the file and [d, len) the
                            window the read path's buffer would hold */
    size_t chunk_cap;    /* chunks of this stream are at most this long */
    size_t nl_at;        /* mapped path: the offset of a byte to take as '\n',
                            which the read path writes into its buffer (a
                            cut line's end, or one past a last line that has
                            none); SIZE_MAX when none */
    bool delivered, warned_long, skipping, stopped;
} pump;

enum kind { K_TEXT, K_BINARY, K_NULS, K_ARCHIVE };

static void read_stream(run *r, source *src, const char *path, int depth);
static void visit(run *r, size_t len);

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
static void warn(run *r, const char *path, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vwarn(r, path, fmt, ap);
    va_end(ap);
}

/* A warning about an input that could not be read; the count decides
 * whether the run as a whole failed. */
PRINTF_LIKE(3, 4)
static void fail(run *r, const char *path, const char *fmt, ...)
{
    va_list ap;

    r->failed++;
    va_start(ap, fmt);
    vwarn(r, path, fmt, ap);
    va_end(ap);
}

/* strerror is not thread-safe. */
static const char *errtext(int err, char *buf, size_t n)
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
        src_fail(s, "read error: %s", errtext(errno, e, sizeof e));
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
        if (archive_read_data(s->a, &probe, 1) == 0)
            return 0;
        src_fail(s, "more than %llu bytes after decompression; the rest is skipped",
                 (unsigned long long)limit);
        return -1;
    }
    if (bomb(s))
        return -1;
    if (n > limit - s->out)
        n = (size_t)(limit - s->out);
    k = archive_read_data(s->a, buf, n);
    if (k < 0) {
        source *parent = s->in->parent;
        /* A failure below us (a bomb in the outer archive, a read error)
         * is reported once, in its own words. */
        if (parent->failed && !parent->reported) {
            src_fail(s, "%s", parent->msg);
            parent->reported = true;
        } else {
            src_fail(s, "truncated or corrupt archive: %s",
                     archive_error_string(s->a) ? archive_error_string(s->a) : "unknown error");
        }
        s->fatal = k == ARCHIVE_FATAL;
        return -1;
    }
    s->out += (uint64_t)k;
    s->in->produced += (uint64_t)k;
    return (ssize_t)k;
}

/* >0 bytes, 0 at the end, -1 on failure (s->msg says why; later calls fail too). */
static ssize_t src_read(source *s, char *buf, size_t n)
{
    if (s->failed)
        return -1;
    return s->a ? member_read(s, buf, n) : fd_read(s, buf, n);
}

static size_t fill(source *s, char *buf, size_t want)
{
    size_t len = 0;

    while (len < want) {
        ssize_t k = src_read(s, buf + len, want - len);
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

/* ---- line pump --------------------------------------------------------- */

/* The bytes the pump's offsets refer to. r->buf is looked up each time:
 * a consumer that keeps buffers replaces it (hand_over). */
static const char *bytes(const pump *st)
{
    return st->map ? cp_mapping_data(st->map) : st->r->buf;
}

static void replace_nuls(char *p, size_t n)
{
    char *end = p + n;

    while ((p = memchr(p, '\0', (size_t)(end - p))) != NULL) {
        /* NULs come in runs (a hole left by a crash): take the run at once */
        while (p < end && *p == '\0')
            *p++ = ' ';
    }
}

/* Hands buf[d, e) to the consumer. A consumer that keeps buffers takes
 * the whole one when the bytes after the chunk are fewer than the chunk's
 * own: those move to the front of the buffer it gives back, which costs
 * less than the copy it saves. */
static int hand_over(pump *st, size_t e)
{
    run *r = st->r;
    const cp_reader_cb *cb = r->cb;
    const size_t off = st->d, n = e - off;
    char *next = r->buf;
    int stop;

    if (!cb->chunk_swap || st->len - e >= n) {
        stop = cb->chunk ? cb->chunk(r->user, r->buf + off, n, st->line) : 0;
        st->d = e;
        return stop;
    }
    stop = cb->chunk_swap(r->user, &next, r->cap, off, n, st->line);
    if (next == r->buf) {
        st->d = e;
        return stop;
    }
    memcpy(next, r->buf + e, st->len - e);
    r->buf = next;
    st->s -= e;
    st->len -= e;
    st->d = 0;
    return stop;
}

/* Read path: makes buf[d, e) a chunk in place and hands it over; returns
 * its number of lines. */
static uint64_t deliver_read(pump *st, size_t e)
{
    char *p = st->r->buf + st->d;
    const size_t n = e - st->d;
    bool nul = false;
    /* one pass over the chunk counts its lines and finds NULs (rare) */
    const uint64_t lines = cp_count_newlines_nul(p, n, &nul);

    if (nul)
        replace_nuls(p, n);
    st->stopped = hand_over(st, e) != 0;
    return lines;
}

/* Mapped path, a chunk that is the file's bytes as they are: it goes out
 * without a copy. A consumer that keeps chunks gets a reference with it;
 * for any other, the pages are dropped once it has read them. */
static int hand_over_mapped(pump *st, const char *p, size_t n)
{
    run *r = st->r;
    const cp_reader_cb *cb = r->cb;
    int stop = 0;

    if (cb->chunk_mapped) {
        cp_mapping_ref(st->map);
        return cb->chunk_mapped(r->user, st->map, p, n, st->line);
    }
    if (cb->chunk)
        stop = cb->chunk(r->user, p, n, st->line);
    cp_mapping_drop(st->map, p, n);
    return stop;
}

/* Mapped path, a chunk the mapping cannot give as it is (a NUL byte, a
 * cut line, a last line without '\n'): copied into r->buf and fixed there
 * as the read path would, then handed over like a read chunk with nothing
 * after it. Returns its number of lines. */
static uint64_t hand_over_copy(pump *st, size_t e)
{
    run *r = st->r;
    const cp_reader_cb *cb = r->cb;
    const size_t size = cp_mapping_size(st->map);
    const size_t n = e - st->d, have = (e <= size ? e : size) - st->d;
    const char *p = bytes(st) + st->d;
    bool nul = false;
    uint64_t lines;

    memcpy(r->buf, p, have);
    if (st->nl_at >= st->d && st->nl_at < e)
        r->buf[st->nl_at - st->d] = '\n';
    lines = cp_count_newlines_nul(r->buf, n, &nul);
    if (nul)
        replace_nuls(r->buf, n);
    cp_mapping_drop(st->map, p, have); /* nobody reads them there again */
    if (cb->chunk_swap) {
        char *next = r->buf;
        st->stopped = cb->chunk_swap(r->user, &next, r->cap, 0, n, st->line) != 0;
        r->buf = next;
    } else if (cb->chunk) {
        st->stopped = cb->chunk(r->user, r->buf, n, st->line) != 0;
    }
    return lines;
}

/* Mapped path: hands over buf[d, e); returns its number of lines. */
static uint64_t deliver_mapped(pump *st, size_t e)
{
    const char *p = bytes(st) + st->d;
    const size_t n = e - st->d;
    const bool marked = st->nl_at >= st->d && st->nl_at < e;
    bool nul = false;
    uint64_t lines = 0;

    if (!marked)
        lines = cp_count_newlines_nul(p, n, &nul);
    if (marked || nul)
        lines = hand_over_copy(st, e);
    else
        st->stopped = hand_over_mapped(st, p, n) != 0;
    st->d = e;
    return lines;
}

/* Delivers buf[d, e) and moves d past it. */
static bool deliver(pump *st, size_t e)
{
    run *r = st->r;

    st->line += st->map ? deliver_mapped(st, e) : deliver_read(st, e);
    st->delivered = true;
    /* small first chunks let a short input start on every core at once;
     * later ones grow to chunk_size, which per-chunk work amortises over */
    if (r->chunk_now < r->o.chunk_size)
        r->chunk_now = r->chunk_now * 2 < r->o.chunk_size ? r->chunk_now * 2 : r->o.chunk_size;
    return st->stopped;
}

/* Delivers the complete lines in buf[d, s) as chunks of at least
 * chunk_size bytes; a shorter rest waits for more input unless `all`. */
static bool flush(pump *st, bool all)
{
    while (st->d < st->s) {
        /* grows as chunks go out */
        const size_t chunk = st->r->chunk_now < st->chunk_cap ? st->r->chunk_now : st->chunk_cap;
        size_t e = st->s;
        if (st->s - st->d > chunk) {
            /* there is a '\n' at or after the target: buf[s - 1] is one,
             * or, mapped, nl_at == s - 1 stands for one */
            const char *b = bytes(st);
            const char *nl = memchr(b + st->d + chunk - 1, '\n', st->s - (st->d + chunk - 1));
            e = nl ? (size_t)(nl - b) + 1 : st->s;
        } else if (st->s - st->d < chunk && !all) {
            break;
        }
        if (deliver(st, e))
            return true;
    }
    return false;
}

/* Advances s over complete lines in buf[s, len). Instead of visiting every
 * line, it looks for the last newline in a window of max_line + 1 bytes:
 * all lines before it are short enough. If a full window holds no newline,
 * the line at s is too long. */
static size_t scan(const char *buf, size_t s, size_t len, size_t window, bool *too_long)
{
    while (s < len) {
        size_t span = len - s < window ? len - s : window;
        const char *nl = memrchr(buf + s, '\n', span);
        if (nl) {
            s = (size_t)(nl - buf) + 1;
            continue;
        }
        *too_long = span == window;
        break;
    }
    return s;
}

/* Keeps the first max_line bytes of the line at s, followed by '\n'. */
static void cut_line(pump *st)
{
    run *r = st->r;

    if (!st->warned_long) {
        uint64_t line = st->line + cp_count_newlines(bytes(st) + st->d, st->s - st->d);
        warn(r, st->path, "line %llu is longer than %zu bytes; kept the first %zu",
             (unsigned long long)line, r->o.max_line, r->o.max_line);
        st->warned_long = true;
    }
    if (st->map)
        st->nl_at = st->s + r->o.max_line;
    else
        r->buf[st->s + r->o.max_line] = '\n';
}

/* Drops the rest of a cut line, up to its newline; false when the window
 * ends first. */
static bool skip_rest(pump *st)
{
    const char *b = bytes(st);
    const char *nl = memchr(b + st->s, '\n', st->len - st->s);
    const size_t to = nl ? (size_t)(nl - b) + 1 : st->len;

    if (st->map) /* the bytes go nowhere: nobody else drops their pages */
        cp_mapping_drop(st->map, b + st->s, to - st->s);
    st->d = st->s = to;
    if (nl)
        st->skipping = false;
    return nl != NULL;
}

/* Delivers what buf[d, len) holds; returns true when the stream stops. */
static bool process(pump *st, bool eof)
{
    const size_t max_line = st->r->o.max_line;

    for (;;) {
        bool too_long = false;
        if (st->skipping && !skip_rest(st))
            return false;
        st->s = scan(bytes(st), st->s, st->len, max_line + 1, &too_long);
        if (!too_long)
            return flush(st, eof);
        cut_line(st);
        st->s += max_line + 1;
        if (flush(st, true))
            return true;
        st->skipping = true;
    }
}

/* Brings more of the input into the window; false at its end. */
static bool refill(pump *st)
{
    run *r = st->r;
    ssize_t k;

    if (st->map) {
        /* what a read into r->buf would have added: the window stays the
         * read path's buffer, so warnings come between the same chunks */
        const size_t left = cp_mapping_size(st->map) - st->len;
        const size_t room = r->cap - 1 - (st->len - st->d);
        const size_t add = left < room ? left : room;
        st->len += add;
        return add > 0;
    }
    memmove(r->buf, r->buf + st->d, st->len - st->d);
    st->s -= st->d;
    st->len -= st->d;
    st->d = 0;
    /* one byte stays free for the newline a last line may need */
    k = src_read(st->src, r->buf + st->len, r->cap - st->len - 1);
    if (k <= 0)
        return false;
    st->len += (size_t)k;
    return true;
}

/* Pumps a text stream whose first `len` bytes are in the window. */
static void pump_text(pump *st)
{
    bool eof = false;

    for (;;) {
        if (process(st, eof))
            return;
        if (eof)
            break;
        eof = !refill(st);
    }
    if (!st->skipping && st->s < st->len) {
        if (st->map)
            st->nl_at = st->len++;
        else
            st->r->buf[st->len++] = '\n';
        (void)deliver(st, st->len);
    }
}

/* One text stream, read or mapped: begin, the chunks, end. */
static void read_lines(pump *st)
{
    run *r = st->r;
    const cp_stream_info info = { .path = st->path, .index = r->next_index++ };

    if (r->cb->begin && r->cb->begin(r->user, &info))
        return;
    pump_text(st);
    if (st->delivered)
        r->delivered++;
    if (st->src && st->src->failed && !st->src->reported) {
        fail(r, st->path, "%s", st->src->msg);
        st->src->reported = true;
    }
    if (r->cb->end)
        r->cb->end(r->user, &info);
}

/* The longest chunk of a stream of `size` bytes (0: unknown). A file of a
 * few MB is cut into about CHUNKS_PER_FILE chunks, so that the last chunks
 * of a paste do not leave one core scanning a 4 MiB chunk alone while the
 * others wait for it. */
static size_t chunk_cap(const run *r, uint64_t size)
{
    if (size == 0 || size / CHUNKS_PER_FILE > SIZE_MAX)
        return SIZE_MAX;
    size_t cap = (size_t)(size / CHUNKS_PER_FILE);
    return cap > r->o.first_chunk ? cap : r->o.first_chunk;
}

static void read_text(run *r, source *src, const char *path, size_t len, uint64_t size)
{
    pump st = { .r = r, .src = src, .path = path, .line = 1, .len = len, .nl_at = SIZE_MAX,
                .chunk_cap = chunk_cap(r, size) };

    read_lines(&st);
}

/* ---- archives ---------------------------------------------------------- */

/* Not archive_read_support_{filter,format}_all: "all" brings mtree, whose
 * reader opens and reads files on this machine named inside the archive
 * (an uploaded bundle could pull /etc files into a report, or block on a
 * FIFO), and filters run as external programs (lrzip, lzop, grzip). These
 * are the ones log bundles use; raw makes a lone compressed file a
 * one-member archive. */
static int (*const filters[])(struct archive *) = {
    archive_read_support_filter_gzip, archive_read_support_filter_zstd,
    archive_read_support_filter_xz, archive_read_support_filter_bzip2,
    archive_read_support_filter_lz4, archive_read_support_filter_lzip,
    archive_read_support_filter_compress,
};
static int (*const formats[])(struct archive *) = {
    archive_read_support_format_tar, archive_read_support_format_zip,
    archive_read_support_format_empty, archive_read_support_format_raw,
};

static la_ssize_t in_read(struct archive *a, void *opaque, const void **out)
{
    archive_in *in = opaque;
    size_t n = in->pending;

    in->pending = 0;
    if (n == 0) {
        ssize_t k = src_read(in->parent, (char *)in->block, IN_BLOCK);
        if (k < 0) {
            archive_set_error(a, EIO, "%s", in->parent->msg);
            return -1;
        }
        n = (size_t)k;
    }
    in->consumed += n;
    *out = in->block;
    return (la_ssize_t)n;
}

/* A zip whose first member is ".../data.pkl" is a torch.save checkpoint. */
static bool is_checkpoint(struct archive *a, const char *name)
{
    size_t n = strlen(name);

    return (archive_format(a) & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_ZIP &&
           (strcmp(name, "data.pkl") == 0 ||
            (n > 9 && strcmp(name + n - 9, "/data.pkl") == 0));
}

static const char *entry_name(struct archive_entry *e)
{
    const char *name = archive_entry_pathname(e);

    if (!name)
        name = archive_entry_pathname_utf8(e);
    return name ? name : "?";
}

/* Reads one regular member; returns false when the archive cannot go on. */
static bool read_member(run *r, struct archive *a, archive_in *in,
                        const char *path, const char *name, int depth)
{
    source m = { .r = r, .fd = -1, .a = a, .in = in, .in_start = in->consumed };
    const bool raw = archive_format(a) == ARCHIVE_FORMAT_RAW;
    const size_t size = strlen(path) + 1 + strlen(name) + 1;
    char *shown = raw ? NULL : malloc(size);

    if (!raw && !shown) {
        fail(r, path, "out of memory");
        return false;
    }
    if (shown)
        snprintf(shown, size, "%s:%s", path, name);
    read_stream(r, &m, raw ? path : shown, depth + 1);
    free(shown);
    return !m.fatal;
}

static void read_members(run *r, struct archive *a, archive_in *in,
                         const char *path, int depth)
{
    struct archive_entry *e;
    int members = 0, retries = 0;

    for (;;) {
        int rc = archive_read_next_header(a, &e);
        if (rc == ARCHIVE_EOF)
            break;
        if (rc == ARCHIVE_WARN) {
            const char *why = archive_error_string(a);
            if (why)
                warn(r, path, "%s", why);
        } else if (rc != ARCHIVE_OK) {
            const char *why = archive_error_string(a);
            fail(r, path, "truncated or corrupt archive: %s", why ? why : "unknown error");
            if (rc == ARCHIVE_FATAL || ++retries > 8)
                return;
            continue;
        }
        retries = 0;
        /* raw format straight over the bytes: no filter took them, so the
         * magic bytes lied (corrupt header); reading on would recurse */
        if (archive_format(a) == ARCHIVE_FORMAT_RAW &&
            archive_filter_code(a, 0) == ARCHIVE_FILTER_NONE) {
            fail(r, path, "truncated or corrupt archive: unrecognised data after the magic bytes");
            return;
        }
        if (archive_entry_filetype(e) != AE_IFREG)
            continue;
        if (members++ == 0 && is_checkpoint(a, entry_name(e))) {
            warn(r, path, "PyTorch checkpoint (binary), skipped");
            return;
        }
        if (!read_member(r, a, in, path, entry_name(e), depth))
            return;
    }
    if (members == 0)
        warn(r, path, archive_format(a) == ARCHIVE_FORMAT_EMPTY ? "empty file" : "empty archive");
}

/* Opens an archive over `src`, whose first head_len bytes are in r->buf. */
static void read_archive(run *r, source *src, const char *path, size_t head_len, int depth)
{
    archive_in in = { .parent = src, .pending = head_len };
    struct archive *a = archive_read_new();

    in.block = malloc(IN_BLOCK);
    if (!a || !in.block) {
        fail(r, path, "out of memory");
        goto done;
    }
    assert(head_len <= IN_BLOCK);
    memcpy(in.block, r->buf, head_len);
    for (size_t i = 0; i < sizeof filters / sizeof filters[0]; i++)
        (void)filters[i](a);
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        (void)formats[i](a);
    if (archive_read_open(a, &in, NULL, in_read, NULL) != ARCHIVE_OK) {
        const char *why = archive_error_string(a);
        fail(r, path, "truncated or corrupt archive: %s", why ? why : "unknown error");
        goto done;
    }
    read_members(r, a, &in, path, depth);
done:
    archive_read_free(a);
    free(in.block);
}

/* ---- streams ----------------------------------------------------------- */

/* A stream another module takes whole; its first `len` bytes are in r->buf. */
static void read_whole(run *r, source *src, const char *path, size_t len)
{
    size_t cap = len * 2 > CP_READER_MAX_WHOLE ? CP_READER_MAX_WHOLE : len * 2;
    char *p = malloc(cap);
    if (!p) {
        warn(r, path, "out of memory, skipped");
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
static void read_stream(run *r, source *src, const char *path, int depth)
{
    const size_t len = fill(src, r->buf, HEAD_SIZE);

    if (len == 0) {
        if (!src->failed)
            warn(r, path, "empty file");
    } else if (r->cb->special && r->cb->whole && r->cb->special(r->user, path, (const unsigned char *)r->buf, len)) {
        read_whole(r, src, path, len);
    } else {
        switch (classify((const unsigned char *)r->buf, len)) {
        case K_ARCHIVE:
            if (depth >= MAX_NEST)
                warn(r, path, "archive nested too deep, skipped");
            else
                read_archive(r, src, path, len, depth);
            break;
        case K_BINARY:
            warn(r, path, "binary file, skipped");
            break;
        case K_NULS:
            warn(r, path, "only NUL bytes, skipped");
            break;
        case K_TEXT:
            /* an archive member's size is not the file's */
            read_text(r, src, path, len, depth == 0 ? r->file_size : 0);
            break;
        }
    }
    if (src->failed && !src->reported) {
        fail(r, path, "%s", src->msg);
        src->reported = true;
    }
}

static void read_fd(run *r, int fd, const char *path)
{
    source src = { .r = r, .fd = fd };

    read_stream(r, &src, path, 0);
}

/* Whether to map a regular file rather than read it. A file modified in
 * the last few seconds is read: it may be a live log, and logrotate's
 * copytruncate or a restarted job truncating it would make the mapping
 * fault (mapping.h). */
static bool worth_mapping(const run *r, const struct stat *st)
{
    struct timespec now;

    if (r->o.no_map || st->st_size < MAP_MIN || (uint64_t)st->st_size > SIZE_MAX)
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
                .chunk_cap = chunk_cap(r, size) };
    read_lines(&st);
    return true;
}

static void read_file(run *r, const char *path)
{
    struct stat st;
    char e[128];
    /* O_NONBLOCK: should the file turn into a FIFO between stat and open,
     * open must not wait for a writer. */
    int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

    if (fd < 0) {
        fail(r, path, "%s", errtext(errno, e, sizeof e));
        return;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        fail(r, path, "changed while being opened, skipped");
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

/* ---- folders ----------------------------------------------------------- */

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
    size_t n, n_cap;
    bool cut;
} listing;

static int listing_add(listing *l, const char *name)
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
        fail(r, r->path, "%s", errtext(errno, e, sizeof e));
        return -1;
    }
    for (errno = 0; (ent = readdir(dir)) != NULL; errno = 0) {
        if (strcmp(ent->d_name, ".") == 0 || strcmp(ent->d_name, "..") == 0)
            continue;
        if (listing_add(l, ent->d_name) != 0) {
            fail(r, r->path, "out of memory listing the folder");
            rc = -1;
            break;
        }
    }
    if (rc == 0 && errno != 0) {
        fail(r, r->path, "%s", errtext(errno, e, sizeof e));
        rc = -1;
    }
    closedir(dir);
    if (l->cut)
        warn(r, r->path, "too many entries; only the first %zu found were read", l->n);
    return rc;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void walk_dir(run *r, size_t len, const struct stat *st)
{
    listing l = { 0 };
    const char **sorted = NULL;
    const bool slash = len > 0 && r->path[len - 1] == '/';
    int added = seen_add(&r->seen, st->st_dev, st->st_ino);

    if (added <= 0) {
        if (added == 0)
            warn(r, r->path, "folder already read (symbolic link cycle?), skipped");
        else
            fail(r, r->path, "too many folders, skipped");
        return;
    }
    if (list_dir(r, &l) != 0 || l.n == 0)
        goto done;
    sorted = malloc(l.n * sizeof *sorted);
    if (!sorted) {
        fail(r, r->path, "out of memory listing the folder");
        goto done;
    }
    for (size_t i = 0; i < l.n; i++)
        sorted[i] = l.names + l.off[i];
    qsort(sorted, l.n, sizeof *sorted, by_name);
    for (size_t i = 0; i < l.n; i++) {
        const size_t at = slash ? len : len + 1;
        const size_t name_len = strlen(sorted[i]);
        if (at + name_len >= sizeof r->path) {
            fail(r, r->path, "path of \"%s\" too long, skipped", sorted[i]);
            continue;
        }
        r->path[len] = '/';
        memcpy(r->path + at, sorted[i], name_len + 1);
        visit(r, at + name_len);
        r->path[len] = '\0';
    }
done:
    free(sorted);
    free(l.off);
    free(l.names);
}

static const char *special_kind(mode_t mode)
{
    return S_ISFIFO(mode) ? "FIFO" : S_ISCHR(mode) ? "character device"
         : S_ISBLK(mode) ? "block device" : S_ISSOCK(mode) ? "socket" : "special file";
}

/* r->path holds a path of `len` bytes. Types are checked before anything is
 * opened: opening a FIFO would wait for a writer. */
static void visit(run *r, size_t len)
{
    struct stat st, lst;
    char e[128];

    if (stat(r->path, &st) != 0) {
        int err = errno;
        if (err == ELOOP)
            fail(r, r->path, "symbolic link loop, skipped");
        else if (err == ENOENT && lstat(r->path, &lst) == 0 && S_ISLNK(lst.st_mode))
            fail(r, r->path, "broken symbolic link, skipped");
        else
            fail(r, r->path, "%s", errtext(err, e, sizeof e));
    } else if (S_ISDIR(st.st_mode)) {
        walk_dir(r, len, &st);
    } else if (S_ISREG(st.st_mode)) {
        read_file(r, r->path);
    } else {
        fail(r, r->path, "%s, skipped", special_kind(st.st_mode));
    }
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
    if (in->max_member_bytes)
        o.max_member_bytes = in->max_member_bytes;
    o.max_ratio = in->max_ratio > 0 ? in->max_ratio : 0;
    o.no_map = in->no_map;
    return o;
}

static void read_path(run *r, const char *path)
{
    const size_t len = strlen(path);

    if (strcmp(path, "-") == 0) {
        read_fd(r, STDIN_FILENO, "-");
        return;
    }
    if (len == 0 || len >= sizeof r->path) {
        fail(r, path, len ? "path too long, skipped" : "empty path, skipped");
        return;
    }
    memcpy(r->path, path, len + 1);
    visit(r, len);
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
    r->cap = r->o.chunk_size + r->o.max_line + 2;
    if (r->cap < HEAD_SIZE + 1)
        r->cap = HEAD_SIZE + 1;
    r->buf = malloc(r->cap);
    if (!r->buf) {
        fail(r, n_paths ? paths[0] : "-", "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_paths; i++)
        read_path(r, paths[i]);
    result = r->delivered == 0 && r->failed > 0 ? -1 : r->delivered;
done:
    if (r) {
        free(r->seen.slot);
        free(r->buf);
    }
    free(r);
    return result;
}
