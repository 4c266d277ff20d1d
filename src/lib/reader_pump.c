/* reader_pump.c - one text stream into chunks of whole lines (see
 * reader.h for the contract, reader.c for the design): read through the
 * run's buffer, or straight from a mapped file, with the same chunk
 * boundaries, line numbers and warnings either way. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memrchr */
#endif

#include "reader_int.h"
#include "util/strutil.h"

#include <stdio.h>
#include <string.h>

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

/* The map of the chunk just built, for the consumer; NULL when there is
 * none. */
static cp_nlmap *chunk_map(run *r)
{
    return r->have_map ? &r->newlines : NULL;
}

/* The reader's one pass over every byte it delivers: maps p[0, n)'s
 * newlines (the scanner reads the map, not the bytes again), counts them
 * and looks for NUL bytes. NULs are rare, so looking for them on the way
 * is cheaper than a second pass. Returns the number of lines; *nul says
 * whether p holds a NUL. */
static uint64_t map_lines(run *r, const char *p, size_t n, bool *nul)
{
    r->have_map = cp_nlmap_build(&r->newlines, p, n) == 0;
    if (!r->have_map)   /* out of memory: count without a map */
        return cp_count_newlines_nul(p, n, nul);
    *nul = r->newlines.nul;
    return r->newlines.newlines;
}

/* Maps and counts the lines of p[0, n) and turns its NUL bytes into
 * spaces: the map's newlines stay, and it holds no NUL any more. */
static uint64_t count_and_clean(run *r, char *p, size_t n)
{
    bool nul = false;
    const uint64_t lines = map_lines(r, p, n, &nul);

    if (nul) {
        replace_nuls(p, n);
        r->newlines.nul = false;
    }
    return lines;
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
        stop = cb->chunk ? cb->chunk(r->user, r->buf + off, n, st->line, chunk_map(r)) : 0;
        st->d = e;
        return stop;
    }
    stop = cb->chunk_swap(r->user, &next, r->cap, off, n, st->line, chunk_map(r));
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
    const uint64_t lines = count_and_clean(st->r, st->r->buf + st->d, e - st->d);

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
        return cb->chunk_mapped(r->user, st->map, p, n, st->line, chunk_map(r));
    }
    if (cb->chunk)
        stop = cb->chunk(r->user, p, n, st->line, chunk_map(r));
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
    uint64_t lines;

    memcpy(r->buf, p, have);
    if (st->nl_at >= st->d && st->nl_at < e)
        r->buf[st->nl_at - st->d] = '\n';
    lines = count_and_clean(r, r->buf, n);
    cp_mapping_drop(st->map, p, have); /* nobody reads them there again */
    if (cb->chunk_swap) {
        char *next = r->buf;
        st->stopped = cb->chunk_swap(r->user, &next, r->cap, 0, n, st->line, chunk_map(r)) != 0;
        r->buf = next;
    } else if (cb->chunk) {
        st->stopped = cb->chunk(r->user, r->buf, n, st->line, chunk_map(r)) != 0;
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
        lines = map_lines(st->r, p, n, &nul);
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
        rd_warn(r, st->path, "line %llu is longer than %zu bytes; kept the first %zu",
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
    k = rd_src_read(st->src, r->buf + st->len, r->cap - st->len - 1);
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
void rd_read_lines(pump *st)
{
    run *r = st->r;
    const cp_stream_info info = { .path = st->path, .index = r->next_index++ };

    if (r->cb->begin && r->cb->begin(r->user, &info))
        return;
    pump_text(st);
    if (st->delivered)
        r->delivered++;
    if (st->src && st->src->failed && !st->src->reported) {
        rd_fail(r, st->path, "%s", st->src->msg);
        st->src->reported = true;
    }
    if (r->cb->end)
        r->cb->end(r->user, &info);
}

/* The longest chunk of a stream of `size` bytes (0: unknown). A file of a
 * few MB is cut into about CHUNKS_PER_FILE chunks, so that the last chunks
 * of a paste do not leave one core scanning a 4 MiB chunk alone while the
 * others wait for it. */
size_t rd_chunk_cap(const run *r, uint64_t size)
{
    if (size == 0 || size / CHUNKS_PER_FILE > SIZE_MAX)
        return SIZE_MAX;
    size_t cap = (size_t)(size / CHUNKS_PER_FILE);
    return cap > r->o.first_chunk ? cap : r->o.first_chunk;
}

void rd_read_text(run *r, source *src, const char *path, size_t len, uint64_t size)
{
    pump st = { .r = r, .src = src, .path = path, .line = 1, .len = len, .nl_at = SIZE_MAX,
                .chunk_cap = rd_chunk_cap(r, size) };

    rd_read_lines(&st);
}

