#!/usr/bin/env python3
"""README.md's "Finding kinds" and "Options" tables are the contract (DESIGN.md): every kind of
include/hipshadow/finding_kinds.inc and every option of src/core/process/options.inc has its row, and no
row names a kind or an option that does not exist.  Usage: check_readme_tables.py SOURCE_ROOT"""
import os
import re
import sys

root = sys.argv[1]
readme = open(os.path.join(root, "README.md")).read()
kinds = re.findall(r'^HS_KIND\(\w+,\s*"([a-z-]+)"', open(os.path.join(root, "include/hipshadow/finding_kinds.inc")).read(), re.M)
options = re.findall(r"^HS_OPTION\(\w+,\s*(\w+),", open(os.path.join(root, "src/core/process/options.inc")).read(), re.M)


def table_rows(heading):
    """The first cell of each row of the first table under the heading that starts with `heading`."""
    at = readme.find("\n## " + heading)
    if at < 0:
        return None
    rows = []
    for line in readme[at + 1:].splitlines()[1:]:
        if line.startswith("## "):
            break
        m = re.match(r"^\| `([^`]+)` \|", line)
        if m:
            rows.append(m.group(1))
        elif rows and not line.startswith("|"):
            break
    return rows


problems = []
for heading, names, what in (("Finding kinds", kinds, "kind"), ("Options", options, "option")):
    rows = table_rows(heading)
    if rows is None:
        problems.append(f'README.md has no "## {heading}" section')
        continue
    for n in names:
        if n not in rows:
            problems.append(f"{what} '{n}' has no row in README.md's {heading} table")
    for r in rows:
        if r not in names:
            problems.append(f"README.md's {heading} table has a row for '{r}', which is no {what}")
for p in problems:
    print("FAIL:", p)
print(f"{len(kinds)} kinds and {len(options)} options checked against README.md's tables: {len(problems)} problems")
sys.exit(1 if problems else 0)
