#!/usr/bin/env bash
# Benchmarks that print figures (never timed tests).  The simulated runtime's own cost is in
# every "plain" column; the differences are hipshadow's.
#   bash tools/bench.sh copy   added cost of the checks per small D2H copy, by live allocations
#   bash tools/bench.sh log    post-mortem log: bytes per event, recording cost per event,
#                              report time for a log of 10M events
#   bash tools/bench.sh scale  the scale table: copies, allocs and frees from 1K to 1M live
#                              allocations, 16 threads, shadow bytes per allocation (tools/bench_scale.py)
#   bash tools/bench.sh events each kind of event alone (launch, clean copy, alloc, free, sync):
#                              added ns per event, by live allocations (OLD_LIB=path: a second
#                              library, e.g. one built from an older commit, interleaved too)
#   bash tools/bench.sh streams what stream-race and initcheck tracking add per operation, on 1 and
#                              4 non-blocking streams (H2D, kernel, D2H, event each round; the
#                              streams wait on the first one's event): plain, races=0, races=1,
#                              races=1:initcheck=1
#   bash tools/bench.sh blocks PyTorch caching-allocator block events end to end (the plugin built
#                              against tests/torchsim's fake allocator, its trace, the core): added
#                              ns per event, blocks tracked and torch_blocks=0; then PyTorch's op (a
#                              tensor made, a kernel launched on pointers in a struct, the tensor
#                              before let go: blocks_sim generate), added ns per op (OLD_LIB=path:
#                              an older libhipshadow-cuda.so interleaved too)
#   bash tools/bench.sh rss    resident set over 10M hipMalloc/hipFree pairs (PAIRS=...), after a
#                              warm-up of a tenth of them, plain and under hipshadow
#   bash tools/bench.sh        copy and log
# The output is printed and also kept in tests/bench/results/<what>.txt (git-ignored; the
# current figures belong in tests/bench/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${NO_BUILD:-}" ] || bash tools/build.sh >/dev/null  # NO_BUILD=1: build/ is already built
what=${1:-all}
mkdir -p tests/bench/results
exec > >(tee "tests/bench/results/$what.txt") 2>&1
rounds=${ROUNDS:-7}
export LD_LIBRARY_PATH=build/tests/simhip
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
bench=build/tests/bench/bench_copy
shadow() { build/tools/hipshadow "$@" 2>/dev/null | head -1; }
echo "$(date -u +%F), $(nproc) cores, $(uname -m); medians of $rounds interleaved runs"

if [ "$what" = copy ] || [ "$what" = all ]; then
  calls=${CALLS:-200000}
  echo
  echo "== checks: $calls hipMemcpyAsync D2H of 4 bytes from interior pointers =="
  printf "%-10s %-9s %12s %14s %12s\n" "live" "host" "plain ns" "hipshadow ns" "added ns"
  for host in pinned pageable; do
    for live in 10 1000 100000; do
      plain=(); with=()
      for ((r = 0; r < rounds; r++)); do
        plain+=("$($bench "$live" "$calls" "$host")")
        with+=("$(shadow -- $bench "$live" "$calls" "$host")")
      done
      p=$(printf "%s\n" "${plain[@]}" | median); s=$(printf "%s\n" "${with[@]}" | median)
      printf "%-10s %-9s %12.1f %14.1f %12.1f\n" "$live" "$host" "$p" "$s" "$(echo "$s - $p" | bc -l)"
    done
  done
fi

if [ "$what" = streams ]; then
  srounds=${CALLS:-20000}
  echo
  echo "== stream work, $srounds rounds, simulator in null mode (SIMHIP_NULL=1): ns per operation =="
  for cfg in "1 blocking" "1 non-blocking" "4 non-blocking"; do
    read -r n kind <<<"$cfg"
    for ((r = 0; r < rounds; r++)); do
      echo "plain $(SIMHIP_NULL=1 build/tests/bench/bench_streams "$n" "$srounds" "$kind")"
      for o in races=0 races=1 races=1:initcheck=1; do
        echo "$o $(SIMHIP_NULL=1 HIPSHADOW_OPTIONS=$o LD_PRELOAD=build/src/libhipshadow.so \
          build/tests/bench/bench_streams "$n" "$srounds" "$kind" 2>/dev/null)"
      done
    done | python3 -c '
