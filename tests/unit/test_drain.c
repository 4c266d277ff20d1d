/* test_drain.c - unit tests of the hardware and infrastructure evidence:
 * the drain list (drain.c), the owner verdict that weighs Xids against a
 * CUDA error (analyze.c), fabric errors that concentrate on one host,
 * nvidia-smi / dcgmi identity and health lines (rules/65-hardware.rules),
 * and boot-relative kernel times placed on the wall clock (timeline.c).
 * Small incidents in the per-node layout (nodeNNN/train.log beside
 * nodeNNN/dmesg.log) and the combined one (syslog "node017 kernel:"
 * prefixes). Set CULPRIT_TEST_DUMP=1 to print the verdict. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "diagnosis.h"
#include "drain.h"
#include "harness.h"


static void diagnose(fixture *f, const stream_in *s, size_t n)
{
    harness_scan(&f->inc, s, n);
    assert_int_equal(cp_analyze(&f->d, &f->inc), 0);
    const char *env = getenv("CULPRIT_TEST_DUMP");
    if (!env || !*env)
        return;
    const cp_diagnosis *d = &f->d;
    fprintf(stderr, "verdict: rank=%d kind=%s owner=%s host=%s time=%s\n", d->first_rank, cp_kind_name(d->kind),
            cp_owner_name(d->owner), d->host, d->first_time ? d->first_time : "-");
    for (size_t i = 0; i < d->n_notes; i++)
        fprintf(stderr, "  note: %s\n", d->notes[i]);
    for (size_t i = 0; i < d->n_drain; i++)
        fprintf(stderr, "  drain: %s | %s | %s\n", d->drain[i].host, d->drain[i].reason,
                d->drain[i].command ? d->drain[i].command : "-");
}

static bool note_has(const cp_diagnosis *d, const char *a)
{
    for (size_t i = 0; i < d->n_notes; i++)
        if (strstr(d->notes[i], a))
            return true;
    return false;
}

static const cp_drain_host *drained(const cp_diagnosis *d, const char *host)
{
    for (size_t i = 0; i < d->n_drain; i++)
        if (strcmp(d->drain[i].host, host) == 0)
            return &d->drain[i];
    return NULL;
}

/* ---- per-node layout: Xid 79 on the rank's GPU ----------------------------- */

static const char node017_train[] =
    "[default6]:node017:4242:4301 [6] NCCL INFO ncclCommInitRank comm 0x55d3 rank 14 nranks 16 cudaDev 6 nvmlDev 6 "
    "busId ba000 commId 0x3090 - Init START\n"
    "[default5]:node017:4241:4300 [5] NCCL INFO ncclCommInitRank comm 0x55d4 rank 13 nranks 16 cudaDev 5 nvmlDev 5 "
    "busId aa000 commId 0x3090 - Init START\n"
    "[default6]:[rank14]:[E1221 02:35:25.100000000 ProcessGroupNCCL.cpp:1515] [PG 0 (default_pg) Rank 14] Process "
    "group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered\n";

static const char node017_dmesg_79[] =
    "[Sat Dec 21 02:30:00 2024] docker0: port 1(vetha50800c) entered blocking state\n"
    "[Sat Dec 21 02:35:24 2024] NVRM: Xid (PCI:0000:ba:00): 79, pid=4242, name=python3, GPU has fallen off the bus.\n";

static void xid79_drains_node_and_gpu(void **state)
{
    fixture *f = *state;
    const stream_in s[] = {{"run/node017/train.log", node017_train}, {"run/node017/dmesg.log", node017_dmesg_79}};
    diagnose(f, s, 2);
    assert_int_equal(f->d.first_rank, 14);
    assert_int_equal(f->d.kind, CP_KIND_GPU_HARDWARE);
    assert_int_equal(f->d.owner, CP_OWNER_HARDWARE);
    assert_string_equal(f->d.host, "node017");
    assert_true(note_has(&f->d, "Xid 79"));
    assert_true(note_has(&f->d, "own GPU"));
    assert_int_equal(f->d.n_drain, 1);
    const cp_drain_host *h = drained(&f->d, "node017");
    assert_non_null(h);
    assert_true(h->node);
    assert_int_equal(h->n_gpus, 1);
    assert_string_equal(h->gpus[0].busid, "0000:ba:00.0");
    assert_int_equal(h->gpus[0].index, 6);
    assert_int_equal(h->gpus[0].rank, 14);
    assert_string_equal(h->command, "scontrol update NodeName=node017 State=DRAIN "
                                    "Reason=\"culprit: Xid 79 on 0000:ba:00 (rank 14)\"");
}

