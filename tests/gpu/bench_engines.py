#!/usr/bin/env python3
"""Why a real engine runs at the ratio it does under hipshadow: event counts x per-event costs.

For PyTorch GPT-2 generate (blocks tracked, the default; also torch_blocks=0 and redzones=64) and
for ggml's GPT-2 example (gpt-2-backend, built as tests/gpu/real_engines.py builds it), prints:
  counts    per generated token, from hipshadow's own counters (stats=1: its exit line
            'hipshadow: STATS launch=N copy=N ...'), so model loading and warm-up drop out:
            PyTorch's over its timed generates alone (torch_gpt2.py has the line printed
            before and after them, hipshadow_print_stats), ggml's as the difference of two
            runs of T and 2T tokens
  costs     the added cost of each kind of event alone, on this machine: a kernel launch
            (bench_launch.cu, shared runtime, batches of 32 timed from an idle GPU), a D2H
            cudaMemcpyAsync + sync (bench_cuda_copy), PyTorch's own block events and launches
            (torch_event_cost.py: a tensor made and let go, an add into a tensor, in a loop), and
            a launch, alloc, free, sync and a clean copy on the simulator (bench_events: the host
            CPU's share; its launch is launch_sim, which a real launch's noise of hundreds of ns
            does not hide)
  profile   where the time goes, plain and under hipshadow (tools/sampler, which needs no
            profiler on the machine): each side's share by module, and the functions of
            hipshadow and libc (its locks and copies), summed over --profile-runs runs; and
            microseconds a token by module and function, plain, under hipshadow and added.
            PyTorch is sampled over its timed generates only; ggml, whose runs are sampled
            whole, at T and 4T tokens, and the first subtracted, so model loading drops out
  predicted counts x costs per token, beside the measured added time per token
  rounds    each round runs the engine plain and under each variant of hipshadow (plain first
            in one round, last in the next: a process's place in a round moves its speed), so
            every variant's ratio is taken against the plain run next to it (--pairs rounds, 9 by
            default; the side variants join the first --side-pairs of them); prints the median
            pairwise ratio (hipshadow speed / plain speed), its spread (min, quartiles, max) and
            its 95% interval, and whether the pairs show --goal (GOAL).
            A PyTorch run times 3 generates in one process and keeps the best (a run that a
            neighbour on the machine slowed down drops out); --best-of K runs each side K times
            a round, in turn, and keeps its fastest process (a ggml run is one process, whose
            speed the machine moves by tens of percent from one to the next).
            --together (two GPUs): a pair's plain and hipshadow runs go at the same time, one on
            each GPU, each pinned to its own CPUs, GPU and CPUs swapped from one pair to the next:
            the machine's drift, which moves runs a minute apart by tens of percent, then moves
            both sides of a pair alike.
            'control' among the variants (--torch-variants blocks,control; --ggml-variants
            default,control): an A/A pair each round, the first side's run again in its place, so
            the machine's own noise is measured beside the build (NOISE): a median of a variant
            inside the control's quartiles is not told from the machine.
            --lockstep K (PyTorch): each round starts the plain process and one process for each
            variant at once, pinned alike on the one GPU, and has each time a generate K times over,
            in turn (plain first in one turn, last in the next), the others waiting meanwhile
            (torch_gpt2.py --serve): each turn's pairs are seconds apart, not a minute, so the
            machine's drift moves both sides alike without a second GPU; K pairs a round
            (LOCKSTEP: each round's median, as its K pairs share two processes, and the ratio of
            the two sides' fastest turns; FASTEST: those ratios over the rounds, each round one
            pair of best-of-K processes).  The processes
            start on BENCH_CPUS and, once ready, are all moved to BENCH_CPU_TURNS (one CPU by
            default): on four, the plain process and the control, both plain, kept a 10% gap
            in every round, as the scheduler left each on its own CPU
            --against LAUNCHER: an A/B of two builds, the first side of every pair run under
            that other launcher instead of plain (same options, same placement), the ratio this
            build's speed over that one's, and AB lines instead of GOAL: faster, slower, or no
            difference shown by the 95% interval
Partial results are printed as they come; everything runs against --budget seconds.

Run from the repository root on a GPU machine, build/ (hipshadow, built with the CUDA front-end
and the torch plugin) and vendor-device/ (the ggml tarball) carried:
  python3 tests/gpu/bench_engines.py [--engines torch,ggml] [--pairs 9] [--side-pairs 9] [--best-of 1]
                                     [--ggml-variants default,races=0] [--torch-variants blocks,torch_blocks=0]
                                     [--tokens 128] [--budget 480] [--together | --lockstep K]
                                     [--against OLD_LAUNCHER]
  --dry-run    print the plan (what runs, in what order, the estimated seconds) and exit; needs
               no GPU, no PyTorch and no ggml (CI runs it, and --help)
Output lines (one per fact, grep-able):
  COST <kind> <added ns per event> (<how it was measured>)
  COUNT <engine/variant> <kind> <per token>   (the *_ns kinds: ns of hipshadow's own code a token)
  INENGINE <engine/variant> <kind> <ns> ns an event x <events> a token = <us> us a token
            (hipshadow's own time per event of each kind, timed in the engine itself under stats=1,
            the runtime's own call left out: the per-event cost with the engine's caches, not a
            microbenchmark's)
  PAIR <engine/variant> <i>[.<turn>] plain|against <x> hipshadow|again <y> ratio <r>   (again: the control's
            A/A side; .<turn>: --lockstep's turn within round i)
  LOCKSTEP <engine/variant> round <i> median <r> fastest <f> (<k> turns)   (fastest: the variant's
            fastest turn's speed over the plain process's fastest turn's)
  FASTEST <engine/variant> median <r> min <a> q1 <b> q3 <c> max <d> (<n> rounds) ci95 <lo> <hi>
            (--lockstep: the rounds' fastest ratios; with GOAL <engine/variant> fastest ... beside it)
  RATIO <engine/variant> median <r> min <a> q1 <b> q3 <c> max <d> (<n> pairs) ci95 <lo> <hi>
            (ci95: the median's distribution-free 95% confidence interval; 'none' below 6 pairs)
  GOAL <engine/variant> median >= <goal>: shown|refuted|not shown (...)
  BRACKET <engine/variant> median <r> ... (<n> rounds) ci95 <lo> <hi>   (rounds with a control listed
            after the variant: each run's speed over the geometric mean of its round's plain run and
            control run, which stand on either side of it; with GOAL <engine/variant> bracketed ...)
  NOISE <engine>/control median <r> q1 <a> q3 <b> (<n> pairs) ci95 <lo> <hi>   (the A/A pairs: instead of GOAL)
  AB <engine/variant> [bracketed:] this build against <launcher>: faster|slower|no difference shown|no interval
  PREDICT <engine/variant> added <predicted> us/token (measured <m> us/token ...): <kind> <us> ...
            (measured: the plain token's median x (1 / the median pairwise ratio - 1), the added time
            the RATIO line stands for; 'PREDICT ... none' when the run measured no per-event costs)
  ROUND_STATS <engine/variant> <i> <kind>=<count> ...   (--round-stats: the run's own counts)
  PROFILE <engine/variant> SAMPLES|MODULE|FUNCTION <plain|hipshadow> ...  (tools/sampler/report.py's lines)
  PERTOKEN <engine/variant> TOTAL plain <us> us hipshadow <us> us added <us> us
  PERTOKEN <engine/variant> SPLIT own <us> us elsewhere <us> us   (the added time in hipshadow's code,
            and in the program's: what counts x in-engine costs cannot see)
  PERTOKEN <engine/variant> MODULE|FUNCTION added <us> us plain <us> hipshadow <us> <module> [<function>]
Environment: as real_engines.py (GGML_TARBALL, GGML_WORK, GGML_REUSE=1, HS_LAUNCHER); BENCH_CPUS
(taskset, default 2-5: batch-1 decoding is bound by the launching CPU); BENCH_CPU_TURNS (--lockstep's
CPUs once its processes are ready, default BENCH_CPUS's first); BENCH_CPUS_OTHER (--together's
second CPU set, default 10-13); BENCH_KEEP_SAMPLES=DIR (the
profile step's raw sampler files are also copied there, for a reading by instruction)."""
import argparse
import collections
import queue
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
T0 = time.monotonic()

