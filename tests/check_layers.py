#!/usr/bin/env python3
"""The core's layering, checked: a file includes headers of its own layer or of lower ones only.

A file's layer is its folder (src/core/<layer>/, or src/hip, src/cuda, src/nvtx for the
front-ends); the ranks, top to bottom:
  entry     the front-ends, the resolver, the public API, dlsym/dlvsym and the lookup tables
  path      the path itself (core.c, the fast path, the ops table, fact gathering, model changes,
            GPU fault events, lifecycle)
  findings  what becomes of a finding: policy (suppressions, mode, counts), the reports, the
            post-mortem record
  rules     the checks (pure)
  kernels   the launch ledger, the kernel cache, redzones, hipshadow's GPU kernels, the rescue
  call      src/core/call.h: the types that flow down the path
  runtime   the front-end interface and hipshadow's own calls to the runtime
  torch     PyTorch caching-allocator blocks
  streams   streams, events and their order
  shadow    the shadow map: spans, their index, regions, mappings, host memory
  process   options, stacks, the log, files, paths, the environment, utilities

Files of one layer may include each other, as long as no two include each other, directly or
not.  And the core reaches the runtime only through runtime/own_calls.c, which keeps hipshadow's
own calls invisible to the program: no other core file calls the front-end's functions that call
the runtime.  Usage: check_layers.py SRC_DIR"""
import os
import re
import sys

RANKS = ["entry", "path", "findings", "rules", "kernels", "call", "runtime", "torch", "streams", "shadow",
         "process"]
FRONT_ENDS = ("hip", "cuda", "nvtx")


def layer_of(rel):
    """rel: a path under src/ ("core/shadow/span.h", "hip/wrappers.c")."""
    parts = rel.split("/")
    if parts[0] in FRONT_ENDS:
        return "entry"
    if parts[0] == "core":
        return "call" if len(parts) == 2 else parts[1]
    return None


def rank_of(layer):
    if layer not in RANKS:
        raise SystemExit(f"unknown layer {layer!r}: add the folder to RANKS in check_layers.py")
    return RANKS.index(layer)


# The front-end's functions that call the runtime, as the core would call them directly.
RUNTIME_CALLS = re.compile(r"layer->(current_device|kernel_name|kernel_params|stream_sync|device_limits|fill|read)\s*\(|"
                           r"hs_frontend_active\.(query_pointer\s*\(|kernels\s*->|kernels\s*;)")


def resolve(src, here_dir, target):
    """The src/-relative path an include names: the including file's folder first, then the
    core's root (how the build's include path finds it)."""
    for base in (here_dir, os.path.join(src, "core")):
        p = os.path.normpath(os.path.join(base, target))
        if os.path.exists(p):
            return os.path.relpath(p, src)
    return None


def main(src):
    edges = {}
    problems = []
    files = []
    for sub in ("core",) + FRONT_ENDS:
        for dirpath, _, names in os.walk(os.path.join(src, sub)):
            files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith((".c", ".h"))]
    for path in sorted(files):
        rel = os.path.relpath(path, src)
        here = os.path.splitext(rel)[0]
        for n, line in enumerate(open(path), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+\.h)"', line)
            if not m or m.group(1).startswith("hipshadow/"):
                continue
            target = resolve(src, os.path.dirname(path), m.group(1))
            if target is None:
                problems.append(f"{rel}:{n}: includes {m.group(1)}, which is not a file of src/")
                continue
            there = os.path.splitext(target)[0]
            if there == here:
                continue
            edges.setdefault(here, set()).add(there)
            lh, lt = layer_of(rel), layer_of(target)
            if lt is None:
                problems.append(f"{rel}:{n}: includes {m.group(1)}, which is outside the core and the front-ends")
            elif rank_of(lt) < rank_of(lh):
                problems.append(f"{rel}:{n}: {rel} ({lh}) includes {target}, which is above it ({lt})")
    for path in sorted(files):
        rel = os.path.relpath(path, src)
        if rel.startswith("core/") and os.path.basename(rel) not in ("own_calls.c", "own_calls.h"):
            for n, line in enumerate(open(path), 1):
                if RUNTIME_CALLS.search(line):
                    problems.append(f"{rel}:{n}: calls the runtime outside runtime/own_calls.c: {line.strip()}")
    # No cycles among files (this is what catches files of one layer including each other).
    state = {}

    def visit(m, trail):
        if state.get(m) == 1:
            problems.append("include cycle: " + " -> ".join(trail[trail.index(m):] + [m]))
            return
        if state.get(m) == 2:
            return
        state[m] = 1
        for t in sorted(edges.get(m, ())):
            visit(t, trail + [m])
        state[m] = 2

    for m in sorted(edges):
        visit(m, [])
    for p in problems:
        print(p)
    print(f"{len(files)} files in {len(RANKS)} layers, {sum(len(v) for v in edges.values())} include edges, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