/* ---- combined layout: syslog "node017 kernel:" prefixes ---------------------- */

static const char combined_text[] =
    "node017:4242:4301 [6] NCCL INFO ncclCommInitRank comm 0x55d3 rank 14 nranks 16 cudaDev 6 nvmlDev 6 busId "
    "ba000 commId 0x3090 - Init START\n"
    "node018:5242:5301 [6] NCCL INFO ncclCommInitRank comm 0x55d3 rank 22 nranks 16 cudaDev 6 nvmlDev 6 busId "
    "ba000 commId 0x3090 - Init START\n"
    "Dec 21 02:35:24 node017 kernel: NVRM: Xid (PCI:0000:ba:00): 48, pid=4242, name=python3, An uncorrectable "
    "double bit error (DBE) has been detected on GPU in the framebuffer at partition 4, subpartition 1.\n"
    "[2024-12-21 02:35:25] node017:4242:4301 [6] NCCL WARN Cuda failure 'an illegal memory access was "
    "encountered'\n";

static void combined_syslog_ties_xid_to_rank(void **state)
{
    fixture *f = *state;
    const stream_in s = {"job/all.log", combined_text};
    diagnose(f, &s, 1);
    assert_int_equal(f->d.kind, CP_KIND_GPU_HARDWARE);
    assert_int_equal(f->d.owner, CP_OWNER_HARDWARE);
    const cp_drain_host *h = drained(&f->d, "node017");
    assert_non_null(h);
    assert_false(h->node);
    assert_null(drained(&f->d, "node018"));
    assert_int_equal(h->n_gpus, 1);
    assert_int_equal(h->gpus[0].rank, 14);
    assert_non_null(strstr(h->reason, "Xid 48 on 0000:ba:00 (rank 14)"));
}

/* ---- application Xid: no drain, the program's fault ----------------------------- */

static const char node017_dmesg_31[] =
    "[Sat Dec 21 02:35:24 2024] NVRM: Xid (PCI:0000:ba:00): 31, pid=4242, name=python3, Ch 00000010, intr "
    "00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f3a_12000000. Fault is of type FAULT_PDE "
    "ACCESS_TYPE_VIRT_READ\n";

static void xid31_alone_is_the_application(void **state)
{
    fixture *f = *state;
    const stream_in s[] = {{"run/node017/train.log", node017_train}, {"run/node017/dmesg.log", node017_dmesg_31}};
    diagnose(f, s, 2);
    assert_int_equal(f->d.first_rank, 14);
    assert_int_equal(f->d.kind, CP_KIND_CUDA_ERROR);
    assert_int_not_equal(f->d.owner, CP_OWNER_HARDWARE);
    assert_true(note_has(&f->d, "Xid 31 on the same GPU is what an application fault produces; no hardware Xid"));
    assert_int_equal(f->d.n_drain, 0);
}

/* ---- host OOM: infrastructure, nothing to drain -------------------------------- */

static const char node017_dmesg_oom[] =
    "[Sat Dec 21 02:35:24 2024] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,"
    "global_oom,task_memcg=/slurm/uid_1000/job_1/step_0/task_0,task=python3,pid=4242,uid=1000\n"
    "[Sat Dec 21 02:35:24 2024] Out of memory: Killed process 4242 (python3) total-vm:2237022408kB, "
    "anon-rss:1775239168kB, file-rss:669082kB, shmem-rss:41570kB, UID:1000 pgtables:3550478kB oom_score_adj:0\n";

static const char node017_train_oom[] =
    "[default6]:node017:4242:4301 [6] NCCL INFO ncclCommInitRank comm 0x55d3 rank 14 nranks 16 cudaDev 6 nvmlDev 6 "
    "busId ba000 commId 0x3090 - Init START\n";

