/* test_cli_inputs.c - unit tests of what the command line learns of its
 * inputs before reading them (cli_input_bytes: files, folders, standard
 * input, the early stop, folders too large to list) and of pretouching the heap for small inputs
 * (cli_pretouch: resident memory grows by the pretouched stretch, and not
 * at all for a large input). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/inputs.h"
#include "cli/pretouch.h"

static char dir[] = "/tmp/culprit-inputs-XXXXXX";

/* A file of `size` bytes at dir/name (sparse: only its size matters). */
static void make_file(const char *name, off_t size)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, size), 0);
    close(fd);
}

static char *in_dir(const char *name)
{
    static char path[4][256];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", dir, name);
    return p;
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    char sub[300];
    snprintf(sub, sizeof sub, "%s/node1", dir);
    mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/node1/deeper", dir);
    mkdir(sub, 0755);
    make_file("train.log", 1000);
    make_file("node1/rank_0.log", 200);
    make_file("node1/deeper/rank_1.log", 300);
    make_file("big.log", (off_t)100 << 20);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_files_and_folders(void **state)
{
    (void)state;
    const char *one[] = {in_dir("train.log")};
    assert_int_equal(cli_input_bytes(one, 1, ~0ULL), 1000);
    /* a folder is walked: 200 + 300 below node1 */
    const char *two[] = {in_dir("train.log"), in_dir("node1")};
    assert_int_equal(cli_input_bytes(two, 2, ~0ULL), 1500);
    /* a path that is not there adds nothing */
    const char *gone[] = {in_dir("missing.log"), in_dir("train.log")};
    assert_int_equal(cli_input_bytes(gone, 2, ~0ULL), 1000);
}

static void test_stops_early(void **state)
{
    (void)state;
    /* the walk ends at the first total that reaches stop_at: the big file
     * alone already does, so train.log after it is not looked at */
    const char *paths[] = {in_dir("big.log"), in_dir("train.log")};
    assert_int_equal(cli_input_bytes(paths, 2, 1 << 20), (unsigned long long)100 << 20);
    assert_int_equal(cli_input_bytes(paths, 2, ~0ULL), ((unsigned long long)100 << 20) + 1000);
}

/* A folder of more entries than a walk visits (65,536) has no known size:
 * listing it would hold the run up. */
static void test_too_many_entries(void **state)
{
    (void)state;
    char sub[300], path[320];
    snprintf(sub, sizeof sub, "%s/many", dir);
    assert_int_equal(mkdir(sub, 0755), 0);
    for (int i = 0; i < 65537; i++) {
        snprintf(path, sizeof path, "%s/%d", sub, i);
        int fd = open(path, O_WRONLY | O_CREAT, 0644);
        assert_true(fd >= 0);
        close(fd);
    }
    const char *paths[] = {in_dir("train.log"), sub};
    assert_int_equal(cli_input_bytes(paths, 2, ~0ULL), 0);
    /* the files before it were counted; a stop before the folder still counts them */
    assert_int_equal(cli_input_bytes(paths, 2, 1000), 1000);
}

static void test_stdin(void **state)
{
    (void)state;
    const char *paths[] = {"-"};
    int saved = dup(STDIN_FILENO);
    assert_true(saved >= 0);
    /* standard input from a file counts its size */
    int fd = open(in_dir("train.log"), O_RDONLY);
    assert_true(fd >= 0);
    dup2(fd, STDIN_FILENO);
    close(fd);
    assert_int_equal(cli_input_bytes(paths, 1, ~0ULL), 1000);
    /* from a pipe it cannot be known */
    int p[2];
    assert_int_equal(pipe(p), 0);
    dup2(p[0], STDIN_FILENO);
    close(p[0]);
    close(p[1]);
    assert_int_equal(cli_input_bytes(paths, 1, ~0ULL), 0);
    dup2(saved, STDIN_FILENO);
    close(saved);
}

/* Pretouching is glibc's heap; ASan brings its own allocator. */
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#define PRETOUCH_TESTABLE 1

/* The process's resident pages, in bytes (/proc/self/statm). */
static long long resident_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long long size = 0, resident = 0;
    if (!f)
        return -1;
    if (fscanf(f, "%lld %lld", &size, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/* Whether one of the process's mappings carries the huge-page advice
 * (VmFlags "hg" in /proc/self/smaps). */
static int some_mapping_advised_huge(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int found = 0;
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof line, f))
        found = strncmp(line, "VmFlags:", 8) == 0 && strstr(line, " hg") != NULL;
    fclose(f);
    return found;
}

/* Whether the kernel has transparent huge pages at all. */
static int thp_supported(void)
{
    return access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0;
}

/* Whether the kernel populates memory on request (Linux 5.14). */
static int populate_supported(void)
{
#ifdef MADV_POPULATE_WRITE
    long page = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 0;
    int ok = madvise(p, (size_t)page, MADV_POPULATE_WRITE) == 0;
    munmap(p, (size_t)page);
    return ok;
#else
    return 0;
#endif
}
#endif

/* Runs first of the tests here: the process's heap is then as
 * the runtime left it. A large input is not pretouched; a small one gets
 * at least 4 MiB of resident heap at once, advised for huge pages, which
 * later allocations use without growing the resident size again. */
static void test_pretouch(void **state)
{
    (void)state;
#ifdef PRETOUCH_TESTABLE
    if (!populate_supported() || getenv("CULPRIT_VALGRIND"))
        skip();
    const char *big[] = {in_dir("big.log")};
    long long before = resident_bytes();
    cli_pretouch(big, 1);
    long long after_big = resident_bytes();
    assert_true(after_big - before < (1 << 20));
    assert_false(some_mapping_advised_huge());

    const char *small[] = {in_dir("train.log")};
    cli_pretouch(small, 1);
    long long after_small = resident_bytes();
    assert_true(after_small - after_big >= (3 << 20));
    /* the heap asked for huge pages (whether the kernel had them free is
     * its business: the advice is what culprit controls) */
    if (thp_supported())
        assert_true(some_mapping_advised_huge());
    /* 2 MiB from the pretouched heap: no new resident pages to speak of */
    char *b = malloc(2 << 20);
    assert_non_null(b);
    memset(b, 1, 2 << 20);
    assert_true(resident_bytes() - after_small < (512 << 10));
    free(b);
#else
    skip();
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pretouch),
        cmocka_unit_test(test_files_and_folders),
        cmocka_unit_test(test_stops_early),
        cmocka_unit_test(test_stdin),
        cmocka_unit_test(test_too_many_entries),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
