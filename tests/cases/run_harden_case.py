#!/usr/bin/env python3
"""Runtime hardening under the launcher, on the simulated runtime: exit from a signal handler,
checked calls of threads alive at exit, the files hipshadow writes (report_path through a link,
%r from the environment, a full disk), the launcher's quoting of values and the preload path, and
the options text (long, an unclosed quote inherited).
Usage: run_harden_case.py CASE (paths from the environment meson sets: HS_LAUNCHER, HS_CASES,
HS_SIMHIP).  A case that needs root (a small tmpfs) exits 77, skipped, without it."""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

launcher, cases, simhip = os.environ["HS_LAUNCHER"], os.environ["HS_CASES"], os.environ["HS_SIMHIP"]
failures = []

SEED003 = os.path.join(cases, "seed003_embedding")  # one out-of-bounds and the runtime's error
EXIT_PATHS = os.path.join(cases, "exit_paths")


def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)
    return ok


def env_for(inherited=None, **extra):
    env = dict(os.environ, LD_LIBRARY_PATH=simhip, **extra)
    env.pop("HIPSHADOW_OPTIONS", None)
    if inherited is not None:
        env["HIPSHADOW_OPTIONS"] = inherited
    return env


def run(flags, program, inherited=None, env_extra=None, timeout=300, quiet=False, exe=None):
    proc = subprocess.run([exe or launcher] + flags + ["--"] + program, env=env_for(inherited, **(env_extra or {})),
                          capture_output=True, text=True, timeout=timeout, cwd=os.environ["HS_HARDEN_TMP"])
    if not quiet:
        sys.stdout.write(proc.stdout[-2000:])
        sys.stdout.write(proc.stderr[-3000:])
    return proc


def kinds_in(path):
    out = {}
    for line in open(path):
        k = json.loads(line)["kind"]
        out[k] = out.get(k, 0) + 1
    return out


def summary_line(text):
    m = re.search(r"^SUMMARY: hipshadow: \d+ findings?.* in (\d+) checked calls$", text, re.M)
    return m


class Tmpfs:
    """A tmpfs of `size` at path, unmounted at the end; skip (77) where it cannot be mounted."""

    def __init__(self, path, size):
        self.path = path
        os.mkdir(path)
        if os.geteuid() != 0 or not shutil.which("mount"):
            print(f"SKIP: a {size} tmpfs needs root (mount -t tmpfs)")
            sys.exit(77)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", path], capture_output=True, text=True)
        if p.returncode != 0:
            print(f"SKIP: mount -t tmpfs -o size={size} failed: {p.stderr.strip()}")
            sys.exit(77)

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        subprocess.run(["umount", self.path])


# ---- exit and the report's lock ----

def alarm_exits(tmp, runs, flags, mode, each):
    """Runs exit_paths MODE `runs` times under hipshadow with `flags`; each run must exit 3 within
    20 s and print a SUMMARY, and each(stderr) counts what else it says.  Returns the counts of
    exit statuses and the sum of each(), or None once a run failed."""
    env_extra = {}
    if "TSAN_OPTIONS" in os.environ:  # exit() in a signal handler is the program's own doing
        env_extra["TSAN_OPTIONS"] = os.environ["TSAN_OPTIONS"] + ":report_signal_unsafe=0"
    statuses, said = {}, 0
    for i in range(runs):
        try:
            proc = run(flags, [EXIT_PATHS, mode], env_extra=env_extra, timeout=20, quiet=True)
        except subprocess.TimeoutExpired:
            check(False, f"run {i + 1} hung (no exit within 20 s)")
            return None
        statuses[proc.returncode] = statuses.get(proc.returncode, 0) + 1
        if proc.returncode != 3 or not summary_line(proc.stderr):
            sys.stdout.write(proc.stderr[-3000:])
            check(False, f"run {i + 1}: exit status {proc.returncode} (want 3), SUMMARY: {bool(summary_line(proc.stderr))}")
            return None
        said += each(proc.stderr)
        for f in os.listdir(tmp):
            os.unlink(os.path.join(tmp, f))
    return statuses, said


