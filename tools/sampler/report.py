#!/usr/bin/env python3
"""Shares of a sampled program's time by module and by function (tools/sampler/sampler.c's files).

  report.py [--focus MOD[,MOD...]] [--top N] FILE...

Files are grouped by their name up to the first '.' (HS_SAMPLER_OUT=/tmp/s/plain gives the group
'plain'), so runs of one configuration add up.  Prints, per group:
  SAMPLES <group> <samples> files <n> <counter>=<sum> ...   (the counters over the sampled windows)
  MODULE <group> <percent> <samples> <module>               (the 12 largest)
  FUNCTION <group> <percent> <samples> <module> <function>  (the --top largest in modules whose
                                                             file name contains a --focus text)
Functions come from the modules' symbol tables (readelf and nm, from binutils); a stripped
module's show as the nearest exported symbol, or '?'.  Names are printed with non-printable
characters escaped.  Exit status 1 when a file could not be read (said on stderr)."""
import argparse
import bisect
import collections
import os
import re
import subprocess
import sys


def printable(text):
    return "".join(c if c.isprintable() and c != "\\" else "\\x%02x" % ord(c) for c in text)


class Symbols:
    """A module's functions by address, and how its file offsets map to those addresses."""

    def __init__(self, path):
        self.loads, self.addrs, self.names = [], [], []
        try:
            for line in subprocess.run(["readelf", "-lW", path], capture_output=True, text=True,
                                       timeout=60).stdout.splitlines():
                w = line.split()
                if w and w[0] == "LOAD":
                    self.loads.append((int(w[1], 16), int(w[2], 16), int(w[4], 16)))
            out = ""
            for extra in ([], ["-D"]):
                out = subprocess.run(["nm", "-C", "--defined-only"] + extra + [path], capture_output=True,
                                     text=True, timeout=60).stdout
                if out.strip():
                    break
        except (OSError, subprocess.SubprocessError):
            out = ""
        found = sorted((int(m.group(1), 16), m.group(2)) for m in
                       (re.match(r"([0-9a-f]+) [tTwWiI] (.*)", l) for l in out.splitlines()) if m)
        self.addrs = [a for a, _ in found]
        self.names = [n for _, n in found]

    def name(self, offset):
        address = offset
        for file_off, vaddr, size in self.loads:
            if file_off <= offset < file_off + size:
                address = offset - file_off + vaddr
                break
        i = bisect.bisect_right(self.addrs, address) - 1
        return self.names[i] if i >= 0 else "?"


def read(path):
    maps, pcs, counters = [], [], {}
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("M "):
                w = line[2:].split()
                if len(w) < 5 or "-" not in w[0]:
                    continue
                try:
                    lo, hi = (int(x, 16) for x in w[0].split("-"))
                    maps.append((lo, hi, int(w[2], 16), " ".join(w[5:]) if len(w) > 5 else "[anonymous]"))
                except ValueError:
                    continue
            elif line.startswith("P "):
                try:
                    pcs.append(int(line[2:], 16))
                except ValueError:
                    pass
            elif line.startswith("C "):
                w = line.split()
                if len(w) == 3:
                    counters[w[1]] = w[2]
    maps.sort()
    return maps, pcs, counters


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--focus", default="libhipshadow", help="modules whose functions are listed")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    focus = [f for f in args.focus.split(",") if f]
    groups = collections.OrderedDict()
    for f in args.files:
        groups.setdefault(os.path.basename(f).split(".")[0], []).append(f)
    symbols = {}
    unread = 0
    for name, files in groups.items():
        group = printable(name)
        modules, functions, totals, n = collections.Counter(), collections.Counter(), collections.Counter(), 0
        na = set()
        read_ok = 0
        for f in files:
            try:
                maps, pcs, counters = read(f)
            except OSError as e:
                print(f"NOTE cannot read {printable(f)}: {e.strerror}", file=sys.stderr)
                continue
            read_ok += 1
            for k, v in counters.items():
                if v == "n/a":
                    na.add(k)
                else:
                    try:
                        totals[k] += float(v)
                    except ValueError:
                        na.add(k)
            starts = [m[0] for m in maps]
            for pc in pcs:
                n += 1
                i = bisect.bisect_right(starts, pc) - 1
                if i < 0 or pc >= maps[i][1]:
                    modules["?"] += 1
                    continue
                lo, _, offset, path = maps[i]
                module = os.path.basename(path)
                modules[module] += 1
                if any(x in module for x in focus):
                    if path not in symbols:
                        symbols[path] = Symbols(path)
                    functions[(module, symbols[path].name(pc - lo + offset))] += 1
        sums = " ".join(f"{k}={'n/a' if k in na and k not in totals else '%.0f' % totals[k]}"
                        for k in sorted(set(totals) | na))
        print(f"SAMPLES {group} {n} files {read_ok} {sums}")
        unread += len(files) - read_ok
        for module, c in modules.most_common(12):
            print(f"MODULE {group} {100.0 * c / max(n, 1):.2f} {c} {printable(module)}")
        for (module, fn), c in functions.most_common(args.top):
            print(f"FUNCTION {group} {100.0 * c / max(n, 1):.2f} {c} {printable(module)} {printable(fn)}")
    return 1 if unread else 0


if __name__ == "__main__":
    sys.exit(main())
