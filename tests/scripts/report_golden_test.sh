#!/usr/bin/env bash
# `kvbench report` on the recorded runs in tests/data/runs/, against the files in
# tests/data/golden/<run>/: the Markdown on stdout (report.md), --json (report.json), --csv
# (conditions.csv) and --calls-csv (calls.csv), byte for byte. Pins every printer of the run
# report. With KVBENCH_UPDATE_GOLDEN=1 it writes the golden files instead (then read the diff).
# Usage: tests/scripts/report_golden_test.sh KVBENCH_BINARY
set -euo pipefail

kvbench=${1:?usage: report_golden_test.sh KVBENCH_BINARY}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
checked=0

for run in "$root"/tests/data/runs/*/; do
  name=$(basename "$run")
  out=$tmp/$name
  mkdir -p "$out"
  if ! "$kvbench" report "$run" --json "$out/report.json" --csv "$out/conditions.csv" \
    --calls-csv "$out/calls.csv" >"$out/report.md" 2>"$out/stderr"; then
    echo "FAIL $name: kvbench report exited non-zero: $(cat "$out/stderr")" >&2
    failures=$((failures + 1))
    continue
  fi
  golden=$root/tests/data/golden/$name
  if [ "${KVBENCH_UPDATE_GOLDEN:-0}" = 1 ]; then
    mkdir -p "$golden"
    cp "$out"/report.md "$out"/report.json "$out"/conditions.csv "$out"/calls.csv "$golden/"
    echo "wrote $golden"
    continue
  fi
  for f in report.md report.json conditions.csv calls.csv; do
    checked=$((checked + 1))
    if ! diff -u "$golden/$f" "$out/$f" >"$tmp/diff" 2>&1; then
      echo "FAIL $name/$f differs from tests/data/golden/$name/$f:" >&2
      head -n 40 "$tmp/diff" >&2
      failures=$((failures + 1))
    fi
  done
done

if [ "${KVBENCH_UPDATE_GOLDEN:-0}" = 1 ]; then
  [ "$failures" -eq 0 ] && echo "report_golden: golden files written" && exit 0
  exit 1
fi
if [ "$failures" -gt 0 ]; then
  echo "report_golden: $failures of $checked files differ" >&2
  exit 1
fi
echo "report_golden: $checked files equal their golden copies"
