/* test_redact.c - unit tests of redaction: every kind of secret goes,
 * ordinary log text stays, anonymized names are consistent and numbered
 * in order of appearance, and a redacted diagnosis keeps its shape. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "diagnosis.h"
#include "redact.h"

static char *redact_with(unsigned flags, const char *s)
{
    cp_redactor *r = NULL;
    assert_int_equal(cp_redactor_new(&r, flags), 0);
    char *out = cp_redact(r, s);
    assert_non_null(out);
    cp_redactor_free(r);
    return out;
}

/* `s` redacted must equal `want`. */
static void expect(unsigned flags, const char *s, const char *want)
{
    char *out = redact_with(flags, s);
    if (strcmp(out, want) != 0)
        fail_msg("redact(%s)\n  got  %s\n  want %s", s, out, want);
    free(out);
}

static void secrets(const char *s, const char *want)
{
    expect(CP_REDACT_SECRETS, s, want);
}

static void test_tokens(void **state)
{
    (void)state;
    secrets("login with hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 now", "login with [redacted] now");
    secrets("git clone ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", "git clone [redacted]");
    secrets("gho_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789x", "[redacted]");
    secrets("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[redacted]");
    secrets("key AKIAIOSFODNN7EXAMPLE and ASIAIOSFODNN7EXAMPLE.", "key [redacted] and [redacted].");
    secrets("$ wandb login 0123456789abcdef0123456789abcdef01234567", "$ wandb login [redacted]");
    secrets("WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567 python train.py",
            "WANDB_API_KEY=[redacted] python train.py");
}

static void test_assignments(void **state)
{
    (void)state;
    secrets("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [redacted]");
    secrets("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG", "AWS_SECRET_ACCESS_KEY=[redacted]");
    secrets("password=hunter2 user=bob", "password=[redacted] user=bob");
    secrets("passwd: hunter2", "passwd: [redacted]");
    secrets("?token=abc123&page=2", "?token=[redacted]&page=2");
    secrets("secret=s3cr3t; apikey=k3y, api_key=k4y", "secret=[redacted]; apikey=[redacted], api_key=[redacted]");
    secrets("{\"password\": \"hunter 2\", \"user\": \"bob\"}", "{\"password\": \"[redacted]\", \"user\": \"bob\"}");
    secrets("{'api_key': 'k3y'}", "{'api_key': '[redacted]'}");
    secrets("HF_TOKEN=abc MY_API_KEY=def DB_SECRET=ghi CI_TOKEN: jkl",
            "HF_TOKEN=[redacted] MY_API_KEY=[redacted] DB_SECRET=[redacted] CI_TOKEN: [redacted]");
    secrets("run --hf-token abc --password=def", "run --hf-token [redacted] --password=[redacted]");
    secrets("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig", "Authorization: Bearer [redacted]");
    secrets("curl -H 'Authorization: Basic dXNlcjpwYXNz'", "curl -H 'Authorization: Basic [redacted]'");
    secrets("sent Bearer abcdefgh12345678", "sent Bearer [redacted]");
}

static void test_urls_and_keys(void **state)
{
    (void)state;
    secrets("pull https://bob:hunter2@hub.example.com/x.git", "pull https://[redacted]@hub.example.com/x.git");
    secrets("redis://:pw@10.0.0.1:6379/0", "redis://[redacted]@10.0.0.1:6379/0");
    secrets("s3://bucket/path and https://example.com/a@b", "s3://bucket/path and https://example.com/a@b");
    secrets("-----BEGIN RSA PRIVATE KEY-----MIIEow-----END RSA PRIVATE KEY----- after", "[redacted] after");
    secrets("-----BEGIN OPENSSH PRIVATE KEY-----", "[redacted]");
    /* a display cut must not leave a recognisable prefix */
    secrets("RuntimeError: fetch with hf_AbCdEfGh12...", "RuntimeError: fetch with [redacted]...");
    secrets("RuntimeError: the key=abcd...", "RuntimeError: the key=[redacted]...");
    secrets("RuntimeError: connection closed by peer...", "RuntimeError: connection closed by peer...");
}

/* Training logs are full of words that look a little like secrets. */
static void test_ordinary_text_stays(void **state)
{
    (void)state;
    const char *keep[] = {
        "pad_token=<pad> eos_token: </s> max_new_tokens=256 num_tokens=5",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "[rank3]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970",
        "tokenizer config: tokens=1024",
        "Token indices sequence length is longer than the specified maximum",
        "a secret of success",
        "",
    };
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        secrets(keep[i], keep[i]);
    /* idempotent */
    secrets("token=[redacted] password: [redacted]", "token=[redacted] password: [redacted]");
}

static void test_no_redact(void **state)
{
    (void)state;
    expect(0, "password=hunter2 hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
           "password=hunter2 hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789");
}

