#!/usr/bin/env bash
# Installs what hipshadow needs to build and test on Debian/Ubuntu: the compiler, meson, the
# real HIP headers (libamdhip64-dev), libunwind and uthash.  Safe to run again.
set -euo pipefail
packages=(gcc meson ninja-build pkg-config python3 libamdhip64-dev libunwind-dev uthash-dev)
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then sudo="sudo"; else
    echo "install-deps: not root and no sudo; assuming these are installed: ${packages[*]}" >&2
    exit 0
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
echo "install-deps: ${packages[*]} installed"
