#!/usr/bin/env python3
"""hipshadow's PyTorch plugin end to end on the simulated CUDA runtime: the plugin's sources
(src/torch/) built against tests/torchsim's stand-in headers and fake caching allocator, loaded by
the core when the program has libc10_cuda.so, fed by the allocator's trace.  Each case runs
under `hipshadow --cuda` and checks the findings, their JSON fields and the text.
Usage: run_torchsim.py LAUNCHER BLOCKS_SIM PLUGIN FAKE_C10 PYBLOCKS LD_LIBRARY_PATH"""
import json
import os
import subprocess
import sys
import tempfile

launcher, program, plugin, fake_c10, pyblocks, libpath = sys.argv[1:7]
BLOCK = "PyTorch caching-allocator block"
failures = []


def field(r, path):
    for part in path.split("."):
        r = r.get(part) if isinstance(r, dict) else None
    return r


def case(name, cmd, kinds, options=(), fields=None, err_has=(), err_lacks=(), frames=None, no_block=False):
    with tempfile.TemporaryDirectory() as tmp:
        full = [launcher, "--cuda", "--findings", os.path.join(tmp, "f.json"), "--option", "torch_plugin=" + plugin]
        for o in options:
            full += ["--option", o]
        env = dict(os.environ, LD_LIBRARY_PATH=libpath)
        env.pop("HIPSHADOW_OPTIONS", None)
        proc = subprocess.run(full + ["--"] + cmd, capture_output=True, text=True, env=env, timeout=120)
        path = os.path.join(tmp, "f.json")
        records = [json.loads(l) for l in open(path)] if os.path.exists(path) else []
    got = {}
    for r in records:
        got[r["kind"]] = got.get(r["kind"], 0) + 1
    problems = [] if got == kinds else [f"findings {got}, expected {kinds}"]
    if proc.returncode != 0:
        problems.append(f"exit status {proc.returncode}")
    for kind, want in (fields or {}).items():
        for r in (r for r in records if r["kind"] == kind):
            for k, v in want.items():
                if field(r, k) != v:
                    problems.append(f"{kind}.{k} = {field(r, k)!r}, expected {v!r}")
    for key, text in (frames or {}).items():
        for r in records:
            if not any(text in f for f in (field(r, key) or [])):
                problems.append(f"{key} has no frame with {text!r}: {field(r, key)}")
    if no_block and any("block" in r for r in records):
        problems.append("a finding names a block")
    problems += [f"stderr lacks {t!r}" for t in err_has if t not in proc.stderr]
    problems += [f"stderr has {t!r}" for t in err_lacks if t in proc.stderr]
    print(f"{'PASS' if not problems else 'FAIL'} {name}")
    if problems:
        failures.append(name)
        print("  " + "\n  ".join(problems))
        print(proc.stdout[-1500:], proc.stderr[-5000:])


case("past a tensor, inside its segment", [program, "overrun"], {"region-overrun": 1}, options=["mode=block"],
     fields={"region-overrun": {"overrun": 4096, "block.size": 4000, "block.state": "live", "block.segment.size": 2 << 20,
                                "alloc.size": 2 << 20, "action": "blocked"}},
     err_has=["runs 4096 bytes past the end of " + BLOCK, "the allocator's segment"])
case("a freed tensor's old pointer", [program, "uaf"], {"use-after-free": 1}, options=["mode=block"],
     fields={"use-after-free": {"block.state": "freed", "block.size": 4000, "block.offset": 0}},
     err_has=[BLOCK, "which was freed", "freed by thread", "python_stacks=alloc records"])
case("the old pointer once the block is handed out again", [program, "reuse"], {})
case("initcheck=1: a block handed out again holds none of its new owner's data", [program, "reuse-unwritten"],
     {"uninitialized-read": 1}, options=["initcheck=1"],
     fields={"uninitialized-read": {"severity": "error", "api": "cudaMemcpy"}}, err_has=["never written: [0x"])
case("initcheck=1: a block handed out again and written first", [program, "reuse-written"], {}, options=["initcheck=1"])
case("a kernel on a freed tensor's old pointer", [program, "kernel"], {"kernel-use-after-free": 1},
     options=["mode=block"], fields={"kernel-use-after-free": {"severity": "error", "block.state": "freed"}},
     err_has=["is launched with a pointer into a freed " + BLOCK])
