#!/usr/bin/env python3
"""The CUDA front-end on a real GPU.
  run_gpu.py tests   planted-bug and clean CUDA programs, the PyTorch GPT-2 scenario (zero
                     findings) and the ctypes planted bugs; exit 77 (skipped) without a GPU
  run_gpu.py bench   GPT-2 tokens/s with and without hipshadow (interleaved), compute-sanitizer
                     on the same workload, and the per-call cost of cudaMemcpyAsync D2H
  run_gpu.py kernels hipshadow_transpose2d: correctness, bandwidth against D2D copy, and a D2H
                     staged by fallback=stage:fallback_always=1 against a direct one
  run_gpu.py driver  the driver layer: gpu_cases built three ways (nvcc static, -cudart shared,
                     CMake) give the same findings; ctypes through a runtime handle; PyTorch with
                     expandable segments (zero findings, and a planted read past the last map)
  run_gpu.py peer    two GPUs: a peer copy overrunning an allocation on device 1
  run_gpu.py torch-blocks  PyTorch's caching allocator block by block (libhipshadow-torch.so, built
                     here first): planted bugs on tensors, zero findings on real workloads (with the
                     tracking checked active), the fallbacks, and recorded traces (into $OUT)
  run_gpu.py torch-bench   GPT-2 tokens/s and a training step's time, plain and with block tracking
Paths: HS_LAUNCHER (build/tools/hipshadow), HS_GPU (build/tests/gpu).  HS_EXTRA_OPTIONS (key=value:...)
is added to every run under hipshadow (e.g. initcheck=1: the same programs with that check on)."""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
launcher = os.environ.get("HS_LAUNCHER", "build/tools/hipshadow")
gpu_bin = os.environ.get("HS_GPU", "build/tests/gpu")
failures = []


def preloaded(cmd, options=(), findings=None, under=None):
    """cmd under hipshadow --cuda (the launcher `under`, else HS_LAUNCHER's) with options (and
    HS_EXTRA_OPTIONS), findings written to `findings`."""
    full = [under or launcher, "--cuda"] + (["--findings", findings] if findings else [])
    for o in list(options) + [o for o in os.environ.get("HS_EXTRA_OPTIONS", "").split(":") if o]:
        full += ["--option", o]
    return full + ["--"] + cmd


def run(cmd, preload=True, options=(), env_extra=None, timeout=600):
    """Runs cmd (under hipshadow --cuda when preload; a path: under that launcher); returns (proc,
    findings by kind, records)."""
    with tempfile.TemporaryDirectory() as tmp:
        findings = os.path.join(tmp, "f.%p.json")
        full = preloaded(cmd, options, findings, preload if isinstance(preload, str) else None) if preload else cmd
        env = dict(os.environ, **(env_extra or {}))
        env.pop("HIPSHADOW_OPTIONS", None)
        proc = subprocess.run(full, capture_output=True, text=True, env=env, timeout=timeout)
        records = []
        for f in os.listdir(tmp):
            records += [json.loads(l) for l in open(os.path.join(tmp, f))]
    kinds = {}
    for r in records:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    return proc, kinds, records


def expect(name, cmd, kinds, options=(), env_extra=None, fields=None, out_has=None, min_calls=1, err_has=(),
           check=None):
    proc, got, records = run(cmd, options=options, env_extra=env_extra)
    ok = got == kinds
    for text in err_has:
        if text not in proc.stderr:
            ok = False
            print(f"  stderr lacks {text!r}")
    if check and not check(records, proc):
        ok = False
        print("  the extra check failed")
    calls = [int(l.split(" in ")[1].split()[0]) for l in proc.stderr.splitlines()
             if l.startswith("SUMMARY: hipshadow:") and " checked calls" in l]
    if not calls or calls[-1] < min_calls:  # the wrappers really saw the program's calls
        ok = False
        print(f"  only {calls} checked calls seen (at least {min_calls} expected)")
    for kind, want in (fields or {}).items():
        for r in (r for r in records if r["kind"] == kind):
            for k, v in want.items():
                val = r
                for part in k.split("."):
                    if part == "#" and isinstance(val, list):
                        val = len(val)
                    elif isinstance(val, list) and part.isdigit():
                        val = val[int(part)] if int(part) < len(val) else None
                    else:
                        val = val.get(part) if isinstance(val, dict) else None
                ok &= val == v
    if out_has and out_has not in proc.stdout:
        ok = False
    print(f"{'PASS' if ok else 'FAIL'} {name}: findings {got}, {calls[-1] if calls else 0} checked calls"
          + ("" if ok else f" (expected {kinds})"))
    if not ok:
        failures.append(name)
        print(proc.stdout[-2000:], proc.stderr[-4000:])
    return proc, records


