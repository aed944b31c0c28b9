#!/usr/bin/env python3
"""A driver-layer program under hipshadow --cuda on the simulated libcuda: it must exit 0, print
STDOUT_HAS, and give exactly the findings listed (each KIND/SEVERITY/API[/RULE], in order; none listed:
no finding); with --as-plain, its whole output must instead be what it prints without hipshadow
(each call answered as the runtime answers it), whatever hipshadow reports.  --option K=V (any
number) is handed to the launcher, --arg A (any number) to the program.
Usage: run_driver_case.py [--as-plain] [--option K=V]... [--arg A]... LAUNCHER PROGRAM SIMCUDA_DIR STDOUT_HAS
                          [KIND/SEVERITY/API[/RULE] ...]"""
import difflib
import json
import os
import subprocess
import sys
import tempfile

argv = sys.argv[1:]
as_plain, options, args = False, [], []
while argv and argv[0] in ("--as-plain", "--option", "--arg"):
    flag = argv.pop(0)
    if flag == "--as-plain":
        as_plain = True
    else:
        (options if flag == "--option" else args).append(argv.pop(0))
launcher, program, simcuda_dir, stdout_has = argv[:4]
want = [tuple(w.split("/")) for w in argv[4:]]
with tempfile.TemporaryDirectory() as tmp:
    findings = os.path.join(tmp, "findings.json")
    env = dict(os.environ, LD_LIBRARY_PATH=simcuda_dir)
    env.pop("HIPSHADOW_OPTIONS", None)
    flags = [x for o in options for x in ("--option", o)]
    proc = subprocess.run([launcher, "--cuda", "--findings", findings] + flags + ["--", program] + args,
                          capture_output=True, text=True, env=env, timeout=120)
    records = [json.loads(l) for l in open(findings)] if os.path.exists(findings) else []
# A runtime-error that names the runtime's rule (runtime_rules.inc) carries it as a fourth part.
got = [(r["kind"], r["severity"], r["api"]) + ((r["cause_rule"],) if "cause_rule" in r else ()) for r in records]
if as_plain:
    plain = subprocess.run([program] + args, capture_output=True, text=True, env=env, timeout=120)
    same = plain.stdout == proc.stdout and plain.returncode == 0
    print(f"output {'the same as' if same else 'differs from'} the run without hipshadow"
          f" (which exits {plain.returncode})")
    print("\n".join(difflib.unified_diff(plain.stdout.splitlines(), proc.stdout.splitlines(), "without hipshadow",
                                         "under hipshadow", n=0, lineterm="")))
    got = want if same else [("output differs", "", "")]
ok = proc.returncode == 0 and stdout_has in proc.stdout and got == want
print(f"{'PASS' if ok else 'FAIL'}: findings {got} (want {want}), exit {proc.returncode}")
if not ok:
    print(proc.stdout + proc.stderr[-4000:])
sys.exit(0 if ok else 1)
