#!/usr/bin/env python3
"""Why a real engine runs at the ratio it does under hipshadow: event counts x per-event costs.

For PyTorch GPT-2 generate (blocks tracked, the default; also torch_blocks=0 and redzones=64) and
for ggml's GPT-2 example (gpt-2-backend, built as tests/gpu/real_engines.py builds it), prints:
  counts    per generated token, from hipshadow's own counters (stats=1: its exit line
            'hipshadow: STATS launch=N copy=N ...'), taken as the difference of two runs of
            T and 2T tokens, so model loading and warm-up drop out
  costs     the added cost of each kind of event alone, on this machine: a kernel launch
            (bench_launch.cu, shared runtime), a D2H cudaMemcpyAsync + sync (bench_cuda_copy),
            a caching-allocator block event (bench_blocks on a recorded GPT-2 trace), and alloc,
            free, sync and a clean copy on the simulator (bench_events: the host CPU's share)
  predicted counts x costs per token, beside the measured added time per token
  pairs     plain / hipshadow runs interleaved (--pairs, 9 by default), the median pairwise
            ratio (hipshadow speed / plain speed) and its spread (min, quartiles, max)
Partial results are printed as they come; everything runs against --budget seconds.

Run from the repository root on a GPU machine, build/ (hipshadow, built with the CUDA front-end
and the torch plugin) and vendor-device/ (the ggml tarball) carried:
  python3 tests/gpu/bench_engines.py [--engines torch,ggml] [--pairs 9] [--side-pairs 3]
                                     [--tokens 128] [--budget 480]
  --dry-run    print the plan (what runs, in what order, the estimated seconds) and exit; needs
               no GPU, no PyTorch and no ggml (CI runs it, and --help)
Output lines (one per fact, grep-able):
  COST <kind> <added ns per event> (<how it was measured>)
  COUNT <engine/variant> <kind> <per token>
  PAIR <engine/variant> <i> plain <x> hipshadow <y> ratio <r>
  RATIO <engine/variant> median <r> min <a> q1 <b> q3 <c> max <d> (<n> pairs)
  PREDICT <engine/variant> added <predicted> us/token (measured <m> us/token): <kind> <us> ...
Environment: as real_engines.py (GGML_TARBALL, GGML_WORK, GGML_REUSE=1, HS_LAUNCHER); BENCH_CPUS
(taskset, default 2-5: batch-1 decoding is bound by the launching CPU)."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
T0 = time.monotonic()

STATS = re.compile(r"^hipshadow: STATS (.*)$", re.M)
# hipshadow's STATS kinds, and which per-event cost stands for each (None: not measured alone)
COST_OF = {"launch": "launch", "copy": "copy_async", "copy_fast": "copy_fast", "memset": "launch",
           "alloc": "alloc", "free": "free", "sync": "sync", "event": "sync", "stream": None, "other": None,
           "own_save": None, "own_query": None, "stack_walk": None, "block_alloc": "block", "block_free_requested": "block",
           "block_free_completed": "block", "block_segment": "block", "block_other": "block"}


def say(msg):
    t = time.monotonic() - T0
    print(f"[+{int(t) // 60}:{int(t) % 60:02d}] {msg}", flush=True)


def left(args):
    return args.budget - (time.monotonic() - T0)


def spread(values):
    v = sorted(values)
    if not v:
        return None
    q = statistics.quantiles(v, n=4) if len(v) >= 2 else [v[0]] * 3
    return {"median": statistics.median(v), "min": v[0], "q1": q[0], "q3": q[2], "max": v[-1], "n": len(v)}


def parse_stats(stderr):
    m = STATS.findall(stderr or "")
    if not m:
        return None
    return {k: int(v) for k, v in (w.split("=", 1) for w in m[-1].split())}


# ------------------------------------------------------------------------------ the workloads

class Workload:
    """One engine in one hipshadow configuration: runs it for n tokens, plain or under hipshadow;
    returns (seconds per token, stderr) or (None, why)."""

    def __init__(self, name, options):
        self.name, self.options = name, options

    def cmd(self, tokens):
        raise NotImplementedError

    def per_token(self, proc):
        raise NotImplementedError

    def run(self, tokens, preload, extra=(), timeout=180):
        import run_gpu
        try:
            proc = run_gpu.run(self.cmd(tokens), preload=preload, options=list(self.options) + list(extra),
                               timeout=timeout)[0]
        except subprocess.TimeoutExpired:
            return None, f"timed out after {timeout} s"
        s = self.per_token(proc)
        if s is None:
            return None, f"exit {proc.returncode}, no timing line: " + " | ".join(
                (proc.stderr or proc.stdout).strip().splitlines()[-3:])
        return s, proc.stderr


class TorchGPT2(Workload):
    def cmd(self, tokens):
        pin = ["taskset", "-c", os.environ.get("BENCH_CPUS", "2-5")] if shutil.which("taskset") else []
        return pin + [sys.executable, os.path.join(here, "torch_gpt2.py"), str(tokens), "16"]

    def per_token(self, proc):
        for line in proc.stdout.splitlines():
            if line.startswith("TOKENS_PER_S"):
                return 1.0 / float(line.split()[1])
        return None


class GgmlGPT2(Workload):
    def __init__(self, name, options, binary, model):
        super().__init__(name, options)
        self.binary, self.model = binary, model

    def cmd(self, tokens):
        import real_engines
        pin = ["taskset", "-c", os.environ.get("BENCH_CPUS", "2-5")] if shutil.which("taskset") else []
        return pin + [self.binary, "-m", self.model, "-p", real_engines.PROMPT, "-n", str(tokens), "-s", "42",
                      "--top_k", "1", "--ignore-eos", "-c", "1024", "-t", "4", "-ngl", "99"]

    def per_token(self, proc):
        import real_engines
        m = real_engines.PER_TOKEN.search(proc.stdout or "")
        return float(m.group(2)) / 1000.0 if m else None


def ggml_setup(args):
    """real_engines.py's build (GGML_REUSE=1 keeps a finished one) and its GPT-2 124M model."""
    import real_engines
    ns = argparse.Namespace(work=os.path.abspath(os.environ.get("GGML_WORK", "/tmp/hipshadow-ggml")),
                            tarball=os.environ.get("GGML_TARBALL", os.path.join(root, "vendor-device",
                                                                                "ggml-d99724f.tar.gz")),
                            cpu_check=False, jobs=os.cpu_count() or 16)
    logs = os.path.join(ns.work, "logs")
    os.makedirs(logs, exist_ok=True)
    bins = real_engines.build(ns, real_engines.Clock(max(left(args) - 240, 60)), logs)
    if not bins:
        return None
    model = os.path.join(ns.work, "gpt2-random-12x768x12-ctx1024.bin")
    if not os.path.exists(model):
        real_engines.write_gpt2(model, 12, 768, 12, 1024)
    return bins["gpt-2-backend"], model


