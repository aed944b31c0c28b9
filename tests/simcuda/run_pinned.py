#!/usr/bin/env python3
"""pinned_readback under hipshadow --cuda: the driver-layer reads of pinned memory give no finding;
the D2H into device memory gives its direction-mismatch error, from the driver layer.
Usage: run_pinned.py LAUNCHER PROGRAM SIMCUDA_DIR"""
import json
import os
import subprocess
import sys
import tempfile

launcher, program, simcuda_dir = sys.argv[1:4]
with tempfile.TemporaryDirectory() as tmp:
    findings = os.path.join(tmp, "findings.json")
    env = dict(os.environ, LD_LIBRARY_PATH=simcuda_dir)
    env.pop("HIPSHADOW_OPTIONS", None)
    proc = subprocess.run([launcher, "--cuda", "--findings", findings, "--", program], capture_output=True, text=True,
                          env=env, timeout=120)
    records = [json.loads(l) for l in open(findings)] if os.path.exists(findings) else []
got = [(r["kind"], r["severity"], r["api"]) for r in records]
want = [("direction-mismatch", "error", "cuMemcpyDtoH_v2")]
ok = proc.returncode == 0 and "pinned read back" in proc.stdout and got == want
print(f"{'PASS' if ok else 'FAIL'}: findings {got} (want {want}), exit {proc.returncode}")
if not ok:
    print(proc.stdout + proc.stderr[-4000:])
sys.exit(0 if ok else 1)
