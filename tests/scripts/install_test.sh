#!/usr/bin/env bash
# kvbench installed: `cmake --install` into a temporary prefix lays out the binary, the scenarios,
# the lesson's figures, the scripts, the man page and the bash completion (which completes
# subcommands, options and the bundled scenario names); the Debian package `cpack` makes holds
# the same files with its library dependencies; and the package, unpacked outside the source tree,
# runs the quick start by name, finding its scenario beside the binary and llama-server in the
# user's data folder, where an installed get-llama-server.sh puts it.
# Usage: tests/scripts/install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail

build=$(cd "$1" && pwd)
root=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "install_test: FAIL: $*" >&2
  failures=$((failures + 1))
}

prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/kvbench share/kvbench/scenarios/quickstart.json \
  share/kvbench/scenarios/lesson/figures.json share/kvbench/scripts/get-llama-server.sh \
  share/kvbench/scripts/plot_run.py share/kvbench/scripts/host-run.sh \
  share/kvbench/scripts/recipes/slurm/submit.sh \
  share/bash-completion/completions/kvbench \
  share/kvbench/schemas/kvbench.report.v1.schema.json \
  share/doc/kvbench/README.md share/man/man1/kvbench.1; do
  [ -e "$prefix/$f" ] || fail "cmake --install left out $f"
done
grep -q '^\.SS "kvbench run"' "$prefix/share/man/man1/kvbench.1" ||
  fail "the man page has no section for kvbench run"
[ "$("$prefix/bin/kvbench" --version | cut -d' ' -f1)" = kvbench ] || fail "--version"

# The completion, as bash runs it.
complete_words() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _kvbench
           printf "%s\n" "${COMPREPLY[@]}"' _ "$prefix/share/bash-completion/completions/kvbench" "$@"
}
complete_words kvbench r | grep -qx run || fail "'kvbench r<TAB>' does not offer run"
complete_words kvbench run --res | grep -qx -- --results || fail "'run --res<TAB>' lacks --results"
complete_words kvbench run quick | grep -qx quickstart ||
  fail "'run quick<TAB>' does not offer the bundled quickstart"
complete_words kvbench history "" | grep -qx list || fail "'history <TAB>' does not offer list"

# The Debian package.
cpack --config "$build/CPackConfig.cmake" -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1 ||
  { cat "$tmp/cpack.log" >&2; fail "cpack failed"; }
deb=$(ls "$tmp"/pkg/kvbench_*.deb 2>/dev/null | head -n 1)
if [ -z "$deb" ]; then
  fail "cpack made no kvbench_*.deb"
else
  dpkg-deb -f "$deb" Depends >"$tmp/depends"
  dpkg-deb -c "$deb" >"$tmp/contents"
  grep -q libcurl "$tmp/depends" || fail "the package does not depend on libcurl"
  grep -q './usr/bin/kvbench$' "$tmp/contents" || fail "the package has no /usr/bin/kvbench"
  grep -q './usr/share/man/man1/kvbench.1' "$tmp/contents" || fail "the package has no man page"
  dpkg-deb -x "$deb" "$tmp/unpacked"

  # The quick start from the unpacked package, outside the source tree: the scenario by name,
  # llama-server from the user's data folder (here a link to the one the tests use).
  mkdir -p "$tmp/data/kvbench" "$tmp/elsewhere"
  ln -s "$root/.deps/llama" "$tmp/data/kvbench/llama"
  (cd "$tmp/elsewhere" && env -u KVBENCH_LLAMA_SERVER XDG_DATA_HOME="$tmp/data" \
    "$tmp/unpacked/usr/bin/kvbench" run quickstart --results "$tmp/elsewhere/results" -q \
    >"$tmp/report.md" 2>"$tmp/run.err") || { cat "$tmp/run.err" >&2; fail "the quick start failed"; }
  run_json=$(ls "$tmp"/elsewhere/results/*/run.json 2>/dev/null | head -n 1)
  if [ -z "$run_json" ]; then
    fail "the quick start left no run folder"
  else
    python3 - "$run_json" "$tmp" <<'PY' || fail "run.json does not show the installed files in use"
import json, sys
run = json.load(open(sys.argv[1]))
tmp = sys.argv[2]
scenario = run["scenario_file"]
binary = json.dumps(run["server"])
assert scenario == tmp + "/unpacked/usr/share/kvbench/scenarios/quickstart.json", scenario
assert tmp + "/data/kvbench/llama/bin/llama-server" in binary, binary
assert run["status"] == "complete", run["status"]
PY
  fi
  grep -q '^What kvbench found (quickstart):' "$tmp/report.md" || fail "the quick start printed no findings"
  grep -q '^- How far to trust it: ' "$tmp/report.md" || fail "the quick start did not say how far to trust it"
  ls "$tmp"/elsewhere/results/*/report.html >/dev/null 2>&1 || fail "the quick start wrote no report.html"
fi

if [ "$failures" -gt 0 ]; then
  exit 1
fi
echo "install_test: ok (prefix install, completion, package, quick start from the package)"
