#!/usr/bin/env bash
# Prints what hipshadow adds to one small async D2H copy on the simulated runtime: runs the copy
# loop with and without the preload, interleaved, ROUNDS times each, and reports medians.
# The simulator's own cost is in both columns; the difference is hipshadow's check.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh >/dev/null
rounds=${ROUNDS:-7}
calls=${CALLS:-200000}
export LD_LIBRARY_PATH=build/tests/simhip
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
printf "%-10s %-9s %12s %12s %12s\n" "live" "host" "plain ns" "hipshadow ns" "added ns"
for host in pinned pageable; do
  for live in 10 1000 100000; do
    plain=(); shadow=()
    for ((r = 0; r < rounds; r++)); do
      plain+=("$(build/tests/bench/bench_copy "$live" "$calls" "$host")")
      shadow+=("$(build/tools/hipshadow -- build/tests/bench/bench_copy "$live" "$calls" "$host" 2>/dev/null | head -1)")
    done
    p=$(printf "%s\n" "${plain[@]}" | median)
    s=$(printf "%s\n" "${shadow[@]}" | median)
    printf "%-10s %-9s %12.1f %12.1f %12.1f\n" "$live" "$host" "$p" "$s" "$(echo "$s - $p" | bc -l)"
  done
done
echo "(medians of $rounds interleaved runs of $calls hipMemcpyAsync D2H calls of 4 bytes from interior pointers; $(date -u +%F), $(nproc) cores)"