import statistics, sys
n = sys.argv[1]
ops = {}
for line in sys.stdin:
    w = line.split()
    ops.setdefault(w[0], []).append(float(w[w.index("op") + 1]))
m = {k: statistics.median(v) for k, v in ops.items()}
p, z, r, i = m["plain"], m["races=0"], m["races=1"], m["races=1:initcheck=1"]
print(f"{n}: plain {p:.0f} ns/op; hipshadow races=0 {z - p:+.0f}; race tracking (races=1 against "
      f"races=0) {r - z:+.0f}; initcheck on top {i - r:+.0f}")
' "$cfg"
  done
fi

# Lines "LABEL ... FIGURE ns" in: each label's median, and what each adds over "plain"'s.
added_over_plain() {
  python3 -c '
import statistics, sys
ns = {}
for line in sys.stdin:
    w = line.split()
    ns.setdefault(w[0], []).append(float(w[-2]))
m = {k: statistics.median(v) for k, v in ns.items()}
p = m.pop("plain")
print(f"plain {p:.0f} {sys.argv[1]}; added: " + ", ".join(f"{k} {v - p:+.0f} ns" for k, v in m.items()))
' "$1"
}

if [ "$what" = blocks ]; then
  tokens=${CALLS:-300}
  echo
  echo "== block events: $tokens tokens of 328 tensors made and let go (tests/torchsim blocks_sim churn) =="
  sim=build/tests/torchsim
  for ((r = 0; r < rounds; r++)); do
    echo "plain $(LD_LIBRARY_PATH=build/tests/simcuda:$sim $sim/blocks_sim churn "$tokens" | head -1)"
    for o in torch_blocks=1 torch_blocks=0; do
      echo "$o $(LD_LIBRARY_PATH=build/tests/simcuda:$sim build/tools/hipshadow --cuda --option "$o" \
        --option torch_plugin=$sim/libhipshadow-torch.so -- $sim/blocks_sim churn "$tokens" 2>/dev/null | head -1)"
    done
  done | added_over_plain "ns per event"
  echo
  echo "== PyTorch's ops: $tokens tokens of 271 (tests/torchsim blocks_sim generate), blocks tracked =="
  libs=("new=build/src/libhipshadow-cuda.so")
  [ -n "${OLD_LIB:-}" ] && libs=("old=$OLD_LIB" "${libs[@]}")
  for ((r = 0; r < rounds; r++)); do
    echo "plain $(LD_LIBRARY_PATH=build/tests/simcuda:$sim $sim/blocks_sim generate "$tokens" | head -1)"
    for l in "${libs[@]}"; do
      echo "${l%%=*} $(LD_LIBRARY_PATH=build/tests/simcuda:$sim build/tools/hipshadow --cuda --lib "${l#*=}" \
        --option torch_plugin=$sim/libhipshadow-torch.so -- $sim/blocks_sim generate "$tokens" 2>/dev/null | head -1)"
    done
  done | added_over_plain "ns per op"
fi

if [ "$what" = events ]; then
  calls=${CALLS:-100000}
  echo
  echo "== each event alone: $calls of each, simulator in null mode (SIMHIP_NULL=1), default options =="
  libs=("new=build/src/libhipshadow.so")
  [ -n "${OLD_LIB:-}" ] && libs=("old=$OLD_LIB" "${libs[@]}")
  for live in ${LIVES:-1000 100000}; do
    for ((r = 0; r < rounds; r++)); do
      echo "plain $(SIMHIP_NULL=1 build/tests/bench/bench_events "$live" "$calls")"
      for l in "${libs[@]}"; do
        echo "${l%%=*} $(SIMHIP_NULL=1 LD_PRELOAD=${l#*=} build/tests/bench/bench_events "$live" "$calls" 2>/dev/null)"
      done
    done | python3 -c '
