#!/usr/bin/env bash
# Builds the fuzz targets with clang (libFuzzer + ASan + UBSan) into
# build-fuzz and runs each for SECONDS (default 60), two at a time, on a
# working corpus in build-fuzz/corpus/<target>/ seeded from
# tests/fuzz/corpus/<target>/. At the end, the new inputs that reach code
# the checked-in corpus does not (up to 4 KiB each) are merged into
# tests/fuzz/corpus/<target>/, which stays small enough to replay in every
# CI run. Crashes are written to build-fuzz/crashes/<target>/: add each as
# tests/fuzz/corpus/<target>/regress-<what> with its fix.
#   tests/fuzz/run.sh [SECONDS] [TARGET...]
# Needs: clang, libclang-rt-14-dev (or the matching version). The normal
# test suite does not: it replays the corpora with tests/fuzz/replay.c.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    for f in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
fi
jobs=${FUZZ_JOBS:-2}
out=build-fuzz

if [ ! -f "$out/build.ninja" ]; then
    CC=clang meson setup "$out" -Dtests=false -Db_sanitize=address,undefined -Db_lundef=false \
        -Dc_args='-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined' >/dev/null
fi
ninja -C "$out" libculprit.a >/dev/null

libs=$(pkg-config --libs libhs libpcre2-8 jansson libarchive)
for t in "${targets[@]}"; do
    clang -g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -DCULPRIT_FUZZ_RULES="\"$PWD/rules\"" -Iinclude -Isrc -Isrc/lib -I"$out" \
        "tests/fuzz/$t.c" "$out/libculprit.a" $libs -lstdc++ -lm -lpthread -o "$out/$t"
done

run_one() {
    local t=$1 seeds=tests/fuzz/corpus/${1#fuzz_} corpus=$out/corpus/${1#fuzz_}
    mkdir -p "$seeds" "$corpus" "$out/crashes/$t"
    ASAN_OPTIONS=detect_leaks=1 CULPRIT_CACHE_DIR=off \
        "$out/$t" -max_total_time="$secs" -rss_limit_mb=4096 -timeout=20 -max_len=65536 \
        -artifact_prefix="$out/crashes/$t/" -print_final_stats=1 "$corpus" "$seeds" >"$out/$t.log" 2>&1 || true
    ASAN_OPTIONS=detect_leaks=0 CULPRIT_CACHE_DIR=off \
        "$out/$t" -merge=1 -max_len=4096 -rss_limit_mb=4096 -timeout=20 "$seeds" "$corpus" >"$out/$t.merge.log" 2>&1 || true
    local execs
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$out/$t.log" | grep -o '[0-9]*$' || echo '?')
    echo "$t: $execs executions, $(find "$out/crashes/$t" -type f | wc -l) crash files (log: $out/$t.log)"
}

running=0
for t in "${targets[@]}"; do
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait
