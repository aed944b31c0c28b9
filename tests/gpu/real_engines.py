#!/usr/bin/env python3
"""hipshadow under real inference engines: whatever a program observes, it observes the same with
hipshadow as without.  ggml (its own CMake, from the carried tarball) with its CUDA backend:
  ops         test-backend-ops test -b CUDA0 -o OP, plain and under hipshadow (both at once, per op):
              every test that passes plain passes under hipshadow, same exit code, zero findings
  gpt2        gpt-2-backend on a GPT-2 124M-shaped model with random weights written here: plain,
              hipshadow, plain; the generated text byte-identical, zero findings, ms/token
  frameworks  run_gpu.py frameworks (PyTorch compile and vision, Triton, CuPy, JAX under hipshadow)
and first
  build       unpack the tarball and build test-backend-ops and gpt-2-backend (GGML_CUDA=ON, sm_90)

Run from the repository root, with build/ (hipshadow) and vendor-device/ (the tarball and
libunwind.so.8, put on LD_LIBRARY_PATH here) carried:
  python3 tests/gpu/real_engines.py [--phases build,gpt2,ops,frameworks] [--ops ...] [--budget S]
Everything runs against a deadline (--budget seconds from the start); a phase that does not fit is
reported "not run" and the exit status is then 3 (1 when anything failed, 0 when all ran and passed).
A cold build takes most of one device call: the second call on the same machine keeps the build with
GGML_REUSE=1 (an unfinished build resumes; a finished one is a no-op; binaries unpacked into GGML_WORK/build/bin
without a build tree, from a build on another machine, are used as they are).
  --cpu-check  the same flow without a GPU (GGML_CUDA=OFF, -b CPU, -ngl 0, a small model): checks this
               script's building, model writing and parsing on any machine
Environment: GGML_TARBALL (vendor-device/ggml-d99724f.tar.gz), GGML_WORK (/tmp/hipshadow-ggml: sources,
build, model), GGML_REUSE=1, HS_LAUNCHER (build/tools/hipshadow), OUT (logs; GGML_WORK/logs without)."""
import argparse
import array
import json
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
os.environ.setdefault("HS_LAUNCHER", os.path.join(root, "build", "tools", "hipshadow"))
vendor = os.path.join(root, "vendor-device")
if os.path.isdir(vendor) and vendor not in os.environ.get("LD_LIBRARY_PATH", "").split(":"):
    os.environ["LD_LIBRARY_PATH"] = vendor + (":" + os.environ["LD_LIBRARY_PATH"]
                                              if os.environ.get("LD_LIBRARY_PATH") else "")
sys.path.insert(0, here)
import run_gpu  # noqa: E402  (run(): one program plain or under hipshadow, its findings)

REQUIRED_OPS = "MUL_MAT,CPY,SET_ROWS,SOFT_MAX,GET_ROWS,ARGSORT"
EXTRA_OPS = "ROPE,CONCAT,ADD,MUL,CONT,NORM,RMS_NORM,SUM_ROWS,SCALE,GELU,DIAG_MASK_INF"
PROMPT = "Once upon a time, in a quiet harbour, there was a small grey ship"
T0 = time.monotonic()
results = []  # (phase, check, status, detail); status PASS, FAIL or NOT RUN


def stamp(msg):
    t = time.monotonic() - T0
    print(f"[{time.strftime('%H:%M:%S')} +{int(t) // 60}:{int(t) % 60:02d}] {msg}", flush=True)


def record(phase, check, status, detail=""):
    results.append((phase, check, status, detail))
    print(f"{status} {phase}: {check}{' -- ' + detail if detail else ''}", flush=True)


class Clock:
    def __init__(self, budget):
        self.deadline = T0 + budget

    def left(self, reserve=0.0):
        return self.deadline - reserve - time.monotonic()


def text(data):
    return data.decode("utf-8", "replace") if isinstance(data, bytes) else (data or "")


def save(logs, name, content):
    with open(os.path.join(logs, name), "w", errors="replace") as f:
        f.write(content)


