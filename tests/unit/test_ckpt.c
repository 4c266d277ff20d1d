/* test_ckpt.c - unit tests of the checkpoint file checks: torch.save ZIPs
 * (whole, truncated mid-entry, legacy pickle, not a ZIP), safetensors
 * headers (good, bad JSON, offsets outside the data, wrong size), and the
 * step parser. Files are written into a temporary folder. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt.h"

static char dir[] = "/tmp/culprit-ckpt-XXXXXX";

static char *path_of(const char *name)
{
    static char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

static void put(const char *name, const void *data, size_t n)
{
    FILE *f = fopen(path_of(name), "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* A stored (uncompressed) single-entry ZIP, the shape torch.save writes. */
static size_t make_zip(unsigned char *out, const char *name, size_t data_len)
{
    size_t nl = strlen(name), o = 0;
    unsigned char *lh = out;
    memset(out, 0, 30);
    memcpy(lh, "PK\003\004", 4);
    lh[4] = 20;
    put32(lh + 14, 0); /* crc filled below */
    put32(lh + 18, (uint32_t)data_len);
    put32(lh + 22, (uint32_t)data_len);
    lh[26] = (unsigned char)nl;
    memcpy(lh + 30, name, nl);
    o = 30 + nl;
    unsigned char *data = out + o;
    for (size_t i = 0; i < data_len; i++)
        data[i] = (unsigned char)i;
    /* crc32 */
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < data_len; i++) {
        crc ^= data[i];
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
    }
    crc = ~crc;
    put32(lh + 14, crc);
    o += data_len;
    size_t cd = o;
    unsigned char *c = out + o;
    memset(c, 0, 46);
    memcpy(c, "PK\001\002", 4);
    c[4] = 20;
    c[6] = 20;
    put32(c + 16, crc);
    put32(c + 20, (uint32_t)data_len);
    put32(c + 24, (uint32_t)data_len);
    c[28] = (unsigned char)nl;
    put32(c + 42, 0);
    memcpy(c + 46, name, nl);
    o += 46 + nl;
    unsigned char *e = out + o;
    memset(e, 0, 22);
    memcpy(e, "PK\005\006", 4);
    e[8] = 1;
    e[10] = 1;
    put32(e + 12, (uint32_t)(46 + nl));
    put32(e + 16, (uint32_t)cd);
    return o + 22;
}

static void zip_whole(void **state)
{
    (void)state;
    unsigned char buf[8192];
    size_t n = make_zip(buf, "archive/data/0", 4000);
    put("ok.pt", buf, n);
    char msg[256] = "";
    assert_int_equal(cp_ckpt_check_zip(path_of("ok.pt"), msg, sizeof msg), CP_FILE_OK);
    assert_int_equal(cp_ckpt_check_file(path_of("ok.pt"), msg, sizeof msg), CP_FILE_OK);
}

static void zip_truncated(void **state)
{
    (void)state;
    unsigned char buf[8192];
    size_t n = make_zip(buf, "archive/data/0", 4000);
    put("cut.pt", buf, n / 2); /* cut mid-entry: no central directory */
    char msg[256] = "";
    assert_int_equal(cp_ckpt_check_zip(path_of("cut.pt"), msg, sizeof msg), CP_FILE_BAD);
    /* the headers claim more data than the file holds */
    unsigned char *cd = buf + 30 + 14 + 4000;
    put32(cd + 20, 400000);
    put32(cd + 24, 400000);
    put32(buf + 18, 400000);
    put32(buf + 22, 400000);
    put("lies.pt", buf, n);
    assert_int_equal(cp_ckpt_check_zip(path_of("lies.pt"), msg, sizeof msg), CP_FILE_BAD);
}

