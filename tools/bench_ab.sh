#!/usr/bin/env bash
# Two hipshadow libraries side by side in one run (the machines here are noisy: only figures taken
# interleaved in the same hour compare).  bench_scale runs plain, under OLD and under NEW, ROUNDS
# times in turn, on the simulator in null mode; prints the median added ns per copy, alloc and free.
#
#   bash tools/bench_ab.sh OLD_LIB [NEW_LIB] [LIVE] [ALIGN] [ROUNDS] [CALLS]
#     NEW_LIB default build/src/libhipshadow.so; LIVE 1000000; ALIGN 4096 (SIMHIP_ALIGN: 64 packs
#     allocations); ROUNDS 7; CALLS 100000.  HIPSHADOW_OPTIONS default stack_depth=0.
# To build an older library: git worktree add /tmp/old REV && meson setup /tmp/old/build /tmp/old &&
# ninja -C /tmp/old/build src/libhipshadow.so
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: $0 OLD_LIB [NEW_LIB] [LIVE] [ALIGN] [ROUNDS] [CALLS]}
new=${2:-build/src/libhipshadow.so}
live=${3:-1000000} align=${4:-4096} rounds=${5:-7} calls=${6:-100000}
for lib in "$old" "$new"; do [ -f "$lib" ] || { echo "$0: no library at $lib" >&2; exit 2; }; done
bench=build/tests/bench/bench_scale
export SIMHIP_NULL=1 SIMHIP_ALIGN=$align LD_LIBRARY_PATH=$PWD/build/tests/simhip${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export HIPSHADOW_OPTIONS=${HIPSHADOW_OPTIONS:-stack_depth=0}
for _ in $(seq "$rounds"); do
  echo "plain $("$bench" "$live" "$calls" 1 sync)"
  echo "old $(LD_PRELOAD=$old "$bench" "$live" "$calls" 1 sync 2>/dev/null)"
  echo "new $(LD_PRELOAD=$new "$bench" "$live" "$calls" 1 sync 2>/dev/null)"
done | python3 -c '
import statistics, sys
runs = {}
for line in sys.stdin:
    w = line.split()
    runs.setdefault(w[0], []).append({w[i]: float(w[i + 1]) for i in range(1, len(w) - 1, 2)})
m = {k: {f: statistics.median(r[f] for r in v) for f in v[0]} for k, v in runs.items()}
plain = m["plain"]
fields = ("copy", "alloc", "free")
print("plain: " + ", ".join(f"{f} {plain[f]:.0f} ns" for f in fields))
for k in ("old", "new"):
    print(f"{k:>5}: added " + ", ".join(f"{f} +{m[k][f] - plain[f]:.0f} ns" for f in fields))
'
