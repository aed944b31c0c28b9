#!/usr/bin/env python3
"""HIPSHADOW_OPTIONS under a fuzzer (hardening).  A seeded, deterministic driver: each
iteration builds an options string from random keys (every option in src/core/process/options.inc, near
misses, unknown ones), values (good ones, and empty, huge, negative, out of range, trailing junk,
wrong suffix, wrong case, control and high bytes, 10 KB long), separators (':' ',' whitespace, none)
and quotes (closed and not), runs a clean program under the preload with it, and checks:

  * the program always runs: exit status 0, its own output intact;
  * every bad item is named, in order, in exactly one refusal line, and a good item in none
    (the expected outcome comes from a model of the grammar below, which mirrors
    src/core/process/options.c: hs_options_parse);
  * when the string leaves verbosity >= 1, the options in force are the ones the good items set.

Usage: run_options_fuzz.py [ITERATIONS [SEED]] (default 300, 11); paths from HS_LAUNCHER, HS_CASES,
HS_SIMHIP, HS_OPTIONS_INC.  Path-valued options only ever get values inside a missing directory
(or stdout/stderr), so no run writes a file, let alone a log of log_size bytes."""
import os
import random
import re
import subprocess
import sys
import tempfile

launcher, cases, simhip = os.environ["HS_LAUNCHER"], os.environ["HS_CASES"], os.environ["HS_SIMHIP"]
KEY_MAX, VALUE_MAX, SHOW_VALUE, SHOW_LONG = 63, 4095, 64, 40
PROGRAM, PROGRAM_OUT = os.path.join(cases, "clean_inference_loop"), ["clean loop done"]


def load_table(path):
    table = {}
    for m in re.finditer(r'^HS_OPTION\(\s*(\w+)\s*,\s*(\w+)\s*,\s*[^,]*,\s*"([^"]*)"', open(path).read(), re.M):
        table[m.group(2)] = (m.group(1), m.group(3))
    return table


TABLE = load_table(os.environ.get("HS_OPTIONS_INC", os.path.join(os.path.dirname(__file__), "../../src/core/process/options.inc")))
FREE = {k for k, (t, lim) in TABLE.items() if t == "STRING" and not lim}

# ---- the grammar's model (hs_options_parse) ----


def is_sep(c):
    return c in b":," or c in b" \t\n\v\f\r"


def tokenize(text):
    """[(kind, key, value, closed)] as hs_options_parse splits text; kind 'kv' or 'novalue'."""
    items, p, n = [], 0, len(text)
    while p < n:
        while p < n and is_sep(text[p]):
            p += 1
        if p >= n:
            break
        k0 = p
        while p < n and text[p] != ord("=") and not is_sep(text[p]):
            p += 1
        key = text[k0:p]
        if p >= n or text[p] != ord("="):
            items.append(("novalue", key, None, True))
            continue
        p += 1
        quote = text[p] if p < n and text[p] in b"\"'" else None
        if quote is not None:
            p += 1
        v0 = p
        while p < n and (text[p] != quote if quote is not None else not is_sep(text[p])):
            p += 1
        value = text[v0:p]
        closed = quote is None or (p < n and text[p] == quote)
        if quote is not None and closed:
            p += 1
        if not closed:  # refused up to the next separator; the rest is parsed on from there
            p = v0
            while p < n and not is_sep(text[p]):
                p += 1
            value = text[v0:p]
        items.append(("kv", key, value, closed))
    return items


def parse_int(v):
    """strtoll as parse_int_text uses it: the whole text must be the number."""
    s = v[1:] if v[:1] in (b"+", b"-") else v
    if not s[:1].isdigit() or not re.fullmatch(rb"[+-]?[0-9]+", v):
        return None
    x = int(v)
    return x if -2**63 <= x < 2**63 else None


