#!/usr/bin/env bash
# Runs every meson test in the given build dir and prints "N passed, N failed, N skipped".
# Exit status: 0 only if nothing failed.
set -uo pipefail
build=${1:-build}
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" "${@:2}"
python3 "$(dirname "$0")/tally.py" "$build/meson-logs/testlog.json"
