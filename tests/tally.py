#!/usr/bin/env python3
"""Counts test results from meson's JSON test logs and prints "N passed, N failed, N skipped".

  tally.py LOG                          one log: the line alone (tests/run.sh)
  tally.py LABEL=PATH[,PATH...] ...     one "LABEL: N passed, ..." line per part, then the total

A PATH is a meson test log (meson-logs/*.json: one JSON object a line, with "name" and "result")
or a directory of sanitizer reports (tests/sanitizers.sh points each sanitizer's log_path there):
every file in it is one failure, and its first lines are printed.  A log that is missing counts
as a failure, and so does a part in which nothing passed.
Exit status: 0 only if nothing failed and something passed."""
import json
import os
import sys


def count(path, label):
    """(passed, failed, skipped) for one PATH, saying what failed."""
    passed = failed = skipped = 0
    where = f"{label}: " if label else ""
    if os.path.isdir(path):
        for name in sorted(os.listdir(path)):
            failed += 1
            with open(os.path.join(path, name), errors="replace") as f:
                head = f.readlines()[:60]
            print(f"{where}sanitizer report {os.path.join(path, name)}:\n" + "".join("    " + l for l in head))
        return passed, failed, skipped
    if not os.path.exists(path):
        print(f"{where}no test log {path}")
        return 0, 1, 0
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            result = json.loads(line)["result"]
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
    return passed, failed, skipped


def line(p, f, s):
    return f"{p} passed, {f} failed, {s} skipped"


def main(args):
    parts = [a.partition("=")[::2] if "=" in a else ("", a) for a in args]
    total = [0, 0, 0]
    bad = False
    for label, paths in parts:
        sums = [0, 0, 0]
        for path in paths.split(","):
            for i, n in enumerate(count(path, label)):
                sums[i] += n
        if label:
            print(f"{label}: {line(*sums)}" + ("" if sums[0] else " (nothing passed)"))
        bad = bad or sums[1] > 0 or sums[0] == 0
        total = [t + n for t, n in zip(total, sums)]
    print(line(*total))
    return 1 if bad or not parts else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
