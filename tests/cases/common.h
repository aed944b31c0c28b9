/* Shared by the test programs: error checking that prints like the field reports did. */
#ifndef CASES_COMMON_H
#define CASES_COMMON_H

#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define MiB (1024ull * 1024ull)

/* Calls a HIP function; on failure prints what the seed reports printed and returns the code. */
#define TRY(call)                                                                                                      \
    ({                                                                                                                 \
        hipError_t e_ = (call);                                                                                        \
        if (e_ != hipSuccess)                                                                                          \
            fprintf(stderr, "%s failed with code %d (%s)\n", #call, (int)e_, hipGetErrorString(e_));                   \
        e_;                                                                                                            \
    })

/* For set-up steps that must work. */
#define MUST(call)                                                                                                     \
    do {                                                                                                               \
        if (TRY(call) != hipSuccess)                                                                                   \
            exit(99);                                                                                                  \
    } while (0)

#endif
