#!/usr/bin/env python3
"""The core's layering, checked: no file includes a header of a file above it on the path.

The path, top to bottom (a module is a .c file and its .h, named by their stem):
  entry points  the front-ends (wrappers, driver, library, layers, kernel glue, the NVTX
                injection), the resolver, the public API, dlsym/dlvsym
  core          the path itself (core.c), and its fast path for clean copies (fast_copy.c)
  events        the path of what the runtime announces rather than a call (GPU memory faults)
  ops           the operations table
  steps         fact gathering, model changes, the post-mortem record
  init          lifecycle and process-wide globals
  policy        suppressions, the mode, counts
  fallback      the GPU rescue of rejected copies
  report        the text and JSON reports
  check         the rules (pure)
  launches      the launch ledger and the kernel cache (records of calls, in call.h's types)
  call          the types that flow down the path
  services      the shadow map, streams, order, host memory, regions, stacks, log, options, util...

A module may include modules of lower rank only (services may include each other, as long as
no two include each other, directly or not).

And the core reaches the runtime only through own_calls.c, which keeps hipshadow's own calls
invisible to the program: no other core file calls the front-end's functions that call the
runtime.  Usage: check_layers.py SRC_DIR"""
import os
import re
import sys

RANKS = [
    ("entry", ["wrappers", "driver", "library", "layers", "registration", "kernels", "wrapper_shape", "resolve",
               "public_api", "dl", "hsa_events", "injection", "mem", "messages"]),
    ("core", ["core", "fast_copy"]),
    ("events", ["gpu_faults"]),
    ("ops", ["ops"]),
    ("steps", ["facts", "model", "record"]),
    ("init", ["init"]),
    ("policy", ["policy"]),
    ("fallback", ["fallback"]),
    ("report", ["report", "report_regions"]),
    ("check", ["check", "runtime_rules"]),
    ("launches", ["ledger", "kernel_info", "redzones"]),
    ("call", ["call"]),
    ("services", None),  # everything else
]


def rank_of(module):
    for i, (_, members) in enumerate(RANKS):
        if members is None or module in members:
            return i
    raise AssertionError


# The front-end's functions that call the runtime, as the core would call them directly.
RUNTIME_CALLS = re.compile(r"layer->(current_device|kernel_name|kernel_params|stream_sync|device_limits|fill|read)\s*\(|"
                           r"hs_frontend_active\.(query_pointer\s*\(|kernels\s*->|kernels\s*;)")


def module_of(path):
    return os.path.splitext(os.path.basename(path))[0]


def main(src):
    edges = {}
    problems = []
    for sub in ("core", "hip", "cuda", "nvtx"):
        d = os.path.join(src, sub)
        for name in sorted(os.listdir(d)):
            if not name.endswith((".c", ".h")):
                continue
            here = module_of(name)
            for n, line in enumerate(open(os.path.join(d, name)), 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+\.h)"', line)
                if not m or m.group(1).startswith("hipshadow/"):
                    continue
                there = module_of(m.group(1))
                if there == here:
                    continue
                edges.setdefault(here, set()).add(there)
                if rank_of(there) < rank_of(here):
                    problems.append(f"{sub}/{name}:{n}: {here} ({RANKS[rank_of(here)][0]}) includes {m.group(1)}, "
                                    f"which is above it ({RANKS[rank_of(there)][0]})")
    core = os.path.join(src, "core")
    for name in sorted(os.listdir(core)):
        if name.endswith((".c", ".h")) and name not in ("own_calls.c", "own_calls.h"):
            for n, line in enumerate(open(os.path.join(core, name)), 1):
                if RUNTIME_CALLS.search(line):
                    problems.append(f"core/{name}:{n}: calls the runtime outside own_calls.c: {line.strip()}")
    # No cycles among modules (this is what catches services including each other).
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
    print(f"{len(edges)} modules, {sum(len(v) for v in edges.values())} include edges, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