STATS = re.compile(r"^hipshadow: STATS (.*)$", re.M)
# hipshadow's STATS kinds, and which per-event cost stands for each (None: not measured alone)
COST_OF = {"launch": "launch", "copy": "copy_async", "copy_fast": "copy_fast", "copy_async_fast": "copy_async", "memset": "launch",
           "alloc": "alloc", "free": "free", "sync": "sync", "event": "sync", "stream": None, "other": None,
           "own_save": None, "own_query": None, "stack_walk": None, "launch_word": None, "maps_change": None, "maps_read": None, "block_alloc": "block", "block_free_requested": "block",
           "block_free_completed": "block", "block_segment": "block", "block_other": "block"}
# stats=1's time kinds: hipshadow's own ns in calls of a kind, and the counts they are per
TIME_OF = {"launch_ns": ("launch",), "copy_ns": ("copy", "copy_fast", "copy_async_fast", "memset"),
           "block_ns": ("block_alloc", "block_free_requested", "block_free_completed", "block_segment", "block_other"),
           "other_ns": ("alloc", "free", "sync", "event", "stream", "other")}


def say(msg):
    t = time.monotonic() - T0
    print(f"[+{int(t) // 60}:{int(t) % 60:02d}] {msg}", flush=True)


def left(args):
    return args.budget - (time.monotonic() - T0)


def pinned(cpus=None):
    """taskset to cpus (default BENCH_CPUS, 2-5), where taskset exists."""
    return ["taskset", "-c", cpus or os.environ.get("BENCH_CPUS", "2-5")] if shutil.which("taskset") else []


def median_ci(values, level=0.95):
    """A distribution-free confidence interval of the median: the order statistics x(j) and
    x(n+1-j), j the largest with P(Binomial(n, 1/2) < j) <= (1 - level) / 2 (no assumption about
    the noise's shape; 9 pairs give x(2)..x(8), 15 give x(4)..x(12)); None when too few values
    (fewer than 6 at 95%)."""
    v, n = sorted(values), len(values)
    j, below = 0, 0.0
    for i in range(n):
        below += math.comb(n, i) / 2 ** n
        if below > (1 - level) / 2:
            break
        j = i + 1
    return (v[j - 1], v[n - j]) if j else None


def goal_verdict(ci, goal):
    """Whether pairs show a median ratio of at least `goal`: shown (the interval lies at or above
    it), refuted (below it), or not shown (the interval holds it: more pairs, or less noise)."""
    if ci is None:
        return "not shown (too few pairs for an interval)"
    return "shown" if ci[0] >= goal else "refuted" if ci[1] < goal else "not shown (the interval holds it)"


def ab_verdict(ci):
    """--against: whether this build is faster or slower than the other, by the interval of the
    ratio of its speed over the other's."""
    return "no interval" if not ci else "faster" if ci[0] > 1 else "slower" if ci[1] < 1 else "no difference shown"


def spread(values):
    v = sorted(values)
    if not v:
        return None
    q = statistics.quantiles(v, n=4) if len(v) >= 2 else [v[0]] * 3
    return {"median": statistics.median(v), "min": v[0], "q1": q[0], "q3": q[2], "max": v[-1], "n": len(v),
            "ci": median_ci(v)}


def parse_stats(stderr, which=-1):
    m = STATS.findall(stderr or "")
    if not m or which >= len(m) or which < -len(m):
        return None
    return {k: int(v) for k, v in (w.split("=", 1) for w in m[which].split())}


WINDOW = re.compile(r"^WINDOW_TOKENS (\d+)$", re.M)


def window_stats(stderr):
    """The counts of an engine's timed window alone: the difference of the two STATS lines it had
    hipshadow print around it (hipshadow_print_stats), and its tokens ('WINDOW_TOKENS n', on
    stderr too); None when it printed none."""
    m = WINDOW.search(stderr or "")
    a, b = parse_stats(stderr, 0), parse_stats(stderr, 1)
    if not m or not a or not b or int(m.group(1)) <= 0 or len(STATS.findall(stderr)) < 3:
        return None
    return {k: v - a.get(k, 0) for k, v in b.items()}, int(m.group(1))


# ------------------------------------------------------------------------------ the workloads

