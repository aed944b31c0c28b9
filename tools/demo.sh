#!/usr/bin/env bash
# The demo: installs what is needed, builds, and runs the bundled inference-like program with
# seed 003's bug under hipshadow on the simulated HIP runtime.  Prints hipshadow's report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh
bash tools/build.sh
bash tools/demo_run.sh build
