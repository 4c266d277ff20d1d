/* test_pickle.c - unit tests of the bounded pickle reader: the subset
 * Flight Recorder dumps use, and hostile pickles that must fail cleanly
 * (truncated, deeply nested, huge lengths, code-running opcodes, cycles). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pickle.h"

#define P(s) ((const unsigned char *)(s)), (sizeof(s) - 1)

static int parse(cp_pv_doc **doc, const unsigned char *p, size_t n)
{
    char err[256];
    int rc = cp_pickle_parse(doc, p, n, NULL, err, sizeof err);
    if (rc != 0) {
        assert_null(*doc);
        assert_true(err[0] != '\0');
    }
    return rc;
}

/* pickle.dumps({"version": "2.10", "entries": [{"collective_seq_id": 7,
 * "state": "started", "is_p2p": False, "sizes": [[3, 4]], "t": 1.5,
 * "pg": ("0", "default_pg"), "none": None}]}, protocol=2) */
static const unsigned char dump2[] =
    "\x80\x02\x7d\x71\x00\x28\x58\x07\x00\x00\x00\x76\x65\x72\x73\x69\x6f\x6e\x71\x01\x58\x04\x00\x00"
    "\x00\x32\x2e\x31\x30\x71\x02\x58\x07\x00\x00\x00\x65\x6e\x74\x72\x69\x65\x73\x71\x03\x5d\x71\x04"
    "\x7d\x71\x05\x28\x58\x11\x00\x00\x00\x63\x6f\x6c\x6c\x65\x63\x74\x69\x76\x65\x5f\x73\x65\x71\x5f"
    "\x69\x64\x71\x06\x4b\x07\x58\x05\x00\x00\x00\x73\x74\x61\x74\x65\x71\x07\x58\x07\x00\x00\x00\x73"
    "\x74\x61\x72\x74\x65\x64\x71\x08\x58\x06\x00\x00\x00\x69\x73\x5f\x70\x32\x70\x71\x09\x89\x58\x05"
    "\x00\x00\x00\x73\x69\x7a\x65\x73\x71\x0a\x5d\x71\x0b\x5d\x71\x0c\x28\x4b\x03\x4b\x04\x65\x61\x58"
    "\x01\x00\x00\x00\x74\x71\x0d\x47\x3f\xf8\x00\x00\x00\x00\x00\x00\x58\x02\x00\x00\x00\x70\x67\x71"
    "\x0e\x58\x01\x00\x00\x00\x30\x71\x0f\x58\x0a\x00\x00\x00\x64\x65\x66\x61\x75\x6c\x74\x5f\x70\x67"
    "\x71\x10\x86\x71\x11\x58\x04\x00\x00\x00\x6e\x6f\x6e\x65\x71\x12\x4e\x75\x61\x75\x2e";

static void test_flight_recorder_subset(void **state)
{
    (void)state;
    cp_pv_doc *doc = NULL;
    assert_int_equal(parse(&doc, dump2, sizeof dump2 - 1), 0);
    const cp_pv *root = cp_pv_doc_root(doc);
    assert_string_equal(cp_pv_str(cp_pv_get(root, "version")), "2.10");
    const cp_pv *entries = cp_pv_get(root, "entries");
    assert_true(cp_pv_is_seq(entries));
    assert_int_equal(entries->len, 1);
    const cp_pv *e = entries->items[0];
    int64_t v;
    assert_true(cp_pv_int(cp_pv_get(e, "collective_seq_id"), &v));
    assert_int_equal(v, 7);
    assert_string_equal(cp_pv_str(cp_pv_get(e, "state")), "started");
    assert_int_equal(cp_pv_get(e, "is_p2p")->type, CP_PV_BOOL);
    assert_int_equal(cp_pv_get(e, "is_p2p")->i, 0);
    const cp_pv *sizes = cp_pv_get(e, "sizes");
    assert_int_equal(sizes->len, 1);
    assert_int_equal(sizes->items[0]->len, 2);
    assert_int_equal(sizes->items[0]->items[1]->i, 4);
    assert_true(cp_pv_get(e, "t")->f == 1.5);
    const cp_pv *pg = cp_pv_get(e, "pg");
    assert_int_equal(pg->type, CP_PV_TUPLE);
    assert_string_equal(cp_pv_str(pg->items[1]), "default_pg");
    assert_int_equal(cp_pv_get(e, "none")->type, CP_PV_NONE);
    cp_pv_doc_free(doc);
}

static void test_memo_and_protocols(void **state)
{
    (void)state;
    cp_pv_doc *doc = NULL;
    /* protocol 4: FRAME, SHORT_BINUNICODE, MEMOIZE, BINGET of a shared dict */
    static const unsigned char p4[] =
        "\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00]\x94(}\x94\x8c\x01k\x94K\x01sh\x01h\x01" "e.";
    assert_int_equal(parse(&doc, P(p4)), 0);
    const cp_pv *l = cp_pv_doc_root(doc);
    assert_int_equal(l->len, 3);
    assert_ptr_equal(l->items[0], l->items[1]);
    cp_pv_doc_free(doc);
    /* LONG1 negative, BININT, BINBYTES, protocol 5 */
    static const unsigned char p5[] = "\x80\x05(\x8a\x02\x00\xffJ\xff\xff\xff\xff" "C\x02" "hit.";
    assert_int_equal(parse(&doc, P(p5)), 0);
    l = cp_pv_doc_root(doc);
    assert_int_equal(l->items[0]->i, -256);
    assert_int_equal(l->items[1]->i, -1);
    assert_string_equal(l->items[2]->s, "hi");
    cp_pv_doc_free(doc);
}

