#!/usr/bin/env bash
# Builds libhipshadow-torch.so against the PyTorch that python3 imports, into OUT_DIR (default:
# build/src, next to libhipshadow-cuda.so, where the core looks for it).  Needs a C and a C++
# compiler, PyTorch with its headers, and the CUDA headers (CUDA_HOME, default /usr/local/cuda).
#   bash src/torch/build.sh [OUT_DIR]
# Exit 77 (skipped) when python3 has no PyTorch with CUDA headers.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/build/src}
cuda=${CUDA_HOME:-/usr/local/cuda}
py=${PYTHON:-python3}
info=$("$py" - <<'PY' 2>/dev/null
import os, torch
d = os.path.dirname(torch.__file__)
print(d)
print(int(torch._C._GLIBCXX_USE_CXX11_ABI))
print(torch.__version__)
PY
) || { echo "SKIP: $py cannot import torch"; exit 77; }
torch_dir=$(sed -n 1p <<<"$info")
abi=$(sed -n 2p <<<"$info")
version=$(sed -n 3p <<<"$info")
header=$torch_dir/include/c10/cuda/CUDACachingAllocator.h
c10_cuda=$torch_dir/lib/libc10_cuda.so
if [[ ! -f $header || ! -f $c10_cuda || ! -f $cuda/include/cuda_runtime_api.h ]]; then
  echo "SKIP: no PyTorch CUDA headers ($header), libc10_cuda.so or CUDA headers ($cuda/include)"
  exit 77
fi
hook=()
grep -rqs attachAllocatorTraceTracker "$torch_dir/include/c10/cuda/" || hook=(-DHS_TP_NO_HOOK)
mkdir -p "$out"
obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
cc=${CC:-cc}
cxx=${CXX:-c++}
common=(-O2 -g -fPIC -fvisibility=hidden -Wall -Wextra -I"$root/include" -I"$root/src/torch")
"$cc" -std=gnu11 "${common[@]}" -c "$here/plugin.c" -o "$obj/plugin.o"
"$cc" -std=gnu11 "${common[@]}" -c "$here/pystack.c" -o "$obj/pystack.o"
"$cxx" -std=c++17 "${common[@]}" -Wno-unused-parameter -D_GLIBCXX_USE_CXX11_ABI="$abi" \
  -I"$torch_dir/include" -I"$cuda/include" "${hook[@]}" \
  -DHS_TORCH_VERSION="\"$version\"" -DHS_TORCH_C10_CUDA="\"$c10_cuda\"" \
  -DHS_TORCH_C10_CUDA_SIZE="$(stat -c %s "$c10_cuda")" \
  -c "$here/tracker.cpp" -o "$obj/tracker.o"
"$cxx" -shared -o "$out/libhipshadow-torch.so" "$obj/plugin.o" "$obj/pystack.o" "$obj/tracker.o" \
  -L"$torch_dir/lib" -Wl,--no-as-needed -lc10_cuda -lc10 -Wl,-rpath,"$torch_dir/lib" -ldl
echo "built $out/libhipshadow-torch.so against PyTorch $version${hook:+ (no trace hook: segment level only)}"
