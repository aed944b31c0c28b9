#!/usr/bin/env python3
"""CI for tools/sampler (no timing is checked): sampler_busy run with the sampler preloaded, once
sampling the whole run and once only the window it marks with SIGUSR2 ('sampler_busy window'); tools/sampler/report.py
must put the samples in the right functions (the window's function alone in the second), count
the thread's CPU time, and say which counters the machine lacks.
Usage: check_sampler.py SAMPLER_SO BUSY REPORT_PY"""
import os
import re
import subprocess
import sys
import tempfile

sampler, busy, report = sys.argv[1:4]
problems = []
with tempfile.TemporaryDirectory() as tmp:
    for group, extra in (("whole", {"HS_SAMPLER_ALL": "1"}), ("window", {})):
        env = dict(os.environ, LD_PRELOAD=sampler, HS_SAMPLER_OUT=os.path.join(tmp, group), **extra)
        p = subprocess.run([busy, group], env=env, capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            problems.append(f"{group}: sampler_busy exited {p.returncode}: {p.stderr[-300:]}")
    files = [os.path.join(tmp, f) for f in sorted(os.listdir(tmp))]
    r = subprocess.run([sys.executable, report, "--focus", "sampler_busy", *files], capture_output=True, text=True,
                       timeout=120)
    out = r.stdout
    print(out)
    if r.returncode != 0:
        problems.append(f"report.py exited {r.returncode}: {r.stderr[-300:]}")


def share(group, fn):
    m = re.search(rf"^FUNCTION {group} ([\d.]+) \d+ sampler_busy {fn}$", out, re.M)
    return float(m.group(1)) if m else 0.0


# whole: 0.3 s in spin_here, 0.3 s in outside_window (allowing for a loaded machine)
if not (25 <= share("whole", "spin_here") <= 75 and 25 <= share("whole", "outside_window") <= 75):
    problems.append("whole run: spin_here and outside_window should share the samples about evenly")
# window: spin_here alone
if share("window", "spin_here") < 90 or share("window", "outside_window") > 5:
    problems.append("window: the samples should be spin_here's alone")
for group in ("whole", "window"):
    m = re.search(rf"^SAMPLES {group} (\d+) files 1 .*\bcpu_ns=(\d+)\b", out, re.M)
    if not m or int(m.group(1)) < 100 or int(m.group(2)) <= 0:
        problems.append(f"{group}: no SAMPLES line with samples and the thread's CPU time")
for p in problems:
    print("FAIL: " + p)
sys.exit(1 if problems else 0)
