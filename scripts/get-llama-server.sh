#!/usr/bin/env bash
# Installs a real llama-server for kvbench into a private folder, without touching the
# system's apt state or libraries.
#
# Debian 12 has no llama.cpp and its C library is too old for the one in Debian testing, so the
# llama.cpp packages and their runtime libraries (C library included) are fetched from testing
# with a separate apt configuration and unpacked with `dpkg -x` into <deps>/llama/root. A copy of
# the llama-server binary gets the folder's own dynamic loader (patchelf), the ggml CPU backend
# variants are copied next to it so ggml picks the best one for the CPU, and a launcher
# <deps>/llama/bin/llama-server runs it with the folder's libraries.
#
# Usage: scripts/get-llama-server.sh [--force]
#   --force                 reinstall even when a working install is present
# Environment:
#   KVBENCH_DEPS_DIR        target folder (default: <repo root>/.deps in a source tree, else
#                           ${XDG_DATA_HOME:-~/.local/share}/kvbench for an installed copy); the
#                           install goes to $KVBENCH_DEPS_DIR/llama
#   KVBENCH_DEBIAN_SUITE    Debian suite to take llama.cpp from (default: forky, i.e. testing)
#   KVBENCH_DEBIAN_MIRROR   Debian mirror (default: http://deb.debian.org/debian)
#
# Works as root and as an ordinary user (no sudo; apt only downloads into user-owned folders).
# The install is tied to its absolute path: after moving the folder, run this script again.
set -euo pipefail

readonly kTopPackages=(llama.cpp-tools libllama0 libggml0)
readonly kKeyring=/usr/share/keyrings/debian-archive-keyring.gpg

die() {
  printf 'get-llama-server: error: %s\n' "$*" >&2
  exit 1
}

note() {
  printf 'get-llama-server: %s\n' "$*"
}

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
}

force=0
for arg in "$@"; do
  case "$arg" in
    --force) force=1 ;;
    -h | --help)
      usage
      exit 0
      ;;
    *)
      printf 'get-llama-server: error: unknown argument %q (expected --force or --help)\n' \
        "$arg" >&2
      exit 2
      ;;
  esac
done

script_path="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/$(basename "${BASH_SOURCE[0]}")"
repo_root="$(cd "$(dirname "$script_path")/.." && pwd -P)"
if [[ -f "$repo_root/CMakeLists.txt" ]]; then
  default_deps="$repo_root/.deps"  # a source tree
else
  # An installed copy (<prefix>/share/kvbench/scripts): the user's data folder, where an
  # installed kvbench looks for it.
  default_deps="${XDG_DATA_HOME:-$HOME/.local/share}/kvbench"
fi
deps_dir="${KVBENCH_DEPS_DIR:-$default_deps}"
suite="${KVBENCH_DEBIAN_SUITE:-forky}"
mirror="${KVBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

mkdir -p "$deps_dir" 2>/dev/null ||
  die "cannot create '$deps_dir' (set KVBENCH_DEPS_DIR to a folder you can write)"
deps_dir="$(cd "$deps_dir" && pwd -P)"

prefix="$deps_dir/llama"
launcher="$prefix/bin/llama-server"
marker="$prefix/.complete"

# Prints the installed version and the launcher path; fails when the install does not run.
report_installed() {
  local version
  version="$("$launcher" --version 2>&1)" || return 1
  grep -q '^version:' <<<"$version" || return 1
  note "installed: $(grep '^version:' <<<"$version") [Debian $(cat "$prefix/DEBIAN_VERSION")]"
  note "launcher: $launcher"
}

if ((force == 0)) && [[ -f "$marker" && -x "$launcher" ]]; then
  if report_installed; then
    exit 0
  fi
  note "the install in '$prefix' does not run any more (moved?); reinstalling"
fi

[[ -w "$deps_dir" ]] ||
  die "'$deps_dir' is not writable by $(id -un) (set KVBENCH_DEPS_DIR to a folder you can write)"

for tool_pkg in apt-get:apt apt-cache:apt dpkg:dpkg dpkg-deb:dpkg patchelf:patchelf \
  timeout:coreutils; do
  command -v "${tool_pkg%%:*}" >/dev/null ||
    die "'${tool_pkg%%:*}' is required (Debian package: ${tool_pkg##*:})"
done
[[ -r "$kKeyring" ]] || die "'$kKeyring' is missing (Debian package: debian-archive-keyring)"

