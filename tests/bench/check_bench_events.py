#!/usr/bin/env python3
"""CI for the CPU-side benchmarks (no timing is checked): bench_events runs under hipshadow on the
simulator and prints its five figures, and hipshadow's stats=1 line counts the events it made;
bench_streams runs on four streams with race tracking and initcheck on, prints its figures and
gives no finding, no allocation's access history fills (the same buffers used round after round
keep one access per stream) and its stacks are walked a few times, not at every call; bench_events'
paths (allocations through one helper from four paths that differ only further out) walks a few
times too (the stack cache keeps such stacks side by side); its arena (launches into one pool
allocation on a non-blocking stream) runs clean; tests/gpu/bench_engines.py compiles,
answers --help and plans with --dry-run (--against another launcher too), says an A/B of two builds
faster, slower or no different by the interval, says a control's A/A pairs as the machine's noise
(NOISE, no verdict; a control first is refused), runs --lockstep's turns in order (each turn's
pairs its own; a round's processes started in the round's order, moved to one CPU when ready and
ended with their round) and speaks torch_gpt2.py --serve's protocol with a real process, and its
per-token profile subtracts one sampled length from another as it should.
Usage: check_bench_events.py LAUNCHER BENCH_EVENTS SIMHIP_DIR BENCH_ENGINES_PY BENCH_STREAMS"""
import os
import re
import subprocess
import sys

launcher, bench, simhip, engines, streams = sys.argv[1:6]
env = dict(os.environ, SIMHIP_NULL="1", LD_LIBRARY_PATH=simhip)
env.pop("HIPSHADOW_OPTIONS", None)
calls = 2000
p = subprocess.run([launcher, "--option", "stats=1", "--", bench, "100", str(calls)], capture_output=True, text=True,
                   env=env, timeout=300)
problems = []
if p.returncode == 77:
    print("SKIP: no simulated kernels (no AMD code object was built)")
    sys.exit(77)
figures = dict(zip(p.stdout.split()[0::2], p.stdout.split()[1::2]))
if p.returncode != 0 or set(figures) != {"launch", "copy", "alloc", "free", "sync"}:
    problems.append(f"bench_events: exit {p.returncode}, output {p.stdout!r}")
m = re.search(r"^hipshadow: STATS (.*)$", p.stderr, re.M)
stats = {k: int(v) for k, v in (w.split("=") for w in m.group(1).split())} if m else {}
want = {"launch": calls, "alloc": calls, "free": calls, "sync": calls}
for k, n in want.items():
    if stats.get(k, 0) < n:
        problems.append(f"STATS {k}={stats.get(k)}: fewer than the {n} the benchmark made")
if stats.get("copy", 0) + stats.get("copy_fast", 0) < calls:
    problems.append(f"STATS copy+copy_fast={stats.get('copy', 0) + stats.get('copy_fast', 0)} < {calls}")
if "findings" in p.stderr and " 0 findings" not in p.stderr:
    problems.append("findings in a clean benchmark: " + p.stderr[-800:])
p = subprocess.run([launcher, "--option", "races=1", "--option", "initcheck=1", "--option", "stats=1", "--", streams,
                    "4", "300"],
                   capture_output=True, text=True, env=env, timeout=300)
if p.returncode != 0 or not re.fullmatch(r"streams 4 round [0-9.]+ op [0-9.]+\n", p.stdout):
    problems.append(f"bench_streams: exit {p.returncode}, output {p.stdout!r}")
if "SUMMARY: hipshadow: 0 findings" not in p.stderr or "access_history" in p.stderr:
    problems.append("bench_streams: a finding, or an access history filled: " + p.stderr[-800:])
# Its stacks come from a few call sites of one function: each walked once, then found in the
# per-thread cache by its call site (1,200 copies and launches, a few walks).  Under TSan every
# stack is walked (src/core/process/stacks.c): the count is only required to be there.
m = re.search(r"^hipshadow: STATS .*\bstack_walk=(\d+)", p.stderr, re.M)
if not m or (int(m.group(1)) > 50 and "TSAN_OPTIONS" not in os.environ):
    problems.append(f"bench_streams: stack walks {m.group(1) if m else None} (want a few: the stack cache missed)")
