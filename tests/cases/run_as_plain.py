#!/usr/bin/env python3
"""Runs a program without hipshadow and under it, on a simulated runtime, and requires the same
standard output and exit status: every answer the program got, return codes and last errors
alike, is the runtime's own.  The program must exit 0 without hipshadow (it checks the runtime).
On a difference, prints the lines that differ.
Usage: run_as_plain.py [--cuda] LAUNCHER LIBDIR PROGRAM [ARG...]  (LIBDIR: the simulator's)"""
import difflib
import os
import subprocess
import sys

args = sys.argv[1:]
front = ["--cuda"] if args and args[0] == "--cuda" else []
launcher, libdir, program = args[len(front):len(front) + 3]
rest = args[len(front) + 3:]
env = dict(os.environ, LD_LIBRARY_PATH=libdir)
env.pop("HIPSHADOW_OPTIONS", None)
plain = subprocess.run([program] + rest, capture_output=True, text=True, env=env, timeout=300)
if plain.returncode == 77:
    print("SKIP: the program cannot run here")
    sys.exit(77)
shadow = subprocess.run([launcher] + front + ["--", program] + rest, capture_output=True, text=True, env=env,
                        timeout=300)
failures = []
if plain.returncode != 0:
    failures.append(f"without hipshadow the program exits {plain.returncode}")
if shadow.returncode != plain.returncode:
    failures.append(f"under hipshadow it exits {shadow.returncode}, without {plain.returncode}")
if shadow.stdout != plain.stdout:
    diff = difflib.unified_diff(plain.stdout.splitlines(), shadow.stdout.splitlines(), "without hipshadow",
                                "under hipshadow", n=0, lineterm="")
    failures.append("standard output differs:\n" + "\n".join(diff))
print(plain.stdout)
for f in failures:
    print("FAIL:", f)
if failures:
    print("stderr under hipshadow (end):\n" + shadow.stderr[-3000:])
    print("stderr without hipshadow (end):\n" + plain.stderr[-2000:])
else:
    print("PASS: the same output with and without hipshadow")
sys.exit(1 if failures else 0)
