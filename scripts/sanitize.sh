#!/usr/bin/env bash
# Builds the unit tests with AddressSanitizer and UndefinedBehaviorSanitizer (Debug, into
# build-sanitize/) and runs them; any sanitizer report fails the run. Extra arguments go to ctest.
# KVBENCH_SANITIZE_BUILD_DIR overrides the build folder; ccache is used when installed.
# KVBENCH_SANITIZE_CXX names the compiler: by default the release's clang (clang++-14 on Debian 12,
# clang++-19 on 13, else clang++, else the system's c++): on 2 cores it compiles one of the largest files of this debug build in 15 s, g++ in 27 s.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KVBENCH_SANITIZE_BUILD_DIR:-$root/build-sanitize}
jobs=${KVBENCH_JOBS:-$(nproc)}

cxx=${KVBENCH_SANITIZE_CXX:-$(command -v clang++-14 || command -v clang++-19 || command -v clang++ || command -v c++)}

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
compiler=()
if [ ! -f "$build/CMakeCache.txt" ]; then
  compiler=(-DCMAKE_CXX_COMPILER="$cxx")  # a folder already configured keeps its compiler
fi
cmake "${generator[@]}" "${compiler[@]}" -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DKVBENCH_SANITIZE=address,undefined \
  -DKVBENCH_BENCH=OFF -DKVBENCH_WERROR=ON "${launcher[@]}" >/dev/null

# Only the unit test executables (tests/<module>/), not the kvbench binary or the integration tests.
targets=()
for dir in "$root"/tests/*/; do
  name=$(basename "$dir")
  if [ -f "$dir/CMakeLists.txt" ] && [ "$name" != integration ] && [ "$name" != bench ] &&
    [ "$name" != fuzz ] && [ "$name" != fixtures ]; then
    targets+=("test_$name")
  fi
done
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

cd "$build"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest -L unit --output-on-failure --timeout 600 -j "$jobs" "$@"
