/* hipshadow's own GPU kernels (kernels/transpose.hip): what they are, how to launch them.  The
 * planning (tile widths, grids, splitting a copy for 16-byte vectors) is here, vendor-neutral;
 * each front-end loads its embedded image and launches (src/hip/kernels.c, src/cuda/kernels.c). */
#ifndef HS_GPU_KERNELS_H
#define HS_GPU_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum hs_kernel {
    HS_K_TRANSPOSE_E1,
    HS_K_TRANSPOSE_E2,
    HS_K_TRANSPOSE_E4,
    HS_K_TRANSPOSE_E8,
    HS_K_TRANSPOSE_E16,
    HS_K_TRANSPOSE_E1_PACKED,
    HS_K_TRANSPOSE_E2_PACKED,
    HS_K_COPY16,
    HS_K_COPY1,
    HS_K_REDZONE_FILL,
    HS_K_REDZONE_VERIFY,
    HS_K_COUNT
} hs_kernel;

extern const char *const hs_kernel_names[HS_K_COUNT];

/* What a front-end provides; every function returns the runtime's error code (0 = success). */
typedef struct hs_kernel_ops {
    /* Loads the image at first use; launches kernel k with grid (gx, gy) and block (bx, by). */
    int (*launch)(hs_kernel k, unsigned gx, unsigned gy, unsigned bx, unsigned by, void **params, uintptr_t stream);
    int (*alloc)(void **p, size_t bytes);                 /* the real allocator, unchecked */
    int (*d2h)(void *dst, const void *src, size_t bytes); /* the real synchronous D2H */
    int (*h2d)(void *dst, const void *src, size_t bytes); /* the real synchronous H2D */
    int (*sync)(uintptr_t stream);
    int invalid_value, not_supported; /* the runtime's codes for these */
} hs_kernel_ops;

/* Each front-end's (src/hip/kernels.c, src/cuda/kernels.c): a library defines one of them. */
extern const hs_kernel_ops hs_hip_kernel_ops;
extern const hs_kernel_ops hs_cuda_kernel_ops;

/* dst (cols x rows) = transpose of src (rows x cols), elements of elem bytes, pitched rows. */
int hs_gpu_transpose(void *dst, size_t dpitch, const void *src, size_t spitch, size_t rows, size_t cols, size_t elem,
                     uintptr_t stream);
/* A device-to-device copy through hipshadow's kernels (never through the runtime's copy path). */
int hs_gpu_copy(void *dst, const void *src, size_t bytes, uintptr_t stream);

/* Redzones (kernels/redzones.hip): fill n bytes at dst with the pattern byte on `stream`; with
 * `wait`, wait for it (a synchronous allocation); else later work on the stream comes after it
 * (a stream-ordered one). */
int hs_gpu_redzone_fill(void *dst, size_t n, unsigned pattern, uintptr_t stream, bool wait);
enum { HS_GPU_REDZONE_MAX = 1024 };
/* One launch checks n (<= HS_GPU_REDZONE_MAX) redzones, addr[i] of len[i] bytes: first[i] and
 * last[i] get the first and last byte offsets that differ from the pattern (first[i] =
 * UINT32_MAX when none did).  Returns the runtime's code (not 0: the caller reads back itself). */
int hs_gpu_redzone_verify(const uintptr_t *addr, const uint32_t *len, int n, unsigned pattern, uint32_t *first,
                          uint32_t *last);

#endif
