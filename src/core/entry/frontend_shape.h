/* What the front-ends (src/hip, src/cuda) share when they describe a call for the core: handles
 * as addresses, a launch's fields, the `extra` array of a module launch, the HIP runtime's
 * sonames.  Each front-end adds its own vendor's spellings (stream handles, launch configs). */
#ifndef HS_FRONTEND_SHAPE_H
#define HS_FRONTEND_SHAPE_H

#include "call.h"
#include "process/util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* A front-end's resolve_runtime(): runs resolve_all once, under pthread_once; once it has run,
 * a wrapper's check is one load of a flag, not a call. */
#define HS_RESOLVE_ONCE(resolve_all)                                                                                   \
    static pthread_once_t resolve_once_ = PTHREAD_ONCE_INIT;                                                           \
    HS_HOT_DATA static atomic_bool resolved_;                                                                          \
    static void resolve_all_and_say_(void)                                                                             \
    {                                                                                                                  \
        resolve_all();                                                                                                 \
        atomic_store_explicit(&resolved_, true, memory_order_release);                                                 \
    }                                                                                                                  \
    static inline void resolve_runtime(void)                                                                           \
    {                                                                                                                  \
        if (HS_UNLIKELY(!atomic_load_explicit(&resolved_, memory_order_acquire)))                                      \
            pthread_once(&resolve_once_, resolve_all_and_say_);                                                        \
    }

/* A pointer or handle as the address the core keeps. */
#define P(x) ((uintptr_t)(x))

/* A launch: the kernel, how it is named (hs_kernel_ref), its geometry and its arguments. */
#define HS_LAUNCH_XYZ(f, ref, gx, gy, gz, bx, by, bz, shm, params)                                                     \
    .op = HS_OP_LAUNCH, .kernel = (const void *)(f), .kernel_ref = ref, .grid = {gx, gy, gz}, .block = {bx, by, bz},   \
    .shmem = (shm), .kernel_params = (params)
/* The same with grid and block as dim3 (x, y, z). */
#define HS_LAUNCH_DIM3(f, ref, grid_, block_, shm, params)                                                             \
    HS_LAUNCH_XYZ(f, ref, (grid_).x, (grid_).y, (grid_).z, (block_).x, (block_).y, (block_).z, shm, params)
/* A launch of a function (a module's, by handle) with its geometry spelled out. */
#define KERNEL_XYZ(f, gx, gy, gz, bx, by, bz, shm, params)                                                             \
    HS_LAUNCH_XYZ(f, HS_KREF_FUNCTION, gx, gy, gz, bx, by, bz, shm, params)

/* A module launch's `extra`: {BUFFER_POINTER, buf, BUFFER_SIZE, &size, END}, each vendor's keys. */
static inline const void *hs_extra_param(void **extra, void *key, void *end)
{
    for (int i = 0; extra && i < 16 && extra[i] != end; i += 2)
        if (extra[i] == key)
            return extra[i + 1];
    return NULL;
}

static inline size_t hs_extra_size(const void *p) { return p ? *(const size_t *)p : 0; }

#define HS_EXTRA_BUFFER(extra, pointer_key, size_key, end)                                                             \
    .arg_buffer = hs_extra_param(extra, pointer_key, end),                                                             \
    .arg_buffer_size = hs_extra_size(hs_extra_param(extra, size_key, end))

/* The HIP runtime's sonames, newest first: an initializer for a NULL-ended array. */
#define HS_HIP_SONAMES                                                                                                 \
    {                                                                                                                  \
        "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so", NULL                             \
    }

#endif
