#!/usr/bin/env python3
"""The kernel images the build embeds are real: the AMD bundle holds one AMDGPU code object per
target that was built, each defining every kernel (read with clang-offload-bundler and
llvm-readelf); the NVIDIA fatbin holds an ELF cubin per architecture plus PTX, naming every
kernel.  Usage: check_kernels.py AMD_BUNDLE|- NV_FATBIN|- TARGETS ARCHS"""
import os
import shutil
import subprocess
import sys
import tempfile

KERNELS = ["hs_transpose_e1", "hs_transpose_e2", "hs_transpose_e4", "hs_transpose_e8", "hs_transpose_e16",
           "hs_transpose_e1_packed", "hs_transpose_e2_packed", "hs_copy16", "hs_copy1", "hs_redzone_fill",
           "hs_redzone_verify"]
amd, nv, targets, archs = sys.argv[1:5]
failures, checked = [], 0

if amd != "-":
    tool_dir = "/usr/lib/llvm-14/bin"
    bundler = shutil.which("clang-offload-bundler") or os.path.join(tool_dir, "clang-offload-bundler")
    readelf = shutil.which("llvm-readelf") or os.path.join(tool_dir, "llvm-readelf")
    listed = subprocess.run([bundler, "--list", "--type=o", f"--inputs={amd}"], capture_output=True, text=True).stdout.split()
    for t in filter(None, targets.split(",")):
        triple = f"hipv4-amdgcn-amd-amdhsa--{t}"
        if triple not in listed:
            failures.append(f"AMD bundle lacks {t}: {listed}")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            elf = os.path.join(tmp, t + ".co")
            subprocess.run([bundler, "--unbundle", "--type=o", f"--inputs={amd}", f"--targets={triple}", f"--outputs={elf}"],
                           check=True)
            out = subprocess.run([readelf, "--symbols", "--file-header", elf], capture_output=True, text=True).stdout
        if "AMDGPU" not in out and "AMD GPU" not in out:
            failures.append(f"{t}: not an AMDGPU code object")
        for k in KERNELS:
            if f" {k}\n" not in out or f" {k}.kd\n" not in out:
                failures.append(f"{t}: kernel {k} (or its descriptor) missing")
        checked += 1

if nv != "-":
    data = open(nv, "rb").read()
    n_elf = data.count(b"\x7fELF")
    wanted = [a for a in archs.split(",") if a]
    if n_elf < len(wanted):
        failures.append(f"NVIDIA fatbin has {n_elf} cubins for {len(wanted)} architectures")
    for a in wanted:
        if a.encode() not in data:
            failures.append(f"NVIDIA fatbin has no {a} image")
    for k in KERNELS:
        if data.count(k.encode()) < 1:
            failures.append(f"NVIDIA fatbin does not name {k}")
    checked += 1

for f in failures:
    print("FAIL:", f)
print(f"{checked} kernel images checked")
if not checked:
    print("SKIP: no kernel image was built")
    sys.exit(77)
sys.exit(1 if failures else 0)
