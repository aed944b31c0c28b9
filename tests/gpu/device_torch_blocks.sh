#!/usr/bin/env bash
# One device call for PyTorch's caching-allocator blocks (run from the repository root on a
# machine with an NVIDIA GPU and PyTorch, with build/ and vendor-device/ carried): what the
# installed torch's headers say of the trace hook, then run_gpu.py's modes (default:
# torch-blocks).  Each mode's output is printed and
# kept in $OUT/<mode>.txt ($OUT defaults to tests/gpu/results, which git ignores).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/vendor-device${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export HS_LAUNCHER=$PWD/build/tools/hipshadow HS_GPU=$PWD/build/tests/gpu PYTHONUNBUFFERED=1
out=${OUT:-$PWD/tests/gpu/results}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, transformers, sys; print('torch', torch.__version__, 'transformers', transformers.__version__, 'python', sys.version.split()[0])"
inc=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')/include
{
  echo "== where TraceEntry and the tracker are declared"
  grep -rn "struct TraceEntry\|attachAllocatorTraceTracker\|using AllocatorTraceTracker" "$inc/c10" | head -20
  f=$(grep -rl "struct TraceEntry {" "$inc/c10" | head -1)
  echo "== $f"; sed -n '/struct TraceEntry {/,/^};/p' "$f"
} > "$out/torch-headers.txt" 2>&1
head -12 "$out/torch-headers.txt"
which c++ g++ cc gcc 2>&1 | head -4
for what in ${*:-torch-blocks}; do
  python3 tests/gpu/run_gpu.py "$what" 2>&1 | tee "$out/$what.txt"
done
