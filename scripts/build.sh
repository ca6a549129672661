#!/usr/bin/env bash
# Configures and builds kvbench into build/ (Release). Extra arguments go to cmake's configure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KVBENCH_BUILD_DIR:-$root/build}
# Ninja for a new build folder where it is installed: it compiles every object as soon as its own
# inputs are ready, where make waits for whole targets (twice as fast here on 2 cores). A folder
# already configured keeps its generator.
generator=()
if [ ! -f "$build/CMakeCache.txt" ] && command -v ninja >/dev/null; then
  generator=(-G Ninja)
fi
cmake "${generator[@]}" -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
