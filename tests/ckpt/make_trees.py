#!/usr/bin/env python3
"""Builds checkpoint trees of every layout culprit knows, then damages them.

    make_trees.py OUT [--scale N --mb M]

Each folder under OUT is one case; EXPECT (printed as JSON to stdout) says
which checkpoints must be unsafe, which words their problems must contain,
and which one is the newest safe. torch.save files are real when PyTorch
imports, otherwise ZIPs of the same shape (archive/data.pkl, archive/data/0,
archive/version, stored, not compressed). With --scale, builds instead one
DeepSpeed tag of N DP ranks whose shards hold M MiB each (the by-hand timing
check; not part of the suite).
"""
import json
import os
import pickle
import struct
import sys
import time
import zipfile

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except Exception:
    HAVE_TORCH = False


def save_pt(path, nbytes=4096, seed=0):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if HAVE_TORCH:
        import torch
        g = torch.Generator().manual_seed(seed)
        torch.save({"w": torch.rand(max(1, nbytes // 4), generator=g)}, path)
        return
    data = bytes((i * 7 + seed) & 0xFF for i in range(nbytes))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pickle.dumps({"w": "storage 0", "seed": seed}, protocol=2))
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/data/0", data)
        z.writestr("archive/version", "3\n")


def save_legacy(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19." + pickle.dumps({"w": [1, 2]}, protocol=2))


def save_st(path, n=256):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    hdr = json.dumps({"__metadata__": {"format": "pt"},
                      "w": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}}).encode()
    hdr += b" " * (-len(hdr) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hdr)) + hdr + bytes(4 * n))


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def truncate_mid(path, frac=0.6):
    size = os.path.getsize(path)
    with open(path, "r+b") as f:
        f.truncate(int(size * frac))


def ds_tag(root, tag, dp=4, mp=1, zero3=False, prefix=""):
    for m in range(mp):
        if not zero3:
            save_pt(f"{root}/{tag}/mp_rank_{m:02d}_model_states.pt", 2048, m)
        for r in range(dp):
            save_pt(f"{root}/{tag}/{prefix}zero_pp_rank_{r}_mp_rank_{m:02d}_optim_states.pt", 8192, r)
            if zero3:
                save_pt(f"{root}/{tag}/zero_pp_rank_{r}_mp_rank_{m:02d}_model_states.pt", 4096, r)


def hf_ckpt(root, step, shards=False):
    d = f"{root}/checkpoint-{step}"
    write(f"{d}/trainer_state.json", json.dumps({"global_step": step, "best_model_checkpoint": None}))
    if shards:
        save_st(f"{d}/model-00001-of-00002.safetensors")
        save_st(f"{d}/model-00002-of-00002.safetensors", 64)
        write(f"{d}/model.safetensors.index.json", json.dumps({"metadata": {}, "weight_map": {
            "a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}}))
    else:
        save_st(f"{d}/model.safetensors")
    save_pt(f"{d}/optimizer.pt", 8192)
    save_pt(f"{d}/scheduler.pt", 512)
    save_pt(f"{d}/training_args.bin", 256)
    for r in range(2):
        save_pt(f"{d}/rng_state_{r}.pth", 256, r)
    return d


def build(out):
    expect = {}
    # DeepSpeed: latest names a tag whose rank-3 shard was never written
    r = f"{out}/ds"
    for t in (100, 200, 300):
        ds_tag(r, f"global_step{t}", prefix="bf16_" if t == 100 else "")
    os.remove(f"{r}/global_step300/zero_pp_rank_3_mp_rank_00_optim_states.pt")
    write(f"{r}/latest", "global_step300\n")
    write(f"{r}/zero_to_fp32.py", "# consolidates ZeRO shards\n")
    expect["ds"] = {"unsafe": {"global_step300": ["DP ranks 3"]}, "newest_safe": "global_step200",
                    "latest": "global_step300", "warnings": ["unsafe"]}
    # DeepSpeed ZeRO-3: a shard cut mid-entry, no zero_to_fp32.py
    r = f"{out}/ds_trunc"
    for t in (100, 200):
        ds_tag(r, f"global_step{t}", dp=2, zero3=True)
    truncate_mid(f"{r}/global_step200/zero_pp_rank_1_mp_rank_00_optim_states.pt")
    write(f"{r}/latest", "global_step200\n")
    expect["ds_trunc"] = {"unsafe": {"global_step200": ["zero_pp_rank_1_mp_rank_00_optim_states.pt"]},
                          "newest_safe": "global_step100", "latest": "global_step200",
                          "warnings": ["zero_to_fp32.py"]}
    # DCP: one committed, one without .metadata, one with .metadata.tmp and an empty shard
    r = f"{out}/dcp"
    for s in (100, 200, 300):
        os.makedirs(f"{r}/step_{s}", exist_ok=True)
        for rank in range(2):
            with open(f"{r}/step_{s}/__{rank}_0.distcp", "wb") as f:
                f.write(os.urandom(4096))
    with open(f"{r}/step_100/.metadata", "wb") as f:
        f.write(pickle.dumps({"storage_data": {}}, protocol=2))
    with open(f"{r}/step_300/.metadata.tmp", "wb") as f:
        f.write(b"\x80\x02")
    open(f"{r}/step_300/__1_0.distcp", "wb").close()
    expect["dcp"] = {"unsafe": {"step_200": [".metadata"], "step_300": [".metadata.tmp", "0 bytes"]},
                     "newest_safe": "step_100", "latest": None}
    # HF Trainer: bad safetensors header, zero-byte optimizer, a staging folder left over
    r = f"{out}/hf"
    hf_ckpt(r, 100)
    d = hf_ckpt(r, 200, shards=True)
    with open(f"{d}/model-00002-of-00002.safetensors", "r+b") as f:
        f.seek(8)
        f.write(b"not json")
    d = hf_ckpt(r, 300)
    open(f"{d}/optimizer.pt", "w").close()
    write(f"{r}/tmp-checkpoint-400/trainer_state.json", "{")
    expect["hf"] = {"unsafe": {"checkpoint-200": ["model-00002-of-00002.safetensors"],
                               "checkpoint-300": ["optimizer.pt", "0 bytes"],
                               "tmp-checkpoint-400": ["interrupted"]},
                    "newest_safe": "checkpoint-100", "latest": "checkpoint-300"}
    # Megatron: the tracker names an iteration missing one rank's distrib_optim.pt
    r = f"{out}/megatron"
    for it in (1000, 2000):
        for tp in range(2):
            save_pt(f"{r}/iter_{it:07d}/mp_rank_{tp:02d}/model_optim_rng.pt", 4096, tp)
            save_pt(f"{r}/iter_{it:07d}/mp_rank_{tp:02d}/distrib_optim.pt", 4096, tp)
    os.remove(f"{r}/iter_0002000/mp_rank_01/distrib_optim.pt")
    write(f"{r}/latest_checkpointed_iteration.txt", "2000")
    expect["megatron"] = {"unsafe": {"iter_0002000": ["mp_rank_01/distrib_optim.pt"]},
                          "newest_safe": "iter_0001000", "latest": "iter_0002000", "warnings": ["unsafe"]}
    # Generic step folders: a rank file missing, one much smaller than its siblings
    r = f"{out}/generic"
    for s in (100, 200, 300):
        for rank in range(2):
            save_pt(f"{r}/step_{s}/rank_{rank}.pt", 16384, rank)
    os.remove(f"{r}/step_300/rank_1.pt")
    save_pt(f"{r}/step_200/rank_0.pt", 512)
    expect["generic"] = {"unsafe": {"step_300": ["rank_1.pt"], "step_200": ["under half"]},
                         "newest_safe": "step_100", "latest": None}
    # A stale shard: much older than the rest of its tag
    r = f"{out}/stale"
    ds_tag(r, "global_step100", dp=2)
    ds_tag(r, "global_step200", dp=2)
    old = time.time() - 3 * 86400
    os.utime(f"{r}/global_step200/zero_pp_rank_0_mp_rank_00_optim_states.pt", (old, old))
    write(f"{r}/latest", "global_step200\n")
    write(f"{r}/zero_to_fp32.py", "#\n")
    expect["stale"] = {"unsafe": {"global_step200": ["earlier save"]}, "newest_safe": "global_step100",
                       "latest": "global_step200"}
    # Legacy torch.save: not checked, so no verdict
    save_legacy(f"{out}/legacy/step_5/model.pt")
    expect["legacy"] = {"unsafe": {}, "unknown": ["step_5"], "newest_safe": None, "latest": None}
    # Healthy DeepSpeed with fp16 prefix: exit 0
    r = f"{out}/healthy"
    ds_tag(r, "global_step10", dp=2, prefix="fp16_")
    write(f"{r}/latest", "global_step10\n")
    write(f"{r}/zero_to_fp32.py", "#\n")
    expect["healthy"] = {"unsafe": {}, "newest_safe": "global_step10", "latest": "global_step10", "status": 0}
    return expect


def build_scale(out, n, mb):
    tag = f"{out}/global_step1000"
    os.makedirs(tag, exist_ok=True)
    chunk = os.urandom(1 << 20)
    for r in range(n):
        with zipfile.ZipFile(f"{tag}/zero_pp_rank_{r}_mp_rank_00_optim_states.pt", "w", zipfile.ZIP_STORED) as z:
            z.writestr("archive/data.pkl", pickle.dumps({"rank": r}, protocol=2))
            with z.open("archive/data/0", "w", force_zip64=True) as f:
                for _ in range(mb):
                    f.write(chunk)
            z.writestr("archive/version", "3\n")
    save_pt(f"{tag}/mp_rank_00_model_states.pt", 1 << 16)
    write(f"{out}/latest", "global_step1000\n")
    write(f"{out}/zero_to_fp32.py", "#\n")


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[2] == "--scale":
        build_scale(sys.argv[1], int(sys.argv[3]), int(sys.argv[5]) if len(sys.argv) > 5 else 16)
    else:
        print(json.dumps({"torch": HAVE_TORCH, "cases": build(sys.argv[1])}))
