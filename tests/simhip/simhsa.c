/* A stand-in for libhsa-runtime64.so.1, the part of ROCr that hipshadow meets: system event
 * handlers.  The simulated HIP runtime links it, as libamdhip64 links the real one, so it is
 * loaded (and initialised by the HIP runtime's first call) without hipshadow ever loading it.
 *
 * It mirrors ROCr (runtime/hsa-runtime/core/runtime/runtime.cpp):
 *  - hsa_amd_register_system_event_handler appends to a list (SetCustomSystemEventHandler), and
 *    answers HSA_STATUS_ERROR_NOT_INITIALIZED before the runtime is open (IS_OPEN);
 *  - a GPU memory fault calls every handler with HSA_AMD_GPU_MEMORY_FAULT_EVENT, the agent, the
 *    faulting address and the reason mask (VMFaultHandler); the fault counts as handled only if
 *    one of them returned HSA_STATUS_SUCCESS.  What happens next is the caller's (simhip.c). */
#define _GNU_SOURCE
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define SIM_EXPORT __attribute__((visibility("default")))

enum { MAX_HANDLERS = 8 };

static struct {
    pthread_mutex_t lock;
    atomic_int open;
    int n;
    hsa_amd_system_event_callback_t fn[MAX_HANDLERS];
    void *data[MAX_HANDLERS];
} hsa = {.lock = PTHREAD_MUTEX_INITIALIZER};

SIM_EXPORT hsa_status_t hsa_amd_register_system_event_handler(hsa_amd_system_event_callback_t callback, void *data)
{
    if (!atomic_load(&hsa.open))
        return HSA_STATUS_ERROR_NOT_INITIALIZED;
    if (!callback)
        return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    if (getenv("SIMHSA_REFUSE_HANDLERS"))
        return HSA_STATUS_ERROR; /* for tests: a runtime that will not take a handler */
    pthread_mutex_lock(&hsa.lock);
    hsa_status_t s = HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    if (hsa.n < MAX_HANDLERS) {
        hsa.fn[hsa.n] = callback;
        hsa.data[hsa.n++] = data;
        s = HSA_STATUS_SUCCESS;
    }
    pthread_mutex_unlock(&hsa.lock);
    return s;
}

/* The HIP runtime initialised HSA (hsa_init). */
SIM_EXPORT void simhsa_open(void) { atomic_store(&hsa.open, 1); }

/* A GPU memory fault at `address`: every handler hears it.  Returns 1 when one of them handled it. */
SIM_EXPORT int simhsa_memory_fault(uint64_t address, uint32_t reasons)
{
    hsa_amd_event_t event = {.event_type = HSA_AMD_GPU_MEMORY_FAULT_EVENT};
    event.memory_fault.agent.handle = 0x5151; /* the simulated GPU agent */
    event.memory_fault.virtual_address = address;
    event.memory_fault.fault_reason_mask = reasons;
    pthread_mutex_lock(&hsa.lock);
    int n = hsa.n;
    hsa_amd_system_event_callback_t fn[MAX_HANDLERS];
    void *data[MAX_HANDLERS];
    for (int i = 0; i < n; i++)
        fn[i] = hsa.fn[i], data[i] = hsa.data[i];
    pthread_mutex_unlock(&hsa.lock); /* handlers run unlocked, as ROCr copies its list first */
    int handled = 0;
    for (int i = 0; i < n; i++)
        if (fn[i](&event, data[i]) == HSA_STATUS_SUCCESS)
            handled = 1;
    /* Said always, so a test can tell that no fault happened. */
    fprintf(stderr, "simhsa: memory fault event at 0x%llx, %d handler%s, %s\n", (unsigned long long)address, n,
            n == 1 ? "" : "s", handled ? "handled" : "not handled");
    return handled;
}
