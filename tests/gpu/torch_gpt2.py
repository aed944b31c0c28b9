#!/usr/bin/env python3
"""GPT-2 (124M, built from its config with random weights: nothing is downloaded) generating
tokens greedily on the GPU.  Prints 'TOKENS_PER_S <x>': the best of RUNS timed runs (a run that a
neighbour on the machine slowed down drops out; each run is also printed, as 'RUN_TOKENS_PER_S').
Under hipshadow with stats=1, its counts are printed before and after the timed runs
(hipshadow_print_stats), and 'WINDOW_TOKENS <n>' on stderr says how many tokens lie between them.
--serve: after the warm-up, prints 'READY' and then times one run for each 'go' line read from
standard input (its 'RUN_TOKENS_PER_S' line the answer), until end of input: bench_engines.py
--lockstep keeps a plain and a hipshadow process alive at once and asks them in turn.
Usage: torch_gpt2.py [NEW_TOKENS] [WARMUP_TOKENS] [RUNS] [--serve]"""
import ctypes
import os
import signal
import sys
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

serve = "--serve" in sys.argv
argv = [a for a in sys.argv if a != "--serve"]
new_tokens = int(argv[1]) if len(argv) > 1 else 128
warmup = int(argv[2]) if len(argv) > 2 else 16
runs = int(argv[3]) if len(argv) > 3 else 1
torch.manual_seed(0)
model = GPT2LMHeadModel(GPT2Config()).to("cuda").eval()
prompt = torch.randint(0, 50257, (1, 16), device="cuda")


def generate(n):
    with torch.no_grad():
        out = model.generate(prompt, max_new_tokens=n, min_new_tokens=n, do_sample=False, pad_token_id=0)
    return out


def timed_run():
    """One timed generate: (tokens a second, its output)."""
    t0 = time.perf_counter()
    out = generate(new_tokens)
    torch.cuda.synchronize()
    return (out.shape[1] - prompt.shape[1]) / (time.perf_counter() - t0), out


generate(warmup)
torch.cuda.synchronize()
if serve:
    print("READY", flush=True)
    for request in sys.stdin:
        if request.strip() != "go":
            sys.exit(f"torch_gpt2.py --serve: unknown request {request.strip()!r} (want 'go')")
        rate, out = timed_run()
        print(f"RUN_TOKENS_PER_S {rate:.2f}", flush=True)
    sys.exit(0)
# tools/sampler, when preloaded (bench_engines.py --steps profile): sample the timed generates only
sampled = bool(os.environ.get("HS_SAMPLER_OUT")) and not os.environ.get("HS_SAMPLER_ALL")
if sampled:
    signal.raise_signal(signal.SIGUSR2)
# hipshadow, when preloaded: its stats=1 counts so far (the public API's hipshadow_print_stats)
print_stats = getattr(ctypes.CDLL(None), "hipshadow_print_stats_impl", None)
marked = print_stats is not None and print_stats() == 0
rates = []
for _ in range(runs):
    rate, out = timed_run()
    generated = out.shape[1] - prompt.shape[1]
    rates.append(rate)
    print(f"RUN_TOKENS_PER_S {rates[-1]:.2f}")
if sampled:
    signal.raise_signal(signal.SIGUSR2)
if marked and print_stats() == 0:
    print(f"WINDOW_TOKENS {runs * generated}", file=sys.stderr, flush=True)
print(f"generated {generated} tokens, first ids {out[0, 16:24].tolist()}")
print(f"TOKENS_PER_S {max(rates):.2f}")
