#!/usr/bin/env python3
"""The scale benchmark (tools/bench.sh scale): bench_scale runs on the simulated
runtime in null mode (SIMHIP_NULL=1: copies move nothing, so only hipshadow's cost shows), plain
and under hipshadow, interleaved, ROUNDS times each; prints medians and the goals met or missed.
Usage: bench_scale.py BUILD_DIR [ROUNDS]"""
import os
import statistics
import subprocess
import sys

build = sys.argv[1] if len(sys.argv) > 1 else "build"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
bench = os.path.join(build, "tests/bench/bench_scale")
launcher = os.path.join(build, "tools/hipshadow")
env = dict(os.environ, SIMHIP_NULL="1",
           LD_LIBRARY_PATH=":".join(filter(None, [os.path.join(build, "tests/simhip"), os.environ.get("LD_LIBRARY_PATH")])))
env.pop("HIPSHADOW_OPTIONS", None)
CALLS = int(os.environ.get("CALLS", "200000"))


def run(shadow, options, *args, align=None):
    cmd = [bench] + [str(a) for a in args]
    if shadow:
        cmd = [launcher] + [x for o in options for x in ("--option", o)] + ["--"] + cmd
    out = subprocess.run(cmd, env=dict(env, SIMHIP_ALIGN=str(align)) if align else env, capture_output=True, text=True,
                         check=True).stdout.split()
    return {out[i]: float(out[i + 1]) for i in range(0, len(out) - 1, 2)}


def medians(configs, *args, align=None):
    """configs: name -> (shadow, options).  Interleaved rounds; the median of each field."""
    got = {name: [] for name in configs}
    for _ in range(rounds):
        for name, (shadow, options) in configs.items():
            got[name].append(run(shadow, options, *args, align=align))
    return {name: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for name, runs in got.items()}


CONFIGS = {"plain": (False, []), "shadow": (True, []), "nostacks": (True, ["stack_depth=0"])}
verdicts = []


def goal(name, ok, figure):
    verdicts.append(f"  {'met   ' if ok else 'MISSED'}  {name}: {figure}")


print(f"{os.cpu_count()} cores; medians of {rounds} interleaved runs; {CALLS} D2H copies of 32 bytes per run")
print()
print("== one thread, hipMemcpy D2H into a pageable stack buffer; added = hipshadow - plain ==")
print(f"{'live':>9} {'plain ns':>9} {'copy +ns':>9} {'alloc +ns':>10} {'free +ns':>9} "
      f"{'alloc +ns':>10} {'free +ns':>9} {'shadow B':>9}")
print(f"{'':>9} {'/copy':>9} {'':>9} {'stacks off':>10} {'':>9} {'default':>10} {'':>9} {'/alloc':>9}")
rows = {}
for live in (1000, 10000, 100000, 1000000):
    m = medians(CONFIGS, live, CALLS, 1, "sync")
    p, s, n = m["plain"], m["shadow"], m["nostacks"]
    per_alloc = (n["rss"] - p["rss"]) * 1024 / live
    rows[live] = dict(copy=s["copy"] - p["copy"], alloc=n["alloc"] - p["alloc"], free=n["free"] - p["free"],
                      alloc_stacks=s["alloc"] - p["alloc"], free_stacks=s["free"] - p["free"], bytes=per_alloc,
                      total=(s["total"], p["total"]))
    r = rows[live]
    print(f"{live:>9} {p['copy']:>9.1f} {r['copy']:>9.1f} {r['alloc']:>10.1f} {r['free']:>9.1f} "
          f"{r['alloc_stacks']:>10.1f} {r['free_stacks']:>9.1f} {per_alloc:>9.0f}")

print()
print("== the same, allocations packed 64 bytes apart (SIMHIP_ALIGN=64: hundreds per 64 KiB chunk, as an allocator that "
      "packs small blocks lays them out; above, 4 KiB apart as ROCm's) ==")
print(f"{'live':>9} {'plain ns':>9} {'copy +ns':>9} {'alloc +ns':>10} {'free +ns':>9}")
packed = {}
for live in (1000, 1000000):
    m = medians({"plain": CONFIGS["plain"], "nostacks": CONFIGS["nostacks"]}, live, CALLS, 1, "sync", align=64)
    p, n = m["plain"], m["nostacks"]
    packed[live] = dict(copy=n["copy"] - p["copy"], alloc=n["alloc"] - p["alloc"], free=n["free"] - p["free"])
    print(f"{live:>9} {p['copy']:>9.1f} {packed[live]['copy']:>9.1f} {packed[live]['alloc']:>10.1f} "
          f"{packed[live]['free']:>9.1f}")

print()
print("== control: a hipMemcpy shim of fixed arithmetic, no memory access (tests/bench/spin_shim.c), preloaded ==")
shim = os.path.join(build, "tests/bench/libspin_shim.so")
control = {}
for live in (1000, 1000000):
    got = {"plain": [], "shim": []}
    for _ in range(rounds):
        got["plain"].append(run(False, [], live, CALLS, 1, "sync")["copy"])
        out = subprocess.run([bench, str(live), str(CALLS), "1", "sync"], env=dict(env, LD_PRELOAD=shim),
                             capture_output=True, text=True, check=True).stdout.split()
        got["shim"].append(float(out[1]))
    control[live] = statistics.median(got["shim"]) - statistics.median(got["plain"])