def case_exit_in_signal_handler(tmp):
    """A SIGALRM handler calls exit(3) while the program makes bad copies, wherever it lands
    (often in the middle of a report, whose lock the exit SUMMARY then needed): 100 runs, every
    one exits 3 and has a SUMMARY.  Before, about 1 in 10 hung for ever."""
    def cut(stderr):
        if "exit came while this thread was writing a report" not in stderr:
            return 0
        check(stderr.count("exit came while this thread") == 1, "the cut report is said once")
        return 1
    got = alarm_exits(tmp, 100, ["--findings", f"{tmp}/f.%p.json", "--option", "print_limit=1000000"],
                      "alarm-exit", cut)
    if got:
        print(f"exit statuses {got[0]}; {got[1]} runs exited in the middle of a report")
        check(got[0] == {3: 100}, "100 of 100 runs exited 3")


def case_exit_in_signal_handler_leaks(tmp):
    """The same with detect_leaks=1, the loop allocating and freeing (the shadow map's lock often
    held by the thread the signal interrupts): the leak walk at exit waits for that lock only a
    bounded time.  Every run exits 3 with a SUMMARY."""
    got = alarm_exits(tmp, 40, ["--option", "detect_leaks=1", "--option", "print_limit=0"], "alarm-exit-allocs",
                      lambda stderr: int("leaks are not reported" in stderr))
    if got:
        print(f"exit statuses {got[0]}; {got[1]} runs found the shadow map held at exit")
        check(got[0] == {3: 40}, "40 of 40 runs exited 3")


def case_loader_calls_hold_signals(tmp):
    """hipshadow's own calls into the loader (the dladdr that names a report's stack frames, its
    dl_iterate_phdr at start and for the log's modules) run with the asynchronous signals held: a
    signal that lands inside one is delivered as it returns.  Inside, an exit() from the program's
    handler would wait in _dl_fini for the loader's lock, which the interrupted call holds (about 1
    run in 4,000 of exit_in_signal_handler, under load).  A preloaded dladdr or dl_iterate_phdr
    raises SIGALRM in the middle of each of hipshadow's calls; its handler exits 4 if it runs
    inside one.  The program then ends as it would (exit 0)."""
    shim = os.path.join(cases, "libloader_signal_shim.so")
    preload = shim + (":" + os.environ["LD_PRELOAD"] if os.environ.get("LD_PRELOAD") else "")
    calls = [("dladdr", [], "a report's frames named"),
             ("dl_iterate_phdr", ["--log", f"{tmp}/hs.log"], "the loaded modules listed")]
    if "TSAN_OPTIONS" in os.environ:  # TSan's interceptor calls the shim: whose call it was is lost
        print("SKIP (part): under TSan, dl_iterate_phdr reaches the shim through TSan's interceptor")
        calls = calls[:1]
    for call, flags, what in calls:
        proc = run(flags, [EXIT_PATHS, "flood", "1"], env_extra={"LD_PRELOAD": preload, "LOADER_SHIM_CALL": call},
                   timeout=60, quiet=True)
        made = proc.stderr.count(f"loader_signal_shim: {call} called from")
        check(made > 0 and "libhipshadow" in proc.stderr, f"{what} through the loader's {call} ({made} calls)")
        check(proc.returncode == 0 and "exit_paths flood: done" in proc.stdout,
              f"{call}: every signal came after the call returned (exit {proc.returncode}: 4 inside)")


def case_summary_counts_live_threads(tmp):
    """8 threads make their calls and are still alive (blocked) when main returns: the SUMMARY
    counts their calls, as it does when they were joined (8 x (hipMalloc + 100 copies + hipFree)).
    Before, the live threads' calls were left out ("800 findings ... in 0 checked calls")."""
    want = 8 * (100 + 2)
    for mode in ("joined", "live"):
        proc = run([], [EXIT_PATHS, "threads", mode, "8"], timeout=120)
        m = summary_line(proc.stderr)
        check(proc.returncode == 0 and f"exit_paths threads {mode}: done" in proc.stdout, f"{mode}: the program ran")
        check(m is not None and "out-of-bounds=800" in m.group(0) and int(m.group(1)) == want,
              f"{mode}: SUMMARY counts out-of-bounds=800 in {want} checked calls (got {m.group(0) if m else None!r})")


