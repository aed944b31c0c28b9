#!/usr/bin/env bash
# Builds a test program for a real GPU the two ways nvcc users build: STATIC_OUT with plain nvcc
# (the runtime linked statically) and SHARED_OUT with -cudart shared.  PROGRAM is one of
#   last_error   last_error.c (the thread's last error, row by row through every wrapped runtime
#                entry point); last_error_ptds.c compiled with CUDA_API_PER_THREAD_DEFAULT_STREAM
#                (what --default-stream per-thread defines); kernels from last_error_kernels.cu
#   race_cases   race_cases.c (planted stream races and unwritten reads); kernels from race_kernels.cu
# Extra arguments go to every nvcc command (e.g. -arch=native).  NVCC names the compiler (default:
# nvcc on PATH).
# Usage: build_two_runtimes.sh PROGRAM STATIC_OUT SHARED_OUT [NVCC_FLAG...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
program=$1
static_out=$2
shared_out=$3
shift 3
nvcc=${NVCC:-nvcc}
obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
flags=(-O1 -g -Xcompiler -Wno-deprecated-declarations "$@")
case $program in
  last_error)
    "$nvcc" "${flags[@]}" -x cu -c "$here/last_error.c" -o "$obj/last_error.o"
    "$nvcc" "${flags[@]}" -x cu -DCUDA_API_PER_THREAD_DEFAULT_STREAM -c "$here/last_error_ptds.c" -o "$obj/last_error_ptds.o"
    "$nvcc" "${flags[@]}" -c "$here/last_error_kernels.cu" -o "$obj/last_error_kernels.o"
    ;;
  race_cases)
    "$nvcc" "${flags[@]}" -x cu -c "$here/race_cases.c" -o "$obj/race_cases.o"
    "$nvcc" "${flags[@]}" -c "$here/race_kernels.cu" -o "$obj/race_kernels.o"
    ;;
  *) echo "build_two_runtimes: unknown program '$program'" >&2; exit 2 ;;
esac
"$nvcc" "$@" -o "$static_out" "$obj"/*.o
"$nvcc" "$@" -cudart shared -o "$shared_out" "$obj"/*.o
if readelf -d "$static_out" | grep -q 'NEEDED.*libcudart'; then
  echo "build_two_runtimes: the static build of $program links libcudart.so" >&2
  exit 1
fi
readelf -d "$shared_out" | grep -q 'NEEDED.*libcudart' ||
  { echo "build_two_runtimes: the shared build of $program has no libcudart.so" >&2; exit 1; }