# ------------------------------------------------------------------------------ per-event costs

def interleaved(cmd, rounds, parse):
    import run_gpu
    plain, shadow = [], []
    for _ in range(rounds):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        s = run_gpu.run(cmd, timeout=120)[0]
        plain.append(parse(p.stdout))
        shadow.append(parse(s.stdout))
    return plain, shadow


def costs(args):
    """Added ns per event of each kind, measured alone on this machine."""
    out = {}
    build = os.path.join(root, "build")
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "bench_launch")
        if shutil.which("nvcc") and subprocess.run(["nvcc", "-O2", "-cudart", "shared", "-o", exe,
                                                    os.path.join(here, "bench_launch.cu")]).returncode == 0:
            p, s = interleaved([exe, "100000"], 5, lambda o: float(o.split()[0]))
            out["launch"] = (statistics.median(s) - statistics.median(p), "bench_launch.cu, shared runtime, "
                             "medians of 5 interleaved")
    copy = os.path.join(build, "tests", "gpu", "bench_cuda_copy")
    if os.access(copy, os.X_OK):
        p, s = interleaved([copy, "4096", "1000"], 5, lambda o: float(o.split()[0]))
        out["copy_async"] = (statistics.median(s) - statistics.median(p), "bench_cuda_copy 4 KiB D2H + sync")
    blocks = os.path.join(build, "tests", "bench", "bench_blocks")
    trace = os.path.join(root, "tests", "unit", "data", "torch-gpt2-head.txt")
    if os.access(blocks, os.X_OK) and os.path.exists(trace):
        r = subprocess.run([blocks, trace], capture_output=True, text=True, timeout=120).stdout
        m = re.search(r"([\d.]+) ns per event", r)
        if m:
            out["block"] = (float(m.group(1)), "bench_blocks on a recorded GPT-2 trace (the whole cost: plain has none)")
    events = os.path.join(build, "tests", "bench", "bench_events")
    sim = os.path.join(build, "tests", "simhip")
    if os.access(events, os.X_OK):
        env = dict(os.environ, SIMHIP_NULL="1",
                   LD_LIBRARY_PATH=sim + (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH")
                                          else ""))

        def fields(o):
            w = o.split()
            return {w[i]: float(w[i + 1]) for i in range(0, len(w) - 1, 2)}
        # HIP on the simulator: its launcher is the HIP one, not --cuda
        launcher = os.environ.get("HS_LAUNCHER", os.path.join(build, "tools", "hipshadow"))
        plain, shadow = [], []
        for _ in range(5):
            plain.append(fields(subprocess.run([events, "1000", "50000"], capture_output=True, text=True, env=env,
                                               timeout=120).stdout))
            shadow.append(fields(subprocess.run([launcher, "--", events, "1000", "50000"], capture_output=True,
                                                text=True, env=env, timeout=120).stdout))
        if plain[0] and shadow[0]:
            for k, name in (("copy", "copy_fast"), ("alloc", "alloc"), ("free", "free"), ("sync", "sync")):
                out[name] = (statistics.median(s[k] for s in shadow) - statistics.median(p[k] for p in plain),
                             "bench_events on the simulator (host CPU share), medians of 5 interleaved")
            if "launch" not in out:
                out["launch"] = (statistics.median(s["launch"] for s in shadow)
                                 - statistics.median(p["launch"] for p in plain), "bench_events on the simulator")
    for k, (ns, how) in sorted(out.items()):
        print(f"COST {k} {ns:.0f} ns ({how})", flush=True)
    return out


