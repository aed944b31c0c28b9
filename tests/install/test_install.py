#!/usr/bin/env python3
"""Install tests: `meson install --destdir` into a temporary directory, then use the installed
tree the way a user would.  Usage: test_install.py tree|downstream|launcher|layouts.
Paths come from the environment that tests/install/meson.build sets.  Everything is made under
one temporary directory, removed at the end."""
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

E = os.environ
BUILD, SOURCE, MESON = E["HS_BUILD_ROOT"], E["HS_SOURCE_ROOT"], shlex.split(E["HS_MESON"])
VERSION, HAVE_CUDA = E["HS_VERSION"], E["HS_HAVE_CUDA"] == "1"
CASES, SIMHIP = E["HS_CASES"], E["HS_SIMHIP"]

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def run(cmd, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    return subprocess.run(cmd, **kw)


def configured(name):
    """An installation directory as meson has it: absolute, or relative to the prefix."""
    return os.path.join(E["HS_PREFIX"], E["HS_" + name.upper()])


def under(root, path):
    """path (absolute) inside a DESTDIR root, as meson install --destdir puts it."""
    return os.path.join(root, path.lstrip("/"))


def meson_install(root):
    p = run(MESON + ["install", "--no-rebuild", "--destdir", root, "-C", BUILD])
    if p.returncode != 0:
        print(p.stdout, p.stderr, file=sys.stderr)
        raise SystemExit(f"meson install failed with status {p.returncode}")
    return dict(bin=under(root, configured("bindir")), lib=under(root, configured("libdir")),
                include=under(root, configured("includedir")), man=under(root, configured("mandir")))


def clean_env(**extra):
    env = dict(E)
    for k in ("HIPSHADOW_OPTIONS", "HIPSHADOW_LIB", "LD_PRELOAD"):
        env.pop(k, None)
    env.update(extra)
    return env


def test_tree(tmp):
    d = meson_install(os.path.join(tmp, "root"))
    for exe in ("hipshadow", "hipshadow-report"):
        path = os.path.join(d["bin"], exe)
        check(os.path.isfile(path) and os.access(path, os.X_OK), f"{path} is not an installed executable")
    for header in ("hipshadow.h", "log_format.h"):
        check(os.path.isfile(os.path.join(d["include"], "hipshadow", header)), f"include/hipshadow/{header} missing")
    pc = os.path.join(d["lib"], "pkgconfig", "hipshadow.pc")
    if check(os.path.isfile(pc), f"{pc} missing"):
        text = open(pc).read()
        check(f"Version: {VERSION}" in text, f"hipshadow.pc lacks 'Version: {VERSION}'")
        check("Cflags: -I${includedir}" in text, "hipshadow.pc lacks 'Cflags: -I${includedir}'")
    libs = ["libhipshadow.so"] + (["libhipshadow-cuda.so"] if HAVE_CUDA else [])
    for lib in libs:
        check(os.path.isfile(os.path.join(d["lib"], "hipshadow", lib)), f"<libdir>/hipshadow/{lib} missing")
    check_man_page(os.path.join(d["man"], "man1", "hipshadow.1"))
    for root, _, files in os.walk(os.path.join(tmp, "root")):
        for f in files:
            print(os.path.relpath(os.path.join(root, f), os.path.join(tmp, "root")))


def check_man_page(page):
    """The man page is installed, and man (or groff) reads it without a warning: its sections,
    every option and every finding kind are there."""
    if not check(os.path.isfile(page), f"{page} missing"):
        return
    if shutil.which("man"):
        cmd = ["man", "-l", page]
    elif shutil.which("groff"):
        cmd = ["groff", "-man", "-Tutf8", page]
    else:
        print("man page: installed; not rendered (neither man nor groff is installed)")
        return
    env = clean_env(MANWIDTH="100", MANPAGER="cat", PAGER="cat", MAN_KEEP_FORMATTING="0")
    p = run(cmd, env=env)
    text = p.stdout.replace("\u2010", "-").replace("\u2212", "-")
    text = "".join(c for i, c in enumerate(text) if c != "\b" and (i + 1 >= len(text) or text[i + 1] != "\b"))
    check(p.returncode == 0, f"{' '.join(cmd)} failed: {p.returncode} {p.stderr[-2000:]!r}")
    check("warning" not in p.stderr, f"{' '.join(cmd)} warned: {p.stderr[-2000:]!r}")
    for want in ("NAME", "SYNOPSIS", "HIPSHADOW_OPTIONS", "FINDING KINDS", "stack_depot_max", "use-after-free",
                 "region-permission", "copy-pitch"):
        check(want in text, f"the rendered man page lacks {want!r}")
    print(f"man page: {page} read by {cmd[0]}, {len(text.splitlines())} lines")


def test_downstream(tmp):
    if not E["HS_PKG_CONFIG"]:
        print("SKIP: no pkg-config")
        raise SystemExit(77)
    root = os.path.join(tmp, "root")
    d = meson_install(root)
    pcdir = os.path.join(d["lib"], "pkgconfig")
    # Only the DESTDIR tree: PKG_CONFIG_LIBDIR replaces the default search path, the sysroot maps
    # the .pc's /prefix paths into the tree.
    pkg_env = clean_env(PKG_CONFIG_LIBDIR=pcdir, PKG_CONFIG_PATH="", PKG_CONFIG_SYSROOT_DIR=root,
                        PKG_CONFIG_ALLOW_SYSTEM_CFLAGS="1")
    pkg_config = shlex.split(E["HS_PKG_CONFIG"])
    p = run(pkg_config + ["--modversion", "hipshadow"], env=pkg_env)
    check(p.returncode == 0 and p.stdout.strip() == VERSION,
          f"pkg-config --modversion hipshadow: status {p.returncode}, {p.stdout.strip()!r} {p.stderr.strip()!r}")
    p = run(pkg_config + ["--cflags", "--libs", "hipshadow"], env=pkg_env)
    if not check(p.returncode == 0, f"pkg-config --cflags --libs hipshadow failed: {p.stderr.strip()}"):
        return
    flags = shlex.split(p.stdout)
    print("pkg-config --cflags --libs hipshadow:", p.stdout.strip())
    cc = shlex.split(E["HS_CC"])
    prog = os.path.join(SOURCE, "tests", "install", "downstream.c")
    exe = os.path.join(tmp, "downstream")
    # The headers must come from the installed tree, not from the source tree or /usr/include.
    p = run(cc + ["-M", prog] + [f for f in flags if not f.startswith("-l")], cwd=tmp)
    if check(p.returncode == 0, f"cc -M failed: {p.stderr}"):
        deps = p.stdout.replace("\\\n", " ").split()
        for header in ("hipshadow.h", "log_format.h"):
            want = os.path.join(d["include"], "hipshadow", header)
            check(want in deps, f"{header} not taken from the installed tree ({want}): {deps}")
    p = run(cc + ["-Wall", "-Wextra", "-o", exe, prog] + flags, cwd=tmp)
    if not check(p.returncode == 0, f"downstream program did not build: {p.stderr}"):
        return
    check(not p.stderr.strip(), f"downstream build warned: {p.stderr}")
    p = run([exe], env=clean_env(), cwd=tmp)
    check(p.returncode == 0 and "region_register=-1 name_allocation=-1 region_unregister=-1" in p.stdout,
          f"without hipshadow the API should answer -1: status {p.returncode}, {p.stdout!r} {p.stderr!r}")
    p = run([os.path.join(d["bin"], "hipshadow"), "--", exe], env=clean_env(), cwd=tmp)
    print(p.stdout, p.stderr)
    check(p.returncode == 0 and "region_register=0 name_allocation=-1 region_unregister=0" in p.stdout,
          f"under the installed hipshadow the API should work: status {p.returncode}, {p.stdout!r} {p.stderr!r}")


def test_launcher(tmp):
    d = meson_install(os.path.join(tmp, "root"))
    hs = os.path.join(d["bin"], "hipshadow")
    lib = os.path.realpath(os.path.join(d["lib"], "hipshadow", "libhipshadow.so"))
    p = run([hs, "--version"], env=clean_env())
    check(p.returncode == 0 and p.stdout == f"hipshadow {VERSION}\n", f"--version: {p.returncode} {p.stdout!r}")
    p = run([hs, "--help"], env=clean_env())
    check(p.returncode == 0 and "--print-lib" in p.stdout and "--version" in p.stdout,
          f"--help does not document --print-lib and --version: {p.stdout!r}")
    p = run([hs, "--print-lib"], env=clean_env())
    check(p.returncode == 0 and p.stdout == lib + "\n", f"--print-lib: {p.returncode} {p.stdout!r}, want {lib}")
    if HAVE_CUDA:
        cuda_lib = os.path.realpath(os.path.join(d["lib"], "hipshadow", "libhipshadow-cuda.so"))
        for args in (["--cuda", "--print-lib"], ["--print-lib", "--cuda"]):
            p = run([hs] + args, env=clean_env())
            check(p.returncode == 0 and p.stdout == cuda_lib + "\n", f"{' '.join(args)}: {p.returncode} {p.stdout!r}")
    # The program runs with the installed library preloaded.
    p = run([hs, "--", "sh", "-c", 'printf %s "$LD_PRELOAD"'], env=clean_env())
    check(p.stdout == lib, f"LD_PRELOAD under the installed launcher is {p.stdout!r}, want {lib}")

    # A planted bug, found by the installed launcher; its log read by the installed report tool.
    logs = os.path.join(tmp, "logs")
    os.mkdir(logs)
    findings = os.path.join(tmp, "findings.%p.json")
    p = run([hs, "--findings", findings, "--log", os.path.join(logs, "run.%p.log"), "--",
             os.path.join(CASES, "use_after_free")], env=clean_env(LD_LIBRARY_PATH=SIMHIP), cwd=tmp)
    print(p.stderr)
    check(p.returncode == 0, f"use_after_free exited {p.returncode}")
    check("SUMMARY: hipshadow: 1 finding (1 error): use-after-free=1 in " in p.stderr,
          "the installed launcher's report lacks the use-after-free SUMMARY")
    check("hipshadow: hipMemcpy then returned hipErrorIllegalAddress (700), as the use-after-free above explains"
          in p.stderr, "the installed launcher's report lacks the runtime's refusal, said with the use-after-free")
    kinds = []
    for fname in glob.glob(os.path.join(tmp, "findings.*.json")):
        kinds += [json.loads(line)["kind"] for line in open(fname)]
    check(kinds == ["use-after-free"], f"findings: {kinds}")
    logfiles = sorted(glob.glob(os.path.join(logs, "*")))
    if check(logfiles, "no post-mortem log written"):
        p = run([hs, "report"] + logfiles, env=clean_env())
        check(p.returncode == 0 and "use-after-free" in p.stdout,
              f"installed 'hipshadow report' did not show the finding: {p.returncode} {p.stdout!r} {p.stderr!r}")


def test_layouts(tmp):
    """The launcher finds <libdir>/hipshadow from <bindir> whatever the two are: a second,
    launcher-only configuration per layout, its files placed as meson install would."""
    built_lib = os.path.join(BUILD, "src", "libhipshadow.so")
    layouts = [
        (["--prefix=/opt/hs", "--bindir=sbin/tools", "--libdir=lib64/odd"], "/opt/hs/sbin/tools", "/opt/hs/lib64/odd"),
        (["--prefix=/opt/hs", "--libdir=/var/lib/hsx"], "/opt/hs/bin", "/var/lib/hsx"),
        (["--prefix=/usr", "--libdir=lib"], "/usr/bin", "/usr/lib"),
    ]
    for n, (args, bindir, libdir) in enumerate(layouts):
        b = os.path.join(tmp, f"build{n}")
        p = run(MESON + ["setup", b, SOURCE] + args, timeout=300)
        if not check(p.returncode == 0, f"meson setup {args} failed: {p.stdout[-2000:]} {p.stderr[-2000:]}"):
            continue
        p = run(MESON + ["compile", "-C", b, "tools/hipshadow"], timeout=300)
        if not check(p.returncode == 0, f"building the launcher for {args} failed: {p.stdout[-2000:]}"):
            continue
        root = os.path.join(tmp, f"root{n}")
        hs = under(root, bindir + "/hipshadow")
        lib = under(root, libdir + "/hipshadow/libhipshadow.so")
        os.makedirs(os.path.dirname(hs))
        os.makedirs(os.path.dirname(lib))
        shutil.copy2(os.path.join(b, "tools", "hipshadow"), hs)
        shutil.copy2(built_lib, lib)
        # Straight, and through a symlink elsewhere (as from a PATH directory).
        link = os.path.join(tmp, f"links{n}", "hipshadow")
        os.makedirs(os.path.dirname(link))
        os.symlink(hs, link)
        for exe in (hs, link):
            p = run([exe, "--print-lib"], env=clean_env())
            check(p.returncode == 0 and p.stdout == os.path.realpath(lib) + "\n",
                  f"{args}: {exe} --print-lib gave {p.returncode} {p.stdout!r} {p.stderr!r}, want {lib}")
        p = run([hs, "--", "sh", "-c", 'printf %s "$LD_PRELOAD"'], env=clean_env())
        check(p.stdout == os.path.realpath(lib), f"{args}: LD_PRELOAD is {p.stdout!r}, want {lib}")
        # Moved away from its libraries it falls back to the configured absolute directory, and
        # says where it looked.
        away = os.path.join(tmp, f"away{n}", "hipshadow")
        os.makedirs(os.path.dirname(away))
        shutil.copy2(hs, away)
        p = run([away, "--print-lib"], env=clean_env())
        if os.path.exists(libdir + "/hipshadow/libhipshadow.so"):
            check(p.returncode == 0 and p.stdout == os.path.realpath(libdir + "/hipshadow/libhipshadow.so") + "\n",
                  f"{args}: moved launcher did not fall back to {libdir}/hipshadow: {p.stdout!r} {p.stderr!r}")
        else:
            check(p.returncode == 2 and f"{libdir}/hipshadow" in p.stderr,
                  f"{args}: moved launcher should name {libdir}/hipshadow: {p.returncode} {p.stderr!r}")


def main():
    tests = dict(tree=test_tree, downstream=test_downstream, launcher=test_launcher, layouts=test_layouts)
    tmp = tempfile.mkdtemp(prefix="hs-install-")
    try:
        tests[sys.argv[1]](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in failures:
        print("FAIL:", f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
