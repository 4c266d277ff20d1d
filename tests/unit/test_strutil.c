/* test_strutil.c - unit tests of the string helpers whose fast paths
 * (SSE2, or eight bytes at a time) must agree with a byte-by-byte loop
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

/* The byte-by-byte display copy that cp_display_line's fast path for
 * printable runs must agree with (its form before the fast path). */
static size_t slow_ansi_len(const char *s, size_t n)
{
    if (n < 2 || s[1] != '[')
        return 1;
    size_t i = 2;
    while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == ';' || s[i] == '?'))
        i++;
    return i < n ? i + 1 : n;
}

static size_t slow_utf8_len(const unsigned char *u, size_t n)
{
    size_t len = u[0] >= 0xF0 && u[0] <= 0xF4 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC2 && u[0] <= 0xDF ? 2 : 0;
    if (len == 0 || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((u[i] & 0xC0) != 0x80)
            return 0;
    if ((u[0] == 0xE0 && u[1] < 0xA0) || (u[0] == 0xED && u[1] > 0x9F) || (u[0] == 0xF0 && u[1] < 0x90) ||
        (u[0] == 0xF4 && u[1] > 0x8F))
        return 0;
    return len;
}

static void slow_display(char *out, const char *line, size_t len, size_t max)
{
    while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
        len--;
    for (size_t k = len; k-- > 0;) {
        if (line[k] == '\r') {
            line += k + 1;
            len -= k + 1;
            break;
        }
    }
    size_t cap = len < max ? len : max, o = 0, i = 0;
    bool cut = false;
    while (i < len && !(cut = o >= cap)) {
        unsigned char c = (unsigned char)line[i];
        if (c == 0x1b) {
            i += slow_ansi_len(line + i, len - i);
            continue;
        }
        if (c >= 0x80) {
            size_t n = slow_utf8_len((const unsigned char *)line + i, len - i);
            if (n == 0) {
                out[o++] = '?';
                i++;
            } else if (o + n <= cap) {
                memcpy(out + o, line + i, n);
                o += n;
                i += n;
            } else {
                cut = true;
                break;
            }
            continue;
        }
        out[o++] = (c < 0x20 && c != '\t') || c == 0x7f ? ' ' : (char)c;
        i++;
    }
    if (cut) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    while (o > 0 && (out[o - 1] == ' ' || (out[o - 1] >= '\t' && out[o - 1] <= '\r')))
        o--;
    out[o] = '\0';
}

/* Random lines of printable runs broken by every kind of byte the copy
 * treats apart (controls, DEL, tabs, escapes, UTF-8 whole and broken,
 * '\r'), at lengths around the limit and the 8-byte steps. */
static void test_display_matches_byte_by_byte(void **state)
{
    static const char *const pieces[] = {"\t", "\x7f", "\x01", "\x1b[31m", "\x1b", "\xc3\xa9", "\xe2\x96\x88",
                                         "\xf0\x9f\x98\x80", "\xc3", "\xff", "\r", " ", "\n"};
    char line[1200], want[1300], got[1300];
    uint32_t x = 7;

    (void)state;
    for (int round = 0; round < 20000; round++) {
        size_t len = 0, target = (x >> 8) % 1100;
        while (len < target) {
            x = x * 1103515245u + 12345u;
            if ((x >> 16) % 4 == 0) {
                const char *p = pieces[(x >> 20) % (sizeof pieces / sizeof pieces[0])];
                size_t n = strlen(p);
                if (len + n > sizeof line)
                    break;
                memcpy(line + len, p, n);
                len += n;
            } else {
                for (size_t run = (x >> 20) % 40; run-- > 0 && len < sizeof line;)
                    line[len++] = (char)(0x20 + (x >> 3 ^ run * 7) % 0x5f);
            }
        }
        x = x * 1103515245u + 12345u;
        size_t max = round % 3 == 0 ? 600 : 1 + (x >> 16) % 700;
        slow_display(want, line, len, max);
        size_t n = cp_display_into(got, line, len, max);
        assert_int_equal(n, strlen(want));
        assert_string_equal(got, want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_newlines),
        cmocka_unit_test(test_count_finds_nul),
        cmocka_unit_test(test_display_matches_byte_by_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
