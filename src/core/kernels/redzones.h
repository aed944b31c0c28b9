/* Redzones (redzones=N): device allocations made through the wrapped allocators get N bytes
 * more (rounded up to 256), filled with a pattern; the program sees the same base and size.
 * The redzones of allocations that a kernel launch had a pointer into are read back at the next
 * synchronisation point, or when the allocation is freed: a byte that changed is a kernel's
 * write past the allocation's end. */
#ifndef HS_REDZONES_H
#define HS_REDZONES_H

#include "call.h"
#include "runtime/frontend.h"

enum { HS_REDZONE_PATTERN = 0xa5, HS_REDZONE_MAX_DAMAGE = 8 };

/* A redzone found overwritten. */
typedef struct hs_redzone_damage {
    hs_span alloc;        /* the allocation (size: what the program asked for) */
    uint32_t first, last; /* the first and last overwritten bytes, counted past the allocation's end */
    bool by_kernel;       /* found by hipshadow's verification kernel (else read back with a copy) */
} hs_redzone_damage;

void hs_redzones_init(uint64_t bytes);
bool hs_redzones_on(void);
/* The wrapper's outermost call on this thread (only that call is padded, not the runtime's own). */
void hs_redzone_enter(const hs_call *c);
void hs_redzone_leave(void);
/* The size to ask the runtime for: size + redzone for the outermost allocation call. */
size_t hs_redzone_padded(const hs_call *c, size_t size);
/* After the call: true once when the padded request failed; the wrapper then asks again
 * without the redzone (and says so, once). */
bool hs_redzone_retry(const hs_call *c, int failed);
/* The redzone bytes this call's allocation got (0: none). */
uint32_t hs_redzone_of(const hs_call *c, size_t size);
/* A launch had a pointer into an allocation with a redzone: check it at the next sync. */
void hs_redzone_touch(uintptr_t base, size_t size, uint32_t redzone, uint64_t id);
/* An allocation with a redzone was made on `device` (its redzone filled there). */
void hs_redzone_allocated_on(int device);
/* Checks the touched redzones (all, or only the allocation at `only_base` when not 0): with one
 * launch of hipshadow's verification kernel when every redzone is on `current_device` (the
 * calling thread's), else by reading each back with the layer's read; fills *out with the
 * damaged ones and returns how many. */
int hs_redzones_verify(const hs_layer *layer, int current_device, uintptr_t only_base, hs_redzone_damage *out, int max);
void hs_redzones_after_fork(void);

#endif
