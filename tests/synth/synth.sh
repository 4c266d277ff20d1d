#!/usr/bin/env bash
# Synthetic incidents at 512 ranks, every planted fault in every layout
# (../shared/tools/synthlogs.py): the first failing rank and the kind must
# match the planted truth, and the threaded scan with progress thinning
# must give the very JSON of a serial one without. Owner and phase are
# counted against the truth too, with floors (SYNTH_OWNER_MIN,
# SYNTH_PHASE_MIN): some of the generator's labels need what a log does
# not say (the phase of a NCCL error with no traceback), so they are not
# all required, but none that matches may be lost. culprit reads files by
# default: the threaded scan runs twice, reading and mapping
# (CULPRIT_MMAP=1), and both must agree with the serial one, which reads.
# The logs are dated back an hour, so that the mapping run maps the larger
# files (the reader maps only files left alone for a few seconds).
# Usage: synth.sh [RANKS] [SIZE]
set -uo pipefail
src=${CULPRIT_SOURCE:?}
bin=${CULPRIT_BIN:?}
gen="$src/../shared/tools/synthlogs.py"
ranks=${1:-512}
size=${2:-6M}
if [ ! -f "$gen" ] || ! command -v python3 >/dev/null; then
    echo "skipped: synthlogs.py or python3 is not available"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
faults=$(python3 "$gen" --list | awk '/^[a-z_0-9]+ +kind=/{print $1}')
fail=0 total=0 owners=0 phases=0
owner_min=${SYNTH_OWNER_MIN:-25} phase_min=${SYNTH_PHASE_MIN:-19}
for fault in $faults; do
    for layout in combined per-rank per-node; do
        out="$work/$fault-$layout"
        extra=()
        [ "$fault" = dtensor_mismatch ] && extra=(--framework fsdp2)
        [ "$fault" = zero3_param_state ] && extra=(--framework deepspeed)
        python3 "$gen" --ranks "$ranks" --size "$size" --layout "$layout" --fault "$fault" --seed 7 \
            "${extra[@]}" "$out" >/dev/null 2>&1 || { echo "FAIL $fault/$layout: synthlogs failed"; fail=$((fail+1)); continue; }
        total=$((total+1))
        find "$out" -type f -exec touch -d '1 hour ago' {} +
        "$bin" diagnose --json --quiet "$out" > "$out.json" 2>/dev/null
        CULPRIT_MMAP=1 "$bin" diagnose --json --quiet "$out" > "$out.mapped.json" 2>/dev/null
        # one worker, no thinning, no mapping: the line-by-line pass must agree exactly
        CULPRIT_THREADS=1 CULPRIT_NO_THIN=1 "$bin" diagnose --json --quiet "$out" \
            > "$out.serial.json" 2>/dev/null
        differs=
        for way in json mapped.json; do
            if ! cmp -s "$out.$way" "$out.serial.json"; then
                echo "FAIL $fault/$layout: the threaded, thinned scan ($way) differs from the serial one"
                diff "$out.serial.json" "$out.$way" | head -20
                differs=1
            fi
        done
        if [ -n "$differs" ]; then
            fail=$((fail+1))
            continue
        fi
        verdict=$(python3 - "$out/truth.json" "$out.json" <<'PY'
import json, sys
truth = json.load(open(sys.argv[1]))
got = json.load(open(sys.argv[2]))["verdict"]
bad = []
if got["first_rank"] not in truth["first_rank"]:
    bad.append(f"first_rank want {truth['first_rank']} got {got['first_rank']}")
if got["kind"] != truth["kind"]:
    bad.append(f"kind want {truth['kind']} got {got['kind']}")
also = [k for k in ("owner", "phase") if truth.get(k) is not None and got[k] == truth[k]]
print(("; ".join(bad) or "ok") + "|" + " ".join(also))
PY
)
        also=${verdict#*|}
        verdict=${verdict%%|*}
        case " $also " in *" owner "*) owners=$((owners+1));; esac
        case " $also " in *" phase "*) phases=$((phases+1));; esac
        if [ "$verdict" = ok ]; then
            echo "ok   $fault/$layout"
        else
            echo "FAIL $fault/$layout: $verdict"
            fail=$((fail+1))
        fi
    done
done
echo "$((total-fail)) passed, $fail failed; owner as planted in $owners (floor $owner_min), phase in $phases (floor $phase_min)"
[ "$fail" -eq 0 ] && [ "$owners" -ge "$owner_min" ] && [ "$phases" -ge "$phase_min" ]