def tests():
    cases = os.path.join(gpu_bin, "gpu_cases")
    if subprocess.run([cases, "probe"]).returncode != 0:
        print("SKIP: no usable CUDA device")
        sys.exit(77)
    expect("oob", [cases, "oob"], {"out-of-bounds": 1}, options=["mode=block"],
           fields={"out-of-bounds": {"overrun": 1024, "api": "cudaMemcpy", "action": "blocked"}})
    expect("uaf", [cases, "uaf"], {"use-after-free": 1}, options=["mode=block"])
    expect("overlap", [cases, "overlap"], {"async-overlap": 1}, fields={"async-overlap": {"api": "cudaMemcpyAsync"}})
    expect("destroyed-stream", [cases, "destroyed-stream"], {"invalid-stream": 1}, options=["mode=block"])
    expect("direction", [cases, "direction"], {"direction-mismatch": 1}, options=["mode=block"])
    expect("clean", [cases, "clean"], {}, out_has="data round-trips")
    py = shutil.which("python3")
    if subprocess.run([py, "-c", "import torch, transformers; assert torch.cuda.is_available()"]).returncode:
        print("SKIP: PyTorch with CUDA, or transformers, is not available")
        return
    if not build_plugin():  # PyTorch's blocks are tracked by default: the plugin is part of the front-end
        failures.append("building libhipshadow-torch.so")
    proc, _ = expect("pytorch-gpt2-clean", [py, os.path.join(here, "torch_gpt2.py"), "64", "8"], {},
                     out_has="TOKENS_PER_S", min_calls=100)
    print(proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-2000:])
    ct = os.path.join(here, "torch_ctypes.py")
    expect("ctypes-past-segment", [py, ct, "segment"], {"out-of-bounds": 1}, options=["mode=block"],
           fields={"out-of-bounds": {"overrun": 4096, "api": "cudaMemcpy"}})
    expect("ctypes-past-tensor-cached, blocks tracked", [py, ct, "tensor"], {"region-overrun": 1},
           options=["mode=block"], fields={"region-overrun": {"overrun": 4096}})
    expect("ctypes-past-tensor-cached, torch_blocks=0 (invisible)", [py, ct, "tensor"], {},
           options=["mode=block", "torch_blocks=0"])
    expect("ctypes-past-tensor-no-caching", [py, ct, "tensor"], {"out-of-bounds": 1}, options=["mode=block"],
           env_extra={"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"})
    expect("ctypes-past-tensor-annotated", [py, ct, "annotated"], {"region-overrun": 1}, options=["mode=block"],
           fields={"region-overrun": {"overrun": 4096}})


def tokens_per_s(proc):
    for line in proc.stdout.splitlines():
        if line.startswith("TOKENS_PER_S"):
            return float(line.split()[1])
    print(proc.stdout[-1000:], proc.stderr[-3000:])
    return float("nan")


