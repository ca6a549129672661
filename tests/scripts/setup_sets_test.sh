#!/usr/bin/env bash
# The setup by purpose: each package set of scripts/setup-deps.sh holds the one before it (run in
# test in dev) on each release it lists, a purpose it does not know is refused with exit 2, and a build folder configured
# the way the quick start configures it (tests and benchmarks off) builds the kvbench binary and
# no test or benchmark program, so the run set is enough for it.
# Usage: tests/scripts/setup_sets_test.sh
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() {
  echo "setup_sets_test: FAIL: $*" >&2
  failures=$((failures + 1))
}

for purpose in run test dev; do
  "$root/scripts/setup-deps.sh" --for "$purpose" --list | sort >"$tmp/$purpose"
  [ -s "$tmp/$purpose" ] || fail "--for $purpose lists nothing"
done
[ -z "$(comm -23 "$tmp/run" "$tmp/test")" ] || fail "run set not in the test set: $(comm -23 "$tmp/run" "$tmp/test" | tr '\n' ' ')"
[ -z "$(comm -23 "$tmp/test" "$tmp/dev")" ] || fail "test set not in the dev set"
for p in libgtest-dev libbenchmark-dev chromium python3-matplotlib postgresql; do
  grep -qx "$p" "$tmp/run" && fail "the run set installs $p, which only the tests need"
  grep -qx "$p" "$tmp/test" || fail "the test set lacks $p"
done
for p in cmake libcurl4-openssl-dev libcli11-dev libsqlite3-dev libpqxx-dev patchelf; do
  grep -qx "$p" "$tmp/run" || fail "the run set lacks $p"
done
# Each release its own clang for the sanitizer and fuzz builds, in the test set only.
for pair in 12:clang-14 13:clang-19; do
  "$root/scripts/setup-deps.sh" --release "${pair%%:*}" --list >"$tmp/release"
  grep -qx "${pair#*:}" "$tmp/release" || fail "Debian ${pair%%:*}'s test set lacks ${pair#*:}"
  grep -qx zlib1g-dev "$tmp/release" || fail "Debian ${pair%%:*}'s test set lacks the run set"
  "$root/scripts/setup-deps.sh" --release "${pair%%:*}" --for run --list | grep -q '^clang' &&
    fail "Debian ${pair%%:*}'s run set installs clang"
done
set +e
"$root/scripts/setup-deps.sh" --release 11 --list >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "--release 11 exited $rc, not 1"
grep -q "no packages for Debian 11" "$tmp/err" || fail "--release 11: no clear message"
set +e
"$root/scripts/setup-deps.sh" --for bogus >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "--for bogus exited $rc, not 2"
grep -q "expected run, test or dev" "$tmp/err" || fail "--for bogus: no clear message"

# The quick start's configuration: no GoogleTest or Google Benchmark needed, no test targets.
cmake -S "$root" -B "$tmp/build" -G Ninja -DKVBENCH_TESTS=OFF -DKVBENCH_BENCH=OFF \
  -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1 || fail "configure failed: $(tail -5 "$tmp/configure.log")"
if [ -f "$tmp/build/build.ninja" ]; then
  ninja -C "$tmp/build" -t targets all >"$tmp/targets" 2>/dev/null
  grep -q '^kvbench:' "$tmp/targets" || fail "no kvbench target"
  if grep -Eq '^(test_[a-z_]+|overhead_bench|stream-stub|[a-z_]+_bench):' "$tmp/targets"; then
    fail "test or benchmark targets in the quick start's build: $(grep -Eo '^(test_[a-z_]+|[a-z_-]+_bench|stream-stub):' "$tmp/targets" | head -3 | tr '\n' ' ')"
  fi
  if grep -q '^GTest_DIR:PATH=/' "$tmp/build/CMakeCache.txt"; then
    fail "GoogleTest was looked up with tests off"
  fi
fi

if [ "$failures" -gt 0 ]; then
  exit 1
fi
echo "setup_sets_test: the three sets nest, a bad purpose is refused, the quick start builds only kvbench"
