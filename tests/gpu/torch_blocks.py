#!/usr/bin/env python3
"""PyTorch's caching allocator, block by block: planted bugs made through ctypes on tensors of an
unmodified PyTorch program (run it under `hipshadow --cuda`; nothing here calls hipshadow).
  overrun   a D2H from a tensor's data_ptr() running 4096 bytes past the tensor (4000 bytes, in
            a 2 MiB segment): region-overrun naming the PyTorch caching-allocator block
  uaf       a D2H from a freed tensor's old data_ptr(): use-after-free (with python_stacks=alloc
            the block's allocation and free stacks carry the Python frames)
  reuse     the same old pointer after the allocator handed the block to a new tensor: clean
  kernel    a kernel (PTX through the driver, ctypes) launched on a freed tensor's old pointer:
            kernel-use-after-free
  kernel-torch  the same through PyTorch itself: a tensor aliasing the old pointer
            (__cuda_array_interface__), filled with fill_
  train     AdamW steps of an MLP, timed: prints STEP_MS (median of the timed steps)
Prints 'OK <mode>' at the end."""
import ctypes
import statistics
import sys
import time

import torch

mode = sys.argv[1]
lib = ctypes.CDLL(None)  # the global scope: hipshadow's wrappers come first
memcpy = lib.cudaMemcpy
memcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
memcpy.restype = ctypes.c_int
D2H = 2


def make_tensor():
    return torch.arange(1000, dtype=torch.float32, device="cuda")  # 4000 bytes asked for


def release(holder):
    holder.clear()  # the tensor's last reference: its block goes back to the cache here


def copy_out(ptr, n):
    host = ctypes.create_string_buffer(n)
    rc = memcpy(ctypes.addressof(host), ptr, n, D2H)
    print(f"cudaMemcpy D2H of {n} bytes from 0x{ptr:x} -> {rc}")
    return rc


PTX = b"""
.version 7.0
.target sm_70
.address_size 64
.visible .entry poke(.param .u64 p)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, 7;
  st.global.u32 [%rd2], %r1;
  ret;
}
"""


def launch_poke(ptr):
    cuda = ctypes.CDLL("libcuda.so.1")  # the loaded driver: dlsym on its handle gives hipshadow's wrappers
    module, func = ctypes.c_void_p(), ctypes.c_void_p()
    assert cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(PTX + b"\0")) == 0
    assert cuda.cuModuleGetFunction(ctypes.byref(func), module, b"poke") == 0
    arg = ctypes.c_void_p(ptr)
    params = (ctypes.c_void_p * 1)(ctypes.addressof(arg))
    rc = cuda.cuLaunchKernel(func, 1, 1, 1, 1, 1, 1, 0, None, params, None)
    print(f"cuLaunchKernel(poke, 0x{ptr:x}) -> {rc}")


class Alias:
    """A CUDA array interface over a raw pointer: torch.as_tensor makes a tensor on it, no copy."""
    def __init__(self, ptr, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (ptr, False), "version": 3}


torch.zeros(1, device="cuda")  # CUDA and the caching allocator are up
if mode == "overrun":
    t = make_tensor()
    torch.cuda.synchronize()
    copy_out(t.data_ptr(), t.nbytes + 4096)
elif mode == "uaf":
    holder = [make_tensor()]
    ptr = holder[0].data_ptr()
    release(holder)
    copy_out(ptr, 4000)
elif mode == "reuse":
    t = make_tensor()
    ptr = t.data_ptr()
    t = None
    u = make_tensor()  # the same size, the same stream: the allocator hands the same block out again
    print(f"old 0x{ptr:x}, new 0x{u.data_ptr():x}")
    assert u.data_ptr() == ptr, "the allocator did not reuse the block"
    copy_out(ptr, 4000)
elif mode == "kernel":
    t = make_tensor()
    ptr = t.data_ptr()
    t = None
    launch_poke(ptr)
    torch.cuda.synchronize()
elif mode == "kernel-torch":
    t = make_tensor()
    ptr = t.data_ptr()
    t = None
    alias = torch.as_tensor(Alias(ptr, 1000), device="cuda")
    alias.fill_(1.0)
    torch.cuda.synchronize()
elif mode == "train":
    model = torch.nn.Sequential(torch.nn.Linear(2048, 8192), torch.nn.GELU(), torch.nn.Linear(8192, 2048)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(512, 2048, device="cuda"), torch.randn(512, 2048, device="cuda")
    times = []
    for step in range(int(sys.argv[2]) if len(sys.argv) > 2 else 60):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    print(f"STEP_MS {statistics.median(times[10:]) * 1e3:.3f} (loss {loss.item():.4f})")
else:
    sys.exit(2)
print(f"OK {mode}")
