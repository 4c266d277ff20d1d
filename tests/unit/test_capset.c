/* test_capset.c - unit tests of the packed captures an event keeps: the
 * values and order survive packing, the first value of a name wins, an
 * empty set allocates nothing, and freeing twice is harmless. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "capset.h"

static void add(cp_captures *c, const char *name, const char *value)
{
    snprintf(c->v[c->n].name, sizeof c->v[0].name, "%s", name);
    snprintf(c->v[c->n].value, sizeof c->v[0].value, "%s", value);
    c->n++;
}

static void test_pack_get(void **state)
{
    (void)state;
    cp_captures c;
    c.n = 0;
    add(&c, "rank", "12");
    add(&c, "empty", "");
    add(&c, "busid", "0000:3b:00.0");
    add(&c, "rank", "13");
    cp_capset s;
    assert_int_equal(cp_capset_pack(&s, &c), 0);
    assert_int_equal(s.n, 4);
    assert_string_equal(cp_capset_get(&s, "rank"), "12");
    assert_string_equal(cp_capset_get(&s, "empty"), "");
    assert_string_equal(cp_capset_get(&s, "busid"), "0000:3b:00.0");
    assert_null(cp_capset_get(&s, "pid"));
    assert_null(cp_capset_get(&s, "ran"));
    cp_capset_free(&s);
    cp_capset_free(&s);
    assert_null(s.packed);
    cp_capset_free(NULL);
}

static void test_order(void **state)
{
    (void)state;
    cp_captures c;
    c.n = 0;
    add(&c, "a", "1");
    add(&c, "b", "");
    add(&c, "c", "333");
    cp_capset s;
    assert_int_equal(cp_capset_pack(&s, &c), 0);
    const char *want[][2] = {{"a", "1"}, {"b", ""}, {"c", "333"}};
    int i = 0;
    const char *value;
    for (const char *k = cp_capset_next(&s, NULL, &value); k; k = cp_capset_next(&s, k, &value), i++) {
        assert_true(i < 3);
        assert_string_equal(k, want[i][0]);
        assert_string_equal(value, want[i][1]);
    }
    assert_int_equal(i, 3);
    cp_capset_free(&s);
}

static void test_empty(void **state)
{
    (void)state;
    cp_captures c;
    c.n = 0;
    cp_capset s;
    memset(&s, 0xff, sizeof s);
    assert_int_equal(cp_capset_pack(&s, &c), 0);
    assert_null(s.packed);
    assert_int_equal(s.n, 0);
    const char *value = NULL;
    assert_null(cp_capset_next(&s, NULL, &value));
    assert_null(cp_capset_get(&s, "rank"));
    cp_capset_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_get),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
