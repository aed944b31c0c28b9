/* AMD GPU memory faults, as ROCr announces them: hipshadow registers a system event handler
 * (hsa_amd_register_system_event_handler, hsa/hsa_ext_amd.h) and turns each
 * HSA_AMD_GPU_MEMORY_FAULT_EVENT's address into a device-fault finding (core/gpu_faults.h).
 *
 * What ROCr does around it (runtime.cpp, Runtime::VMFaultHandler, on its async event thread):
 * it calls every registered handler, then, unless one of them returned HSA_STATUS_SUCCESS, prints
 * "Memory access fault by GPU node-N ..." and aborts.  hipshadow's handler reports, flushes, and
 * returns HSA_STATUS_ERROR: "not handled here", so ROCr carries on exactly as it would without
 * hipshadow (rocprofiler-sdk's handler answers the same way).  Other events are not ours either.
 *
 * The HSA runtime is never loaded by hipshadow: it is looked up among the loaded libraries (the
 * HIP runtime links it), after the HIP runtime's first successful call has initialised it. */
#define _GNU_SOURCE
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include "path/gpu_faults.h"
#include "findings/report.h"
#include "hsa_events.h"

#include <dlfcn.h>
#include <stdio.h>

static uint16_t event_api; /* the front-end's api id naming the event in reports */

static hsa_status_t on_system_event(const hsa_amd_event_t *event, void *data)
{
    (void)data;
    if (event && event->event_type == HSA_AMD_GPU_MEMORY_FAULT_EVENT)
        hs_gpu_fault_report(event_api, (uintptr_t)event->memory_fault.virtual_address,
                            event->memory_fault.fault_reason_mask, event->memory_fault.agent.handle);
    return HSA_STATUS_ERROR; /* not handled: ROCr decides what follows, as without hipshadow */
}

bool hs_hsa_events_arm(uint16_t api)
{
    static int tries;
    event_api = api;
    sigset_t saved;
    hs_loader_signals_hold(&saved);
    void *hsa = dlopen("libhsa-runtime64.so.1", RTLD_LAZY | RTLD_NOLOAD);
    typedef hsa_status_t (*register_fn)(hsa_amd_system_event_callback_t, void *);
    register_fn reg = hsa ? (register_fn)dlsym(hsa, "hsa_amd_register_system_event_handler") : NULL;
    hs_loader_signals_release(&saved);
    if (!hsa)
        return ++tries >= 8; /* not loaded (yet): look again after a few more calls, then stop */
    hsa_status_t s = reg ? reg(on_system_event, NULL) : HSA_STATUS_ERROR;
    hs_loader_signals_hold(&saved);
    dlclose(hsa); /* NOLOAD took a reference of its own: give it back */
    hs_loader_signals_release(&saved);
    if (s == HSA_STATUS_SUCCESS)
        return true;
    if (s == HSA_STATUS_ERROR_NOT_INITIALIZED && ++tries < 8)
        return false; /* the runtime has not initialised HSA yet */
    char line[256];
    snprintf(line, sizeof line,
             "could not register an HSA system event handler (%s, status 0x%x): GPU memory faults are traced "
             "through the launch ledger only (device-fault at the next call)",
             reg ? "hsa_amd_register_system_event_handler failed" : "the HSA runtime lacks it", (unsigned)s);
    hs_report_note(line);
    return true;
}
