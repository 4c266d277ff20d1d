#!/usr/bin/env bash
# Bad input never crashes and never silently vanishes: each hostile input,
# next to a real failure log, must produce a message naming the bad input,
# and the real failure must still be diagnosed. Alone, an input with no
# usable text exits 2.
set -uo pipefail
bin=${CULPRIT_BIN:?}
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin") # the tests change folders
work=$(mktemp -d)
trap 'chmod -R u+rwx "$work" 2>/dev/null; rm -rf "$work"' EXIT
pass=0 fail=0

ok() { pass=$((pass+1)); echo "ok   $1"; }
bad() { fail=$((fail+1)); echo "FAIL $1"; }

# A real-looking failure that must survive every hostile neighbour.
good="$work/good.log"
cat > "$good" <<'LOG'
[default0]:2026-11-29 16:21:34,279 [RANK 0] INFO: step 1/8 loss=1.4841
[default2]:2026-11-29 16:21:34,279 [RANK 2] INFO: step 1/8 loss=1.3740
[default2]:Traceback (most recent call last):
[default2]:  File "/home/ml/proj/train.py", line 48, in main
[default2]:    loss = model(batch)
[default2]:  File "/home/ml/proj/model.py", line 21, in forward
[default2]:    raise KeyError(name)
[default2]:KeyError: 'input_ids'
[default0]:Traceback (most recent call last):
[default0]:  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 1541, in all_reduce
[default0]:    work.wait()
[default0]:RuntimeError: [./gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:28346
LOG

# check NAME PATTERN_IN_STDERR WANT_STATUS WANT_RANK INPUT...
check() {
    local name=$1 pattern=$2 want_status=$3 want_rank=$4
    shift 4
    local out="$work/out.json" err="$work/err.txt"
    # vmem_kb=N check ...: also cap the address space; rss_file=F: peak RSS into F;
    # check_timeout=S: stop the run after S seconds (default 120)
    local pre=()
    if [ -n "${rss_file:-}" ] && [ -x /usr/bin/time ]; then pre=(/usr/bin/time -v -o "$rss_file"); fi
    ( if [ -n "${vmem_kb:-}" ] && [ "${asan:-0}" = 0 ]; then ulimit -v "$vmem_kb"; fi
      exec timeout "${check_timeout:-120}" "${pre[@]}" "$bin" diagnose --json "$@" ) >"$out" 2>"$err"
    local status=$?
    if [ "$status" != "$want_status" ]; then
        bad "$name: exit $status, want $want_status"; sed 's/^/    /' "$err" | head -5; return
    fi
    if [ -n "$pattern" ] && ! grep -q -- "$pattern" "$err"; then
        bad "$name: stderr lacks '$pattern'"; sed 's/^/    /' "$err" | head -5; return
    fi
    if [ "$want_rank" != "-" ]; then
        local rank
        rank=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"]["first_rank"])' "$out" 2>/dev/null)
        if [ "$rank" != "$want_rank" ]; then
            bad "$name: first_rank $rank, want $want_rank"
            head -c 600 "$out" | sed 's/^/    /'; sed 's/^/    /' "$err" | head -5; return
        fi
    fi
    ok "$name"
}

check "good log alone" "" 1 2 "$good"

# Random bytes from a fixed seed (not /dev/urandom: now and then those
# begin with a compressor's magic number and are read as a broken archive).
python3 -c 'import random, sys; r = random.Random(7); sys.stdout.buffer.write(bytes([0, 1, 254]) + bytes(r.randrange(256) for _ in range(200000)))' > "$work/core.bin"
check "binary file" "core.bin: binary file" 1 2 "$work/core.bin" "$good"
check "binary file alone" "core.bin" 2 - "$work/core.bin"

head -c 100000 /dev/zero > "$work/zeros.log"
check "only NUL bytes" "zeros.log" 1 2 "$work/zeros.log" "$good"

{ cat "$good"; printf 'garbage\0\0\0 in the middle\n'; } > "$work/nul.log"
check "NUL bytes inside a log" "" 1 2 "$work/nul.log"

python3 -c 'import sys; sys.stdout.write("x" * (100 * 1024 * 1024) + "\n")' > "$work/long.log"
cat "$good" >> "$work/long.log"
check "100 MB line" "long.log: line 1 is longer than" 1 2 "$work/long.log"

gzip -c "$good" > "$work/full.gz"
head -c $(( $(stat -c %s "$work/full.gz") / 2 )) "$work/full.gz" > "$work/cut.log.gz"
check "truncated .gz" "cut.log.gz" 1 2 "$work/cut.log.gz" "$good"

: > "$work/empty.log"
check "empty file" "empty.log" 1 2 "$work/empty.log" "$good"
check "empty input alone" "no log text" 2 - "$work/empty.log"

check "missing file" "nope.log" 1 2 "$work/nope.log" "$good"
check "missing file alone" "nope.log" 2 - "$work/nope.log"

if [ "$(id -u)" != 0 ]; then
    cp "$good" "$work/secret.log"; chmod 000 "$work/secret.log"
    check "unreadable file" "secret.log" 1 2 "$work/secret.log" "$good"
else
    ln -s "$work/does-not-exist" "$work/dangling.log"
    check "unreadable (dangling link)" "dangling.log" 1 2 "$work/dangling.log" "$good"
fi

mkfifo "$work/pipe.log"
check "FIFO" "pipe.log" 1 2 "$work/pipe.log" "$good"

mkdir -p "$work/tree/a"; cp "$good" "$work/tree/a/rank.log"; ln -s .. "$work/tree/a/loop"
check "folder with a symlink loop" "" 1 2 "$work/tree"

check "stdin" "" 1 2 - < "$good"

# ---- more hostile inputs -------------------------------------------------

# Under ASan the address space is reserved up front: no ulimit -v there.
asan=0
# not "ldd | grep -q": with pipefail, grep's early exit can fail the pipe
case "$(ldd "$bin" 2>/dev/null)" in *libasan*) asan=1 ;; esac