# ---- the files hipshadow writes ----

def case_report_path_symlink(tmp):
    """report_path names a symbolic link (planted where the file would be): never written through;
    a name already taken by a file gets -1; the file made is the process's own, mode 0600."""
    open(f"{tmp}/target.txt", "w").close()
    os.symlink(f"{tmp}/target.txt", f"{tmp}/report.txt")
    proc = run(["--report-path", f"{tmp}/report.txt"], [SEED003])
    check(os.path.getsize(f"{tmp}/target.txt") == 0, "the link's target was not written to")
    check(proc.stderr.count(f"option 'report_path': '{tmp}/report.txt' is a symbolic link, not a file; "
                            "reporting on stderr") == 1, "the link is named once")
    check("ERROR: hipshadow: out-of-bounds" in proc.stderr and summary_line(proc.stderr), "the report went to stderr")

    with open(f"{tmp}/taken.txt", "w") as f:
        f.write("someone's file\n")
    proc = run(["--report-path", f"{tmp}/taken.txt"], [SEED003])
    check(open(f"{tmp}/taken.txt").read() == "someone's file\n", "a file at the name is left as it was")
    check(proc.stderr.count(f"'{tmp}/taken.txt' exists; this process writes its report to '{tmp}/taken-1.txt'") == 1,
          "the numbered name is said once")
    own = f"{tmp}/taken-1.txt"
    if check(os.path.exists(own), "the report is in taken-1.txt"):
        check("ERROR: hipshadow: out-of-bounds" in open(own).read(), "taken-1.txt has the report")
        check(stat.S_IMODE(os.stat(own).st_mode) == 0o600, f"taken-1.txt is mode 0600 (got {oct(os.stat(own).st_mode)})")


def case_rank_refused(tmp):
    """%r takes only what a rank can be: RANK=../../escaped would have put the log two
    directories up.  Refused, said once; another rank variable that is a rank is taken instead."""
    os.makedirs(f"{tmp}/a/b")
    proc = run(["--log", f"{tmp}/a/b/%r.log", "--findings", f"{tmp}/a/b/f.%r.json"], [SEED003],
               env_extra={"RANK": "../../escaped"})
    check(not os.path.exists(f"{tmp}/escaped.log") and not os.path.exists(f"{tmp}/f.escaped.json")
          and sorted(os.listdir(tmp)) == ["a"], f"nothing was written outside a/b (got {sorted(os.listdir(tmp))})")
    check(sorted(os.listdir(f"{tmp}/a/b")) == ["f.norank.json", "norank.log"],
          f"the files are named norank (got {sorted(os.listdir(f'{tmp}/a/b'))})")
    check(proc.stderr.count("hipshadow: RANK='../../escaped' is not a rank") == 1, "the refusal is said once")
    shutil.rmtree(f"{tmp}/a/b")
    os.makedirs(f"{tmp}/a/b")
    run(["--log", f"{tmp}/a/b/%r.log"], [SEED003], env_extra={"RANK": "x/y", "LOCAL_RANK": "3"})
    check(os.listdir(f"{tmp}/a/b") == ["3.log"], f"LOCAL_RANK=3 is taken (got {os.listdir(f'{tmp}/a/b')})")


