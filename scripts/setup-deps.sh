#!/usr/bin/env bash
# Installs what kvbench needs from Debian 12's own packages, by purpose:
#   --for run   building kvbench and running it (the quick start): the compiler, CMake, Ninja and
#               the libraries the binary links (libpqxx for a PostgreSQL history among them),
#               Chart.js (compiled into the run's page) and what scripts/get-llama-server.sh uses
#   --for test  run, plus what the test suite uses (GoogleTest, Google Benchmark, cpp-httplib,
#               clang-14 for the sanitizer and fuzz builds, clang-format, Python with matplotlib
#               and aiohttp, curl, chromium for the lesson page, the PostgreSQL server the history
#               tests start, yamllint and shellcheck for the recipes) (the default)
#   --for dev   test, plus git and the debugger
# --list prints the packages of the purpose and exits. Idempotent: it installs only what is
# missing. Needs root (or sudo) when something is missing.
set -euo pipefail

purpose=test
list_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --for) purpose=${2:-}; shift 2 || { echo "setup-deps: --for needs run, test or dev" >&2; exit 2; } ;;
    --for=*) purpose=${1#--for=}; shift ;;
    --list) list_only=1; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup-deps: unknown argument '$1' (expected --for run|test|dev, --list)" >&2; exit 2 ;;
  esac
done

run_packages=(
  build-essential cmake ninja-build pkg-config ca-certificates
  libcurl4-openssl-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libeigen3-dev libboost-math-dev libsqlite3-dev libpqxx-dev
  zlib1g-dev liblzma-dev libzstd-dev
  patchelf debian-archive-keyring libjs-chart.js
)
test_packages=(
  "${run_packages[@]}"
  libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev
  clang-format clang-14 libclang-rt-14-dev
  python3 python3-matplotlib python3-aiohttp python3-jsonschema curl chromium help2man file
  postgresql yamllint shellcheck
)
dev_packages=("${test_packages[@]}" git gdb)

case "$purpose" in
  run) packages=("${run_packages[@]}") ;;
  test) packages=("${test_packages[@]}") ;;
  dev) packages=("${dev_packages[@]}") ;;
  *) echo "setup-deps: --for: expected run, test or dev, got '$purpose'" >&2; exit 2 ;;
esac

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
