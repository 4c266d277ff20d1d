#!/usr/bin/env bash
# Builds checkpoint trees of every layout (make_trees.py), damages them, and
# checks that `culprit ckpt --json` names every defect and picks the right
# newest safe checkpoint; also the exit statuses.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${CULPRIT_BIN:?set CULPRIT_BIN to the culprit binary}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/make_trees.py" "$tmp/trees" > "$tmp/expect.json" || { echo "make_trees.py failed"; exit 1; }
fail=0
for case_dir in "$tmp"/trees/*/; do
    name=$(basename "$case_dir")
    "$bin" ckpt --json "$case_dir" > "$tmp/$name.json" 2> "$tmp/$name.err"
    echo $? > "$tmp/$name.status"
done
"$bin" ckpt --json "$tmp/does-not-exist" > /dev/null 2>&1; [ $? = 2 ] || { echo "FAIL missing folder: want status 2"; fail=1; }
mkdir -p "$tmp/empty"
"$bin" ckpt "$tmp/empty" > /dev/null 2>&1; [ $? = 2 ] || { echo "FAIL empty folder: want status 2"; fail=1; }
"$bin" ckpt > /dev/null 2>&1; [ $? = 2 ] || { echo "FAIL no argument: want status 2"; fail=1; }
python3 - "$tmp" <<'PY' || fail=1
import json, sys
tmp = sys.argv[1]
exp = json.load(open(f"{tmp}/expect.json"))
bad = 0
for name, want in exp["cases"].items():
    got = json.load(open(f"{tmp}/{name}.json"))
    status = int(open(f"{tmp}/{name}.status").read())
    errs = []
    if got.get("schema") != "culprit.ckpt/1":
        errs.append("schema")
    by = {c["path"]: c for c in got["checkpoints"]}
    for path, words in want["unsafe"].items():
        c = by.get(path)
        if not c or c["safe"] is not False:
            errs.append(f"{path} should be unsafe: {c}")
            continue
        text = " ".join(c["problems"])
        errs += [f"{path}: no problem names {w!r}: {c['problems']}" for w in words if w not in text]
    for path in want.get("unknown", []):
        if path not in by or by[path]["safe"] is not None:
            errs.append(f"{path} should be unknown")
    for path, c in by.items():
        if path not in want["unsafe"] and path not in want.get("unknown", []) and c["safe"] is not True:
            errs.append(f"{path} should be safe: {c['problems']}")
    if got["newest_safe"] != want["newest_safe"]:
        errs.append(f"newest_safe {got['newest_safe']} (want {want['newest_safe']})")
    if got["latest"] != want["latest"]:
        errs.append(f"latest {got['latest']} (want {want['latest']})")
    for w in want.get("warnings", []):
        if not any(w in x for x in got["warnings"]):
            errs.append(f"no warning names {w!r}: {got['warnings']}")
    if status != want.get("status", 1):
        errs.append(f"status {status} (want {want.get('status', 1)})")
    for e in errs:
        print(f"FAIL {name}: {e}")
    bad += bool(errs)
print(f"{len(exp['cases']) - bad} passed, {bad} failed (torch.save files {'real' if exp['torch'] else 'hand-made'})")
sys.exit(1 if bad else 0)
PY
exit $fail
