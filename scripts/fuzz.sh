#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan, into build-fuzz/) and runs each on its seed
# corpus in tests/fuzz/corpus/<name>/ for a bounded time. Any crash, sanitizer report, uncaught
# exception or broken invariant fails the script; the input that did it is left in the work
# folder (printed). Arguments: target names (scenario sse ndjson llama_event gguf compat_stream)
# to run a subset.
#   KVBENCH_FUZZ_SECONDS   seconds per target (default 30)
#   KVBENCH_FUZZ_BUILD_DIR build folder (default build-fuzz/)
#   KVBENCH_FUZZ_CXX       clang++ to use (default clang++-14 on Debian 12, clang++-19 on 13, else
#                          clang++)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KVBENCH_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${KVBENCH_FUZZ_SECONDS:-30}
jobs=${KVBENCH_JOBS:-$(nproc)}
cxx=${KVBENCH_FUZZ_CXX:-$(command -v clang++-14 || command -v clang++-19 || command -v clang++ || true)}
[ -n "$cxx" ] || { echo "fuzz: error: clang++ not found (scripts/setup-deps.sh --for test installs it)" >&2; exit 1; }

all=(scenario sse ndjson llama_event gguf compat_stream)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
# Ninja for a new build folder where it is installed: it compiles every object as soon as its own
# inputs are ready, where make waits for whole targets (twice as fast here on 2 cores). A folder
# already configured keeps its generator.
generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
cmake "${generator[@]}" -S "$root" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DKVBENCH_FUZZ=ON -DKVBENCH_SANITIZE=address,undefined -DKVBENCH_TESTS=OFF \
  -DKVBENCH_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$jobs" --target "${targets[@]/#/fuzz_}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for t in "${targets[@]}"; do
  work="$build/fuzz-work/$t"  # new inputs found in this run; the seeds stay untouched
  mkdir -p "$work"
  log="$build/fuzz-work/$t.log"
  echo "fuzz: $t for ${seconds}s (log: $log)"
  if ! (cd "$work" && "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=65536 \
    -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 . "$root/tests/fuzz/corpus/$t" \
    >"$log" 2>&1); then
    tail -n 60 "$log"
    echo "fuzz: $t FAILED; the failing input is in $work (crash-*, leak-*, timeout-*, oom-*)"
    failed+=("$t")
    continue
  fi
  grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$log" | tr '\n' ' ' | sed 's/^/  /'
  echo
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran ${seconds}s each without a finding"