static void test_refuses_code(void **state)
{
    (void)state;
    cp_pv_doc *doc = NULL;
    /* the classic os.system payload: GLOBAL + REDUCE */
    assert_true(parse(&doc, P("\x80\x02" "cos\nsystem\nq\x00X\x02\x00\x00\x00" "idq\x01\x85q\x02Rq\x03.")) < 0);
    assert_true(parse(&doc, P("\x80\x04\x8c\x02os\x8c\x06system\x93.")) < 0);  /* STACK_GLOBAL */
    assert_true(parse(&doc, P("\x80\x02}b.")) < 0);                           /* BUILD */
    assert_true(parse(&doc, P("\x80\x02)}\x81.")) < 0);                       /* NEWOBJ */
    assert_true(parse(&doc, P("\x80\x02X\x01\x00\x00\x00" "aQ.")) < 0);          /* BINPERSID */
    assert_true(parse(&doc, P("\x80\x01N.")) < 0);                            /* protocol 1 */
    assert_true(parse(&doc, P("\x80\x02I1\n.")) < 0);                         /* text INT */
}

static void test_truncated_and_malformed(void **state)
{
    (void)state;
    cp_pv_doc *doc = NULL;
    /* every prefix of a valid pickle fails cleanly */
    for (size_t n = 0; n < sizeof dump2 - 1; n++)
        assert_true(parse(&doc, dump2, n) < 0);
    assert_true(parse(&doc, P("\x80\x02N")) < 0);             /* no STOP */
    assert_true(parse(&doc, P("\x80\x02NN.")) < 0);           /* two values */
    assert_true(parse(&doc, P("\x80\x02.")) < 0);             /* nothing */
    assert_true(parse(&doc, P("\x80\x02h\x05.")) < 0);        /* unknown memo */
    assert_true(parse(&doc, P("\x80\x02Na.")) < 0);           /* APPEND to None */
    assert_true(parse(&doc, P("\x80\x02}Nu.")) < 0);          /* SETITEMS without mark */
    assert_true(parse(&doc, P("\x80\x02}(Nu.")) < 0);         /* odd SETITEMS */
    assert_true(parse(&doc, P("\x80\x02\x86.")) < 0);         /* TUPLE2 of nothing */
    assert_true(parse(&doc, P("\x80\x02(1.")) < 0);           /* POP_MARK leaves nothing */
    assert_true(parse(&doc, P("\x80\x02r\xff\xff\xff\xff.")) < 0); /* memo put on empty stack */
    assert_true(parse(&doc, P("\x80\x02Nr\xff\xff\xff\x7f.")) < 0); /* huge memo index */
}

static void test_huge_lengths(void **state)
{
    (void)state;
    cp_pv_doc *doc = NULL;
    assert_true(parse(&doc, P("\x80\x02X\xff\xff\xff\xff" "xyz.")) < 0);
    assert_true(parse(&doc, P("\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\xff" "xyz.")) < 0);
    assert_true(parse(&doc, P("\x80\x04\x8e\x00\x00\x00\x00\x00\x00\x00\x80.")) < 0);
    assert_true(parse(&doc, P("\x80\x02\x8b\xff\xff\xff\x7f.")) < 0); /* LONG4 */
    assert_true(parse(&doc, P("\x80\x02\x8a\x09\x01\x02\x03\x04\x05\x06\x07\x08\x09.")) < 0);
}

static void test_depth_and_memory_limits(void **state)
{
    (void)state;
    cp_pv_doc *doc = NULL;
    /* 100000 nested one-element lists: "]" then "]" + "a" ... */
    size_t depth = 100000, n = 0;
    unsigned char *p = malloc(depth * 3 + 8);
    assert_non_null(p);
    p[n++] = 0x80;
    p[n++] = 2;
    p[n++] = ']';
    for (size_t i = 1; i < depth; i++) {
        p[n++] = ']';
    }
    for (size_t i = 1; i < depth; i++)
        p[n++] = 'a';
    p[n++] = '.';
    char err[256];
    assert_int_equal(cp_pickle_parse(&doc, p, n, NULL, err, sizeof err), CP_PICKLE_EDEPTH);
    assert_null(doc);
    /* a million empty lists under a 1 MiB budget */
    size_t count = 1000000;
    n = 0;
    unsigned char *q = realloc(p, count + 8);
    assert_non_null(q);
    p = q;
    p[n++] = 0x80;
    p[n++] = 2;
    p[n++] = '(';
    for (size_t i = 0; i < count; i++)
        p[n++] = ']';
    p[n++] = 'l';
    p[n++] = '.';
    cp_pickle_limits lim = {1 << 20, 0};
    assert_int_equal(cp_pickle_parse(&doc, p, n, &lim, err, sizeof err), CP_PICKLE_ENOMEM);
    assert_null(doc);
    /* within the default budget it parses */
    assert_int_equal(cp_pickle_parse(&doc, p, n, NULL, err, sizeof err), 0);
    assert_int_equal(cp_pv_doc_root(doc)->len, count);
    cp_pv_doc_free(doc);
    free(p);
}

static void test_no_cycles(void **state)
{
    (void)state;
    cp_pv_doc *doc = NULL;
    /* a list that appends itself */
    assert_true(parse(&doc, P("\x80\x02]q\x00h\x00" "a.")) < 0);
    /* A = [B], then B.append(A): B is sealed once inside A */
    assert_true(parse(&doc, P("\x80\x02]q\x00]q\x01h\x00" "ah\x01" "a0h\x00h\x01" "a.")) < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flight_recorder_subset),
        cmocka_unit_test(test_memo_and_protocols),
        cmocka_unit_test(test_refuses_code),
        cmocka_unit_test(test_truncated_and_malformed),
        cmocka_unit_test(test_huge_lengths),
        cmocka_unit_test(test_depth_and_memory_limits),
        cmocka_unit_test(test_no_cycles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