def checked_calls(stderr):
    """The count of hipshadow's last 'SUMMARY: hipshadow: ... in N checked calls' line (0 without)."""
    calls = [int(l.split(" in ")[-1].split()[0]) for l in stderr.splitlines()
             if l.startswith("SUMMARY: hipshadow:") and " checked calls" in l]
    return calls[-1] if calls else 0


class Run:
    """One run of cmd, plain or under hipshadow --cuda, within timeout seconds."""
    def __init__(self, cmd, preload, timeout):
        t = time.monotonic()
        self.timed_out = False
        try:
            proc, self.kinds, self.records = run_gpu.run(cmd, preload=preload, timeout=max(timeout, 1))
            self.rc, self.out, self.err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as e:
            self.timed_out, self.rc, self.kinds, self.records = True, None, {}, []
            self.out, self.err = text(e.stdout), text(e.stderr)
        except (OSError, UnicodeDecodeError) as e:  # not started, or output that is not UTF-8
            self.timed_out, self.rc, self.kinds, self.records, self.out = False, None, {}, [], ""
            self.err = f"real_engines.py: running {cmd[0]}: {e!r}"
        self.seconds = time.monotonic() - t
        self.calls = checked_calls(self.err)

    def log(self, logs, name):
        save(logs, name, f"# exit {self.rc}{' (killed at its time limit)' if self.timed_out else ''}, "
             f"{self.seconds:.1f} s\n# stdout\n{self.out}\n# stderr\n{self.err}")
        if self.records:
            save(logs, name.rsplit(".", 1)[0] + "-findings.jsonl", "".join(json.dumps(r) + "\n" for r in self.records))

    def findings(self):
        return ", ".join(f"{k} x{n}" for k, n in sorted(self.kinds.items())) or "none"


def stream(cmd, log_path, timeout, cwd=None, env=None, echo=False):
    """Runs cmd in its own process group with its output into log_path (and on stdout when echo);
    kills the group after timeout seconds.  Returns (exit status or None when killed, output)."""
    lines = []
    with open(log_path, "w", errors="replace") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd, env=env,
                                start_new_session=True, text=True, errors="replace")

        def pump():
            for line in proc.stdout:
                lines.append(line)
                log.write(line)
                if echo:
                    print("  | " + line, end="", flush=True)
        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            rc = proc.wait(timeout=max(timeout, 1))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the group this call started
            proc.wait()
            rc = None
        reader.join(10)
        if rc is None:
            log.write(f"\n# killed after {timeout:.0f} s (time budget)\n")
    return rc, "".join(lines)


# ---------------------------------------------------------------------------------------- build

