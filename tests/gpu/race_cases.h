/* The planted stream races and reads of unwritten memory of race_cases.c, through the CUDA
 * runtime: built by nvcc for a GPU (static and shared runtime, build_race_cases.sh) and on the
 * simulated runtime (tests/simcuda).  Plain C that also compiles as CUDA C++. */
#ifndef RACE_CASES_H
#define RACE_CASES_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels, by their host stubs (device code: race_kernels.cu; on the simulator,
 * tests/simcuda/race_kernels.c):
 *   rc_fill(int *p, int n, int value)            p[i] = value
 *   rc_scale(int *out, const int *in, int n)     out[i] = 2 * in[i] */
extern const void *const rc_fill;
extern const void *const rc_scale;

#ifdef __cplusplus
}
#endif

#endif
