/* GPU memory faults the runtime announces as they happen (AMD: ROCr's system event
 * HSA_AMD_GPU_MEMORY_FAULT_EVENT, received by the HIP front-end's hsa_events.c).  NVIDIA's
 * driver has no such event: there, the launch ledger, serialize=1 and redzones answer. */
#ifndef HS_GPU_FAULTS_H
#define HS_GPU_FAULTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

extern atomic_bool hs_fault_events_settled;

/* After a successful forwarded call: the runtime is initialised, so the front-end can register
 * for fault events now (fault_events=1).  Tried again after later calls until it is settled. */
void hs_gpu_faults_arm(void);
static inline void hs_gpu_faults_after_success(void)
{
    if (__builtin_expect(!atomic_load_explicit(&hs_fault_events_settled, memory_order_relaxed), 0))
        hs_gpu_faults_arm();
}

/* The runtime announced a fault at `address` (reasons: HS_FAULT_* bits) on the GPU `agent`;
 * `api` is the front-end's id of the event.  Reports device-fault with where the address falls
 * and the suspects, and flushes everything before returning: the runtime may abort next.
 * Called on the runtime's event thread; it never calls back into the runtime. */
void hs_gpu_fault_report(uint16_t api, uintptr_t address, uint32_t reasons, uint64_t agent);

#endif
