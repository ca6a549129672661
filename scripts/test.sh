#!/usr/bin/env bash
# Sets up everything and runs the whole test suite: a warnings-as-errors build, the format check,
# unit tests, and integration tests against a real llama-server with synthetic models; then the
# unit tests again under ASan+UBSan (scripts/sanitize.sh) and each fuzz target for a bounded time
# (scripts/fuzz.sh, KVBENCH_FUZZ_SECONDS each, 10 by default here). KVBENCH_SKIP_SANITIZE=1 or
# KVBENCH_SKIP_FUZZ=1 leaves those out. Extra arguments go to the main ctest run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup-deps.sh" --for test
"$root/scripts/get-llama-server.sh"
"$root/scripts/check-format.sh"
# Tests and benchmarks on: a build folder the quick start configured has them off.
"$root/scripts/build.sh" -DKVBENCH_WERROR=ON -DKVBENCH_TESTS=ON -DKVBENCH_BENCH=ON
(cd "${KVBENCH_BUILD_DIR:-$root/build}" && ctest --output-on-failure --timeout 900 -j "$(nproc)" "$@") |
  tee "${TMPDIR:-/tmp}/kvbench-ctest.log"
main_summary=$(grep -E 'tests passed|tests failed' "${TMPDIR:-/tmp}/kvbench-ctest.log" | tail -n 1)

if [ "${KVBENCH_SKIP_SANITIZE:-0}" != 1 ]; then
  echo "test: unit tests under ASan+UBSan (scripts/sanitize.sh)"
  "$root/scripts/sanitize.sh"
fi
if [ "${KVBENCH_SKIP_FUZZ:-0}" != 1 ]; then
  echo "test: fuzz targets (scripts/fuzz.sh)"
  KVBENCH_FUZZ_SECONDS=${KVBENCH_FUZZ_SECONDS:-10} "$root/scripts/fuzz.sh"
fi
echo "test: main suite: $main_summary"
echo "test: PASSED (build, format, unit and integration tests, sanitizers, fuzzing)"
