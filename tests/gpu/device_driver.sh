#!/usr/bin/env bash
# One device call for the driver layer (run from the repository root on a machine with an
# NVIDIA GPU, with the build/ folder and vendor-device/libunwind.so.8 carried): the driver
# checks, then the earlier GPU tests as a regression.  Each mode's output is printed and
# kept in $OUT/<mode>.txt ($OUT defaults to tests/gpu/results, which git ignores).
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/vendor-device${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export HS_LAUNCHER=$PWD/build/tools/hipshadow HS_GPU=$PWD/build/tests/gpu PYTHONUNBUFFERED=1
out=${OUT:-$PWD/tests/gpu/results}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)"
for what in ${*:-driver tests}; do
  python3 tests/gpu/run_gpu.py "$what" 2>&1 | tee "$out/$what.txt"
done
