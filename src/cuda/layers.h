/* The CUDA library's two layers and their api ids: the runtime's entry points (api.inc,
 * wrappers.c) first, then the driver's (driver.inc, driver.c).  library.c puts them together. */
#ifndef HS_CUDA_LAYERS_H
#define HS_CUDA_LAYERS_H

#include "runtime/frontend.h"

enum {
#define HS_CUDA_FN(name, ...) HS_CUDA_API_##name,
#include "api.inc"
#undef HS_CUDA_FN
    HS_CUDA_RUNTIME_END,
    HS_CU_API_BEFORE_FIRST = HS_CUDA_RUNTIME_END - 1,
#define HS_CU_FN(name, ...) HS_CU_API_##name,
#include "driver.inc"
#undef HS_CU_FN
    HS_CUDA_API_COUNT
};

extern const hs_layer hs_cuda_runtime_layer; /* wrappers.c */
extern const hs_layer hs_cuda_driver_layer;  /* driver.c */

/* The sticky faults of asynchronous work; the runtime's and the driver's codes are the same
 * numbers (700 illegal address, 714-719, ...) (driver.c). */
bool hs_cuda_is_device_fault(int code);

/* What the program can observe of each layer, saved and put back around hipshadow's own calls
 * (own_calls.h): the runtime's last error (wrappers.c), the driver's current context (driver.c).
 * The runtime's restore returns the last error it had to take out of the runtime (0: none). */
struct hs_visible;
void hs_cuda_runtime_save(struct hs_visible *v);
int hs_cuda_runtime_restore(const struct hs_visible *v);
void hs_cuda_driver_save(struct hs_visible *v);
void hs_cuda_driver_restore(const struct hs_visible *v);

/* A pointer the shadow map does not know, as the driver describes it (driver.c). */
bool hs_cuda_query_pointer(uintptr_t p, hs_span *span);

#endif