import statistics, sys
live = sys.argv[1]
runs = {}
for line in sys.stdin:
    w = line.split()
    runs.setdefault(w[0], []).append({w[i]: float(w[i + 1]) for i in range(1, len(w) - 1, 2)})
m = {k: {f: statistics.median(r[f] for r in v) for f in v[0]} for k, v in runs.items()}
plain = m["plain"]
print(f"{live} live, plain: " + ", ".join(f"{f} {v:.0f} ns" for f, v in plain.items()))
for k in m:
    if k != "plain":
        print(f"{live} live, {k:>5}: added " + ", ".join(f"{f} {m[k][f] - plain[f]:+.0f} ns" for f in plain))
' "$live"
  done
fi

if [ "$what" = scale ]; then
  echo
  python3 tools/bench_scale.py build "${ROUNDS:-5}"
fi

if [ "$what" = log ] || [ "$what" = all ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  calls=${CALLS:-200000}
  echo
  echo "== post-mortem log: $calls copies, 10 live allocations, pinned host =="
  off=(); ring=(); full=()
  for ((r = 0; r < rounds; r++)); do
    off+=("$(shadow -- $bench 10 "$calls" pinned)")
    ring+=("$(shadow --option "log=$tmp/ring.$r.%p.log" -- $bench 10 "$calls" pinned)")
    full+=("$(shadow --option "log=$tmp/full.$r.%p.log" --option log_mode=full -- $bench 10 "$calls" pinned)")
  done
  o=$(printf "%s\n" "${off[@]}" | median); rg=$(printf "%s\n" "${ring[@]}" | median); f=$(printf "%s\n" "${full[@]}" | median)
  printf "per copy: %.1f ns without a log, %.1f ns with log_mode=ring (+%.1f), %.1f ns with log_mode=full (+%.1f)\n" \
    "$o" "$rg" "$(echo "$rg - $o" | bc -l)" "$f" "$(echo "$f - $o" | bc -l)"
  python3 - "$tmp"/full.0.*.log "$calls" <<'PY'
import struct, sys
path, calls = sys.argv[1], int(sys.argv[2])
data = open(path, "rb").read()
ring_off, ring_chunks, grow_off = struct.unpack_from("<QQQ", data, 16)
used = {1: 0, 2: 0}
for off in range(ring_off, len(data), 65536):
    magic, kind, _, seq, thread, u = struct.unpack_from("<IHHQII", data, off)
    if magic == 0x4b4e4843:
        used[kind] = used.get(kind, 0) + u
print(f"bytes per event: {used[1] / calls:.1f} (event records), plus {used[2]} bytes of metadata "
      f"(modules, stacks, API names) for the whole run")
PY
  big=${BIG_EVENTS:-10000000}
  echo
  echo "== report time for a log of $big copies (log_mode=full) =="
  shadow --option "log=$tmp/big.%p.log" --option log_mode=full -- $bench 1 "$big" pinned >/dev/null
  ls -l "$tmp"/big.*.log | awk '{printf "log size: %.0f MiB\n", $5 / 1048576}'
  for fmt in text csv; do
    /usr/bin/time -f "report --format $fmt: %e s, %M KiB peak memory" build/tools/hipshadow report --format "$fmt" "$tmp"/big.*.log >/dev/null
  done
fi

if [ "$what" = rss ]; then
  pairs=${PAIRS:-10000000}
  warm=$((pairs / 10))
  rss=build/tests/cases/alloc_free_rss
  echo
  echo "== resident set: $pairs hipMalloc/hipFree pairs (1..4096 bytes, 4 call sites, 16 live), warm-up $warm pairs =="
  echo "plain:     $($rss "$pairs" "$warm" 0)"
  echo "hipshadow: $(build/tools/hipshadow -- $rss "$pairs" "$warm" 0 2>/dev/null)"
fi
