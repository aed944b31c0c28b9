#!/usr/bin/env python3
"""The pages of memory one unit of an engine's work touches, plain and under hipshadow, read from
every instruction and data access (valgrind's lackey; deterministic, unlike a timing).  Between
two of an engine's calls its own work evicts the address translations of what hipshadow touches,
so each page hipshadow adds costs a page walk (tens of ns; the benchmarks' `tlb` mode shows it).

  launch      bench_events arena: ggml's pattern (launches on an arena's tensors, a sync every
              64, the inputs copied in on a second stream); a unit is one launch
  torch-op    blocks_sim generate: PyTorch's op (a tensor made, a kernel launched on pointers in
              a struct, the tensor before let go: 3.6 block events and a launch); a unit is one op

For each it prints the distinct pages a unit touches (code, data), plain and under each library,
and of those, the pages hipshadow's own code runs in and reads or writes ("own": code in its
libraries, data by its instructions: the C library's and the vDSO's are the added rest).  Its
hot structures share one region offered to transparent huge pages (src/core/process/hot_memory.c):
"own data tlb" counts the translations its own data then needs, each 2 MiB of the region one.  A unit
starts at each entry into the simulated runtime's launch; the first 50 units are left out.

Usage: bench_pages.py [BUILD_DIR] [--old-hip LIB] [--old-cuda LIB] [--only launch,torch-op]
                      [--options NAME=VALUE[:...]] [--check]
--options: hipshadow options for the runs (as bench_cachesim.py's).
--old-*: an older build's libhipshadow.so / libhipshadow-cuda.so, counted beside this one's.
--check (CI): exit 77 (skipped) without valgrind, 1 when a library added no page of its own
(the preload or the parse went wrong)."""
import os
import re
import subprocess
import sys
import tempfile

import valgrind_bench

SKIP_UNITS = 50
PAGE_SHIFT = 12
HUGE_SHIFT = 21
# The hot region's mapping as the library asks for it (hot_memory.c: REGION plus HUGE to align it).
HOT_MAPPING_BYTES = (16 + 2) << 20


