/* test_reader.c - unit tests of the reader: files, folders, archives,
 * stdin, and the bad inputs it must survive. Every input is made at run
 * time in a fresh temporary folder, removed afterwards. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reader.h"

enum { MAX_STREAMS = 64, MAX_WARN = 64, MAX_HELD = 64 };

/* A chunk of a mapped file kept past its call, with its offset in the
 * stream's text. */
typedef struct held {
    cp_mapping *m;
    const char *data;
    size_t len, off;
} held;

typedef struct stream_rec {
    char path[512];
    int index;
    char *text;
    size_t len, cap;
    bool ended;
} stream_rec;

/* What a run delivered, checked against the callback contract as it goes. */
typedef struct rec {
    stream_rec s[MAX_STREAMS];
    int n;                       /* streams recorded in s */
    int begun;                   /* streams begun, recorded or not */
    stream_rec spare;            /* the stream being read once s is full */
    stream_rec *cur;
    char warn[MAX_WARN][1024];
    int n_warn;
    size_t max_line, chunk_size; /* for the checks; 0 = defaults */
    size_t store_cap;            /* bytes kept per stream */
    uint64_t next_line, total;
    int chunks, stream_chunks;
    int skip_index;              /* begin() refuses this index */
    const char *remove_on_begin; /* begin() removes this file (once) */
    void (*begin_hook)(void);    /* and then calls this (once) */
    int stop_after;              /* chunk() stops a stream after this many */
    bool swap;                   /* take chunks through chunk_swap */
    int swaps;                   /* chunks taken so */
    char *kept;                  /* the buffer chunk_swap kept last */
    cp_nlmap kept_map;           /* and its newline map */
    size_t buf_size;
    size_t bounds[4096];         /* the first chunks' lengths, in order */
    uint64_t firsts[4096];       /* and their first_line */
    int n_bounds;
    bool mapped;                 /* take mapped chunks through chunk_mapped */
    int maps;                    /* chunks taken so */
    held held[MAX_HELD];         /* the first of them, kept until rec_free */
    int n_held;
} rec;

static char dir[PATH_MAX];
static bool swap_default;        /* set by setup_swap: rec_new's r->swap */

/* ---- helpers ----------------------------------------------------------- */

static const char *at(const char *name)
{
    static char ring[8][PATH_MAX];
    static int i;
    char *p = ring[i++ % 8];
    int n = snprintf(p, PATH_MAX, "%s/%s", dir, name);

    assert_true(n > 0 && n < PATH_MAX);
    return p;
}

static void write_file(const char *name, const void *data, size_t len)
{
    FILE *f = fopen(at(name), "wb");

    assert_non_null(f);
    if (len)
        assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void write_str(const char *name, const char *s)
{
    write_file(name, s, strlen(s));
}

static void make_dir(const char *name)
{
    assert_int_equal(mkdir(at(name), 0755), 0);
}

static int on_begin(void *user, const cp_stream_info *info)
{
    rec *r = user;
    stream_rec *s;

    if (info->index == r->skip_index)
        return 1;
    if (r->remove_on_begin) {
        assert_int_equal(unlink(r->remove_on_begin), 0);
        r->remove_on_begin = NULL;
        if (r->begin_hook)
            r->begin_hook();
    }
    r->begun++;
    if (r->n < MAX_STREAMS) {
        s = &r->s[r->n++];
    } else {
        s = &r->spare;
        s->len = 0;
    }
    r->cur = s;
    snprintf(s->path, sizeof s->path, "%s", info->path);
    s->index = info->index;
    r->next_line = 1;
    r->stream_chunks = 0;
    return 0;
}

/* The newline map that comes with a chunk describes exactly its bytes. */
static void check_map(const cp_nlmap *m, const char *data, size_t len, uint64_t lines)
{
    assert_non_null(m);
    assert_int_equal(m->len, len);
    assert_int_equal(m->newlines, lines);
    assert_false(m->nul);
    for (size_t i = 0; i < len; i++)
        if (cp_nlmap_is_newline(m, i) != (data[i] == '\n'))
            fail_msg("map and chunk differ at byte %zu of %zu", i, len);
}

static int on_chunk(void *user, const char *data, size_t len, uint64_t first_line, cp_nlmap *newlines)
{
    rec *r = user;
    stream_rec *s = r->cur;
    const size_t max_line = r->max_line ? r->max_line : 64 * 1024;
    const size_t chunk = r->chunk_size ? r->chunk_size : 1024 * 1024;
    uint64_t lines = 0;

    assert_true(len > 0);
    assert_int_equal(data[len - 1], '\n');
    assert_null(memchr(data, '\0', len));
    assert_int_equal(first_line, r->next_line);
    assert_true(len < chunk + max_line + 2);
    for (const char *p = data, *end = data + len; p < end; lines++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        assert_true((size_t)(nl - p) <= max_line);
        p = nl + 1;
    }
    check_map(newlines, data, len, lines);
    r->next_line += lines;
    r->total += len;
    if (r->chunks < (int)(sizeof r->bounds / sizeof r->bounds[0])) {
        r->firsts[r->n_bounds] = first_line;
        r->bounds[r->n_bounds++] = len;
    }
    r->chunks++;
    if (s->len < r->store_cap && s != &r->spare) {
        size_t keep = len < r->store_cap - s->len ? len : r->store_cap - s->len;
        if (s->len + keep > s->cap) {
            s->cap = (s->len + keep) * 2;
            s->text = realloc(s->text, s->cap + 1);
            assert_non_null(s->text);
        }
        memcpy(s->text + s->len, data, keep);
        s->len += keep;
        s->text[s->len] = '\0';
    }
    return r->stop_after && ++r->stream_chunks >= r->stop_after;
}

static void on_end(void *user, const cp_stream_info *info)
{
    rec *r = user;

    assert_non_null(r->cur);
    assert_string_equal(r->cur->path, info->path);
    r->cur->ended = true;
}

static void on_warn(void *user, const char *path, const char *message)
{
    rec *r = user;

    assert_non_null(path);
    assert_non_null(message);
    if (r->n_warn < MAX_WARN)
        snprintf(r->warn[r->n_warn++], sizeof r->warn[0], "%s: %s", path, message);
}

/* Keeps every chunk's buffer and hands back the one kept before, its old
 * bytes overwritten: the reader must read nothing of a buffer it got back
 * but what it wrote there itself. */
static int on_chunk_swap(void *user, char **buf, size_t size, size_t off, size_t len, uint64_t first_line,
                         cp_nlmap *newlines)
{
    rec *r = user;
    char *spare = r->kept;
    int stop = on_chunk(user, *buf + off, len, first_line, newlines);

    /* keeps the map too, and gives back the one kept before, scrambled */
    cp_nlmap_swap(&r->kept_map, newlines);
    if (newlines->bits)
        memset(newlines->bits, 0xa5, newlines->cap * sizeof *newlines->bits);

    r->swaps++;

    assert_true(r->buf_size == 0 || r->buf_size == size);
    r->buf_size = size;
    if (!spare)
        spare = malloc(size);
    assert_non_null(spare);
    memset(spare, '\n', size);
    r->kept = *buf;
    *buf = spare;
    return stop;
}

/* Keeps the first mapped chunks (their reference with them) to check,
 * once the run is over, that they stayed valid; gives the others back at
 * once, as a consumer that is done with them would. */
static int on_chunk_mapped(void *user, cp_mapping *m, const char *data, size_t len, uint64_t first_line,
                           cp_nlmap *newlines)
{
    rec *r = user;
    int stop = on_chunk(user, data, len, first_line, newlines);

    r->maps++;
    if (r->n_held < MAX_HELD && r->cur != &r->spare)
        r->held[r->n_held++] = (held){ m, data, len, r->cur->len - len };
    else
        cp_mapping_release(m, data, len);
    return stop;
}

static const cp_reader_cb callbacks = { on_begin, on_chunk, on_end, on_warn, NULL, NULL, NULL, NULL };
static const cp_reader_cb swap_callbacks = { on_begin, on_chunk, on_end, on_warn, NULL, NULL,
                                             on_chunk_swap, NULL };
/* as culprit.c's consumer: swaps read chunks, keeps mapped ones */
static const cp_reader_cb mapped_callbacks = { on_begin, on_chunk, on_end, on_warn, NULL, NULL,
                                               on_chunk_swap, on_chunk_mapped };

static rec *rec_new(void)
{
    rec *r = calloc(1, sizeof *r);

    assert_non_null(r);
    r->store_cap = 64 * 1024 * 1024;
    r->skip_index = -1;
    r->swap = swap_default;
    return r;
}

static void rec_free(rec *r)
{
    for (int i = 0; i < r->n_held; i++)
        cp_mapping_release(r->held[i].m, r->held[i].data, r->held[i].len);
    for (int i = 0; i < r->n; i++)
        free(r->s[i].text);
    free(r->kept);
    cp_nlmap_free(&r->kept_map);
    free(r);
}

static int run_paths(rec *r, const cp_reader_opts *o, int n, ...)
{
    const char *paths[16];
    va_list ap;

    assert_true(n <= 16);
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        paths[i] = va_arg(ap, const char *);
    va_end(ap);
    return cp_reader_run(paths, (size_t)n, o,
                         r->mapped ? &mapped_callbacks : r->swap ? &swap_callbacks : &callbacks, r);
}

static int run_one(rec *r, const cp_reader_opts *o, const char *path)
{
    return run_paths(r, o, 1, path);
}

/* The warning that contains both strings, or NULL. */
static const char *find_warning(const rec *r, const char *a, const char *b)
{
    for (int i = 0; i < r->n_warn; i++)
        if (strstr(r->warn[i], a) && strstr(r->warn[i], b))
            return r->warn[i];
    return NULL;
}

static void assert_stream(const rec *r, int i, const char *path, const char *text)
{
    assert_true(i < r->n);
    assert_string_equal(r->s[i].path, path);
    assert_non_null(r->s[i].text);
    assert_string_equal(r->s[i].text, text);
    assert_true(r->s[i].ended);
}

typedef struct member {
    const char *name;
    const void *data;
    size_t len;
} member;

static void add_members(struct archive *a, const member *m, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, m[i].name);
        archive_entry_set_size(e, (la_int64_t)m[i].len);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
        assert_int_equal(archive_write_data(a, m[i].data, m[i].len), (la_ssize_t)m[i].len);
        archive_entry_free(e);
    }
}