case("a kernel seen before (its fast path) on a freed tensor's old pointer", [program, "kernel-known"],
     {"kernel-use-after-free": 1}, options=["mode=block"],
     fields={"kernel-use-after-free": {"severity": "error", "block.state": "freed"}},
     err_has=["is launched with a pointer into a freed " + BLOCK])
case("a kernel on a tensor and a copy of the same tensor on another stream, unordered", [program, "neighbour-same"],
     {"stream-race": 1})
case("a kernel on a tensor and a copy of the next tensor in its segment: its access ends at its block",
     [program, "neighbour-other"], {})
case("its segment given back: the segment's own use-after-free", [program, "segment-freed"], {"use-after-free": 1},
     options=["mode=block"], no_block=True)
# 5 tokens x 328 tensors, and main's first tensor
case("allocator traffic, timed (tools/bench.sh blocks): every event tracked, nothing found", [program, "churn", "5"],
     {}, options=["stats=1"], err_has=["block_alloc=1641 block_free_requested=1640 block_free_completed=1640"])
case("many tensors allocated, copied, launched on and freed", [program, "clean"], {}, options=["verbosity=1"],
     err_has=["hipshadow: tracking the blocks of PyTorch torchsim", "PyTorch caching-allocator blocks: "])
# passthrough= (benchmarks): the engine's per-token calls forwarded unchecked; with all, block events dropped too
# ("clean" makes 20 launches, 1,281 copies and 1,281 tensors: stats=1 counts each checked call and event)
case("passthrough=calls: block events tracked, launches and copies forwarded unchecked", [program, "clean"], {},
     options=["stats=1", "passthrough=calls"], err_has=["STATS launch=0 ", " copy=0 ", "block_alloc=1281 "])
case("passthrough=calls: a kernel on a freed tensor's old pointer goes unchecked", [program, "kernel"], {},
     options=["mode=block", "passthrough=calls"])
case("passthrough=all: block events dropped as they come", [program, "clean"], {},
     options=["stats=1", "passthrough=all"], err_has=["STATS launch=0 ", " copy=0 ", "block_alloc=0 "])
case("torch_blocks=0: segment level", [program, "overrun"], {}, options=["mode=block", "torch_blocks=0"],
     err_lacks=["blocks are not tracked"])
case("no plugin: one line, segment level", [program, "overrun"], {},
     options=["mode=block", "torch_plugin=/nonexistent/libhipshadow-torch.so"],
     err_has=["PyTorch is loaded, but its caching allocator's blocks are not tracked: no plugin at"])
with tempfile.TemporaryDirectory() as tmp:
    trace = os.path.join(tmp, "trace.txt")
    case("torch_trace= records the allocator's events", [program, "uaf"], {"use-after-free": 1},
         options=["torch_trace=" + trace])
    lines = [l.split() for l in open(trace) if not l.startswith("#")] if os.path.exists(trace) else []
    actions = [l[0] for l in lines]
    if actions[:4] != ["segment_alloc", "alloc", "free_requested", "free_completed"] or lines[1][3] != "4000":
        failures.append("the recorded trace")
        print(f"FAIL the recorded trace: {lines}")
    else:
        print("PASS the recorded trace: " + "; ".join(" ".join(l[:4]) for l in lines))
py = [sys.executable, pyblocks, fake_c10]
case("Python: a freed tensor's old pointer, python_stacks=alloc", py + ["uaf"], {"use-after-free": 1},
     options=["mode=block", "python_stacks=alloc"],
     frames={"python_stack": "in copy_out", "block.alloc_python_stack": "in make_tensor",
             "block.free_python_stack": "in release"},
     err_has=["Python stack (thread", "pyblocks.py:", "  Python:"])
case("Python: past a tensor, the Python stack at the copy", py + ["overrun"], {"region-overrun": 1},
     options=["mode=block"], frames={"python_stack": "in copy_out"})
case("Python: python_stacks=off", py + ["overrun"], {"region-overrun": 1}, options=["mode=block", "python_stacks=off"],
     err_lacks=["Python stack"])
print(f"{'FAILED: ' + ', '.join(failures) if failures else 'all torchsim cases passed'}")
sys.exit(1 if failures else 0)