# One huge line: kept to max_line, memory bounded. CULPRIT_HOSTILE_BIG=1
# makes it 1 GiB (slow; the default 100 MB keeps CI fast). Peak RSS is
# printed for the record.
mb=100; [ "${CULPRIT_HOSTILE_BIG:-0}" = 1 ] && mb=1024
python3 -c 'import sys
chunk = b"y" * (1 << 20)
for _ in range(int(sys.argv[1])): sys.stdout.buffer.write(chunk)
sys.stdout.buffer.write(b"\n")' "$mb" > "$work/huge.log"
cat "$good" >> "$work/huge.log"
vmem_kb=2097152 rss_file="$work/time.txt" check "${mb} MiB line, 2 GiB address space" "huge.log: line 1 is longer than" 1 2 "$work/huge.log"
if [ -s "$work/time.txt" ]; then
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
    echo "     ${mb} MiB line: peak RSS ${rss} KiB"
    if [ "$asan" = 0 ] && [ "${rss:-0}" -gt 262144 ]; then bad "${mb} MiB line: peak RSS ${rss} KiB > 256 MiB"; fi
fi
rm -f "$work/huge.log"

python3 -c 'import sys; sys.stdout.write("\r" * 3000000)' > "$work/cr.log"
check "a line of only CR" "" 1 2 "$work/cr.log" "$good"

# 200 folders deep, with cyclic symlinks on the way down
deep="$work/deep"; d="$deep"
for i in $(seq 1 200); do d="$d/d"; done
mkdir -p "$d"; cp "$good" "$d/rank.log"
ln -s "$deep" "$d/to-top"; ln -s ../.. "$deep/d/d/up"; ln -s "$deep/b" "$deep/a"; ln -s "$deep/a" "$deep/b"
check "200 nested folders, cyclic symlinks" "" 1 2 "$deep"

check "a device (/dev/null)" "/dev/null" 1 2 /dev/null "$good"
check "a device alone" "/dev/null" 2 - /dev/null

# truncated compressed files and archives
mkdir -p "$work/arc/node1"; cp "$good" "$work/arc/node1/rank.log"
for i in $(seq 1 200); do echo "INFO: step $i filler line to make the member long enough to cut"; done >> "$work/arc/node1/rank.log"
if command -v zstd >/dev/null; then
    zstd -q -c "$work/arc/node1/rank.log" > "$work/full.zst"
    head -c $(( $(stat -c %s "$work/full.zst") / 2 )) "$work/full.zst" > "$work/cut.log.zst"
    check "truncated .zst" "cut.log.zst" 1 2 "$work/cut.log.zst" "$good"
fi
tar -C "$work/arc" -cf "$work/full.tar" node1
head -c 1000 "$work/full.tar" > "$work/cut.tar"
check "truncated .tar" "cut.tar" 1 2 "$work/cut.tar" "$good"
python3 -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z: z.write(sys.argv[2], "node1/rank.log")' "$work/full.zip" "$work/arc/node1/rank.log"
head -c $(( $(stat -c %s "$work/full.zip") * 2 / 3 )) "$work/full.zip" > "$work/cut.zip"
check "truncated .zip" "cut.zip" 1 2 "$work/cut.zip" "$good"

