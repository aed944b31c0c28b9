#!/usr/bin/env bash
# Installs what hipshadow needs on Debian/Ubuntu: the compiler, meson, the real HIP headers
# (libamdhip64-dev), libunwind, uthash and elfutils' libdw.  With --test, also what the tests
# use: clang (the libFuzzer smoke of the log reader), g++ (the PyTorch plugin on the simulator),
# chromium (the HTML report is rendered), clang-format-14 (the sources' format is checked) and
# valgrind (tools/bench_cachesim.py's check).
# Safe to run again.
set -euo pipefail
packages=(gcc meson ninja-build pkg-config python3 libamdhip64-dev libunwind-dev uthash-dev libdw-dev)
if [ "${1:-}" = "--test" ]; then
  packages+=(clang g++ chromium clang-format-14 valgrind)  # g++: the PyTorch plugin's C++ shim, built and run on the simulator; clang-format-14: the format check; valgrind: bench_cachesim
fi
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