# One installer at a time per folder.
if command -v flock >/dev/null; then
  exec 9>"$deps_dir/.llama.lock"
  flock -n 9 || {
    note "another install into '$deps_dir' is running; waiting for it"
    flock 9
  }
fi
# The install that held the lock may have finished what this one was about to do.
if ((force == 0)) && [[ -f "$marker" && -x "$launcher" ]] && report_installed; then
  exit 0
fi

start_s=$SECONDS
apt_dir="$deps_dir/apt"
mkdir -p "$apt_dir"/{lists/partial,cache/archives/partial,state,log,preferences.d,debs}
printf 'deb [signed-by=%s] %s %s main\n' "$kKeyring" "$mirror" "$suite" >"$apt_dir/sources.list"
: >"$apt_dir/status"

apt_opts=(
  -o "Dir::Etc::sourcelist=$apt_dir/sources.list"
  -o "Dir::Etc::sourceparts=-"
  -o "Dir::Etc::preferences=$apt_dir/preferences"
  -o "Dir::Etc::preferencesparts=$apt_dir/preferences.d"
  -o "Dir::State=$apt_dir/state"
  -o "Dir::State::Lists=$apt_dir/lists"
  -o "Dir::State::status=$apt_dir/status"
  -o "Dir::Cache=$apt_dir/cache"
  -o "Dir::Log=$apt_dir/log"
  -o "Acquire::Languages=none"
)
# As root apt downloads as user _apt, which may not reach these folders; stay root instead.
if ((EUID == 0)); then
  apt_opts+=(-o "APT::Sandbox::User=root")
fi

note "updating package lists for Debian '$suite' from $mirror (kept in $apt_dir)"
apt-get "${apt_opts[@]}" -q update >"$apt_dir/log/update.log" 2>&1 || {
  cat "$apt_dir/log/update.log" >&2
  if grep -q 'is expired' "$apt_dir/log/update.log"; then
    # A snapshot of Debian (a registry that serves one day's archive) keeps testing's Release
    # file past its Valid-Until date; apt refuses it unless its configuration allows that.
    die "apt-get update for '$suite' failed: the mirror's Release file has expired. From a" \
      "snapshot mirror, allow it in apt's configuration (Acquire::Check-Valid-Until \"false\"; in" \
      "a file of /etc/apt/apt.conf.d/) or name a current mirror with KVBENCH_DEBIAN_MIRROR"
  fi
  die "apt-get update for '$suite' failed (see above)"
}
if grep -qE '^(W|E):' "$apt_dir/log/update.log"; then
  grep -E '^(W|E):' "$apt_dir/log/update.log" >&2
fi

for pkg in "${kTopPackages[@]}"; do
  apt-cache "${apt_opts[@]}" show "$pkg" >/dev/null 2>&1 ||
    die "package '$pkg' is not available in Debian '$suite' ($mirror)"
done

# Runtime closure: the libraries' dependencies, recursively, plus the library dependencies of
# llama.cpp-tools (its other dependencies are for maintainer scripts and model downloads).
tool_libs="$(apt-cache "${apt_opts[@]}" depends llama.cpp-tools |
  sed -n 's/^ *|\{0,1\}\(Pre\)\{0,1\}Depends: \(lib[^ <>]*\)$/\2/p')"
# shellcheck disable=SC2086 # tool_libs is a whitespace-separated list of package names
closure="$(apt-cache "${apt_opts[@]}" depends --recurse --no-recommends --no-suggests \
  --no-conflicts --no-breaks --no-replaces --no-enhances libllama0 libggml0 $tool_libs |
  grep -E '^[a-z0-9][a-z0-9.+-]*$' | sort -u)"
mapfile -t packages < <(printf '%s\n' llama.cpp-tools "$closure" | sort -u)
note "packages: ${packages[*]}"

find "$apt_dir/debs" -maxdepth 1 -name '*.deb' -delete
(cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" -q download "${packages[@]}") \
  >"$apt_dir/log/download.log" 2>&1 || {
  cat "$apt_dir/log/download.log" >&2
  die "apt-get download failed (see above)"
}

