#!/usr/bin/env bash
# Installs what kvbench builds and tests with, from Debian 12's own packages. Idempotent: it
# installs only what is missing. Needs root (or sudo) the first time.
set -euo pipefail

packages=(
  build-essential cmake ninja-build git pkg-config ca-certificates
  libcurl4-openssl-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libeigen3-dev libboost-math-dev libcpp-httplib-dev libsqlite3-dev
  patchelf debian-archive-keyring clang-format
  clang-14 libclang-rt-14-dev
  python3 python3-matplotlib python3-aiohttp curl chromium
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-deps: all build and test packages are installed"
  exit 0
fi
echo "setup-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup-deps: error: run as root or install sudo" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
