#!/usr/bin/env python3
"""Runs one scenario of nvtx_regions (NVTX v3 memory annotations with a planted bug, or none)
under the launcher, which makes the preload library the NVTX injection, and checks what
hipshadow found: the exact multiset of finding kinds, chosen fields of the JSON findings, the
text report, the program's output.  Every case requires "nvtx: tool attached" (NVTX found
hipshadow), except `elsewhere`, where NVTX_INJECTION64_PATH names another tool first.
Usage: run_nvtx_case.py hip|cuda|gpu LAUNCHER PROGRAM LIBDIR CASE
  PROGRAM '' (the NVTX headers were not found at configure time) or a program that exits 77:
  the case is skipped (exit 77).  LIBDIR: the simulator's libraries ('' on a real GPU)."""
import json
import os
import subprocess
import sys
import tempfile

ATTACHED = "nvtx: tool attached"
POOL = 1024 * 1024

# case: scenario, expected kinds (exact counts), fields per kind ({runtime: api} for the API),
# stderr texts (in this order), stdout texts
CASES = {
    "clean": dict(kinds={}),
    "overrun": dict(
        kinds={"region-overrun": 1},
        fields={"region-overrun": {"overrun": 512, "bytes": 4096 + 512, "alloc.offset": 0, "alloc.size": POOL,
                                   "api": {"hip": "hipMemcpy", "cuda": "cudaMemcpy"}}},
        stderr=["ERROR: hipshadow: region-overrun", "runs 512 bytes past the end of region #1 (pool offset 0, 4096 bytes)",
                "named 'arena #0'", "the source pointer lies in region #1 [0x", "in NVTX heap 0x", "in read_tensor"]),
    "resize": dict(
        kinds={"region-overrun": 1},
        fields={"region-overrun": {"overrun": 2048, "bytes": 4096, "alloc.offset": 0}},
        stderr=["runs 2048 bytes past the end of region #1 (pool offset 0, 2048 bytes)"]),
    "unregister": dict(
        kinds={"use-after-free": 1},
        fields={"use-after-free": {"alloc.offset": 8192 + 128, "alloc.size": POOL, "bytes": 256,
                                   "api": {"hip": "hipMemcpy", "cuda": "cudaMemcpy"}}},
        stderr=["ERROR: hipshadow: use-after-free", "lies in region #2 [0x", "which nvtxMemRegionsUnregister freed",
                "the allocation itself is live", "in read_tensor",
                "Region #2 freed by thread T", "(nvtxMemRegionsUnregister):", "in release_tensor", "in unregister"]),
    "heap_reset": dict(
        kinds={"use-after-free": 1},
        fields={"use-after-free": {"alloc.offset": 16384, "bytes": 64}},
        stderr=["ERROR: hipshadow: use-after-free", "which nvtxMemHeapReset freed", "in clear_tensor",
                "Region #3 freed by thread T", "(nvtxMemHeapReset):", "in reset_arena"]),
    "heap_unregister": dict(
        kinds={"use-after-free": 1},
        fields={"use-after-free": {"alloc.offset": 0, "bytes": 1024}},
        stderr=["which nvtxMemHeapUnregister freed", "(nvtxMemHeapUnregister):", "in heap_unregister"]),
    "named": dict(
        kinds={"region-overrun": 1, "use-after-free": 1},
        fields={"region-overrun": {"overrun": 64, "alloc.offset": 8192}, "use-after-free": {"alloc.offset": 0}},
        stderr=["past the end of region 'kv_cache[3]' (pool offset 8192, 4096 bytes)",
                "the source pointer lies in region 'kv_cache[3]'",
                "lies in region 'token_embd.weight' [0x", "Region 'token_embd.weight' freed by thread T"]),
    "read_only": dict(
        kinds={"region-permission": 1},
        fields={"region-permission": {"alloc.offset": 16384, "bytes": 128, "direction": {"hip": "H2D", "cuda": "H2D"}, "overrun": None,
                                      "api": {"hip": "hipMemcpy", "cuda": "cudaMemcpy"}}},
        stderr=["ERROR: hipshadow: region-permission", "the destination range [0x", "writes region #3 [0x",
                "which is read-only for this thread", "its process-wide permissions, nvtxMemPermissionsAssign",
                "in write_tensor"]),
    "no_access": dict(
        kinds={"region-permission": 1},
        fields={"region-permission": {"alloc.offset": 0, "bytes": 4096, "direction": {"hip": "D2H", "cuda": "D2H"}}},
        stderr=["the source range [0x", "reads region #1 [0x", "which is no access for this thread",
                "the permissions object bound to this thread, nvtxMemPermissionsBind", "in no_access"]),
    "kernel_freed": dict(
        kinds={"kernel-use-after-free": 1},
        fields={"kernel-use-after-free": {"severity": "error", "alloc.offset": 0, "kernels.0.args.0.how": "exact"}},
        stderr=["is launched with a pointer into a freed region", "argument 0 = 0x", "lies in region #1 [0x",
                "which nvtxMemRegionsUnregister freed", "Region #1 freed by thread T", "in release_tensor"]),
    "kernel_freed_known": dict(
        kinds={"kernel-use-after-free": 1},
        fields={"kernel-use-after-free": {"severity": "error", "alloc.offset": 0, "kernels.0.args.0.how": "exact"}},
        stderr=["is launched with a pointer into a freed region", "which nvtxMemRegionsUnregister freed"]),
    # Another tool has NVTX: said once by the launcher, and hipshadow sees no region (no finding).
    "elsewhere": dict(
        scenario="overrun", kinds={}, env={"NVTX_INJECTION64_PATH": "/nonexistent/libother-nvtx-tool.so"},
        stderr_once=["hipshadow: NVTX_INJECTION64_PATH names another tool (/nonexistent/libother-nvtx-tool.so)"],
        stdout=["nvtx: no tool"], attached=False),
}


