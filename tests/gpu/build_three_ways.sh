#!/usr/bin/env bash
# Builds gpu_cases.c the three ways users build CUDA programs, into DIR:
#   DIR/static/gpu_cases   plain nvcc: the runtime linked statically (libcudart_static)
#   DIR/shared/gpu_cases   nvcc -cudart shared
#   DIR/cmake/gpu_cases    a CMake project with the CUDA language (static runtime by default)
# and checks that the static builds need no libcudart.so.  Usage: build_three_ways.sh DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out/static" "$out/shared" "$out/cmake"
nvcc -x cu -O1 -g -o "$out/static/gpu_cases" "$here/gpu_cases.c"
nvcc -x cu -O1 -g -cudart shared -o "$out/shared/gpu_cases" "$here/gpu_cases.c"
cmake -S "$here/cmake" -B "$out/cmake-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$out/cmake-build" >/dev/null
cp "$out/cmake-build/gpu_cases" "$out/cmake/gpu_cases"
for way in static cmake; do
  if readelf -d "$out/$way/gpu_cases" | grep -q 'NEEDED.*libcudart'; then
    echo "build_three_ways: $way build links libcudart.so" >&2
    exit 1
  fi
done
readelf -d "$out/shared/gpu_cases" | grep -q 'NEEDED.*libcudart' || { echo "build_three_ways: shared build has no libcudart.so" >&2; exit 1; }
echo "build_three_ways: static, shared and cmake builds in $out"
