#!/usr/bin/env python3
"""Writes per-rank PyTorch Flight Recorder dumps for culprit's tests.

The layout follows torch/csrc/distributed/c10d/FlightRecorderDetail.hpp
(dump_dict for pickles, dump_json for JSON): top-level version, pg_config
({name: {name, desc, ranks: "[0, 1]"}}), pg_status ({pg_id: {last_*}}),
entries (record_id, pg_id, process_group = (name, desc), collective_seq_id,
p2p_seq_id, op_id, profiling_name, time_created_ns, input/output sizes and
dtypes, state, time_discovered_*, retired, timeout_ms, is_p2p, frames), plus
nccl_version (2.7) or comm_lib_version (2.10). JSON dumps carry pg_status
values as strings and 0 for missing times, and no frames, as dump_json
writes them. Stdlib only.

Usage: make_dumps.py OUTDIR   (writes OUTDIR/<scenario>-<format>-<version>/
and OUTDIR/expect.json, plus OUTDIR/watchdog-<scenario>.log excerpts)
"""
import json
import os
import pickle
import sys

WORLD = 8
SEQ = 40            # the collective the hang is at
T0 = 1714564800 * 10**9  # 2024-05-01T12:00:00Z

SCENARIOS = {
    # name: (culprit, kind, hang)
    "missing": (5, "nccl_timeout", True),
    "size": (3, "collective_mismatch", False),
    "type": (0, "collective_mismatch", False),
    # one rank never ran a collective the others completed: a stall there
    "state": (6, "nccl_timeout", True),
    "absent": (2, "nccl_timeout", True),
}


def entry(version, rank, seq, op="nccl:all_reduce", size=1024, dtype="Float", state="completed", fmt="pickle"):
    done = state == "completed"
    started = state in ("started", "completed")
    t = T0 + seq * 10**9 + rank * 1000
    e = {
        "record_id": seq - 1,
        "pg_id": 0,
        "process_group": ("0", "default_pg"),
        "collective_seq_id": seq,
        "p2p_seq_id": 0,
        "op_id": seq,
        "profiling_name": op,
        "time_created_ns": t,
        "input_sizes": [[size]],
        "input_dtypes": [dtype],
        "output_sizes": [[size]],
        "output_dtypes": [dtype],
        "state": state,
        "time_discovered_started_ns": t + 10 if started else (0 if fmt == "json" else None),
        "time_discovered_completed_ns": t + 20 if done else (0 if fmt == "json" else None),
        "retired": done,
        "timeout_ms": 600000,
        "is_p2p": False,
    }
    if fmt == "pickle":
        e["frames"] = [{"name": "train_step", "filename": "/home/ml/train.py", "line": 120},
                       {"name": "all_reduce", "filename": "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", "line": 2501}]
    if version == "2.10":
        e["thread_id"] = "140245"
        e["thread_name"] = "pt_main_thread"
    if fmt == "json":
        e["process_group"] = list(e["process_group"])
    return e


def rank_entries(scenario, version, rank, fmt):
    culprit = SCENARIOS[scenario][0]
    out = []
    for seq in range(SEQ - 30, SEQ + 1):  # a ring buffer that starts late
        kw = {}
        if seq < SEQ:
            kw["state"] = "completed"
        else:
            kw["state"] = "started"
        if scenario == "missing" and rank == culprit and seq == SEQ:
            continue
        if scenario == "size" and rank == culprit and seq == SEQ:
            kw["size"] = 512
        if scenario == "type" and rank == culprit and seq == SEQ:
            kw["op"] = "nccl:broadcast"
        if scenario == "state" and seq == SEQ:
            kw["state"] = "scheduled" if rank == culprit else "completed"
        out.append(entry(version, rank, seq, fmt=fmt, **kw))
    if scenario == "state" and rank != culprit:
        out.append(entry(version, rank, SEQ + 1, state="started", fmt=fmt))
    return out


def dump(scenario, version, rank, fmt):
    entries = rank_entries(scenario, version, rank, fmt)
    last = entries[-1]["collective_seq_id"]
    done = max([e["collective_seq_id"] for e in entries if e["state"] == "completed"] or [-1])
    status = {"last_enqueued_collective": last, "last_started_collective": last,
              "last_completed_collective": done}
    if fmt == "json":
        status = {k: str(v) for k, v in status.items()}
    d = {
        "version": version,
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": str(list(range(WORLD)))}},
        "pg_status": {"0": status},
        "entries": entries,
    }
    if version == "2.10":
        d["comm_lib_version"] = "2.21.5"
    elif version == "2.7":
        d["nccl_version"] = "2.21.5"
    return d


def write_set(root, scenario, fmt, version, protocol):
    name = "%s-%s-%s" % (scenario, fmt if fmt == "json" else "pickle%d" % protocol, version)
    out = os.path.join(root, name)
    os.makedirs(out, exist_ok=True)
    culprit = SCENARIOS[scenario][0]
    for r in range(WORLD):
        if scenario == "absent" and r == culprit:
            continue
        d = dump(scenario, version, r, fmt)
        path = os.path.join(out, "nccl_trace_rank_%d" % r)
        if fmt == "json":
            with open(path, "w") as f:
                json.dump(d, f, sort_keys=True)  # nlohmann's object order
        else:
            with open(path, "wb") as f:
                pickle.dump(d, f, protocol=protocol)
    return name


def watchdog_log(root, scenario):
    """A combined log excerpt: every rank but the culprit times out at SEQ."""
    culprit = SCENARIOS[scenario][0]
    path = os.path.join(root, "watchdog-%s.log" % scenario)
    with open(path, "w") as f:
        f.write("[rank0]:[I ProcessGroupNCCL.cpp:2003] [PG 0 (default_pg) Rank 0] ProcessGroupNCCL initialized\n")
        for r in range(WORLD):
            f.write("[rank%d]:2024-05-01 12:00:%02d,100 - INFO - step 39 loss 2.31\n" % (r, 30 + r))
        for r in range(WORLD):
            if r == culprit:
                continue
            f.write("[rank%d]:[E501 12:10:41.%06d ProcessGroupNCCL.cpp:607] [PG 0 (default_pg) Rank %d] Watchdog "
                    "caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=1024, "
                    "NumelOut=1024, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n"
                    % (r, 100 + r, r, SEQ))
    return path


def main():
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    expect = {}
    for scenario, (culprit, kind, hang) in SCENARIOS.items():
        for fmt, version, protocol in (("pickle", "2.3", 2), ("pickle", "2.10", 4), ("pickle", "2.7", 5),
                                       ("json", "2.10", 0), ("json", "2.3", 0)):
            name = write_set(root, scenario, fmt, version, protocol)
            expect[name] = {"first_rank": culprit, "kind": kind, "hang": hang,
                            "log": "watchdog-%s.log" % scenario}
        watchdog_log(root, scenario)
    with open(os.path.join(root, "expect.json"), "w") as f:
        json.dump(expect, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
