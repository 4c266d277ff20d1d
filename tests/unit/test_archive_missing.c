/* test_archive_missing.c - what the reader and the checkpoint check do
 * when libarchive cannot be opened (archive_lib.h). This program is built
 * with its own copy of archive_lib.c, told to open a library that does
 * not exist (CP_ARCHIVE_SONAME, meson.build); the linker takes that copy
 * before libculprit's. The compressed input must be named in a warning
 * and the plain one next to it still read. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive_lib.h"
#include "ckpt.h"
#include "reader.h"

/* "[rank3]: RuntimeError: CUDA error: out of memory\n", gzip -9n */
static const unsigned char gz_log[] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x8b, 0x2e, 0x4a, 0xcc, 0xcb, 0x36,
    0x8e, 0xb5, 0x52, 0x08, 0x2a, 0xcd, 0x2b, 0xc9, 0xcc, 0x4d, 0x75, 0x2d, 0x2a, 0xca, 0x2f, 0xb2,
    0x52, 0x70, 0x0e, 0x75, 0x71, 0x54, 0x48, 0x85, 0xb0, 0xf3, 0x4b, 0x4b, 0x14, 0xf2, 0xd3, 0x14,
    0x72, 0x53, 0x73, 0xf3, 0x8b, 0x2a, 0xb9, 0x00, 0x8c, 0xa0, 0xf2, 0x28, 0x31, 0x00, 0x00, 0x00,
};

typedef struct seen {
    char text[256];
    char warn_path[PATH_MAX];
    char warn[512];
    int n_warn;
} seen;

static int on_begin(void *user, const cp_stream_info *info)
{
    (void)user;
    (void)info;
    return 0;
}

static int on_chunk(void *user, const char *data, size_t len, uint64_t first_line, cp_nlmap *newlines)
{
    seen *s = user;
    (void)first_line;
    (void)newlines;
    size_t have = strlen(s->text);
    if (have + len < sizeof s->text) {
        memcpy(s->text + have, data, len);
        s->text[have + len] = '\0';
    }
    return 0;
}

static void on_end(void *user, const cp_stream_info *info)
{
    (void)user;
    (void)info;
}

static void on_warn(void *user, const char *path, const char *message)
{
    seen *s = user;
    s->n_warn++;
    snprintf(s->warn_path, sizeof s->warn_path, "%s", path);
    snprintf(s->warn, sizeof s->warn, "%s", message);
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void test_load_fails_with_reason(void **state)
{
    (void)state;
    const char *why = NULL;
    assert_int_equal(cp_archive_load(&why), -1);
    assert_non_null(why);
    assert_non_null(strstr(why, "cannot load libarchive (libculprit-test-absent.so.0)"));
    /* the second call gives the first one's answer */
    const char *again = NULL;
    assert_int_equal(cp_archive_load(&again), -1);
    assert_string_equal(again, why);
}

static void test_compressed_named_plain_read(void **state)
{
    (void)state;
    char dir[] = "/tmp/culprit-noarchive-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char plain[PATH_MAX], packed[PATH_MAX];
    snprintf(plain, sizeof plain, "%s/a.log", dir);
    snprintf(packed, sizeof packed, "%s/b.log.gz", dir);
    const char *line = "[rank0]: step 7 | loss 2.1\n";
    write_file(plain, line, strlen(line));
    write_file(packed, gz_log, sizeof gz_log);

    cp_reader_opts opts;
    cp_reader_opts_default(&opts);
    cp_reader_cb cb = {.begin = on_begin, .chunk = on_chunk, .end = on_end, .warn = on_warn};
    seen s = {0};
    const char *paths[] = {dir};
    assert_int_equal(cp_reader_run(paths, 1, &opts, &cb, &s), 1);
    assert_string_equal(s.text, line);
    assert_int_equal(s.n_warn, 1);
    assert_string_equal(s.warn_path, packed);
    assert_non_null(strstr(s.warn, "archive or compressed file, skipped: cannot load libarchive"));

    unlink(plain);
    unlink(packed);
    rmdir(dir);
}

static void test_checkpoint_zip_unchecked(void **state)
{
    (void)state;
    char path[] = "/tmp/culprit-noarchive-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    /* a local file header: the check opens libarchive before reading on */
    assert_int_equal(write(fd, "PK\003\004", 4), 4);
    close(fd);
    char msg[512];
    assert_int_equal(cp_ckpt_check_zip(path, msg, sizeof msg), CP_FILE_UNCHECKED);
    assert_non_null(strstr(msg, "a ZIP, not checked: cannot load libarchive"));
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_fails_with_reason),
        cmocka_unit_test(test_compressed_named_plain_read),
        cmocka_unit_test(test_checkpoint_zip_unchecked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