/* Writes an archive with libarchive: `format` and `filter` are its
 * archive_write_set_format_* and archive_write_add_filter_* functions. */
static void write_archive(const char *name, int (*format)(struct archive *),
                          int (*filter)(struct archive *), const member *m, size_t n)
{
    struct archive *a = archive_write_new();

    assert_int_equal(format(a), ARCHIVE_OK);
    assert_int_equal(filter(a), ARCHIVE_OK);
    assert_int_equal(archive_write_open_filename(a, at(name)), ARCHIVE_OK);
    add_members(a, m, n);
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
}

/* Compresses `data` as a lone compressed stream (raw format) into memory;
 * the caller frees the result. */
static unsigned char *compress_mem(int (*filter)(struct archive *), const void *data,
                                   size_t len, size_t *out_len)
{
    const size_t cap = len + 64 * 1024;
    unsigned char *out = malloc(cap);
    struct archive *a = archive_write_new();
    const member m = { "data", data, len };

    assert_non_null(out);
    assert_int_equal(archive_write_set_format_raw(a), ARCHIVE_OK);
    assert_int_equal(filter(a), ARCHIVE_OK);
    /* the writer pads to 10 KiB blocks by default; a compressed file has none */
    assert_int_equal(archive_write_set_bytes_in_last_block(a, 1), ARCHIVE_OK);
    assert_int_equal(archive_write_open_memory(a, out, cap, out_len), ARCHIVE_OK);
    add_members(a, &m, 1);
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
    return out;
}

