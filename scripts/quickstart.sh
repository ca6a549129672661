#!/usr/bin/env bash
# The quick start: installs what running needs (scripts/setup-deps.sh --for run), builds only the
# kvbench binary (no tests, no benchmarks) while llama-server is fetched beside it, and runs the
# default scenario against the embedded default, a managed llama-server with a synthetic model.
# One line per phase with its time; a phase's own output goes to build/quickstart/<phase>.log and
# is shown only when it fails. The run prints what it found, the condition table and where the
# report and its page are. Extra arguments go to `kvbench run`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=$root/build/quickstart
mkdir -p "$logs"
begin=$SECONDS

# phase NAME WHAT COMMAND...: runs COMMAND with its output in NAME.log, and says how long it took.
phase() {
  local name=$1 what=$2 start=$SECONDS
  shift 2
  printf 'quickstart: %-44s' "$what"
  if "$@" >"$logs/$name.log" 2>&1; then
    printf ' %4d s\n' $((SECONDS - start))
  else
    printf ' failed after %d s; the end of %s:\n' $((SECONDS - start)) "$logs/$name.log"
    tail -n 25 "$logs/$name.log" >&2
    exit 1
  fi
}

phase packages "1/4 Debian packages (setup-deps --for run)" "$root/scripts/setup-deps.sh" --for run
# llama-server comes from the network while the compiler keeps the cores busy.
"$root/scripts/get-llama-server.sh" >"$logs/llama-server.log" 2>&1 &
fetch=$!
phase build "2/4 kvbench, the binary only" \
  "$root/scripts/build.sh" -DKVBENCH_TESTS=OFF -DKVBENCH_BENCH=OFF
# The fetch writes its own log; waiting for it shows that log if it failed.
fetched() {
  wait "$fetch" || { cat "$logs/llama-server.log"; return 1; }
}
phase llama-server-wait "3/4 llama-server (fetched during the build)" fetched
printf 'quickstart: %-44s\n' "4/4 the default scenario (quickstart.json)"
"$root/build/kvbench" run "$root/scenarios/quickstart.json" --results "$root/results" "$@"
printf 'quickstart: done in %d s\n' $((SECONDS - begin))
