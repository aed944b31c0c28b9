#!/usr/bin/env bash
# Every test: installs what is needed, builds, runs unit, preload and behaviour tests, and ends
# with the line "N passed, N failed, N skipped".
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh --test
bash tools/build.sh
exec bash tests/run.sh build
