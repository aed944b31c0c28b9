#!/usr/bin/env python3
"""What hipshadow's own code costs per event when it starts cold, counted by callgrind's cache
model (deterministic, unlike a timing on a shared machine): instructions, lines of code missed
in the first-level cache, and lines of data missed (read, written), per unit of work.

  launch      bench_events arena,cold: a launch on an arena's tensors (235 of them, the access
              history kept), with a runtime's worth of code and data run between two (ggml's)
  torch-op    blocks_sim generate cold: PyTorch's op, a tensor made, a kernel launched on
              pointers in a struct, the tensor before let go (3.6 block events and a launch)
  torch-apart blocks_sim generate apart: the same op with the program's code and data run also
              between its allocations, its launch and its frees, as in PyTorch itself; what it
              misses beyond torch-op is the cost of that program between the parts
  block       bench_blocks TRACE cold: one caching-allocator event of a recorded GPT-2 trace
              (the core linked in: this build only)

Usage: bench_cachesim.py [BUILD_DIR] [--old-hip LIB] [--old-cuda LIB] [--only launch,torch-op,torch-apart,block]
                         [--options NAME=VALUE[:...]] [--functions N] [--max-ir N] [--check]
--options: hipshadow options for the runs, e.g. torch_blocks=0 or passthrough=calls (what a unit
costs without the blocks, or without any check: PyTorch's op as its parts).
--max-ir N (CI): exit 1 when a workload runs more than N of hipshadow's instructions a unit.
--old-*: an older build's libhipshadow.so / libhipshadow-cuda.so, counted beside this one's.
--functions N: after each workload's line, its N functions that miss the most lines (code and
data together), per unit: 'FUNCTION <workload> <library> Ir I1mr D1mr D1mw <file>:<function>'
(callgrind names an inlined body after the file it came from and the function it went into).
--check (CI): exit 77 (skipped) without valgrind, 1 when a workload counted no code of
hipshadow's (the preload or the sums went wrong).
Each workload runs at its count and at twice it; the difference, over the count's units, leaves
start-up and exit out.  hipshadow's rows are its libraries' and those of code inlined from its
sources (callgrind_annotate names no object on them).
Needs valgrind; the simulators are given an aperture valgrind can map (SIM*_APERTURE_GIB)."""
import os
import re
import subprocess
import sys
import tempfile

import valgrind_bench

EVENTS = ("Ir", "I1mr", "D1mr", "D1mw")


def callgrind(cmd, env, out):
    r = subprocess.run(["valgrind", "--tool=callgrind", "--cache-sim=yes", f"--callgrind-out-file={out}"] + cmd,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=1800)
    if r.returncode:
        sys.exit(f"bench_cachesim: {' '.join(cmd)} failed under callgrind:\n{r.stderr[-2000:]}")


# hipshadow's own sources: callgrind_annotate names no object on the rows of code inlined from
# another file (a block event's body, inlined into the bridge's entry), so such rows are told by
# their source file instead (the simulators and the benchmarks live under tests/).
OWN_SOURCE = re.compile(r"(^|/)src/(core|cuda|hip|torch|nvtx)/")


def ours(lib):
    """keep() for a run under lib: its rows, the plugin's, and the inlined rows of our sources."""
    def keep(f, o):
        return o == lib or o.endswith("/libhipshadow-torch.so") or (not o and bool(OWN_SOURCE.search(f)))
    return keep


def by_function(out, keep):
    """{file:function: the four counts} over the functions keep(file_function, object) accepts."""
    r = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", "--show-percs=no",
                        "--show=" + ",".join(EVENTS), out], capture_output=True, text=True, check=True)
    got = {}
    row = re.compile(r"^\s*([\d,.]+)\s+([\d,.]+)\s+([\d,.]+)\s+([\d,.]+)\s+(\S.*?)(?:\s+\[(.*)\])?$")
    for line in r.stdout.splitlines():
        m = row.match(line)
        if not m or not keep(m.group(5), m.group(6) or ""):
            continue
        counts = [0 if v == "." else int(v) for v in (m.group(i + 1).replace(",", "") for i in range(len(EVENTS)))]
        name = re.sub(r"^.*?(?=(src|tests)/)", "", m.group(5))  # the build's path up to the sources left out
        got[name] = [a + b for a, b in zip(got.get(name, [0] * len(EVENTS)), counts)]
    return got