# Decompression bombs: about 1 MB that expands to more than 1 GiB must
# stop quickly (ratio limit, 1000) with a message naming it. Concatenated
# gzip members (and zstd frames) make them without compressing a GiB.
# (gzip cannot pass a ratio of about 1030, so its bomb is one byte
# repeated; a gzip of ordinary lines at ratio 300 is read to the end.)
head -c $((8 << 20)) /dev/zero | tr '\0' a > "$work/piece.txt"
gzip -9 -c "$work/piece.txt" > "$work/piece.gz"
for i in $(seq 1 140); do cat "$work/piece.gz"; done > "$work/bomb.log.gz"
vmem_kb=2097152 check "gzip bomb (> 1 GiB)" "bomb.log.gz: .*decompression" 1 2 "$work/bomb.log.gz" "$good"
if command -v zstd >/dev/null; then
    zstd -q -19 -c "$work/piece.txt" > "$work/piece.zst"
    for i in $(seq 1 140); do cat "$work/piece.zst"; done > "$work/bomb.log.zst"
    vmem_kb=2097152 check "zstd bomb (> 1 GiB)" "bomb.log.zst: .*decompression" 1 2 "$work/bomb.log.zst" "$good"
fi
rm -f "$work/piece.txt" "$work"/bomb.log.*

# Members named ../ and /absolute: read, never written anywhere.
python3 -c 'import io, sys, tarfile
data = open(sys.argv[2], "rb").read()
with tarfile.open(sys.argv[1], "w") as t:
    for name in ("../../escape.log", "/tmp/culprit-hostile-abs.log", "ok/../../../up.log"):
        info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))' "$work/evil.tar" "$good"
mkdir -p "$work/cwd/a/b"
before=$(find "$work" | sort | md5sum)
cd "$work/cwd/a/b"
check "archive members with ../ and absolute paths" "" 1 2 ../../../evil.tar
cd - >/dev/null
after=$(find "$work" | sort | md5sum)
if [ "$after" != "$before" ] || [ -e /tmp/culprit-hostile-abs.log ]; then
    bad "archive members with ../ and absolute paths: files appeared"
else
    ok "archive members with ../ and absolute paths: nothing written"
fi

# 100,000 files in one folder (slow-ish: about 10 s)
python3 -c 'import os, sys
d = sys.argv[1]; os.makedirs(d)
for i in range(100000):
    with open(os.path.join(d, "f%06d.log" % i), "w") as f: f.write("INFO: step 1 loss=1.0\n")' "$work/many"
cp "$good" "$work/many/zz-rank.log"
limit=60; [ "$asan" = 1 ] && limit=300 # ASan is slow on many small files
start=$(date +%s)
check_timeout=$limit check "100,000 files in a folder" "" 1 2 "$work/many"
secs=$(( $(date +%s) - start ))
echo "     100,000 files: ${secs} s"
[ "$secs" -le "$limit" ] || bad "100,000 files took ${secs} s"
rm -rf "$work/many"

# Rule files: a bad regex and a missing field name file:line and exit 2.
cat > "$work/badre.rules" <<'RULES'
[rule user.bad_regex]
kind    = python_exception
owner   = user_code
role    = root
weight  = 10
match   = unbalanced (paren
title   = t
means   = m
action  = a
RULES
check "rule file with a bad regex" "badre.rules:[0-9]" 2 - --rules "$work/badre.rules" "$good"
cat > "$work/nofield.rules" <<'RULES'
[rule user.no_title]
kind    = python_exception
owner   = user_code
role    = root
weight  = 10
match   = something broke
RULES
check "rule file with a missing field" "nofield.rules:[0-9]" 2 - --rules "$work/nofield.rules" "$good"

# A damaged rule cache (a disk that filled up mid-write, another
# release's file): the database is compiled again and the diagnosis is
# the same. The cache is mapped, so a file cut short must not be read past.
cache="$work/cache"
CULPRIT_CACHE_DIR="$cache" check "rule cache written" "" 1 2 "$good"
db=$(ls "$cache"/rules-*.hsdb 2>/dev/null | head -1)
if [ -z "$db" ]; then
    bad "rule cache: no rules-*.hsdb written in $cache"
else
    head -c 64 /dev/urandom > "$db"
    CULPRIT_CACHE_DIR="$cache" check "rule cache cut to 64 random bytes" "" 1 2 "$good"
    python3 -c 'import sys; open(sys.argv[1], "wb").write(b"\0" * 300000)' "$db"
    CULPRIT_CACHE_DIR="$cache" check "rule cache of NUL bytes" "" 1 2 "$good"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
