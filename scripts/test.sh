#!/usr/bin/env bash
# Sets up everything and runs the whole test suite: a warnings-as-errors build, the format check,
# unit tests, and integration tests against a real llama-server with synthetic models.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup-deps.sh"
"$root/scripts/get-llama-server.sh"
"$root/scripts/check-format.sh"
"$root/scripts/build.sh" -DKVBENCH_WERROR=ON
cd "${KVBENCH_BUILD_DIR:-$root/build}"
ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@"
