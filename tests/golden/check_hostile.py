#!/usr/bin/env python3
"""`hipshadow report` against hostile and huge logs: one case per run.
Usage: check_hostile.py REPORT MAKE_GOLDEN GOLDEN_DIR CASE
  markup_injection    strings from the log stay data: the HTML runs nothing and has no element it
                      did not write (rendered in headless Chromium), JSON and Perfetto parse, CSV
                      keeps its 27 columns
  invalid_bytes       every output is valid UTF-8 (JSON, SARIF, Perfetto, JUnit parse strictly), SARIF
                      URIs are percent-encoded, the text report has no control character and no line
                      a name started, CSV fields are never formulas
  unterminated_header a header field without its terminator ends at its size
  output_refuses_links  -o never follows a symbolic link nor truncates what it points to
  fifo_module         a module path, or its debug link, naming a FIFO does not hang the report
  sparse_log_memory   an 8 GiB sparse log is read in a few MiB and a moment
  write_errors        a full disk (/dev/full) fails the report with a message, -o or standard output"""
import csv
import io
import json
import os
import re
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import urllib.parse
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

report, make_golden, golden = (os.path.abspath(a) for a in sys.argv[1:4])
failures = []
FORMATS = ("text", "json", "csv", "perfetto", "html", "sarif", "junit")


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


def run_report(args, timeout=60, **kw):
    return subprocess.run([report] + args, capture_output=True, timeout=timeout, **kw)


def hostile_log(tmp, module="/nonexistent/module.so", offset=0x1000):
    path = os.path.join(tmp, "hostile.hslog")
    subprocess.run([make_golden, "--hostile", path, module, "%x" % offset], check=True)
    return path


def parsed(fmt, text):
    try:
        return json.loads(text)
    except ValueError as e:
        check(False, f"{fmt} does not parse: {e}")
        return None


def outputs(log):
    got = {}
    for fmt in FORMATS:
        proc = run_report(["--format", fmt, log])
        check(proc.returncode == 0, f"{fmt}: exit status {proc.returncode}: {proc.stderr[-300:]!r}")
        got[fmt] = proc.stdout
    return got


class Elements(HTMLParser):
    """Every element and attribute of a page, as a browser's DOM holds them."""
    def __init__(self):
        super().__init__()
        self.tags, self.attrs = set(), set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.update(name for name, _ in attrs)


