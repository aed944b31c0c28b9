#!/usr/bin/env bash
# Builds last_error.c (the thread's last error, row by row through every wrapped runtime entry
# point) for a real GPU the two ways nvcc users build: STATIC_OUT with plain nvcc (the runtime
# linked statically) and SHARED_OUT with -cudart shared.  last_error_ptds.c is compiled with
# CUDA_API_PER_THREAD_DEFAULT_STREAM (what --default-stream per-thread defines), the kernels come
# from last_error_kernels.cu; extra arguments go to every nvcc command (e.g. -arch=native).
# NVCC names the compiler (default: nvcc on PATH).
# Usage: build_last_error.sh STATIC_OUT SHARED_OUT [NVCC_FLAG...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
static_out=$1
shared_out=$2
shift 2
nvcc=${NVCC:-nvcc}
obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
flags=(-O1 -g -Xcompiler -Wno-deprecated-declarations "$@")
"$nvcc" "${flags[@]}" -x cu -c "$here/last_error.c" -o "$obj/last_error.o"
"$nvcc" "${flags[@]}" -x cu -DCUDA_API_PER_THREAD_DEFAULT_STREAM -c "$here/last_error_ptds.c" -o "$obj/last_error_ptds.o"
"$nvcc" "${flags[@]}" -c "$here/last_error_kernels.cu" -o "$obj/last_error_kernels.o"
"$nvcc" "$@" -o "$static_out" "$obj"/*.o
"$nvcc" "$@" -cudart shared -o "$shared_out" "$obj"/*.o
if readelf -d "$static_out" | grep -q 'NEEDED.*libcudart'; then
  echo "build_last_error: the static build links libcudart.so" >&2
  exit 1
fi
readelf -d "$shared_out" | grep -q 'NEEDED.*libcudart' || { echo "build_last_error: the shared build has no libcudart.so" >&2; exit 1; }
