#!/usr/bin/env bash
# Every test: installs what is needed, builds, runs unit, preload and behaviour tests, then the
# same again in the sanitizer builds (tests/sanitizers.sh: ASan + UBSan, and TSan), and ends with
# the line "N passed, N failed, N skipped" over all of them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install-deps.sh --test
bash tools/build.sh
status=0
bash tests/run.sh build || status=1
bash tests/sanitizers.sh --also build=build/meson-logs/testlog.json || status=1
exit $status
