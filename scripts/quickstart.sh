#!/usr/bin/env bash
# The quick start: installs what running needs (scripts/setup-deps.sh --for run), builds only the
# kvbench binary (no tests, no benchmarks) while llama-server is fetched beside it, and runs the
# default scenario against the embedded default, a managed llama-server with a synthetic model.
# One line per phase with its time; a phase's own output goes to build/quickstart/<phase>.log and
# is shown only when it fails. kvbench is then installed for this user, without root: the binary
# in ~/.local/bin (KVBENCH_PREFIX names another prefix), its scenarios in ~/.local/share/kvbench,
# and the fetched llama-server linked where an installed kvbench looks for it; where a login
# shell's PATH lacks that bin folder (root's ~/.profile on Debian), a line in the profile a login
# shell reads (~/.profile) adds it (KVBENCH_NO_PROFILE=1 leaves it alone). The run prints what it
# found, the condition table and where the report and its page are. Extra arguments go to
# `kvbench run`.
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

phase packages "1/5 Debian packages (setup-deps --for run)" "$root/scripts/setup-deps.sh" --for run
# llama-server comes from the network while the compiler keeps the cores busy.
"$root/scripts/get-llama-server.sh" >"$logs/llama-server.log" 2>&1 &
fetch=$!
phase build "2/5 kvbench, the binary only" \
  "$root/scripts/build.sh" -DKVBENCH_TESTS=OFF -DKVBENCH_BENCH=OFF
# The fetch writes its own log; waiting for it shows that log if it failed.
fetched() {
  wait "$fetch" || { cat "$logs/llama-server.log"; return 1; }
}
phase llama-server-wait "3/5 llama-server (fetched during the build)" fetched
prefix=${KVBENCH_PREFIX:-$HOME/.local}
# install_for_user: the binary and its data under $prefix, llama-server where an installed kvbench
# looks for it, and $prefix/bin on a login shell's PATH.
install_for_user() {
  cmake --install "$root/build" --prefix "$prefix"
  local data=${XDG_DATA_HOME:-$HOME/.local/share}/kvbench
  mkdir -p "$data"
  if [ ! -e "$data/llama" ] || [ -L "$data/llama" ]; then
    ln -sfn "$root/.deps/llama" "$data/llama"
  fi
  # bash -l reads the first of these that exists.
  local profile=$HOME/.profile
  for f in "$HOME/.bash_profile" "$HOME/.bash_login"; do
    if [ -e "$f" ]; then
      profile=$f
      break
    fi
  done
  if [ "${KVBENCH_NO_PROFILE:-0}" != 1 ] &&
    ! env -i HOME="$HOME" bash -lc 'command -v kvbench' >/dev/null 2>&1; then
    printf '\n# kvbench (scripts/quickstart.sh): its bin folder on PATH\n%s\n' \
      "case \":\$PATH:\" in *\":$prefix/bin:\"*) ;; *) PATH=\"$prefix/bin:\$PATH\" ;; esac" \
      >>"$profile"
    echo "added $prefix/bin to PATH in $profile"
  fi
}
phase install "4/5 install for this user ($prefix)" install_for_user
printf 'quickstart: %-44s\n' "5/5 the default scenario (quickstart.json)"
"$prefix/bin/kvbench" run "$root/scenarios/quickstart.json" --results "$root/results" "$@"
printf 'quickstart: done in %d s; kvbench is %s (a new login shell finds it)\n' \
  $((SECONDS - begin)) "$prefix/bin/kvbench"
