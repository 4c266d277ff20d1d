#!/usr/bin/env bash
# Throughput of `culprit diagnose` against rg and grep searching for the
# same literals (bench/literals.py), plus peak RSS and the time to diagnose
# a 10 MB paste. Not part of the test suite; prints a table on stdout.
#
#   bench/bench.sh [CULPRIT_BIN]          (default: build-perf/culprit, else build/culprit)
#
# Environment: CULPRIT_RULES (default: the source tree's rules/), BENCH_REPS (default 5), BENCH_DIR (generated runs are kept
# here and reused; default ${TMPDIR:-/tmp}/culprit-bench), BENCH_BIG=1 adds
# a 10 GiB run when the disk has room, BENCH_SETS to pick runs (e.g.
# "512-combined 4096-per-rank").
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-}
if [ -z "$bin" ]; then
    for b in "$here/build-perf/culprit" "$here/build/culprit"; do [ -x "$b" ] && { bin=$b; break; }; done
fi
[ -x "${bin:-}" ] || { echo "bench.sh: no culprit binary (build it, or pass its path)" >&2; exit 2; }
gen="$here/../shared/tools/synthlogs.py"
reps=${BENCH_REPS:-5}
dir=${BENCH_DIR:-${TMPDIR:-/tmp}/culprit-bench}
sets=${BENCH_SETS:-"512-combined 512-per-rank 4096-combined 4096-per-rank"}
command -v rg >/dev/null || { echo "bench.sh: ripgrep missing (apt-get install -y ripgrep)" >&2; exit 2; }
mkdir -p "$dir"
lits="$dir/literals.txt"
export CULPRIT_RULES=${CULPRIT_RULES:-$here/rules}
python3 "$here/bench/literals.py" "$CULPRIT_RULES" > "$lits"

if [ "${BENCH_BIG:-0}" = 1 ]; then
    avail_kb=$(df -Pk "$dir" | awk 'NR==2{print $4}')
    if [ "$avail_kb" -gt $((25 * 1024 * 1024)) ]; then
        sets="$sets 10G:512-combined"
    else
        echo "# BENCH_BIG=1 skipped: less than 25 GiB free in $dir" >&2
    fi
fi

