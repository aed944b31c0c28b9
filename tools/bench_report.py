#!/usr/bin/env python3
"""How `hipshadow report` scales with the log: seconds per million events for each format at two
or more sizes.  The logs are synthetic (tests/golden/make_big_log.c): copies, launches,
allocations, frees, syncs and findings with their GPU faults, over streams, modules, stacks, API
and kernel names that all grow with the log.  Linear time reads as the same seconds per million
events at every size; the last column compares the largest size with the smallest.
Usage: tools/bench_report.py [BUILD_DIR] [--sizes 250000,1000000] [--formats text,json,...] [--keep DIR]
                             [--report PATH]   (another hipshadow-report, to compare)
The CI runs it at a tiny size to see that it works; its times are never checked."""
import argparse
import os
import subprocess
import sys
import tempfile
import time

FORMATS = ["text", "json", "csv", "perfetto", "html", "sarif", "junit"]


def run(report, fmt, log):
    """(wall seconds, CPU seconds, max RSS in MiB) of one report written to /dev/null."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([report, "--format", fmt, log], stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        if status != 0:
            err.seek(0)
            sys.exit(f"bench_report: {fmt} of {log} failed ({status}): {err.read()[-300:]!r}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("build", nargs="?", default="build")
    p.add_argument("--sizes", default="250000,1000000", help="events per log, comma-separated")
    p.add_argument("--formats", default=",".join(FORMATS))
    p.add_argument("--keep", help="write the logs here and keep them")
    p.add_argument("--report", help="the hipshadow-report to time (default: the build's)")
    a = p.parse_args()
    report = a.report or os.path.join(a.build, "tools/report/hipshadow-report")
    make_big_log = os.path.join(a.build, "tests/golden/make_big_log")
    for tool in (report, make_big_log):
        if not os.access(tool, os.X_OK):
            sys.exit(f"bench_report: {tool} is not built")
    sizes = [int(s) for s in a.sizes.split(",")]
    formats = a.formats.split(",")
    per_million = {}
    with tempfile.TemporaryDirectory() as tmp:
        where = a.keep or tmp
        os.makedirs(where, exist_ok=True)
        print(f"{'format':9} {'events':>9} {'log MiB':>8} {'wall s':>8} {'CPU s':>8} {'CPU s/M events':>15} {'max RSS MiB':>12}")
        for n in sizes:
            log = os.path.join(where, f"bench-{n}.hslog")
            subprocess.run([make_big_log, log, str(n)], check=True)
            mib = os.path.getsize(log) / 2**20
            for fmt in formats:
                wall, cpu, rss = run(report, fmt, log)
                per_million.setdefault(fmt, []).append(cpu / n * 1e6)
                print(f"{fmt:9} {n:9} {mib:8.1f} {wall:8.3f} {cpu:8.3f} {cpu / n * 1e6:15.3f} {rss:12.1f}", flush=True)
            if not a.keep:
                os.unlink(log)
    if len(sizes) > 1:
        print(f"\nCPU seconds per million events, {sizes[-1]} against {sizes[0]} events (1.0: linear):")
        for fmt in formats:
            first, last = per_million[fmt][0], per_million[fmt][-1]
            print(f"  {fmt:9} {first:7.3f} -> {last:7.3f}  x{last / max(first, 1e-9):.2f}")


if __name__ == "__main__":
    main()
