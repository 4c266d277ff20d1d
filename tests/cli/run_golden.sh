#!/usr/bin/env bash
# Golden CLI tests: each folder under tests/cli/golden/ holds `args` (the
# command line after `culprit`, one argument per line, run inside that
# folder), `stdout`, `stderr` and `status`. The test runs the command and
# compares all three exactly.
#   run_golden.sh            check every case
#   run_golden.sh --update   rewrite the expected files from the current build
# Set CULPRIT_VALGRIND=1 to run each command under valgrind memcheck too.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${CULPRIT_BIN:?set CULPRIT_BIN to the culprit binary}
update=0
[ "${1:-}" = --update ] && update=1
export NO_COLOR=1 CULPRIT_RULES=${CULPRIT_RULES:-$here/../../rules}
pass=0 fail=0
for case_dir in "$here"/golden/*/; do
    name=$(basename "$case_dir")
    mapfile -t args < "$case_dir/args"
    runner=()
    if [ "${CULPRIT_VALGRIND:-0}" = 1 ]; then
        runner=(valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=99)
    fi
    out=$(mktemp) err=$(mktemp)
    (cd "$case_dir" && "${runner[@]}" "$bin" "${args[@]}" >"$out" 2>"$err" </dev/null)
    status=$?
    if [ $update = 1 ]; then
        cp "$out" "$case_dir/stdout"
        cp "$err" "$case_dir/stderr"
        echo "$status" > "$case_dir/status"
        echo "updated $name"
    elif [ "$status" = "$(cat "$case_dir/status")" ] && cmp -s "$out" "$case_dir/stdout" && cmp -s "$err" "$case_dir/stderr"; then
        pass=$((pass+1))
    else
        fail=$((fail+1))
        echo "FAIL $name: status $status (want $(cat "$case_dir/status"))"
        diff -u "$case_dir/stdout" "$out" | head -40
        diff -u "$case_dir/stderr" "$err" | head -20
    fi
    rm -f "$out" "$err"
done
[ $update = 1 ] && exit 0
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