static void test_anonymize(void **state)
{
    (void)state;
    const unsigned both = CP_REDACT_SECRETS | CP_REDACT_ANONYMIZE;
    cp_redactor *r = NULL;
    assert_int_equal(cp_redactor_new(&r, both), 0);
    assert_int_equal(cp_redactor_know_host(r, "node017.cluster.local"), 0);
    assert_int_equal(cp_redactor_learn(r, "File \"/home/alice/proj/train.py\""), 0);
    struct {
        const char *in, *want;
    } cases[] = {
        {"node017 and node017.cluster.local", "host-1 and host-1"},
        {"node0170 stays, 10.1.2.3 then 10.9.9.9 then 10.1.2.3", "host-2 stays, ip-1 then ip-2 then ip-1"},
        {"/home/alice/x and /Users/alice and alice", "/home/user-1/x and /Users/user-1 and user-1"},
        {"mail alice.smith@example.org", "mail email-1"},
        {"peer fe80::1ff:fe23:4567:890a and 2001:db8::1", "peer ip-3 and ip-4"},
        {"at 16:21:34 in c10d::ProcessGroupNCCL and ::1 and 127.0.0.1",
         "at 16:21:34 in c10d::ProcessGroupNCCL and ::1 and 127.0.0.1"},
        {"ip-10-1-2-3.ec2.internal gpu-node-12 compute-2-14", "host-3 host-4 host-5"},
        {"https://bob:pw@hub.example.com/", "https://[redacted]@host-6/"},
        {"version 2.18.1 and 1.2.3.4.5", "version 2.18.1 and 1.2.3.4.5"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = cp_redact(r, cases[i].in);
        assert_non_null(out);
        if (strcmp(out, cases[i].want) != 0)
            fail_msg("anonymize(%s)\n  got  %s\n  want %s", cases[i].in, out, cases[i].want);
        free(out);
    }
    char host[CP_HOST_MAX] = "node017.cluster.local";
    cp_redact_host(r, host, sizeof host);
    assert_string_equal(host, "host-1");
    cp_redactor_free(r);
}

static void test_diagnosis(void **state)
{
    (void)state;
    cp_diagnosis d;
    memset(&d, 0, sizeof d);
    d.failed = true;
    d.first_rank = 1;
    strcpy(d.host, "node003");
    d.title = strdup("Python exception");
    d.signature = strdup("KeyError on node003: token=abc");
    d.n_evidence = 1;
    d.evidence = calloc(1, sizeof *d.evidence);
    d.evidence[0].path = strdup("/home/bob/logs/node003/rank_1.log");
    d.evidence[0].line = 7;
    d.evidence[0].rank = 1;
    d.evidence[0].text = strdup("password=hunter2 from 192.168.1.5");
    d.n_ranks = 2;
    d.ranks = calloc(2, sizeof *d.ranks);
    d.ranks[0].rank = 0;
    strcpy(d.ranks[0].host, "node002");
    d.ranks[1].rank = 1;
    strcpy(d.ranks[1].host, "node003");
    d.ranks[1].first_error = strdup("KeyError at node003");
    d.n_warnings = 1;
    d.warnings = calloc(1, sizeof *d.warnings);
    d.warnings[0] = strdup("/home/bob/logs/core.bin: binary file");

    cp_diagnosis red;
    assert_int_equal(cp_redact_diagnosis(&red, &d, CP_REDACT_SECRETS | CP_REDACT_ANONYMIZE), 0);
    assert_true(red.failed);
    assert_int_equal(red.first_rank, 1);
    assert_string_equal(red.host, "host-1");
    assert_string_equal(red.ranks[0].host, "host-2");
    assert_string_equal(red.ranks[1].host, "host-1");
    assert_string_equal(red.ranks[1].first_error, "KeyError at host-1");
    assert_string_equal(red.signature, "KeyError on host-1: token=[redacted]");
    assert_string_equal(red.evidence[0].path, "/home/user-1/logs/host-1/rank_1.log");
    assert_int_equal(red.evidence[0].line, 7);
    assert_string_equal(red.evidence[0].text, "password=[redacted] from ip-1");
    assert_string_equal(red.warnings[0], "/home/user-1/logs/core.bin: binary file");
    assert_null(red.means);
    cp_redacted_free(&red);

    /* secrets only: names stay */
    assert_int_equal(cp_redact_diagnosis(&red, &d, CP_REDACT_SECRETS), 0);
    assert_string_equal(red.host, "node003");
    assert_string_equal(red.evidence[0].text, "password=[redacted] from 192.168.1.5");
    cp_redacted_free(&red);
    cp_diagnosis_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_assignments),
        cmocka_unit_test(test_urls_and_keys),
        cmocka_unit_test(test_ordinary_text_stays),
        cmocka_unit_test(test_no_redact),
        cmocka_unit_test(test_anonymize),
        cmocka_unit_test(test_diagnosis),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
