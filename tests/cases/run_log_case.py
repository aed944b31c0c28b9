#!/usr/bin/env python3
"""Post-mortem log tests: run a program under the preload with log=..., end it as the case says
(normal exit, SIGKILL, segfault, fork), then read the log back with `hipshadow report`.
Usage: run_log_case.py CASE (HS_LAUNCHER, HS_CASES, HS_SIMHIP from meson)."""
import csv
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

launcher, cases, simhip = os.environ["HS_LAUNCHER"], os.environ["HS_CASES"], os.environ["HS_SIMHIP"]
failures = []
last_status = last_proc = None


def check(cond, what):
    if not cond:
        failures.append(what)


def run(tmp, program, *args, options=(), expect=0):
    opts = []
    for kv in ("log=" + os.path.join(tmp, "hs.%p.log"),) + tuple(options):
        opts += ["--option", kv]
    env = dict(os.environ, LD_LIBRARY_PATH=simhip)
    env.pop("HIPSHADOW_OPTIONS", None)
    proc = subprocess.run([launcher] + opts + ["--", os.path.join(cases, program)] + list(args),
                          env=env, capture_output=True, text=True, timeout=300)
    sys.stderr.write(proc.stderr[-4000:])
    global last_status, last_proc
    last_status, last_proc = proc.returncode, proc
    if expect is not None:
        check(proc.returncode == expect, f"{program} {args}: exit status {proc.returncode}, expected {expect}")
    return sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.startswith("hs.") and f.endswith(".log"))


def report(fmt, logs, *extra):
    proc = subprocess.run([launcher, "report", "--format", fmt] + list(extra) + logs, capture_output=True, text=True)
    check(proc.returncode == 0, f"report --format {fmt} exited {proc.returncode}: {proc.stderr[-500:]}")
    return proc.stdout


def copies(logs):
    return list(csv.DictReader(io.StringIO(report("csv", logs))))


def case_csv_counts_copies(tmp):
    logs = run(tmp, "log_writer", "exit", "777", options=("log_mode=full",))
    check(len(logs) == 1, f"one log expected, got {logs}")
    rows = copies(logs)
    check(len(rows) == 777, f"CSV has {len(rows)} rows for 777 copies")
    check(all(r["Direction"] == "MEMORY_COPY_DEVICE_TO_HOST" and r["Kind"] == "MEMORY_COPY" for r in rows), "rocprof columns")
    check(all(int(r["Alloc_Id"]) == 1 for r in rows), "every copy is from allocation #1")
    check(rows[5]["Offset"] == str(5 * 4096) and rows[5]["Bytes"] == "69", f"row 6: {rows[5]}")


def case_sigkill_keeps_copies(tmp):
    logs = run(tmp, "log_writer", "kill", "1000", expect=-signal.SIGKILL)
    rows = copies(logs)
    check(len(rows) >= 990, f"after SIGKILL the log shows {len(rows)} of 1000 copies")
    text = report("text", logs)
    check("hipMemcpyAsync              " in text or "hipMemcpyAsync" in text, "text report names the API")


def case_segfault_shows_last_copy(tmp):
    logs = run(tmp, "log_writer", "segv", "50", expect=-signal.SIGSEGV)
    rows = copies(logs)
    check(len(rows) == 51, f"{len(rows)} copies in the log of a program that made 51")
    last = rows[-1] if rows else {}
    check(last.get("Bytes") == "12345" and last.get("Result") == "pending",
          f"the last copy (12345 bytes, died inside the call) is in the log: {last}")
    data = json.loads(report("json", logs))
    kinds = [e["record"]["kind"] for e in data["events"] if e["record"]["type"] == "finding"]
    check(kinds == ["host-out-of-bounds"], f"findings in the log: {kinds}")


