#!/usr/bin/env python3
"""race_cases.c, every mode, under hipshadow --cuda with initcheck=1: each planted race or read of
unwritten memory is reported exactly once, as the table below says, and each clean mode gives no
finding; without hipshadow the program prints the same.  Runs the build for the simulated
runtime (CI) and nvcc's static and shared builds on a GPU alike.
Usage: run_race_cases.py LAUNCHER PROGRAM LIBRARY_PATH [MODE...]"""
import json
import os
import re
import subprocess
import sys
import tempfile

COPY, LAUNCH = r"Memcpy", r"Launch"
# mode: the findings it must give, in order, as (kind, severity, a pattern the API name matches).
# A kernel's pointer argument is a possible write (CUDA says nothing more): a race with it is a warning.
WANT = {
    "kernel-then-copy": [("stream-race", "warning", COPY)],
    "event": [],
    "sync": [],
    "callback": [],
    "copy-under-read": [("stream-race", "warning", COPY)],
    "two-kernels": [("stream-race", "warning", LAUNCH)],
    "pool-streams": [],
    "uninit-d2h": [("uninitialized-read", "error", COPY)],
    "uninit-short": [("uninitialized-read", "warning", LAUNCH)],
    "uninit-clean": [],
}

launcher, program, library_path = sys.argv[1:4]
modes = sys.argv[4:] or list(WANT)
env = dict(os.environ, LD_LIBRARY_PATH=library_path)
env.pop("HIPSHADOW_OPTIONS", None)
failed = 0
for mode in modes:
    with tempfile.TemporaryDirectory() as tmp:
        findings = os.path.join(tmp, "findings.json")
        proc = subprocess.run([launcher, "--cuda", "--findings", findings, "--option", "initcheck=1", "--",
                               program, mode], capture_output=True, text=True, env=env, timeout=120)
        records = [json.loads(l) for l in open(findings)] if os.path.exists(findings) else []
    plain = subprocess.run([program, mode], capture_output=True, text=True, env=env, timeout=120)
    if plain.returncode == 77:
        print("SKIP: no CUDA device here")
        sys.exit(77)
    got = [(r["kind"], r["severity"], r["api"]) for r in records]
    want = WANT[mode]
    matched = len(got) == len(want) and all(g[0] == w[0] and g[1] == w[1] and re.search(w[2], g[2])
                                            for g, w in zip(got, want))
    same = plain.returncode == 0 and proc.returncode == 0 and plain.stdout == proc.stdout
    ok = matched and same and f"race_cases {mode}: done" in proc.stdout
    print(f"{'PASS' if ok else 'FAIL'} {mode}: findings {got} (want {[w[:2] for w in want]}); exit {proc.returncode} "
          f"(without hipshadow {plain.returncode}, output {'the same' if plain.stdout == proc.stdout else 'differs'})")
    if not ok:
        failed += 1
        print(proc.stdout[-2000:] + proc.stderr[-4000:] + plain.stderr[-1000:])
print(f"{len(modes) - failed} of {len(modes)} modes as planted")
sys.exit(1 if failed else 0)
