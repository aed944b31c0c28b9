#!/usr/bin/env python3
"""Process trees under the launcher, on the simulated runtime: shell scripts, ranks, worker
pools, fork and exit order.  Each process that uses the runtime has its own files, counts and
exit status; a process that never uses it leaves nothing behind.
Usage: run_tree_case.py CASE (paths from the environment meson sets: HS_LAUNCHER, HS_CASES,
HS_SIMHIP, HS_SOURCE)."""
import glob
import json
import os
import subprocess
import sys
import tempfile

launcher, cases, simhip = os.environ["HS_LAUNCHER"], os.environ["HS_CASES"], os.environ["HS_SIMHIP"]
source = os.environ["HS_SOURCE"]
failures = []
# The runtime's refusal of a bad copy, said with its out-of-bounds (one bug, one finding).
REFUSED = "hipshadow: hipMemcpyDtoH then returned hipErrorInvalidValue (1), as the out-of-bounds above explains"


def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(cmd, options=(), env_extra=None):
    args = [launcher]
    for o in options:
        args += ["--option", o]
    env = dict(os.environ, LD_LIBRARY_PATH=simhip, **(env_extra or {}))
    env.pop("HIPSHADOW_OPTIONS", None)
    proc = subprocess.run(args + ["--"] + cmd, env=env, capture_output=True, text=True, timeout=300)
    sys.stdout.write(proc.stdout[-3000:])
    sys.stdout.write(proc.stderr[-3000:])
    return proc


def findings(path):
    return [json.loads(l) for l in open(path)] if os.path.exists(path) else []


def report_json(logs):
    proc = subprocess.run([launcher, "report", "--format", "json"] + logs, capture_output=True, text=True)
    check(proc.returncode == 0, f"hipshadow report reads {len(logs)} logs")
    return proc.stdout


def summaries(text):
    return [l for l in text.splitlines() if l.startswith("SUMMARY: hipshadow:") and "checked calls" in l]


def case_shell_two_programs(tmp):
    """bash -c "prog1; prog2": each program its own complete log; bash none."""
    prog1, prog2 = os.path.join(cases, "use_after_free"), os.path.join(cases, "seed003_embedding")
    # prog1 is forked and exec'd by bash; prog2, the last command, is exec'd in bash's own process
    run(["bash", "-c", f"{prog1}; {prog2}"], options=[f"log={tmp}/hs.%p.log"])
    logs = sorted(glob.glob(f"{tmp}/hs.*.log"))
    check(len(logs) == 2, f"two logs, one per runtime-using program (got {[os.path.basename(l) for l in logs]})")
    text = subprocess.run([launcher, "report", "--format", "text"] + logs, capture_output=True, text=True).stdout
    for program, kind in (("use_after_free", "use-after-free"), ("seed003_embedding", "out-of-bounds")):
        check(program in text and kind in text, f"{program}'s log has its {kind}")
    check("bash" not in " ".join(os.path.basename(l) for l in logs), "bash made no log")


def case_ranks_merged(tmp):
    """4 ranks (RANK=0..3) through ctypes: 4 logs named by rank, merged by hipshadow report."""
    proc = run(["python3", os.path.join(source, "tree_workers.py"), "ranks", "4"], options=[f"log={tmp}/hs.%r.log"])
    logs = sorted(glob.glob(f"{tmp}/hs.*.log"))
    names = [os.path.basename(l) for l in logs]
    check(names == [f"hs.{r}.log" for r in range(4)], f"one log per rank, named by rank (got {names})")
    merged = json.loads(report_json(logs))
    ranks = sorted(l["rank"] for l in merged["logs"])
    check(ranks == [0, 1, 2, 3], f"the merged report names the 4 ranks (got {ranks})")
    oob = merged["summary"]["findings_by_kind"].get("out-of-bounds", 0)
    check(oob == 4, f"the merged report has the 4 ranks' out-of-bounds (got {oob})")
    check(proc.stdout.count(" exit 0") == 4, "every rank exited 0")


