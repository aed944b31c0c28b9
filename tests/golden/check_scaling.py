#!/usr/bin/env python3
"""The report's time grows linearly with the log: for each shape below, one dimension of a
synthetic log (make_big_log) grows with the events, and each format that reads that dimension
must take at most RATIO times longer on a log 4x larger (linear: ~4, quadratic: ~16).  CPU time
(user + system) of the report alone, the best of two runs, so a busy machine does not decide.
Usage: check_scaling.py REPORT MAKE_BIG_LOG [EVENTS]"""
import os
import subprocess
import sys
import tempfile

report, make_big_log = (os.path.abspath(a) for a in sys.argv[1:3])
sanitized = "ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ  # tests/sanitizers.sh: 5-10x slower
events = int(sys.argv[3]) if len(sys.argv) > 3 else 5000 if sanitized else 20000
GROWTH, RATIO = 4, 8.0

# shape: (events at the smaller size, what grows with them, the formats that read it)
SHAPES = {
    "findings": (events, lambda n: [f"findings={n // 2}", "streams=4", "modules=4", "stacks=64", "apis=16", "kernels=16"],
                 ["text", "html", "sarif", "junit"]),
    # a lane's look-up is cheap: the quadratic term shows only on larger logs
    "streams": (3 * events, lambda n: [f"streams={n}", "findings=0", "modules=4", "stacks=16", "apis=16", "kernels=16"],
                ["html", "perfetto"]),
    "modules": (events, lambda n: [f"modules={n}", f"stacks={n // 4}", f"findings={n // 8}", "streams=4", "apis=16",
                           "kernels=16"], ["text", "json"]),
    "apis": (events, lambda n: [f"apis={min(n // 2, 65535)}", "findings=0", "streams=4", "modules=4", "stacks=16", "kernels=16"],
             ["csv", "json"]),
}


def cpu_seconds(fmt, log):
    best = None
    for _ in range(2):
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen([report, "--format", fmt, log], stdout=subprocess.DEVNULL, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            if status != 0:
                err.seek(0)
                sys.exit(f"FAIL: {fmt} of {log}: status {status}: {err.read()[-300:]!r}")
        t = usage.ru_utime + usage.ru_stime
        best = t if best is None else min(best, t)
    return best


failures = []
with tempfile.TemporaryDirectory() as tmp:
    for shape, (base, counts, formats) in SHAPES.items():
        times = {}
        for n in (base, base * GROWTH):
            log = os.path.join(tmp, f"{shape}-{n}.hslog")
            subprocess.run([make_big_log, log, str(n)] + counts(n), check=True)
            times[n] = {fmt: cpu_seconds(fmt, log) for fmt in formats}
            os.unlink(log)
        for fmt in formats:
            small, large = times[base][fmt], times[base * GROWTH][fmt]
            ratio = large / max(small, 0.01)  # below 10 ms the clock's tick decides
            print(f"{shape:9} {fmt:9} {base:8} events {small:7.3f} s  {base * GROWTH:8} events {large:7.3f} s  x{ratio:.1f}")
            if ratio > RATIO and large > 0.2:
                failures.append(f"{fmt} with {shape} growing: x{ratio:.1f} for x{GROWTH} the events")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
