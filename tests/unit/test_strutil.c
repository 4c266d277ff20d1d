/* test_strutil.c - unit tests of the string helpers whose fast paths
 * (SSE2, AVX2 where the CPU has it) must agree with a byte-by-byte loop
 * at every length and alignment. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/strutil.h"

static uint64_t slow_count(const char *p, size_t n, bool *nul)
{
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++) {
        c += p[i] == '\n';
        *nul |= p[i] == '\0';
    }
    return c;
}

/* Lengths around the vector widths and past the 255-block fold, at every
 * start offset within a vector, with newlines dense, sparse and absent. */
static void test_count_newlines(void **state)
{
    enum { MAX = 32 * 255 * 2 + 100 };
    char *buf = malloc(MAX + 64);
    uint32_t x = 1;

    (void)state;
    assert_non_null(buf);
    for (int density = 0; density < 3; density++) {
        for (size_t i = 0; i < MAX + 64; i++) {
            x = x * 1103515245u + 12345u;
            int every = density == 0 ? 2 : density == 1 ? 97 : 0;
            buf[i] = every && (x >> 16) % (uint32_t)every == 0 ? '\n' : (char)('a' + (x >> 20) % 26);
        }
        const size_t lens[] = {0, 1, 15, 16, 31, 32, 33, 63, 64, 65, 200, 4095, 8160, 8161, MAX};
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
            for (size_t off = 0; off < 33; off += 7) {
                bool want_nul = false, got_nul = false;
                uint64_t want = slow_count(buf + off, lens[l], &want_nul);
                assert_int_equal(cp_count_newlines(buf + off, lens[l]), want);
                assert_int_equal(cp_count_newlines_nul(buf + off, lens[l], &got_nul), want);
                assert_false(got_nul);
            }
        }
    }
    free(buf);
}

/* A NUL anywhere, in the vector part or the tail, is found; *nul is
 * only ever set, never cleared. */
static void test_count_finds_nul(void **state)
{
    char buf[300];

    (void)state;
    for (size_t at = 0; at < sizeof buf; at++) {
        bool nul = false;
        memset(buf, 'x', sizeof buf);
        buf[10] = buf[150] = '\n';
        buf[at] = '\0';
        uint64_t want = (at != 10) + (at != 150);
        assert_int_equal(cp_count_newlines_nul(buf, sizeof buf, &nul), want);
        assert_true(nul);
    }
    bool nul = true;
    memset(buf, 'x', sizeof buf);
    (void)cp_count_newlines_nul(buf, sizeof buf, &nul);
    assert_true(nul);
}

/* What a display copy of one line must hold, byte by byte: printable
 * ASCII and tabs as they are, other control bytes as spaces, valid UTF-8
 * whole, stray bytes as '?', ANSI colour codes dropped. */
static void check_display(const char *line, size_t len, size_t max, const char *got)
{
    size_t o = 0, i = 0;
    while (i < len && line[i] != '\n' && got[o]) {
        unsigned char c = (unsigned char)line[i];
        if (strcmp(got + o, "...") == 0)
            break;                       /* cut (the test lines hold no dots) */
        if (c == 0x1b) {                 /* only "ESC[31m"-style codes below */
            while (line[i] != 'm')
                i++;
            i++;
            continue;
        }
        if (c >= 0x80) {                 /* only "\xc3\xa9" or a stray 0xff below */
            if (c == 0xc3) {
                assert_memory_equal(got + o, line + i, 2);
                o += 2;
                i += 2;
            } else {
                assert_int_equal(got[o++], '?');
                i++;
            }
            continue;
        }
        char want = (c < 0x20 && c != '\t') || c == 0x7f ? ' ' : (char)c;
        assert_int_equal(got[o], want);
        o++;
        i++;
    }
    /* a cut keeps at most `max` bytes, and stops short only for a whole
     * two-byte character; otherwise the whole line is there */
    if (strcmp(got + o, "...") == 0)
        assert_true(o <= max && o + 1 >= max);
    else
        assert_int_equal(got[o], '\0');
}

/* The copy goes 8 plain bytes at a time: every special byte at every
 * offset of a word, lines around the word size and cuts at every room. */
static void test_display_line(void **state)
{
    static const char *const specials[] = {"\t", "\x01", "\x7f", "\x1b[31m", "\xc3\xa9", "\xff", "\r"};
    char line[64], *got;

    (void)state;
    for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++) {
        for (size_t at = 0; at < 24; at++) {
            for (size_t max = 4; max <= 40; max += 3) {
                size_t sl = strlen(specials[k]);
                memset(line, 'a', sizeof line);
                for (size_t i = 0; i < sizeof line; i++)
                    line[i] = (char)('a' + i % 26);
                memcpy(line + at, specials[k], sl);
                size_t len = 30;
                if (specials[k][0] == '\r') {  /* a progress bar: the text after the last '\r' */
                    got = cp_display_line(line, len, 100);
                    assert_non_null(got);
                    assert_memory_equal(got, line + at + 1, strlen(got));
                    assert_int_equal(strlen(got), len - at - 1);
                    free(got);
                    continue;
                }
                got = cp_display_line(line, len, max);
                assert_non_null(got);
                check_display(line, len, max, got);
                free(got);
            }
        }
    }
    got = cp_display_line("0123456789abcdef0123\n", 21, 16);
    assert_string_equal(got, "0123456789abcdef...");
    free(got);
    got = cp_display_line("0123456789abcdef\n", 17, 16);
    assert_string_equal(got, "0123456789abcdef");
    free(got);
    const char *coloured = "plain text, then\tcolour \x1b[1;31mERROR\x1b[0m done  \r\n";
    got = cp_display_line(coloured, strlen(coloured), 600);
    assert_string_equal(got, "plain text, then\tcolour ERROR done");
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_newlines),
        cmocka_unit_test(test_count_finds_nul),
        cmocka_unit_test(test_display_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
