#!/usr/bin/env python3
"""GPT-2 (124M, built from its config with random weights: nothing is downloaded) generating
tokens greedily on the GPU.  Prints 'TOKENS_PER_S <x>': the best of RUNS timed runs (a run that a
neighbour on the machine slowed down drops out; each run is also printed, as 'RUN_TOKENS_PER_S').
Under hipshadow with stats=1, its counts are printed before and after the timed runs
(hipshadow_print_stats), and 'WINDOW_TOKENS <n>' on stderr says how many tokens lie between them.
Usage: torch_gpt2.py [NEW_TOKENS] [WARMUP_TOKENS] [RUNS]"""
import ctypes
import os
import signal
import sys
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

new_tokens = int(sys.argv[1]) if len(sys.argv) > 1 else 128
warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 16
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config()).to("cuda").eval()
prompt = torch.randint(0, 50257, (1, 16), device="cuda")


def generate(n):
    with torch.no_grad():
        out = model.generate(prompt, max_new_tokens=n, min_new_tokens=n, do_sample=False, pad_token_id=0)
    return out


generate(warmup)
torch.cuda.synchronize()
# tools/sampler, when preloaded (bench_engines.py --steps profile): sample the timed generates only
sampled = bool(os.environ.get("HS_SAMPLER_OUT")) and not os.environ.get("HS_SAMPLER_ALL")
if sampled:
    signal.raise_signal(signal.SIGUSR2)
# hipshadow, when preloaded: its stats=1 counts so far (the public API's hipshadow_print_stats)
print_stats = getattr(ctypes.CDLL(None), "hipshadow_print_stats_impl", None)
marked = print_stats is not None and print_stats() == 0
rates = []
for _ in range(runs):
    t0 = time.perf_counter()
    out = generate(new_tokens)
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    generated = out.shape[1] - prompt.shape[1]
    rates.append(generated / elapsed)
    print(f"RUN_TOKENS_PER_S {rates[-1]:.2f}")
if sampled:
    signal.raise_signal(signal.SIGUSR2)
if marked and print_stats() == 0:
    print(f"WINDOW_TOKENS {runs * generated}", file=sys.stderr, flush=True)
print(f"generated {generated} tokens, first ids {out[0, 16:24].tolist()}")
print(f"TOKENS_PER_S {max(rates):.2f}")
