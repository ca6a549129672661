#!/usr/bin/env bash
# Runs clang-tidy (checks from .clang-tidy, flags from the compile database in build/) on the
# harness .cpp files changed against a base revision, committed or not, and prints its findings.
#   scripts/tidy-changed.sh [BASE]     BASE: default origin/main if it exists, else HEAD~1
#   BUILD_DIR=build-x CLANG_TIDY=clang-tidy-14 scripts/tidy-changed.sh main
# Compares with the merge base of BASE and HEAD, plus untracked files. Exits 0 when no harness
# .cpp changed, else with clang-tidy's status (findings are warnings while .clang-tidy is advisory).
# The unity build's database lists batch files only; clang-tidy borrows each file's flags from
# its neighbours, which is fine for harness/. Configure once with cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD_DIR:-build}
tidy=${CLANG_TIDY:-clang-tidy}
if [[ $# -ge 1 ]]; then
  base=$1
elif git rev-parse -q --verify origin/main >/dev/null; then
  base=origin/main
else
  base=HEAD~1
fi
since=$(git merge-base "$base" HEAD) || {
  echo "tidy-changed: no common history with '$base'" >&2
  exit 2
}

mapfile -t files < <({
  git diff --name-only --diff-filter=d "$since" -- 'harness/*.cpp'
  git ls-files --others --exclude-standard -- 'harness/*.cpp'
} | sort -u)
if [[ ${#files[@]} -eq 0 ]]; then
  echo "tidy-changed: no harness .cpp file changed since $base"
  exit 0
fi
if [[ ! -f $build/compile_commands.json ]]; then
  echo "tidy-changed: $build/compile_commands.json is missing: configure the build first" >&2
  exit 2
fi

echo "tidy-changed: ${#files[@]} file(s) changed since $base: ${files[*]}" >&2
exec "$tidy" -p "$build" --quiet "${files[@]}"
