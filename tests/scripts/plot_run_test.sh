#!/usr/bin/env bash
# scripts/plot_run.py on the recorded runs in tests/data/runs/: each run folder holds run.json,
# calls.jsonl and expected-plots (the plot names that run must give, one line). Checks that
# exactly those plots come out as non-empty PNG and SVG files, and that index.html embeds each PNG
# byte for byte. Usage: tests/scripts/plot_run_test.sh KVBENCH_BINARY
set -euo pipefail

kvbench=${1:?usage: plot_run_test.sh KVBENCH_BINARY}
root=$(cd "$(dirname "$0")/../.." && pwd)
python=/usr/bin/python3
all_plots="ttft decode memory prefix_reuse conversation_ttft conversation_reuse trace"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "FAIL $1: $2" >&2
  failures=$((failures + 1))
}

check_run() {
  local run=$1 name out expected
  name=$(basename "$run")
  out=$tmp/$name
  expected=$(cat "$run/expected-plots")
  if ! "$python" "$root/scripts/plot_run.py" "$run" --kvbench "$kvbench" --out "$out" \
    >"$tmp/$name.log" 2>&1; then
    fail "$name" "plot_run.py exited non-zero: $(cat "$tmp/$name.log")"
    return
  fi
  for plot in $all_plots; do
    if [[ " $expected " == *" $plot "* ]]; then
      for ext in png svg; do
        [[ -s $out/$plot.$ext ]] || fail "$name" "$plot.$ext missing or empty"
      done
      head -c 8 "$out/$plot.png" | od -An -tx1 | tr -d ' \n' | grep -qx 89504e470d0a1a0a ||
        fail "$name" "$plot.png is not a PNG"
      grep -q '<svg' "$out/$plot.svg" || fail "$name" "$plot.svg is not an SVG"
    elif [[ -e $out/$plot.png || -e $out/$plot.svg ]]; then
      fail "$name" "$plot plotted although the run has no data for it"
    fi
  done
  [[ -s $out/index.html ]] || { fail "$name" "index.html missing or empty"; return; }
  # Every expected PNG is embedded, as the same bytes, and the page names no other image.
  "$python" - "$out" $expected <<'PY' || fail "$name" "index.html does not embed the PNGs"
import base64, os, re, sys
out, plots = sys.argv[1], sys.argv[2:]
page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="[^"]*" '
                    r'data-file="([^"]+)"', page)
found = {name: data for data, name in images}
ok = page.count("<img ") == len(images) and sorted(found) == sorted(p + ".png" for p in plots) and all(
    base64.b64decode(found[p + ".png"]) == open(os.path.join(out, p + ".png"), "rb").read()
    for p in plots)
ok = ok and page.count("<figcaption>") == len(plots) and "<h1>kvbench run: " in page
sys.exit(0 if ok else 1)
PY
  echo "ok $name: $expected"
}

runs=("$root"/tests/data/runs/*/)
[[ -d ${runs[0]} ]] || { echo "FAIL: no recorded runs in tests/data/runs" >&2; exit 1; }
for run in "${runs[@]}"; do
  check_run "${run%/}"
done

# Bad input: a folder without calls.jsonl exits 2 and names the file.
mkdir -p "$tmp/empty-run"
rc=0
"$python" "$root/scripts/plot_run.py" "$tmp/empty-run" --kvbench "$kvbench" 2>"$tmp/bad.log" || rc=$?
[[ $rc -eq 2 ]] || fail "bad input" "exit $rc, expected 2"
grep -q 'calls.jsonl: missing' "$tmp/bad.log" || fail "bad input" "message: $(cat "$tmp/bad.log")"

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "all plot checks passed"
