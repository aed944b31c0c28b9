/* Shared by the CUDA test programs (host code only: they exercise the runtime's copies). */
#ifndef GPU_COMMON_H
#define GPU_COMMON_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define TRY(call)                                                                                                      \
    ({                                                                                                                 \
        cudaError_t e_ = (call);                                                                                       \
        if (e_ != cudaSuccess)                                                                                         \
            fprintf(stderr, "%s failed: %s (%d)\n", #call, cudaGetErrorString(e_), (int)e_);                           \
        e_;                                                                                                            \
    })
#define MUST(call)                                                                                                     \
    do {                                                                                                               \
        if (TRY(call) != cudaSuccess)                                                                                  \
            exit(99);                                                                                                  \
    } while (0)

#endif