def rendered_dom(tmp, page):
    """The DOM after Chromium loaded the page and ran whatever scripts it has (None: no browser),
    with the flags of tests/cases/run_log_case.py's html_renders."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("SKIP (part): chromium is not installed: the page is parsed, not rendered")
        return None
    path = os.path.join(tmp, "report.html")
    open(path, "wb").write(page)
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={tmp}/profile", "--dump-dom", "file://" + path],
                          capture_output=True, timeout=120)
    check(proc.returncode == 0 and b"</html>" in proc.stdout, f"chromium rendered the page: {proc.stderr[-300:]!r}")
    return proc.stdout.decode("utf-8", "replace")


def case_markup_injection(tmp):
    got = outputs(hostile_log(tmp))
    page = got["html"]
    written = Elements()
    written.feed(page.decode("utf-8", "replace"))
    check(not {"script", "img"} & written.tags, f"the page holds elements the log named: {written.tags}")
    dom = rendered_dom(tmp, page)
    if dom is not None:
        seen = Elements()
        seen.feed(dom)
        check(not {"script", "img", "b"} & seen.tags, f"the rendered DOM holds injected elements: {seen.tags}")
        check("data-pwned" not in seen.attrs and "onerror" not in seen.attrs,
              f"a script from the log ran or an attribute was injected: {sorted(seen.attrs)}")
        check("hipMemcpyDtoH</title><script>" in dom.replace("&lt;", "<").replace("&gt;", ">"),
              "the API name is shown as text")
    for fmt in ("perfetto", "sarif"):
        parsed(fmt, got[fmt].decode("utf-8", "replace"))
    doc = parsed("json", got["json"].decode("utf-8", "replace")) or {"events": []}
    apis = {e["record"].get("api") for e in doc["events"]}
    check(any(a and a.startswith("hipMemcpyDtoH</title><script>") and '","x,y"' in a for a in apis),
          f"the API name is kept whole in JSON: {apis}")
    found = [e["record"] for e in doc["events"] if e["record"].get("type") == "finding"]
    detailed = [f for f in found if "cause" in f]
    check(len(detailed) == 1 and detailed[0]["cause"].startswith("cause\nSUMMARY: hipshadow: no findings\x1b[2J\",\"x")
          and detailed[0]["cause_rule"].startswith("<script>"), f"the cause is kept whole in JSON: {detailed[:1]}")
    check(detailed and detailed[0].get("race", {}).get("other", {}).get("kernel", "").startswith("k2\x1b]0;title")
          and detailed[0].get("uninit", {}).get("never_written") == [
              {"ptr": hex(0x7fe70fe00000 + 252), "offset": 252, "bytes": 4}],
          f"the race and the ranges are in JSON: {detailed[:1]}")
    text = got["text"].decode("utf-8", "replace")
    check("\x1b" not in text and not any(l.lstrip().startswith("SUMMARY") for l in text.splitlines()),
          "the text report's lines from the finding's parts hold no terminal control and start no line of their own")
    check("cause: cause\\x0aSUMMARY" in text and "never written: [0x" in text,
          "the text report says the cause and the ranges")
    rows = list(csv.reader(io.StringIO(got["csv"].decode("utf-8", "replace"), newline="")))
    check(len(rows) == 6, f"CSV: a header and 5 rows (2 copies, 3 launches), got {len(rows)}")
    bad = [len(r) for r in rows if len(r) != 27]
    check(not bad, f"CSV rows with other than 27 columns: {bad}")


def strict_utf8(fmt, data):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        check(False, f"{fmt} is not UTF-8: {e}")
        return data.decode("utf-8", "replace")


def weird_module(tmp):
    """A shared object whose source file's name needs escaping everywhere; (path, function
    offset, source name) or None without a C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        print("SKIP (part): no C compiler: SARIF locations are not checked")
        return None
    src_dir = os.path.join(tmp.encode(), b"src dir#1")
    os.mkdir(src_dir)
    src = os.path.join(src_dir, b"we ird%<x>\xff.c")
    open(src, "w").write("int hostile_fn(int x)\n{\n    return x * 3 + 1;\n}\n")
    lib = os.path.join(tmp, "libweird.so")
    subprocess.run([cc, "-g", "-O0", "-shared", "-fPIC", "-o", lib, src], check=True)
    nm = subprocess.run(["nm", lib], capture_output=True, text=True, check=True).stdout
    addr = int(next(line.split()[0] for line in nm.splitlines() if line.endswith(" hostile_fn")), 16)
    return lib, addr + 8, src