def case_pool(tmp, method):
    proc = run(["python3", os.path.join(source, "tree_workers.py"), "pool", method],
               options=[f"findings={tmp}/f.%p.json", "exitcode=7"])
    files = sorted(glob.glob(f"{tmp}/f.*.json"))
    by_pid = {int(os.path.basename(f).split(".")[1]): findings(f) for f in files}
    total = sum(len([r for r in rs if r["kind"] == "out-of-bounds"]) for rs in by_pid.values())
    check(total == 7, f"{method}: 7 out-of-bounds findings in all, the parent's and the 6 tasks' (got {total})")
    import re
    tasks_by_pid = {}
    for pid in re.findall(r"'task\d+ in (\d+)'", proc.stdout):
        tasks_by_pid[int(pid)] = tasks_by_pid.get(int(pid), 0) + 1
    parent = [pid for pid in by_pid if pid not in tasks_by_pid]
    check(len(parent) == 1 and len([r for r in by_pid[parent[0]] if r["kind"] == "out-of-bounds"]) == 1,
          f"{method}: the parent's file holds its one finding, none of the workers'")
    for pid, n in tasks_by_pid.items():
        own = len([r for r in by_pid.get(pid, []) if r["kind"] == "out-of-bounds"])
        check(own == n, f"{method}: worker {pid}'s file holds its own {n} tasks' findings (got {own})")
    for line in proc.stdout.splitlines():
        if line.startswith("worker "):
            pid, status = int(line.split()[1]), int(line.split()[3])
            own = len([r for r in by_pid.get(pid, []) if r["kind"] == "out-of-bounds"])
            check(status in (0, 7) and (status == 7) == (own > 0 and method == "spawn"),
                  f"{method}: worker {pid} exits {status}, its own status ({own} findings of its own)")
    check(proc.returncode == 7, f"{method}: the parent exits 7 for its own finding (got {proc.returncode})")


def case_pool_fork(tmp):
    case_pool(tmp, "fork")


def case_pool_spawn(tmp):
    case_pool(tmp, "spawn")


def case_fork_quiet_child(tmp):
    """A child that makes no runtime call inherits nothing: no SUMMARY, exit 0."""
    proc = run([os.path.join(cases, "fork_after_finding"), "quiet"], options=["exitcode=7"])
    check("child exit status 0" in proc.stdout, "the quiet child exits 0, not the parent's exitcode")
    sums = summaries(proc.stderr)
    check(len(sums) == 1 and "2 findings (2 errors): out-of-bounds=2 in" in sums[0],
          f"one SUMMARY, the parent's 2 findings (got {sums})")
    check(proc.returncode == 7, f"the parent exits 7 (got {proc.returncode})")


def case_fork_child_own(tmp):
    """A child's SUMMARY counts its own finding only."""
    proc = run([os.path.join(cases, "fork_after_finding"), "own"], options=["exitcode=7"])
    sums = summaries(proc.stderr)
    check(len(sums) == 2, f"two SUMMARY lines (got {sums})")
    check(any("1 finding (1 error): out-of-bounds=1 in" in s for s in sums),
          "the child's SUMMARY: its one bug (one finding, the runtime's refusal said with it)")
    check(any("2 findings (2 errors): out-of-bounds=2 in" in s for s in sums), "the parent's SUMMARY: its two bugs")
    check(proc.stderr.count(REFUSED) == 3, "each of the three copies' refusal is said with its out-of-bounds")
    check("child exit status 7" in proc.stdout, "the child exits with exitcode for its own error")


def case_late_destructor(tmp):
    """A library destructor that copies after hipshadow's: counted, written, and exitcode= lets
    the destructor run."""
    lib = os.path.join(cases, "liblate_destructor_lib.so")
    proc = run([os.path.join(cases, "late_destructor")], options=[f"findings={tmp}/f.json", "exitcode=7",
                                                                  f"log={tmp}/hs.%p.log"],
               env_extra={"LD_PRELOAD": lib})
    check("late_destructor_lib: destructor ran" in proc.stderr, "the library's destructor ran")
    rs = findings(f"{tmp}/f.json")
    check([r["kind"] for r in rs].count("out-of-bounds") == 2, f"its two out-of-bounds are in the findings file ({len(rs)} lines)")
    sums = summaries(proc.stderr)
    check(len(sums) == 1 and "out-of-bounds=2" in sums[0], f"the one SUMMARY counts them (got {sums})")
    check(proc.returncode == 7, f"exitcode=7 applies to it (got {proc.returncode})")
    last = [l for l in proc.stderr.splitlines() if l.strip()][-1]
    check(last.startswith("SUMMARY: hipshadow:"), f"SUMMARY is the last line (got {last!r})")
    # hardening: the log, closed at hipshadow's destructor, still takes the late copies
    logs = glob.glob(f"{tmp}/hs.*.log")
    data = json.loads(report_json(logs)) if len(logs) == 1 else {"events": []}
    late = [e["record"] for e in data["events"] if e["record"]["type"] == "finding" and e["record"]["kind"] == "out-of-bounds"]
    check(len(late) == 2, f"the log has the destructor's two out-of-bounds (got {len(late)} in {logs})")


