/* The CUDA library's front-end: the runtime layer (wrappers.c) and the driver layer (driver.c),
 * one api-id space, one set of built-in streams (the runtime's and the driver's handles are
 * the same values). */
#include <cuda.h>
#include <cuda_runtime_api.h>

#include "entry/frontend_shape.h"
#include "kernels/gpu_kernels.h"
#include "runtime/own_calls.h"
#include "layers.h"

static const char *const api_names[HS_CUDA_API_COUNT] = {
#define HS_CUDA_FN(name, ...) [HS_CUDA_API_##name] = #name,
#include "api.inc"
#undef HS_CUDA_FN
#define HS_CU_FN(name, ...) [HS_CU_API_##name] = #name,
#include "driver.inc"
#undef HS_CU_FN
};

static const hs_layer *const layers[] = {&hs_cuda_runtime_layer, &hs_cuda_driver_layer};

static const uintptr_t builtin_streams[] = {0, P(cudaStreamLegacy), P(cudaStreamPerThread)};

static void save_visible(hs_visible *v)
{
    hs_cuda_runtime_save(v);
    hs_cuda_driver_save(v);
}

static int restore_visible(const hs_visible *v)
{
    hs_cuda_driver_restore(v);
    return hs_cuda_runtime_restore(v);
}

/* The runtime records a failing call's code as the thread's last error ("not ready" is no
 * failure); the driver keeps none. */
static bool replaces_last_error(unsigned api, int result, int runtime_version)
{
    (void)runtime_version;
    return api < HS_CUDA_RUNTIME_END && result != cudaSuccess && result != cudaErrorNotReady;
}

const hs_frontend hs_frontend_active = {
    .runtime = "CUDA",
    .kernels = &hs_cuda_kernel_ops,
    .runtime_id = 2,
    .api_names = api_names,
    .n_apis = HS_CUDA_API_COUNT,
    .layers = layers,
    .n_layers = 2,
    .query_pointer = hs_cuda_query_pointer,
    .builtin_streams = builtin_streams,
    .n_builtin_streams = 3,
    .per_thread_stream = P(cudaStreamPerThread),
    .legacy_stream = P(cudaStreamLegacy),
    .save_visible = save_visible,
    .restore_visible = restore_visible,
    .replaces_last_error = replaces_last_error,
};
