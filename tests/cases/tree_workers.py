#!/usr/bin/env python3
"""Process trees of runtime users, through ctypes on the simulated HIP runtime.
  ranks  N          starts N child processes with RANK=0..N-1; each makes one bad D2H copy
  pool   fork|spawn a multiprocessing pool of 3 workers, 6 tasks, each task one bad D2H copy;
                    the parent makes one bad copy before the pool starts
Prints one line per child with its pid and exit status."""
import ctypes
import multiprocessing
import os
import subprocess
import sys


def bad_copy(tag):
    hip = ctypes.CDLL("libamdhip64.so.5")
    dev = ctypes.c_void_p()
    assert hip.hipMalloc(ctypes.byref(dev), ctypes.c_size_t(64)) == 0
    host = ctypes.create_string_buffer(256)
    hip.hipMemcpyDtoH(host, dev, ctypes.c_size_t(64 + 32))  # 32 bytes past the end
    return f"{tag} in {os.getpid()}"


def main():
    what = sys.argv[1]
    if what == "ranks":
        children = []
        for rank in range(int(sys.argv[2])):
            env = dict(os.environ, RANK=str(rank))
            children.append(subprocess.Popen([sys.executable, __file__, "one", f"rank{rank}"], env=env))
        for c in children:
            print(f"child {c.pid} exit {c.wait()}")
    elif what == "one":
        print(bad_copy(sys.argv[2]))
    elif what == "pool":
        bad_copy("parent")
        ctx = multiprocessing.get_context(sys.argv[2])
        pool = ctx.Pool(3)
        print(sorted(pool.map(bad_copy, [f"task{i}" for i in range(6)], chunksize=1)))
        workers = list(pool._pool)
        pool.close()
        pool.join()
        for w in workers:
            print(f"worker {w.pid} exit {w.exitcode}")


if __name__ == "__main__":
    main()
