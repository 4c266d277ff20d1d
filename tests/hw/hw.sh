#!/usr/bin/env bash
# Hardware and infrastructure faults at 512 ranks in the per-node layout
# (nodeNNN/train.log beside nodeNNN/dmesg.log), several seeds each: the
# verdict names the planted rank, host and owner; a GPU hardware fault puts
# its host on the drain list, a host OOM does not (memory is not a reason
# to drain). Usage: hw.sh [RANKS] [SIZE]
set -uo pipefail
src=${CULPRIT_SOURCE:?}
bin=${CULPRIT_BIN:?}
gen="$src/../shared/tools/synthlogs.py"
ranks=${1:-512}
size=${2:-8M}
if [ ! -f "$gen" ] || ! command -v python3 >/dev/null; then
    echo "skipped: synthlogs.py or python3 is not available"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail=0 total=0
for fault in gpu_hardware host_oom; do
    for seed in 1 2 3; do
        out="$work/$fault-$seed"
        python3 "$gen" --ranks "$ranks" --size "$size" --layout per-node --fault "$fault" --seed "$seed" \
            "$out" >/dev/null 2>&1 || { echo "FAIL $fault/$seed: synthlogs failed"; fail=$((fail+1)); continue; }
        total=$((total+1))
        "$bin" diagnose --json --quiet "$out" > "$out.json" 2>/dev/null
        verdict=$(python3 - "$out/truth.json" "$out.json" <<'PY'
import json, sys
truth = json.load(open(sys.argv[1]))
got = json.load(open(sys.argv[2]))
v = got["verdict"]
bad = []
if v["first_rank"] not in truth["first_rank"]:
    bad.append(f"first_rank want {truth['first_rank']} got {v['first_rank']}")
for key in ("kind", "owner"):
    if v[key] != truth[key]:
        bad.append(f"{key} want {truth[key]} got {v[key]}")
if got["diagnosis"]["host"] != truth["fault_host"]:
    bad.append(f"host want {truth['fault_host']} got {got['diagnosis']['host']}")
drained = {d["host"]: d for d in got.get("drain", [])}
if truth["fault"] == "gpu_hardware":
    d = drained.get(truth["fault_host"])
    if not d:
        bad.append(f"{truth['fault_host']} not on the drain list")
    elif not d["command"].startswith(f"scontrol update NodeName={truth['fault_host']} State=DRAIN"):
        bad.append(f"bad command {d['command']}")
    elif not any(g["rank"] == truth["fault_rank"] for g in d["gpus"]):
        bad.append(f"rank {truth['fault_rank']}'s GPU not in {d['gpus']}")
    if len(drained) != 1:
        bad.append(f"drain list names {sorted(drained)}")
elif drained:
    bad.append(f"host_oom drains {sorted(drained)}")
print("; ".join(bad) or "ok")
PY
)
        if [ "$verdict" = ok ]; then
            echo "ok   $fault/seed $seed"
        else
            echo "FAIL $fault/seed $seed: $verdict"
            fail=$((fail+1))
        fi
    done
done
echo "$((total-fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
