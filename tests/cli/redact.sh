#!/usr/bin/env bash
# Secrets never leak: a log full of planted secrets is diagnosed in every
# format and none of them appears in a report (while --no-redact shows
# them, so the test sees what it thinks it sees); --anonymize leaves no
# original host name, IP address, user name or email.
set -uo pipefail
bin=${CULPRIT_BIN:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { pass=$((pass+1)); echo "ok   $1"; }
bad() { fail=$((fail+1)); echo "FAIL $1"; }

secrets=(
    hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789
    0123456789abcdef0123456789abcdef01234567
    fedcba9876543210fedcba9876543210fedcba98
    AKIAIOSFODNN7EXAMPLE
    wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
    ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789
    github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz
    eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl
    hunter2pass
    pw_SECRETVALUE2
    tok_SECRETVALUE1
    json_SECRETVALUE3
    svc_SECRETVALUE4
    apikey_SECRETVALUE5
    MIIEsecretKEYbody
    dXNlcjpzZWNyZXQ
)
names=(node017 node018 gpu-a100-7.cluster.internal 10.1.2.3 10.1.2.4 fe80::1ff:fe23:4567:890a alice carol@example.org)

log="$work/run/alice/train.log"
mkdir -p "$work/run/alice"
cat > "$log" <<LOG
node017: [default0]:2026-11-29 16:21:30,100 [RANK 0] INFO: step 1/8 loss=1.48 on gpu-a100-7.cluster.internal
node018: [default1]:2026-11-29 16:21:30,100 [RANK 1] INFO: step 1/8 loss=1.37
node018: [default1]:2026-11-29 16:21:34,279 [RANK 1] INFO: wandb login ${secrets[1]}
node018: [default1]:Traceback (most recent call last):
node018: [default1]:  File "/home/alice/proj/train.py", line 48, in main
node018: [default1]:    fetch(url)
node018: [default1]:  File "/home/alice/proj/hub.py", line 9, in fetch
node018: [default1]:    raise RuntimeError(msg)
node018: [default1]:RuntimeError: from 10.1.2.3 to 10.1.2.4 and fe80::1ff:fe23:4567:890a (carol@example.org): https://bob:${secrets[8]}@hub.example.com/x HF_TOKEN=${secrets[0]} WANDB_API_KEY=${secrets[2]} ${secrets[3]} aws_secret_access_key=${secrets[4]} ${secrets[5]} ${secrets[6]} Authorization: Bearer ${secrets[7]} password=${secrets[9]}
node017: [default0]:2026-11-29 16:21:40,000 [RANK 0] ERROR: peer 10.1.2.4 (node018) closed the connection
LOG

# The rest travel in the names of inputs that do not exist: the report's
# warnings name them.
missing=(
    "$work/run/alice/wandb login ${secrets[1]}.log"
    "$work/run/token: ${secrets[10]}.log"
    "$work/run/{\"api_key\": \"${secrets[11]}\"}.log"
    "$work/run/MY_SERVICE_SECRET=${secrets[12]}"
    "$work/run/apikey=${secrets[13]}"
    "$work/run/-----BEGIN RSA PRIVATE KEY-----${secrets[14]}"
    "$work/run/Authorization: Basic ${secrets[15]}"
)

# run NAME ARGS...: the report on stdout into $work/NAME
run() {
    local name=$1; shift
    timeout 60 "$bin" diagnose -q "$@" "$log" "${missing[@]}" > "$work/$name" 2>"$work/$name.err"
    local status=$?
    [ "$status" = 1 ] || bad "$name: exit $status, want 1"
}

for fmt in text json markdown; do
    run "$fmt" --"$fmt"
    run "$fmt-raw" --"$fmt" --no-redact
    run "$fmt-anon" --"$fmt" --anonymize
    left=() shown=0
    for s in "${secrets[@]}"; do
        grep -qF -- "$s" "$work/$fmt" && left+=("$s")
        grep -qF -- "$s" "$work/$fmt-anon" && left+=("$s (anonymized)")
        grep -qF -- "$s" "$work/$fmt-raw" && shown=$((shown+1))
    done
    if [ ${#left[@]} -gt 0 ]; then bad "$fmt: secrets left: ${left[*]}"; else ok "$fmt: no secret left"; fi
    if [ "$shown" = "${#secrets[@]}" ]; then ok "$fmt --no-redact: all ${#secrets[@]} secrets shown"
    else bad "$fmt --no-redact: only $shown of ${#secrets[@]} secrets in the report"; fi
    grep -qF '[redacted]' "$work/$fmt" || bad "$fmt: no [redacted] marker"
    left=()
    for n in "${names[@]}"; do grep -qF -- "$n" "$work/$fmt-anon" && left+=("$n"); done
    if [ ${#left[@]} -gt 0 ]; then bad "$fmt --anonymize: names left: ${left[*]}"; else ok "$fmt --anonymize: no host, IP, user or email left"; fi
    grep -q 'host-1' "$work/$fmt-anon" || bad "$fmt --anonymize: no host-1"
done

for f in json json-raw json-anon; do
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$work/$f" || bad "$f: not JSON"
done
# consistent: the culprit's host and its rank row carry the same alias
python3 - "$work/json-anon" <<'PY' && ok "json --anonymize: aliases consistent" || bad "json --anonymize: aliases inconsistent"
import json, sys
d = json.load(open(sys.argv[1]))
host = d["diagnosis"]["host"]
rows = {r["rank"]: r["host"] for r in d["ranks"]}
assert host and host.startswith("host-"), host
assert rows.get(d["verdict"]["first_rank"]) == host, (rows, host)
assert len(set(rows.values())) == 2, rows
PY

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