class Workload:
    """One engine in one hipshadow configuration: runs it for n tokens, plain or under hipshadow;
    returns (seconds per token, stderr) or (None, why)."""

    runs = 1  # timed runs in one process (the counts' runs make runs x tokens)
    control = False  # the A/A variant: its side runs as each pair's first side does, not under this build
    own_costs = {}  # a kind's cost measured in this engine itself, preferred where measured

    def __init__(self, name, options):
        self.name, self.options = name, options

    def cost_for(self, kind, cost):
        c = COST_OF.get(kind)
        return self.own_costs.get(c, c) if self.own_costs.get(c) in cost else c

    def cmd(self, tokens, cpus=None):
        raise NotImplementedError

    def per_token(self, proc):
        raise NotImplementedError

    sample_whole = True  # the sampler takes the whole run (else the engine marks its timed part)

    def run(self, tokens, preload, extra=(), timeout=180, env_extra=None):
        import run_gpu
        try:
            proc = run_gpu.run(self.cmd(tokens), preload=preload, options=list(self.options) + list(extra),
                               timeout=timeout, env_extra=env_extra)[0]
        except subprocess.TimeoutExpired:
            return None, f"timed out after {timeout} s"
        s = self.per_token(proc)
        if s is None:
            return None, f"exit {proc.returncode}, no timing line: " + " | ".join(
                (proc.stderr or proc.stdout).strip().splitlines()[-3:])
        return s, proc.stderr

    def start(self, tokens, preload, gpu, cpus):
        """One run on GPU `gpu` (CUDA_VISIBLE_DEVICES) pinned to `cpus`, started and not waited
        for: finish() takes its result (--together).  preload: a path runs it under that launcher."""
        import run_gpu
        cmd = self.cmd(tokens, cpus)
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu))
        env.pop("HIPSHADOW_OPTIONS", None)
        under = preload if isinstance(preload, str) else None
        return subprocess.Popen(run_gpu.preloaded(cmd, self.options, under=under) if preload else cmd,
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)

    def finish(self, proc, timeout):
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            return None, f"timed out after {timeout:.0f} s"
        s = self.per_token(argparse.Namespace(stdout=out, stderr=err, returncode=proc.returncode))
        if s is None:
            last = (err or out).strip().splitlines()[-3:]
            return None, f"exit {proc.returncode}, no timing line: " + " | ".join(last)
        return s, err


class TorchGPT2(Workload):
    runs = 3
    sample_whole = False  # torch_gpt2.py raises SIGUSR2 around its timed generates

    def tokens_sampled(self, tokens):
        return self.runs * tokens  # the window holds the timed generates
    own_costs = {"launch": "launch_torch", "block": "block_torch"}

    def cmd(self, tokens, cpus=None):
        return pinned(cpus) + [sys.executable, os.path.join(here, "torch_gpt2.py"), str(tokens), "16",
                               str(self.runs)]

    def serve_cmd(self, tokens, cpus=None):
        """torch_gpt2.py --serve: one timed generate of `tokens` for each request (Served)."""
        return pinned(cpus) + [sys.executable, os.path.join(here, "torch_gpt2.py"), str(tokens), "16", "1",
                               "--serve"]

    def per_token(self, proc):
        for line in proc.stdout.splitlines():
            if line.startswith("TOKENS_PER_S"):
                return 1.0 / float(line.split()[1])
        return None


class GgmlGPT2(Workload):
    def __init__(self, name, options, binary, model):
        super().__init__(name, options)
        self.binary, self.model = binary, model

    def cmd(self, tokens, cpus=None):
        import real_engines
        return pinned(cpus) + [self.binary, "-m", self.model, "-p", real_engines.PROMPT, "-n", str(tokens),
                               "-s", "42", "--top_k", "1", "--ignore-eos", "-c", "1024", "-t", "4", "-ngl", "99"]

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


def torch_costs(out):
    """PyTorch's own events, in its process: torch_event_cost.py plain, blocks tracked and
    torch_blocks=0, interleaved.  A made-and-released tensor is three block events."""
    import run_gpu
    cmd = [sys.executable, os.path.join(here, "torch_event_cost.py")]
    pin = pinned()
    for kind, n in (("blocks", "30000"), ("launch", "30000")):
        got = {"plain": [], "blocks": [], "torch_blocks=0": []}
        for _ in range(3):
            for variant in got:
                if variant == "plain":
                    proc = subprocess.run(pin + cmd + [kind, n], capture_output=True, text=True, timeout=120)
                else:
                    proc = run_gpu.run(pin + cmd + [kind, n], options=[] if variant == "blocks" else [variant],
                                       timeout=120)[0]
                m = re.search(r"NS_PER_ITER ([\d.]+)", proc.stdout or "")
                if not m:
                    print(f"NOTE torch_event_cost {kind} ({variant}): no figure: "
                          + " | ".join((proc.stderr or "").strip().splitlines()[-3:]), flush=True)
                    return
                got[variant].append(float(m.group(1)))
        med = {v: statistics.median(x) for v, x in got.items()}
        print(f"EVENTS torch {kind}: plain {med['plain']:.0f} ns/iteration, blocks tracked {med['blocks']:.0f}, "
              f"torch_blocks=0 {med['torch_blocks=0']:.0f} (medians of 3 interleaved)", flush=True)
        if kind == "blocks":
            out["block_torch"] = ((med["blocks"] - med["plain"]) / 3, "torch_event_cost.py blocks: a tensor made and "
                                  "let go (3 block events) in PyTorch, added per event, medians of 3 interleaved")
            out["block_torch_hook"] = ((med["blocks"] - med["torch_blocks=0"]) / 3,
                                       "the same, against torch_blocks=0: the hook and the block state alone")
        else:
            out["launch_torch"] = (med["blocks"] - med["plain"], "torch_event_cost.py launch: an add into a tensor "
                                   "in PyTorch, added per launch, blocks tracked, medians of 3 interleaved")


def costs(args):
    """Added ns per event of each kind, measured alone on this machine."""
    out = {}
    build = build_dir()
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "bench_launch")
        if shutil.which("nvcc") and subprocess.run(["nvcc", "-O2", "-cudart", "shared", "-o", exe,
                                                    os.path.join(here, "bench_launch.cu")]).returncode == 0:
            p, s = interleaved([exe, "100000"], 5, lambda o: float(o.split()[0]))
            out["launch"] = (statistics.median(s) - statistics.median(p), "bench_launch.cu, shared runtime, batches of 32, "
                             "medians of 5 interleaved")
    copy = os.path.join(build, "tests", "gpu", "bench_cuda_copy")
    if os.access(copy, os.X_OK):
        p, s = interleaved([copy, "4096", "1000"], 5, lambda o: float(o.split()[0]))
        out["copy_async"] = (statistics.median(s) - statistics.median(p), "bench_cuda_copy 4 KiB D2H + sync")
    if "torch" in args.engines:
        torch_costs(out)
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
            # the host's share of a launch, where the real one's noise (hundreds of ns) hides it
            out["launch_sim"] = (statistics.median(s["launch"] for s in shadow)
                                 - statistics.median(p["launch"] for p in plain),
                                 "bench_events on the simulator (host CPU share), medians of 5 interleaved")
            if "launch" not in out:
                out["launch"] = out["launch_sim"]
    for k, (ns, how) in sorted(out.items()):
        print(f"COST {k} {ns:.0f} ns ({how})", flush=True)
    return out


# ------------------------------------------------------------------------------ counts, pairs, prediction

