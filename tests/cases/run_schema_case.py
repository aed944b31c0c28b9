#!/usr/bin/env python3
"""One findings schema, two writers: a case program runs under the preload with findings= and
log=, then `hipshadow report --format json` reads the log back; every finding must come out of
both with the fields include/hipshadow/finding_schema.inc lists, of the types it gives, and the
same values wherever both writers know them.
Usage: run_schema_case.py PROGRAM [OPTIONS] (HS_LAUNCHER, HS_CASES, HS_SIMHIP from meson)."""
import json
import os
import re
import subprocess
import sys
import tempfile

launcher, cases, simhip = os.environ["HS_LAUNCHER"], os.environ["HS_CASES"], os.environ["HS_SIMHIP"]
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include", "hipshadow",
                      "finding_schema.inc")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def load_schema():
    """{name: (type, writers)} from the HS_FIELD lines."""
    text = open(SCHEMA).read()
    fields = {m.group(1): (m.group(2), m.group(3))
              for m in re.finditer(r"^HS_FIELD\((\w+),\s*(HS_T_\w+),\s*(HS_W_\w+),", text, re.M)}
    if not fields:
        raise SystemExit(f"no HS_FIELD line in {SCHEMA}")
    return fields


def type_ok(t, v):
    nullable = t.endswith("_OR_NULL")
    base = t[:-len("_OR_NULL")] if nullable else t
    if v is None:
        return nullable
    return {
        "HS_T_STRING": lambda: isinstance(v, str),
        "HS_T_HEX": lambda: isinstance(v, str) and re.fullmatch(r"0x[0-9a-f]+", v) is not None,
        "HS_T_UINT": lambda: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "HS_T_INT": lambda: isinstance(v, int) and not isinstance(v, bool),
        "HS_T_OBJECT": lambda: isinstance(v, dict),
        "HS_T_ARRAY": lambda: isinstance(v, list),
        "HS_T_STRINGS": lambda: isinstance(v, list) and all(isinstance(x, str) for x in v),
    }[base]()


def check_writer(schema, who, finding, own):
    """Every field is the schema's, allowed to this writer, of its type; the common ones all there."""
    for name, value in finding.items():
        if name not in schema:
            check(False, f"{who}: field {name!r} is not in finding_schema.inc")
            continue
        t, writers = schema[name]
        check(writers in ("HS_W_BOTH", "HS_W_SHARED", own), f"{who}: field {name!r} is {writers}, not written by this writer")
        check(type_ok(t, value), f"{who}: field {name!r} = {value!r} is not {t}")
    for name, (t, writers) in schema.items():
        if writers == "HS_W_BOTH":
            check(name in finding, f"{who}: field {name!r} missing (kind {finding.get('kind')})")


def without_stacks(v):
    """A value with every "stack" array (frame strings) replaced by its length: the two writers name
    the same frames, the offline reader perhaps better."""
    if isinstance(v, dict):
        return {k: (len(x) if k == "stack" and isinstance(x, list) else without_stacks(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [without_stacks(x) for x in v]
    return v


def main():
    program, options = sys.argv[1], sys.argv[2:]
    args, expect = [], None  # --args A,B: the program's arguments; --expect FIELD: some finding has it
    while options and options[0] in ("--args", "--expect"):
        if options[0] == "--args":
            args = options[1].split(",")
        else:
            expect = options[1]
        options = options[2:]
    schema = load_schema()
    with tempfile.TemporaryDirectory() as tmp:
        findings = os.path.join(tmp, "findings.jsonl")
        opts = ["--option", "findings=" + findings, "--option", "log=" + os.path.join(tmp, "hs.%p.log")]
        for o in options:
            opts += ["--option", o]
        env = dict(os.environ, LD_LIBRARY_PATH=simhip)
        env.pop("HIPSHADOW_OPTIONS", None)
        proc = subprocess.run([launcher] + opts + ["--", os.path.join(cases, program)] + args, env=env,
                              capture_output=True, text=True, timeout=300)
        live = [json.loads(line) for line in open(findings)] if os.path.exists(findings) else []
        logs = sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.startswith("hs.") and f.endswith(".log"))
        rep = subprocess.run([launcher, "report", "--format", "json"] + logs, capture_output=True, text=True)
        check(rep.returncode == 0, f"report --format json exited {rep.returncode}: {rep.stderr[-500:]}")
        data = json.loads(rep.stdout) if rep.returncode == 0 else {"events": []}
    offline = [e["record"] for e in data["events"] if e["record"].get("type") == "finding"]
    check(len(live) > 0, f"{program}: no finding in the findings file (exit {proc.returncode}): {proc.stderr[-1500:]}")
    check(len(live) == len(offline), f"{program}: {len(live)} findings in the file, {len(offline)} in the log")
    live.sort(key=lambda f: (f["time_ns"], f["kind"]))
    offline.sort(key=lambda f: (f["time_ns"], f["kind"]))
    for i, (a, b) in enumerate(zip(live, offline)):
        check_writer(schema, f"findings file #{i}", a, "HS_W_LIVE")
        check_writer(schema, f"report --format json #{i}", b, "HS_W_LOG")
        for name, (t, writers) in schema.items():
            if writers != "HS_W_BOTH" or a.get(name) is None or b.get(name) is None:
                continue
            if name == "stack":  # the same frames; the offline reader may name them better
                check(len(a[name]) == len(b[name]), f"#{i} {a['kind']}: {len(a[name])} frames in the findings "
                      f"file, {len(b[name])} in the log")
            else:
                check(a[name] == b[name], f"#{i} {a['kind']}: {name} is {a[name]!r} in the findings file, "
                      f"{b[name]!r} in the log")
        for name, (t, writers) in schema.items():  # said where it applies: by both, the same
            if writers != "HS_W_SHARED":
                continue
            check((name in a) == (name in b), f"#{i} {a['kind']}: {name} is "
                  f"{'only in the findings file' if name in a else 'only in the log'}")
            if name in a and name in b:
                check(without_stacks(a[name]) == without_stacks(b[name]), f"#{i} {a['kind']}: {name} is {a[name]!r} "
                      f"in the findings file, {b[name]!r} in the log")
        if expect:
            check(any(expect in f for f in live), f"{program}: no finding in the findings file says {expect!r}")
        check(set(a) & {n for n, (_, w) in schema.items() if w == "HS_W_BOTH"} ==
              set(b) & {n for n, (_, w) in schema.items() if w == "HS_W_BOTH"}, f"#{i}: the common fields differ")
    print(f"{program}: {len(live)} findings compared field by field")


main()
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