/* Text with lines of varied lengths (0 to 199 bytes), deterministic. */
static char *make_lines(int n, size_t *len)
{
    char *text = malloc((size_t)n * 220);
    uint32_t x = 12345;
    size_t used = 0;

    assert_non_null(text);
    for (int i = 0; i < n; i++) {
        size_t width;
        x = x * 1103515245u + 12345u;
        width = (x >> 16) % 200;
        used += (size_t)sprintf(text + used, "%d:", i + 1);
        for (size_t k = 0; k < width; k++)
            text[used++] = (char)('a' + (k + (size_t)i) % 26);
        text[used++] = '\n';
    }
    text[used] = '\0';
    *len = used;
    return text;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/culprit-reader-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

/* The same tests with a consumer that swaps buffers (chunk_swap). */
static int setup_swap(void **state)
{
    swap_default = true;
    return setup(state);
}

static int teardown(void **state)
{
    (void)state;
    swap_default = false;
    return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- plain files ------------------------------------------------------- */

static void test_defaults(void **state)
{
    cp_reader_opts o;

    (void)state;
    cp_reader_opts_default(&o);
    assert_int_equal(o.max_line, 64 * 1024);
    assert_int_equal(o.chunk_size, 1024 * 1024);
    assert_true(o.max_member_bytes == (uint64_t)64 << 30);
    assert_true(o.max_ratio == 1000);
    assert_int_equal(o.map_min, 1024 * 1024);
}

static void test_plain_trailing_newline(void **state)
{
    rec *r = rec_new();

    (void)state;
    write_str("a.log", "alpha\nbeta\ngamma\n");
    assert_int_equal(run_one(r, NULL, at("a.log")), 1);
    assert_int_equal(r->n, 1);
    assert_stream(r, 0, at("a.log"), "alpha\nbeta\ngamma\n");
    assert_int_equal(r->next_line, 4);
    assert_int_equal(r->n_warn, 0);
    rec_free(r);
}

static void test_plain_no_trailing_newline(void **state)
{
    rec *r = rec_new();

    (void)state;
    write_str("a.log", "alpha\nlast words");
    assert_int_equal(run_one(r, NULL, at("a.log")), 1);
    assert_stream(r, 0, at("a.log"), "alpha\nlast words\n");
    assert_int_equal(r->next_line, 3);
    rec_free(r);
}

static void test_crlf_kept(void **state)
{
    rec *r = rec_new();

    (void)state;
    write_str("win.log", "one\r\ntwo\r\nthree");
    assert_int_equal(run_one(r, NULL, at("win.log")), 1);
    assert_stream(r, 0, at("win.log"), "one\r\ntwo\r\nthree\n");
    assert_int_equal(r->next_line, 4);
    rec_free(r);
}

/* Small chunks: every line must arrive once, whole, numbered right (the
 * checks are in on_chunk); the text is bigger than the first block. */
static void test_chunk_boundaries(void **state)
{
    rec *r = rec_new();
    cp_reader_opts o;
    size_t len;
    char *text = make_lines(5000, &len);

    (void)state;
    cp_reader_opts_default(&o);
    o.chunk_size = r->chunk_size = 64;
    write_file("lines.log", text, len);
    assert_int_equal(run_one(r, &o, at("lines.log")), 1);
    assert_stream(r, 0, at("lines.log"), text);
    assert_int_equal(r->next_line, 5001);
    assert_true(r->chunks > 1000);
    assert_int_equal(r->n_warn, 0);
    free(text);
    rec_free(r);
}

static void test_long_line(void **state)
{
    rec *r = rec_new();
    cp_reader_opts o;
    char text[512], want[512];

    (void)state;
    cp_reader_opts_default(&o);
    o.max_line = r->max_line = 16;
    o.chunk_size = r->chunk_size = 64;
    snprintf(text, sizeof text, "short\n%0100d\nafter\n%040d\nexact_sixteen_16\n%020d",
             7, 8, 9);
    snprintf(want, sizeof want, "short\n%016d\nafter\n%016d\nexact_sixteen_16\n%016d\n",
             0, 0, 0);
    write_str("long.log", text);
    assert_int_equal(run_one(r, &o, at("long.log")), 1);
    assert_stream(r, 0, at("long.log"), want);
    assert_int_equal(r->next_line, 7);
    /* one warning per stream, for the first long line */
    assert_int_equal(r->n_warn, 1);
    assert_non_null(find_warning(r, at("long.log"),
                                 "line 2 is longer than 16 bytes; kept the first 16"));
    rec_free(r);
}

/* A line much longer than the buffer is cut in bounded memory. */
static void test_huge_line(void **state)
{
    rec *r = rec_new();
    cp_reader_opts o;
    const size_t big = 8u << 20;
    char *text = malloc(big + 16);
    char want[2048];

    (void)state;
    assert_non_null(text);
    memset(text, 'z', big);
    memcpy(text + big, "\nend\n", 5);
    memset(want, 'z', 1024);
    memcpy(want + 1024, "\nend\n", 6);
    cp_reader_opts_default(&o);
    o.max_line = r->max_line = 1024;
    o.chunk_size = r->chunk_size = 4096;
    write_file("huge.log", text, big + 5);
    assert_int_equal(run_one(r, &o, at("huge.log")), 1);
    assert_stream(r, 0, at("huge.log"), want);
    assert_non_null(find_warning(r, "huge.log", "line 1 is longer than 1024 bytes"));
    free(text);
    rec_free(r);
}

static void test_nul_replaced(void **state)
{
    rec *r = rec_new();

    (void)state;
    write_file("nul.log", "a\0b\n\0\0\0\nc\n", 10);
    assert_int_equal(run_one(r, NULL, at("nul.log")), 1);
    assert_stream(r, 0, at("nul.log"), "a b\n   \nc\n");
    rec_free(r);
}

/* A log with a NUL hole (a crashed node) and Latin-1 bytes is still text. */
static void test_damaged_text_read(void **state)
{
    rec *r = rec_new();
    size_t len;
    char *text = make_lines(200, &len);

    (void)state;
    memset(text + 100, '\0', 2000);
    text[3000] = (char)0xe9;
    text[3100] = (char)0xff;
    write_file("damaged.log", text, len);
    assert_int_equal(run_one(r, NULL, at("damaged.log")), 1);
    assert_int_equal(r->n, 1);
    assert_int_equal(r->s[0].len, len);
    assert_int_equal(r->s[0].text[100], ' ');
    free(text);
    rec_free(r);
}

static void test_binary_skipped(void **state)
{
    rec *r = rec_new();
    unsigned char *bytes = malloc(100000);
    uint32_t x = 99;
    static const unsigned char elf[] = "\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0text\n";

    (void)state;
    assert_non_null(bytes);
    for (size_t i = 0; i < 100000; i++) {
        x = x * 1664525u + 1013904223u;
        bytes[i] = (unsigned char)(x >> 24);
    }
    write_file("random.bin", bytes, 100000);
    write_file("core", elf, sizeof elf - 1);
    assert_int_equal(run_paths(r, NULL, 2, at("random.bin"), at("core")), 0);
    assert_int_equal(r->n, 0);
    assert_non_null(find_warning(r, at("random.bin"), "binary file, skipped"));
    assert_non_null(find_warning(r, at("core"), "binary file, skipped"));
    free(bytes);
    rec_free(r);
}

static void test_all_nul(void **state)
{
    rec *r = rec_new();
    char *zeros = calloc(1, 100000);

    (void)state;
    write_file("zeros.log", zeros, 100000);
    assert_int_equal(run_one(r, NULL, at("zeros.log")), 0);
    assert_int_equal(r->n, 0);
    assert_non_null(find_warning(r, at("zeros.log"), "only NUL bytes, skipped"));
    free(zeros);
    rec_free(r);
}

static void test_empty_files(void **state)
{
    rec *r = rec_new();

    (void)state;
    write_file("empty1.log", "", 0);
    write_file("empty2.log", "", 0);
    assert_int_equal(run_paths(r, NULL, 2, at("empty1.log"), at("empty2.log")), 0);
    assert_int_equal(r->n, 0);
    assert_non_null(find_warning(r, at("empty1.log"), "empty file"));
    assert_non_null(find_warning(r, at("empty2.log"), "empty file"));
    rec_free(r);
}

static void test_nonexistent(void **state)
{
    rec *r = rec_new();

    (void)state;
    assert_int_equal(run_one(r, NULL, at("nope.log")), -1);
    assert_non_null(find_warning(r, at("nope.log"), "No such file"));
    /* one good path is enough for a result */
    write_str("ok.log", "fine\n");
    assert_int_equal(run_paths(r, NULL, 2, at("nope.log"), at("ok.log")), 1);
    rec_free(r);
}

static void test_unreadable(void **state)
{
    rec *r = rec_new();

    (void)state;
    write_str("secret.log", "hidden\n");
    assert_int_equal(chmod(at("secret.log"), 0), 0);
    if (access(at("secret.log"), R_OK) == 0) {
        /* Running as root (or with CAP_DAC_OVERRIDE): mode 000 does not
         * stop reading, so there is no permission error to observe. */
        assert_int_equal(run_one(r, NULL, at("secret.log")), 1);
    } else {
        assert_int_equal(run_one(r, NULL, at("secret.log")), -1);
        assert_non_null(find_warning(r, at("secret.log"), "Permission denied"));
    }
    rec_free(r);
}

static void test_fifo_skipped(void **state)
{
    rec *r = rec_new();

    (void)state;
    make_dir("d");
    write_str("d/a.log", "x\n");
    assert_int_equal(mkfifo(at("d/pipe"), 0644), 0);
    /* a reader that blocks on the FIFO would hang; the alarm kills it */
    alarm(20);
    assert_int_equal(run_one(r, NULL, at("d/pipe")), -1);
    assert_non_null(find_warning(r, at("d/pipe"), "FIFO, skipped"));
    assert_int_equal(run_one(r, NULL, at("d")), 1);
    alarm(0);
    assert_int_equal(r->n, 1);
    assert_string_equal(r->s[0].path, at("d/a.log"));
    rec_free(r);
}

static void test_symlink_loops(void **state)
{
    rec *r = rec_new();

    (void)state;
    make_dir("d");
    make_dir("d/sub");
    write_str("d/sub/a.log", "once\n");
    assert_int_equal(symlink("self", at("d/self")), 0);
    assert_int_equal(symlink("..", at("d/sub/up")), 0);
    assert_int_equal(run_one(r, NULL, at("d/self")), -1);
    assert_non_null(find_warning(r, at("d/self"), "symbolic link loop"));
    r->n_warn = 0;
    assert_int_equal(run_one(r, NULL, at("d")), 1);
    assert_int_equal(r->n, 1);
    assert_stream(r, 0, at("d/sub/a.log"), "once\n");
    assert_non_null(find_warning(r, at("d/self"), "symbolic link loop"));
    assert_non_null(find_warning(r, at("d/sub/up"), "already read"));
    rec_free(r);
}

static void test_folder_order(void **state)
{
    rec *r = rec_new();
    static const char *const want[] = {
        "B.log", "a.log", "a.log.d/x.log", "b.log", "sub/a.log", "sub/z.log",
    };
    char top[PATH_MAX];

    (void)state;
    make_dir("logs");
    make_dir("logs/sub");
    make_dir("logs/a.log.d");
    make_dir("logs/empty");
    write_str("logs/b.log", "b\n");
    write_str("logs/sub/z.log", "z\n");
    write_str("logs/a.log", "a\n");
    write_str("logs/sub/a.log", "sa\n");
    write_str("logs/B.log", "B\n");
    write_str("logs/a.log.d/x.log", "x\n");
    snprintf(top, sizeof top, "%s/", at("logs")); /* a trailing slash is not doubled */
    assert_int_equal(run_one(r, NULL, top), 6);
    assert_int_equal(r->n, 6);
    for (int i = 0; i < 6; i++) {
        char name[64];
        snprintf(name, sizeof name, "logs/%s", want[i]);
        assert_string_equal(r->s[i].path, at(name));
        assert_int_equal(r->s[i].index, i);
    }
    rec_free(r);
}

/* Streams come in strcmp order whatever the directory order. (100,000
 * files were checked by hand; fewer here, for a fast suite.) */
static void test_many_files(void **state)
{
    rec *r = rec_new();
    const int n = 2000;
    char name[64];

    (void)state;
    make_dir("many");
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "many/f%06d.log", n - 1 - i);
        write_str(name, "line\n");
    }
    r->store_cap = 8;
    assert_int_equal(run_one(r, NULL, at("many")), n);
    assert_int_equal(r->begun, n);
    for (int i = 0; i < MAX_STREAMS; i++) {
        snprintf(name, sizeof name, "many/f%06d.log", i);
        assert_string_equal(r->s[i].path, at(name));
    }
    rec_free(r);
}

