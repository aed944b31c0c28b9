#!/usr/bin/env bash
# The demo's run and its check, on a built tree (tools/demo.sh installs and builds first; the
# test suite runs this too, so the README's demo command is tested in CI): the bundled
# inference-like program with seed 003's bug, under hipshadow on the simulated HIP runtime.
# Prints hipshadow's report and the findings; exits 0 when the bug was caught.
# Usage: demo_run.sh [BUILD_DIR]
set -euo pipefail
build=${1:-build}
# hipshadow creates its findings file itself (O_EXCL, mode 0600): give it a fresh name
findings_dir=$(mktemp -d)
trap 'rm -rf "$findings_dir"' EXIT
findings=$findings_dir/findings.jsonl
echo "== running $build/tests/cases/demo_inference under hipshadow (simulated HIP runtime) =="
set +e
LD_LIBRARY_PATH=$build/tests/simhip "$build/tools/hipshadow" --findings "$findings" -- "$build/tests/cases/demo_inference"
status=$?
set -e
echo "== the program exited with status $status; findings written as JSON Lines: =="
cat "$findings"
grep -q '"kind":"out-of-bounds"' "$findings"   # the demo succeeds when hipshadow caught the bug
