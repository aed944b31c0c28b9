/* The last-error program (last_error.c, last_error_ptds.c), one row per wrapped CUDA runtime entry
 * point (src/cuda/api.inc): the call in a failing form, then in a succeeding form (so that an error
 * is pending while it succeeds), each followed by the return code and cudaPeekAtLastError, then
 * cudaGetLastError.  Run with and without hipshadow, the output must be the same: what
 * hipshadow's own runtime calls leave behind shows.  The program also holds the runtime to its
 * documented rule (a failure other than cudaErrorNotReady sets the last error, a success leaves
 * it, cudaGetLastError resets it; a lost context fails every call that uses it), so it checks the
 * simulator when run on a GPU.  Plain C that also compiles as CUDA C++ (build_two_runtimes.sh). */
#ifndef LAST_ERROR_H
#define LAST_ERROR_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels, by their host stubs: poke(int *p, long long offset, int value) does p[offset] =
 * value, and so does each of le_fresh, the same kernel under six names, each launched first by
 * one launch row (hipshadow asks the runtime about a kernel at its first launch).  Device code:
 * last_error_kernels.cu; on the simulator, tests/simcuda/last_error_kernels.c. */
extern const void *const le_poke;
extern const void *const le_fresh[6];
/* A host function that is no kernel: launching it fails (cudaErrorInvalidResourceHandle). */
extern const void *const le_not_a_kernel;

/* What the rows work on, made by last_error.c. */
typedef struct le_res {
    char *dev, *dev2, *host, *pinned; /* 4096 bytes each (host: pageable, 8192) */
    cudaStream_t stream;
    cudaEvent_t event; /* recorded on stream */
} le_res;

void le_row(const char *name);
cudaError_t le_form(const char *what, cudaError_t rc);
void le_end(void);
#define FAIL(call) le_form("fail", (call))
#define OK(call) le_form("ok", (call))
dim3 le_dim(unsigned x, unsigned y);

/* last_error_ptds.c: the rows of the per-thread-default-stream entry points (_ptds, _ptsz). */
void le_rows_per_thread(const le_res *r);

#ifdef __cplusplus
}
#endif

#endif