def case_fork_child_own_log(tmp):
    logs = run(tmp, "fork_child")
    check(len(logs) == 2, f"parent and child each write a log: {logs}")
    data = json.loads(report("json", logs))
    pids = {l["pid"] for l in data["logs"]}
    check(len(pids) == 2, f"two processes: {pids}")
    parents = {l["parent_pid"] for l in data["logs"]}
    check(len(pids & parents) == 1, "one log's parent is the other log's process")
    per_pid = {}
    for e in data["events"]:
        if e["record"]["type"] == "finding" and e["record"]["kind"] == "out-of-bounds":
            per_pid[e["pid"]] = per_pid.get(e["pid"], 0) + 1
    check(sorted(per_pid.values()) == [1, 1], f"one out-of-bounds in each process's log: {per_pid}")
    perfetto = json.loads(report("perfetto", logs))
    procs = {e["pid"] for e in perfetto["traceEvents"] if e.get("name") == "process_name"}
    check(procs == pids, "one merged timeline with both processes")


def case_demo_sarif_junit(tmp):
    logs = run(tmp, "demo_inference", expect=1)
    sarif = json.loads(report("sarif", logs))
    results = sarif["runs"][0]["results"]
    check([r["ruleId"] for r in results] == ["out-of-bounds"], f"sarif rules: {results}")
    # one bug, one finding: the runtime's refusal of the copy is its copy record's result
    data = json.loads(report("json", logs))
    refused = [e["record"] for e in data["events"] if e["record"]["type"] == "copy" and e["record"]["result"] != 0]
    check([(r["api"], r["result"], r["first_finding"]) for r in refused] == [("hipMemcpyDtoH", 1, 1)],
          f"the refused copy, with its finding: {refused}")
    loc = results[0].get("locations", [{}])[0].get("physicalLocation", {}) if results else {}
    check(loc.get("artifactLocation", {}).get("uri", "").endswith("demo_inference.c"), f"sarif location: {loc}")
    check(loc.get("region", {}).get("startLine", 0) > 0, "sarif line")
    junit = report("junit", logs)
    check('name="out-of-bounds"><failure' in junit, "junit fails the out-of-bounds case")
    text = report("text", logs)
    check("transpose_embedding (" in text and "demo_inference.c:" in text, "text stacks have file:line")
    check("peak device memory in use: 2.3 GiB" in text, "peak device memory")


def case_gpu_fault_after_abort(tmp):
    """ROCr aborts right after its fault event: the finding hipshadow wrote from it is in the log."""
    os.environ["HIP_SKIP_ABORT_ON_GPU_ERROR"] = "0"
    logs = run(tmp, "kernel_cases", "overflow", expect=None)
    if last_status == 77:
        print("SKIP: kernel_cases has no AMD code object (or no simulator)")
        sys.exit(77)
    check(last_status == -signal.SIGABRT, f"ROCr's abort: exit status {last_status}")
    data = json.loads(report("json", logs))
    records = [e["record"] for e in data["events"]]
    findings = [r for r in records if r["type"] == "finding"]
    faults = [r for r in records if r["type"] == "gpu_fault"]
    check([f["kind"] for f in findings] == ["device-fault"], f"findings in the log: {findings}")
    check(len(faults) == 1 and faults[0]["where"] == "past-end" and faults[0]["offset"] == 4040 and
          faults[0]["finding"] == findings[0]["seq"], f"the fault record: {faults}")
    check(findings and findings[0]["api"] == "HSA_AMD_GPU_MEMORY_FAULT_EVENT", "named by its event")
    text = report("text", logs)
    check("GPU memory fault at 0x" in text and "past-end allocation #1" in text and "at offset 4040" in text,
          "the text report explains the fault")