def counts(w, tokens):
    """Events per token under hipshadow (stats=1): the engine's timed window alone where it marks
    one (window_stats: loading, warm-up and exit left out, within one process), else runs of T
    and 2T tokens, differenced."""
    a = w.run(tokens, True, ["stats=1"])
    win = window_stats(a[1]) if a[0] is not None else None
    if win:
        totals, n = win
        print(f"NOTE {w.name}: counts and in-engine costs of the timed window alone ({n} tokens)", flush=True)
        return said_counts(w.name, totals, {k: v / n for k, v in totals.items()}), None
    b = w.run(2 * tokens, True, ["stats=1"])
    if a[0] is None or b[0] is None:
        return None, (a[1] if a[0] is None else b[1])
    sa, sb = parse_stats(a[1]), parse_stats(b[1])
    if not sa or not sb:
        return None, "no 'hipshadow: STATS' line (a hipshadow without stats=1?)"
    return said_counts(w.name, sb, {k: (sb.get(k, 0) - sa.get(k, 0)) / (tokens * w.runs) for k in sb}), None


def said_counts(name, totals, per):
    """Prints the events a token (COUNT) and hipshadow's own time an event (INENGINE, from the
    totals of one run or window); returns the counts, the time kinds left out."""
    for k, v in per.items():
        if v < 0:  # a difference of two runs: their noise outweighed what the extra tokens added
            print(f"NOTE {name}: {k} fell by {-v:.1f} a token from the shorter run to the longer: not counted",
                  flush=True)
        elif v:
            print(f"COUNT {name} {k} {v:.1f}", flush=True)
    for line in in_engine_lines(name, totals, per):
        print(line, flush=True)
    return {k: v for k, v in per.items() if k not in TIME_OF}


def in_engine_lines(name, run, per):
    """hipshadow's own time per event of each kind: the time over the events within one run (run:
    its stats=1 totals; a difference of two runs' times would carry their machines' difference),
    times the events a token (per)."""
    lines = []
    for k, kinds in TIME_OF.items():
        events, per_token = sum(run.get(c, 0) for c in kinds), sum(per.get(c, 0) for c in kinds)
        if run.get(k) and events > 0 and per_token > 0:
            ns = run[k] / events
            lines.append(f"INENGINE {name} {k[:-3]} {ns:.0f} ns an event x {per_token:.1f} a token = "
                         f"{ns * per_token / 1000:.1f} us a token")
    return lines


def round_order(variants, i, side):
    """Round i's runs, in order: None for the plain (or --against) side, then each variant of the
    round; reversed every other round, as a process's place in a round moves its speed (the
    control's A/A pairs showed the last of three runs the fastest in each of three rounds)."""
    runs = [None] + list(variants[: None if i < side else 1])
    return runs if i % 2 == 0 else runs[::-1]


def rounds(variants, n, side, tokens, args):
    """Runs the engine plain and under each variant, n times over (the variants after the first
    only in the first `side` rounds; plain first in one round, last in the next: round_order);
    each variant's ratio is against the plain run of its round.
    Returns {variant name: (plain seconds/token, hipshadow seconds/token)} for the pairs made."""
    got = {w.name: ([], []) for w in variants}
    by_round = []  # (the first side's seconds/token, {variant name: seconds/token}) of each round made
    for i in range(n):
        if left(args) < 30:
            print(f"NOTE {variants[0].name}: budget: {i} of {n} rounds", flush=True)
            break
        # --best-of K: each side runs K times, in turn with the others, and keeps its fastest
        # run: a process that a neighbour on the machine slowed down drops out of the pair
        p, shadow = None, {}
        for _ in range(args.best_of):
            for w in round_order(variants, i, side):
                if w is None:
                    q, err = variants[0].run(tokens, args.against or False)
                    if q is None:
                        print(f"NOTE {variants[0].name}: round {i + 1}: the {base_side(args)} run failed: {err}",
                              flush=True)
                        continue
                    p = q if p is None else min(p, q)
                    continue
                s, err = w.run(tokens, side_of(w, args), ["stats=1"] if args.round_stats else [])
                if s is not None and args.round_stats and not w.control:
                    st = parse_stats(err) or {}
                    print(f"ROUND_STATS {w.name} {i + 1} " + " ".join(f"{k}={v}" for k, v in st.items() if v),
                          flush=True)
                if s is None:
                    print(f"NOTE {w.name}: round {i + 1} failed: {err}", flush=True)
                    continue
                shadow[w.name] = min(shadow.get(w.name, s), s)
        if p is None:
            continue
        by_round.append((p, shadow))
        for w in variants:
            if w.name not in shadow:
                continue
            s = shadow[w.name]
            got[w.name][0].append(p)
            got[w.name][1].append(s)
            print(f"PAIR {w.name} {i + 1} {base_side(args)} {1 / p:.2f} tok/s {side_name(w)} {1 / s:.2f} tok/s "
                  f"ratio {p / s:.3f}", flush=True)
    said_ratios(variants, got, args)
    said_bracketed(variants, bracketed(variants, by_round), args)
    return got


def bracketed(variants, by_round):
    """With a control among the variants, each variant listed before it against the geometric mean
    of its round's two runs of the first side: the plain run and the control's run.  round_order
    puts the variant between the two, reversed every other round, so a drift of the machine over
    the round moves both brackets as it moves the variant: a one-shot engine's control can sit as
    far from 1 as the variant (the place in a round moves a process's speed), and a pair read
    against one plain run alone carries that.  {variant name: [ratios]}; {} without a control."""
    ctl = next((w for w in variants if w.control), None)
    if ctl is None:
        return {}
    got = {w.name: [] for w in variants[: variants.index(ctl)]}
    for p, shadow in by_round:
        c = shadow.get(ctl.name)
        if c is None:
            continue
        for name, ratios in got.items():
            if name in shadow:
                ratios.append(math.sqrt(p * c) / shadow[name])
    return got


def said_bracketed(variants, got, args):
    """BRACKET lines, and their verdict (GOAL, or AB under --against) read from the bracketed
    ratios."""
    for w in variants:
        r = spread(got.get(w.name, []))
        if not r:
            continue
        spread_line("BRACKET", w.name, r, "rounds")
        if args.against:
            print(f"AB {w.name} bracketed: this build against {args.against}: {ab_verdict(r['ci'])}", flush=True)
        else:
            print(f"GOAL {w.name} bracketed median >= {args.goal}: {goal_verdict(r['ci'], args.goal)}", flush=True)


def side_of(w, args):
    """What a variant's side of a pair runs under: this build (True), or, for the control, what
    the pair's first side runs under (plain, or the --against launcher)."""
    return (args.against or False) if w.control else True


def side_name(w):
    """The second side's name in a PAIR line: the control's is the first side run again."""
    return "again" if w.control else "hipshadow"