def load_segments(path):
    """[(start, end, executable)] of an object's loadable segments, relative to its base."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    segs = []
    for line in out.splitlines():
        p = line.split()
        if len(p) >= 8 and p[0] == "LOAD":
            vaddr, memsz = int(p[2], 16), int(p[5], 16)
            segs.append((vaddr, vaddr + memsz, "E" in p[6:-1]))
    return segs


def symbol_offset(path, name):
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[2].split("@")[0] == name:
            return int(p[0], 16)
    sys.exit(f"bench_pages: {path} has no {name}")


class LoadsUnknown(Exception):
    """This valgrind does not say where it loaded each object: nothing can be attributed."""


def count(log, entry_object, entry_symbol, own_objects):
    """Mean distinct pages per unit: (all code, all data, own code, own data, own data translations
    with the hot region's pages 2 MiB)."""
    bias = {}
    pending = None
    units = []
    cur = None
    own_ranges, entry = [], None
    own_now = False
    hot, hot_pending = None, False  # the hot region's pages [lo, hi)
    with open(log, errors="replace") as f:
        for line in f:
            c = line[0]
            if c == "I":
                a = int(line[3:line.index(",")], 16)
                if a == entry:
                    cur = [set(), set(), set(), set()]
                    units.append(cur)
                if cur is not None:
                    page = a >> PAGE_SHIFT
                    cur[0].add(page)
                    own_now = any(lo <= a < hi for lo, hi in own_ranges)
                    if own_now:
                        cur[2].add(page)
                continue
            if c == " ":
                if cur is not None and line[1] in "LSM":
                    page = int(line[3:line.index(",")], 16) >> PAGE_SHIFT
                    cur[1].add(page)
                    if own_now:
                        cur[3].add(page)
                continue
            # valgrind's own lines: the hot region's mapping (--trace-syscalls), where each object was loaded
            if hot is None and (hot_pending or f"sys_mmap ( 0x0, {HOT_MAPPING_BYTES}," in line):
                m = re.search(r"Success\(0x([0-9a-f]+)\)", line)
                hot_pending = not m
                if m:
                    lo = (int(m.group(1), 16) + (1 << HUGE_SHIFT) - 1) >> HUGE_SHIFT << HUGE_SHIFT
                    hot = (lo >> PAGE_SHIFT, (lo + HOT_MAPPING_BYTES - (1 << HUGE_SHIFT)) >> PAGE_SHIFT)
            m = re.search(r"Reading syms from (\S+)", line)
            if m:
                pending = m.group(1)
                continue
            m = pending and re.search(r"svma 0x([0-9a-f]+), avma 0x([0-9a-f]+)", line)
            if m:
                bias[pending] = int(m.group(2), 16) - int(m.group(1), 16)
                real = os.path.realpath(pending)
                if real == os.path.realpath(entry_object):
                    entry = bias[pending] + symbol_offset(entry_object, entry_symbol)
                if real in own_objects:
                    own_ranges += [(bias[pending] + lo, bias[pending] + hi) for lo, hi, x in load_segments(real) if x]
                pending = None
    if entry is None:
        raise LoadsUnknown(f"valgrind's log names no load address for {entry_object} (its -v -v -v lines "
                           "'Reading syms from' and 'svma ..., avma ...')")
    units = units[SKIP_UNITS:-1]
    if not units:
        sys.exit(f"bench_pages: no unit started at {entry_symbol} in {log}")
    def translations(pages):
        if not hot:
            return len(pages)
        inside = {p >> (HUGE_SHIFT - PAGE_SHIFT) for p in pages if hot[0] <= p < hot[1]}
        return len(inside) + sum(1 for p in pages if not hot[0] <= p < hot[1])
    means = [sum(len(u[k]) for u in units) / len(units) for k in range(4)]
    return means + [sum(translations(u[3]) for u in units) / len(units)], len(units)


def run(cmd, env, log):
    r = subprocess.run(["valgrind", "-v", "-v", "-v", "--trace-syscalls=yes", "--tool=lackey", "--trace-mem=yes", f"--log-file={log}"] + cmd,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=1800)
    if r.returncode:
        sys.exit(f"bench_pages: {' '.join(cmd)} failed under lackey (exit {r.returncode}); see its log")


def main():
    args, b, only = valgrind_bench.parse(__doc__, "bench_pages", ("launch", "torch-op"), ("valgrind",))
    work = []  # (workload, command, env, entry object, entry symbol, [(label, lib, its own objects)])
    if "launch" in only:
        libs = valgrind_bench.libraries(os.path.join(b, "src/libhipshadow.so"), args.old_hip)
        work.append(("launch", [os.path.join(b, "tests/bench/bench_events"), "1000", "400", "arena"],
                     valgrind_bench.launch_env(b, args.options), os.path.join(b, "tests/simhip/libamdhip64.so.5"),
                     "hipModuleLaunchKernel", [(label, lib, [lib]) for label, lib in libs]))
    if "torch-op" in only:
        libs = valgrind_bench.libraries(os.path.join(b, "src/libhipshadow-cuda.so"), args.old_cuda)
        plugin = valgrind_bench.torch_plugin(b)
        work.append(("torch-op", [os.path.join(b, "tests/torchsim/blocks_sim"), "generate", "1"],
                     valgrind_bench.torch_env(b, args.options), os.path.join(b, "tests/simcuda/libcuda.so.1"),
                     "cuLaunchKernel",
                     [(label, lib, [lib, plugin]) for label, lib in libs]))
    print(f"{'workload':9} {'library':7} {'code':>6} {'data':>6} {'added':>6} {'own code':>9} {'own data':>9}"
          f" {'own data tlb':>12}   (pages per unit)")
    try:
        sys.exit(1 if measure(work, args.check) else 0)
    except LoadsUnknown as e:
        if args.check:
            print(f"SKIP: {e}")
            sys.exit(77)
        sys.exit(f"bench_pages: {e}")


def measure(work, check):
    """Runs and prints each workload; whether a library counted nothing of its own (--check)."""
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for workload, cmd, env, entry_object, entry_symbol, libs in work:
            log = os.path.join(tmp, "plain.log")
            run(cmd, env, log)
            plain, n = count(log, entry_object, entry_symbol, set())
            print(f"{workload:9} {'plain':7} {plain[0]:6.1f} {plain[1]:6.1f} {'':>6} {'':>9} {'':>9}   ({n} units)",
                  flush=True)
            for label, lib, own in libs:
                log = os.path.join(tmp, label + ".log")
                run(cmd, dict(env, LD_PRELOAD=lib), log)
                got, n = count(log, entry_object, entry_symbol, {os.path.realpath(o) for o in own})
                added = got[0] + got[1] - plain[0] - plain[1]
                print(f"{workload:9} {label:7} {got[0]:6.1f} {got[1]:6.1f} {added:+6.1f} {got[2]:9.1f} {got[3]:9.1f}"
                      f" {got[4]:12.1f}", flush=True)
                if check and (got[2] < 1 or added <= 0):
                    print(f"FAIL: {workload} under {lib}: no page of hipshadow's own counted (the preload or the "
                          "log's parse went wrong)")
                    failed = True
    return failed


if __name__ == "__main__":
    main()