def build(args, clock, logs):
    src, bdir = os.path.join(args.work, "src"), os.path.join(args.work, "build-cpu" if args.cpu_check else "build")
    bins = {t: os.path.join(bdir, "bin", t) for t in ("test-backend-ops", "gpt-2-backend")}
    reuse = os.environ.get("GGML_REUSE") == "1" and os.path.exists(os.path.join(bdir, "CMakeCache.txt"))
    if (os.environ.get("GGML_REUSE") == "1" and not reuse and all(os.access(b, os.X_OK) for b in bins.values())):
        # binaries built on another machine and unpacked here (no build tree): used as they are
        record("build", "test-backend-ops, gpt-2-backend", "PASS", f"{bdir}/bin, built elsewhere (GGML_REUSE=1)")
        return bins
    if not reuse:
        if not os.path.exists(args.tarball):
            record("build", "ggml sources", "FAIL", f"no tarball at {args.tarball} (set GGML_TARBALL)")
            return None
        shutil.rmtree(src, ignore_errors=True)
        shutil.rmtree(bdir, ignore_errors=True)
        os.makedirs(src)
        tar = subprocess.run(["tar", "xzf", os.path.abspath(args.tarball), "-C", src], capture_output=True, text=True)
        if tar.returncode or not os.path.exists(os.path.join(src, "CMakeLists.txt")):
            record("build", "unpack", "FAIL", f"tar xzf {args.tarball}: {tar.stderr.strip()[-500:]} "
                   "(expected a git archive with CMakeLists.txt at its top)")
            return None
        flags = ["-DCMAKE_BUILD_TYPE=Release", "-DGGML_BUILD_TESTS=ON", "-DGGML_BUILD_EXAMPLES=ON"]
        if args.cpu_check:
            flags += ["-DGGML_CUDA=OFF"]
        else:
            flags += ["-DGGML_CUDA=ON", "-DCMAKE_CUDA_ARCHITECTURES=90", "-DGGML_CUDA_FA=OFF"]
            if not shutil.which("nvcc") and os.path.exists("/usr/local/cuda/bin/nvcc"):
                flags += ["-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc"]
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        rc, out = stream(["cmake", "-S", src, "-B", bdir] + gen + flags, os.path.join(logs, "ggml-configure.log"),
                         clock.left())
        if rc != 0:
            record("build", "cmake configure", "FAIL", "exit {} (ggml-configure.log): {}".format(
                rc, " | ".join(out.strip().splitlines()[-6:])))
            return None
    else:
        print(f"GGML_REUSE=1: keeping {bdir} (an unfinished build resumes)")
    nice = ["nice", "-n", "10"] if args.cpu_check else []
    rc, out = stream(nice + ["cmake", "--build", bdir, "-j", str(args.jobs), "--target"] + list(bins),
                     os.path.join(logs, "ggml-build.log"), clock.left())
    if rc is None:
        record("build", "cmake --build", "NOT RUN", "the time budget ran out mid-build: run again with "
               "GGML_REUSE=1 to resume it")
        return None
    missing = [b for b in bins.values() if not os.access(b, os.X_OK)]
    if rc != 0 or missing:
        errors = [l for l in out.splitlines() if "error" in l.lower()][:8] or out.strip().splitlines()[-8:]
        record("build", "cmake --build", "FAIL", f"exit {rc}, missing {missing} (ggml-build.log): " + " | ".join(errors))
        return None
    detail = f"{bdir}/bin"
    if not args.cpu_check:
        libs = [os.path.join(dp, f) for dp, _, fs in os.walk(bdir) for f in fs if f.startswith("libggml-cuda.so")]
        linked = subprocess.run(["ldd", libs[0] if libs else bins["gpt-2-backend"]], capture_output=True, text=True).stdout
        cudart = [l.split()[0] for l in linked.splitlines() if "libcudart" in l]
        detail += f"; CUDA runtime linked: {cudart[0] + ' (shared)' if cudart else 'no shared libcudart found'}"
    record("build", "test-backend-ops, gpt-2-backend", "PASS", detail)
    return bins


# ---------------------------------------------------------------------------------------- ops

RESULT = re.compile(r"([A-Z][A-Z0-9_]*\(.*?\)): (?:\x1b\[[0-9;]*m)?(OK|FAIL)\b")
UNSUPPORTED = re.compile(r"([A-Z][A-Z0-9_]*\(.*?\)): not supported")
SUMMARY = re.compile(r"^\s*(\d+)/(\d+) tests passed", re.M)


def parse_ops(out):
    """{test: [statuses]}, the count of unsupported tests, and the summary's (passed, total) or None."""
    tests = {}
    for name, status in RESULT.findall(out):
        tests.setdefault(name, []).append(status)
    s = SUMMARY.findall(out)
    return tests, len(UNSUPPORTED.findall(out)), (int(s[-1][0]), int(s[-1][1])) if s else None


def count(tests, status):
    return sum(v.count(status) for v in tests.values())


