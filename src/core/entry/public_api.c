/* The exported half of include/hipshadow/hipshadow.h. */
#include "hipshadow/hipshadow.h"
#include "path/init.h"
#include "kernels/gpu_kernels.h"
#include "runtime/own_calls.h"
#include "shadow/regions.h"
#include "shadow/shadow.h"
#include "process/stats.h"
#include "process/util.h"

#include <stdio.h>

HS_EXPORT void hipshadow_pause_impl(void) { hs_pause_push(); }
HS_EXPORT void hipshadow_resume_impl(void) { hs_pause_pop(); }

/* The calls below may come before the first wrapped call: make sure the core is up. */

HS_EXPORT int hipshadow_print_stats_impl(void)
{
    hs_ensure_init();
    return hs_stats_print() ? 0 : -1;
}

HS_EXPORT int hipshadow_region_register_impl(const void *base, size_t size, const char *name)
{
    hs_ensure_init();
    if (!base || !size) {
        hs_say("hipshadow: hipshadow_region_register(%p, %zu, \"%s\"): empty region ignored\n", base, size,
               name ? name : "");
        return -1;
    }
    return hs_region_register((uintptr_t)base, size, name);
}

HS_EXPORT int hipshadow_region_unregister_impl(const void *base)
{
    hs_ensure_init();
    return hs_region_unregister((uintptr_t)base) ? 0 : -1;
}

HS_EXPORT int hipshadow_name_allocation_impl(const void *ptr, const char *name)
{
    hs_ensure_init();
    hs_span s;
    if (hs_shadow_lookup((uintptr_t)ptr, &s) != HS_WHERE_LIVE)
        return -1;
    hs_alloc_set_name(s.id, name);
    return 0;
}

/* The one-call replacement for a D2H + CPU transpose + H2D round trip (seed 003). */
HS_EXPORT int hipshadow_transpose2d_pitched_impl(void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
                                                 size_t rows, size_t cols, size_t elem_size, void *stream)
{
    hs_ensure_init();
    int rc = hs_gpu_transpose(dst, dst_pitch, src, src_pitch, rows, cols, elem_size, (uintptr_t)stream);
    hs_own_end();
    return rc;
}

HS_EXPORT int hipshadow_transpose2d_impl(void *dst, const void *src, size_t rows, size_t cols, size_t elem_size,
                                         void *stream)
{
    return hipshadow_transpose2d_pitched_impl(dst, rows * elem_size, src, cols * elem_size, rows, cols, elem_size,
                                              stream);
}