def case_launches_in_report(tmp):
    logs = run(tmp, "kernel_cases", "clean", options=("log_mode=full",), expect=None)
    if last_status == 77:
        print("SKIP: kernel_cases has no AMD code object (or no simulator)")
        sys.exit(77)
    check(last_status == 0, f"kernel_cases clean: exit status {last_status}")
    rows = copies(logs)
    launches = [r for r in rows if r["Kind"] == "KERNEL_DISPATCH"]
    check(len(launches) == 8 and all(r["Kernel_Name"] == "scale" for r in launches),
          f"8 launches of scale in the CSV: {[r['Kernel_Name'] for r in launches]}")
    check(all(r["Workgroup_Size_X"] == "64" and r["Grid_Size_X"] == "4096" for r in launches),
          "rocprofv3's sizes: a workgroup of 64, a grid of 4096 work-items")
    check(len([r for r in rows if r["Kind"] == "MEMORY_COPY"]) == 8, "the 8 copies are still there")
    trace = json.loads(report("perfetto", logs))["traceEvents"]
    slices = [e for e in trace if e.get("ph") == "X" and e.get("name") == "scale"]
    check(len(slices) == 8, f"{len(slices)} perfetto slices named scale")
    tracks = {(e["pid"], e["tid"]) for e in slices}
    check(len(tracks) == 2, f"scale runs on two stream tracks: {tracks}")
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace if e.get("name") == "thread_name"}
    check(all(names.get(t, "").startswith("stream 0x") for t in tracks), f"the tracks are streams: {names}")
    copy_tracks = {(e["pid"], e["tid"]) for e in trace if e.get("ph") == "X" and e.get("cat") == "copy"}
    check(tracks == copy_tracks, f"launches share their stream's track with its copies: {tracks} vs {copy_tracks}")
    data = json.loads(report("json", logs))
    kinds = [e["record"] for e in data["events"] if e["record"]["type"] == "launch"]
    check(len(kinds) == 8 and all(k["name"] == "scale" and k["block"] == [64, 1, 1] and k["seq"] > 0 for k in kinds),
          f"json launch events: {kinds[:1]}")
    check(data["summary"]["launches"] == 8, "json summary counts launches")
    text = report("text", logs)
    check("launches: 8" in text and "       8  scale" in text, "text summary counts launches by kernel")


def case_finding_details_in_report(tmp):
    """What a finding adds (a runtime-error's cause, a stream-race's other access, an
    uninitialized-read's ranges) is in the log: `hipshadow report` says it in every format, the
    text as the live report's lines."""
    runs = {"cause": ("runtime_rules", (), ()),
            "race": ("stream_race", ("kernel-then-copy",), ()),
            "uninit": ("stream_race", ("uninit-d2h",), ("initcheck=1",)),
            "short": ("stream_race", ("uninit-short",), ("initcheck=1",))}
    for name, (program, args, options) in runs.items():
        sub = os.path.join(tmp, name)
        os.mkdir(sub)
        logs = run(sub, program, *args, options=options, expect=None)
        live = [line.strip() for line in last_proc.stderr.splitlines()]
        text = report("text", logs)
        lines = [line.strip() for line in text.splitlines()]
        said = {"cause": [l for l in live if l.startswith("cause: ")],
                "race": [l for l in live if l.startswith(("this call: ", "earlier, still in flight: ", "bytes [0x",
                                                           "to order them: "))],
                "uninit": [l for l in live if l.startswith(("never written: [0x", "the copy reads [0x"))],
                "short": [l for l in live if l.startswith(("never written: [0x", "written: [0x", "the memset of"))]}[name]
        check(said, f"{name}: the live report says nothing to compare with: {last_proc.stderr[-800:]}")
        for line in said:
            check(line in lines, f"{name}: `hipshadow report` lacks the live line {line!r}")
        if name == "race":
            check("earlier access at:" in lines, f"race: the earlier access's stack is not printed")
        key = said[0] if said else "?"
        sarif = json.loads(report("sarif", logs))
        messages = [r["message"]["text"] for r in sarif["runs"][0]["results"]]
        check(any(key in m for m in messages), f"{name}: no SARIF message says {key!r}: {messages[:2]}")
        check(key.replace("'", "&#39;").replace("<", "&lt;") in report("html", logs) or key in report("html", logs),
              f"{name}: the HTML findings table does not say {key!r}")