def one_op(binary, backend, op, timeout, logs, min_calls):
    cmd = [binary, "test", "-b", backend, "-o", op]
    runs = {}
    side = threading.Thread(target=lambda: runs.__setitem__("plain", Run(cmd, False, timeout)))
    side.start()
    runs["hipshadow"] = Run(cmd, True, timeout)
    side.join()
    plain, shadow = runs["plain"], runs["hipshadow"]
    plain.log(logs, f"ops-{op}-plain.txt")
    shadow.log(logs, f"ops-{op}-hipshadow.txt")
    if plain.timed_out:
        return None, f"the plain run was cut by the time budget ({timeout:.0f} s)"
    if shadow.timed_out and plain.seconds * 3 + 30 > timeout:
        return None, f"the hipshadow run was cut by the time budget (plain took {plain.seconds:.0f} s)"
    problems = []
    for name, r in runs.items():
        if r.timed_out:
            problems.append(f"the {name} run did not finish in {timeout:.0f} s (plain took {plain.seconds:.0f} s): "
                            "a hang under hipshadow?")
    tp, up, sp = parse_ops(plain.out)
    ts, us, ss = parse_ops(shadow.out)
    for name, (tests, summary, r) in (("plain", (tp, sp, plain)), ("hipshadow", (ts, ss, shadow))):
        if not r.timed_out and (summary is None or summary != (count(tests, "OK"), count(tests, "OK") + count(tests, "FAIL"))):
            problems.append(f"{name}: the per-test lines ({count(tests, 'OK')} OK, {count(tests, 'FAIL')} FAIL) do not "
                            f"add up to its summary line {summary}")
    if not plain.timed_out and count(tp, "OK") + count(tp, "FAIL") == 0:
        problems.append(f"no test ran plain (exit {plain.rc}; {up} not supported): is '{op}' an op name of "
                        f"test-backend-ops --list-ops, and is {backend} present?")
    lost = [] if shadow.timed_out else [t for t, v in tp.items() if ts.get(t, []).count("OK") < v.count("OK")]
    if lost:
        problems.append(f"{len(lost)} tests passed plain but not under hipshadow, e.g. "
                        + "; ".join(f"{t}: {ts.get(t, ['missing'])}" for t in lost[:5]))
    if plain.rc != shadow.rc and not (plain.timed_out or shadow.timed_out):
        problems.append(f"exit status {plain.rc} plain, {shadow.rc} under hipshadow")
    if shadow.kinds:
        problems.append(f"findings: {shadow.findings()} (ops-{op}-hipshadow-findings.jsonl)")
    if shadow.calls < min_calls and not shadow.timed_out:
        problems.append(f"only {shadow.calls} checked calls (hipshadow saw too few of the program's calls)")
    gained = [t for t, v in ts.items() if v.count("OK") > tp.get(t, []).count("OK")]
    n_p, n_s = count(tp, "OK"), count(ts, "OK")
    m_p, m_s = n_p + count(tp, "FAIL"), n_s + count(ts, "FAIL")
    line = (f"{n_p}/{m_p} passed plain, {n_s}/{m_s} under hipshadow, {sum(shadow.kinds.values())} findings, "
            f"{shadow.calls} checked calls ({up} not supported; plain {plain.seconds:.1f} s, "
            f"hipshadow {shadow.seconds:.1f} s, exit {plain.rc}/{shadow.rc})")
    if gained:
        line += f"; {len(gained)} passed only under hipshadow (flaky?): {gained[:3]}"
    stats = (n_p, m_p, n_s, m_s, sum(shadow.kinds.values()), shadow.calls)
    return (problems, stats), line


