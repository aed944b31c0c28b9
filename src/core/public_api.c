/* The exported half of include/hipshadow/hipshadow.h. */
#include "hipshadow/hipshadow.h"
#include "util.h"

#include <stdatomic.h>

atomic_int hs_pause_depth; /* > 0: copies and memsets are forwarded unchecked */

HS_EXPORT void hipshadow_pause_impl(void) { atomic_fetch_add(&hs_pause_depth, 1); }

HS_EXPORT void hipshadow_resume_impl(void)
{
    int depth = atomic_load(&hs_pause_depth);
    while (depth > 0 && !atomic_compare_exchange_weak(&hs_pause_depth, &depth, depth - 1))
        ;
}