static void host_oom_is_not_drained(void **state)
{
    fixture *f = *state;
    const stream_in s[] = {{"run/node017/train.log", node017_train_oom}, {"run/node017/dmesg.log", node017_dmesg_oom}};
    diagnose(f, s, 2);
    assert_int_equal(f->d.first_rank, 14);
    assert_int_equal(f->d.kind, CP_KIND_HOST_OOM);
    assert_int_equal(f->d.owner, CP_OWNER_INFRASTRUCTURE);
    assert_int_equal(f->d.n_drain, 0);
}

/* ---- fabric errors concentrated on one host ---------------------------------- */

#define IB_ERR(rank, host, dev)                                                                                     \
    "[rank" #rank "]:" host ":5117:6083 [" #dev "] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from " \
    "peer 10.141.1.1<51671> with error 12, opcode 0, len 0, vendor err 129 (Recv) localGid ::ffff:10.141.1.2 "      \
    "remoteGids::ffff:10.141.1.1\n"

static const char fabric_text[] = IB_ERR(8, "node002", 0) IB_ERR(9, "node002", 1) IB_ERR(10, "node002", 2)
    IB_ERR(11, "node002", 3) IB_ERR(1, "node001", 1);

static void fabric_errors_on_one_host_drain_it(void **state)
{
    fixture *f = *state;
    const stream_in s = {"job/train.log", fabric_text};
    diagnose(f, &s, 1);
    assert_int_equal(f->d.kind, CP_KIND_NCCL_COMM_ERROR);
    assert_int_equal(f->d.owner, CP_OWNER_INFRASTRUCTURE);
    assert_true(note_has(&f->d, "node002's network link"));
    const cp_drain_host *h = drained(&f->d, "node002");
    assert_non_null(h);
    assert_true(h->node);
    assert_non_null(strstr(h->reason, "4 x InfiniBand/RoCE completion error"));
    assert_null(drained(&f->d, "node001"));
}

static const char fabric_spread_text[] = IB_ERR(8, "node002", 0) IB_ERR(9, "node002", 1) IB_ERR(10, "node002", 2)
    IB_ERR(1, "node001", 1) IB_ERR(2, "node001", 2) IB_ERR(3, "node001", 3);

static void fabric_errors_spread_drain_nobody(void **state)
{
    fixture *f = *state;
    const stream_in s = {"job/train.log", fabric_spread_text};
    diagnose(f, &s, 1);
    assert_int_equal(f->d.n_drain, 0);
}

/* ---- nvidia-smi and dcgmi ---------------------------------------------------- */

static const char smi_table[] =
    "+-----------------------------------------------------------------------------------------+\n"
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
    "|=========================================+========================+======================|\n"
    "|   0  NVIDIA H100 80GB HBM3          On  | 00000000:18:00.0 Off |                    0 |\n"
    "| N/A   34C    P0             71W /  700W |       4MiB /  81559MiB |      0%      Default |\n"
    "|   3  NVIDIA H100 80GB HBM3          On  | 00000000:BA:00.0 Off |                    0 |\n"
    "| N/A   36C    P0             73W /  700W |       4MiB /  81559MiB |      0%      Default |\n";

static const char dcgm_diag[] =
    "+---------------------------+------------------------------------------------+\n"
    "| Diagnostic                | Result                                         |\n"
    "+===========================+================================================+\n"
    "| Memory                    | Pass - GPU: 0                                  |\n"
    "|                           | Fail - GPU: 3                                  |\n";

static void dcgm_failure_names_gpu_through_smi_index(void **state)
{
    fixture *f = *state;
    const stream_in s[] = {{"diag/node009/nvidia-smi.txt", smi_table}, {"diag/node009/dcgmi-diag.txt", dcgm_diag}};
    diagnose(f, s, 2);
    const cp_drain_host *h = drained(&f->d, "node009");
    assert_non_null(h);
    assert_int_equal(h->n_gpus, 1);
    assert_string_equal(h->gpus[0].busid, "0000:ba:00.0");
    assert_int_equal(h->gpus[0].index, 3);
}

