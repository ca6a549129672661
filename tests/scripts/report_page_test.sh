#!/usr/bin/env bash
# report.html, the page of a run: `kvbench report RUN -o page.html` on recorded runs, opened in
# headless Chromium. The page logs no error, its findings are the report's (summary.json's
# "findings", every one), each plot in its data drew every one of its points inside its axes (the
# page's own count, after Chart.js laid them out), the plots the run must have are there, and a
# screenshot is not blank. Usage: tests/scripts/report_page_test.sh KVBENCH_BINARY
set -euo pipefail

kvbench=${1:?usage: report_page_test.sh KVBENCH_BINARY}
root=$(cd "$(dirname "$0")/../.." && pwd)
python=/usr/bin/python3
chromium=${KVBENCH_CHROMIUM:-chromium}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "FAIL: $1" >&2
  failures=$((failures + 1))
}
command -v "$chromium" >/dev/null || { echo "FAIL: $chromium not found (scripts/setup-deps.sh installs it)" >&2; exit 1; }

chrome() {
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-quic \
    --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 --window-size=1200,3000 "$@"
}

# run: the plots it must have.
while read -r run plots; do
  out=$tmp/$run
  mkdir -p "$out"
  "$kvbench" report "$root/tests/data/runs/$run" -o "$out/page.html" -o "$out/summary.json" \
    2>"$out/report.err" || { fail "$run: kvbench report exited non-zero: $(cat "$out/report.err")"; continue; }
  if grep -q 'src="http\|href="http' "$out/page.html"; then
    fail "$run: the page loads something from the network"
  fi
  chrome --dump-dom "file://$out/page.html" >"$out/dom.html" 2>"$out/chromium.log" ||
    fail "$run: chromium exited non-zero: $(tail -5 "$out/chromium.log")"
  if grep -E 'CONSOLE|Uncaught|Failed to load resource' "$out/chromium.log" >&2; then
    fail "$run: the page logged errors in Chromium"
  fi
  "$python" - "$out" "$plots" <<'PY' || fail "$run: the page's findings or plots are not as the report's"
import html, json, os, re, sys
out, expected = sys.argv[1], sys.argv[2].split(",")
dom = open(os.path.join(out, "dom.html"), encoding="utf-8").read()
page = open(os.path.join(out, "page.html"), encoding="utf-8").read()
summary = json.load(open(os.path.join(out, "summary.json"), encoding="utf-8"))
ok = True
def bad(why):
    global ok
    ok = False
    print("  " + why, file=sys.stderr)
shown = [html.unescape(t) for t in re.findall(r'<li data-topic="[^"]*">(.*?)</li>', dom)]
wanted = [f["text"] for f in summary["findings"]]
if shown != wanted or len(wanted) < 3:
    bad(f"findings on the page {shown[:2]}... against the report's {wanted[:2]}...")
data = json.loads(re.search(r'<script id="kvbench-data" type="application/json">(.*?)</script>',
                            page, re.S).group(1).replace("<\\/", "</"))
drawn_text = re.search(r'<pre id="drawn">(.*?)</pre>', dom, re.S)
drawn = json.loads(html.unescape(drawn_text.group(1))) if drawn_text and drawn_text.group(1) else {}
ids = [p["id"] for p in data["plots"]]
for want in expected:
    if want and want not in ids:
        bad(f"no {want} plot (the page has {ids})")
for p in data["plots"]:
    points = sum(len(d["points"]) for d in p["datasets"] if not d["line"])
    if points == 0 or drawn.get(p["id"]) != points:
        bad(f"plot {p['id']}: {drawn.get(p['id'])} of its {points} points drawn")
sys.exit(0 if ok else 1)
PY
done <<'RUNS'
quickstart ttft,decode,drift,timeline,memory
conversation-tiny turns,memory
trace-tiny trace,timeline
prefix-reuse-tiny edit,timeline
answers-tiny answers,ttft
RUNS

# The quick start's page, as a picture: something drawn on it.
shot=$tmp/shot.png
chrome --screenshot="$shot" "file://$tmp/quickstart/page.html" >"$tmp/shot.log" 2>&1 ||
  fail "chromium's screenshot exited non-zero: $(tail -5 "$tmp/shot.log")"
[[ -s $shot ]] || fail "no screenshot"
[[ -s $shot ]] && { "$python" - "$shot" <<'PY' || fail "the screenshot is blank"
import sys
import matplotlib.image as mpimg
img = mpimg.imread(sys.argv[1])[..., :3]
# Plots draw coloured points: a share of the pixels is neither white nor grey.
colour = (img.max(axis=2) - img.min(axis=2)) > 0.25
sys.exit(0 if img.std() > 0.05 and colour.mean() > 0.001 else 1)
PY
}

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "report page checks passed"