def stress_run(tmp, ops):
    """One run of stress_threads (16 threads x ops) under log_mode=full, checked against its own
    counts; the log is removed afterwards.  Returns the wall time."""
    import re, time
    t0 = time.monotonic()
    logs = run(tmp, "stress_threads", "16", str(ops), options=("log_mode=full",))
    wall = time.monotonic() - t0
    out = last_proc.stdout
    check(f"16 threads x {ops} ops" in out and ": 0 mismatches" in out, f"every read-back right: {out[-200:]}")
    check("SUMMARY: hipshadow: 0 findings (0 errors)" in last_proc.stderr, "no finding")
    check(len(logs) == 1, f"one log: {logs}")
    made = {api: int(n) for api, n in re.findall(r"^calls (\w+) (\d+)$", out, re.M)}
    check(len(made) == 10 and all(made.values()), f"the program counted its calls: {made}")
    text = report("text", logs)
    section = text.split("calls by API:", 1)[-1].split("bytes by direction:", 1)[0]
    logged = {api: int(n) for api, n in re.findall(r"^\s+(\w+)\s+(\d+)$", section, re.M)}
    check(logged == made, f"{ops} ops: calls by API in the report = calls made: {logged} vs {made}")
    m = re.search(r"^copies H2D (\d+) D2H (\d+)$", out, re.M)
    for d, n in zip(("H2D", "D2H"), m.groups() if m else ()):
        got = re.search(rf"^\s+{d}\s+.* in (\d+) copies$", text, re.M)
        check(got is not None and got.group(1) == n, f"{d} copies in the report: {got and got.group(1)}, made {n}")
    check("findings by kind: none" in text, "the log has no finding")
    check("leaks: 0 allocations" in text, "every allocation's free is in the log")
    # a record written with time 0 (a call that raced the log's opening) puts the peak ~56 years in
    peak = re.search(r"peak device memory in use: .* at \+([0-9.]+) s", text)
    check(peak is not None and float(peak.group(1)) <= wall, f"{ops} ops: event times lie within the run: {peak and peak.group(0)}")
    for log in logs:
        os.unlink(log)
    return wall


def case_threads_stress_counts(tmp):
    """Hardening: 16 threads x 100,000 mixed wrapped calls each (alloc, H2D, D2H, async copies on
    per-thread streams, syncs, free) under log_mode=full: no deadlock (run's timeout), no finding,
    every read-back right, and the report counts exactly the calls and copies the program made.
    Five short runs first: the 16 threads' first calls race hipshadow's opening of the log, and a
    race lost shows as calls missing from the log or recorded with time 0.  HS_STRESS_OPS
    overrides the 100,000 (5,000 in the sanitizer builds)."""
    for _ in range(5):
        stress_run(tmp, 300)
    sanitized = "ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ  # tests/sanitizers.sh: 5-10x slower
    ops = int(os.environ.get("HS_STRESS_OPS", "5000" if sanitized else "100000"))
    wall = stress_run(tmp, ops)
    print(f"stress_threads 16 x {ops}: {wall:.1f} s under hipshadow with log_mode=full")


def png_pixels(path):
    """Decodes an 8-bit RGB/RGBA PNG (what Chromium writes) into rows of bytes."""
    import struct, zlib
    data = open(path, "rb").read()
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    bpp = 4 if ctype == 6 else 3
    raw, rows, prev = zlib.decompress(idat), [], bytearray(width * bpp)
    stride = width * bpp
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return rows, bpp


def case_html_renders(tmp):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("SKIP: chromium is not installed")
        sys.exit(77)
    logs = run(tmp, "demo_inference", expect=1)
    html = os.path.join(tmp, "report.html")
    report("html", logs, "--output", html)
    page = open(html).read()
    check("<svg" in page and "out-of-bounds" in page and "<script" not in page, "self-contained page with charts")
    shot = os.path.join(tmp, "shot.png")
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp}/profile", "--window-size=1200,900", f"--screenshot={shot}", "file://" + html],
                   capture_output=True, timeout=120)
    check(os.path.exists(shot), "chromium wrote a screenshot")
    if os.path.exists(shot):
        rows, bpp = png_pixels(shot)
        colored = sum(1 for row in rows for i in range(0, len(row), bpp)
                      if not (row[i] > 240 and row[i + 1] > 240 and row[i + 2] > 240))
        total = len(rows) * (len(rows[0]) // bpp) if rows else 1
        check(colored > total // 100, f"the screenshot is blank: {colored} of {total} pixels are not white")
        blue = sum(1 for row in rows for i in range(0, len(row), bpp) if row[i + 2] > 150 and row[i] < 120)
        check(blue > 200, f"the memory chart (blue) is not drawn: {blue} blue pixels")


with tempfile.TemporaryDirectory() as tmp:
    globals()["case_" + sys.argv[1]](tmp)
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