static const char smi_q[] =
    "==============NVSMI LOG==============\n"
    "\n"
    "GPU 00000000:18:00.0\n"
    "    Minor Number                          : 0\n"
    "    ECC Errors\n"
    "        Volatile\n"
    "            DRAM Uncorrectable                : 0\n"
    "\n"
    "GPU 00000000:BA:00.0\n"
    "    Minor Number                          : 3\n"
    "    GPU UUID                              : GPU-5d31525a-bcfd-72ee-bc0c-7ad2471c60fc\n"
    "    ECC Errors\n"
    "        Volatile\n"
    "            DRAM Uncorrectable                : 2\n"
    "    Remapped Rows\n"
    "        Pending                           : Yes\n";

static void smi_q_block_names_its_gpu(void **state)
{
    fixture *f = *state;
    const stream_in s = {"diag/node011/nvidia-smi-q.txt", smi_q};
    diagnose(f, &s, 1);
    assert_false(f->d.failed);
    const cp_drain_host *h = drained(&f->d, "node011");
    assert_non_null(h);
    assert_false(h->node);
    assert_int_equal(h->n_gpus, 1);
    assert_string_equal(h->gpus[0].busid, "0000:ba:00.0");
    assert_int_equal(h->gpus[0].index, 3);
}

static const char ibstat_text[] =
    "CA 'mlx5_0'\n"
    "\tCA type: MT4123\n"
    "\tPort 1:\n"
    "\t\tState: Down\n"
    "\t\tPhysical state: Polling\n"
    "\t\tRate: 10\n";

static void ibstat_port_down_drains_node(void **state)
{
    fixture *f = *state;
    const stream_in s = {"diag/node012/ibstat.txt", ibstat_text};
    diagnose(f, &s, 1);
    const cp_drain_host *h = drained(&f->d, "node012");
    assert_non_null(h);
    assert_true(h->node);
    assert_int_equal(h->n_gpus, 0);
}

/* ---- boot-relative kernel times ----------------------------------------------- */

/* syslog prints both clocks on one line; dmesg.log (boot-relative) is then
 * placed on the wall clock: 02:30:00 - 1000 s is the boot, so 1324.5 s
 * after boot is 02:35:24.500. */
static const char node017_syslog[] =
    "Dec 21 02:30:00 node017 kernel: [ 1000.000000] NVRM: Xid (PCI:0000:ba:00): 13, pid=4242, name=python3, "
    "Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address\n";

static const char node017_dmesg_boot[] =
    "[ 1324.500000] NVRM: Xid (PCI:0000:ba:00): 79, pid=4242, name=python3, GPU has fallen off the bus.\n";

static void boot_times_join_the_wall_clock(void **state)
{
    fixture *f = *state;
    const stream_in s[] = {{"run/node017/train.log", node017_train},
                           {"run/node017/syslog", node017_syslog},
                           {"run/node017/dmesg.log", node017_dmesg_boot}};
    diagnose(f, s, 3);
    assert_int_equal(f->d.kind, CP_KIND_GPU_HARDWARE);
    assert_string_equal(f->d.first_time, "12-21 02:35:24.500");
    assert_true(note_has(&f->d, "0.6 s later is its consequence"));
}

static void drain_command_quotes_safely(void **state)
{
    (void)state;
    char *c = cp_drain_command("node001", "a \"quoted\" $reason");
    assert_string_equal(c, "scontrol update NodeName=node001 State=DRAIN Reason=\"culprit: a 'quoted' 'reason\"");
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(xid79_drains_node_and_gpu, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(combined_syslog_ties_xid_to_rank, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(xid31_alone_is_the_application, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(host_oom_is_not_drained, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(fabric_errors_on_one_host_drain_it, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(fabric_errors_spread_drain_nobody, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(dcgm_failure_names_gpu_through_smi_index, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(smi_q_block_names_its_gpu, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(ibstat_port_down_drains_node, new_fixture, free_fixture),
        cmocka_unit_test_setup_teardown(boot_times_join_the_wall_clock, new_fixture, free_fixture),
        cmocka_unit_test(drain_command_quotes_safely),
    };
    return cmocka_run_group_tests(tests, harness_load_catalog, harness_free_catalog);
}