def case_findings_full_disk(tmp):
    """findings= on a full disk (a 64 KiB tmpfs): every line in the file is a whole finding, and
    the message says what became of the one that did not fit.  Before, the last line was torn and
    the message said "nothing written"."""
    with Tmpfs(f"{tmp}/mnt", "64k") as mnt:
        proc = run(["--findings", f"{mnt}/f.json", "--option", "print_limit=0"], [EXIT_PATHS, "flood", "400"])
        lines = open(f"{mnt}/f.json").read().split("\n")
        check(lines[-1] == "", "the file ends with a whole line")
        bad = 0
        for line in lines[:-1]:
            try:
                json.loads(line)
            except ValueError:
                bad += 1
        check(len(lines) > 10 and bad == 0, f"{len(lines) - 1} lines, {bad} that are not a finding")
        said = re.findall(r"option 'findings': cannot write a finding to '.*f\.json': No space left on device; "
                          r"(the \d+ bytes of it that were written are removed|nothing of it was written), "
                          r"and findings go to the text report only from now on", proc.stderr)
        check(len(said) == 1, f"the full disk is said once, with what became of the finding (got {said})")
        check("out-of-bounds=400 in" in proc.stderr and proc.returncode == 0, "the program ran on")
        # the disk is full now: the text report says so, naming its file, and goes on on stderr
        proc = run(["--report-path", f"{mnt}/r.%p.txt"], [EXIT_PATHS, "flood", "3"])
        said = re.findall(r"option 'report_path': cannot write to '([^']*)': No space left on device; reporting on "
                          r"stderr from now on", proc.stderr)
        check(len(said) == 1 and re.fullmatch(re.escape(mnt) + r"/r\.\d+\.txt", said[0]),
              f"report_path's full disk is said once, naming the file (got {said})")
        check("ERROR: hipshadow: out-of-bounds" in proc.stderr and summary_line(proc.stderr), "the report is on stderr")


def case_log_small_disk(tmp):
    """A ring log of 128k on a disk with 2 MB free: its metadata is sized by need (before, 4 MiB
    were reserved up front, and the log failed entirely).  On a disk too small even for the ring,
    the warning names the file, not the template."""
    with Tmpfs(f"{tmp}/mnt", "2m") as mnt:
        proc = run(["--log", f"{mnt}/hs.%p.log", "--option", "log_size=128k"], [SEED003])
        logs = os.listdir(mnt)
        check("post-mortem log" not in proc.stderr, "no warning about the log")
        check(len(logs) == 1 and os.path.getsize(f"{mnt}/{logs[0]}") > 128 * 1024, f"the log was written ({logs})")
    with Tmpfs(f"{tmp}/mnt2", "64k") as mnt:
        proc = run(["--log", f"{mnt}/hs.%p.log", "--option", "log_size=128k"], [SEED003])
        said = re.findall(r"post-mortem log '([^']*)': cannot reserve space", proc.stderr)
        check(len(said) == 1 and re.fullmatch(re.escape(mnt) + r"/hs\.\d+\.log", said[0]),
              f"the warning names the log's file (got {said})")


def case_suppressions_long_line(tmp):
    """A suppressions line longer than 1023 bytes is one line: the tail of a long comment is not
    a rule (before, 'out-of-bounds:main' after 1021 x's silenced the finding)."""
    with open(f"{tmp}/supp", "w") as f:
        f.write("# " + "x" * 1021 + "out-of-bounds:main\n")
        f.write("runtime-error:hipMemcpyDto[" + "H" * 3000 + "]\n")  # a long rule is a rule
    run(["--findings", f"{tmp}/f.json", "--option", f"suppressions={tmp}/supp"], [SEED003])
    got = kinds_in(f"{tmp}/f.json")
    check(got == {"out-of-bounds": 1}, f"the out-of-bounds finding stays, no runtime error (got {got})")


# ---- the launcher and the options text ----

def case_launcher_quotes_values(tmp):
    """A value with a space, a comma or a colon is one value: the launcher quotes it."""
    os.mkdir(f"{tmp}/my dir")
    proc = run(["--findings", f"{tmp}/my dir/f.json", "--log", f"{tmp}/my dir/a,b.log"], [SEED003])
    check(os.path.exists(f"{tmp}/my dir/f.json") and kinds_in(f"{tmp}/my dir/f.json").get("out-of-bounds") == 1,
          "findings in 'my dir/f.json'")
    check(os.path.exists(f"{tmp}/my dir/a,b.log"), "the log is 'my dir/a,b.log'")
    check(not os.path.exists(f"{tmp}/my") and "unknown option" not in proc.stderr, "no 'my', no stray option")

    proc = run(["--findings", f"{tmp}/f.json:exitcode=77"], [SEED003])
    check(proc.returncode == 0, f"a colon in the value sets no exit code (exit {proc.returncode})")
    check(os.path.exists(f"{tmp}/f.json:exitcode=77"), "the findings file is named as given")

    with open(f"{tmp}/s:1.supp", "w") as f:
        f.write("out-of-bounds:main\n")
    run(["--findings", f"{tmp}/g.json", "--option", f"suppressions={tmp}/s:1.supp"], [SEED003])
    check("out-of-bounds" not in kinds_in(f"{tmp}/g.json"), "--option key=value with a colon in the value")
    proc = run(["--option", "log=\"has'both: quotes\""], [SEED003])
    check(proc.returncode == 0 and os.path.exists(f"{tmp}/has'both: quotes"), "an already quoted --option value is kept")
    proc = run(["--findings", "a b'\""], [SEED003])
    check(proc.returncode == 2 and "both quote characters" in proc.stderr, "a value the grammar cannot hold is refused")