# An engine's graph over one pool arena on a non-blocking stream (race tracking on): every launch
# touches the one allocation, at interior pointers, and is followed by an async copy of its output
# into another part of the arena on the same stream (d2d); it runs, and nothing is found in it.
# 20,000 rounds: the first calls' one-off costs (the first launch's lookups, the tables' first
# pages) then stay a small part of hipshadow's own time, which is compared with the run's below.
ARENA_CALLS = 20000
p = subprocess.run([launcher, "--option", "stats=1", "--", bench, "10", str(ARENA_CALLS), "arena,d2d"],
                   capture_output=True,
                   text=True, env=dict(env, BENCH_NONBLOCKING="1"), timeout=300)
if p.returncode != 0 or not re.match(r"arena [0-9.]+ ", p.stdout):
    problems.append(f"bench_events arena: exit {p.returncode}, output {p.stdout!r}")
elif "SUMMARY: hipshadow: 0 findings" not in p.stderr:
    problems.append("bench_events arena: a finding in a clean benchmark: " + p.stderr[-800:])
else:
    # a clean launch of a kernel seen before takes the fast path (fast_launch.c): all but the first
    m = re.search(r"^hipshadow: STATS .*\blaunch=(\d+) launch_fast=(\d+)", p.stderr, re.M)
    if not m or int(m.group(1)) < ARENA_CALLS or int(m.group(2)) < int(m.group(1)) - 8:
        problems.append(f"bench_events arena: launches {m.groups() if m else None} (want all but the first on the "
                        "fast path)")
    # each round's async copy counted once; it takes the fast path (fast_copy.c) but after each
    # round of inputs on the other stream, whose accesses the full path takes first
    m = re.search(r"^hipshadow: STATS .*\bcopy=(\d+) .*\bcopy_async_fast=(\d+)", p.stderr, re.M)
    if not m or int(m.group(1)) + int(m.group(2)) < ARENA_CALLS or int(m.group(2)) < ARENA_CALLS * 0.9:
        problems.append(f"bench_events arena,d2d: copies {m.groups() if m else None} (want one async copy a round, "
                        "nine in ten or more on the fast path)")
    # hipshadow's own time in them, the runtime's calls left out: there, and below the whole run's
    m = re.search(r"^hipshadow: STATS .*\blaunch_ns=(\d+) copy_ns=(\d+) block_ns=(\d+) other_ns=(\d+)", p.stderr,
                  re.M)
    if not m or not int(m.group(1)) or not int(m.group(2)) or int(m.group(3)) or \
            int(m.group(1)) + int(m.group(2)) > float(p.stdout.split()[1]) * (ARENA_CALLS + 1000) * 1.5:
        problems.append(f"bench_events arena,d2d: own time {m.groups() if m else None} (want launch_ns and copy_ns "
                        f"above 0, block_ns 0, and their sum within 1.5 x the run's {p.stdout.split()[1]} ns x "
                        f"{ARENA_CALLS + 1000} launches)")
# Copies run twice, once with the simulator moving the bytes and once not (SIMHIP_NULL): the
# runtime's call takes longer in the first, and copy_ns, hipshadow's share only, must not grow
# with it; on the full path (16 MiB) and on the fast path (64 KiB).
for kind, calls, counted in (("big", 20, "copy"), ("mid", 400, "copy_fast")):
    got = []
    for moving in (True, False):
        p = subprocess.run([launcher, "--option", "stats=1", "--", bench, "10", str(calls), kind], capture_output=True,
                           text=True, env={k: v for k, v in env.items() if k != "SIMHIP_NULL" or not moving},
                           timeout=300)
        m = re.search(rf"^hipshadow: STATS .*\b{counted}=(\d+)\b.*\bcopy_ns=(\d+)", p.stderr, re.M)
        if p.returncode != 0 or not p.stdout.startswith(kind + " ") or not m or int(m.group(1)) < calls:
            problems.append(f"bench_events {kind}: exit {p.returncode}, output {p.stdout!r}: {p.stderr[-500:]}")
            break
        got.append((float(p.stdout.split()[1]), int(m.group(2)) / calls))
    # (a busy machine moves both by tens of percent, and can make the run that moves nothing the slower)
    if len(got) == 2 and got[0][1] - got[1][1] > max(0.0, got[0][0] - got[1][0]) / 2 + got[1][1] / 4:
        problems.append(f"bench_events {kind}: a call and hipshadow's share of it, moving the bytes and not: {got} "
                        "(the share grew with the runtime's time: its call was not left out)")