/* ---- files opened ahead -------------------------------------------------- */

/* The process's open descriptors (/proc/self/fd, less the listing's own). */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n - 3;   /* ".", "..", and the listing's */
}

/* A folder of many files and sub-folders (each file opened ahead of its
 * turn): every file read once, in order, and no descriptor left open. */
static void test_ahead_no_leak(void **state)
{
    rec *r = rec_new();
    char name[64];
    const int before = open_fds();

    (void)state;
    make_dir("ahead");
    for (int d = 0; d < 3; d++) {
        snprintf(name, sizeof name, "ahead/n%d", d);
        make_dir(name);
        for (int i = 0; i < 12; i++) {
            snprintf(name, sizeof name, "ahead/n%d/rank_%02d.log", d, i);
            write_str(name, "step 1\n");
        }
    }
    for (int i = 0; i < 20; i++) {
        snprintf(name, sizeof name, "ahead/top_%02d.log", i);
        write_str(name, "top\n");
    }
    assert_int_equal(run_one(r, NULL, at("ahead")), 56);
    assert_int_equal(r->n, 56);
    assert_string_equal(r->s[0].path, at("ahead/n0/rank_00.log"));
    assert_string_equal(r->s[13].path, at("ahead/n1/rank_01.log"));
    assert_string_equal(r->s[55].path, at("ahead/top_19.log"));
    assert_int_equal(open_fds(), before);
    rec_free(r);
}

/* Under a low descriptor limit, opening ahead leaves the reader the
 * descriptors it needs: every file is still read. */
static void test_ahead_low_fd_limit(void **state)
{
    rec *r = rec_new();
    struct rlimit old, low;
    char name[64];

    (void)state;
    make_dir("few");
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "few/f%02d.log", i);
        write_str(name, "x\n");
    }
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
    low = old;
    low.rlim_cur = (rlim_t)open_fds() + 6;   /* a few more than are open now */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    int got = run_one(r, NULL, at("few"));
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
    assert_int_equal(got, 40);
    assert_int_equal(r->n, 40);
    assert_int_equal(r->n_warn, 0);
    rec_free(r);
}

/* Arguments naming files are opened ahead too; a FIFO among them is not
 * (opening it could wait for a writer). */
static void test_ahead_arguments(void **state)
{
    rec *r = rec_new();
    const int before = open_fds();

    (void)state;
    write_str("arg1.log", "one\n");
    write_str("arg2.log", "two\n");
    write_str("arg3.log", "three\n");
    assert_int_equal(mkfifo(at("arg.fifo"), 0644), 0);
    assert_int_equal(run_paths(r, NULL, 5, at("arg1.log"), at("arg.fifo"), at("arg2.log"), "-nonexistent-",
                               at("arg3.log")), 3);
    assert_int_equal(r->n, 3);
    assert_stream(r, 0, at("arg1.log"), "one\n");
    assert_stream(r, 1, at("arg2.log"), "two\n");
    assert_stream(r, 2, at("arg3.log"), "three\n");
    assert_non_null(find_warning(r, at("arg.fifo"), "FIFO"));
    assert_non_null(find_warning(r, "-nonexistent-", "No such file"));
    assert_int_equal(open_fds(), before);
    rec_free(r);
}

/* A file removed after it was opened ahead and before its turn is
 * reported as gone (the walk looks at it again first), and the
 * descriptor opened for it is closed. */
static void test_ahead_file_removed(void **state)
{
    rec *r = rec_new();
    const int before = open_fds();

    (void)state;
    make_dir("gone");
    write_str("gone/a.log", "a\n");
    write_str("gone/b.log", "b\n");
    write_str("gone/c.log", "c\n");
    r->remove_on_begin = at("gone/b.log");   /* while a.log is read */
    assert_int_equal(run_one(r, NULL, at("gone")), 2);
    assert_int_equal(r->n, 2);
    assert_stream(r, 0, at("gone/a.log"), "a\n");
    assert_stream(r, 1, at("gone/c.log"), "c\n");
    assert_non_null(find_warning(r, at("gone/b.log"), "No such file"));
    assert_int_equal(open_fds(), before);
    rec_free(r);
}

/* What was the file gone/b.log becomes a folder with a log in it. */
static void file_becomes_folder(void)
{
    make_dir("turned/b.log");
    write_str("turned/b.log/inner.log", "inner\n");
}

/* A file opened ahead that is a folder by its turn: the folder is walked,
 * and the descriptor opened for the file closed. */
static void test_ahead_file_became_folder(void **state)
{
    rec *r = rec_new();
    const int before = open_fds();

    (void)state;
    make_dir("turned");
    write_str("turned/a.log", "a\n");
    write_str("turned/b.log", "b\n");
    write_str("turned/c.log", "c\n");
    r->remove_on_begin = at("turned/b.log");   /* while a.log is read */
    r->begin_hook = file_becomes_folder;
    assert_int_equal(run_one(r, NULL, at("turned")), 3);
    assert_stream(r, 0, at("turned/a.log"), "a\n");
    assert_stream(r, 1, at("turned/b.log/inner.log"), "inner\n");
    assert_stream(r, 2, at("turned/c.log"), "c\n");
    assert_int_equal(open_fds(), before);
    rec_free(r);
}

/* ---- archives and compressed files ------------------------------------- */

