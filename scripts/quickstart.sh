#!/usr/bin/env bash
# Sets up everything and runs the default scenario against the embedded default: a managed
# llama-server with a synthetic model. Then prints the report.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup-deps.sh"
"$root/scripts/get-llama-server.sh"
"$root/scripts/build.sh"
"$root/build/kvbench" run "$root/scenarios/quickstart.json" --results "$root/results" "$@"
