#!/usr/bin/env bash
# Installs what kvbench needs from the Debian release's own packages, as scripts/debian-packages.txt
# lists them by purpose and release (Debian 12 and 13):
#   --for run   building kvbench and running it (the quick start)
#   --for test  run, plus what the test suite uses (the default)
#   --for dev   test, plus git and the debugger
# --list prints the packages of the purpose on this release and exits; --release N lists (or
# installs) those of Debian N instead of this machine's. Idempotent: it installs only what is
# missing. Needs root (or sudo) when something is missing.
set -euo pipefail

list_file="$(cd "$(dirname "$0")" && pwd)/debian-packages.txt"
purpose="test"
list_only=0
release=
while [ $# -gt 0 ]; do
  case "$1" in
    --for) purpose=${2:-}; shift 2 || { echo "setup-deps: --for needs run, test or dev" >&2; exit 2; } ;;
    --for=*) purpose=${1#--for=}; shift ;;
    --release) release=${2:-}; shift 2 || { echo "setup-deps: --release needs 12 or 13" >&2; exit 2; } ;;
    --list) list_only=1; shift ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup-deps: unknown argument '$1' (expected --for run|test|dev, --release N, --list)" >&2; exit 2 ;;
  esac
done

case "$purpose" in
  run) purposes=" run " ;;
  test) purposes=" run test " ;;
  dev) purposes=" run test dev " ;;
  *) echo "setup-deps: --for: expected run, test or dev, got '$purpose'" >&2; exit 2 ;;
esac

# This machine's release: Debian's VERSION_ID (12, 13); testing and unstable, which have none,
# take the newest release listed.
if [ -z "$release" ]; then
  id='' version=''
  if [ -r /etc/os-release ]; then
    # shellcheck source=/dev/null
    id=$(. /etc/os-release && echo "${ID:-}")
    # shellcheck source=/dev/null
    version=$(. /etc/os-release && echo "${VERSION_ID:-}")
  fi
  if [ "$id" != debian ]; then
    echo "setup-deps: error: this is not Debian (${id:-no /etc/os-release}); $list_file lists" \
      "Debian's packages and scripts/README.md Ubuntu's names beside them: install those, then" \
      "build as scripts/README.md says" >&2
    exit 1
  fi
  release=${version%%.*}
  if [ -z "$release" ]; then
    release=13
    echo "setup-deps: Debian without a release number (testing or unstable): using Debian 13's list"
  fi
fi
if ! grep -qE "^[a-z]+ +$release " "$list_file"; then
  echo "setup-deps: error: $list_file lists no packages for Debian $release (it has 12 and 13)" >&2
  exit 1
fi

packages=()
while read -r what rel rest; do
  case "$what" in '' | '#'*) continue ;; esac
  [[ "$purposes" == *" $what "* ]] || continue
  [ "$rel" = '*' ] || [ "$rel" = "$release" ] || continue
  read -r -a names <<<"$rest"
  packages+=("${names[@]}")
done <"$list_file"

if [ "$list_only" = 1 ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: every package for '$purpose' is installed"
  exit 0
fi
echo "setup-deps ($purpose): installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup-deps: error: run as root or install sudo" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