def parse_size(v):
    m = re.fullmatch(rb"([0-9]+)([kKmMgG]?)", v)
    if not m:
        return None
    x = int(m.group(1)) << {b"": 0, b"k": 10, b"m": 20, b"g": 30}[m.group(2).lower()]
    return x if int(m.group(1)) < 2**64 and x < 2**64 else None


def in_range(x, limits, parse):
    lo, _, hi = limits.partition("..")
    return parse(lo.encode()) <= x <= parse(hi.encode()) if hi else True


def value_ok(typ, limits, v):
    """The value as the option stores it (normalised as verbosity=1 prints it), or None if refused."""
    if typ == "STRING" and not limits:
        return v
    if not v:
        return None
    if typ == "BOOL":
        return {b"1": "1", b"true": "1", b"yes": "1", b"0": "0", b"false": "0", b"no": "0"}.get(v)
    if typ in ("MODE", "STRING"):
        return v.decode() if v in [w.encode() for w in limits.split("|")] else None
    x = parse_int(v) if typ == "INT" else parse_size(v)
    if x is None or not in_range(x, limits, parse_int if typ == "INT" else parse_size):
        return None
    return str(x)


def refusal_reason(name, value, closed):
    """The words options.c uses for why a known option's value was refused."""
    typ, limits = TABLE[name]
    if not closed:
        return "has no closing quote"
    if len(value) > VALUE_MAX:
        return "value too long"
    if not value:
        return "empty value"
    if typ in ("INT", "SIZE") and (parse_int if typ == "INT" else parse_size)(value) is not None:
        return "is out of range"
    return "bad value"


def shown(text, limit):
    """put_text: printable ASCII as is, other bytes as \\xNN, '...' when cut."""
    out = "".join(chr(c) if 0x20 <= c < 0x7f else "\\x%02x" % c for c in text[:limit])
    return out + ("..." if len(text) > limit else "")


def expect(text):
    """[(item, None or the text that must name it in its refusal line)], and the final values."""
    out = []
    for kind, key, value, closed in tokenize(text):
        name = key.decode("latin-1")
        if kind == "novalue":
            out.append(((kind, key), f"option key too long ({len(key)} characters" if len(key) > KEY_MAX
                        else f"option '{shown(key, KEY_MAX)}' has no value"))
        elif not key:
            out.append(((kind, key, value), f"a value with no option name before its '=' ('{shown(value, SHOW_LONG)}')"))
        elif len(key) > KEY_MAX:
            out.append(((kind, key, value), f"option key too long ({len(key)} characters"))
        elif name not in TABLE:
            out.append(((kind, key, value), f"unknown option '{shown(key, KEY_MAX)}'"))
        elif not closed or len(value) > VALUE_MAX or value_ok(*TABLE[name], value) is None:
            out.append(((kind, name, value), (f"option '{name}': ", refusal_reason(name, value, closed))))
        else:
            out.append(((kind, name, value_ok(*TABLE[name], value)), None))
    return out


def safe(text):
    """No run may create a file: a path option that would be taken must point into a missing directory."""
    for kind, key, value, closed in tokenize(text):
        name = key.decode("latin-1")
        if kind == "kv" and closed and name in FREE and len(value) <= VALUE_MAX and value:
            if not (value.startswith(b"nodir/") or (name == "report_path" and value in (b"stdout", b"stderr"))):
                return False
    return True

# ---- the generator ----


