#!/usr/bin/env python3
"""A preload library exports exactly the entry points of its tables (api.inc, driver.inc) plus
the public API, the NVTX injection's entry points, the dlsym/dlvsym wrappers, the mapping
watchers (munmap, mprotect, mremap) and its runtime's last-error readers (STATE_READERS), and
none of the other runtime's names (programs probe for them).
Usage: check_exports.py LIB TABLE[,TABLE...] MACRO[,MACRO...] FORBIDDEN_PREFIX"""
import re
import subprocess
import sys

lib, table, macro, forbidden = sys.argv[1:5]
out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
wrapped, conditional = set(), set()
for table_path, table_macro in zip(table.split(","), macro.split(",")):
    text = open(table_path).read()
    wrapped |= set(re.findall(rf"^{table_macro}\((\w+),", text, re.M))
    conditional |= set(re.findall(rf"#if[^\n]*\n{table_macro}\((\w+),", text))
public = {"hipshadow_pause_impl", "hipshadow_resume_impl", "hipshadow_region_register_impl",
          "hipshadow_region_unregister_impl", "hipshadow_name_allocation_impl", "hipshadow_transpose2d_impl",
          "hipshadow_transpose2d_pitched_impl", "hipshadow_print_stats_impl", "dlsym", "dlvsym", "munmap", "mprotect", "mremap",
          # the NVTX injection's entry points (src/nvtx/injection.c)
          "InitializeInjectionNvtx2", "InitializeInjectionNvtxExtension", "InitializeInjectionNvtx2Preinject",
          "InitializeInjectionNvtxExtensionPreinject"}
# The runtime's last-error readers: wrapped (an error left by hipshadow's own calls is hidden, one
# owed to the program is given back) but not in the tables, as they check nothing.  Each library
# exports its own runtime's pair, and must.
STATE_READERS = {"hipGetLastError", "hipPeekAtLastError", "cudaGetLastError", "cudaPeekAtLastError"}
readers = {s for s in STATE_READERS if not s.startswith(forbidden)}
problems = []
extra = exported - wrapped - public - readers
missing = (wrapped - conditional) - exported
if readers - exported:
    problems.append(f"last-error readers not exported: {sorted(readers - exported)}")
if extra:
    problems.append(f"exported but not in the table or the public API: {sorted(extra)}")
if missing:
    problems.append(f"in the table but not exported: {sorted(missing)}")
if any(s.startswith(forbidden) for s in exported - public):
    problems.append(f"exports {forbidden}* symbols")
for p in problems:
    print("FAIL:", p)
print(f"{lib}: {len(exported)} exported symbols checked against {len(wrapped)} table entries")
sys.exit(1 if problems else 0)
