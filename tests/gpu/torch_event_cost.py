#!/usr/bin/env python3
"""Each kind of PyTorch event alone, on the GPU, in the engine's own process: what GPT-2's
per-token events cost where they really happen (PyTorch's caching allocator and its shared CUDA
runtime), not on the simulator.
  torch_event_cost.py KIND [N]
KIND:
  blocks  a tensor made and let go, N times: three caching-allocator block events each (alloc,
          free requested, free completed; the block is reused, so no segment event)
  launch  an elementwise add into an existing tensor, N times: one kernel launch each
  both    the two interleaved: a tensor made, an add into it, let go
Prints 'NS_PER_ITER <x>': the median over 5 timed passes of N iterations, after a warm-up pass.
The Python loop's own cost is in every figure, plain or not: compare the two, interleaved."""
import statistics
import sys
import time

import torch

kind = sys.argv[1] if len(sys.argv) > 1 else "blocks"
n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
if kind not in ("blocks", "launch", "both"):
    sys.exit(f"torch_event_cost.py: unknown kind '{kind}' (blocks, launch or both)")

a = torch.ones(256, device="cuda")
b = torch.ones(256, device="cuda")
empty = torch.empty


def blocks():
    for _ in range(n):
        t = empty(256, device="cuda")
        del t


def launch():
    for _ in range(n):
        torch.add(a, 1.0, out=b)


def both():
    for _ in range(n):
        t = empty(256, device="cuda")
        torch.add(a, 1.0, out=t)
        del t


body = {"blocks": blocks, "launch": launch, "both": both}[kind]
body()
torch.cuda.synchronize()
passes = []
for _ in range(5):
    t0 = time.perf_counter()
    body()
    torch.cuda.synchronize()
    passes.append((time.perf_counter() - t0) / n * 1e9)
print(f"NS_PER_ITER {statistics.median(passes):.1f}")