def get(obj, dotted):
    for part in dotted.split("."):
        if obj is None:
            return None
        obj = obj[int(part)] if isinstance(obj, list) else obj.get(part)
    return obj


def main():
    runtime, launcher, program, libdir, name = sys.argv[1:6]
    case = CASES[name]
    if not program:
        print("SKIP: the NVTX headers (nvtx3/nvToolsExtMem.h) were not found when the tests were configured")
        return 77
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, **case.get("env", {}))
        env.pop("HIPSHADOW_OPTIONS", None)
        if "env" not in case:
            env.pop("NVTX_INJECTION64_PATH", None)
        if libdir:
            env["LD_LIBRARY_PATH"] = libdir
        cmd = [launcher] + (["--cuda"] if runtime != "hip" else []) + ["--findings", os.path.join(tmp, "f.%p.json"),
                                                                     "--", program, case.get("scenario", name)]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        print(proc.stdout)
        print(proc.stderr, file=sys.stderr)
        if proc.returncode == 77:
            print(f"SKIP: nvtx_regions {name} cannot run here (exit 77)")
            return 77
        records = []
        for f in sorted(os.listdir(tmp)):
            records += [json.loads(line) for line in open(os.path.join(tmp, f))]
    got = {}
    for r in records:
        got[r["kind"]] = got.get(r["kind"], 0) + 1
    if got != case["kinds"]:
        failures.append(f"kinds: expected {case['kinds']}, got {got}")
    for kind, expect in case.get("fields", {}).items():
        for r in (r for r in records if r["kind"] == kind):
            for key, want in expect.items():
                if isinstance(want, dict):
                    if runtime not in want:
                        continue  # a real GPU's build goes through its own layer (nvcc: the static runtime, the driver)
                    want = want[runtime]
                if get(r, key) != want:
                    failures.append(f"{kind}.{key}: expected {want!r}, got {get(r, key)!r}")
    at = 0
    for text in case.get("stderr", []):
        found = proc.stderr.find(text, at)
        if found < 0:
            failures.append(f"stderr lacks {text!r}" + (" after the text before it" if at else ""))
        else:
            at = found
    for text in case.get("stderr_once", []):
        if proc.stderr.count(text) != 1:
            failures.append(f"stderr has {text!r} {proc.stderr.count(text)} times, expected once")
    for text in case.get("stdout", []) + ([ATTACHED] if case.get("attached", True) else []):
        if text not in proc.stdout:
            failures.append(f"stdout lacks {text!r}")
    if f"nvtx_regions {case.get('scenario', name)}: done" not in proc.stdout or proc.returncode != 0:
        failures.append(f"the program did not run to its end (exit {proc.returncode})")
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