static void test_tar_gz_members(void **state)
{
    rec *r = rec_new();
    const member m[] = {
        { "node1/rank0.log", "r0 a\nr0 b\n", 10 },
        { "node1/rank1.log", "r1 no newline", 13 },
        { "../escape.log", "up\n", 3 },
        { "/abs/path.log", "abs\n", 4 },
        { "node1/empty.log", "", 0 },
    };
    char want[PATH_MAX];

    (void)state;
    /* named .dat: detection goes by the bytes, not the name */
    write_archive("bundle.dat", archive_write_set_format_pax_restricted,
                  archive_write_add_filter_gzip, m, 5);
    assert_int_equal(run_one(r, NULL, at("bundle.dat")), 4);
    assert_int_equal(r->n, 4);
    snprintf(want, sizeof want, "%s:node1/rank0.log", at("bundle.dat"));
    assert_stream(r, 0, want, "r0 a\nr0 b\n");
    snprintf(want, sizeof want, "%s:node1/rank1.log", at("bundle.dat"));
    assert_stream(r, 1, want, "r1 no newline\n");
    snprintf(want, sizeof want, "%s:../escape.log", at("bundle.dat"));
    assert_stream(r, 2, want, "up\n");
    snprintf(want, sizeof want, "%s:/abs/path.log", at("bundle.dat"));
    assert_stream(r, 3, want, "abs\n");
    assert_non_null(find_warning(r, "node1/empty.log", "empty file"));
    rec_free(r);
}

static void test_zip_members(void **state)
{
    rec *r = rec_new();
    size_t len;
    char *text = make_lines(3000, &len);
    const member m[] = {
        { "a/one.log", "one\n", 4 },
        { "a/two.log", text, len },
    };
    char want[PATH_MAX];

    (void)state;
    write_archive("logs.zip", archive_write_set_format_zip, archive_write_add_filter_none,
                  m, 2);
    assert_int_equal(run_one(r, NULL, at("logs.zip")), 2);
    snprintf(want, sizeof want, "%s:a/one.log", at("logs.zip"));
    assert_stream(r, 0, want, "one\n");
    snprintf(want, sizeof want, "%s:a/two.log", at("logs.zip"));
    assert_stream(r, 1, want, text);
    free(text);
    rec_free(r);
}

static void test_torch_checkpoint(void **state)
{
    rec *r = rec_new();
    const member m[] = {
        { "model/data.pkl", "\x80\x02}q\0.", 7 },
        { "model/version", "3\n", 2 },
    };

    (void)state;
    write_archive("model.pt", archive_write_set_format_zip, archive_write_add_filter_none,
                  m, 2);
    assert_int_equal(run_one(r, NULL, at("model.pt")), 0);
    assert_int_equal(r->n, 0);
    assert_non_null(find_warning(r, at("model.pt"), "PyTorch checkpoint"));
    rec_free(r);
}

/* A lone compressed file keeps its own name as the stream's path. */
static void check_single(int (*filter)(struct archive *), const char *name)
{
    rec *r = rec_new();
    size_t len, zlen;
    char *text = make_lines(2000, &len);
    unsigned char *z = compress_mem(filter, text, len, &zlen);

    write_file(name, z, zlen);
    assert_int_equal(run_one(r, NULL, at(name)), 1);
    assert_stream(r, 0, at(name), text);
    assert_int_equal(r->next_line, 2001);
    assert_int_equal(r->n_warn, 0);
    free(z);
    free(text);
    rec_free(r);
}

static void test_single_gz(void **state)
{
    (void)state;
    check_single(archive_write_add_filter_gzip, "rank0.log.gz");
    check_single(archive_write_add_filter_gzip, "misnamed.txt");
}

static void test_single_zst(void **state)
{
    (void)state;
    check_single(archive_write_add_filter_zstd, "rank0.log.zst");
}

static void test_single_xz_bz2(void **state)
{
    (void)state;
    check_single(archive_write_add_filter_xz, "rank0.log.xz");
    check_single(archive_write_add_filter_bzip2, "rank0.log.bz2");
}

static void test_truncated_gz(void **state)
{
    rec *r = rec_new();
    size_t len, zlen;
    char *text = make_lines(20000, &len);
    unsigned char *z = compress_mem(archive_write_add_filter_gzip, text, len, &zlen);

    (void)state;
    write_file("cut.log.gz", z, zlen / 2);
    assert_int_equal(run_one(r, NULL, at("cut.log.gz")), 1);
    assert_int_equal(r->n, 1);
    /* what was decoded is a prefix of the original, in whole lines */
    assert_true(r->s[0].len > 0 && r->s[0].len < len);
    assert_memory_equal(r->s[0].text, text, r->s[0].len - 1);
    assert_true(r->s[0].ended);
    assert_non_null(find_warning(r, at("cut.log.gz"), "truncated or corrupt archive: "));
    free(z);
    free(text);
    rec_free(r);
}

/* gzip magic bytes over garbage: reported, and not taken for a nested
 * archive again and again. */
static void test_corrupt_after_magic(void **state)
{
    rec *r = rec_new();
    unsigned char bytes[4096] = { 0x1f, 0x8b, 0x99 };

    (void)state;
    for (size_t i = 3; i < sizeof bytes; i++)
        bytes[i] = (unsigned char)(i * 7 + 3);
    write_file("bad.gz", bytes, sizeof bytes);
    assert_int_equal(run_one(r, NULL, at("bad.gz")), -1);
    assert_int_equal(r->n, 0);
    assert_non_null(find_warning(r, at("bad.gz"), "truncated or corrupt archive: "));
    rec_free(r);
}

static void test_empty_gz(void **state)
{
    rec *r = rec_new();
    size_t zlen;
    unsigned char *z = compress_mem(archive_write_add_filter_gzip, "", 0, &zlen);

    (void)state;
    write_file("empty.log.gz", z, zlen);
    assert_int_equal(run_one(r, NULL, at("empty.log.gz")), 0);
    assert_non_null(find_warning(r, at("empty.log.gz"), "empty file"));
    free(z);
    rec_free(r);
}

static void test_truncated_tar(void **state)
{
    rec *r = rec_new();
    size_t len;
    char *text = make_lines(2000, &len);
    const member m[] = { { "big.log", text, len } };
    struct stat st;

    (void)state;
    write_archive("t.tar", archive_write_set_format_ustar, archive_write_add_filter_none,
                  m, 1);
    assert_int_equal(stat(at("t.tar"), &st), 0);
    assert_int_equal(truncate(at("t.tar"), st.st_size / 2), 0);
    assert_int_equal(run_one(r, NULL, at("t.tar")), 1);
    assert_true(r->s[0].len > 0 && r->s[0].len < len);
    assert_non_null(find_warning(r, "t.tar:big.log", "truncated or corrupt archive: "));
    free(text);
    rec_free(r);
}

static void test_nested_gz_in_tar(void **state)
{
    rec *r = rec_new();
    size_t zlen;
    unsigned char *z = compress_mem(archive_write_add_filter_gzip, "inner\n", 6, &zlen);
    const member m[] = { { "node1/rank0.log.gz", z, zlen } };
    char want[PATH_MAX];

    (void)state;
    write_archive("outer.tgz", archive_write_set_format_pax_restricted,
                  archive_write_add_filter_gzip, m, 1);
    assert_int_equal(run_one(r, NULL, at("outer.tgz")), 1);
    snprintf(want, sizeof want, "%s:node1/rank0.log.gz", at("outer.tgz"));
    assert_stream(r, 0, want, "inner\n");
    free(z);
    rec_free(r);
}

/* 200 MiB of log lines compressed about 1000:1. The file is one
 * compressed MiB repeated as concatenated gzip members (valid gzip), so the
 * test need not compress 200 MiB. */