def base_side(args):
    """What each pair's first side is: the engine plain, or under the --against launcher."""
    return "against" if args.against else "plain"


def ci_text(r):
    return f"ci95 {r['ci'][0]:.3f} {r['ci'][1]:.3f}" if r["ci"] else "ci95 none"


def spread_line(word, name, r, what):
    """A RATIO or FASTEST line: the median, the spread, how many of `what`, the interval."""
    print(f"{word} {name} median {r['median']:.3f} min {r['min']:.3f} q1 {r['q1']:.3f} q3 {r['q3']:.3f} "
          f"max {r['max']:.3f} ({r['n']} {what}) {ci_text(r)}", flush=True)


def said_ratios(variants, got, args, how=""):
    for w in variants:
        r = spread([p / s for p, s in zip(*got[w.name])])
        if r:
            spread_line("RATIO", w.name, r, f"pairs{how}{', against ' + args.against if args.against else ''}")
            if w.control:  # A/A: the machine's noise, no verdict about a build
                print(f"NOISE {w.name} median {r['median']:.3f} q1 {r['q1']:.3f} q3 {r['q3']:.3f} ({r['n']} pairs) "
                      f"{ci_text(r)}", flush=True)
            elif args.against:  # this build's speed over the other's: the goal is about plain
                print(f"AB {w.name} this build against {args.against}: {ab_verdict(r['ci'])}", flush=True)
            else:
                print(f"GOAL {w.name} median >= {args.goal}: {goal_verdict(r['ci'], args.goal)}", flush=True)


def placement(i, cpu_sets):
    """Pair i of --together: (plain's GPU and CPUs, hipshadow's), swapped from one pair to the
    next, so that neither side keeps the faster GPU or the quieter cores."""
    a, b = (0, cpu_sets[0]), (1, cpu_sets[1])
    return (a, b) if i % 2 == 0 else (b, a)


def together_rounds(variants, n, side, tokens, args):
    """As rounds(), but each pair's plain and hipshadow runs go at the same time, one on each of
    two GPUs, each pinned to its own CPUs: what the machine does to one side meanwhile (a
    neighbour's load, its clocks) it does to the other.  --best-of K: K such runs, each side's
    fastest kept."""
    got = {w.name: ([], []) for w in variants}
    cpu_sets = (os.environ.get("BENCH_CPUS", "2-5"), os.environ.get("BENCH_CPUS_OTHER", "10-13"))
    pair = 0
    for i in range(n):
        for w in variants[: None if i < side else 1]:
            if left(args) < 40:
                print(f"NOTE {w.name}: budget: {i} of {n} rounds", flush=True)
                said_ratios(variants, got, args, ", together")
                return got
            (pg, pc), (sg, sc) = placement(pair, cpu_sets)
            pair += 1
            p = s = None
            for _ in range(args.best_of):
                procs = (w.start(tokens, args.against or False, pg, pc), w.start(tokens, side_of(w, args), sg, sc))
                (q, qerr), (t, terr) = (w.finish(x, max(min(left(args), 300), 5)) for x in procs)
                if q is None or t is None:
                    print(f"NOTE {w.name}: round {i + 1}: {base_side(args) if q is None else 'hipshadow'} failed: "
                          f"{qerr if q is None else terr}", flush=True)
                    continue
                p, s = min(p or q, q), min(s or t, t)
            if p is None or s is None:
                continue
            got[w.name][0].append(p)
            got[w.name][1].append(s)
            print(f"PAIR {w.name} {i + 1} {base_side(args)} {1 / p:.2f} tok/s {side_name(w)} {1 / s:.2f} tok/s "
                  f"ratio {p / s:.3f} (together: {base_side(args)} on GPU {pg}, {side_name(w)} on GPU {sg})",
                  flush=True)
    said_ratios(variants, got, args, ", together")
    return got


