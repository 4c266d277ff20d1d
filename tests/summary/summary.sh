#!/usr/bin/env bash
# Cluster scale: for every planted fault (../shared/tools/synthlogs.py,
# per-node layout), each node folder is scanned on its own into a summary
# (`culprit scan --summary`), the summaries are merged by `culprit diagnose`,
# and the verdict and the text report must equal one diagnosis of all the
# logs at once. Usage: summary.sh [RANKS] [SIZE]
set -uo pipefail
src=${CULPRIT_SOURCE:?}
bin=${CULPRIT_BIN:?}
gen="$src/../shared/tools/synthlogs.py"
ranks=${1:-64}
size=${2:-3M}
if [ ! -f "$gen" ] || ! command -v python3 >/dev/null; then
    echo "skipped: synthlogs.py or python3 is not available"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
faults=$(python3 "$gen" --list | awk '/^[a-z_0-9]+ +kind=/{print $1}')
fail=0 total=0
for fault in $faults; do
    out="$work/$fault"
    extra=()
    [ "$fault" = dtensor_mismatch ] && extra=(--framework fsdp2)
    [ "$fault" = zero3_param_state ] && extra=(--framework deepspeed)
    python3 "$gen" --ranks "$ranks" --size "$size" --layout per-node --fault "$fault" --seed 11 \
        "${extra[@]}" "$out" >/dev/null 2>&1 || { echo "FAIL $fault: synthlogs failed"; fail=$((fail+1)); continue; }
    total=$((total+1))
    nodes=("$out"/node*)
    sums=()
    ok=1
    for n in "${nodes[@]}"; do
        s="$work/$fault-$(basename "$n").json"
        "$bin" scan --quiet --summary "$s" "$n" || { echo "FAIL $fault: scan of $n failed"; ok=0; }
        sums+=("$s")
    done
    "$bin" diagnose --quiet "${nodes[@]}" > "$out.single.txt"; st1=$?
    "$bin" diagnose --quiet "${sums[@]}" > "$out.merged.txt"; st2=$?
    "$bin" diagnose --quiet --json "${nodes[@]}" > "$out.single.json"
    "$bin" diagnose --quiet --json "${sums[@]}" > "$out.merged.json"
    # a mix: the first node as logs, the rest as summaries
    "$bin" diagnose --quiet "${nodes[0]}" "${sums[@]:1}" > "$out.mixed.txt"
    if [ "$st1" != "$st2" ]; then
        echo "FAIL $fault: exit status $st1 single, $st2 merged"; ok=0
    fi
    if ! python3 - "$out.single.json" "$out.merged.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["verdict"]
b = json.load(open(sys.argv[2]))["verdict"]
sys.exit(0 if a == b else 1)
PY
    then
        echo "FAIL $fault: verdicts differ"; ok=0
    fi
    if ! cmp -s "$out.single.txt" "$out.merged.txt"; then
        echo "FAIL $fault: text reports differ"; diff "$out.single.txt" "$out.merged.txt" | head -20; ok=0
    fi
    if ! cmp -s "$out.single.txt" "$out.mixed.txt"; then
        echo "FAIL $fault: text report of logs + summaries differs"; ok=0
    fi
    if [ "$ok" = 1 ]; then echo "ok   $fault"; else fail=$((fail+1)); fi
done
# A summary keeps what the verdict reads beyond the events: each rank's
# last logged loss names the rank of a numeric failure (real-55).
real55="$src/tests/fixtures/real/real-55.log"
if [ -f "$real55" ]; then
    total=$((total+1))
    "$bin" scan --quiet --summary "$work/real-55.json" "$real55"
    "$bin" diagnose --quiet "$real55" > "$work/real-55.single.txt"
    "$bin" diagnose --quiet "$work/real-55.json" > "$work/real-55.merged.txt"
    if cmp -s "$work/real-55.single.txt" "$work/real-55.merged.txt" &&
       grep -q "rank 0 logged a loss of" "$work/real-55.merged.txt"; then
        echo "ok   real-55 (a rank's last loss)"
    else
        echo "FAIL real-55: the merged diagnosis lost the rank's last loss"; fail=$((fail+1))
    fi
fi
echo "$((total-fail)) passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$total" -gt 0 ]