static void test_bomb_ratio(void **state)
{
    rec *r = rec_new();
    cp_reader_opts o;
    const size_t block = 1u << 20;
    char *text = malloc(block);
    size_t zlen;
    unsigned char *z;
    FILE *f;

    (void)state;
    for (size_t i = 0; i < block; i += 16)
        memcpy(text + i, "step 1 loss 0.5\n", 16);
    z = compress_mem(archive_write_add_filter_gzip, text, block, &zlen);
    f = fopen(at("bomb.gz"), "wb");
    assert_non_null(f);
    for (int i = 0; i < 200; i++)
        assert_int_equal(fwrite(z, 1, zlen, f), zlen);
    assert_int_equal(fclose(f), 0);
    cp_reader_opts_default(&o);
    o.max_ratio = 100;
    r->store_cap = 0;
    assert_int_equal(run_one(r, &o, at("bomb.gz")), 1);
    assert_true(r->total < 32u << 20);
    assert_non_null(find_warning(r, at("bomb.gz"), "(decompression bomb?)"));
    free(z);
    free(text);
    rec_free(r);
}

/* A bomb made of zeros stops at once: decompressed, it reads as an empty
 * tar archive (a tar ends with zero blocks), and were it not, its first
 * block holds nothing but NUL bytes. */
static void test_bomb_zeros(void **state)
{
    rec *r = rec_new();
    const size_t block = 1u << 20;
    char *zeros = calloc(1, block);
    size_t zlen;
    unsigned char *z = compress_mem(archive_write_add_filter_gzip, zeros, block, &zlen);
    FILE *f = fopen(at("zeros.gz"), "wb");

    (void)state;
    assert_non_null(f);
    for (int i = 0; i < 200; i++)
        assert_int_equal(fwrite(z, 1, zlen, f), zlen);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(run_one(r, NULL, at("zeros.gz")), 0);
    assert_int_equal(r->n, 0);
    assert_true(r->total == 0);
    assert_non_null(find_warning(r, at("zeros.gz"), "empty archive"));
    free(z);
    free(zeros);
    rec_free(r);
}

static void test_max_member_bytes(void **state)
{
    rec *r = rec_new();
    cp_reader_opts o;
    size_t len, zlen;
    char *text = make_lines(50000, &len);
    unsigned char *z = compress_mem(archive_write_add_filter_gzip, text, len, &zlen);

    (void)state;
    write_file("big.log.gz", z, zlen);
    cp_reader_opts_default(&o);
    o.max_member_bytes = 1u << 20;
    assert_int_equal(run_one(r, &o, at("big.log.gz")), 1);
    assert_true(r->s[0].len <= (1u << 20) + 1); /* + the newline of a cut last line */
    assert_memory_equal(r->s[0].text, text, r->s[0].len - 1);
    assert_non_null(find_warning(r, at("big.log.gz"), "more than 1048576 bytes"));
    /* a member of exactly the limit is whole */
    r->n = 0;
    r->n_warn = 0;
    free(r->s[0].text);
    r->s[0] = (stream_rec){ 0 };
    o.max_member_bytes = len;
    assert_int_equal(run_one(r, &o, at("big.log.gz")), 1);
    assert_int_equal(r->s[0].len, len);
    assert_int_equal(r->n_warn, 0);
    free(z);
    free(text);
    rec_free(r);
}

/* ---- stdin and callbacks ----------------------------------------------- */

static void test_stdin(void **state)
{
    rec *r = rec_new();
    int fds[2], saved = dup(STDIN_FILENO);

    (void)state;
    assert_true(saved >= 0);
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], "from\nstdin", 10), 10);
    close(fds[1]);
    assert_int_equal(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
    close(fds[0]);
    assert_int_equal(run_one(r, NULL, "-"), 1);
    assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
    close(saved);
    assert_stream(r, 0, "-", "from\nstdin\n");
    rec_free(r);
}

static void test_callbacks_skip_and_stop(void **state)
{
    rec *r = rec_new();
    cp_reader_opts o;
    size_t len;
    char *text = make_lines(1000, &len);

    (void)state;
    cp_reader_opts_default(&o);
    o.chunk_size = r->chunk_size = 256;
    write_file("a.log", text, len);
    write_file("b.log", text, len);
    r->skip_index = 0;  /* begin() refuses a.log */
    r->stop_after = 1;  /* chunk() stops b.log after its first chunk */
    assert_int_equal(run_paths(r, &o, 2, at("a.log"), at("b.log")), 1);
    assert_int_equal(r->n, 1);
    assert_string_equal(r->s[0].path, at("b.log"));
    assert_int_equal(r->s[0].index, 1);
    assert_true(r->s[0].ended);
    assert_int_equal(r->chunks, 1);
    free(text);
    rec_free(r);
}

/* Chunks end at the same bytes whether the consumer copies or swaps, and
 * whatever the reads: lines of every length, cut lines, NULs, a first
 * chunk that doubles, and a last line without a newline. */
static void test_swap_same_chunks(void **state)
{
    rec *plain = rec_new(), *swapped = rec_new();
    cp_reader_opts o;
    size_t len;
    char *text = make_lines(20000, &len);

    (void)state;
    for (size_t i = 997; i + 400 < len; i += 7919)
        memset(text + i, i % 3 ? 'L' : '\0', 300);  /* long lines, NUL holes */
    len -= 1;                                      /* no final newline */
    cp_reader_opts_default(&o);
    o.max_line = plain->max_line = swapped->max_line = 150;
    o.chunk_size = plain->chunk_size = swapped->chunk_size = 20000;
    o.first_chunk = 300;
    swapped->swap = true;
    write_file("mixed.log", text, len);
    assert_int_equal(run_one(plain, &o, at("mixed.log")), 1);
    assert_int_equal(run_one(swapped, &o, at("mixed.log")), 1);
    assert_true(plain->chunks > 20);
    assert_true(swapped->swaps > 10 && swapped->swaps < swapped->chunks);
    assert_int_equal(plain->chunks, swapped->chunks);
    assert_int_equal(plain->next_line, swapped->next_line);
    assert_memory_equal(plain->bounds, swapped->bounds, (size_t)plain->n_bounds * sizeof plain->bounds[0]);
    assert_int_equal(plain->s[0].len, swapped->s[0].len);
    assert_memory_equal(plain->s[0].text, swapped->s[0].text, plain->s[0].len);
    assert_int_equal(plain->n_warn, 1);
    assert_string_equal(plain->warn[0], swapped->warn[0]);
    free(text);
    rec_free(plain);
    rec_free(swapped);
}

/* The first chunk is first_chunk bytes and each next one twice the last,
 * up to chunk_size, even inside one buffer's worth of input: a mid-sized
 * paste starts on every core at once and still ends in large chunks. */
static void test_first_chunks_double(void **state)
{
    rec *r = rec_new();
    cp_reader_opts o;
    size_t len;
    char *text = make_lines(8000, &len);

    (void)state;
    cp_reader_opts_default(&o);
    o.chunk_size = r->chunk_size = 64 * 1024;
    o.first_chunk = 1000;
    assert_true(len / 8 > 64 * 1024);   /* no cap below chunk_size (next test) */
    write_file("paste.log", text, len);
    assert_int_equal(run_one(r, &o, at("paste.log")), 1);
    assert_true(r->n_bounds >= 7);
    size_t target = 1000;
    for (int i = 0; i < 7; i++, target *= 2) {
        /* a chunk ends at the first newline at or after its target */
        assert_true(r->bounds[i] >= target);
        assert_true(r->bounds[i] < target + 220);
    }
    assert_true(r->bounds[7] <= 64 * 1024 + 220);
    free(text);
    rec_free(r);
}

static void age_file(const char *name);

