#!/usr/bin/env python3
"""Golden tests of the log format and of every report format.
1. make_golden regenerates the golden logs: they must equal the committed ones byte for byte.
2. `hipshadow report --format F` on the committed logs must equal the committed expected output.
Usage: check_golden.py MAKE_GOLDEN LAUNCHER GOLDEN_DIR [--update]"""
import filecmp
import os
import subprocess
import sys
import tempfile

make_golden, launcher, golden = (os.path.abspath(a) for a in sys.argv[1:4])
update = "--update" in sys.argv
LOGS = ["rank0.hslog", "rank1.hslog"]
CASES = [(fmt, LOGS) for fmt in ("text", "json", "csv", "perfetto", "html", "sarif", "junit")] + [
    ("text", ["truncated.hslog"]), ("text", ["corrupt.hslog"])]

failures = []
with tempfile.TemporaryDirectory() as tmp:
    subprocess.run([make_golden, tmp], check=True)
    for name in LOGS + ["truncated.hslog", "corrupt.hslog"]:
        committed = os.path.join(golden, name)
        if update:
            subprocess.run(["cp", os.path.join(tmp, name), committed], check=True)
        elif not filecmp.cmp(os.path.join(tmp, name), committed, shallow=False):
            failures.append(f"{name}: the regenerated log differs from the committed one (format changed?)")

for fmt, logs in CASES:
    stem = logs[0].split(".")[0] if len(logs) == 1 else "merged"
    expected = os.path.join(golden, "expected", f"{stem}.{fmt}")
    proc = subprocess.run([launcher, "report", "--format", fmt] + logs,
                          capture_output=True, text=True, cwd=golden)
    got = proc.stdout + "".join("stderr: " + line + "\n" for line in proc.stderr.splitlines())
    if update:
        os.makedirs(os.path.dirname(expected), exist_ok=True)
        open(expected, "w").write(got)
        continue
    want = open(expected).read()
    if got != want:
        failures.append(f"{fmt} of {logs}: output differs from {expected}")
        import difflib
        sys.stdout.writelines(list(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                        expected, "got"))[:40])

for f in failures:
    print("FAIL:", f)
print(f"{len(CASES)} report outputs and {len(LOGS) + 2} logs checked")
sys.exit(1 if failures else 0)
