#!/usr/bin/env python3
"""PyTorch workloads that must give zero findings (run them with
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to exercise mapped memory).  Models are built
from configs with random weights: nothing is downloaded.
  llama   a small Llama-style model (4 layers, bf16) generating 32 tokens greedily
  adamw   30 AdamW training steps of an MLP
  graph   a model captured into a CUDA graph and replayed 20 times; checked against eager
Prints 'OK <what>' at the end."""
import sys

import torch

what = sys.argv[1]
torch.manual_seed(0)
if what == "llama":
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(hidden_size=512, intermediate_size=1408, num_hidden_layers=4, num_attention_heads=8,
                      num_key_value_heads=4, vocab_size=32000, max_position_embeddings=512)
    model = LlamaForCausalLM(cfg).to("cuda", dtype=torch.bfloat16).eval()
    prompt = torch.randint(0, 32000, (2, 24), device="cuda")
    with torch.no_grad():
        out = model.generate(prompt, max_new_tokens=32, min_new_tokens=32, do_sample=False, pad_token_id=0)
    print(f"llama: generated {out.shape[1] - prompt.shape[1]} tokens")
elif what == "adamw":
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = torch.randn(256, 1024, device="cuda"), torch.randn(256, 1024, device="cuda")
    for step in range(30):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:  # let the allocator grow and shrink its segments
            torch.cuda.empty_cache()
    print(f"adamw: loss {loss.item():.4f}")
elif what == "graph":
    model = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 512)).cuda().eval()
    static_in = torch.randn(64, 512, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s), torch.no_grad():
        for _ in range(3):  # warm-up on a side stream, as the docs say
            model(static_in)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g), torch.no_grad():
        static_out = model(static_in)
    for i in range(20):
        static_in.copy_(torch.randn(64, 512, device="cuda"))
        g.replay()
    with torch.no_grad():
        want = model(static_in)
    torch.cuda.synchronize()
    assert torch.allclose(static_out, want, atol=1e-4), "graph replay differs from eager"
    print("graph: 20 replays match eager")
else:
    sys.exit(2)
torch.cuda.synchronize()
print(f"OK {what}")
