/* test_nlmap.c - unit tests of the newline map: line starts, line ends
 * and newline counts agree with a byte-by-byte reading of the same text,
 * at every offset, around the 64-byte words of the map and across them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "util/nlmap.h"

static size_t slow_line_start(const char *p, size_t b)
{
    while (b > 0 && p[b - 1] != '\n')
        b--;
    return b;
}

static size_t slow_line_end(const char *p, size_t len, size_t b)
{
    while (b < len && p[b] != '\n')
        b++;
    return b;
}

static size_t slow_count(const char *p, size_t from, size_t to)
{
    size_t n = 0;
    for (size_t i = from; i < to; i++)
        n += p[i] == '\n';
    return n;
}

/* Builds the map of p[0, len) and checks every answer it gives. */
static void check_text(cp_nlmap *m, const char *p, size_t len)
{
    assert_int_equal(cp_nlmap_build(m, p, len), 0);
    assert_int_equal(m->len, len);
    assert_int_equal(m->newlines, slow_count(p, 0, len));
    assert_int_equal(m->nul, memchr(p, '\0', len) != NULL);
    for (size_t b = 0; b < len; b++) {
        if (cp_nlmap_line_start(m, b) != slow_line_start(p, b))
            fail_msg("len %zu: line start of %zu", len, b);
        if (cp_nlmap_line_end(m, b) != slow_line_end(p, len, b))
            fail_msg("len %zu: line end of %zu", len, b);
    }
    for (size_t from = 0; from <= len; from++)
        for (size_t to = from; to <= len; to += 1 + to / 16)
            if (cp_nlmap_count(m, from, to) != slow_count(p, from, to))
                fail_msg("len %zu: count of [%zu, %zu)", len, from, to);
    assert_int_equal(cp_nlmap_count(m, 0, len), slow_count(p, 0, len));
}

static void test_random_text(void **state)
{
    (void)state;
    enum { MAX = 300 };
    char text[MAX];
    cp_nlmap m = {0};
    srand(7);
    for (size_t len = 1; len <= MAX; len++) {
        /* newlines about one byte in eight, runs of them included */
        for (size_t i = 0; i < len; i++)
            text[i] = rand() % 8 == 0 ? '\n' : (char)('a' + rand() % 26);
        check_text(&m, text, len);
    }
    cp_nlmap_free(&m);
}

static void test_only_newlines_and_none(void **state)
{
    (void)state;
    enum { LEN = 200 };
    char text[LEN];
    cp_nlmap m = {0};
    memset(text, '\n', LEN);
    for (size_t len = 1; len <= LEN; len += 7)
        check_text(&m, text, len);
    memset(text, 'x', LEN);
    for (size_t len = 1; len <= LEN; len += 7)
        check_text(&m, text, len);
    /* a newline only at the first and the last byte of a word */
    text[63] = '\n';
    text[64] = '\n';
    text[127] = '\n';
    check_text(&m, text, LEN);
    check_text(&m, text, 128);
    cp_nlmap_free(&m);
}

/* The count and the NUL flag of the build, with a NUL at every place a
 * word of the map can hold it, in the whole words and in the partial one. */
static void test_count_and_nul(void **state)
{
    (void)state;
    enum { LEN = 200 };
    char text[LEN];
    cp_nlmap m = {0};
    for (size_t i = 0; i < LEN; i++)
        text[i] = i % 9 == 8 ? '\n' : 'x';
    check_text(&m, text, LEN);
    assert_false(m.nul);
    for (size_t at = 0; at < LEN; at++) {
        char was = text[at];
        text[at] = '\0';
        assert_int_equal(cp_nlmap_build(&m, text, LEN), 0);
        if (!m.nul)
            fail_msg("NUL at %zu not seen", at);
        assert_int_equal(m.newlines, slow_count(text, 0, LEN));
        text[at] = was;
    }
    /* a NUL just past the mapped bytes is not the map's */
    text[150] = '\0';
    check_text(&m, text, 150);
    assert_false(m.nul);
    cp_nlmap_free(&m);
}

/* Swapping maps swaps what they describe, memory included. */
static void test_swap(void **state)
{
    (void)state;
    cp_nlmap a = {0}, b = {0};
    assert_int_equal(cp_nlmap_build(&a, "a\nb\n", 4), 0);
    assert_int_equal(cp_nlmap_build(&b, "\n", 1), 0);
    const uint64_t *a_bits = a.bits;
    cp_nlmap_swap(&a, &b);
    assert_ptr_equal(b.bits, a_bits);
    assert_int_equal(b.newlines, 2);
    assert_int_equal(a.newlines, 1);
    assert_int_equal(cp_nlmap_line_end(&b, 2), 3);
    cp_nlmap_free(&a);
    cp_nlmap_free(&b);
}

/* A smaller chunk after a larger one reuses the bits without leftovers. */
static void test_reuse(void **state)
{
    (void)state;
    enum { LEN = 4096 };
    char *big = malloc(LEN);
    assert_non_null(big);
    memset(big, '\n', LEN);
    cp_nlmap m = {0};
    assert_int_equal(cp_nlmap_build(&m, big, LEN), 0);
    assert_int_equal(cp_nlmap_count(&m, 0, LEN), LEN);
    check_text(&m, "ab\ncd", 5);
    assert_int_equal(cp_nlmap_line_end(&m, 3), 5);
    assert_int_equal(cp_nlmap_build(&m, big, 0), 0);
    assert_int_equal(m.len, 0);
    cp_nlmap_free(&m);
    cp_nlmap_free(&m);
    cp_nlmap_free(NULL);
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_text),
        cmocka_unit_test(test_only_newlines_and_none),
        cmocka_unit_test(test_reuse),
        cmocka_unit_test(test_count_and_nul),
        cmocka_unit_test(test_swap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
