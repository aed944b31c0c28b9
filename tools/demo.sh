#!/usr/bin/env bash
# The demo: installs what is needed, builds, and runs the bundled inference-like program with
# seed 003's bug under hipshadow on the simulated HIP runtime.  Prints hipshadow's report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
bash tools/build.sh
# hipshadow creates its findings file itself (O_EXCL, mode 0600): give it a fresh name
findings_dir=$(mktemp -d)
findings=$findings_dir/findings.jsonl
echo "== running build/tests/cases/demo_inference under hipshadow (simulated HIP runtime) =="
set +e
LD_LIBRARY_PATH=build/tests/simhip build/tools/hipshadow --findings "$findings" -- build/tests/cases/demo_inference
status=$?
set -e
echo "== the program exited with status $status; findings written as JSON Lines: =="
cat "$findings"
caught=0
grep -q '"kind":"out-of-bounds"' "$findings" || caught=1   # the demo succeeds when hipshadow caught the bug
rm -rf "$findings_dir"
exit $caught