static void zip_other(void **state)
{
    (void)state;
    char msg[256] = "";
    put("legacy.pt", "\x80\x02\x8a\x0al\xfc\x9c", 7);
    assert_int_equal(cp_ckpt_check_zip(path_of("legacy.pt"), msg, sizeof msg), CP_FILE_UNCHECKED);
    assert_non_null(strstr(msg, "legacy"));
    put("text.pt", "hello world", 11);
    assert_int_equal(cp_ckpt_check_zip(path_of("text.pt"), msg, sizeof msg), CP_FILE_BAD);
    put("empty.pt", "", 0);
    assert_int_equal(cp_ckpt_check_zip(path_of("empty.pt"), msg, sizeof msg), CP_FILE_BAD);
    put("raw.bin", "hello world", 11);
    assert_int_equal(cp_ckpt_check_file(path_of("raw.bin"), msg, sizeof msg), CP_FILE_UNCHECKED);
}

static void put_st(const char *name, const char *json, size_t data, size_t extra)
{
    size_t hl = strlen(json);
    unsigned char *b = calloc(1, 8 + hl + data + extra);
    assert_non_null(b);
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)hl >> (8 * i));
    memcpy(b + 8, json, hl);
    put(name, b, 8 + hl + data + extra);
    free(b);
}

static void safetensors(void **state)
{
    (void)state;
    char msg[256] = "";
    const char *h = "{\"__metadata__\":{\"a\":\"b\"},\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}";
    put_st("ok.safetensors", h, 16, 0);
    assert_int_equal(cp_ckpt_check_safetensors(path_of("ok.safetensors"), msg, sizeof msg), CP_FILE_OK);
    put_st("long.safetensors", h, 16, 5);
    assert_int_equal(cp_ckpt_check_safetensors(path_of("long.safetensors"), msg, sizeof msg), CP_FILE_BAD);
    put_st("short.safetensors", h, 8, 0);
    assert_int_equal(cp_ckpt_check_safetensors(path_of("short.safetensors"), msg, sizeof msg), CP_FILE_BAD);
    assert_non_null(strstr(msg, "outside"));
    put_st("json.safetensors", "{not json}", 16, 0);
    assert_int_equal(cp_ckpt_check_file(path_of("json.safetensors"), msg, sizeof msg), CP_FILE_BAD);
    put("len.safetensors", "\xff\xff\xff\xff\x00\x00\x00\x00{}", 10);
    assert_int_equal(cp_ckpt_check_safetensors(path_of("len.safetensors"), msg, sizeof msg), CP_FILE_BAD);
    put_st("noofs.safetensors", "{\"w\":{\"dtype\":\"F32\"}}", 0, 0);
    assert_int_equal(cp_ckpt_check_safetensors(path_of("noofs.safetensors"), msg, sizeof msg), CP_FILE_BAD);
}

static void steps(void **state)
{
    (void)state;
    assert_int_equal(cp_ckpt_step_in_text("global_step600"), 600);
    assert_int_equal(cp_ckpt_step_in_text("checkpoint-1200"), 1200);
    assert_int_equal(cp_ckpt_step_in_text("iter_0000600"), 600);
    assert_int_equal(cp_ckpt_step_in_text("[Torch] Saving /ckpt/global_step7/zero_pp_rank_4_mp_rank_00_model_states.pt..."), 7);
    assert_int_equal(cp_ckpt_step_in_text("saving checkpoint at iteration     300 to /ckpt"), 300);
    assert_int_equal(cp_ckpt_step_in_text("nothing here"), -1);
    assert_int_equal(cp_ckpt_step_in_text(NULL), -1);
}

static void missing_dir(void **state)
{
    (void)state;
    cp_ckpt_report *r = (cp_ckpt_report *)1;
    char err[256] = "";
    assert_int_equal(cp_ckpt_inspect("/nonexistent/culprit", &r, err, sizeof err), -1);
    assert_null(r);
    assert_true(err[0] != 0);
    cp_ckpt_report_free(NULL);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(zip_whole),     cmocka_unit_test(zip_truncated), cmocka_unit_test(zip_other),
        cmocka_unit_test(safetensors),   cmocka_unit_test(steps),         cmocka_unit_test(missing_dir),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