def bench_launch():
    """ns per kernel launch, plain and under hipshadow, for the static and the shared runtime."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(here, "bench_launch.cu")
        for way, flags in (("static", []), ("shared", ["-cudart", "shared"])):
            exe = os.path.join(tmp, "bench_launch_" + way)
            subprocess.run(["nvcc", "-O2", "-o", exe, src] + flags, check=True)
            p, s = [], []
            calls = 0
            for _ in range(7):
                p.append(float(subprocess.run([exe], capture_output=True, text=True).stdout))
                proc = run([exe])[0]
                s.append(float(proc.stdout))
                calls = max([int(l.split(" in ")[1].split()[0]) for l in proc.stderr.splitlines()
                             if l.startswith("SUMMARY: hipshadow:") and " checked calls" in l] or [0])
            mp, ms = statistics.median(p), statistics.median(s)
            print(f"kernel launch ({way} runtime): plain {mp:.0f} ns, hipshadow {ms:.0f} ns, added {ms - mp:.0f} ns "
                  f"per launch (medians of 7, interleaved); {calls} wrapped calls checked for 201000 launches "
                  f"and a sync every 32")


def bench():
    bench_launch()
    py = shutil.which("python3")
    # One core set for both: batch-1 GPT-2 is bound by the CPU that launches its kernels.
    pin = ["taskset", "-c", os.environ.get("BENCH_CPUS", "2-5")] if shutil.which("taskset") else []
    gpt2 = pin + [py, os.path.join(here, "torch_gpt2.py"), os.environ.get("BENCH_TOKENS", "256"), "16"]
    plain, shadow = [], []
    for i in range(int(os.environ.get("BENCH_RUNS", "5"))):
        plain.append(tokens_per_s(run(gpt2, preload=False)[0]))
        shadow.append(tokens_per_s(run(gpt2)[0]))
        print(f"run {i + 1}: plain {plain[-1]:.1f} tok/s, hipshadow {shadow[-1]:.1f} tok/s", flush=True)
    mp, ms = statistics.median(plain), statistics.median(shadow)
    print(f"GPT-2 generate (greedy, {gpt2[-2]} tokens): median plain {mp:.1f} tok/s, hipshadow {ms:.1f} tok/s, "
          f"ratio {ms / mp:.3f}")
    rz, pr = [], []
    for _ in range(int(os.environ.get("BENCH_RUNS", "5"))):
        pr.append(tokens_per_s(run(gpt2, preload=False)[0]))
        rz.append(tokens_per_s(run(gpt2, options=["redzones=64"])[0]))
    print(f"GPT-2 generate with redzones=64: median plain {statistics.median(pr):.1f} tok/s, redzones "
          f"{statistics.median(rz):.1f} tok/s, ratio {statistics.median(rz) / statistics.median(pr):.3f}")
    ser = pin + [py, os.path.join(here, "torch_gpt2.py"), "64", "8"]
    p64, s64 = [], []
    for _ in range(3):
        p64.append(tokens_per_s(run(ser, preload=False)[0]))
        s64.append(tokens_per_s(run(ser, options=["serialize=1"])[0]))
    print(f"GPT-2 generate (64 tokens) with serialize=1: median plain {statistics.median(p64):.1f} tok/s, "
          f"serialize=1 {statistics.median(s64):.1f} tok/s, ratio {statistics.median(s64) / statistics.median(p64):.3f}")
    sanitizer = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if os.path.exists(sanitizer) and not os.environ.get("SKIP_SANITIZER"):
        n = os.environ.get("SANITIZER_TOKENS", "16")
        try:
            proc = subprocess.run([sanitizer, "--tool", "memcheck", py, os.path.join(here, "torch_gpt2.py"), n, "2"],
                                  capture_output=True, text=True, timeout=int(os.environ.get("SANITIZER_TIMEOUT", "300")))
            cs = tokens_per_s(proc)
            print(f"compute-sanitizer memcheck: {cs:.2f} tok/s ({n} tokens), ratio {cs / mp:.4f} of plain")
        except subprocess.TimeoutExpired:
            print("compute-sanitizer memcheck: did not finish within its time limit")
    copy = os.path.join(gpu_bin, "bench_cuda_copy")
    for size in (4, 4096, 1 << 20):
        p, s = [], []
        for _ in range(5):
            p.append(float(subprocess.run([copy, str(size), "1000"], capture_output=True, text=True).stdout))
            s.append(float(run([copy, str(size), "1000"])[0].stdout))
        mp, ms = statistics.median(p), statistics.median(s)
        print(f"cudaMemcpyAsync D2H {size} B + sync: plain {mp / 1000:.2f} us, hipshadow {ms / 1000:.2f} us, "
              f"added {(ms - mp) / 1000:.2f} us per call")


def kernels():
    tool = os.path.join(gpu_bin, "transpose_gpu")
    proc, found, _ = run([tool, "check"])
    print(proc.stdout, proc.stderr[-2000:] if proc.returncode else "")
    if proc.returncode or found:
        failures.append(f"transpose correctness (exit {proc.returncode}, findings {found})")
    proc, _, _ = run([tool, "bench"])
    print(proc.stdout, proc.stderr[-2000:] if proc.returncode else "")
    if proc.returncode:
        failures.append("transpose bandwidth")
    n = str(256 << 20)
    direct, staged = [], []
    for _ in range(5):
        for opts, into in (((), direct), (("fallback=stage", "fallback_always=1"), staged)):
            out = run([tool, "d2h", n], options=opts)[0].stdout
            into += [float(l.split()[1]) for l in out.splitlines() if l.startswith("D2H_MS")]
    if direct and staged:
        md, ms = statistics.median(direct), statistics.median(staged)
        print(f"D2H of 256 MiB from an interior pointer into pinned memory: direct {md:.2f} ms, staged {ms:.2f} ms "
              f"({ms / md:.2f}x)")


CASES = [  # name, findings expected under mode=block (one bug, one finding), fields
    ("oob", {"out-of-bounds": 1}, {"out-of-bounds": {"overrun": 1024, "alloc.size": 4096}}),
    ("uaf", {"use-after-free": 1}, {}),
    ("overlap", {"async-overlap": 1}, {}),
    ("destroyed-stream", {"invalid-stream": 1}, {}),
    ("direction", {"direction-mismatch": 1}, {}),
    ("vmm-past-end", {"out-of-bounds": 1}, {"out-of-bounds": {"overrun": 4096}}),
    ("vmm-clean", {}, {}),
    ("clean", {}, {}),
]


def driver():
    probe = run([os.path.join(gpu_bin, "gpu_cases"), "probe"], preload=False)[0]
    if probe.returncode != 0:
        print("SKIP: no usable CUDA device")
        sys.exit(77)
    table = {}
    with tempfile.TemporaryDirectory() as builds:
        b = subprocess.run(["bash", os.path.join(here, "build_three_ways.sh"), builds], capture_output=True, text=True)
        print(b.stdout.strip(), b.stderr[-2000:])
        if b.returncode:
            failures.append("building three ways")
            return
        for way in ("static", "shared", "cmake"):
            for name, kinds, fields in CASES:
                options = [] if name in ("overlap", "clean", "vmm-clean") else ["mode=block"]
                _, records = expect(f"{way}/{name}", [os.path.join(builds, way, "gpu_cases"), name], kinds,
                                    options=options, fields=fields)
                table[(name, way)] = ", ".join(f"{r['kind']} ({r['api']})" for r in records) or "none"
    print("\n| case | nvcc (static) | nvcc -cudart shared | CMake |\n|---|---|---|---|")
    for name, _, _ in CASES:
        print(f"| {name} | " + " | ".join(table.get((name, w), "?") for w in ("static", "shared", "cmake")) + " |")
    py = shutil.which("python3")
    ct = os.path.join(here, "torch_ctypes.py")
    expand = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    expect("ctypes-handle-past-segment", [py, ct, "handle"], {"out-of-bounds": 1}, options=["mode=block"],
           fields={"out-of-bounds": {"overrun": 4096, "api": "cudaMemcpy"}})
    expect("expandable: read past the last map", [py, ct, "expandable"], {"out-of-bounds": 1}, options=["mode=block"],
           env_extra=expand, fields={"out-of-bounds": {"overrun": 4096}})
    wl = os.path.join(here, "torch_workloads.py")
    expect("expandable: gpt2 generate", [py, os.path.join(here, "torch_gpt2.py"), "64", "8"], {}, env_extra=expand,
           out_has="TOKENS_PER_S", min_calls=100)
    for what in ("llama", "adamw", "graph"):
        expect(f"expandable: {what}", [py, wl, what], {}, env_extra=expand, out_has=f"OK {what}", min_calls=100)
        expect(f"default allocator: {what}", [py, wl, what], {}, out_has=f"OK {what}", min_calls=100)


def frameworks():
    """Frameworks nobody on the team wrote, clean workloads: no finding, calls seen, and the
    workload's own result intact.  A framework that is not installed is reported skipped."""
    py = shutil.which("python3")
    fw = os.path.join(here, "frameworks.py")
    if not build_plugin():  # PyTorch's blocks tracked, as a user's run has them
        failures.append("building libhipshadow-torch.so")
    for what in ("compile", "vision", "triton", "cupy", "jax"):
        probe = subprocess.run([py, "-c", {"compile": "import torch", "vision": "import torch", "triton": "import triton",
                                           "cupy": "import cupy", "jax": "import jax"}[what]], capture_output=True)
        if probe.returncode:
            print(f"SKIP {what}: not installed here")
            continue
        expect(f"frameworks: {what}", [py, fw, what], {}, out_has=f"OK {what}", min_calls=10)
        if what == "vision":
            # PyTorch on CUDA's stream-ordered allocator: every tensor its own cudaMallocAsync, freed
            # at once.  Its reduce kernels take one by-value struct, whose OffsetCalculator sets only
            # the dimensions in use: the other 8-byte words are stack garbage, at times the address
            # of a freed tensor.  Words found only by scanning are warnings (a few
            # kernel-use-after-free warnings); no error may come of it.
            def no_errors(records, proc):
                errors = [r["kind"] for r in records if r["severity"] == "error"]
                warned = [r["kind"] for r in records if r["severity"] != "error"]
                print(f"  warnings from scanned arguments: {len(warned)} ({sorted(set(warned))}); errors: {errors}")
                return not errors and set(warned) <= {"kernel-use-after-free"}
            proc, _, records = run([py, fw, what], env_extra={"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"})
            ok = no_errors(records, proc) and f"OK {what}" in proc.stdout
            print(f"{'PASS' if ok else 'FAIL'} frameworks: vision, backend:cudaMallocAsync (no error)")
            if not ok:
                failures.append("frameworks: vision, backend:cudaMallocAsync")
                print(proc.stdout[-2000:], proc.stderr[-4000:])