# Copies into one heap buffer while 256 KiB is mapped and unmapped before each: the buffer's
# mapping stays trusted (the changes were elsewhere), so the maps are read a few times, not once
# a millisecond.
p = subprocess.run([launcher, "--option", "stats=1", "--", bench, "10", "2000", "maps"], capture_output=True,
                   text=True, env=env, timeout=300)
m = re.search(r"^hipshadow: STATS .*\bmaps_change=(\d+) maps_read=(\d+)", p.stderr, re.M)
if p.returncode != 0 or not p.stdout.startswith("maps ") or "SUMMARY: hipshadow: 0 findings" not in p.stderr:
    problems.append(f"bench_events maps: exit {p.returncode}, output {p.stdout!r}: {p.stderr[-500:]}")
elif not m or int(m.group(1)) < 2000 or int(m.group(2)) > 5:
    problems.append(f"bench_events maps: mapping changes and reads {m.groups() if m else None} (want 2,000 changes "
                    "seen and a few reads: a change elsewhere made the copies' buffer untrusted)")
# Four paths into one helper share the cache's place (the same entry slot and return address):
# kept side by side, 2,000 alternating allocations and frees walk a few times, not 4,000.
p = subprocess.run([launcher, "--option", "stats=1", "--", bench, "10", "2000", "paths"], capture_output=True,
                   text=True, env=env, timeout=300)
m = re.search(r"^hipshadow: STATS .*\bstack_walk=(\d+)", p.stderr, re.M)
if p.returncode != 0 or not p.stdout.startswith("paths "):
    problems.append(f"bench_events paths: exit {p.returncode}, output {p.stdout!r}")
elif not m or (int(m.group(1)) > 50 and "TSAN_OPTIONS" not in os.environ):
    problems.append(f"bench_events paths: stack walks {m.group(1) if m else None} (want a few: paths that share an "
                    "entry evicted each other from the stack cache)")