/* The least mapping threshold (the reader's head block): the tests' files
 * of a few hundred KiB are mapped with it, not read as by default. */
enum { SMALL_MAP = 64 * 1024 };

/* A file of a few chunks is cut into eighths at most, so the cores finish
 * together; read or mapped alike. */
static void test_chunks_capped_by_file_size(void **state)
{
    size_t len;
    char *text = make_lines(2000, &len);

    (void)state;
    for (int mapped = 0; mapped < 2; mapped++) {
        rec *r = rec_new();
        cp_reader_opts o;
        cp_reader_opts_default(&o);
        o.chunk_size = r->chunk_size = 4 << 20;
        o.first_chunk = 1000;
        o.no_map = !mapped;
        o.map_min = SMALL_MAP;
        write_file("capped.log", text, len);
        if (mapped)
            age_file("capped.log");
        assert_int_equal(run_one(r, &o, at("capped.log")), 1);
        assert_true(r->n_bounds >= 8);
        size_t longest = 0;
        for (int i = 0; i < r->n_bounds; i++)
            longest = r->bounds[i] > longest ? r->bounds[i] : longest;
        assert_true(longest >= len / 8);
        assert_true(longest < len / 8 + 220);
        rec_free(r);
    }
    free(text);
}

/* ---- mapped files ------------------------------------------------------ */

/* Dates a file back an hour: the reader maps only files that have not
 * been modified for a few seconds. */
static void age_file(const char *name)
{
    struct timespec t[2];

    assert_int_equal(clock_gettime(CLOCK_REALTIME, &t[0]), 0);
    t[0].tv_sec -= 3600;
    t[1] = t[0];
    assert_int_equal(utimensat(AT_FDCWD, at(name), t, 0), 0);
}

static rec *run_way(const char *name, const cp_reader_opts *base, bool no_map, bool swap, bool mapped)
{
    rec *r = rec_new();
    cp_reader_opts o = *base;

    o.no_map = no_map;
    r->max_line = o.max_line;
    r->chunk_size = o.chunk_size;
    r->swap = swap;
    r->mapped = mapped;
    (void)run_one(r, &o, at(name));
    return r;
}

static void assert_same_run(const rec *a, const rec *b)
{
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->chunks, b->chunks);
    assert_int_equal(a->next_line, b->next_line);
    assert_int_equal(a->total, b->total);
    assert_int_equal(a->n_bounds, b->n_bounds);
    assert_memory_equal(a->bounds, b->bounds, (size_t)a->n_bounds * sizeof a->bounds[0]);
    assert_memory_equal(a->firsts, b->firsts, (size_t)a->n_bounds * sizeof a->firsts[0]);
    for (int i = 0; i < a->n; i++) {
        assert_int_equal(a->s[i].len, b->s[i].len);
        if (a->s[i].len)
            assert_memory_equal(a->s[i].text, b->s[i].text, a->s[i].len);
        assert_int_equal(a->s[i].ended, b->s[i].ended);
    }
    assert_int_equal(a->n_warn, b->n_warn);
    for (int i = 0; i < a->n_warn; i++)
        assert_string_equal(a->warn[i], b->warn[i]);
}

/* Reads `name` (aged) through read() and through a mapping, the latter
 * with each kind of consumer, and checks that every run gives the read
 * path's chunks, line numbers and warnings, and that kept mapped chunks
 * still hold their bytes at the end. Returns the number of chunks that
 * went out as pointers into the mapping, and sets *chunks. */
static int check_both_ways(const char *name, const cp_reader_opts *o, int *chunks)
{
    rec *ref, *plain, *swap, *keep;
    int maps;

    age_file(name);
    ref = run_way(name, o, true, false, false);
    plain = run_way(name, o, false, false, false);
    swap = run_way(name, o, false, true, false);
    keep = run_way(name, o, false, true, true);
    assert_same_run(ref, plain);
    assert_same_run(ref, swap);
    assert_same_run(ref, keep);
    for (int i = 0; i < keep->n_held; i++) {
        const held *h = &keep->held[i];
        assert_memory_equal(h->data, keep->s[0].text + h->off, h->len);
    }
    /* the read path never hands out a mapping, even to a consumer that takes one */
    rec *read_keep = run_way(name, o, true, true, true);
    assert_int_equal(read_keep->maps, 0);
    assert_same_run(ref, read_keep);
    maps = keep->maps;
    *chunks = keep->chunks;
    rec_free(ref);
    rec_free(plain);
    rec_free(swap);
    rec_free(keep);
    rec_free(read_keep);
    return maps;
}

/* Small chunks over a text larger than the head block, so that the
 * mapping is used and the chunks double, then reach chunk_size. */
static cp_reader_opts map_opts(size_t max_line, size_t chunk_size, size_t first_chunk)
{
    cp_reader_opts o;

    cp_reader_opts_default(&o);
    o.max_line = max_line;
    o.chunk_size = chunk_size;
    o.first_chunk = first_chunk;
    o.map_min = SMALL_MAP;
    return o;
}

static void test_map_plain(void **state)
{
    const cp_reader_opts o = map_opts(64 * 1024, 64 * 1024, 1000);
    size_t len;
    char *text = make_lines(5000, &len);
    int chunks, maps;

    (void)state;
    write_file("plain.log", text, len);
    maps = check_both_ways("plain.log", &o, &chunks);
    /* clean text: every chunk straight from the mapping */
    assert_int_equal(maps, chunks);
    assert_true(chunks > 8);
    free(text);
}

static void test_map_nuls(void **state)
{
    const cp_reader_opts o = map_opts(64 * 1024, 64 * 1024, 1000);
    size_t len;
    char *text = make_lines(5000, &len);
    int chunks, maps;

    (void)state;
    memset(text + 5000, '\0', 3);       /* in the first chunk */
    memset(text + len / 2, '\0', 4000); /* a hole in the middle */
    text[len - 2] = '\0';               /* in the last line */
    write_file("nul.log", text, len);
    maps = check_both_ways("nul.log", &o, &chunks);
    assert_true(maps > 0 && maps <= chunks - 3);
    free(text);
}

/* Long lines everywhere (some across the window's end and chunk
 * boundaries), one much longer than the window, and no final newline. */
static void test_map_long_lines(void **state)
{
    const cp_reader_opts o = map_opts(250, 20000, 300);
    size_t len;
    char *text = make_lines(20000, &len);
    const size_t huge = 3u << 20;
    char *big = malloc(len + huge);
    int chunks, maps;

    (void)state;
    assert_non_null(big);
    for (size_t i = 997; i + 700 < len; i += 59999)
        memset(text + i, 'L', 600);
    /* the huge line goes in at a line start in the middle */
    const char *mid = memchr(text + len / 2, '\n', len / 2);
    const size_t cut = (size_t)(mid - text) + 1;
    memcpy(big, text, cut);
    memset(big + cut, 'z', huge - 1);
    big[cut + huge - 1] = '\n';
    memcpy(big + cut + huge, text + cut, len - cut);
    write_file("long.log", big, len + huge - 1); /* no final newline */
    maps = check_both_ways("long.log", &o, &chunks);
    assert_true(maps > 10 && maps < chunks);
    free(big);
    free(text);
}

/* A line longer than max_line that begins just before the first chunk's
 * target and ends past it (the chunk then ends at the cut, in a newline
 * the mapping lacks), and another one chunk further on. */
