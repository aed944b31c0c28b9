"""What tools/bench_cachesim.py and tools/bench_pages.py share: their options, and the simulated
workloads they run under valgrind (ggml's launch, PyTorch's op), each under this build's library
and, with --old-hip / --old-cuda, an older one's."""
import argparse
import os
import shutil
import sys


def parse(doc, prog, workloads, needs, more=None):
    """The tools' options (more(ap) adds a tool's own); exits 77 under --check (CI's skip) when a
    program in needs is missing.  Returns (args, the build directory, the workloads asked for)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", nargs="?", default="build")
    if more:
        more(ap)
    ap.add_argument("--old-hip", help="an older libhipshadow.so, for launch")
    ap.add_argument("--old-cuda", help="an older libhipshadow-cuda.so, for torch-op")
    ap.add_argument("--only", default=",".join(workloads))
    ap.add_argument("--options", default="", metavar="NAME=VALUE[:...]",
                    help="hipshadow options for every run (e.g. torch_blocks=0, passthrough=calls)")
    ap.add_argument("--check", action="store_true", help="CI: skip without valgrind, fail on an empty count")
    args = ap.parse_args()
    missing = [n for n in needs if not shutil.which(n)]
    if missing:
        if args.check:
            print(f"SKIP: {', '.join(missing)} not installed")
            sys.exit(77)
        sys.exit(f"{prog}: {', '.join(missing)} not installed (valgrind)")
    only = set(args.only.split(","))
    bad = only - set(workloads)
    if bad:
        sys.exit(f"{prog}: --only takes {', '.join(workloads)} (got {','.join(sorted(bad))})")
    for lib in (args.old_hip, args.old_cuda):
        if lib and not os.path.isfile(lib):
            sys.exit(f"{prog}: no library at {lib}")
    return args, os.path.abspath(args.build), only


def base_env():
    """The simulators with an aperture valgrind can map, and no options from the caller's shell."""
    env = dict(os.environ, SIMHIP_APERTURE_GIB="4", SIMCUDA_APERTURE_GIB="4")
    env.pop("HIPSHADOW_OPTIONS", None)
    return env


def libraries(new, old):
    """[(label, absolute path)]: this build's library, and the older one when given."""
    return [(label, os.path.abspath(lib)) for label, lib in (("new", new), ("old", old)) if lib]


def launch_env(build, options=""):
    """bench_events' arena (ggml's pattern) on the simulated HIP runtime, copies moving nothing."""
    env = dict(base_env(), SIMHIP_NULL="1", BENCH_ARENA_TENSORS="235",
               LD_LIBRARY_PATH=os.path.join(build, "tests/simhip"))
    if options:
        env["HIPSHADOW_OPTIONS"] = options
    return env


def torch_plugin(build):
    return os.path.join(build, "tests/torchsim/libhipshadow-torch.so")


def torch_env(build, options=""):
    """blocks_sim (PyTorch's op) on the simulated CUDA runtime, the plugin on the fake allocator."""
    sim = os.path.join(build, "tests/torchsim")
    return dict(base_env(), LD_LIBRARY_PATH=os.path.join(build, "tests/simcuda") + ":" + sim,
                HIPSHADOW_OPTIONS=":".join(o for o in ("torch_plugin=" + torch_plugin(build), options) if o))
