"""The hot path's placement in a built library (HS_HOT, HS_HOT_DATA in src/core/process/util.h).

  check_hot_placement.py LIB FUNCTIONS FLAGS [PATH]

FUNCTIONS: the wrappers and core functions of a clean launch, copy and sync, comma-separated;
their code must lie within MAX_SHARE of the library's text (unmarked, the linker spreads them
over 80-90% of it; marked, they sit in .text.hot: 8% of it, 11% in a sanitizer build,
whose code is instrumented and not link-time optimised).  FLAGS: variables read
at every call, which must all lie in the .hs_hot_data section, itself within one page (the
libraries' link starts it on a page: src/core/process/hot_data.ld).  PATH: the functions a
clean launch runs (HS_HOT_PATH), which must lie together: their stretch of the text at most
MAX_PATH_SPREAD times their own size (placed after .text.hot, with the few other functions of
the path between them: 1.3 times; left where .text.hot and .text put them, 42 times.  Each page
of code a launch touches is an address translation).
A name may carry the compiler's suffixes (.lto_priv.0, .constprop.0); a name missing from the
symbol table (inlined everywhere) fails the check, so the list stays true to the code."""
import re
import subprocess
import sys

MAX_SHARE = 0.2
MAX_PATH_SPREAD = 2.5
PAGE = 4096


def symbols(lib):
    """base name -> [(address, size, type)], the compiler's suffixes and .cold parts left out."""
    out = subprocess.run(["nm", "-S", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    table = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 4 or ".cold" in parts[3]:
            continue
        base = re.sub(r"\.(lto_priv|constprop|isra|part)\.[0-9]+", "", parts[3])
        table.setdefault(base, []).append((int(parts[0], 16), int(parts[1], 16), parts[2]))
    return table


def section(lib, name):
    """(address, size) of a section, or None."""
    out = subprocess.run(["readelf", "-SW", lib], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        m = re.search(r"\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m and m.group(1) == name:
            return int(m.group(2), 16), int(m.group(3), 16)
    return None


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__)
        return 2
    lib, functions, flags = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
    path = sys.argv[4].split(",") if len(sys.argv) == 5 else []
    table, problems = symbols(lib), []
    code = [(a, s) for f in functions for a, s, t in table.get(f, []) if t in "tT"]
    problems += [f"{f}: not in the symbol table" for f in functions if not any(t in "tT" for _, _, t in table.get(f, []))]
    if code:
        span = max(a + s for a, s in code) - min(a for a, _ in code)
        text = section(lib, ".text")
        share = span / text[1] if text else 1.0
        print(f"{lib}: {len(functions)} hot functions within {span / 1024:.1f} KiB, {share:.0%} of the text")
        if share > MAX_SHARE:
            problems.append(f"the hot functions span {share:.0%} of the text, more than {MAX_SHARE:.0%}: "
                            "is HS_HOT still on them?")
    path_code = [(a, s) for f in path for a, s, t in table.get(f, []) if t in "tT"]
    problems += [f"{f}: not in the symbol table" for f in path if not any(t in "tT" for _, _, t in table.get(f, []))]
    if path_code:
        span = max(a + s for a, s in path_code) - min(a for a, _ in path_code)
        own = sum(s for _, s in path_code)
        print(f"{lib}: the launch path's {len(path)} functions ({own / 1024:.1f} KiB) within {span / 1024:.1f} KiB")
        if span > MAX_PATH_SPREAD * own:
            problems.append(f"the launch path's functions span {span / own:.1f} times their size, more than "
                            f"{MAX_PATH_SPREAD:g}: is HS_HOT_PATH still on them?")
    hot = section(lib, ".hs_hot_data")
    if not hot:
        problems.append("no .hs_hot_data section (HS_HOT_DATA)")
    else:
        start, size = hot
        print(f"{lib}: .hs_hot_data {size} bytes")
        if start // PAGE != (start + size - 1) // PAGE:
            problems.append(f".hs_hot_data ({size} bytes at 0x{start:x}) spans more than one page")
        for v in flags:
            where = [a for a, _, t in table.get(v, []) if t in "bBdD"]
            if not where:
                problems.append(f"{v}: not in the symbol table")
            elif not all(start <= a < start + size for a in where):
                problems.append(f"{v}: not in .hs_hot_data")
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
