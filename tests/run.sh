#!/usr/bin/env bash
# Runs every meson test in the given build dir and prints "N passed, N failed, N skipped".
# Exit status: 0 only if nothing failed.
set -uo pipefail
build=${1:-build}
meson test -C "$build" --print-errorlogs --num-processes "$(nproc)" "${@:2}"
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
for line in open(sys.argv[1]):
    result = json.loads(line)["result"]
    if result in ("OK", "EXPECTEDFAIL"):
        passed += 1
    elif result == "SKIP":
        skipped += 1
    else:
        failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
PY
