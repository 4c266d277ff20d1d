/* test_frame.c - line attribution (frame.c) and origins (origin.c).
 *
 * Tests are data: each row is a real log line (from the development corpus,
 * from synthlogs.py output, or quoted in docs/REFERENCE.md; "built" marks
 * the few assembled from a documented format) with what cp_frame_parse must
 * find in it. The corpus replay runs every line of every *.log in the corpus
 * folder (env CULPRIT_CORPUS_DIR, else the CULPRIT_TEST_CORPUS define, else
 * ../shared/corpus;
 * skipped when absent) through the parser in an exact-size heap buffer, whole
 * and cut at every length, so that ASan sees any read past the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "origin.h"

#ifndef CULPRIT_TEST_CORPUS
#define CULPRIT_TEST_CORPUS "../shared/corpus"
#endif

enum { U = -1 };    /* unknown, in the tables */

typedef struct frame_case {
    const char *line;
    int32_t rank, local_rank;
    const char *host;           /* "" unknown */
    int32_t pid, task, cuda_dev;
    char level;                 /* 0 unknown */
    cp_ts_kind kind;
    int64_t ms;
    const char *body;           /* the text from the returned offset on */
} frame_case;

/* 40, 199 and 200 bytes of text with no tag in it */
#define FILL40 "0123456789 123456789 123456789 12345678 "
#define FILL199 FILL40 FILL40 FILL40 FILL40 "0123456789 123456789 123456789 12345678"
#define FILL200 FILL40 FILL40 FILL40 FILL40 FILL40

#define NONE_T CP_TS_NONE, 0
#define ABS(ms) CP_TS_ABS, INT64_C(ms)
#define NOYEAR(ms) CP_TS_NOYEAR, INT64_C(ms)
#define BOOT(ms) CP_TS_BOOT, INT64_C(ms)

