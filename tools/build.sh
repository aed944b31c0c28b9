#!/usr/bin/env bash
# Configures (once) and builds hipshadow into ./build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f build/build.ninja ]; then
  meson setup --reconfigure build >/dev/null
else
  meson setup build >/dev/null
fi
meson compile -C build >/dev/null
echo "build: build/src/libhipshadow.so and build/tools/hipshadow are ready"
