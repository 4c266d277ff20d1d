#!/usr/bin/env bash
# Bad input never crashes and never silently vanishes: each hostile input,
# next to a real failure log, must produce a message naming the bad input,
# and the real failure must still be diagnosed. Alone, an input with no
# usable text exits 2.
set -uo pipefail
bin=${CULPRIT_BIN:?}
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
    timeout 120 "$bin" diagnose --json "$@" >"$out" 2>"$err"
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

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