class Served:
    """A workload's process that stays alive and times one run for each request (its serve_cmd):
    --lockstep's sides.  preload: False plain, True this build, a path that launcher."""

    def __init__(self, w, tokens, preload):
        import run_gpu
        cmd = w.serve_cmd(tokens)
        env = dict(os.environ)
        env.pop("HIPSHADOW_OPTIONS", None)
        self.err = tempfile.TemporaryFile(mode="w+")
        under = preload if isinstance(preload, str) else None
        self.proc = subprocess.Popen(run_gpu.preloaded(cmd, w.options, under=under) if preload else cmd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, text=True,
                                     env=env, start_new_session=True)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def settle(self, cpus):
        """Moves every thread of the process's group (the launcher execs or forks the engine) to
        `cpus`, a set of CPU numbers; False where none could be moved."""
        moved = False
        for pid in (d for d in os.listdir("/proc") if d.isdigit()):
            try:
                with open(f"/proc/{pid}/stat") as f:
                    pgrp = int(f.read().rsplit(")", 1)[1].split()[2])
                if pgrp != self.proc.pid:
                    continue
                for tid in os.listdir(f"/proc/{pid}/task"):
                    os.sched_setaffinity(int(tid), cpus)
                    moved = True
            except (OSError, ValueError, IndexError):
                continue  # gone meanwhile, or not ours to move
        return moved

    def expect(self, word, timeout):
        """The words after `word` on the next line that starts with it, or (None, why)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                return None, f"no {word} line within {timeout:.0f} s"
            if line is None:
                self.err.seek(0)
                return None, f"exit {self.proc.wait()}: " + " | ".join(self.err.read().strip().splitlines()[-3:])
            if line.split()[:1] == [word]:
                return line.split()[1:], ""

    def step(self, timeout):
        """One timed run: (seconds a token, None) or (None, why)."""
        try:
            self.proc.stdin.write("go\n")
            self.proc.stdin.flush()
        except OSError as e:
            return None, f"its input closed: {e}"
        got, why = self.expect("RUN_TOKENS_PER_S", timeout)
        return (1.0 / float(got[0]), None) if got else (None, why)

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        self.err.close()


def cpu_list(text):
    """'2-5,9' -> {2, 3, 4, 5, 9}."""
    cpus = set()
    for part in text.split(","):
        a, _, b = part.partition("-")
        cpus.update(range(int(a), int(b or a) + 1))
    return cpus


def turn_cpus():
    """--lockstep's CPUs once its processes are ready: BENCH_CPU_TURNS, else BENCH_CPUS's first."""
    return cpu_list(os.environ.get("BENCH_CPU_TURNS") or str(min(cpu_list(os.environ.get("BENCH_CPUS", "2-5")))))


def lockstep_rounds(variants, n, side, tokens, args, served=Served):
    """As rounds(), but a round's sides are processes alive at once (Served): each of --lockstep
    turns has every side time one run, in turn, plain first in one turn and last in the next
    (round_order), the others idle meanwhile; a turn makes a pair of each variant with its plain
    run seconds before or after.  n rounds of fresh processes, so what differs from one process
    to the next (where its memory lies) is sampled too."""
    got = {w.name: ([], []) for w in variants}
    fastest = {w.name: [] for w in variants}
    for i in range(n):
        if left(args) < 60:
            print(f"NOTE {variants[0].name}: budget: {i} of {n} rounds", flush=True)
            break
        ws = variants[: None if i < side else 1]
        # started in the round's order too, plain first in one round and last in the next: the
        # A/A control, started last, ran faster than the plain process in most rounds.  (ws is
        # already this round's variants: round_order's side limit, i + 1, keeps every one.)
        sides = {w and w.name: served(w or variants[0], tokens, side_of(w, args) if w else args.against or False)
                 for w in round_order(ws, i, i + 1)}
        failed = [why for why in (s.expect("READY", max(min(left(args), 300), 5))[1] for s in sides.values()) if why]
        if failed:
            print(f"NOTE {variants[0].name}: round {i + 1}: a side did not start: {failed[0]}", flush=True)
        elif not all([s.settle(turn_cpus()) for s in sides.values()]):
            print(f"NOTE {variants[0].name}: round {i + 1}: a side could not be moved to CPUs {sorted(turn_cpus())}",
                  flush=True)
        turns = {w.name: ([], []) for w in ws}  # the round's (plain, variant) seconds a token, turn by turn
        for j in range(args.lockstep if not failed else 0):
            if left(args) < 20:
                print(f"NOTE {variants[0].name}: budget: round {i + 1} ended after {j} turns", flush=True)
                break
            took = {}
            for w in round_order(ws, j, j + 1):
                took[w and w.name], why = sides[w and w.name].step(max(min(left(args), 120), 5))
                if why:
                    print(f"NOTE {w.name if w else variants[0].name}: round {i + 1} turn {j + 1}: "
                          f"{'hipshadow' if w else base_side(args)} failed: {why}", flush=True)
            p = took.get(None)
            for w in ws:
                s = took.get(w.name)
                if p is None or s is None:
                    continue
                got[w.name][0].append(p)
                got[w.name][1].append(s)
                turns[w.name][0].append(p)
                turns[w.name][1].append(s)
                print(f"PAIR {w.name} {i + 1}.{j + 1} {base_side(args)} {1 / p:.2f} tok/s {side_name(w)} "
                      f"{1 / s:.2f} tok/s ratio {p / s:.3f}", flush=True)
        for s in sides.values():
            s.close()
        for name, (plain, variant) in turns.items():
            if plain:
                r = [p / s for p, s in zip(plain, variant)]
                best = min(plain) / min(variant)
                fastest[name].append(best)
                print(f"LOCKSTEP {name} round {i + 1} median {statistics.median(r):.3f} fastest {best:.3f} "
                      f"({len(r)} turns)", flush=True)
    said_ratios(variants, got, args, f", lockstep: {args.lockstep} turns a round")
    said_fastest(variants, fastest, args)
    return got


def said_fastest(variants, fastest, args):
    """FASTEST: each round's ratio of the two sides' fastest turns, over the rounds: a process is
    then judged by its best run, as a best-of-K run is, and each round of fresh processes is one
    pair, so the interval does not lean on the turns of one round being independent."""
    for w in variants:
        r = spread(fastest[w.name])
        if not r:
            continue
        spread_line("FASTEST", w.name, r, "rounds")
        if not w.control and not args.against:
            print(f"GOAL {w.name} fastest median >= {args.goal}: {goal_verdict(r['ci'], args.goal)}", flush=True)


def build_dir():
    return os.path.dirname(os.path.dirname(os.path.abspath(os.environ.get(
        "HS_LAUNCHER", os.path.join(root, "build", "tools", "hipshadow")))))


def sample(w, tokens, runs, tmp, top):
    """The engine sampled plain and under hipshadow, in turn, runs times; report.py's lines, or
    None when a run failed or the sampler is not built."""
    sampler = os.path.join(build_dir(), "tools", "sampler", "libhipshadow-sampler.so")
    if not os.path.exists(sampler):
        print(f"NOTE {w.name}: no profile: {sampler} is not built", flush=True)
        return None
    os.makedirs(tmp, exist_ok=True)
    for _ in range(runs):
        for side, preload in (("plain", False), ("hipshadow", True)):
            env = {"LD_PRELOAD": sampler, "HS_SAMPLER_OUT": os.path.join(tmp, side)}
            if w.sample_whole:
                env["HS_SAMPLER_ALL"] = "1"
            s, why = w.run(tokens, preload, env_extra=env)
            if s is None:
                print(f"NOTE {w.name}: profile run ({side}) failed: {why}", flush=True)
                return None
    files = [os.path.join(tmp, f) for f in sorted(os.listdir(tmp))]
    keep = os.environ.get("BENCH_KEEP_SAMPLES")
    if keep:  # the raw samples, for a reading by instruction (addr2line against the same build)
        dest = os.path.join(keep, w.name.replace("/", "_"), os.path.basename(tmp))
        os.makedirs(dest, exist_ok=True)
        for f in files:
            shutil.copy(f, dest)
    r = subprocess.run([sys.executable, os.path.join(root, "tools", "sampler", "report.py"), "--focus",
                        "libhipshadow,libc.so", "--top", str(top)] + files, capture_output=True, text=True,
                       timeout=300)
    if r.returncode:
        print(f"NOTE {w.name}: report.py: {r.stderr.strip()[-300:]}", flush=True)
    return r.stdout.splitlines()


def parse_report(lines):
    """report.py's lines by side: samples, wall ns, and the count of each module and function."""
    sides = {}
    for line in lines:
        f = line.split(" ")
        if len(f) < 5 or f[0] not in ("SAMPLES", "MODULE", "FUNCTION"):
            continue
        side = sides.setdefault(f[1], {"n": 0, "wall_ns": 0.0, "items": collections.Counter()})
        if f[0] == "SAMPLES":
            side["n"] = int(f[2])
            for kv in f[5:]:
                if kv.startswith("wall_ns=") and kv[8:] != "n/a":
                    side["wall_ns"] = float(kv[8:])
        else:
            side["items"][" ".join([f[0]] + f[4:])] += int(f[3])
    return sides