def case_launcher_lib_path_with_space(tmp):
    """The launcher and library installed under a directory with a space (the build tree's
    layout: tools/hipshadow, src/libhipshadow.so): LD_PRELOAD cannot hold that path, so the
    launcher refuses, by name, instead of running the program unchecked."""
    lib = subprocess.run([launcher, "--print-lib"], capture_output=True, text=True).stdout.strip()
    root = f"{tmp}/sp ace"
    os.makedirs(f"{root}/tools")
    os.makedirs(f"{root}/src")
    shutil.copy2(launcher, f"{root}/tools/hipshadow")
    shutil.copy2(lib, f"{root}/src/libhipshadow.so")
    proc = run(["--exitcode", "9"], [SEED003], exe=f"{root}/tools/hipshadow")
    check(proc.returncode == 2, f"refused with status 2 (got {proc.returncode})")
    check(f"the preload library's path '{root}/src/libhipshadow.so' has a space or a colon" in proc.stderr,
          "the message names the path and why")
    check("seed003" not in proc.stdout and "hipMemcpyDtoH returned" not in proc.stdout, "the program did not run")
    os.symlink(f"{root}/src/libhipshadow.so", f"{tmp}/libhs.so")  # a link whose own path has no space
    proc = run(["--lib", f"{tmp}/libhs.so", "--findings", f"{tmp}/f.json"], [SEED003], exe=f"{root}/tools/hipshadow")
    check(proc.returncode == 0 and os.path.exists(f"{tmp}/f.json") and
          kinds_in(f"{tmp}/f.json").get("out-of-bounds") == 1, "--lib through such a link: the program runs checked")


def case_long_options(tmp):
    """HIPSHADOW_OPTIONS of 72 KB inherited, alone and then with the launcher's flags: all taken
    (before, cut at 65,535 bytes without a word, and with flags the launcher gave up)."""
    inherited = "verbosity=0:" * 6000
    proc = run([], [SEED003], inherited=inherited + "exitcode=9")
    check(proc.returncode == 9, f"the inherited text's last option, exitcode=9, applies (exit {proc.returncode})")
    proc = run(["--exitcode", "9", "--findings", f"{tmp}/f.json"], [SEED003], inherited=inherited)
    check(proc.returncode == 9, f"--exitcode 9 applies (exit {proc.returncode})")
    check(os.path.exists(f"{tmp}/f.json"), "--findings applies")
    check("hipshadow: option" not in proc.stderr, "no option was refused")


def case_unclosed_quote_inherited(tmp):
    """An unclosed quote in the inherited HIPSHADOW_OPTIONS is named, and the launcher's own
    flags after it still apply (before: swallowed into the value; mode warn, exit 0)."""
    proc = run(["--mode", "block", "--exitcode", "9"], [SEED003], inherited=f"findings='{tmp}/x.json")
    check(proc.returncode == 9, f"--exitcode 9 applies (exit {proc.returncode})")
    check("action: blocked (mode=block)" in proc.stderr, "--mode block applies")
    check(proc.stderr.count(f"option 'findings': value '{tmp}/x.json' has no closing quote (')") == 1,
          "the unclosed quote is named once")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["HS_HARDEN_TMP"] = tmp  # the programs' working directory: relative names land here
        globals()["case_" + sys.argv[1]](tmp)
    sys.exit(1 if failures else 0)