# ------------------------------------------------------------------------------ counts, pairs, prediction

def counts(w, tokens):
    """Events per token under hipshadow (stats=1): runs of T and 2T tokens, differenced."""
    a = w.run(tokens, True, ["stats=1"])
    b = w.run(2 * tokens, True, ["stats=1"])
    if a[0] is None or b[0] is None:
        return None, (a[1] if a[0] is None else b[1])
    sa, sb = parse_stats(a[1]), parse_stats(b[1])
    if not sa or not sb:
        return None, "no 'hipshadow: STATS' line (a hipshadow without stats=1?)"
    per = {k: (sb.get(k, 0) - sa.get(k, 0)) / tokens for k in sb}
    for k, v in per.items():
        if v:
            print(f"COUNT {w.name} {k} {v:.1f}", flush=True)
    return per, None


def pairs(w, n, tokens, args):
    ratios, plain_s, shadow_s = [], [], []
    for i in range(n):
        if left(args) < 30:
            print(f"NOTE {w.name}: budget: {i} of {n} pairs", flush=True)
            break
        p, _ = w.run(tokens, False)
        s, err = w.run(tokens, True)
        if p is None or s is None:
            print(f"NOTE {w.name}: pair {i + 1} failed: {err if s is None else 'plain run'}", flush=True)
            continue
        plain_s.append(p)
        shadow_s.append(s)
        ratios.append(p / s)
        print(f"PAIR {w.name} {i + 1} plain {1 / p:.2f} tok/s hipshadow {1 / s:.2f} tok/s ratio {p / s:.3f}",
              flush=True)
    r = spread(ratios)
    if r:
        print(f"RATIO {w.name} median {r['median']:.3f} min {r['min']:.3f} q1 {r['q1']:.3f} q3 {r['q3']:.3f} "
              f"max {r['max']:.3f} ({r['n']} pairs)", flush=True)
    return r, plain_s, shadow_s


