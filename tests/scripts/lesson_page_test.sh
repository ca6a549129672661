#!/usr/bin/env bash
# scripts/plot_lesson.py on the recorded reproduction in tests/data/lesson/quick: the plots each
# lab must give come out as non-empty PNG and SVG files, index.html embeds every PNG and links
# its SVG, and headless Chromium opens the page without console errors and renders a screenshot
# that is not blank. Usage: tests/scripts/lesson_page_test.sh KVBENCH_BINARY
set -euo pipefail

kvbench=${1:?usage: lesson_page_test.sh KVBENCH_BINARY}
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

cp -r "$root/tests/data/lesson/quick" "$tmp/lesson"
"$python" "$root/scripts/plot_lesson.py" "$tmp/lesson" --kvbench "$kvbench" >"$tmp/plot.log" 2>&1 ||
  { cat "$tmp/plot.log" >&2; fail "plot_lesson.py exited non-zero"; exit 1; }

# Each lab's plots: <lab>:<plot> pairs, one per line in expected-plots.
while read -r lab plot; do
  for ext in png svg; do
    [[ -s $tmp/lesson/plots/$lab/$plot.$ext ]] || fail "plots/$lab/$plot.$ext missing or empty"
  done
  grep -q '<svg' "$tmp/lesson/plots/$lab/$plot.svg" || fail "plots/$lab/$plot.svg is not an SVG"
done <"$tmp/lesson/expected-plots"

"$python" - "$tmp/lesson" <<'PY' || fail "index.html does not embed every PNG and link every SVG"
import base64, os, re, sys
out = sys.argv[1]
page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
expected = [l.split() for l in open(os.path.join(out, "expected-plots")) if l.strip()]
images = dict((name, data) for data, name in re.findall(
    r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="[^"]*" data-file="([^"]+)"', page))
on_disk = sorted(os.path.relpath(os.path.join(d, f), out) for d, _, files in
                 os.walk(os.path.join(out, "plots")) for f in files if f.endswith(".png"))
ok = sorted(images) == on_disk and page.count("<img ") == len(images)
ok = ok and all(f"plots/{lab}/{plot}.png" in images for lab, plot in expected)
ok = ok and all(base64.b64decode(data) == open(os.path.join(out, name), "rb").read()
                for name, data in images.items())
ok = ok and all(f'href="{name[:-4]}.svg"' in page for name in images)
ok = ok and page.count('class="verdict"') >= 10 and "<h1>kvbench: the lesson, reproduced</h1>" in page
sys.exit(0 if ok else 1)
PY

# Headless Chromium: no console errors, and a screenshot with something drawn on it.
command -v "$chromium" >/dev/null || { fail "$chromium not found (scripts/setup-deps.sh installs it)"; exit 1; }
shot=$tmp/shot.png
timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 --window-size=1200,2400 \
  --screenshot="$shot" "file://$tmp/lesson/index.html" >"$tmp/chromium.log" 2>&1 ||
  fail "chromium exited non-zero: $(tail -5 "$tmp/chromium.log")"
if grep -E 'CONSOLE|Uncaught|ERR_FILE_NOT_FOUND|Failed to load resource' "$tmp/chromium.log" >&2; then
  fail "the page logged errors in Chromium"
fi
[[ -s $shot ]] || fail "no screenshot"
[[ -s $shot ]] && { "$python" - "$shot" <<'PY' || fail "the screenshot is blank"
import sys
import matplotlib.image as mpimg
img = mpimg.imread(sys.argv[1])[..., :3]
# A page with tables and plots has many distinct shades; a blank one has one.
sys.exit(0 if img.std() > 0.05 and (img.reshape(-1, 3).min(axis=1) < 0.5).mean() > 0.005 else 1)
PY
}

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "lesson page checks passed"