def per_token_lines(name, long, short, tokens):
    """PERTOKEN lines: each module's and function's microseconds a token, plain and under
    hipshadow, from the samples of `long` less those of `short` (None: `long` alone), over
    `tokens` tokens a side; a sample is worth its side's wall time over its samples."""
    out = []
    us = {}
    for side in ("plain", "hipshadow"):
        lo, sh = long.get(side), (short or {}).get(side)
        if not lo or not lo["n"] or not lo["wall_ns"]:
            return [f"NOTE {name}: no per-token profile: the {side} side has no samples"]
        period = lo["wall_ns"] / lo["n"] / 1000.0
        counts = collections.Counter(lo["items"])
        wall = lo["wall_ns"]
        if sh:
            counts.subtract(sh["items"])
            wall -= sh["wall_ns"]
        us[side] = ({k: c * period / tokens for k, c in counts.items()}, wall / 1000.0 / tokens)
    out.append(f"PERTOKEN {name} TOTAL plain {us['plain'][1]:.1f} us hipshadow {us['hipshadow'][1]:.1f} us "
               f"added {us['hipshadow'][1] - us['plain'][1]:+.1f} us")
    keys = set(us["plain"][0]) | set(us["hipshadow"][0])
    rows = sorted(((us["hipshadow"][0].get(k, 0.0) - us["plain"][0].get(k, 0.0), k) for k in keys), reverse=True)
    # hipshadow's own code, and what grew elsewhere: the program's code slowed beside it, or more
    # of it (a hook's own work, as PyTorch's allocator building a trace entry a block event)
    own = sum(a for a, k in rows if k.startswith("MODULE libhipshadow"))
    added = us["hipshadow"][1] - us["plain"][1]
    out.append(f"PERTOKEN {name} SPLIT own {own:+.1f} us elsewhere {added - own:+.1f} us")
    for kind, top in (("MODULE", 12), ("FUNCTION", 25)):
        for added, k in [r for r in rows if r[1].startswith(kind + " ")][:top]:
            out.append(f"PERTOKEN {name} {kind} added {added:+.1f} us plain {us['plain'][0].get(k, 0.0):.1f} "
                       f"hipshadow {us['hipshadow'][0].get(k, 0.0):.1f} {k[len(kind) + 1:]}")
    return out


def profile(w, tokens, runs):
    """Where a token's time goes: the engine sampled plain and under hipshadow.  PROFILE lines
    are report.py's shares; PERTOKEN lines are microseconds a token by module and function.  A
    workload sampled whole (ggml: model loading is in the run) is sampled at `tokens` and at 4x
    as many, and the difference taken, so loading drops out; one that marks its timed part
    (PyTorch's generates) is sampled over that part alone."""
    with tempfile.TemporaryDirectory() as tmp:
        long_tokens = tokens * 4 if w.sample_whole else tokens
        long = sample(w, long_tokens, runs, os.path.join(tmp, "long"), 200)
        if long is None:
            return
        listed = collections.Counter()
        for line in long:  # each side's 25 functions ahead
            f = line.split(" ")
            if f[0] == "FUNCTION" and len(f) > 1:
                listed[f[1]] += 1
                if listed[f[1]] > 25:
                    continue
            print(f"PROFILE {w.name} {line}", flush=True)
        short = None
        if w.sample_whole:
            lines = sample(w, tokens, runs, os.path.join(tmp, "short"), 200)
            if lines is None:
                return
            short = parse_report(lines)
        sampled_tokens = runs * (long_tokens - tokens if w.sample_whole else w.tokens_sampled(tokens))
        for line in per_token_lines(w.name, parse_report(long), short, sampled_tokens):
            print(line, flush=True)


def predict(w, per, cost, plain_s, shadow_s):
    """Counts x per-event costs beside the added time the pairs measured.  The measured figure is
    taken from the median pairwise ratio, as the RATIO line is, not from the difference of the two
    sides' medians: unpaired medians of a drifting machine can disagree with every pair."""
    base = statistics.median(plain_s) * 1e6
    ratio = statistics.median(p / s for p, s in zip(plain_s, shadow_s))
    measured = base * (1 / ratio - 1)
    said = f"measured {measured:.1f} us/token over {base:.1f} plain, the median pair's ratio {ratio:.3f}"
    if not cost:
        print(f"PREDICT {w.name} none ({said}): no per-event costs measured in this run (--steps costs)", flush=True)
        return
    parts, unknown = [], []
    total = 0.0
    for kind, n in sorted(per.items()):
        c = w.cost_for(kind, cost)
        if not n:
            continue
        if c in cost:
            us = n * cost[c][0] / 1000
            total += us
            parts.append(f"{kind} {us:.1f}")
        else:
            unknown.append(f"{kind} x{n:.1f}")
    print(f"PREDICT {w.name} added {total:.1f} us/token ({said}; predicted ratio {base / (base + total):.3f}): "
          + ", ".join(parts) + (f"; not costed alone: {', '.join(unknown)}" if unknown else ""), flush=True)


def is_options(variant):
    """A variant named by its hipshadow options: NAME=VALUE, joined by ':'."""
    return all(re.fullmatch(r"[a-z_]+=[^:,\s]+", o) for o in variant.split(":"))


def options_of(variant):
    """The options a variant runs with: none for the defaults ('blocks', 'default') and the control."""
    return variant.split(":") if is_options(variant) else []


def control(w, variant):
    """w, the A/A control when variant is 'control'."""
    w.control = variant == "control"
    return w


