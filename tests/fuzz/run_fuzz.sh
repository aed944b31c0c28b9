#!/usr/bin/env bash
# A short libFuzzer smoke of the log reader (tools/report/reader.c + summary.c) over the corpus
# kept in tests/fuzz/corpus.  Exit 77 (skipped) when clang's libFuzzer is not installed.
# Usage: run_fuzz.sh SOURCE_ROOT [SECONDS]
set -euo pipefail
root=$1
seconds=${2:-20}
command -v clang >/dev/null || { echo "SKIP: clang is not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
     -I"$root/include" "$root/tools/report/fuzz_reader.c" "$root/tools/report/reader.c" "$root/tools/report/summary.c" \
     -o "$work/fuzz_reader" 2>"$work/build.log"; then
  if grep -q "fuzzer" "$work/build.log"; then echo "SKIP: clang has no libFuzzer runtime"; cat "$work/build.log"; exit 77; fi
  cat "$work/build.log"; exit 1
fi
mkdir "$work/corpus"
cp "$root"/tests/fuzz/corpus/* "$work/corpus/"
"$work/fuzz_reader" -artifact_prefix="$work/" -max_total_time="$seconds" -max_len=300000 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 "$work/corpus" 2>&1 | tail -15
echo "fuzz smoke: ${seconds}s without a crash"