def case_fork_storm(tmp):
    """500 forks (200 in the sanitizer builds), each while four threads are inside wrapped calls:
    no child hangs (the program waits for each with a timeout), and each child's own bad copy is
    found and written to its own findings file, so the child's hipshadow works, not just its
    runtime.  A child hangs when a thread was walking its stack at the fork (libunwind holds the
    loader's lock, which glibc does not reset): without hipshadow's fork gate, about 1 fork in
    1000 on 2 cores, so such a regression fails this test about every other run (the gate itself
    is tested deterministically by tests/unit/test_fork_gate.c)."""
    n = 200 if "ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ else 500
    proc = run([os.path.join(cases, "fork_storm"), "storm", str(n)], options=[f"findings={tmp}/f.%p.json"])
    check(f"{n} forks: 0 hung, 0 failed" in proc.stdout, f"{n} forks: no child hung or failed")
    check(proc.returncode == 0, f"the parent exits 0 (got {proc.returncode})")
    files = glob.glob(f"{tmp}/f.*.json")
    kinds = sorted(tuple(sorted(r["kind"] for r in findings(f))) for f in files)
    check(len(files) == n, f"one findings file per child (got {len(files)})")
    check(all(k == ("out-of-bounds",) for k in kinds),
          f"each child's file holds its own bad copy, once (got {set(kinds)})")
    check(proc.stderr.count(REFUSED) == n, "each child says the runtime's refusal of its copy with its out-of-bounds")
    check(all(r["overrun"] == 64 for f in files for r in findings(f) if r["kind"] == "out-of-bounds"),
          "each child's finding is its own copy (overrun 64)")


def case_fork_exec_logs(tmp):
    """fork + exec while four threads are busy in wrapped calls: the exec'd program writes its own
    log, the parent its own; each log is readable on its own."""
    child = [os.path.join(cases, "log_writer"), "exit", "50"]
    proc = run([os.path.join(cases, "fork_storm"), "exec"] + child, options=[f"log={tmp}/hs.%p.log", "log_mode=full"])
    check("1 forks: 0 hung, 0 failed" in proc.stdout and proc.returncode == 0,
          f"the exec'd child ran and exited 0 (parent exit {proc.returncode})")
    import re
    m = re.search(r"exec child (\d+) status", proc.stdout)
    child_pid = int(m.group(1)) if m else -1
    logs = sorted(glob.glob(f"{tmp}/hs.*.log"))
    check(len(logs) == 2, f"two logs, the parent's and the exec'd child's (got {[os.path.basename(l) for l in logs]})")
    by_pid = {}
    for log in logs:
        data = json.loads(report_json([log]))
        head = data["logs"][0]
        by_pid[head["pid"]] = (head, data)
    check(child_pid in by_pid, f"the child's log is named by its pid {child_pid}")
    if child_pid in by_pid:
        head, data = by_pid[child_pid]
        copies = [e for e in data["events"] if e["record"]["type"] == "copy"]
        check(len(copies) == 50, f"the child's log has its 50 copies (got {len(copies)})")
        check("log_writer" in head.get("command_line", ""), "the child's log names the exec'd program")
        parents = [p for p in by_pid if p != child_pid]
        check(len(parents) == 1 and head["parent_pid"] == parents[0], "its parent is the other log's process")
        if parents:
            pdata = by_pid[parents[0]][1]
            check(any(e["record"]["type"] == "copy" for e in pdata["events"]), "the parent's log has its own copies")
            check(all(e["pid"] == parents[0] for e in pdata["events"]), "the parent's log holds only the parent's events")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        globals()["case_" + sys.argv[1]](tmp)
    sys.exit(1 if failures else 0)
