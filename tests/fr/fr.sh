#!/usr/bin/env bash
# Flight Recorder dumps: per-rank dumps written by make_dumps.py (pickle
# protocols 2/4/5 and JSON; format versions 2.3, 2.7, 2.10) for a missing
# rank, a size, a type and a state mismatch, and a culprit whose own dump is
# absent. Each set is diagnosed alone and together with a watchdog log
# excerpt; first_rank, kind and hang must match expect.json.
set -euo pipefail
src=${CULPRIT_SOURCE:?}
bin=${CULPRIT_BIN:?}
if ! command -v python3 >/dev/null; then
    echo "skipped: python3 is not available"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$src/tests/fr/make_dumps.py" "$work"
python3 - "$bin" "$work" <<'PY'
import json, os, subprocess, sys
bin, root = sys.argv[1], sys.argv[2]
expect = json.load(open(os.path.join(root, "expect.json")))
fail = 0
for name, e in sorted(expect.items()):
    for extra in ([], [os.path.join(root, e["log"])]):
        p = subprocess.run([bin, "diagnose", "--json", os.path.join(root, name)] + extra,
                           capture_output=True, text=True)
        label = name + (" + watchdog log" if extra else "")
        try:
            d = json.loads(p.stdout)
        except ValueError:
            print("FAIL %s: no JSON (%s)" % (label, p.stderr.strip()[:200]))
            fail += 1
            continue
        v = d.get("verdict", d)
        got = {k: v.get(k) for k in ("first_rank", "kind", "hang")}
        want = {k: e[k] for k in ("first_rank", "kind", "hang")}
        notes = " ".join(v.get("notes") or d.get("notes") or [])
        ok = got == want and "Flight Recorder" in notes
        print("%s %s%s" % ("ok  " if ok else "FAIL", label, "" if ok else ": got %s, want %s" % (got, want)))
        fail += not ok
print("%d failures" % fail)
sys.exit(1 if fail else 0)
PY