for extra in (["--help"], ["--dry-run"], ["--dry-run", "--together", "--against", launcher],
              ["--dry-run", "--torch-variants", "blocks,control", "--ggml-variants", "default,control"],
              ["--dry-run", "--lockstep", "10", "--torch-variants", "blocks,torch_blocks=0,control"],
              ["--dry-run", "--torch-variants", "blocks,huge_code=0:races=0"]):
    r = subprocess.run([sys.executable, engines] + extra, capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or ("--dry-run" in extra and "PLAN total" not in r.stdout):
        problems.append(f"bench_engines.py {' '.join(extra)}: exit {r.returncode}: {(r.stderr or r.stdout)[-500:]}")
# the control is a side variant: a first variant that measures nothing of the build is refused
# (and a variant that is neither the default, the control nor options)
for bad, said in ((["--torch-variants", "control,blocks"], "control"), (["--ggml-variants", "control"], "control"),
                  (["--torch-variants", "blocks,bogus"], "'bogus'")):
    r = subprocess.run([sys.executable, engines, "--dry-run"] + bad, capture_output=True, text=True, timeout=60)
    if r.returncode != 2 or said not in r.stderr:
        problems.append(f"bench_engines.py {' '.join(bad)}: want a usage error, got exit {r.returncode}: {r.stderr[-300:]}")
# The per-token profile: microseconds a token from two sampled lengths, loading subtracted.
sys.path.insert(0, os.path.dirname(os.path.abspath(engines)))
import bench_engines  # noqa: E402
# --against: a pair's ratio is this build's speed over the other's; its verdict an AB line, no GOAL.
import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
for speeds, want in ((1.05, "faster"), (0.95, "slower"), (1.0, "no difference shown")):
    w = argparse.Namespace(name="e", control=False)
    base = [1.0 + 0.01 * (i % 3) for i in range(9)]
    mine = [b / speeds for b in base]  # seconds a token: speed `speeds` times the other's
    if speeds == 1.0:
        mine = [b * (1.02 if i % 2 else 0.98) for i, b in enumerate(base)]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench_engines.said_ratios([w], {"e": (base, mine)}, argparse.Namespace(against="old/hipshadow", goal=0.97))
    if f"AB e this build against old/hipshadow: {want}" not in out.getvalue() or "GOAL" in out.getvalue():
        problems.append(f"bench_engines.py --against, speed x{speeds}: want '{want}', got {out.getvalue()!r}")
# PREDICT: counts x costs beside the added time the median pair stands for (its ratio 0.8 against
# a 2 ms plain token: 500 us; the two sides' unpaired medians would say 600), and no prediction at
# all when the run measured no costs.
plain, shadow = [0.001, 0.002, 0.003], [0.0026, 0.0025, 0.0031]
for cost, want in (({"launch": (500.0,)}, "PREDICT w added 100.0 us/token (measured 500.0 us/token over 2000.0 plain, "
                    "the median pair's ratio 0.800; predicted ratio 0.952): launch 100.0"),
                   ({}, "PREDICT w none (measured 500.0 us/token over 2000.0 plain, the median pair's ratio 0.800): "
                    "no per-event costs measured in this run")):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench_engines.predict(bench_engines.Workload("w", []), {"launch": 200.0}, cost, plain, shadow)
    if want not in out.getvalue():
        problems.append(f"bench_engines.py predict, costs {cost}: want {want!r}, got {out.getvalue()!r}")
# Rounds in turn: plain first in one round, last in the next (a process's place in a round moves
# its speed), each variant's ratio against its own round's plain run.
class FakeRun(bench_engines.Workload):
    def __init__(self, name, seconds, log):
        super().__init__(name, [])
        self.seconds, self.log = seconds, log

    def run(self, tokens, preload, extra=(), timeout=180, env_extra=None):
        self.log.append(self.name if preload is True else "plain")
        return self.seconds, ""


log = []
fake = [FakeRun("e", 0.5, log), FakeRun("e/side", 0.25, log)]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    got = bench_engines.rounds(fake, 3, 1, 8, argparse.Namespace(budget=1e9, best_of=1, against=None,
                                                                  round_stats=False, goal=0.97))
if log != ["plain", "e", "e/side", "e", "plain", "plain", "e"] or got["e"] != ([0.5] * 3, [0.5] * 3) or \
        got["e/side"] != ([0.5], [0.25]) or "PAIR e/side 1 plain 2.00 tok/s hipshadow 4.00 tok/s ratio 2.000" \
        not in out.getvalue():
    problems.append(f"bench_engines.py rounds: order {log}, pairs {got}, said {out.getvalue()!r}")
# A control listed after the variant: each of the variant's runs is read against the geometric
# mean of its round's plain run and control run, which stand on either side of it.  The machine
# slows 10% a run here, so the plain pairs read 0.818 and 0.990 by turns, the bracketed ones the
# build's own 0.9; a variant after the control has no brackets.
class DriftRun(bench_engines.Workload):
    def __init__(self, name, speed, clock, control=False):
        super().__init__(name, [])
        self.speed, self.clock, self.control = speed, clock, control

    def run(self, tokens, preload, extra=(), timeout=180, env_extra=None):
        self.clock.append(self.name)
        return 1.1 ** len(self.clock) / (self.speed if preload is True else 1.0), ""


clock = []
drift = [DriftRun("e", 0.9, clock), DriftRun("e/control", 1.0, clock, control=True), DriftRun("e/after", 0.9, clock)]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    bench_engines.rounds(drift, 9, 9, 8, argparse.Namespace(budget=1e9, best_of=1, against=None, round_stats=False,
                                                             goal=0.97))
said = out.getvalue()
if "BRACKET e median 0.900 min 0.900 q1 0.900 q3 0.900 max 0.900 (9 rounds) ci95 0.900 0.900" not in said or \
        "GOAL e bracketed median >= 0.97: refuted" not in said or re.search(r"^BRACKET e/(after|control)", said, re.M) or \
        not re.search(r"^RATIO e median 0\.(818|990) min 0\.818 ", said, re.M):
    problems.append(f"bench_engines.py bracketed rounds: want BRACKET e at 0.900 and none for the control or a "
                    f"variant after it, got {said!r}")
# --lockstep: a round's sides are processes alive at once, asked in turn (plain first in one turn,
# last in the next); each turn pairs every variant with that turn's plain run, and the processes
# are ended with the round.
class FakeServed:
    def __init__(self, w, tokens, preload):
        self.name, self.seconds, self.log = ("plain" if preload is False else w.name), w.seconds, w.log
        self.turns = 0
        self.log.append("start " + self.name)

    def expect(self, word, timeout):
        return [], ""

    def settle(self, cpus):
        self.log.append(f"settle {self.name} {sorted(cpus)}")
        return True

    def step(self, timeout):
        self.turns += 1
        self.log.append(self.name)
        # the plain side's second turn is twice as slow: only that turn's pairs may show it
        return self.seconds * (2 if self.name == "plain" and self.turns == 2 else 1), None

    def close(self):
        self.log.append("end " + self.name)


log = []
fake = [FakeRun("e", 0.5, log), FakeRun("e/side", 0.25, log)]
out = io.StringIO()
saved = dict(os.environ)
os.environ.update(BENCH_CPUS="7-9", BENCH_CPU_TURNS="")  # the turns on BENCH_CPUS's first
with contextlib.redirect_stdout(out):
    got = bench_engines.lockstep_rounds(fake, 2, 1, 8, argparse.Namespace(budget=1e9, against=None, goal=0.97,
                                                                          lockstep=2), served=FakeServed)
os.environ.clear()
os.environ.update(saved)
said = out.getvalue()
want_log = ["start plain", "start e", "start e/side", "settle plain [7]", "settle e [7]", "settle e/side [7]",
            "plain", "e", "e/side", "e/side", "e", "plain", "end plain", "end e", "end e/side",
            "start e", "start plain", "settle e [7]", "settle plain [7]", "plain", "e", "e", "plain", "end e", "end plain"]
if log != want_log or got["e"] != ([0.5, 1.0, 0.5, 1.0], [0.5] * 4) or got["e/side"] != ([0.5, 1.0], [0.25] * 2) \
        or "PAIR e/side 1.2 plain 1.00 tok/s hipshadow 4.00 tok/s ratio 4.000" not in said \
        or "LOCKSTEP e round 2 median 1.500 fastest 1.000 (2 turns)" not in said \
        or "LOCKSTEP e/side round 1 median 3.000 fastest 2.000 (2 turns)" not in said \
        or "FASTEST e median 1.000 min 1.000 q1 1.000 q3 1.000 max 1.000 (2 rounds) ci95 none" not in said \
        or "GOAL e fastest median >= 0.97: not shown (too few pairs for an interval)" not in said \
        or "(4 pairs, lockstep: 2 turns a round)" not in said:
    problems.append(f"bench_engines.py lockstep_rounds: order {log}, pairs {got}, said {said!r}")
# ... and Served speaks torch_gpt2.py --serve's protocol with a real process: READY, then a
# RUN_TOKENS_PER_S line for each 'go', lines it does not ask for passed over.
class Speaker(bench_engines.Workload):
    def serve_cmd(self, tokens, cpus=None):
        return [sys.executable, "-c", "import sys\nprint('loading', flush=True)\nprint('READY', flush=True)\n"
                "for i, l in enumerate(sys.stdin): print(f'note\\nRUN_TOKENS_PER_S {100 * (i + 1)}', flush=True)\n"
                "sys.stderr.write('bye\\n')\nsys.exit(3)"]


srv = bench_engines.Served(Speaker("s", []), 8, False)
ready = srv.expect("READY", 30)
one = {min(os.sched_getaffinity(0))}  # settled on one CPU of ours, every thread of its group
settled = srv.settle(one) and os.sched_getaffinity(srv.proc.pid) == one
turns = [srv.step(30) for _ in range(2)]
srv.proc.stdin.close()
gone = srv.expect("READY", 30)
srv.close()
if ready != ([], "") or not settled or turns != [(0.01, None), (0.005, None)] or gone != (None, "exit 3: bye"):
    problems.append(f"bench_engines.py Served: ready {ready}, moved to {one}: {settled}, turns {turns}, at the end {gone}")
if bench_engines.cpu_list("2-5,9") != {2, 3, 4, 5, 9}:
    problems.append(f"bench_engines.py cpu_list('2-5,9'): {bench_engines.cpu_list('2-5,9')}")
for bad in (["--lockstep", "-1"], ["--lockstep", "3", "--together"]):
    r = subprocess.run([sys.executable, engines, "--dry-run"] + bad, capture_output=True, text=True, timeout=60)
    if r.returncode != 2 or "--lockstep" not in r.stderr:
        problems.append(f"bench_engines.py {' '.join(bad)}: want a usage error, got exit {r.returncode}: {r.stderr[-300:]}")
# The control (A/A): its side runs as the pair's first does (plain, or the other launcher), and its
# pairs say the machine's noise (NOISE), never a verdict about the build.
aa, mine = argparse.Namespace(name="e/control", control=True), argparse.Namespace(name="e", control=False)
sides = [bench_engines.side_of(w, argparse.Namespace(against=a)) for w in (aa, mine) for a in (None, "old/hipshadow")]
if sides != [False, "old/hipshadow", True, True]:
    problems.append(f"bench_engines.py side_of: control then build, plain then --against: got {sides}")
for against in (None, "old/hipshadow"):
    base = [1.0 + 0.01 * (i % 3) for i in range(9)]
    again = [b * (1.1 if i % 2 else 0.9) for i, b in enumerate(base)]  # the same side run again: noise only
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench_engines.said_ratios([aa], {"e/control": (base, again)}, argparse.Namespace(against=against, goal=0.97))
    said = out.getvalue()
    m = re.search(r"^NOISE e/control median ([\d.]+) q1 ([\d.]+) q3 ([\d.]+) \(9 pairs\) ci95 ", said, re.M)
    if not m or not float(m.group(2)) < 1.0 < float(m.group(3)) or "GOAL" in said or "AB " in said:
        problems.append(f"bench_engines.py control pairs (against {against}): want a NOISE line spanning 1.0 and no "
                        f"verdict, got {said!r}")


def report(plain, shadow):
    return [f"SAMPLES plain {plain[0]} files 3 cpu_ns=1 wall_ns={plain[1]:.0f}",
            f"MODULE plain 50.00 {plain[2]} libc.so.6",
            f"SAMPLES hipshadow {shadow[0]} files 3 wall_ns={shadow[1]:.0f}",
            f"MODULE hipshadow 40.00 {shadow[2]} libc.so.6",
            f"MODULE hipshadow 10.00 {shadow[3]} libhipshadow-cuda.so",
            f"FUNCTION hipshadow 5.00 {shadow[4]} libhipshadow-cuda.so hs_pm_find"]


# long: 1000 and 1200 samples of 1 ms; short: a fifth of the tokens, loading included in both
long = bench_engines.parse_report(report((1000, 1e9, 500), (1200, 1.2e9, 500, 200, 150)))
short = bench_engines.parse_report(report((200, 2e8, 100), (220, 2.2e8, 100, 20, 15)))
got = bench_engines.per_token_lines("e", long, short, 100)
want = ["PERTOKEN e TOTAL plain 8000.0 us hipshadow 9800.0 us added +1800.0 us",
        "PERTOKEN e SPLIT own +1800.0 us elsewhere +0.0 us",
        "PERTOKEN e MODULE added +1800.0 us plain 0.0 hipshadow 1800.0 libhipshadow-cuda.so",
        "PERTOKEN e MODULE added +0.0 us plain 4000.0 hipshadow 4000.0 libc.so.6",
        "PERTOKEN e FUNCTION added +1350.0 us plain 0.0 hipshadow 1350.0 libhipshadow-cuda.so hs_pm_find"]
if got != want:
    problems.append("bench_engines.py per-token profile: got " + repr(got))
# what grew outside hipshadow's code is said apart from its own (here: libc's 100 samples of 1 ms more)
slower = bench_engines.parse_report(report((1000, 1e9, 500), (1300, 1.3e9, 600, 200, 150)))
got = bench_engines.per_token_lines("e", slower, None, 1)
if got[1] != "PERTOKEN e SPLIT own +200000.0 us elsewhere +100000.0 us":
    problems.append("bench_engines.py per-token split: got " + repr(got[:2]))
if not bench_engines.per_token_lines("e", bench_engines.parse_report(report((0, 0, 0), (1, 1, 1, 1, 1))), None,
                                     1)[0].startswith("NOTE e: no per-token profile"):
    problems.append("bench_engines.py per-token profile: a side without samples was not said")
# hipshadow's time per event in the engine: the *_ns counts over the events of their kinds
got = bench_engines.in_engine_lines("e", {"launch": 2000, "launch_ns": 600000, "copy": 400, "memset": 100,
                                          "copy_ns": 250000, "block_alloc": 50, "block_ns": 0, "sync": 40},
                                    {"launch": 200, "copy": 40, "memset": 10, "block_alloc": 5, "sync": 4})
want = ["INENGINE e launch 300 ns an event x 200.0 a token = 60.0 us a token",
        "INENGINE e copy 500 ns an event x 50.0 a token = 25.0 us a token"]
if got != want:
    problems.append("bench_engines.py in-engine times: got " + repr(got))
# the median's 95% interval: order statistics from the binomial (9 values: the 2nd and 8th; 15: the
# 4th and 12th; 5: none), and what it shows against a goal
if bench_engines.median_ci(range(9, 0, -1)) != (2, 8) or bench_engines.median_ci(range(15)) != (3, 11) or \
        bench_engines.median_ci(range(5)) is not None or bench_engines.median_ci(range(6)) != (0, 5):
    problems.append("bench_engines.py median_ci: got " + repr([bench_engines.median_ci(range(n)) for n in (5, 6, 9, 15)]))
verdicts = [bench_engines.goal_verdict(ci, 0.97) for ci in ((0.97, 1.1), (0.9, 0.969), (0.95, 1.0), None)]
if [v.split()[0] for v in verdicts] != ["shown", "refuted", "not", "not"]:
    problems.append("bench_engines.py goal_verdict: got " + repr(verdicts))
# a fast copy is an event of the copy's time too (it counts as copy_fast alone)
got = bench_engines.in_engine_lines("e", {"copy": 100, "copy_fast": 300, "copy_ns": 40000}, {"copy": 1, "copy_fast": 3})
if got != ["INENGINE e copy 100 ns an event x 4.0 a token = 0.4 us a token"]:
    problems.append("bench_engines.py in-engine times with fast copies: got " + repr(got))
# an engine's timed window (hipshadow_print_stats before and after it, then the exit line): the
# difference of its first two lines, over its tokens; none without the marks
marked = ("hipshadow: STATS launch=100 copy=4 launch_ns=9000\nWINDOW_TOKENS 10\n"
          "hipshadow: STATS launch=2100 copy=24 launch_ns=609000\nhipshadow: STATS launch=2500 copy=30 launch_ns=700000\n")
if bench_engines.window_stats(marked) != ({"launch": 2000, "copy": 20, "launch_ns": 600000}, 10):
    problems.append("bench_engines.py timed window: got " + repr(bench_engines.window_stats(marked)))
if bench_engines.window_stats("hipshadow: STATS launch=2500 copy=30 launch_ns=700000\n") is not None:
    problems.append("bench_engines.py timed window: found in a run that marked none")
# a count that fell between the two runs of a difference is said, not counted
import contextlib  # noqa: E402
import io  # noqa: E402
said = io.StringIO()
with contextlib.redirect_stdout(said):
    kept = bench_engines.said_counts("e", {"launch": 10}, {"launch": 2.0, "other_ns": -80.0})
if "COUNT e other_ns" in said.getvalue() or "other_ns fell by 80.0" not in said.getvalue() or kept != {"launch": 2.0}:
    problems.append("bench_engines.py said_counts with a negative difference: " + repr(said.getvalue()))
# --together: the sides trade GPU and CPUs from one pair to the next
got = [bench_engines.placement(i, ("A", "B")) for i in range(3)]
if got != [((0, "A"), (1, "B")), ((1, "B"), (0, "A")), ((0, "A"), (1, "B"))]:
    problems.append("bench_engines.py placement: got " + repr(got))
for line in problems:
    print("FAIL:", line)
print("ok" if not problems else f"{len(problems)} problems")
sys.exit(1 if problems else 0)