static void test_map_long_line_at_boundary(void **state)
{
    const size_t chunk = 64 * 1024, max_line = 1000;
    const cp_reader_opts o = map_opts(max_line, chunk, chunk);
    const size_t len = 6 * chunk;
    char *text = malloc(len);
    int chunks;

    (void)state;
    assert_non_null(text);
    for (size_t i = 0; i < len; i += 100) {
        const size_t n = len - i < 100 ? len - i : 100;
        memset(text + i, 'a' + (int)(i / 100 % 26), n - 1);
        text[i + n - 1] = '\n';
    }
    memset(text + chunk - 500, 'X', 5000);
    memset(text + 2 * chunk - max_line, 'Y', 3000);
    write_file("edge.log", text, len);
    assert_true(check_both_ways("edge.log", &o, &chunks) > 0);
    free(text);
}

static void test_map_no_final_newline(void **state)
{
    const cp_reader_opts o = map_opts(64 * 1024, 64 * 1024, 1000);
    size_t len;
    char *text = make_lines(2000, &len);
    int chunks, maps;

    (void)state;
    write_file("tail.log", text, len - 1);
    maps = check_both_ways("tail.log", &o, &chunks);
    /* only the last line is copied, for its newline */
    assert_int_equal(maps, chunks - 1);
    free(text);
}

static void test_map_empty(void **state)
{
    const cp_reader_opts o = map_opts(64 * 1024, 64 * 1024, 1000);
    int chunks;

    (void)state;
    write_file("empty.log", "", 0);
    assert_int_equal(check_both_ways("empty.log", &o, &chunks), 0);
    assert_int_equal(chunks, 0);
}

/* A file of exactly one chunk, lines of 64 bytes. */
static void test_map_one_chunk(void **state)
{
    const size_t size = 128 * 1024;
    const cp_reader_opts o = map_opts(64 * 1024, size, size);
    char *text = malloc(size);
    int chunks;

    (void)state;
    assert_non_null(text);
    for (size_t i = 0; i < size; i += 64) {
        memset(text + i, 'q', 63);
        text[i + 63] = '\n';
    }
    write_file("one.log", text, size);
    assert_int_equal(check_both_ways("one.log", &o, &chunks), 1);
    assert_int_equal(chunks, 1);
    free(text);
}

static void test_map_crlf(void **state)
{
    const cp_reader_opts o = map_opts(64 * 1024, 64 * 1024, 1000);
    const size_t cap = 200 * 1024;
    char *text = malloc(cap);
    size_t len = 0;
    int chunks;

    (void)state;
    assert_non_null(text);
    for (int i = 0; len + 64 < cap; i++)
        len += (size_t)snprintf(text + len, cap - len, "[rank%d] step %d loss 1.5\r\n", i % 8, i);
    write_file("win.log", text, len - 2); /* ends in "1.5" */
    assert_true(check_both_ways("win.log", &o, &chunks) > 0);
    free(text);
}

/* A file modified a moment ago may be a live log: it is read, not mapped. */
static void test_map_not_fresh(void **state)
{
    rec *r = rec_new();
    cp_reader_opts o;
    size_t len;
    char *text = make_lines(5000, &len);

    (void)state;
    cp_reader_opts_default(&o);
    o.map_min = SMALL_MAP;
    write_file("live.log", text, len);
    r->mapped = true;
    assert_int_equal(run_one(r, &o, at("live.log")), 1);
    assert_int_equal(r->maps, 0);
    assert_stream(r, 0, at("live.log"), text);
    age_file("live.log");
    rec_free(r);
    r = rec_new();
    r->mapped = true;
    assert_int_equal(run_one(r, &o, at("live.log")), 1);
    assert_true(r->maps > 0);
    assert_stream(r, 0, at("live.log"), text);
    free(text);
    rec_free(r);
}

static int on_chunk_truncate(void *user, const char *data, size_t len, uint64_t first_line, cp_nlmap *newlines)
{
    (void)data;
    (void)len;
    (void)first_line;
    (void)newlines;
    /* the file shrinks under the reader, as copytruncate would do it */
    if (truncate(user, 0) != 0)
        _exit(3);
    return 0;
}

/* A mapped file that shrinks while it is read ends the run with status 2
 * and a message naming it, not with a core dump. */
static void test_map_shrinks(void **state)
{
    const cp_reader_cb cb = { NULL, on_chunk_truncate, NULL, NULL, NULL, NULL, NULL, NULL };
    const size_t len = 8u << 20;
    char *text = malloc(len), msg[1024] = "";
    int fds[2], status = 0;
    ssize_t got;
    pid_t pid;

    (void)state;
    assert_non_null(text);
    for (size_t i = 0; i < len; i += 64) {
        memset(text + i, 'w', 63);
        text[i + 63] = '\n';
    }
    write_file("shrinks.log", text, len);
    free(text);
    age_file("shrinks.log");
    assert_int_equal(pipe(fds), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        cp_reader_opts o = map_opts(64 * 1024, 256 * 1024, 256 * 1024);
        const char *paths[] = { at("shrinks.log") };
        dup2(fds[1], STDERR_FILENO);
        (void)cp_reader_run(paths, 1, &o, &cb, (void *)paths[0]);
        _exit(0); /* not reached: the rest of the file is gone */
    }
    close(fds[1]);
    got = read(fds[0], msg, sizeof msg - 1);
    close(fds[0]);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(got > 0);
    msg[got] = '\0';
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 2);
    assert_non_null(strstr(msg, "culprit: "));
    assert_non_null(strstr(msg, "shrinks.log shrank while being read; run again\n"));
}

/* An optional argument selects tests by name pattern ("test_bomb*"). */
int main(int argc, char **argv)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
#define S(name) { #name "_swap", name, setup_swap, teardown, NULL }
    const struct CMUnitTest tests[] = {
        T(test_defaults),
        T(test_plain_trailing_newline),
        T(test_plain_no_trailing_newline),
        T(test_crlf_kept),
        T(test_chunk_boundaries),
        T(test_first_chunks_double),
        T(test_chunks_capped_by_file_size),
        T(test_long_line),
        T(test_huge_line),
        T(test_nul_replaced),
        T(test_damaged_text_read),
        T(test_binary_skipped),
        T(test_all_nul),
        T(test_empty_files),
        T(test_nonexistent),
        T(test_unreadable),
        T(test_fifo_skipped),
        T(test_symlink_loops),
        T(test_folder_order),
        T(test_many_files),
        T(test_ahead_no_leak),
        T(test_ahead_low_fd_limit),
        T(test_ahead_arguments),
        T(test_ahead_file_removed),
        T(test_ahead_file_became_folder),
        T(test_tar_gz_members),
        T(test_zip_members),
        T(test_torch_checkpoint),
        T(test_single_gz),
        T(test_single_zst),
        T(test_single_xz_bz2),
        T(test_truncated_gz),
        T(test_corrupt_after_magic),
        T(test_empty_gz),
        T(test_truncated_tar),
        T(test_nested_gz_in_tar),
        T(test_bomb_ratio),
        T(test_bomb_zeros),
        T(test_max_member_bytes),
        T(test_stdin),
        T(test_callbacks_skip_and_stop),
        T(test_swap_same_chunks),
        T(test_map_plain),
        T(test_map_nuls),
        T(test_map_long_lines),
        T(test_map_long_line_at_boundary),
        T(test_map_no_final_newline),
        T(test_map_empty),
        T(test_map_one_chunk),
        T(test_map_crlf),
        T(test_map_not_fresh),
        T(test_map_shrinks),
        S(test_plain_no_trailing_newline),
        S(test_chunk_boundaries),
        S(test_long_line),
        S(test_huge_line),
        S(test_nul_replaced),
        S(test_many_files),
        S(test_tar_gz_members),
        S(test_nested_gz_in_tar),
        S(test_stdin),
        S(test_callbacks_skip_and_stop),
    };
#undef S
#undef T
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