staging="$deps_dir/llama.staging.$$"
trap 'rm -rf "$staging"' EXIT
rm -rf "$staging"
mkdir -p "$staging/root" "$staging/bin" "$staging/libexec"
for deb in "$apt_dir"/debs/*.deb; do
  dpkg -x "$deb" "$staging/root" || die "could not unpack '$deb'"
done
debian_version="$(dpkg-deb -f "$apt_dir"/debs/llama.cpp-tools_*.deb Version)"
printf '%s\n' "$debian_version" >"$staging/DEBIAN_VERSION"

# Locate the pieces; paths below are the final ones (the staging folder is renamed at the end).
lib_rel="$(cd "$staging/root" && find usr/lib -name 'libllama.so.0' -printf '%h\n' | head -n 1)"
[[ -n "$lib_rel" ]] || die "libllama.so.0 not found in the unpacked packages"
loader_name="$(cd "$staging/root/$lib_rel" && find . -maxdepth 1 -name 'ld-linux*.so.*' \
  -printf '%f\n' | head -n 1)"
[[ -n "$loader_name" ]] || die "no dynamic loader (ld-linux*.so.*) in $lib_rel of the packages"
[[ -x "$staging/root/usr/bin/llama-server" ]] || die "usr/bin/llama-server not in llama.cpp-tools"
mapfile -t backends < <(find "$staging/root/$lib_rel" -name 'libggml-cpu-*.so' | sort)
((${#backends[@]} > 0)) || die "no ggml CPU backend (libggml-cpu-*.so) in libggml0"

lib_dir="$prefix/root/$lib_rel"
library_path="$lib_dir:$lib_dir/llama"
cp "$staging/root/usr/bin/llama-server" "$staging/libexec/llama-server"
patchelf --set-interpreter "$lib_dir/$loader_name" --set-rpath "$library_path" \
  "$staging/libexec/llama-server" || die "patchelf failed on llama-server"
cp "${backends[@]}" "$staging/libexec/"

# shellcheck disable=SC2016 # the launcher's own variables are written unexpanded
{
  printf '#!/usr/bin/env bash\n'
  printf '# Runs llama-server from Debian %s (%s), unpacked under this folder, with its own\n' \
    "$suite" "$debian_version"
  printf '# loader and libraries; ggml picks the best CPU backend from libexec/ itself\n'
  printf '# (set GGML_BACKEND_PATH to one libexec/libggml-cpu-*.so to force one).\n'
  printf 'set -euo pipefail\n'
  printf 'loader=%q\n' "$lib_dir/$loader_name"
  printf 'server=%q\n' "$prefix/libexec/llama-server"
  printf 'if [[ ! -x "$loader" || ! -x "$server" ]]; then\n'
  printf '  echo "llama-server launcher: install incomplete or moved; rerun %s --force" >&2\n' \
    "$script_path"
  printf '  exit 127\n'
  printf 'fi\n'
  printf '# Only for the server: system programs break with these libraries.\n'
  printf 'export LD_LIBRARY_PATH=%q\n' "$library_path"
  printf 'exec "$server" "$@"\n'
} >"$staging/bin/llama-server"
chmod 755 "$staging/bin/llama-server"

rm -rf "$prefix"
mv "$staging" "$prefix"
trap - EXIT

# Every library the server needs must come from the folder, never from the system.
ldd_out="$(LD_LIBRARY_PATH="$library_path" "$lib_dir/$loader_name" --list \
  "$prefix/libexec/llama-server" 2>&1)" || {
  printf '%s\n' "$ldd_out" >&2
  die "the unpacked llama-server cannot be linked (see above)"
}
foreign="$(grep '=>' <<<"$ldd_out" | grep -v "=> $prefix/" || true)"
[[ -z "$foreign" ]] || {
  printf '%s\n' "$foreign" >&2
  die "llama-server resolves libraries outside '$prefix' (see above)"
}

version_out="$("$launcher" --version 2>&1)" || {
  printf '%s\n' "$version_out" >&2
  die "'$launcher --version' failed (see above)"
}

# Which CPU backend ggml picks: start without a model on a free port; it loads the backend,
# then stops at the missing model.
probe="$(timeout 60 "$launcher" -m "$prefix/no-such-model.gguf" --host 127.0.0.1 --port 0 -lv 4 2>&1 |
  grep -E 'load_backend|system_info' || true)"
backend_line="$(grep -m 1 'load_backend: loaded CPU backend' <<<"$probe" || true)"
[[ -n "$backend_line" ]] || {
  printf '%s\n' "$probe" >&2
  die "llama-server loaded no CPU backend (see above)"
}
note "cpu backend: ${backend_line##*from }"
cpu_features="$(grep -m 1 -o 'CPU : .*' <<<"$probe" || true)"
note "cpu features: ${cpu_features%% | }"

touch "$marker"
rm -f "$apt_dir"/debs/*.deb
note "installed in $((SECONDS - start_s)) s into $prefix"
report_installed || die "the fresh install does not report its version"