def case_invalid_bytes(tmp):
    module = weird_module(tmp)
    log = hostile_log(tmp, *module[:2]) if module else hostile_log(tmp)
    got = outputs(log)
    for fmt in ("json", "perfetto", "sarif"):
        parsed(fmt, strict_utf8(fmt, got[fmt]))
    try:
        ET.fromstring(got["junit"])  # strict: well-formed XML 1.0, UTF-8
    except ET.ParseError as e:
        check(False, f"JUnit is not well-formed XML: {e}")
    if shutil.which("xmllint"):
        proc = subprocess.run(["xmllint", "--noout", "-"], input=got["junit"], capture_output=True)
        check(proc.returncode == 0, f"xmllint rejects the JUnit: {proc.stderr[-300:]!r}")
    strict_utf8("html", got["html"])
    text = strict_utf8("text", got["text"])
    controls = sorted({"%02x" % ord(c) for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0})
    check(not controls, f"control characters in the text report: {controls}")
    check("\u202e" not in text, "a bidirectional override in the text report")
    check(not any(line.startswith("SUMMARY") for line in text.splitlines()), "a name started a SUMMARY line")
    for row in csv.reader(io.StringIO(strict_utf8("csv", got["csv"]), newline="")):
        for field in row:
            check(not field or field[0] not in "=+-@\t\r", f"a CSV field a spreadsheet runs as a formula: {field!r}")
    sarif = parsed("sarif", got["sarif"].decode("utf-8", "replace"))
    if module and sarif:
        uris = [loc["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]
                for loc in r.get("locations", [])]
        check(uris, "SARIF: the finding is located in the weird source file")
        for uri in uris:
            check(re.fullmatch(r"[A-Za-z0-9._~/%-]*", uri) is not None, f"SARIF uri not percent-encoded: {uri!r}")
            check(urllib.parse.unquote_to_bytes(uri).endswith(module[2][-20:]), f"SARIF uri {uri!r} is not the source file")


def case_unterminated_header(tmp):
    got = outputs(hostile_log(tmp))
    marker = b"OPTIONS-FIELD-IS-NOT-THE-COMMAND"
    for fmt in ("html", "text", "perfetto", "csv", "sarif", "junit"):
        check(marker not in got[fmt], f"{fmt}: the command line runs into the next header field")
    doc = parsed("json", got["json"].decode("utf-8", "replace"))
    if not doc:
        return
    log = doc["logs"][0]
    check(len(log["command_line"]) == 2048 and log["options"] == marker.decode(),
          f"JSON: command_line of {len(log['command_line'])} characters, options {log['options']!r}")
    check(len(log["host"]) == 64 and log["executable"].startswith('/evil/"exe"'),
          f"JSON: host {log['host']!r} (64 bytes, one not UTF-8), executable {log['executable']!r}")


def case_output_refuses_links(tmp):
    log = os.path.join(golden, "rank0.hslog")
    target = os.path.join(tmp, "precious")
    open(target, "w").write("keep me\n")
    link = os.path.join(tmp, "report.html")
    os.symlink(target, link)
    proc = run_report(["--format", "html", "-o", link, log])
    check(proc.returncode != 0, "-o through a symbolic link succeeded")
    check(open(target).read() == "keep me\n", "the link's target was overwritten")
    check(os.path.islink(link), "the link was replaced")
    check(link.encode() in proc.stderr and b"symbolic link" in proc.stderr, f"the refusal names the file: {proc.stderr!r}")
    dangling = os.path.join(tmp, "dangling.json")
    os.symlink(os.path.join(tmp, "created-through-link"), dangling)
    proc = run_report(["--format", "json", "-o", dangling, log])
    check(proc.returncode != 0 and not os.path.exists(os.path.join(tmp, "created-through-link")),
          "-o created a file through a dangling link")
    # a regular file is replaced (keeping its mode), a new one created, a directory refused
    plain = os.path.join(tmp, "plain.txt")
    open(plain, "w").write("old report\n")
    os.chmod(plain, 0o600)
    proc = run_report(["-o", plain, log])
    check(proc.returncode == 0 and open(plain).read().startswith("hipshadow report:"), f"-o over a file: {proc.stderr!r}")
    check(stat.S_IMODE(os.stat(plain).st_mode) == 0o600, "the replaced report lost its mode")
    fresh = os.path.join(tmp, "fresh.csv")
    check(run_report(["--format", "csv", "-o", fresh, log]).returncode == 0 and os.path.getsize(fresh) > 0, "-o NEW")
    proc = run_report(["-o", tmp, log])
    check(proc.returncode != 0 and b"directory" in proc.stderr, f"-o DIRECTORY: {proc.stderr!r}")
    check(sorted(os.listdir(tmp)) == ["dangling.json", "fresh.csv", "plain.txt", "precious", "report.html"],
          f"files left behind: {sorted(os.listdir(tmp))}")


def no_hang(log, what):
    for fmt in ("text", "json", "sarif", "html"):
        start = time.monotonic()
        try:
            proc = run_report(["--format", fmt, log], timeout=20)
            check(proc.returncode == 0, f"{what}, {fmt}: exit status {proc.returncode}")
        except subprocess.TimeoutExpired:
            check(False, f"{what}, {fmt}: the report hangs")
        print(f"{what}, {fmt}: {time.monotonic() - start:.2f} s")


def case_fifo_module(tmp):
    fifo = os.path.join(tmp, "libfifo.so")
    os.mkfifo(fifo)
    no_hang(hostile_log(tmp, fifo, 0x1000), "a module path naming a FIFO")
    # a module whose .gnu_debuglink names a FIFO beside it
    cc, objcopy = shutil.which("cc") or shutil.which("gcc"), shutil.which("objcopy")
    if not cc or not objcopy:
        print("SKIP (part): no C compiler or objcopy: the debug link is not checked")
        return
    src, lib, debug = (os.path.join(tmp, n) for n in ("a.c", "liba.so", "liba.debug"))
    open(src, "w").write("int f(int x) { return x + 1; }\n")
    subprocess.run([cc, "-O0", "-shared", "-fPIC", "-o", lib, src], check=True)
    open(debug, "w").write("placeholder\n")
    subprocess.run([objcopy, "--add-gnu-debuglink=" + debug, lib], check=True, cwd=tmp)
    os.unlink(debug)
    os.mkfifo(debug)
    nm = subprocess.run(["nm", lib], capture_output=True, text=True, check=True).stdout
    addr = int(next(line.split()[0] for line in nm.splitlines() if line.endswith(" f")), 16)
    no_hang(hostile_log(tmp, lib, addr + 4), "a debug link naming a FIFO")


def case_sparse_log_memory(tmp):
    """rank0.hslog's chunks in a log that reserves an 8 GiB ring: the header and the written chunks,
    holes between them."""
    data = open(os.path.join(golden, "rank0.hslog"), "rb").read()
    header_bytes, chunk = 8192, 65536
    ring_chunks = (8 << 30) // chunk
    ring = data[header_bytes:header_bytes + 2 * chunk]
    meta = data[header_bytes + 2 * chunk:]
    growing = header_bytes + ring_chunks * chunk
    header = bytearray(data[:header_bytes])
    header[24:40] = ring_chunks.to_bytes(8, "little") + growing.to_bytes(8, "little")
    path = os.path.join(tmp, "sparse.hslog")
    with open(path, "wb") as f:
        f.write(header)
        f.write(ring)
        f.seek(growing)
        f.write(meta)
    check(os.path.getsize(path) > 8 << 30, "the sparse log is 8 GiB long")
    want = run_report(["--format", "json", os.path.join(golden, "rank0.hslog")]).stdout
    for fmt in ("json", "text"):
        start = time.monotonic()
        proc = subprocess.Popen([report, "--format", fmt, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=120)
        wall = time.monotonic() - start
        check(proc.returncode == 0, f"{fmt}: exit status {proc.returncode}: {err[-300:]!r}")
        if fmt == "json":
            events = lambda doc: json.loads(doc)["events"]
            check(events(out) == events(want), "the sparse log's events are rank0's")
        print(f"{fmt}: {wall:.2f} s")
        check(wall < 20, f"{fmt}: {wall:.1f} s to read a log of 8 chunks")
    # the largest child so far: every report run here was one
    rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"max RSS of the reports: {rss_mib:.1f} MiB")
    limit = 256 if "ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ else 64  # a sanitizer's own memory
    check(rss_mib < limit, f"the report of an 8 GiB sparse log took {rss_mib:.0f} MiB")


def case_write_errors(tmp):
    if not os.path.exists("/dev/full"):
        print("SKIP: no /dev/full")
        sys.exit(77)
    log = os.path.join(golden, "rank0.hslog")
    for fmt in ("text", "json", "html"):
        proc = run_report(["--format", fmt, "-o", "/dev/full", log])
        check(proc.returncode != 0, f"{fmt} -o /dev/full: exit status 0")
        check(b"/dev/full" in proc.stderr and b"No space left" in proc.stderr, f"{fmt} -o /dev/full: {proc.stderr!r}")
        with open("/dev/full", "wb") as full:
            proc = subprocess.run([report, "--format", fmt, log], stdout=full, stderr=subprocess.PIPE, timeout=60)
        check(proc.returncode != 0, f"{fmt} > /dev/full: exit status 0")
        check(b"standard output" in proc.stderr and b"No space left" in proc.stderr, f"{fmt} > /dev/full: {proc.stderr!r}")
    check(os.listdir(tmp) == [], f"files left behind: {os.listdir(tmp)}")

with tempfile.TemporaryDirectory() as tmp:
    globals()["case_" + sys.argv[4]](tmp)
for f in failures:
    print("FAIL:", f)
print(f"{sys.argv[4]}: {'failed' if failures else 'passed'}")
sys.exit(1 if failures else 0)