# make RUN: generates it once (seed 1, a cuda_oom at one rank)
make_run() {
    local name=$1 size=1G spec=$1
    case $name in 10G:*) size=10G; spec=${name#10G:};; esac
    local ranks=${spec%%-*} layout=${spec#*-}
    local out="$dir/$size-$ranks-$layout"
    if [ ! -f "$out/truth.json" ]; then
        rm -rf "$out"
        echo "# generating $out" >&2
        python3 "$gen" --ranks "$ranks" --size "$size" --layout "$layout" --fault cuda_oom --seed 1 "$out" >/dev/null
    fi
    echo "$out"
}

# "WALL CPU": median wall seconds and median CPU seconds (user + system,
# all threads) of REPS runs of a command (its output discarded)
median() {
    python3 - "$reps" "$@" <<'PY'
import os, subprocess, sys, time
reps = int(sys.argv[1]); cmd = sys.argv[2:]
walls, cpus = [], []
for _ in range(reps):
    before = os.times()
    t = time.perf_counter()
    # a pipe, not /dev/null: GNU grep stops at the first match when its
    # output is /dev/null
    subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    walls.append(time.perf_counter() - t)
    after = os.times()
    cpus.append(after.children_user - before.children_user + after.children_system - before.children_system)
walls.sort(); cpus.sort()
print(f"{walls[len(walls)//2]:.3f} {cpus[len(cpus)//2]:.3f}")
PY
}

rss_mb() {
    { /usr/bin/time -v "$@" 2>&1 >/dev/null || true; } | awk '/Maximum resident set size/{printf "%.0f", $NF/1024}'
}

# CPU seconds per GB
cpu_gb() { python3 -c "import sys; print(f'{float(sys.argv[2])/int(sys.argv[1])*1e9:.2f}')" "$1" "$2"; }
mbps() { python3 -c "import sys; print(f'{int(sys.argv[1])/float(sys.argv[2])/1e6:.0f}')" "$1" "$2"; }
ratio() { python3 -c "import sys; print(f'{float(sys.argv[2])/float(sys.argv[1]):.2f}')" "$1" "$2"; }

# "ROOM USED": CPU nanoseconds per line besides vectorscan's pass (its
# floor, below, on one core). ROOM is what culprit could spend and still
# finish in rg's wall time, its threads busy on every core all along;
# USED is what it spends. "- -" without the floor.
per_line() {
    python3 - "$@" <<'PY'
import sys
bytes_, lines, cores, t_rg, cpu_c, floor = sys.argv[1:]
if floor == "-" or int(lines) == 0:
    print("- -")
else:
    scan = int(bytes_) / (float(floor) * 1e6)
    room = (float(t_rg) * int(cores) - scan) / int(lines) * 1e9
    used = (float(cpu_c) - scan) / int(lines) * 1e9
    print(f"{room:.0f} {used:.0f}")
PY
}

# vectorscan's pass alone with the same database, on one thread: the
# floor of culprit's cost (bench/scan_floor.c, built next to culprit)
floor_bin=$(dirname "$bin")/bench/scan-floor
scan_floor() { if [ -x "$floor_bin" ]; then "$floor_bin" "$CULPRIT_RULES" "$@"; else echo -; fi; }

echo "culprit: $bin ($(nproc) cores), $reps repetitions, medians; literals: $(wc -l < "$lits") (bench/literals.py)"
row='%-22s %8s %9s %9s %9s %9s %8s %8s %9s %9s %7s %9s %8s %8s %8s\n'
# shellcheck disable=SC2059
printf "$row" run MB culprit rg grep cat c/rg c/grep culprit rg RSS_MB scan/core lines room used
# shellcheck disable=SC2059
printf "$row" '' '' MB/s MB/s MB/s MB/s '' '' CPU_s/GB CPU_s/GB '' MB/s M ns/line ns/line
for s in $sets; do
    run=$(make_run "$s")
    files=()
    while IFS= read -r -d '' f; do files+=("$f"); done < <(find "$run" -type f -name '*.log' -print0 | sort -z)
    read -r lines bytes < <(cat "${files[@]}" | wc -lc)
    cat "${files[@]}" > /dev/null   # warm the page cache
    read -r t_c cpu_c < <(median "$bin" diagnose --json --quiet "$run")
    read -r t_rg cpu_rg < <(median rg -c -F -f "$lits" "$run")
    read -r t_grep _ < <(median grep -r -c -F -f "$lits" "$run")
    read -r t_cat _ < <(median sh -c 'cat "$@" > /dev/null' sh "${files[@]}")
    rss=$(rss_mb "$bin" diagnose --json --quiet "$run")
    floor=$(scan_floor "${files[@]}")
    read -r room used < <(per_line "$bytes" "$lines" "$(nproc)" "$t_rg" "$cpu_c" "$floor")
    # shellcheck disable=SC2059
    printf "$row" "$(basename "$run")" $((bytes / 1000000)) \
        "$(mbps "$bytes" "$t_c")" "$(mbps "$bytes" "$t_rg")" "$(mbps "$bytes" "$t_grep")" "$(mbps "$bytes" "$t_cat")" \
        "$(ratio "$t_c" "$t_rg")" "$(ratio "$t_c" "$t_grep")" "$(cpu_gb "$bytes" "$cpu_c")" "$(cpu_gb "$bytes" "$cpu_rg")" "$rss" "$floor" \
        "$(python3 -c "import sys; print(f'{int(sys.argv[1])/1e6:.2f}')" "$lines")" "$room" "$used"
done

# A 10 MB paste: one file, start-up included. The first run after clearing
# the rule cache compiles the vectorscan database.
paste="$dir/paste-10M/train.log"
if [ ! -f "$paste" ]; then
    python3 "$gen" --ranks 64 --size 10M --layout combined --fault cuda_oom --seed 1 "$dir/paste-10M" >/dev/null
fi
cache=$(mktemp -d)
t_cold=$(python3 - "$bin" "$paste" "$cache" <<'PY'
import os, subprocess, sys, time
env = dict(os.environ, CULPRIT_CACHE_DIR=sys.argv[3], XDG_CACHE_HOME=sys.argv[3])
t = time.perf_counter()
subprocess.run([sys.argv[1], "diagnose", "--json", "--quiet", sys.argv[2]], stdout=subprocess.DEVNULL, env=env)
print(f"{(time.perf_counter() - t) * 1000:.0f}")
PY
)
t_warm=$(python3 - "$bin" "$paste" "$cache" <<'PY'
import os, subprocess, sys, time
env = dict(os.environ, CULPRIT_CACHE_DIR=sys.argv[3], XDG_CACHE_HOME=sys.argv[3])
ts = []
for _ in range(20):
    t = time.perf_counter()
    subprocess.run([sys.argv[1], "diagnose", "--json", "--quiet", sys.argv[2]], stdout=subprocess.DEVNULL, env=env)
    ts.append(time.perf_counter() - t)
ts.sort()
print(f"{ts[10] * 1000:.0f}")
PY
)
rm -rf "$cache"
echo
echo "10 MB paste ($(wc -c < "$paste") bytes): ${t_warm} ms median of 20 (rule cache warm); first run after clearing the rule cache: ${t_cold} ms"
