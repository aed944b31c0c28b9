#!/usr/bin/env python3
"""A simulated runtime keeps the thread's last error as the real one does only if every exported
entry point returns through its one function for it: checks that each exported function of
TYPE in SOURCE returns nothing but a call of one of the RETURNS functions (and, with --start,
begins with that statement).  The clearing Get is the one exception, named with --except.
Usage: check_returns.py SOURCE EXPORT TYPE RETURN[,RETURN...] [--start STMT] [--except NAME...]"""
import re
import sys

source, export, rtype, returns = sys.argv[1:5]
rest = sys.argv[5:]
start = rest[rest.index("--start") + 1] if "--start" in rest else None
excepted = set(rest[rest.index("--except") + 1:]) if "--except" in rest else set()
allowed = tuple(r + "(" for r in returns.split(","))

text = open(source).read()
head = re.compile(r"^%s %s\s*\(?\**\s*([A-Za-z_0-9]+)\(" % (re.escape(export), re.escape(rtype)), re.M)
bad, seen = [], 0
for m in head.finditer(text):
    name = m.group(1)
    brace = text.find("{", m.end())
    if text.find(";", m.end()) < brace:
        continue  # a declaration
    depth, i = 0, brace
    while True:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            break
    body = text[brace + 1:i - 1]
    seen += 1
    if name in excepted:
        continue
    if start and not body.strip().startswith(start):
        bad.append(f"{name}: does not begin with {start}")
    for r in re.findall(r"\breturn\s+([^;]*);", body):
        if not r.strip().startswith(allowed):
            bad.append(f"{name}: returns {r.strip()!r}, not through {returns}")
for b in bad:
    print(b)
print(f"{seen} exported functions, {len(bad)} problems")
sys.exit(1 if bad or not seen else 0)