def plan(args):
    side = min(args.side_pairs, args.pairs)
    steps = [("costs", 60, "costs")]
    if "ggml" in args.engines:
        steps += [("ggml build (GGML_REUSE=1: none)", 0, None), ("ggml counts", 10 * len(args.ggml_variants), "counts"),
                  (f"ggml profile ({args.profile_runs} runs a side, T and 4T tokens)", args.profile_runs * 2 * 8, "profile"),
                  (f"ggml {args.pairs} rounds ({', '.join(args.ggml_variants[1:]) or 'no side variants'} in {side})",
                   (args.pairs * 2 + side * (len(args.ggml_variants) - 1)) * 3 * args.best_of, "rounds")]
    if "torch" in args.engines:
        steps += [("torch event costs (torch_event_cost.py)", 60, "costs"), ("torch counts (3 variants)", 75, "counts"),
                  (f"torch profile ({args.profile_runs} runs a side)", args.profile_runs * 2 * 20, "profile"),
                  (f"torch {args.pairs} rounds (plain, {args.torch_variants[0]}; "
                   f"{', '.join(args.torch_variants[1:]) or 'no side variants'} in {side})",
                   (args.pairs * 2 * 10 + side * (len(args.torch_variants) - 1) * 10) * args.best_of, "rounds")]
    if args.lockstep and "torch" in args.engines:  # a round: its processes start at once, then its turns
        n = len(args.torch_variants) + 1
        steps[-1] = (f"torch {args.pairs} lockstep rounds of {args.lockstep} turns ({n} processes; "
                     f"{', '.join(args.torch_variants[1:]) or 'no side variants'} in {side})",
                     args.pairs * (30 + args.lockstep * 2) + side * args.lockstep * (n - 2), "rounds")
    # --together: a pair's two runs take the time of one
    return [(name, s // 2 if args.together and step == "rounds" else s) for name, s, step in steps
            if step is None or step in args.steps]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--engines", default="torch,ggml", help="which of torch,ggml")
    ap.add_argument("--pairs", type=int, default=9, help="plain/hipshadow pairs for each engine's default")
    ap.add_argument("--goal", type=float, default=0.97,
                    help="the median pairwise ratio the pairs are to show (GOAL lines: shown when the "
                         "median's 95%% confidence interval lies at or above it)")
    ap.add_argument("--best-of", type=int, default=1,
                    help="runs of each side in a round, in turn, the fastest kept (a ggml run is one process)")
    ap.add_argument("--side-pairs", type=int, default=9, help="rounds that also run the side variants (torch_blocks=0 and redzones=64; ggml's after "
                         "its first)")
    ap.add_argument("--tokens", type=int, default=128, help="tokens generated per run")
    ap.add_argument("--budget", type=float, default=480, help="seconds for everything (default 480)")
    ap.add_argument("--steps", default="costs,counts,rounds",
                    help="which of costs,counts,profile,rounds (default costs,counts,rounds; a prediction needs "
                         "those three)")
    ap.add_argument("--profile-runs", type=int, default=2, help="sampled runs a side in the profile step")
    ap.add_argument("--torch-variants", default="blocks,torch_blocks=0,redzones=64",
                    help="PyTorch's variants under hipshadow, comma-separated: 'blocks' (no options: blocks tracked, "
                         "the default), 'control' (not first) or hipshadow options NAME=VALUE joined by ':'")
    ap.add_argument("--ggml-variants", default="default",
                    help="ggml's variants under hipshadow, comma-separated: 'default' (no options), 'control' (not "
                         "first) or hipshadow options joined by ':' (races=0, ledger_size=256:stack_depth=0); the first "
                         "is the default's, the "
                         "others join the first --side-pairs rounds")
    ap.add_argument("--round-stats", action="store_true",
                    help="run each round's hipshadow side with stats=1 and print its counts (ROUND_STATS): what a "
                         "slow round did more of")
    ap.add_argument("--together", action="store_true",
                    help="run each pair's two sides at the same time on two GPUs (GPU and CPUs swapped from one pair "
                         "to the next; BENCH_CPUS and BENCH_CPUS_OTHER): the machine's drift moves both alike")
    ap.add_argument("--lockstep", type=int, metavar="K", default=0,
                    help="PyTorch's rounds keep a plain process and one for each variant alive at once, on the one "
                         "GPU, and ask each in turn for a timed generate K times (a pair a turn: the sides seconds "
                         "apart); ggml, whose run is one process, keeps its rounds")
    ap.add_argument("--against", metavar="LAUNCHER",
                    help="an A/B of two builds: each pair's first side runs under this other hipshadow launcher (an "
                         "older build's tools/hipshadow, or one given --lib of an older library) instead of plain, "
                         "with the same options; the ratio is then this build's speed over that one's (AB lines)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and exit (no GPU needed)")
    args = ap.parse_args()
    if args.lockstep < 0 or (args.lockstep and args.together):
        ap.error(f"--lockstep: a count of turns, not with --together (got {args.lockstep})")
    if args.against and not os.access(args.against, os.X_OK):
        ap.error(f"--against: {args.against} is not an executable launcher")
    args.engines = [e for e in args.engines.split(",") if e]
    args.steps = [e for e in args.steps.split(",") if e]
    for flag, default in (("torch", "blocks"), ("ggml", "default")):
        variants = [v for v in getattr(args, flag + "_variants").split(",") if v]
        setattr(args, flag + "_variants", variants)
        bad = [v for v in variants if v not in (default, "control") and not is_options(v)]
        if bad or not variants or variants[0] == "control":
            ap.error(f"--{flag}-variants: '{default}', 'control' (not first) or NAME=VALUE options joined by ':' "
                     f"(got {bad or variants or 'nothing'})")
    if set(args.steps) - {"costs", "counts", "profile", "rounds"}:
        ap.error(f"unknown steps {sorted(set(args.steps) - {'costs', 'counts', 'profile', 'rounds'})}")
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
    if args.together and "rounds" in args.steps:
        gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.count("GPU ")
        if gpus < 2:
            print(f"NOTE --together needs two GPUs, this machine has {gpus}: the pairs run one side after the other")
            args.together = False
    sys.path.insert(0, here)
    cost = costs(args) if "costs" in args.steps else {}
    work = []
    if "ggml" in args.engines:  # first: its runs take seconds, the torch ones tens
        say("ggml: build (real_engines.py) and model")
        got = ggml_setup(args)
        if got:
            work.append([control(GgmlGPT2("ggml/gpt-2-backend" + ("" if v == "default" else "/" + v),
                                          options_of(v), *got), v)
                         for v in args.ggml_variants])
        else:
            print("NOTE ggml: no build (see real_engines.py's logs)")
    if "torch" in args.engines:
        import run_gpu
        plugin = os.path.join(os.path.dirname(os.path.abspath(run_gpu.launcher)), "..", "src", "libhipshadow-torch.so")
        if not os.path.exists(plugin) and not run_gpu.build_plugin():
            print("NOTE torch: libhipshadow-torch.so could not be built: block tracking is off in these runs")
        work.append([control(TorchGPT2("torch/" + v, options_of(v)), v) for v in args.torch_variants])
    for variants in work:
        if left(args) < 40:
            print(f"NOTE {variants[0].name}: not run (budget)")
            continue
        per = {}
        for w in [w for w in variants if not w.control] if "counts" in args.steps else ():
            say(f"== {w.name}: counts")
            per[w.name], why = counts(w, args.tokens)
            if per[w.name] is None:
                print(f"NOTE {w.name}: no counts: {why}")
        if "profile" in args.steps:
            say(f"== {variants[0].name}: profile")
            profile(variants[0], args.tokens, args.profile_runs)
        if "rounds" not in args.steps:
            continue
        say(f"== {', '.join(w.name for w in variants)}: rounds")
        how = together_rounds if args.together else rounds
        if args.lockstep and hasattr(variants[0], "serve_cmd"):
            how = lockstep_rounds
        elif args.lockstep:
            print(f"NOTE {variants[0].name}: a run is one process: its rounds are not in lockstep")
        got = how(variants, args.pairs, args.side_pairs, args.tokens, args)
        for w in variants:
            if per.get(w.name) is not None and got[w.name][0] and not args.against and not w.control:  # vs plain
                predict(w, per[w.name], cost, *got[w.name])
    say("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
