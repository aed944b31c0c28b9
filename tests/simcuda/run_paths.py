#!/usr/bin/env python3
"""The driver layer, on the simulated CUDA driver: driver_paths built four ways (shared runtime,
static runtime, cuGetProcAddress, dlsym) must give the same findings under hipshadow --cuda,
each bug once.  Usage: run_paths.py LAUNCHER BIN_DIR SIMCUDA_DIR"""
import json
import os
import re
import subprocess
import sys
import tempfile

launcher, bin_dir, simcuda_dir = sys.argv[1:4]
PATHS = ["driver_paths_shared", "driver_paths_static", "driver_paths_getproc", "driver_paths_dlsym"]
# The findings every path must give, in order: (kind, overrun, alloc size, alloc offset, device).
G = 2 << 20
WANT = [
    ("out-of-bounds", 1024, 4096, 1024, 0),
    ("out-of-bounds", G // 2, G, G // 2, 0),
    ("out-of-bounds", G + 4096, G, 2 * G, 0),  # measured from the nearest map below
    ("out-of-bounds", 512, 4096, 512, 1),
    ("use-after-free", None, 4096, 0, 0),
]
# The runtime refuses each of those copies; its refusal is said with the finding, not counted again:
# (the code, the kind that explains it), in order.
REFUSED = re.compile(r"^hipshadow: \w+ then returned \w+ \((\d+)\), as the ([a-z-]+) above explains$", re.M)
WANT_REFUSED = [("1", "out-of-bounds")] * 4 + [("700", "use-after-free")]
failures = []


def run(program):
    with tempfile.TemporaryDirectory() as tmp:
        findings = os.path.join(tmp, "findings.json")
        env = dict(os.environ, LD_LIBRARY_PATH=simcuda_dir)
        env.pop("HIPSHADOW_OPTIONS", None)
        proc = subprocess.run([launcher, "--cuda", "--findings", findings, "--", os.path.join(bin_dir, program)],
                              capture_output=True, text=True, env=env, timeout=120)
        records = [json.loads(l) for l in open(findings)] if os.path.exists(findings) else []
    return proc, records


results = {}
for program in PATHS:
    proc, records = run(program)
    got = [(r["kind"], r["overrun"], (r["alloc"] or {}).get("size"), (r["alloc"] or {}).get("offset"),
            r.get("device")) for r in records]
    refused = REFUSED.findall(proc.stderr)
    ok = proc.returncode == 0 and got == WANT and refused == WANT_REFUSED
    print(f"{'PASS' if ok else 'FAIL'} {program}: {len(records)} findings, apis {sorted({r['api'] for r in records})}")
    if not ok:
        failures.append(program)
        print(proc.stdout + proc.stderr[-4000:])
        for i in range(max(len(got), len(WANT))):
            g, w = got[i] if i < len(got) else None, WANT[i] if i < len(WANT) else None
            print(f"  {'   ' if g == w else '>>>'} got {g}, want {w}")
        print(f"  refusals said: got {refused}, want {WANT_REFUSED}")
    results[program] = records
    if "spanning: 0" not in proc.stdout:  # the copy across two maps must reach the driver and succeed
        failures.append(program + " (spanning copy)")
        print("  the copy spanning two maps did not succeed:\n" + proc.stdout)

# The shared runtime is checked at the runtime layer, once: its own calls into the driver are not.
if any(not r["api"].startswith("cuda") for r in results.get("driver_paths_shared", [])):
    failures.append("shared runtime: a finding from the driver layer (a bug reported twice)")
# Without libcudart.so, the static runtime is seen at the driver layer only.
if any(not r["api"].startswith("cu") or r["api"].startswith("cuda") for r in results.get("driver_paths_static", [])):
    failures.append("static runtime: findings should come from the driver layer")
print(f"{len(PATHS) - len(set(f.split()[0] for f in failures))} of {len(PATHS)} paths agree")
sys.exit(1 if failures else 0)
