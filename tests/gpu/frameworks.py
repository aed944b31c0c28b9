"""Clean workloads of GPU frameworks nobody on the team wrote, each run under hipshadow by
run_gpu.py frameworks: their false positives and blind spots are the ones users meet.
Usage: frameworks.py compile|vision|triton|cupy|jax.  Prints "OK <what>" at the end, or "SKIP <what>: why"
(exit 77) when the framework is not installed."""
import sys


def skip(what, why):
    print(f"SKIP {what}: {why}")
    sys.exit(77)


def compile_():
    """torch.compile: Inductor writes Triton kernels, launched through the driver API
    (cuLaunchKernel) from modules loaded at run time, on PyTorch's caching allocator."""
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.LayerNorm(1024),
                                torch.nn.Linear(1024, 256)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    step = torch.compile(lambda x: model(x).square().mean())
    for _ in range(5):
        x = torch.randn(64, 256, device="cuda")
        loss = step(x)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    out = torch.compile(model)(torch.randn(8, 256, device="cuda")).cpu()
    assert torch.isfinite(out).all()
    print(f"loss {loss.item():.4f}")


def vision():
    """cuDNN and cuBLASLt under autocast (a small conv net, channels_last, training steps), fed the
    way a DataLoader with pin_memory feeds it: batches in pinned buffers, copied with
    non_blocking=True on a side stream, the compute stream waiting on an event, each pinned buffer
    reused only after its copy is known done."""
    import torch
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        torch.nn.Conv2d(32, 64, 3, stride=2, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10),
    ).cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    scaler = torch.amp.GradScaler("cuda")
    side = torch.cuda.Stream()
    pinned = [torch.empty(32, 3, 64, 64).pin_memory() for _ in range(2)]
    copied = [torch.cuda.Event() for _ in range(2)]
    for step in range(8):
        buf = pinned[step % 2]
        copied[step % 2].synchronize()  # the copy that last read this buffer is done
        buf.copy_(torch.randn(32, 3, 64, 64))
        with torch.cuda.stream(side):
            x = buf.to("cuda", non_blocking=True).to(memory_format=torch.channels_last)
            copied[step % 2].record(side)
        torch.cuda.current_stream().wait_stream(side)
        x.record_stream(torch.cuda.current_stream())
        y = torch.randint(0, 10, (32,), device="cuda")
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(net(x), y)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    print(f"loss {loss.item():.4f}")


def triton_():
    """A Triton kernel of our own: compiled and launched by Triton's runtime, not PyTorch's."""
    import torch
    try:
        import triton
        import triton.language as tl
    except ImportError:
        skip("triton", "triton is not installed")

    @triton.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

    n = 100_003
    x, y = torch.rand(n, device="cuda"), torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    assert torch.allclose(out.cpu(), (x + y).cpu())


def cupy_():
    """CuPy: its own memory pool (sub-allocations of its cudaMalloc chunks), elementwise and
    reduction kernels compiled at run time (NVRTC), cuBLAS, cuFFT, copies both ways."""
    try:
        import cupy as cp
    except ImportError:
        skip("cupy", "cupy is not installed")
    import numpy as np
    a = cp.random.rand(512, 512, dtype=cp.float32)
    b = cp.random.rand(512, 512, dtype=cp.float32)
    c = a @ b
    s = float(cp.sum(c))
    f = cp.fft.fft(cp.arange(4096, dtype=cp.complex64))
    k = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * 2 + y", "twice_plus")
    z = k(a, b)
    host = cp.asnumpy(z)
    back = cp.asarray(host)
    assert np.allclose(cp.asnumpy(back), host)
    for i in range(50):  # pool churn: frees and reuses inside its chunks
        t = cp.empty(1000 + i * 37, dtype=cp.float64)
        t.fill(i)
        assert float(t[-1]) == i
        del t
    print(f"sum {s:.1f} fft {abs(complex(f[1])):.1f}")


def jax_():
    """JAX: XLA's own allocator (one big preallocation, or on demand), jit-compiled kernels
    loaded as modules, copies in and out."""
    import os
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        skip("jax", "jax is not installed")
    if not any(d.platform == "gpu" for d in jax.devices()):
        skip("jax", "jax sees no GPU")

    @jax.jit
    def loss(w, x):
        return jnp.mean(jnp.tanh(x @ w) ** 2)

    key = jax.random.PRNGKey(0)
    w = jax.random.normal(key, (256, 128))
    x = jax.random.normal(key, (64, 256))
    g = jax.grad(loss)(w, x)
    for _ in range(5):
        w = w - 0.1 * jax.grad(loss)(w, x)
    print(f"loss {float(loss(w, x)):.4f} grad {float(jnp.abs(g).sum()):.2f}")


if __name__ == "__main__":
    what = sys.argv[1]
    {"compile": compile_, "vision": vision, "triton": triton_, "cupy": cupy_, "jax": jax_}[what]()
    print(f"OK {what}")