def kernels_ledger():
    """The launch ledger on the GPU: device faults traced to kernels, a launch on freed memory,
    serialize=1, for the static and the shared runtime; then PyTorch with the ledger."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(here, "kernel_cases.cu")
        for way, flags in (("static", []), ("shared", ["-cudart", "shared"])):
            exe = os.path.join(tmp, "kernel_cases_" + way)
            subprocess.run(["nvcc", "-O1", "-g", "-o", exe, src] + flags, check=True)
            proc, records = expect(f"{way}/far-write", [exe, "far-write"], {"device-fault": 1},
                                   fields={"device-fault": {"kernels.0.name": "poke", "kernels.0.args.0.state": "live",
                                                            "kernels.0.args.0.how": "exact"}})
            print("\n".join(l for l in proc.stderr.splitlines() if "device-fault" in l or "kernel '" in l or "arg " in l))
            proc, records = expect(f"{way}/freed-arg", [exe, "freed-arg"], {"kernel-use-after-free": 1},
                                   options=["mode=block"],
                                   fields={"kernel-use-after-free": {"severity": "error", "kernels.0.name": "poke",
                                                                     "kernels.0.args.0.state": "freed"}})
            print("\n".join(l for l in proc.stderr.splitlines() if "kernel" in l or "argument" in l))
            expect(f"{way}/suspects", [exe, "serialize"], {"device-fault": 1}, fields={"device-fault": {"kernels.#": 3}})
            proc, _ = expect(f"{way}/serialize=1", [exe, "serialize"], {"device-fault": 1}, options=["serialize=1"],
                             fields={"device-fault": {"kernels.#": 1}})
            print("\n".join(l for l in proc.stderr.splitlines() if "device-fault" in l or "kernel '" in l or "arg " in l))
            expect(f"{way}/clean", [exe, "clean"], {}, out_has="round-trips")
            proc, _ = expect(f"{way}/overflow redzones=64", [exe, "overflow"], {"kernel-out-of-bounds-write": 1},
                             options=["redzones=64"],
                             fields={"kernel-out-of-bounds-write": {"overrun": 44, "alloc.size": 4000,
                                                                    "kernels.0.name": "poke"}})
            print("\n".join(l for l in proc.stderr.splitlines() if "overwritten" in l or "checked" in l or "kernel '" in l))
            for case in ("overflow-at-exit", "overflow-async"):
                proc, _ = expect(f"{way}/{case} redzones=64", [exe, case], {"kernel-out-of-bounds-write": 1},
                                 options=["redzones=64"],
                                 fields={"kernel-out-of-bounds-write": {"overrun": 44, "alloc.size": 4000,
                                                                        "kernels.0.name": "poke"}})
                print("\n".join(l for l in proc.stderr.splitlines() if "overwritten" in l or "checked" in l))
            expect(f"{way}/host-fn retires the launch before it", [exe, "host-fn"], {"device-fault": 1},
                   fields={"device-fault": {"kernels.#": 1}})
            expect(f"{way}/callback retires the launch before it", [exe, "callback"], {"device-fault": 1},
                   fields={"device-fault": {"kernels.#": 1}})
            expect(f"{way}/callback-free: the callback retires the copy", [exe, "callback-free"], {},
                   out_has="callback-free: status success")
            expect(f"{way}/clean redzones=64", [exe, "clean"], {}, options=["redzones=64"], out_has="round-trips")
    py = shutil.which("python3")
    expect("pytorch-gpt2 with the ledger", [py, os.path.join(here, "torch_gpt2.py"), "32", "4"], {},
           out_has="TOKENS_PER_S", min_calls=100)
    expect("pytorch-gpt2 with redzones=64", [py, os.path.join(here, "torch_gpt2.py"), "32", "4"], {},
           options=["redzones=64"], out_has="TOKENS_PER_S", min_calls=100)
    expect("pytorch-gpt2 with serialize=1", [py, os.path.join(here, "torch_gpt2.py"), "16", "2"], {},
           options=["serialize=1"], out_has="TOKENS_PER_S", min_calls=100)


def peer():
    cases = os.path.join(gpu_bin, "gpu_cases")
    with tempfile.TemporaryDirectory() as builds:
        b = subprocess.run(["bash", os.path.join(here, "build_three_ways.sh"), builds], capture_output=True, text=True)
        if b.returncode:
            print(b.stdout, b.stderr[-2000:])
            failures.append("building three ways")
            return
        for way in ("static", "shared"):
            proc, records = expect(f"{way}/peer", [os.path.join(builds, way, "gpu_cases"), "peer"], {"out-of-bounds": 1},
                                   options=["mode=block"], fields={"out-of-bounds": {"overrun": 1024, "device": 1}})
            print("\n".join(l for l in proc.stderr.splitlines() if "allocation #" in l or "ERROR" in l))
    expect("meson build/peer", [cases, "peer"], {"out-of-bounds": 1}, options=["mode=block"],
           fields={"out-of-bounds": {"overrun": 1024, "device": 1}})


BLOCK = "PyTorch caching-allocator block"


def blocks_line(proc):
    """The exit line of block statistics (verbosity=1) as {name: count}, {} when absent."""
    for line in proc.stderr.splitlines():
        if line.startswith("hipshadow: PyTorch caching-allocator blocks:"):
            words = line.replace("(", " ").replace(")", " ").replace(",", " ").split()
            counts = {"events": int(words[4])}
            for i, w in enumerate(words[:-1]):
                if words[i + 1].isdigit() and w in ("alloc", "free_requested", "free_completed", "segment_alloc",
                                                    "segment_free", "segment_map", "segment_unmap"):
                    counts[w] = int(words[i + 1])
            return counts
    return {}


def tracked(records, proc):
    counts = blocks_line(proc)
    print(f"  blocks: {counts}")
    return counts.get("alloc", 0) > 0 and counts.get("free_completed", 0) > 0


def has_frame(key, text):
    return lambda r: any(text in f for f in (r.get(key) if "." not in key else
                                             r.get(key.split(".")[0], {}).get(key.split(".")[1], [])) or [])


def report_excerpt(proc, first=40):
    lines = proc.stderr.splitlines()
    start = next((i for i, l in enumerate(lines) if "ERROR: hipshadow" in l or "WARNING: hipshadow" in l), None)
    if start is not None:
        print("\n".join("    | " + l for l in lines[start - 1:start + first]))


def build_plugin():
    out = os.path.join(os.path.dirname(os.path.abspath(launcher)), "..", "src")
    b = subprocess.run(["bash", os.path.join(here, "..", "..", "src", "torch", "build.sh"), out], capture_output=True,
                       text=True)
    print(b.stdout.strip(), b.stderr[-3000:])
    return b.returncode == 0


def torch_blocks():
    py = shutil.which("python3")
    if subprocess.run([py, "-c", "import torch; assert torch.cuda.is_available()"]).returncode:
        print("SKIP: PyTorch with CUDA is not available")
        sys.exit(77)
    if not build_plugin():
        failures.append("building libhipshadow-torch.so")
        return
    tb = os.path.join(here, "torch_blocks.py")
    proc, _ = expect("blocks: D2H past a tensor, inside its segment", [py, tb, "overrun"], {"region-overrun": 1},
                     options=["mode=block"], err_has=[BLOCK, "runs 4096 bytes past the end of " + BLOCK],
                     fields={"region-overrun": {"overrun": 4096, "block.size": 4000, "block.state": "live",
                                                "api": "cudaMemcpy", "action": "blocked"}})
    report_excerpt(proc)
    def uaf_stacks(records, proc):
        r = next((r for r in records if r["kind"] == "use-after-free"), {})
        ok = has_frame("python_stack", "in copy_out")(r) and has_frame("block.alloc_python_stack", "in make_tensor")(r)
        ok = ok and has_frame("block.free_python_stack", "in release")(r) and len(r.get("stack", [])) > 0
        print(f"  python_stack {r.get('python_stack', [])[:2]}, alloc {r.get('block', {}).get('alloc_python_stack', [])[:1]}"
              f", free {r.get('block', {}).get('free_python_stack', [])[:1]}")
        return ok
    proc, _ = expect("blocks: D2H from a freed tensor's old pointer (python_stacks=alloc)", [py, tb, "uaf"],
                     {"use-after-free": 1}, options=["mode=block", "python_stacks=alloc"],
                     err_has=[BLOCK, "which was freed", "Python stack", "handed out by thread", "freed by thread"],
                     fields={"use-after-free": {"block.state": "freed", "block.size": 4000}}, check=uaf_stacks)
    report_excerpt(proc, 70)
    expect("blocks: the same, default options (Python stack at the copy)", [py, tb, "uaf"], {"use-after-free": 1},
           options=["mode=block"], check=lambda r, p: all(has_frame("python_stack", "in copy_out")(x) for x in r))
    expect("blocks: the old pointer after the block was handed out again", [py, tb, "reuse"], {}, out_has="OK reuse")
    proc, _ = expect("blocks: a kernel launched on a freed tensor's old pointer", [py, tb, "kernel"],
                     {"kernel-use-after-free": 1}, options=["mode=block"], err_has=[BLOCK],
                     fields={"kernel-use-after-free": {"severity": "error", "block.state": "freed"}})
    report_excerpt(proc, 30)
    proc, got, _ = run([py, tb, "kernel-torch"], options=["mode=block"])
    print(f"INFO blocks: PyTorch's fill_ on a tensor aliasing a freed block: findings {got} (not asserted)")
    expect("blocks off (torch_blocks=0): the overrun is invisible again", [py, tb, "overrun"], {},
           options=["mode=block", "torch_blocks=0"], out_has="OK overrun")
    expect("no plugin: one info line, segment level", [py, tb, "overrun"], {},
           options=["mode=block", "torch_plugin=/nonexistent/libhipshadow-torch.so"], out_has="OK overrun",
           err_has=["blocks are not tracked: no plugin at"])
    ct = os.path.join(here, "torch_ctypes.py")
    expect("ctypes: past the segment", [py, ct, "segment"], {"out-of-bounds": 1}, options=["mode=block"],
           fields={"out-of-bounds": {"overrun": 4096}})
    expect("ctypes: past the tensor, inside the segment", [py, ct, "tensor"], {"region-overrun": 1},
           options=["mode=block"], fields={"region-overrun": {"overrun": 4096}})
    expect("ctypes: annotated tensor (the annotation wins, one finding)", [py, ct, "annotated"], {"region-overrun": 1},
           options=["mode=block"], fields={"region-overrun": {"overrun": 4096}})
    out = os.environ.get("OUT", tempfile.gettempdir())
    gpt2 = os.path.join(here, "torch_gpt2.py")
    wl = os.path.join(here, "torch_workloads.py")
    expand = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    clean = [("gpt2 generate", [py, gpt2, "64", "8"], None, "TOKENS_PER_S", "gpt2"),
             ("adamw", [py, wl, "adamw"], None, "OK adamw", "adamw"),
             ("graph capture + replay", [py, wl, "graph"], None, "OK graph", "graph"),
             ("llama generate", [py, wl, "llama"], None, "OK llama", None),
             ("expandable: gpt2 generate", [py, gpt2, "64", "8"], expand, "TOKENS_PER_S", None),
             ("expandable: adamw", [py, wl, "adamw"], expand, "OK adamw", "expandable-adamw"),
             ("expandable: graph", [py, wl, "graph"], expand, "OK graph", None)]
    for name, cmd, env, marker, trace in clean:
        opts = ["verbosity=1"] + ([f"torch_trace={os.path.join(out, 'trace-' + trace + '.txt')}"] if trace else [])
        expect(f"blocks, zero findings: {name}", cmd, {}, options=opts, env_extra=env, out_has=marker, min_calls=100,
               check=tracked)


def median_of(values):
    values = [v for v in values if v == v]
    return statistics.median(values) if values else float("nan")


def torch_bench():
    """GPT-2 generate tok/s and an AdamW step's time: plain, under hipshadow with block tracking
    (the default), with torch_blocks=0, and with python_stacks=alloc; interleaved runs."""
    py = shutil.which("python3")
    if not os.path.exists(os.path.join(os.path.dirname(os.path.abspath(launcher)), "..", "src",
                                       "libhipshadow-torch.so")) and not build_plugin():
        failures.append("building libhipshadow-torch.so")
        return
    pin = ["taskset", "-c", os.environ.get("BENCH_CPUS", "2-5")] if shutil.which("taskset") else []
    gpt2 = pin + [py, os.path.join(here, "torch_gpt2.py"), os.environ.get("BENCH_TOKENS", "256"), "16"]
    variants = [("plain", None), ("blocks (default)", []), ("torch_blocks=0", ["torch_blocks=0"]),
                ("python_stacks=alloc", ["python_stacks=alloc"])]
    tok = {name: [] for name, _ in variants}
    runs = int(os.environ.get("BENCH_RUNS", "5"))
    events = []
    for i in range(runs):
        for name, opts in variants:
            if opts is None:
                proc = run(gpt2, preload=False)[0]
            else:
                t0 = time.perf_counter()
                proc, kinds, _ = run(gpt2, options=opts + (["verbosity=1"] if name == "blocks (default)" else []))
                if kinds:
                    failures.append(f"GPT-2 under hipshadow ({name}): findings {kinds}")
                if name == "blocks (default)":
                    events.append((blocks_line(proc).get("events", 0), time.perf_counter() - t0))
            tok[name].append(tokens_per_s(proc))
        print(f"run {i + 1}: " + ", ".join(f"{n} {tok[n][-1]:.1f}" for n, _ in variants), flush=True)
    base = median_of(tok["plain"])
    for name, _ in variants:
        m = median_of(tok[name])
        print(f"GPT-2 generate ({gpt2[-2]} tokens): {name}: median {m:.1f} tok/s, ratio {m / base:.3f}")
    print(f"block events per GPT-2 run (model build, warm-up and {gpt2[-2]} tokens) and the run's wall time: "
          + ", ".join(f"{n} in {t:.1f} s ({n / t:.0f}/s)" for n, t in events))
    train = pin + [py, os.path.join(here, "torch_blocks.py"), "train", "60"]
    steps = {name: [] for name, _ in variants}
    for i in range(int(os.environ.get("TRAIN_RUNS", "3"))):
        for name, opts in variants:
            proc = run(train, preload=False)[0] if opts is None else run(train, options=opts)[0]
            ms = [float(l.split()[1]) for l in proc.stdout.splitlines() if l.startswith("STEP_MS")]
            steps[name].append(ms[0] if ms else float("nan"))
            if not ms:
                print(proc.stdout[-500:], proc.stderr[-1500:])
        print(f"train run {i + 1}: " + ", ".join(f"{n} {steps[n][-1]:.2f} ms" for n, _ in variants), flush=True)
    base = median_of(steps["plain"])
    for name, _ in variants:
        m = median_of(steps[name])
        print(f"AdamW step (MLP 2048-8192-2048, batch 512): {name}: median {m:.2f} ms, ratio {m / base:.3f} of plain")


if __name__ == "__main__":
    {"tests": tests, "bench": bench, "kernels": kernels, "driver": driver, "peer": peer,
     "launch": bench_launch, "kernels-ledger": kernels_ledger, "torch-blocks": torch_blocks,
     "torch-bench": torch_bench, "frameworks": frameworks}[sys.argv[1]]()
    print(f"{'FAILED: ' + ', '.join(failures) if failures else 'all GPU checks passed'}")
    sys.exit(1 if failures else 0)
