#!/usr/bin/env python3
"""The C sources are formatted as .clang-format says: clang-format 14 --dry-run -Werror over every
tracked .c and .h file (formatting differs between clang-format releases, so the check runs with 14
only; without it the test is skipped).  To format: clang-format-14 -i $(git ls-files '*.c' '*.h')
Usage: check_format.py SOURCE_ROOT"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

SKIP = 77


def clang_format_14():
    for name in ("clang-format-14", "clang-format"):
        path = shutil.which(name)
        if not path:
            continue
        out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        if re.search(r"version 14\.", out):
            return path
    return None


def sources(root):
    if os.path.isdir(os.path.join(root, ".git")) and shutil.which("git"):
        out = subprocess.run(["git", "-C", root, "ls-files", "*.c", "*.h"], capture_output=True, text=True)
        if out.returncode == 0:
            return [os.path.join(root, p) for p in out.stdout.split()]
    found = []
    for top in ("src", "include", "kernels", "tools", "tests"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            found += [os.path.join(dirpath, n) for n in names if n.endswith((".c", ".h"))]
    return found


def main(root):
    tool = clang_format_14()
    if not tool:
        print("SKIP: clang-format 14 is not installed (tools/install-deps.sh --test installs clang-format-14)")
        return SKIP
    files = sorted(f for f in sources(root) if os.path.isfile(f))
    bad = []
    # batches of 32, as many at once as there are cores
    def check(batch):
        return subprocess.run([tool, "--dry-run", "-Werror", "--style=file"] + batch, cwd=root, capture_output=True,
                              text=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for r in pool.map(check, [files[i:i + 32] for i in range(0, len(files), 32)]):
            if r.returncode != 0:
                bad += sorted(set(re.findall(r"^(\S+?):\d+:\d+: error", r.stderr, re.M)))
                sys.stderr.write(r.stderr[:4000])
    if bad:
        print(f"FAIL: {len(bad)} of {len(files)} files are not formatted as .clang-format says:")
        for b in bad:
            print("  " + os.path.relpath(b, root))
        print("fix: clang-format-14 -i " + " ".join(os.path.relpath(b, root) for b in bad))
        return 1
    print(f"{len(files)} files formatted as .clang-format says")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