def predict(w, per, cost, plain_s, shadow_s):
    parts, unknown = [], []
    total = 0.0
    for kind, n in sorted(per.items()):
        c = COST_OF.get(kind)
        if not n:
            continue
        if c in cost:
            us = n * cost[c][0] / 1000
            total += us
            parts.append(f"{kind} {us:.1f}")
        else:
            unknown.append(f"{kind} x{n:.1f}")
    measured = (statistics.median(shadow_s) - statistics.median(plain_s)) * 1e6 if plain_s else float("nan")
    base = statistics.median(plain_s) * 1e6 if plain_s else float("nan")
    print(f"PREDICT {w.name} added {total:.1f} us/token (measured {measured:.1f} us/token over {base:.1f} plain; "
          f"predicted ratio {base / (base + total):.3f}): " + ", ".join(parts)
          + (f"; not costed alone: {', '.join(unknown)}" if unknown else ""), flush=True)


def plan(args):
    steps = [("costs", 60)]
    if "ggml" in args.engines:
        steps += [("ggml build (GGML_REUSE=1: none)", 0), ("ggml counts", 10), (f"ggml {args.pairs} pairs",
                                                                               args.pairs * 2 * 3)]
    if "torch" in args.engines:
        steps += [("torch/blocks counts", 25), (f"torch/blocks {args.pairs} pairs", args.pairs * 2 * 10),
                  ("torch/torch_blocks=0 counts", 25), (f"torch/torch_blocks=0 {args.side_pairs} pairs",
                                                        args.side_pairs * 2 * 10),
                  ("torch/redzones=64 counts", 25), (f"torch/redzones=64 {args.side_pairs} pairs",
                                                     args.side_pairs * 2 * 10)]
    return steps


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engines", default="torch,ggml", help="which of torch,ggml")
    ap.add_argument("--pairs", type=int, default=9, help="plain/hipshadow pairs for each engine's default")
    ap.add_argument("--side-pairs", type=int, default=3, help="pairs for torch_blocks=0 and redzones=64")
    ap.add_argument("--tokens", type=int, default=128, help="tokens generated per run")
    ap.add_argument("--budget", type=float, default=480, help="seconds for everything (default 480)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and exit (no GPU needed)")
    args = ap.parse_args()
    args.engines = [e for e in args.engines.split(",") if e]
    bad = set(args.engines) - {"torch", "ggml"}
    if bad:
        ap.error(f"unknown engines {sorted(bad)}")
    steps = plan(args)
    say(f"bench_engines: {', '.join(args.engines)}, {args.pairs} pairs ({args.side_pairs} for side variants), "
        f"{args.tokens} tokens a run, budget {args.budget:.0f} s")
    for name, s in steps:
        print(f"PLAN {name} ~{s} s")
    print(f"PLAN total ~{sum(s for _, s in steps)} s")
    if args.dry_run:
        return 0
    sys.path.insert(0, here)
    cost = costs(args)
    work = []
    if "ggml" in args.engines:  # first: its runs take seconds, the torch ones tens
        say("ggml: build (real_engines.py) and model")
        got = ggml_setup(args)
        if got:
            work.append((GgmlGPT2("ggml/gpt-2-backend", [], *got), args.pairs, True))
        else:
            print("NOTE ggml: no build (see real_engines.py's logs)")
    if "torch" in args.engines:
        import run_gpu
        plugin = os.path.join(os.path.dirname(os.path.abspath(run_gpu.launcher)), "..", "src", "libhipshadow-torch.so")
        if not os.path.exists(plugin) and not run_gpu.build_plugin():
            print("NOTE torch: libhipshadow-torch.so could not be built: block tracking is off in these runs")
        work += [(TorchGPT2("torch/blocks", []), args.pairs, True),
                 (TorchGPT2("torch/torch_blocks=0", ["torch_blocks=0"]), args.side_pairs, True),
                 (TorchGPT2("torch/redzones=64", ["redzones=64"]), args.side_pairs, True)]
    for w, n, with_counts in work:
        if left(args) < 40:
            print(f"NOTE {w.name}: not run (budget)")
            continue
        say(f"== {w.name}")
        per = None
        if with_counts:
            per, why = counts(w, args.tokens)
            if per is None:
                print(f"NOTE {w.name}: no counts: {why}")
        _, ps, ss = pairs(w, n, args.tokens, args)
        if per is not None and ps:
            predict(w, per, cost, ps, ss)
    say("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