def more_options(ap):
    ap.add_argument("--functions", type=int, default=0, metavar="N")
    ap.add_argument("--max-ir", type=float, default=None, metavar="N",
                    help="fail when a workload runs more than N of hipshadow's instructions a unit")


def main():
    args, b, only = valgrind_bench.parse(__doc__, "bench_cachesim", ("launch", "torch-op", "torch-apart", "block"),
                                         ("valgrind", "callgrind_annotate"),
                                         more_options)
    runs = []  # (workload, label, command, the index of its count in it, env, units at that count, keep)
    if "launch" in only:
        env = dict(valgrind_bench.launch_env(b, args.options), BENCH_NONBLOCKING="1")
        cmd = [os.path.join(b, "tests/bench/bench_events"), "1000", "2000", "arena,cold"]
        for label, lib in valgrind_bench.libraries(os.path.join(b, "src/libhipshadow.so"), args.old_hip):
            runs.append(("launch", label, cmd, 2, dict(env, LD_PRELOAD=lib), 2000, ours(lib)))
    for work, how in (("torch-op", "cold"), ("torch-apart", "apart")):
        if work not in only:
            continue
        cmd = [os.path.join(b, "tests/torchsim/blocks_sim"), "generate", "20", how]
        for label, lib in valgrind_bench.libraries(os.path.join(b, "src/libhipshadow-cuda.so"), args.old_cuda):
            runs.append((work, label, cmd, 2, dict(valgrind_bench.torch_env(b, args.options), LD_PRELOAD=lib), 20 * 271,
                         ours(lib)))
    if "block" in only:
        trace = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests/unit/data/torch-gpt2-head.txt")
        cmd = [os.path.join(b, "tests/bench/bench_blocks"), os.path.abspath(trace), "3", "cold"]
        runs.append(("block", "new", cmd, 2, valgrind_bench.base_env(), 3 * 20000,
                     lambda f, o: "src/core/" in f and not f.endswith(":main")))
    print(f"{'workload':11} {'library':7} " + " ".join(f"{e:>8}" for e in EVENTS) + "   (per unit)")
    with tempfile.TemporaryDirectory() as tmp:
        for n, (work, label, cmd, at, env, units, keep) in enumerate(runs):
            # Run at the count and at twice it: the difference is the units' alone, start-up and
            # exit (the loader, the wrapper table's sort, the first mappings) left out.
            once, twice = os.path.join(tmp, f"cg.{n}.1"), os.path.join(tmp, f"cg.{n}.2")
            callgrind(cmd, env, once)
            callgrind(cmd[:at] + [str(2 * int(cmd[at]))] + cmd[at + 1:], env, twice)
            first, second = by_function(once, keep), by_function(twice, keep)
            per = {f: [two - one for one, two in zip(first.get(f, [0] * len(EVENTS)), c)] for f, c in second.items()}
            sums = [sum(c[i] for c in per.values()) for i in range(len(EVENTS))]
            print(f"{work:11} {label:7} " + " ".join(f"{s / units:8.1f}" for s in sums), flush=True)
            for f, c in sorted(per.items(), key=lambda fc: -sum(fc[1][1:]))[:args.functions]:
                print(f"FUNCTION {work} {label} " + " ".join(f"{v / units:.1f}" for v in c) + f" {f}", flush=True)
            if args.check and sums[0] < units * 10:  # a wrapper forwarding alone runs a few dozen
                sys.exit(f"bench_cachesim: {work} ({label}) counted {sums[0]} instructions of hipshadow's for "
                         f"{units} units: the library was not preloaded, or its rows were not found")
            if args.max_ir is not None and sums[0] / units > args.max_ir:
                sys.exit(f"bench_cachesim: {work} ({label}) ran {sums[0] / units:.1f} of hipshadow's instructions "
                         f"a unit, more than --max-ir {args.max_ir:g}")
            if args.check and args.functions and not any(f.startswith("src/") and c[0] > 0 for f, c in per.items()):
                sys.exit(f"bench_cachesim: {work} ({label}): no function of hipshadow's sources named")


if __name__ == "__main__":
    main()