static const frame_case cases[] = {
    /* ---- Slurm srun -l, stacked on the C++ rank prefix and DeepSpeed (synthlogs combined) */
    {"0: [rank0]:[2024-11-02 18:39:29,409] [INFO] [real_accelerator.py:219:get_accelerator] "
     "Setting ds_accelerator to cuda (auto detect)",
     0, U, "", U, 0, U, 'I', ABS(1730572769409), "Setting ds_accelerator to cuda (auto detect)"},
    {"0: [rank0]:[2024-11-02 18:41:04,066] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed "
     "info: version=0.14.2, git-hash=unknown, git-branch=unknown",
     0, U, "", U, 0, U, 'I', ABS(1730572864066),
     "DeepSpeed info: version=0.14.2, git-hash=unknown, git-branch=unknown"},
    {"0: [rank1]:[E1102 19:34:43.854222059 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught "
     "collective operation timeout: WorkNCCL(SeqNum=498794, OpType=_ALLGATHER_BASE)",
     1, U, "", U, 0, U, 'E', NOYEAR(26422483854),
     "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=498794, OpType=_ALLGATHER_BASE)"},
    {"1: [rank14]:node002:5117:6083 [6] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got "
     "completion from peer 10.141.1.1<51671> with error 12, opcode 0, len 0, vendor err 129",
     14, U, "node002", 5117, 1, 6, 'W', NONE_T,
     "NET/IB : Got completion from peer 10.141.1.1<51671> with error 12, opcode 0, len 0, vendor err 129"},
    {"0: [rank7]:  what():  [PG ID 0 PG GUID 0(default_pg) Rank 7] Process group watchdog thread "
     "terminated with exception",
     7, U, "", U, 0, U, 0, NONE_T,
     " what():  [PG ID 0 PG GUID 0(default_pg) Rank 7] Process group watchdog thread terminated with exception"},
    {"0: [1]:", U, U, "", U, 0, U, 0, NONE_T, "[1]:"},     /* torchelastic table entry */
    {"0: 3: not a second label", U, U, "", U, 0, U, 0, NONE_T, "3: not a second label"},
    {"node01: 0: [rank0]:x", 0, U, "node01", U, 0, U, 0, NONE_T, "x"},     /* built: pdsh over srun */
    {"0:   host      : node001", U, U, "", U, 0, U, 0, NONE_T, "  host      : node001"},
    /* built: srun pads the label to the widest task id */
    {" 3: [rank27]:Traceback (most recent call last):",
     27, U, "", U, 3, U, 0, NONE_T, "Traceback (most recent call last):"},
    {"12: W1102 18:39:23.380000 31225 torch/distributed/run.py:793] ",
     U, U, "", 31225, 12, U, 'W', NOYEAR(26419163380), ""},
    /* ---- Slurm's own messages */
    {"srun: error: gpu20-15: task 0: Out Of Memory",
     U, U, "gpu20-15", U, 0, U, 'E', NONE_T, "srun: error: gpu20-15: task 0: Out Of Memory"},
    {"srun: error: node002: task 1: Exited with exit code 1",
     U, U, "node002", U, 1, U, 'E', NONE_T, "srun: error: node002: task 1: Exited with exit code 1"},
    {"slurmstepd-gpu20-15: error: Detected 1 oom-kill event(s) in StepId=9411285.0. Some of your "
     "processes may have been killed by the cgroup out-of-memory handler.",
     U, U, "gpu20-15", U, U, U, 'E', NONE_T,
     "error: Detected 1 oom-kill event(s) in StepId=9411285.0. Some of your processes may have "
     "been killed by the cgroup out-of-memory handler."},
    {"slurmstepd: error: *** STEP 9411285.0 ON gpu20-15 CANCELLED AT 2022-05-17T17:58:10 ***",
     U, U, "gpu20-15", U, U, U, 'E', NONE_T,
     "slurmstepd: error: *** STEP 9411285.0 ON gpu20-15 CANCELLED AT 2022-05-17T17:58:10 ***"},
    {"srun: launch/slurm: _step_signal: Terminating StepId=9411285.0",
     U, U, "", U, U, U, 0, NONE_T, "srun: launch/slurm: _step_signal: Terminating StepId=9411285.0"},
    /* ---- pdsh / DeepSpeed multi-node host prefixes */
    {"192.168.13.81: [rank19]:[E808 10:31:07.406255799 ProcessGroupNCCL.cpp:1895] [PG ID 1 PG "
     "GUID 1 Rank 19] Process group watchdog thread terminated with exception: CUDA error: "
     "unspecified launch failure",
     19, U, "192.168.13.81", U, U, U, 'E', NOYEAR(18959467406),
     "Process group watchdog thread terminated with exception: CUDA error: unspecified launch failure"},
    {"192.168.12.21: {'loss': 0.2411, 'grad_norm': 0.3060550590848015, 'epoch': 0.4}",
     U, U, "192.168.12.21", U, U, U, 0, NONE_T, "{'loss': 0.2411, 'grad_norm': 0.3060550590848015, 'epoch': 0.4}"},
    /* built from REFERENCE 2.1 (pdsh host) + DeepSpeed launcher line */
    {"rdma-gpu-train-worker-0: [2023-03-03 02:15:23,176] [INFO] [runner.py:293:main] cmd = ...",
     U, U, "rdma-gpu-train-worker-0", U, U, U, 'I', ABS(1677809723176), "cmd = ..."},
    {"node017.cluster.local: hello", U, U, "node017", U, U, U, 0, NONE_T, "hello"},
    /* ---- MPI --tag-output (built from the Open MPI format) */
    {"[1,3]<stderr>:Traceback (most recent call last):",
     3, U, "", U, U, U, 0, NONE_T, "Traceback (most recent call last):"},
    {"[1,12]<stdout>:  File \"train.py\", line 3, in <module>",
     12, U, "", U, U, U, 0, NONE_T, "  File \"train.py\", line 3, in <module>"},
    /* built: a job id as long as a year, in front of a time */
    {"[2024,3]<stderr>:[2024-11-02 18:39:29,409] [INFO] x",
     3, U, "", U, U, U, 'I', ABS(1730572769409), "x"},
    /* ---- torchrun tee and the C++ / Python rank prefix */
    /* accelerate#1519: a --role of "gpu187:" makes "[gpu187:2]:", role then local rank */
    {"[gpu187:2]:torch.cuda.OutOfMemoryError: CUDA out of memory.",
     U, 2, "", U, U, U, 0, NONE_T, "torch.cuda.OutOfMemoryError: CUDA out of memory."},
    /* a role name is needed: this is a failure-table entry */
    {"[1]: time : 2026-11-29_16:19:33", U, U, "", U, U, U, 0, NONE_T, "[1]: time : 2026-11-29_16:19:33"},
    {"[default1]:  File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 423, in save",
     U, 1, "", U, U, U, 0, NONE_T,
     "  File \"/usr/lib/python3/dist-packages/torch/serialization.py\", line 423, in save"},
    {"[default0]:[rank12]:[E817 17:40:34.227531918 ProcessGroupNCCL.cpp:1515] [PG 0 (default_pg) "
     "Rank 12] Process group watchdog thread terminated with exception: CUDA error: uncorrectable "
     "ECC error encountered",
     12, 0, "", U, U, U, 'E', NOYEAR(19762834227),
     "Process group watchdog thread terminated with exception: CUDA error: uncorrectable ECC error encountered"},
    {"[trainer3]:step 5", U, 3, "", U, U, U, 0, NONE_T, "step 5"},      /* built: custom role */
    {"[default0]:WARNING: Logging before InitGoogleLogging() is written to STDERR",
     U, 0, "", U, U, U, 'W', NONE_T, "WARNING: Logging before InitGoogleLogging() is written to STDERR"},
    {"[worker12]:[rank44]: Traceback (most recent call last):",
     44, 12, "", U, U, U, 0, NONE_T, "Traceback (most recent call last):"},
    {"[rank1]:   File \"/usr/local/lib/python3.11/dist-packages/deepspeed/utils/nvtx.py\", line 18",
     1, U, "", U, U, U, 0, NONE_T,
     "  File \"/usr/local/lib/python3.11/dist-packages/deepspeed/utils/nvtx.py\", line 18"},
    {"[rank3]:", 3, U, "", U, U, U, 0, NONE_T, ""},
    {"[rank1]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank 1] Timeout at NCCL work: 6075, last "
     "enqueued NCCL work: 6139, last completed NCCL work: 6074.",
     1, U, "", U, U, U, 'E', NONE_T,
     "Timeout at NCCL work: 6075, last enqueued NCCL work: 6139, last completed NCCL work: 6074."},
    {"[rank0]:[E515 18:36:47.341808597 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective "
     "operation timeout: WorkNCCL(SeqNum=241, OpType=ALLREDUCE, NumelIn=6, NumelOut=6, "
     "Timeout(ms)=600000) ran for 600086 milliseconds before timing out.",
     0, U, "", U, U, U, 'E', NOYEAR(11644607341),
     "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=241, OpType=ALLREDUCE, "
     "NumelIn=6, NumelOut=6, Timeout(ms)=600000) ran for 600086 milliseconds before timing out."},
    {"[rank5]:[E1026 04:01:29.465823296 ProcessGroupNCCL.cpp:2241] [PG ID 1 PG GUID 1 Rank 5]  "
     "failure detected by watchdog at work sequence id: 55485",
     5, U, "", U, U, U, 'E', NOYEAR(25761689465),
     " failure detected by watchdog at work sequence id: 55485"},
    {"[rank0]:[E515 18:36:47.34", 0, U, "", U, U, U, 0, NONE_T, "[E515 18:36:47.34"},  /* cut */
    /* ---- glog headers */
    {"[W socket.cpp:464] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - "
     "Address already in use).",
     U, U, "", U, U, U, 'W', NONE_T,
     "[c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use)."},
    {"E0517 08:24:03.805000 140617718325696 torch/distributed/elastic/multiprocessing/api.py:826] "
     "failed (exitcode: -6) local_rank: 0 (pid: 2385923) of binary: /usr/bin/python",
     U, U, "", U, U, U, 'E', NOYEAR(11780643805),      /* a thread id, not a pid */
     "failed (exitcode: -6) local_rank: 0 (pid: 2385923) of binary: /usr/bin/python"},
    {"W1026 03:51:31.222000 2521679 site-packages/torch/distributed/elastic/multiprocessing/api.py:908] "
     "Sending process 2521733 closing signal SIGTERM",
     U, U, "", 2521679, U, U, 'W', NOYEAR(25761091222),
     "Sending process 2521733 closing signal SIGTERM"},
    {"W20261129 16:23:39.912350 13558 socket.cpp:426] [c10d] The server socket has failed to bind "
     "to [::]:29508 (errno: 98 - Address already in use).",
     U, U, "", 13558, U, U, 'W', ABS(1795969419912),
     "[c10d] The server socket has failed to bind to [::]:29508 (errno: 98 - Address already in use)."},
    {"[W1102 18:41:09.162156343 reducer.cpp:1400] Warning: find_unused_parameters=True was "
     "specified in DDP constructor",
     U, U, "", U, U, U, 'W', NOYEAR(26419269162),
     "Warning: find_unused_parameters=True was specified in DDP constructor"},
    /* ---- NCCL */
    {"node001:31242:31242 [3] NCCL INFO Channel 00/0 : 3[3] -> 4[4] via P2P/CUMEM",
     U, U, "node001", 31242, U, 3, 'I', NONE_T, "Channel 00/0 : 3[3] -> 4[4] via P2P/CUMEM"},
    /* "[rank0]:" with its "[" lost by a paste that starts one character
     * late (torchtitan#3065); a word "rank" elsewhere is no prefix */
    {"rank0]:Traceback (most recent call last):", 0, U, "", U, U, U, 0, NONE_T,
     "Traceback (most recent call last):"},
    {"ranking]: done", U, U, "", U, U, U, 0, NONE_T, "ranking]: done"},
    /* MPICH's -prepend-rank in front of an NCCL line (nccl#302's paste); a
     * bracketed number before anything else is no rank */
    {"[56] crow-ib-b-7:7240:7401 [0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed",
     56, U, "crow-ib-b-7", 7240, U, 0, 'W', NONE_T, "Call to ibv_modify_qp failed"},
    {"[3] loss went up", U, U, "", U, U, U, 0, NONE_T, "[3] loss went up"},
    {"node002:5111:5307 [0] graph/xml.cc:71 NCCL WARN Could not find real path of "
     "/sys/class/net/docker0/device",
     U, U, "node002", 5111, U, 0, 'W', NONE_T,
     "Could not find real path of /sys/class/net/docker0/device"},
    /* built from REFERENCE 3: timestamped WARN, "(func)" form, old no-host forms */
    {"[2026-05-05 06:16:47] node-01:189884:189884 [3] plugin/net.cc:821 NCCL WARN NET/IB : "
     "Got completion from peer 10.0.0.2<45123> with status=12",
     U, U, "node-01", 189884, U, 3, 'W', ABS(1777961807000),
     "NET/IB : Got completion from peer 10.0.0.2<45123> with status=12"},
    {"gpu-a-7:1234:1300 [2] transport/net_ib.cc:1295 (ncclIbTest) NCCL WARN NET/IB : error",
     U, U, "gpu-a-7", 1234, U, 2, 'W', NONE_T, "NET/IB : error"},
    {"[0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.1.1.1<3> with error 4",
     U, U, "", U, U, 0, 'W', NONE_T, "NET/IB : Got completion from peer 10.1.1.1<3> with error 4"},
    {"include/shm.h:28 NCCL WARN Call to posix_fallocate failed: No space left on device",
     U, U, "", U, U, U, 'W', NONE_T, "Call to posix_fallocate failed: No space left on device"},
    {"node001:31242:31242 [3] NCCL INFO transport/net.cc:1302 -> 6",
     U, U, "node001", 31242, U, 3, 'I', NONE_T, "transport/net.cc:1302 -> 6"},
    /* ---- DeepSpeed */
    {"[2023-04-07 13:08:55,468] [INFO] [utils.py:829:see_memory_usage] Before initializing optimizer states",
     U, U, "", U, U, U, 'I', ABS(1680872935468), "Before initializing optimizer states"},
    {"[2023-04-07 13:09:33,220] [ERROR] [launch.py:324:sigkill_handler] ['/usr/bin/python3', '-u']",
     U, U, "", U, U, U, 'E', ABS(1680872973220), "['/usr/bin/python3', '-u']"},
    /* REFERENCE 2.1: older torchelastic through DeepSpeed's logger */
    {"[2024-05-08 08:47:31,877] torch.distributed.elastic.multiprocessing.api: [ERROR] failed "
     "(exitcode: 1) local_rank: 0 (pid: 12) of binary: /usr/bin/python",
     U, U, "", U, U, U, 'E', ABS(1715158051877),
     "failed (exitcode: 1) local_rank: 0 (pid: 12) of binary: /usr/bin/python"},
    /* ---- Python logging shapes */
    {"2026-11-29 16:19:31,565 [rank0] INFO torch.distributed.distributed_c10d: Added key: "
     "store_based_barrier_key:1 to store for rank: 0",
     0, U, "", U, U, U, 'I', ABS(1795969171565), "Added key: store_based_barrier_key:1 to store for rank: 0"},
    {"2026-11-29 16:19:32,295 [rank2] ERROR train: training failed",
     2, U, "", U, U, U, 'E', ABS(1795969172295), "train: training failed"},
    {"[2026-11-29 16:19:51,330][INFO][rank 0/4] Added key: store_based_barrier_key:1 to store for rank: 0",
     0, U, "", U, U, U, 'I', ABS(1795969191330), "Added key: store_based_barrier_key:1 to store for rank: 0"},
    {"[default0]:2026-11-29 16:20:43,886 | INFO | rank 0 | Added key: store_based_barrier_key:1 "
     "to store for rank: 0",
     0, 0, "", U, U, U, 'I', ABS(1795969243886), "Added key: store_based_barrier_key:1 to store for rank: 0"},
    {"[default1]:2026-11-29 16:21:33,914 [RANK 1] INFO: Rank 1: Completed store-based barrier for "
     "key:store_based_barrier_key:1 with 4 nodes.",
     1, 1, "", U, U, U, 'I', ABS(1795969293914),
     "Rank 1: Completed store-based barrier for key:store_based_barrier_key:1 with 4 nodes."},
    {"2025-10-31 03:11:02,478 - SimpleTuner - INFO - [rank0]: Traceback (most recent call last): (RANK 4)",
     0, U, "", U, U, U, 'I', ABS(1761880262478), "Traceback (most recent call last): (RANK 4)"},
    {"2024-11-02 18:39:29,409 - INFO - __main__ - Initializing process group (backend=nccl, "
     "init_method=env://, world_size=16, rank=0, local_rank=0)",
     U, U, "", U, U, U, 'I', ABS(1730572769409),
     "Initializing process group (backend=nccl, init_method=env://, world_size=16, rank=0, local_rank=0)"},
    /* real-07: a rank=N field in the logging header (tests/fixtures/real) */
    {"node017: [2026-11-29 17:55:20,350] rank=3 INFO step 1 loss 1.4460",
     3, U, "node017", U, U, U, 0, ABS(1795974920350),
     "rank=3 INFO step 1 loss 1.4460"},
    {"[titan] 2024-11-02 18:39:29,409 - root - INFO - Starting job: Llama 3 8B training",
     U, U, "", U, U, U, 'I', ABS(1730572769409), "Starting job: Llama 3 8B training"},
    {"WARNING:__main__:", U, U, "", U, U, U, 'W', NONE_T, ""},
    {"WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 12709 closing signal SIGTERM",
     U, U, "", U, U, U, 'W', NONE_T, "Sending process 12709 closing signal SIGTERM"},
    {"ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 1 "
     "(pid: 12710) of binary: /usr/bin/python3",
     U, U, "", U, U, U, 'E', NONE_T, "failed (exitcode: 1) local_rank: 1 (pid: 12710) of binary: /usr/bin/python3"},
    {"INFO:root:msg", U, U, "", U, U, U, 'I', NONE_T, "msg"},
    /* built: "%(levelname)-8s" padding, loguru's "name:func:line -" kept as text */
    {"2026-11-29 16:19:31,565 WARNING  torch.distributed.run: x", U, U, "", U, U, U, 'W',
     ABS(1795969171565), "x"},
    {"2026-11-29 16:19:31.565 | ERROR    | train:main:12 - boom", U, U, "", U, U, U, 'E',
     ABS(1795969171565), "train:main:12 - boom"},
    {"2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] "
     "2023-04-29 06:01:12 ERROR [__main__] main failed",
     U, U, "", 28936, U, U, 'E', ABS(1682748072977), "main failed"},
    {"2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160]   "
     "File \"/opt/conda/lib/python3.7/site-packages/torch/serialization.py\", line 379, in save",
     U, U, "", 28936, U, U, 0, ABS(1682748072977),
     "  File \"/opt/conda/lib/python3.7/site-packages/torch/serialization.py\", line 379, in save"},
    /* ---- ISO 8601 (collector timestamps), stacked */
    {"2026-02-18T10:28:25.497Z 2026-02-18 10:28:25,496 - root - INFO - Saving latest checkpoint model",
     U, U, "", U, U, U, 'I', ABS(1771410505497), "Saving latest checkpoint model"},
    {"2026-02-18T10:48:25.681Z [rank7]:[E218 10:48:25.033625188 ProcessGroupNCCL.cpp:632] [Rank 7] "
     "Watchdog caught collective operation timeout",
     7, U, "", U, U, U, 'E', ABS(1771411705681), "Watchdog caught collective operation timeout"},
    /* nccl#230: a collector's time ended by a colon, then Open MPI's tag and NCCL's prefix */
    {"2019-06-02T16:13:44.884Z: [1,12]<stdout>:container-e275-01-000057:815:864 [0] transport/net_ib.cu:80 "
     "NCCL WARN NET/IB : Got async event : local catastrophic error",
     12, U, "container-e275-01-000057", 815, U, 0, 'W', ABS(1559492024884),
     "NET/IB : Got async event : local catastrophic error"},
    /* nccl#957: Open MPI's --timestamp-output (a ctime) right before its tag */
    {"Fri Aug 11 12:31:45 2023[1,0]<stdout>:tomte401:1850301:1881341 [0] transport.cc:154 NCCL WARN Cuda "
     "failure 'invalid argument'",
     0, U, "tomte401", 1850301, U, 0, 'W', ABS(1691757105000), "Cuda failure 'invalid argument'"},
    /* ---- kernel logs: journald, syslog, dmesg, dmesg -T (built on REFERENCE 4 lines) */
    {"2024-05-18T19:02:39.123456+02:00 gpu-node-7 kernel: NVRM: Xid (PCI:0000:9b:00): 119, "
     "pid=2024380, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP!",
     U, U, "gpu-node-7", U, U, U, 0, ABS(1716051759123),
     "NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi, Timeout after 6s of waiting "
     "for RPC response from GPU4 GSP!"},
    {"May 18 19:02:39 node017 kernel: NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', "
     "name=<unknown>, GPU has fallen off the bus.",
     U, U, "node017", U, U, U, 0, NOYEAR(11905359000),
     "NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."},
    {"May  8 09:02:39 trainhost python3[28936]: Killed", U, U, "trainhost", 28936, U, U, 0,
     NOYEAR(11005359000), "Killed"},
    {"[171167.621162] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi",
     U, U, "", U, U, U, 0, BOOT(171167621), "NVRM: Xid (PCI:0000:9b:00): 119, pid=2024380, name=nvidia-smi"},
    {"[    5.123456] Linux version 5.15.0", U, U, "", U, U, U, 0, BOOT(5123), "Linux version 5.15.0"},
    {"[Sun Nov 29 16:19:56 2026] Memory cgroup out of memory: Killed process 12850 (python3)",
     U, U, "", U, U, U, 0, ABS(1795969196000), "Memory cgroup out of memory: Killed process 12850 (python3)"},
    {"[Sat Nov  2 18:46:52 2024] NVRM: Xid (PCI:0000:ba:00): 79, pid=5117, name=python3, GPU has "
     "fallen off the bus.",
     U, U, "", U, U, U, 0, ABS(1730573212000),
     "NVRM: Xid (PCI:0000:ba:00): 79, pid=5117, name=python3, GPU has fallen off the bus."},
    {"[Sat Nov  2 18:52:24 2024] INFO: task python3:5117 blocked for more than 122 seconds.",
     U, U, "", U, U, U, 0, ABS(1730573544000), "INFO: task python3:5117 blocked for more than 122 seconds."},
    {"[Sun Nov 29 16:19:56 2026]  <TASK>", U, U, "", U, U, U, 0, ABS(1795969196000), " <TASK>"},
    /* ---- in-body rank tags */
    {"Process group watchdog thread terminated with exception: [Rank 1] Watchdog caught collective "
     "operation timeout",
     1, U, "", U, U, U, 0, NONE_T,
     "Process group watchdog thread terminated with exception: [Rank 1] Watchdog caught collective operation timeout"},
    {"  what():  [PG ID 1 PG GUID 1 Rank 4] Process group watchdog thread terminated",
     4, U, "", U, U, U, 0, NONE_T, "  what():  [PG ID 1 PG GUID 1 Rank 4] Process group watchdog thread terminated"},
    {"step 40 | rank 2 | loss 1.5", 2, U, "", U, U, U, 0, NONE_T, "step 40 | rank 2 | loss 1.5"},
    {"rank 2 | loss", 2, U, "", U, U, U, 0, NONE_T, "rank 2 | loss"},
    {"x | prank 2 | loss", U, U, "", U, U, U, 0, NONE_T, "x | prank 2 | loss"},
    {"x | frank 2 |", U, U, "", U, U, U, 0, NONE_T, "x | frank 2 |"},
    /* a local rank is not the global one */
    {"step 40 | local_rank 2 | loss 1.5", U, U, "", U, U, U, 0, NONE_T, "step 40 | local_rank 2 | loss 1.5"},
    {"a | rank 12 |", 12, U, "", U, U, U, 0, NONE_T, "a | rank 12 |"},
    {"[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 144] Timeout at NCCL work: 1",
     144, U, "", U, U, U, 'E', NONE_T, "Timeout at NCCL work: 1"},
    /* built: every body tag spells "rank"; lines without it skip the scan */
    {"[2024-12-21 02:31:04,962] [INFO] [train.py:287:train] step 7/40000 | loss 2.3873 | lr "
     "1.312e-06 | grad_norm 2.609 | tokens/s 2816 | TFLOPs 368.9 | mem 46.06GB/50.35GB",
     U, U, "", U, U, U, 'I', ABS(1734748264962),
     "step 7/40000 | loss 2.3873 | lr 1.312e-06 | grad_norm 2.609 | tokens/s 2816 | TFLOPs 368.9 | "
     "mem 46.06GB/50.35GB"},
    /* k2's recipes (icefall, ZipVoice) under DDP: "(rank/world)" after the
     * logging fields (k2-fsa/icefall#1463); not without a level and a
     * [file:line] field before it */
    {"2024-01-14 01:03:00,826 WARNING [train.py:1057] (2/4) Grad scale is small: 1.29e-26",
     2, U, "", U, U, U, 'W', ABS(1705194180826), "Grad scale is small: 1.29e-26"},
    {"2024-01-14 01:03:00,826 (2/4) x", U, U, "", U, U, U, 0, ABS(1705194180826), "(2/4) x"},
    /* "[rank/world]" glued to the time's bracket (NVIDIA/nccl#1618, as
     * pasted); not ninja's "[3/8] " counter nor a rank past the world */
    {"[0604/1024][2025-02-16 22:31:34,422] [misc/socket.cc:586] [s12gn3064:pid=3942408] NCCL WARN "
     "socketPollConnect poll() returned 1, no POLLOUT events",
     604, U, "", U, U, U, 0, ABS(1739745094422),
     "[misc/socket.cc:586] [s12gn3064:pid=3942408] NCCL WARN socketPollConnect poll() returned 1, no POLLOUT events"},
    {"[3/8] Compiling C object src/culprit.p/main.c.o", U, U, "", U, U, U, 0, NONE_T,
     "[3/8] Compiling C object src/culprit.p/main.c.o"},
    {"[8/8][x] y", U, U, "", U, U, U, 0, NONE_T, "[8/8][x] y"},
    {"2024-01-14 01:03:00,826 INFO (1/3) Downloading", U, U, "", U, U, U, 'I', ABS(1705194180826),
     "(1/3) Downloading"},
    {"step 40 | RANK 2 | loss", 2, U, "", U, U, U, 0, NONE_T, "step 40 | RANK 2 | loss"},
    {"step 40 | Rank 2 | loss", 2, U, "", U, U, U, 0, NONE_T, "step 40 | Rank 2 | loss"},
    {"call(rank 2 | x)", 2, U, "", U, U, U, 0, NONE_T, "call(rank 2 | x)"},
    {"watchdog: [RANK 5] x", 5, U, "", U, U, U, 0, NONE_T, "watchdog: [RANK 5] x"},
    {"watchdog: [rAnK 6] x", 6, U, "", U, U, U, 0, NONE_T, "watchdog: [rAnK 6] x"},
    {"failed (see [Rank 3])", 3, U, "", U, U, U, 0, NONE_T, "failed (see [Rank 3])"},
    {"watchdog: [PG ID 1 PG GUID 1(default_pg) Rank 3] timeout",
     3, U, "", U, U, U, 0, NONE_T, "watchdog: [PG ID 1 PG GUID 1(default_pg) Rank 3] timeout"},
    {"x [Rank -1] y [Rank 3]", 3, U, "", U, U, U, 0, NONE_T, "x [Rank -1] y [Rank 3]"},
    /* a direct tag beats a sub-group one; "rank N |" beats an earlier tag */
    {"x [PG ID 1 PG GUID 1 Rank 19] y [Rank 4]", 4, U, "", U, U, U, 0, NONE_T,
     "x [PG ID 1 PG GUID 1 Rank 19] y [Rank 4]"},
    {"x [Rank 3] y | rank 2 | z", 2, U, "", U, U, U, 0, NONE_T, "x [Rank 3] y | rank 2 | z"},
    /* "rank=N" is a header field: weaker than a tag, not after '(' or a prefix */
    {"rank=3 INFO step 1", 3, U, "", U, U, U, 0, NONE_T, "rank=3 INFO step 1"},
    {"RANK=4 INFO step 1", 4, U, "", U, U, U, 0, NONE_T, "RANK=4 INFO step 1"},
    {"local_rank=3 INFO step 1", U, U, "", U, U, U, 0, NONE_T, "local_rank=3 INFO step 1"},
    {"frank=3 INFO step 1", U, U, "", U, U, U, 0, NONE_T, "frank=3 INFO step 1"},
    {"init (rank=3)", U, U, "", U, U, U, 0, NONE_T, "init (rank=3)"},
    {"rank=2 x [PG ID 1 PG GUID 1 Rank 19]", 2, U, "", U, U, U, 0, NONE_T,
     "rank=2 x [PG ID 1 PG GUID 1 Rank 19]"},
    {"rank=2 x [Rank 5]", 5, U, "", U, U, U, 0, NONE_T, "rank=2 x [Rank 5]"},
    {FILL40 "1234567 rank=3", U, U, "", U, U, U, 0, NONE_T, FILL40 "1234567 rank=3"},
    /* "rank N:" opening the message names the printer; not without the
     * colon ("rank 3 received ..." may speak of another), nor mid-text */
    {"[2026-12-02 08:08:14,880] [ERROR] rank 2: data shard not found, cannot continue", 2, U, "", U, U, U, 'E',
     ABS(1796198894880), "rank 2: data shard not found, cannot continue"},
    {"rank 3 received the weights", U, U, "", U, U, U, 0, NONE_T, "rank 3 received the weights"},
    {"waiting for rank 3: timeout", U, U, "", U, U, U, 0, NONE_T, "waiting for rank 3: timeout"},
    /* only tags that open in the first 200 bytes of the body count */
    {FILL200 "[Rank 3] x", U, U, "", U, U, U, 0, NONE_T, FILL200 "[Rank 3] x"},
    {FILL200 "rank 2 | x", U, U, "", U, U, U, 0, NONE_T, FILL200 "rank 2 | x"},
    {FILL199 "[Rank 3] x", 3, U, "", U, U, U, 0, NONE_T, FILL199 "[Rank 3] x"},
    {FILL199 "[PG ID 1 PG GUID 1(default_pg) Rank 3] x", 3, U, "", U, U, U, 0, NONE_T,
     FILL199 "[PG ID 1 PG GUID 1(default_pg) Rank 3] x"},
    /* ---- negatives: text that only looks like a prefix */
    {"RuntimeError: CUDA error: uncorrectable ECC error encountered",
     U, U, "", U, U, U, 0, NONE_T, "RuntimeError: CUDA error: uncorrectable ECC error encountered"},
    {"torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
     U, U, "", U, U, U, 0, NONE_T, "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "},
    {"Traceback (most recent call last):", U, U, "", U, U, U, 0, NONE_T, "Traceback (most recent call last):"},
    {"WARNING: Logging before InitGoogleLogging() is written to STDERR",
     U, U, "", U, U, U, 'W', NONE_T, "WARNING: Logging before InitGoogleLogging() is written to STDERR"},
    {"ERROR: something", U, U, "", U, U, U, 'E', NONE_T, "ERROR: something"},
    {"Error: something", U, U, "", U, U, U, 0, NONE_T, "Error: something"},
    {"python3: can't open file '/workspace/train.py': [Errno 2] No such file or directory",
     U, U, "", U, U, U, 0, NONE_T, "python3: can't open file '/workspace/train.py': [Errno 2] No such file or directory"},
    {"socket.timeout: timed out", U, U, "", U, U, U, 0, NONE_T, "socket.timeout: timed out"},
    {"fp16: enabled", U, U, "", U, U, U, 0, NONE_T, "fp16: enabled"},
    {"ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
     U, U, "", U, U, U, 0, NONE_T,
     "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."},
    {"12:34:56 something", U, U, "", U, U, U, 0, NONE_T, "12:34:56 something"},
    {"  time      : 2026-11-29_16:19:33", U, U, "", U, U, U, 0, NONE_T, "  time      : 2026-11-29_16:19:33"},
    {"  rank      : 2 (local_rank: 2)", U, U, "", U, U, U, 0, NONE_T, "  rank      : 2 (local_rank: 2)"},
    /* no prefix to peel, but the message names its printer (PyTorch prints
     * it on each rank about itself): the rank, with the body whole */
    {"Rank 1: Completed store-based barrier", 1, U, "", U, U, U, 0, NONE_T, "Rank 1: Completed store-based barrier"},
    {"Rank: 0 partition count [1] and sizes[(6049711186, False)]",
     U, U, "", U, U, U, 0, NONE_T, "Rank: 0 partition count [1] and sizes[(6049711186, False)]"},
    {"[rank7]: Traceback (most recent call last): (RANK 7)", 7, U, "", U, U, U, 0, NONE_T,
     "Traceback (most recent call last): (RANK 7)"},
    {"Traceback (most recent call last): (RANK 4)", U, U, "", U, U, U, 0, NONE_T,
     "Traceback (most recent call last): (RANK 4)"},
    {"[2/2] c++ flatten_unflatten.o -shared", U, U, "", U, U, U, 0, NONE_T, "[2/2] c++ flatten_unflatten.o -shared"},
    {"[c10d] The server socket has failed", U, U, "", U, U, U, 0, NONE_T, "[c10d] The server socket has failed"},
    {"[7] finished ALLREDUCE", U, U, "", U, U, U, 0, NONE_T, "[7] finished ALLREDUCE"},
    {"Train:   8%|  | 40/500 [15:18<2:32:54, 19.94s/it]", U, U, "", U, U, U, 0, NONE_T,
     "Train:   8%|  | 40/500 [15:18<2:32:54, 19.94s/it]"},
    /* a tqdm bar with the next output glued to it (field li-04, hb-01, the
     * bars shortened): the glued line's prefixes are read */
    {" 94%|\xe2\x96\x88\xe2\x96\x88\xe2\x96\x89   | 837/888 [9:42:50<34:08, 40.17s/it][rank7]:[E "
     "ProcessGroupNCCL.cpp:1182] [Rank 7] NCCL watchdog thread terminated with exception: CUDA error: an "
     "illegal memory access was encountered",
     7, U, "", U, U, U, 'E', NONE_T,
     "NCCL watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered"},
    {"  0%|\xe2\x96\x8b     | 98/24128 [00:40<2:40:10,  2.50it/s][2021-11-27 00:36:55,194] [INFO] "
     "[stage2.py:1628:step] [deepscale] OVERFLOW! Rank 0 Skipping step.",
     U, U, "", U, U, U, 'I', ABS(1637973415194), "[deepscale] OVERFLOW! Rank 0 Skipping step."},
    {"Epoch 1:  45%|####5     | 45/100 [00:10<00:12,  4.40it/s, loss=2.31, v_num=0]Traceback (most recent "
     "call last):",
     U, U, "", U, U, U, 0, NONE_T, "Traceback (most recent call last):"},
    /* not a bar: no "elapsed<remaining" statistics after it */
    {"| 50%| 3/6 [ok] done", U, U, "", U, U, U, 0, NONE_T, "| 50%| 3/6 [ok] done"},
    {"W102", U, U, "", U, U, U, 0, NONE_T, "W102"},
    {"2026-11-29 is a date", U, U, "", U, U, U, 0, NONE_T, "2026-11-29 is a date"},
    {"2026-13-29 16:19:31,565 bad month", U, U, "", U, U, U, 0, NONE_T, "2026-13-29 16:19:31,565 bad month"},
    {"", U, U, "", U, U, U, 0, NONE_T, ""},
};

