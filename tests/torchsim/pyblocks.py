#!/usr/bin/env python3
"""A Python program on tests/torchsim's fake caching allocator, for hipshadow's Python stacks.
Like PyTorch's ops, the allocator is called with the GIL released (ctypes.CDLL releases it around
every call), so the block's stacks come from the context the allocator gathers before its lock
(python_stacks=alloc), and the copy's from the GIL taken back at the finding.
Usage: pyblocks.py FAKE_LIBC10_CUDA uaf|overrun"""
import ctypes
import sys

fake = ctypes.CDLL(sys.argv[1])  # releases the GIL around each call, as PyTorch's ops do
fake.fake_torch_alloc.restype = ctypes.c_void_p
fake.fake_torch_alloc.argtypes = [ctypes.c_size_t]
fake.fake_torch_free.argtypes = [ctypes.c_void_p]
memcpy = ctypes.CDLL(None).cudaMemcpy  # hipshadow's wrapper, first in the global scope
memcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
host = ctypes.create_string_buffer(8192)


def make_tensor():
    return fake.fake_torch_alloc(4000)


def release(ptr):
    fake.fake_torch_free(ptr)


def copy_out(ptr, n):
    return memcpy(ctypes.addressof(host), ptr, n, 2)


fake.fake_torch_alloc(16)  # the allocator's first block: CUDA initialised (the plugin attaches in it)
t = make_tensor()
if sys.argv[2] == "uaf":
    release(t)
    rc = copy_out(t, 4000)
else:
    rc = copy_out(t, 4000 + 4096)
print(f"{sys.argv[2]}: cudaMemcpy -> {rc}")
