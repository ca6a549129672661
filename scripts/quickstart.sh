#!/usr/bin/env bash
# The quick start: installs what running needs (scripts/setup-deps.sh --for run), fetches
# llama-server, builds only the kvbench binary (no tests, no benchmarks) and runs the default
# scenario against the embedded default, a managed llama-server with a synthetic model; prints
# the report. Extra arguments go to `kvbench run`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup-deps.sh" --for run
"$root/scripts/get-llama-server.sh"
"$root/scripts/build.sh" -DKVBENCH_TESTS=OFF -DKVBENCH_BENCH=OFF
"$root/build/kvbench" run "$root/scenarios/quickstart.json" --results "$root/results" "$@"