print(f"added by the shim: {control[1000]:.1f} ns at 1K live (its own cost), {control[1000000]:.1f} ns at 1M: the "
      f"difference is the benchmark's own random reads, no longer overlapped with the next copy")

print()
print("== threads: hipMemcpyAsync D2H on each thread's own stream, 100000 live (medians of at least 7) ==")
# 16 threads on a shared machine are the noisiest figure: at least 7 rounds, 1 and 16 interleaved
thread_rounds = max(rounds, 7)
both = {"plain": CONFIGS["plain"], "shadow": CONFIGS["shadow"]}
t1, t16 = ({name: [] for name in both} for _ in range(2))
for _ in range(thread_rounds):
    for name, (shadow, options) in both.items():
        t1[name].append(run(shadow, options, 100000, CALLS, 1, "async"))
        t16[name].append(run(shadow, options, 100000, CALLS // 4, 16, "async"))
t1, t16 = ({name: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for name, runs in t.items()}
           for t in (t1, t16))
for name, t in (("1 thread", t1), ("16 threads", t16)):
    print(f"{name:>10}: plain {t['plain']['copy']:.1f} ns/call, hipshadow {t['shadow']['copy']:.1f} ns/call, "
          f"added {t['shadow']['copy'] - t['plain']['copy']:.1f}")
added1 = t1["shadow"]["copy"] - t1["plain"]["copy"]
added16 = t16["shadow"]["copy"] - t16["plain"]["copy"]

print()
print("== the shadow map alone (bench_lookup: no runtime, no call path): ns per operation; brief = hs_shadow_brief, the fast path's lookup ==")
print(f"{'live':>9} {'lookup':>8} {'brief':>8} {'add':>8} {'release':>8}")
for live in (1000, 100000, 1000000):
    runs = []
    for _ in range(rounds):
        out = subprocess.run([os.path.join(build, "tests/bench/bench_lookup"), str(live)], capture_output=True,
                             text=True, check=True).stdout.split()
        runs.append({out[i]: float(out[i + 1]) for i in range(1, len(out) - 1, 2)})
    m = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"{live:>9} {m['lookup']:>8.1f} {m['brief']:>8.1f} {m['add']:>8.1f} {m['release']:>8.1f}")

print()
big = rows[1000000]
print(f"== 1M allocations made and all freed: {big['total'][0]:.2f} s under hipshadow, {big['total'][1]:.2f} s plain "
      f"({big['total'][0] / big['total'][1]:.2f}x; {CALLS} copies included) ==")
print()
print("goals:")
goal("added per D2H copy at 1M live <= 100 ns", rows[1000000]["copy"] <= 100, f"{rows[1000000]['copy']:.0f} ns")
goal("added per D2H copy at 1K live <= 40 ns", rows[1000]["copy"] <= 40, f"{rows[1000]['copy']:.0f} ns")
worst = max(max(r["alloc"], r["free"]) for r in rows.values())
flat = max(rows[1000000]["alloc"], rows[1000000]["free"]) <= 2 * max(rows[1000]["alloc"], rows[1000]["free"], 50)
goal("added per alloc and per free at 1M live, stacks off, <= 300 ns and flat from 1K",
     worst <= 300 and flat, f"alloc {rows[1000000]['alloc']:.0f} ns, free {rows[1000000]['free']:.0f} ns at 1M; "
     f"alloc {rows[1000]['alloc']:.0f}, free {rows[1000]['free']:.0f} at 1K")
if (os.cpu_count() or 1) < 16:
    # 16 threads on fewer cores take turns: each call's time then includes other threads' turns
    verdicts.append(f"  n/a     16 threads against 1: not measurable on {os.cpu_count()} cores (16 threads share them; "
                    f"added {added16:.0f} ns against {added1:.0f} ns)")
elif t16["plain"]["copy"] > 4 * t1["plain"]["copy"]:
    # the simulator serialises every call on one lock: 16 threads wait for it, with or without
    # hipshadow, and the difference between two waits says nothing about hipshadow
    verdicts.append(f"  n/a     16 threads against 1: not shown here: the simulator's own lock makes a plain call "
                    f"{t16['plain']['copy'] / t1['plain']['copy']:.0f}x slower at 16 threads "
                    f"(added {added16:.0f} ns against {added1:.0f} ns)")
else:
    goal("16 threads against 1: added per call <= 2x", added16 <= 2 * max(added1, 1),
         f"{added16:.0f} ns against {added1:.0f} ns ({added16 / max(added1, 1):.2f}x)")
goal("the same with allocations packed 64 B apart: copy at 1M <= 100 ns, alloc and free <= 300 ns",
     packed[1000000]["copy"] <= 100 and max(packed[1000000]["alloc"], packed[1000000]["free"]) <= 300,
     f"copy {packed[1000000]['copy']:.0f} ns, alloc {packed[1000000]['alloc']:.0f} ns, free "
     f"{packed[1000000]['free']:.0f} ns at 1M (copy {packed[1000]['copy']:.0f} ns at 1K)")
goal("shadow memory per live allocation, stacks excluded, <= 128 B", rows[1000000]["bytes"] <= 128,
     f"{rows[1000000]['bytes']:.0f} B (peak RSS difference at 1M, stack_depth=0)")
goal("1M allocations made and freed: finishes", True, f"{big['total'][0]:.2f} s against {big['total'][1]:.2f} s plain")
print("\n".join(verdicts))