static const char *kind_name(cp_ts_kind k)
{
    switch (k) {
    case CP_TS_ABS: return "ABS";
    case CP_TS_NOYEAR: return "NOYEAR";
    case CP_TS_BOOT: return "BOOT";
    default: return "NONE";
    }
}

/* Runs cp_frame_parse on a copy of exactly `len` bytes (no terminator), so
 * that ASan reports any read past the end. */
static size_t parse_exact(const char *line, size_t len, cp_origin *o)
{
    char *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    memcpy(buf, line, len);
    size_t off = cp_frame_parse(buf, len, o);
    free(buf);
    return off;
}

static void test_frame_cases(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const frame_case *c = &cases[i];
        cp_origin o;
        cp_origin_init(&o);
        size_t len = strlen(c->line);
        size_t off = parse_exact(c->line, len, &o);
        const char *body = off <= len ? c->line + off : "(offset past end)";
        if (o.rank != c->rank || o.local_rank != c->local_rank || strcmp(o.host, c->host) != 0 ||
            o.pid != c->pid || o.task != c->task || o.cuda_dev != c->cuda_dev ||
            o.level != c->level || o.time.kind != c->kind ||
            (c->kind != CP_TS_NONE && o.time.ms != c->ms) || off > len || strcmp(body, c->body) != 0) {
            print_error("case %zu: %s\n"
                        "  want rank=%d local=%d host='%s' pid=%d task=%d dev=%d level=%c %s %" PRId64 "\n"
                        "       body='%s'\n"
                        "  got  rank=%d local=%d host='%s' pid=%d task=%d dev=%d level=%c %s %" PRId64 "\n"
                        "       body='%s'\n",
                        i, c->line, c->rank, c->local_rank, c->host, c->pid, c->task, c->cuda_dev,
                        c->level ? c->level : '-', kind_name(c->kind), c->ms, c->body, o.rank,
                        o.local_rank, o.host, o.pid, o.task, o.cuda_dev, o.level ? o.level : '-',
                        kind_name(o.time.kind), o.time.ms, body);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

/* Line endings are not part of the line; fields not found stay as given. */
static void test_frame_keeps_given_fields(void **state)
{
    (void)state;
    cp_origin o;
    cp_origin_init(&o);
    o.rank = 27;
    o.local_rank = 3;
    strcpy(o.host, "node003");
    const char *l = "[2026-11-29 16:19:51,330][ERROR][rank 5/8] boom\r\n";
    size_t off = cp_frame_parse(l, strlen(l), &o);
    assert_string_equal(l + off, "boom\r\n");
    assert_int_equal(o.rank, 5);            /* found: overwritten */
    assert_int_equal(o.local_rank, 3);      /* not found: kept */
    assert_string_equal(o.host, "node003");
    assert_int_equal(o.level, 'E');
    assert_int_equal(o.pid, -1);

    /* a NULL origin is allowed: only the offset is wanted */
    assert_int_equal(cp_frame_parse("[rank3]:x", 9, NULL), 8);
    /* a line of only a newline */
    cp_origin_init(&o);
    assert_int_equal(cp_frame_parse("\n", 1, &o), 0);
    assert_int_equal(o.time.kind, CP_TS_NONE);
}

/* A host longer than the field is cut, never overflowed. */
static void test_frame_long_host(void **state)
{
    (void)state;
    char line[256];
    memset(line, 'a', 100);
    memcpy(line + 100, ":1:2 [0] NCCL INFO hi", 21);
    cp_origin o;
    cp_origin_init(&o);
    size_t off = parse_exact(line, 121, &o);
    assert_int_equal(off, 119);
    assert_int_equal(strlen(o.host), CP_HOST_MAX - 1);
    assert_int_equal(o.pid, 1);
}

typedef struct time_case {
    const char *text;
    size_t consumed;            /* 0: not a timestamp */
    cp_ts_kind kind;
    int64_t ms;
} time_case;

static const time_case time_cases[] = {
    {"2026-02-18T10:28:25.497Z rest", 24, ABS(1771410505497)},
    {"2024-05-18T19:02:39.123456+02:00 host", 32, ABS(1716051759123)},
    {"2024-05-18T19:02:39-07:30", 25, ABS(1716085959000)},
    {"2024-05-18T19:02:39+0530", 24, ABS(1716039159000)},
    {"2024-05-18T19:02:39+05 x", 22, ABS(1716040959000)},
    {"2024-05-18T19:02:39+053", 19, ABS(1716058959000)},     /* not an offset: naive */
    {"2024/05/18 19:02:39", 19, ABS(1716058959000)},
    {"2026-11-29 16:19:31,565 [rank0]", 23, ABS(1795969171565)},
    {"2023-04-29 06:01:12.977", 23, ABS(1682748072977)},
    {"2026-11-29_16:19:33", 19, ABS(1795969173000)},           /* torchelastic */
    {"2022-05-17T17:58:10 ***", 19, ABS(1652810290000)},
    {"1970-01-01T00:00:00Z", 20, ABS(0)},
    {"1969-12-31T23:59:59Z", 20, ABS(-1000)},
    {"2024-02-29 23:59:59.9999", 24, ABS(1709251199999)},      /* extra digits truncated */
    {"2000-03-01 00:00:00", 19, ABS(951868800000)},
    {"1900-03-01 00:00:00", 19, ABS(-2203891200000)},
    {"2100-12-31 23:59:59", 19, ABS(4133980799000)},
    {"[2024-11-02 18:39:29,409] [INFO]", 25, ABS(1730572769409)},
    {"1206 18:44:12.715298746 x", 23, NOYEAR(29357052715)},   /* glog MMDD */
    {"20261129 16:23:39.912350", 24, ABS(1795969419912)},     /* glog with year */
    {"Dec 31 23:59:59 host", 15, NOYEAR(31535999000)},
    {"May  8 09:02:39", 15, NOYEAR(11005359000)},
    {"[Sun Nov 29 16:19:56 2026]", 26, ABS(1795969196000)},
    {"Thu Feb 29 12:00:00 2024", 24, ABS(1709208000000)},
    {"Mon Mar  1 00:00:01 2027", 24, ABS(1803859201000)},
    {"[171167.621162] NVRM", 15, BOOT(171167621)},
    {"[    5.1] x", 9, BOOT(5100)},
    {"171167.621162", 0, NONE_T},                 /* seconds since boot only in brackets */
    {"2026-13-01 00:00:00", 0, NONE_T},
    {"2026-11-29 24:00:00", 0, NONE_T},
    {"2026-11-29 16:61:00", 0, NONE_T},
    {"2026-11-29", 0, NONE_T},
    {"2026-11-29 16:19", 0, NONE_T},
    {"2026-11-29 16:19:311", 0, NONE_T},
    {"12:34:56", 0, NONE_T},
    {"Foo 12 12:00:00", 0, NONE_T},
    {"[2026-11-29 16:19:31", 0, NONE_T},
    {"[]", 0, NONE_T},
    {"", 0, NONE_T},
};

static void test_time_parse(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof time_cases / sizeof time_cases[0]; i++) {
        const time_case *c = &time_cases[i];
        cp_time t = {12345, CP_TS_BOOT};
        size_t len = strlen(c->text);
        char *buf = malloc(len ? len : 1);
        assert_non_null(buf);
        memcpy(buf, c->text, len);
        size_t k = cp_time_parse(buf, len, &t);
        free(buf);
        int ok = k == c->consumed &&
                 (k == 0 ? (t.ms == 12345 && t.kind == CP_TS_BOOT)     /* untouched */
                         : (t.kind == c->kind && t.ms == c->ms));
        if (!ok) {
            print_error("time case %zu '%s': want %zu %s %" PRId64 ", got %zu %s %" PRId64 "\n", i,
                        c->text, c->consumed, kind_name(c->kind), c->ms, k, kind_name(t.kind), t.ms);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
}

/* The parser remembers the last "YYYY-MM-DD HH:MM" it read (per thread):
 * in this sequence each time follows one that shares some or all of those
 * bytes, so the order of the rows matters. */
static const time_case memo_cases[] = {
    {"2024-12-21 02:33:33,278", 23, ABS(1734748413278)},
    {"2024-12-21 02:33:59", 19, ABS(1734748439000)},            /* same minute */
    {"2024-12-22 02:33:33,278", 23, ABS(1734834813278)},        /* next day */
    {"2024-12-22 02:33:7x", 0, NONE_T},                         /* same minute, bad seconds */
    {"2024-12-22 02:33:61", 0, NONE_T},
    {"2024-12-22 02:33:330", 0, NONE_T},
    {"2024-12-22 02:33", 0, NONE_T},                            /* the minute alone */
    {"2024-12-22 02:33:33+01:00", 25, ABS(1734831213000)},
    {"2024/12/22 02:33:33", 19, ABS(1734834813000)},
    {"2024-12-22T02:33:33Z", 20, ABS(1734834813000)},
    {"2024-12-22 02:33:33", 19, ABS(1734834813000)},
    {"2024-13-22 02:33:33", 0, NONE_T},                         /* one digit off */
    {"2024-12-22 02:60:33", 0, NONE_T},
    {"2024-12-22-02:33:33", 0, NONE_T},
    {"2024-12-31 23:59:00", 19, ABS(1735689540000)},
    {"2025-01-01 00:00:01", 19, ABS(1735689601000)},            /* new year */
    {"2024-12-21 02:33:33,278", 23, ABS(1734748413278)},        /* back again */
};

static void test_time_memo(void **state)
{
    (void)state;
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof memo_cases / sizeof memo_cases[0]; i++) {
            const time_case *c = &memo_cases[i];
            cp_time t = {12345, CP_TS_BOOT};
            size_t k = cp_time_parse(c->text, strlen(c->text), &t);
            if (k != c->consumed || (k && (t.kind != c->kind || t.ms != c->ms)))
                fail_msg("memo case %zu '%s': got %zu %s %" PRId64, i, c->text, k,
                         kind_name(t.kind), t.ms);
        }
    }
    /* the same through cp_frame_parse, the date changing between lines */
    const char *a = "58: [rank468]:[2024-12-21 02:33:33,278] [INFO] [train.py:287:train] step 7";
    const char *b = "58: [rank468]:[2024-12-22 02:33:33,278] [INFO] [train.py:287:train] step 7";
    cp_origin o;
    cp_origin_init(&o);
    assert_int_equal(parse_exact(a, strlen(a), &o), strlen(a) - 6);
    assert_true(o.time.ms == INT64_C(1734748413278));
    cp_origin_init(&o);
    assert_int_equal(parse_exact(b, strlen(b), &o), strlen(b) - 6);
    assert_true(o.time.ms == INT64_C(1734834813278));
}

typedef struct path_case {
    const char *path;
    int32_t rank, local_rank;
    const char *host;
} path_case;

static const path_case path_cases[] = {
    {"rank_27.log", 27, U, ""},
    {"logs/rank27.log", 27, U, ""},
    {"rank-27.txt", 27, U, ""},
    {"/runs/x/rank_27/stdout.txt", 27, U, ""},
    {"out/train_rank3.log", 3, U, ""},
    {"out/local_rank_5.log", U, 5, ""},
    {"/tmp/sx/node002/rank_14.log", 14, U, "node002"},
    {"node003/train.log", U, U, "node003"},
    {"/data/logs/gpu20-15/dmesg.log", U, U, "gpu20-15"},
    {"host-a12/train.log", U, U, "host-a12"},
    {"ip-10-0-1-23.ec2.internal/stderr", U, U, "ip-10-0-1-23"},
    {"10.0.0.5/train.log", U, U, "10.0.0.5"},
    {"node003.log", U, U, "node003"},
    {"/tmp/torchelastic_fyfqzgww/none_rdivfmbq/attempt_0/3/stderr.log", U, 3, ""},
    {"logs/node007/job_abc/attempt_1/0/stdout.log", U, 0, "node007"},
    {"run.tgz:node1/rank_3.log", 3, U, "node1"},
    {"logs/run1/train.log", U, U, ""},
    {"run1/logs/train.log", U, U, ""},
    {"experiments/llama-2-7b/train.log", U, U, ""},
    {"2024-05-18/train.log", U, U, ""},
    {"outputs/3/stderr.log", U, U, ""},
    {"runs/rank/train.log", U, U, ""},
    {"ranking.log", U, U, ""},
    {"node003/", U, U, "node003"},
    {"", U, U, ""},
    {"/", U, U, ""},
};

static void test_from_path(void **state)
{
    (void)state;
    int bad = 0;
    for (size_t i = 0; i < sizeof path_cases / sizeof path_cases[0]; i++) {
        const path_case *c = &path_cases[i];
        cp_origin o;
        cp_origin_init(&o);
        cp_frame_from_path(c->path, &o);
        if (o.rank != c->rank || o.local_rank != c->local_rank || strcmp(o.host, c->host) != 0 ||
            o.pid != -1 || o.time.kind != CP_TS_NONE) {
            print_error("path case %zu '%s': want rank=%d local=%d host='%s', got %d %d '%s'\n", i,
                        c->path, c->rank, c->local_rank, c->host, o.rank, o.local_rank, o.host);
            bad++;
        }
    }
    assert_int_equal(bad, 0);
    cp_frame_from_path(NULL, NULL);     /* tolerated */
}

static void test_origin(void **state)
{
    (void)state;
    cp_origin a, b;
    cp_origin_init(&a);
    assert_int_equal(a.rank, -1);
    assert_int_equal(a.local_rank, -1);
    assert_int_equal(a.pid, -1);
    assert_int_equal(a.task, -1);
    assert_int_equal(a.cuda_dev, -1);
    assert_int_equal(a.time.kind, CP_TS_NONE);
    assert_int_equal(a.level, 0);
    assert_string_equal(a.host, "");

    a.rank = 4;
    a.pid = 77;
    strcpy(a.host, "node001");
    cp_origin_init(&b);
    b.rank = 9;
    b.task = 1;
    b.time.kind = CP_TS_BOOT;
    b.time.ms = 5;
    cp_origin_merge(&a, &b);
    assert_int_equal(a.rank, 9);
    assert_int_equal(a.pid, 77);
    assert_int_equal(a.task, 1);
    assert_int_equal(a.time.kind, CP_TS_BOOT);
    assert_int_equal(a.time.ms, 5);
    assert_string_equal(a.host, "node001");

    cp_origin_init(&b);
    strcpy(b.host, "gpu20-15");
    b.level = 'E';
    cp_origin_merge(&a, &b);
    assert_string_equal(a.host, "gpu20-15");
    assert_int_equal(a.level, 'E');
    assert_int_equal(a.rank, 9);
}

/* Parses `line` whole and cut at every length up to `max_cut`, each time
 * in an exact-size buffer. */
static void parse_all_cuts(const char *line, size_t len, size_t max_cut)
{
    size_t top = len < max_cut ? len : max_cut;
    for (size_t k = 0; k <= top; k++) {
        cp_origin o;
        cp_origin_init(&o);
        size_t off = parse_exact(line, k, &o);
        assert_true(off <= k);
        assert_true(strlen(o.host) < CP_HOST_MAX);
    }
    if (top < len) {
        cp_origin o;
        cp_origin_init(&o);
        assert_true(parse_exact(line, len, &o) <= len);
    }
}

/* Long real lines with many stacked prefixes, cut at every length. */
static void test_truncation(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "1: [rank14]:node002:5117:6083 [6] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got "
        "completion from peer 10.141.1.1<51671> with error 12",
        "[default0]:[rank12]:[E817 17:40:34.227531918 ProcessGroupNCCL.cpp:1515] [PG 0 "
        "(default_pg) Rank 12] Process group watchdog thread terminated",
        "2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] "
        "2023-04-29 06:01:12 ERROR [__main__] main failed",
        "2024-05-18T19:02:39.123456+02:00 gpu-node-7 kernel: [171167.621162] NVRM: Xid",
        "[2024-05-08 08:47:31,877] torch.distributed.elastic.multiprocessing.api: [ERROR] failed",
        "[default1]:2026-11-29 16:20:43,886 | INFO     | rank 1 | step",
        "W20261129 16:23:39.912350 13558 socket.cpp:426] [c10d] The server socket",
        "srun: error: gpu20-15: task 0: Out Of Memory",
        "slurmstepd: error: *** STEP 9411285.0 ON gpu20-15 CANCELLED AT 2022-05-17T17:58:10 ***",
        "[1,3]<stderr>:[Sat Nov  2 18:46:52 2024] [PG ID 0 PG GUID 0(default_pg) Rank 1] x",
        "  12: May  8 09:02:39 trainhost python3[28936]: Killed",
        "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 1",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        parse_all_cuts(lines[i], strlen(lines[i]), SIZE_MAX);
}

static const char *corpus_dir(void)
{
    const char *d = getenv("CULPRIT_CORPUS_DIR");
    return d && *d ? d : CULPRIT_TEST_CORPUS;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Every line of every corpus log: whole, and cut at every length up to
 * 512 bytes. */
static void test_corpus_replay(void **state)
{
    (void)state;
    DIR *dir = opendir(corpus_dir());
    if (!dir) {
        print_message("corpus %s not found: skipped\n", corpus_dir());
        skip();
        return;                     /* skip() does not return; say so */
    }
    size_t files = 0, lines = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (!ends_with(e->d_name, ".log"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", corpus_dir(), e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        char *line = NULL;
        size_t cap = 0;
        ssize_t got;
        cp_origin po;
        cp_origin_init(&po);
        cp_frame_from_path(path, &po);
        while ((got = getline(&line, &cap, f)) > 0) {
            parse_all_cuts(line, (size_t)got, 512);
            lines++;
        }
        free(line);
        fclose(f);
        files++;
    }
    closedir(dir);
    print_message("corpus: %zu files, %zu lines\n", files, lines);
    assert_true(files > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_cases),
        cmocka_unit_test(test_frame_keeps_given_fields),
        cmocka_unit_test(test_frame_long_host),
        cmocka_unit_test(test_time_parse),
        cmocka_unit_test(test_time_memo),
        cmocka_unit_test(test_from_path),
        cmocka_unit_test(test_origin),
        cmocka_unit_test(test_truncation),
        cmocka_unit_test(test_corpus_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
