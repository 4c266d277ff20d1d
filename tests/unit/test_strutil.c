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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_newlines),
        cmocka_unit_test(test_count_finds_nul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