def ops(args, clock, logs, bins, reserve):
    binary = bins["test-backend-ops"]
    backend = "CPU" if args.cpu_check else "CUDA0"
    listed = subprocess.run([binary, "--list-ops"], capture_output=True, text=True).stdout.split()
    required = [o for o in args.ops.split(",") if o]
    extra = [o for o in args.extra_ops.split(",") if o and o not in required]
    unknown = [o for o in required + extra if listed and o not in listed]
    for o in unknown:
        record("ops", o, "FAIL", "not an op of test-backend-ops --list-ops")
    queue = [o for o in required + extra if o not in unknown]
    lock = threading.Lock()
    totals = [0] * 6

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                op = queue.pop(0)
            left = clock.left(reserve)
            kind = "required" if op in required else "extra"
            if left < 20:
                record("ops", op, "NOT RUN" if kind == "required" else "SKIP",
                       f"time budget ({kind}); run again with --phases ops")
                continue
            stamp(f"ops: {op} plain and under hipshadow ({left:.0f} s left for ops)")
            outcome, line = one_op(binary, backend, op, left, logs, 0 if args.cpu_check else 10)
            if outcome is None:
                record("ops", op, "NOT RUN" if kind == "required" else "SKIP", line)
                continue
            problems, stats = outcome
            with lock:
                for i, v in enumerate(stats):
                    totals[i] += v
            record("ops", op, "FAIL" if problems else "PASS", line + ("" if not problems else "; " + "; ".join(problems)))
    threads = [threading.Thread(target=worker) for _ in range(max(1, args.parallel))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    n_p, m_p, n_s, m_s, k, c = totals
    print(f"ops, all: {n_p}/{m_p} passed plain, {n_s}/{m_s} under hipshadow, {k} findings, {c} checked calls")


# ---------------------------------------------------------------------------------------- gpt-2

def f16_bytes(rng, n, top):
    """n random float16 values, little-endian, with magnitudes log-uniform in [2**(top-4), 2**top) and
    random signs: random low bytes, high bytes mapped to sign | exponent | two mantissa bits."""
    data = bytearray(rng.randbytes(2 * n))
    table = bytes((b & 0x80) | ((15 + top - 4 + ((b >> 2) & 3)) << 2) | (b & 3) for b in range(256))
    data[1::2] = data[1::2].translate(table)
    return data


def f32_bytes(rng, n, top, offset=0.0):
    values = struct.unpack(f"<{n}e", f16_bytes(rng, n, top))
    out = array.array("f", (v + offset for v in values) if offset else values)
    if sys.byteorder != "little":
        out.byteswap()
    return out.tobytes()


def vocab(n_vocab):
    """Printable ASCII characters (so any ASCII prompt tokenizes), then ' ' + 2 or 3 syllables, unique,
    and GPT-2's end-of-text token last (main-backend.cpp stops at id 50256 unless --ignore-eos)."""
    syl = [c + v for c in "bdfghjklmnprstvz" for v in "aeiou"]
    words = [chr(c) for c in range(32, 127)]
    i = 0
    while len(words) < n_vocab - 1:
        words.append(" " + syl[i % 80] + syl[(i // 80) % 80] + (syl[i // 6400] if i >= 6400 else ""))
        i += 1
    return words[:n_vocab - 1] + ["<|endoftext|>"]


def write_gpt2(path, n_layer, n_embd, n_head, n_ctx, n_vocab=50257, seed=1234):
    """A GPT-2 model file as examples/gpt-2/main-backend.cpp loads it: the ggml magic, six int32 hparams
    (ftype 1: 2-D weights f16, the rest f32), the vocabulary (uint32 length, bytes), then tensors
    (int32 n_dims, name length, type; int32 ne[n_dims]; the name; the data).  No lm_head: wte is
    shared.  Random weights of GPT-2's scale (rms about 0.027), layer-norm gains near 1."""
    rng = random.Random(seed)
    tensors = [("model/ln_f/g", [n_embd], 0, 1.0), ("model/ln_f/b", [n_embd], 0, 0.0),
               ("model/wte", [n_embd, n_vocab], 1, None), ("model/wpe", [n_embd, n_ctx], 0, 0.0)]
    for i in range(n_layer):
        h = f"model/h{i}/"
        tensors += [(h + "ln_1/g", [n_embd], 0, 1.0), (h + "ln_1/b", [n_embd], 0, 0.0),
                    (h + "ln_2/g", [n_embd], 0, 1.0), (h + "ln_2/b", [n_embd], 0, 0.0),
                    (h + "attn/c_attn/w", [n_embd, 3 * n_embd], 1, None), (h + "attn/c_attn/b", [3 * n_embd], 0, 0.0),
                    (h + "attn/c_proj/w", [n_embd, n_embd], 1, None), (h + "attn/c_proj/b", [n_embd], 0, 0.0),
                    (h + "mlp/c_fc/w", [n_embd, 4 * n_embd], 1, None), (h + "mlp/c_fc/b", [4 * n_embd], 0, 0.0),
                    (h + "mlp/c_proj/w", [4 * n_embd, n_embd], 1, None), (h + "mlp/c_proj/b", [n_embd], 0, 0.0)]
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<I6i", 0x67676D6C, n_vocab, n_ctx, n_embd, n_head, n_layer, 1))
        f.write(struct.pack("<i", n_vocab))
        for w in vocab(n_vocab):
            b = w.encode()
            f.write(struct.pack("<I", len(b)) + b)
        for name, ne, ttype, offset in tensors:
            n = 1
            for d in ne:
                n *= d
            nb = name.encode()
            f.write(struct.pack(f"<3i{len(ne)}i", len(ne), len(nb), ttype, *ne) + nb)
            if ttype == 1:
                f.write(f16_bytes(rng, n, -4))
            else:  # gains 1 +- 0.06; biases up to 0.03; positions up to 0.25, so that they tell tokens apart
                f.write(f32_bytes(rng, n, -2 if name.endswith("wpe") else -4 if offset else -5, offset))
    os.replace(tmp, path)


GENERATED = re.compile(r"number of tokens in prompt = \d+, first 8 tokens:[^\n]*\n\n(.*?)\n\nmain: +load time =", re.S)
TIMING = re.compile(r"(?m)^main: +(load|sample|predict|total) time = .*$")
PER_TOKEN = re.compile(r"predict time = +([\d.]+) ms / ([\d.]+) ms per token")


def gpt2(args, clock, logs, bins):
    n_layer, n_embd, n_head, n_ctx = (int(x) for x in args.gpt2_shape.split(":"))
    model = os.path.join(args.work, f"gpt2-random-{n_layer}x{n_embd}x{n_head}-ctx{n_ctx}.bin")
    if not os.path.exists(model):
        t = time.monotonic()
        write_gpt2(model, n_layer, n_embd, n_head, n_ctx)
        print(f"wrote {model} ({os.path.getsize(model) / 2**20:.0f} MiB) in {time.monotonic() - t:.1f} s")
    ngl = "0" if args.cpu_check else "99"
    cmd = [bins["gpt-2-backend"], "-m", model, "-p", PROMPT, "-n", str(args.tokens), "-s", "42", "--top_k", "1",
           "--ignore-eos", "-c", str(n_ctx), "-t", "4", "-ngl", ngl]
    runs = []
    for name, preload in (("plain", False), ("hipshadow", True), ("plain-again", False)):
        if clock.left() < 15:
            record("gpt2", "generate", "NOT RUN", f"time budget, before the {name} run")
            return
        stamp(f"gpt2: {name} run")
        r = Run(cmd, preload, min(clock.left(), 180))  # a run takes seconds: more is a hang
        r.log(logs, f"gpt2-{name}.txt")
        runs.append((name, r))
    problems = []
    texts, per_token = {}, {}
    for name, r in runs:
        if r.timed_out:
            problems.append(f"{name}: killed after {r.seconds:.0f} s")
            continue
        m, t = GENERATED.search(r.out), PER_TOKEN.search(r.out)
        if r.rc != 0 or not m or not t:
            problems.append(f"{name}: exit {r.rc}, no generated text or timing line in its output (gpt2-{name}.txt): "
                            + " | ".join((r.err or r.out).strip().splitlines()[-4:]))
            continue
        texts[name], per_token[name] = m.group(1), float(t.group(2))
        if not args.cpu_check and "using CUDA backend" not in r.err:
            problems.append(f"{name}: did not use the CUDA backend")
    if len(texts) == 3:
        p, s, q = texts["plain"], texts["hipshadow"], texts["plain-again"]
        generated = p[len(PROMPT):] if p.startswith(PROMPT) else p
        if p != q:
            problems.append("the two plain runs generated different text: this engine is not deterministic "
                            "here, so the comparison says nothing")
        elif p != s:
            i = next((i for i in range(min(len(p), len(s))) if p[i] != s[i]), min(len(p), len(s)))
            problems.append(f"the generated text differs under hipshadow from byte {i}: plain {p[i:i + 60]!r}, "
                            f"hipshadow {s[i:i + 60]!r}")
        rest = {n: TIMING.sub("", r.out) for n, r in runs}
        if not problems and rest["plain"] != rest["hipshadow"]:
            a, b = rest["plain"].splitlines(), rest["hipshadow"].splitlines()
            diff = [(x, y) for x, y in zip(a, b) if x != y][:3]
            problems.append(f"stdout (timing lines aside) differs under hipshadow: {diff or (len(a), len(b))}")
        if len(set(generated.split())) < 5:
            print(f"note: the random model repeats itself: {generated[:120]!r}")
    shadow = runs[1][1]
    if shadow.kinds:
        problems.append(f"findings: {shadow.findings()} (gpt2-hipshadow-findings.jsonl)")
    if not args.cpu_check and shadow.calls < 100 and not shadow.timed_out:
        problems.append(f"only {shadow.calls} checked calls")
    detail = f"{n_layer}x{n_embd}, {args.tokens} tokens, greedy"
    if len(per_token) == 3:
        mp = (per_token["plain"] + per_token["plain-again"]) / 2
        detail += (f"; {len(texts['plain'])} bytes of text identical in all three runs" if not problems else "")
        detail += (f"; {per_token['plain']:.2f}/{per_token['plain-again']:.2f} ms/token plain, "
                   f"{per_token['hipshadow']:.2f} ms/token under hipshadow ({per_token['hipshadow'] / mp:.2f}x); "
                   f"{sum(shadow.kinds.values())} findings, {shadow.calls} checked calls")
    if "plain" in texts:
        print(f"generated: {texts['plain'][:200]!r}...")
    record("gpt2", "generate", "FAIL" if problems else "PASS", detail + ("; " + "; ".join(problems) if problems else ""))


# ---------------------------------------------------------------------------------------- frameworks

def frameworks(clock, logs):
    stamp("frameworks: python3 tests/gpu/run_gpu.py frameworks")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    rc, out = stream([sys.executable, os.path.join(here, "run_gpu.py"), "frameworks"],
                     os.path.join(logs, "frameworks.txt"), clock.left(), cwd=root, env=env, echo=True)
    lines = [l for l in out.splitlines() if l.startswith(("PASS ", "FAIL ", "SKIP "))]
    tally = {k: sum(l.startswith(k) for l in lines) for k in ("PASS", "FAIL", "SKIP")}
    detail = ", ".join(f"{n} {k}" for k, n in tally.items())
    if rc is None:
        record("frameworks", "run_gpu.py frameworks", "NOT RUN", f"killed by the time budget after {detail}; "
               "run again with --phases frameworks")
    else:
        failed = [l[5:80] for l in lines if l.startswith("FAIL ")]
        verdict = [l for l in out.splitlines() if l.startswith(("FAILED:", "all GPU checks passed"))]
        record("frameworks", "run_gpu.py frameworks", "PASS" if rc == 0 else "FAIL",
               f"exit {rc}; {detail}" + (f"; failed: {failed}" if failed else "")
               + (f"; {verdict[-1]}" if verdict else ""))


# ---------------------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--phases", default="build,gpt2,ops,frameworks",
                    help="which of build,gpt2,ops,frameworks (always in this order; build only checks "
                         "the binaries when GGML_REUSE=1 and the build is complete)")
    ap.add_argument("--ops", default=None, help=f"ops that must be compared (default {REQUIRED_OPS})")
    ap.add_argument("--extra-ops", default=None, help=f"ops compared as time allows (default {EXTRA_OPS})")
    ap.add_argument("--parallel", type=int, default=2, help="ops compared at once (each: a plain and a "
                    "hipshadow process)")
    ap.add_argument("--gpt2-shape", default=None, help="n_layer:n_embd:n_head:n_ctx (default 12:768:12:1024, "
                    "GPT-2 124M)")
    ap.add_argument("--tokens", type=int, default=None, help="tokens to generate (default 200)")
    ap.add_argument("--budget", type=float, default=float(os.environ.get("BUDGET_S", 540)),
                    help="seconds from the start by which everything has ended (default 540)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 16, help="build jobs")
    ap.add_argument("--cpu-check", action="store_true", help="no GPU: GGML_CUDA=OFF, -b CPU, -ngl 0, a small "
                    "model, no frameworks")
    args = ap.parse_args()
    cpu = args.cpu_check
    args.ops = args.ops if args.ops is not None else ("ARGSORT,GET_ROWS" if cpu else REQUIRED_OPS)
    args.extra_ops = args.extra_ops if args.extra_ops is not None else ("SCALE,GELU" if cpu else EXTRA_OPS)
    args.gpt2_shape = args.gpt2_shape or ("2:128:4:256" if cpu else "12:768:12:1024")
    args.tokens = args.tokens or (16 if cpu else 200)
    args.tarball = os.environ.get("GGML_TARBALL", os.path.join(vendor, "ggml-d99724f.tar.gz"))
    args.work = os.path.abspath(os.environ.get("GGML_WORK", "/tmp/hipshadow-ggml"))
    phases = [p for p in ("build", "gpt2", "ops", "frameworks") if p in args.phases.split(",")]
    if cpu and "frameworks" in phases:
        phases.remove("frameworks")
    unknown = set(args.phases.split(",")) - {"build", "gpt2", "ops", "frameworks"}
    if unknown:
        ap.error(f"unknown phases {sorted(unknown)}")
    logs = os.environ.get("OUT") or os.path.join(args.work, "logs")
    os.makedirs(logs, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    clock = Clock(args.budget)
    frameworks_need = 200  # kept for it by ops: the torch plugin built, then six workloads under hipshadow
    stamp(f"real_engines: phases {','.join(phases)}, budget {args.budget:.0f} s, work {args.work}, logs {logs}, "
          f"launcher {run_gpu.launcher}")
    if not cpu and shutil.which("nvidia-smi"):
        print(subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip())
    if {"gpt2", "ops"} & set(phases) and not os.access(run_gpu.launcher, os.X_OK):
        record("setup", "hipshadow launcher", "FAIL", f"{run_gpu.launcher} is not there (build hipshadow, carry "
               "build/, or set HS_LAUNCHER)")
        phases = [p for p in phases if p not in ("gpt2", "ops")]

    bins = None
    for phase in phases:
        stamp(f"== {phase} ({clock.left():.0f} s left)")
        t = time.monotonic()
        if phase == "build":
            bins = build(args, clock, logs)
        elif phase in ("gpt2", "ops"):
            if bins is None:
                bdir = os.path.join(args.work, "build-cpu" if cpu else "build", "bin")
                bins = {b: os.path.join(bdir, b) for b in ("test-backend-ops", "gpt-2-backend")}
                if "build" in phases or not all(os.access(b, os.X_OK) for b in bins.values()):
                    record(phase, "ggml binaries", "NOT RUN", f"no complete build in {bdir}")
                    bins = None
                    continue
            if phase == "gpt2":
                gpt2(args, clock, logs, bins)
            else:
                ops(args, clock, logs, bins, frameworks_need if "frameworks" in phases else 0)
        elif phase == "frameworks":
            frameworks(clock, logs)
        stamp(f"== {phase} done in {time.monotonic() - t:.0f} s")

    failed = [r for r in results if r[2] == "FAIL"]
    missing = [r for r in results if r[2] == "NOT RUN"]
    table = ["", "| phase | check | result | details |", "|---|---|---|---|"]
    table += [f"| {p} | {c} | {s} | {d} |" for p, c, s, d in results]
    verdict = ("FAILED: " + ", ".join(f"{p}/{c}" for p, c, _, _ in failed) if failed else
               "INCOMPLETE (time budget): " + ", ".join(f"{p}/{c}" for p, c, _, _ in missing) if missing else
               "all real-engine checks passed")
    table.append(f"\n{verdict} (in {time.monotonic() - T0:.0f} s)")
    print("\n".join(table))
    save(logs, "real-engines-summary.md", "\n".join(table) + "\n")
    return 1 if failed else 3 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