def good_value(rng, typ, limits):
    if typ == "BOOL":
        return rng.choice([b"1", b"0", b"true", b"false", b"yes", b"no"])
    if typ in ("MODE", "STRING") and limits:
        return rng.choice(limits.split("|")).encode()
    if typ == "STRING":
        return b"nodir/" + rng.choice([b"x", b"f.%p.json", b"a-%h-%e-%r", b"%%"])
    parse = parse_int if typ == "INT" else parse_size
    lo, _, hi = limits.partition("..")
    lo, hi = parse(lo.encode()), parse(hi.encode())
    x = rng.choice([lo, hi, rng.randint(lo, hi)])
    if typ == "SIZE" and x and x % 1024 == 0 and rng.random() < 0.5:
        return b"%d%s" % (x // 1024, rng.choice([b"k", b"K"]))
    return b"%d" % x


def bad_value(rng, typ, limits):
    big = b"9" * rng.randint(20, 40)
    choices = [b"", big, b"-" + big, b"-1", b"-9223372036854775809", b"18446744073709551616", b"0x10", b"1.5",
               b"1e9", b"12q", b"1kk", b"5kb", b"5b", b"+", b"-", b"++1", b"WARN", b"Yes", b"on", b"2", b"loud",
               b"\x01\x7f\xff", bytes(rng.randint(1, 255) for _ in range(rng.randint(1, 8))).replace(b"\0", b"\1"),
               b"a" * 10240, b"'unclosed", b'"unclosed too', b"1'", b"true!"]
    if typ in ("INT", "SIZE") and ".." in limits:
        parse = parse_int if typ == "INT" else parse_size
        lo, _, hi = limits.partition("..")
        choices += [b"%d" % (parse(hi.encode()) + 1), b"%d" % (parse(lo.encode()) - 1)]
    return rng.choice(choices)


def random_item(rng):
    names = sorted(TABLE)
    r = rng.random()
    if r < 0.35:
        name = rng.choice(names)
        v = good_value(rng, *TABLE[name])
        if rng.random() < 0.2 and not any(c in v for c in b"'\""):
            q = rng.choice([b"'", b'"'])
            v = q + v + q
        return name.encode() + b"=" + v
    if r < 0.7:
        name = rng.choice(names)
        return name.encode() + b"=" + bad_value(rng, *TABLE[name])
    if r < 0.8:
        name = rng.choice(names)
        near = rng.choice([name.upper(), name[:-1], name + "s", name.replace("_", "-"), "x" + name, "bogus"])
        return near.encode() + b"=" + good_value(rng, "BOOL", "")
    if r < 0.85:
        return rng.choice(names).encode()  # no '='
    if r < 0.88:
        return b"=" + rng.choice([b"1", b"warn", b"x" * 50])
    if r < 0.91:
        return b"k" * rng.choice([64, 100, 10240]) + rng.choice([b"", b"=1"])
    if r < 0.94:  # a quoted value with separators inside
        return rng.choice(names).encode() + b"='a:b, c'"
    return bytes(rng.choice(b"abz=:, \t\n'\"\x01\x7f\xff0-9") for _ in range(rng.randint(1, 30)))


def random_options(rng):
    while True:
        seps = [b":", b",", b" ", b"\t", b"\n", b"::", b", ", b":\n:", b""]
        parts = [random_item(rng) for _ in range(rng.randint(0, 10))]
        text = b""
        for p in parts:
            text += (rng.choice(seps) if text else rng.choice([b"", b"", b":", b" "])) + p
        if rng.random() < 0.5:
            text += b":verbosity=1"
        if rng.random() < 0.05:
            text = rng.choice([b"", b":::", b" ", b"a" * 10240, b"mode=" + b"x" * 10240])
        if safe(text):
            return text

# ---- running ----


def refusal_lines(stderr):
    """hipshadow's lines that refuse an option (not its messages about files, not help=1's list)."""
    ends = ("keeping the default (", "keeping the value set before (", "(ignored; help=1 lists the options)",
            "=VALUE)", "; ignored", "; ignored with its value")
    lines = []
    for line in stderr.splitlines():
        if line.startswith("hipshadow: ") and not line.startswith("hipshadow: options in force") and (
                any(e in line for e in ends[:2]) or line.endswith(ends[2:])):
            lines.append(line)
    return lines


def in_force(stderr):
    m = re.search(r"^hipshadow: options in force:(.*)$", stderr, re.M)
    if not m:
        return None
    return {k: v for k, v in re.findall(r" (\w+)=(\S*)", m.group(1)) if k in TABLE and TABLE[k][0] != "STRING"}


def main():
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    if "ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ:
        iterations = max(1, iterations // 3)  # tests/sanitizers.sh: each run is 5-10x slower there
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 11
    rng = random.Random(seed)
    lib = subprocess.run([launcher, "--print-lib"], capture_output=True, text=True).stdout.strip().encode()
    failures = []

    def run(options, cwd):
        env = {k.encode(): v.encode() for k, v in os.environ.items() if k not in ("HIPSHADOW_OPTIONS", "LD_PRELOAD")}
        env.update({b"LD_LIBRARY_PATH": simhip.encode(), b"LD_PRELOAD": lib, b"HIPSHADOW_OPTIONS": options})
        proc = subprocess.run([PROGRAM], env=env, cwd=cwd, capture_output=True, timeout=60)
        return proc.returncode, proc.stdout.decode("latin-1"), proc.stderr.decode("latin-1")

    with tempfile.TemporaryDirectory() as tmp:
        status, _, err = run(b"verbosity=1", tmp)
        defaults = in_force(err)
        if status != 0 or not defaults or set(defaults) != {k for k, (t, _) in TABLE.items() if t != "STRING"}:
            print(f"FAIL: the baseline run (verbosity=1) does not list the options of options.inc: {err[-2000:]}")
            return 1
        defaults["verbosity"] = "0"  # the baseline set it; every other value shown is the default
        stats = {"runs": 0, "bad items": 0, "good items": 0}
        for i in range(iterations):
            text = random_options(rng)
            status, out, err = run(text, tmp)
            stats["runs"] += 1
            problems = []
            if status != 0:
                problems.append(f"exit status {status}")
            own = [l for l in out.splitlines() if not l.startswith(("SUMMARY: hipshadow", "hipshadow:"))]
            if own != PROGRAM_OUT:
                problems.append(f"the program's output is not intact: {own[:5]}")
            exp = expect(text)
            bad = [(item, name) for item, name in exp if name is not None]
            stats["bad items"] += len(bad)
            stats["good items"] += len(exp) - len(bad)
            lines = refusal_lines(err)
            if len(lines) != len(bad):
                problems.append(f"{len(lines)} refusal lines for {len(bad)} bad items: {bad} / {lines}")
            else:
                for (item, name), line in zip(bad, lines):
                    for words in (name if isinstance(name, tuple) else (name,)):
                        if words not in line:
                            problems.append(f"bad item {item!r}: {words!r} is not in its line {line!r}")
            finals = dict(defaults)
            for (kind, *rest), name in exp:
                if name is None and TABLE[rest[0]][0] != "STRING":
                    finals[rest[0]] = rest[1]
            if int(finals.get("verbosity", "0")) >= 1:
                now = in_force(err) or {}
                if now != finals:
                    problems.append("options in force (shown, expected) differ: " +
                                    str({k: (now.get(k), finals[k]) for k in finals if now.get(k) != finals[k]}))
            brief = repr(text[:300]) + (f"... ({len(text)} bytes)" if len(text) > 300 else "")
            if problems:
                failures.append(f"iteration {i}, HIPSHADOW_OPTIONS={brief}:\n    " +
                                "\n    ".join(p[:600] for p in problems))
            for f in os.listdir(tmp):  # nothing may be created: the path options point into nodir/
                failures.append(f"iteration {i} created {f!r} (HIPSHADOW_OPTIONS={brief})")
                os.unlink(os.path.join(tmp, f))
    print(f"options fuzz, seed {seed}: {stats['runs']} runs, {stats['bad items']} bad items named, "
          f"{stats['good items']} good items taken")
    for f in failures[:20]:
        print("FAIL:", f)
    if len(failures) > 20:
        print(f"... and {len(failures) - 20} more failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
