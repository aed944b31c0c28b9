#!/usr/bin/env python3
"""Planted bugs through ctypes against PyTorch's caching allocator.
  segment    cudaMemcpy D2H from tensor.data_ptr() running 4096 bytes past the end of the
             allocator's segment (one cudaMalloc): out-of-bounds.
  tensor     past the tensor by 4096 bytes but inside the segment: invisible by default,
             out-of-bounds with PYTORCH_NO_CUDA_MEMORY_CACHING=1 (each tensor its own cudaMalloc).
  annotated  the same read with the tensor declared a region (hipshadow_region_register):
             region-overrun, caching on.
  handle     the 'segment' read through a handle of the loaded libcudart (ctypes.CDLL(path)), as
             Python code usually calls the runtime: out-of-bounds (dlsym hands out the wrapper).
  expandable with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: a read running 4096 bytes
             past the last mapped page of the tensor's segment: out-of-bounds.
Run it with mode=block: hipshadow stops the bad copy before the runtime sees it."""
import ctypes
import sys

import torch

mode = sys.argv[1]
lib = ctypes.CDLL(None)  # the global scope: the preloaded wrappers come first
torch.zeros(1, device="cuda")  # loads and initialises the runtime
if mode == "handle":
    path = next(l.split()[-1] for l in open("/proc/self/maps") if "libcudart.so" in l)
    lib = ctypes.CDLL(path)  # dlopen of the already-loaded runtime, then dlsym on its handle
    print(f"runtime: {path}")
memcpy = lib.cudaMemcpy
memcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
memcpy.restype = ctypes.c_int
D2H = 2

t = torch.arange(1000, dtype=torch.float32, device="cuda")  # 4000 bytes
torch.cuda.synchronize()
ptr = t.data_ptr()
segment_end = None
for seg in torch.cuda.memory_snapshot():
    if seg["address"] <= ptr < seg["address"] + seg["total_size"]:
        segment_end = seg["address"] + seg["total_size"]
if mode in ("segment", "handle", "expandable"):
    n = segment_end - ptr + 4096
elif mode in ("tensor", "annotated"):
    n = t.nbytes + 4096
    if mode == "annotated":
        register = lib.hipshadow_region_register_impl
        register.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
        print("region_register ->", register(ptr, t.nbytes, b"t (arange, 1000 x f32)"))
else:
    sys.exit(2)
host = ctypes.create_string_buffer(n)
rc = memcpy(ctypes.addressof(host), ptr, n, D2H)
print(f"mode {mode}: tensor at 0x{ptr:x}, segment ends at 0x{segment_end:x}, copied {n} bytes: cudaMemcpy -> {rc}")
