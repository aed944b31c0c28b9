#!/usr/bin/env python3
"""`hipshadow report` against hostile and huge logs: one case per run.
Usage: check_hostile.py REPORT MAKE_GOLDEN GOLDEN_DIR CASE
  sparse_log_memory   an 8 GiB sparse log is read in a few MiB and a moment"""
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
    check(rss_mib < 64, f"the report of an 8 GiB sparse log took {rss_mib:.0f} MiB")


with tempfile.TemporaryDirectory() as tmp:
    globals()["case_" + sys.argv[4]](tmp)
for f in failures:
    print("FAIL:", f)
print(f"{sys.argv[4]}: {'failed' if failures else 'passed'}")
sys.exit(1 if failures else 0)
