/* What the core needs from a front-end.  Each preload library links the core with exactly one
 * front-end, which defines hs_frontend_active.  A front-end has one or more layers (the HIP
 * runtime; the CUDA runtime and the CUDA driver), each a contiguous range of the library's
 * global api ids, with its own error codes. */
#ifndef HS_FRONTEND_H
#define HS_FRONTEND_H

#include "shadow/span.h"

#include <stdbool.h>

struct hs_kernel_ops; /* gpu_kernels.h */
struct hs_visible;    /* own_calls.h */

/* One exported wrapper, for lookups: a program that asks for `name` (or is handed `*real` or
 * `*alias` by the runtime's own get-proc-address) gets `wrapper` instead. */
typedef struct hs_lookup_entry {
    const char *name;
    void *wrapper;
    void *const *real;  /* the real function, once resolved */
    void *const *alias; /* another address of it (a get-proc-address answer), or NULL */
} hs_lookup_entry;

/* One kernel parameter as the platform describes it. */
/* What a kernel does through a pointer parameter (AMD code-object metadata: .actual_access, else .access). */
typedef enum hs_param_access {
    HS_PARAM_ACCESS_UNKNOWN = 0,
    HS_PARAM_READ_ONLY,
    HS_PARAM_WRITE_ONLY,
    HS_PARAM_READ_WRITE
} hs_param_access;

typedef struct hs_kernel_param {
    uint32_t offset, size; /* in the argument buffer */
    bool pointer_known;    /* the platform says whether it is a pointer (AMD code-object metadata) */
    bool pointer;
    uint8_t access; /* hs_param_access */
} hs_kernel_param;

/* What one device allows, for the rules that explain a runtime's refusal (runtime_rules.c).  A
 * limit of 0 is unknown. */
enum { HS_LIMITS_MAX_DEVICES = 64 };
typedef struct hs_device_limits {
    bool known; /* the front-end answered */
    int device_count;
    uint32_t max_threads_per_block;
    uint32_t max_block[3], max_grid[3];
    uint64_t max_shmem, max_shmem_optin; /* dynamic shared memory per block: by default, opted in */
    bool aql_grid_32bit;                 /* AMD: grid * block, per dimension, is a 32-bit AQL field */
    uint64_t peers;                      /* bit d: this device can access device d's memory */
} hs_device_limits;

/* A layer's functions that call the runtime (current_device, kernel_name, kernel_params,
 * stream_sync, device_limits, fill, read) and the front-end's query_pointer and kernels are reached through
 * own_calls.h only, which keeps what the program observes as it was. */
typedef struct hs_layer {
    const char *name;           /* "HIP runtime", "CUDA runtime", "CUDA driver" */
    uint16_t first_api, n_apis; /* its part of hs_call.api */
    const char *(*error_name)(int code);
    bool (*is_failure)(int code); /* false for success and for "not ready" answers */
    /* The device of the calling thread's current context (the device new allocations go to);
     * -1 when unknown.  Called with the re-entrancy guard held. */
    int (*current_device)(void);
    /* Makes sure the layer's real functions are resolved, when its library is loaded by now
     * (the CUDA driver is loaded late, by the runtime). */
    void (*resolve)(void);
    /* Streams may reach this layer that it never saw created (a runtime makes its own under
     * wrapped calls, which the layer below forwards unseen): a handle never seen is taken as
     * valid, and only a destroyed one is invalid-stream. */
    bool unannounced_streams;
    /* A kernel may be launched only on a stream of the current device (CUDA's documented rule;
     * HIP runs it on the stream's device). */
    bool kernels_on_current_device;
    /* Kernels.  A sticky fault of asynchronous work (illegal address, launch failure, ...). */
    bool (*is_device_fault)(int code);
    /* The kernel's name (NULL: unknown) and its parameters (the count, or -1: unknown); asked
     * once per kernel, with the re-entrancy guard held. */
    const char *(*kernel_name)(const void *kernel, int ref, uintptr_t stream);
    int (*kernel_params)(const void *kernel, int ref, hs_kernel_param *out, int max);
    /* serialize=1: waits for the stream and returns the runtime's code. */
    int (*stream_sync)(uintptr_t stream);
    /* The limits of `device` (this layer's numbering), asked once per device; false: unknown. */
    bool (*device_limits)(int device, hs_device_limits *out);
    /* Redzones (redzones=N): fill device bytes with a value, and read device bytes back, with
     * the real runtime, synchronously. */
    int (*fill)(uintptr_t device, int value, size_t n);
    int (*read)(void *host, uintptr_t device, size_t n);
    /* Modules, for kernel metadata: a module was loaded from an image; a function was found in one. */
    void (*module_loaded)(const void *module, const void *image);
    void (*function_found)(const void *function, const void *module, const char *name);
    const hs_lookup_entry *lookup; /* every exported wrapper of the layer, in any order */
    int n_lookup;
} hs_layer;

typedef struct hs_frontend {
    const char *runtime;          /* "HIP", "CUDA" */
    int runtime_id;               /* 1 HIP, 2 CUDA (the log header's `runtime`) */
    const char *const *api_names; /* indexed by hs_call.api, across all layers */
    int n_apis;
    const hs_layer *const *layers; /* in api-id order */
    int n_layers;
    /* A pointer the shadow map does not know: does the runtime know it as device memory?
     * Fills base/size/device of *span.  Called with the re-entrancy guard held. */
    bool (*query_pointer)(uintptr_t p, hs_span *span);
    const uintptr_t *builtin_streams; /* handles valid without creation: null, legacy, per-thread */
    int n_builtin_streams;
    uintptr_t per_thread_stream;         /* the handle meaning "this thread's default stream" */
    uintptr_t legacy_stream;             /* another name of the legacy null stream (CUDA: 1), or 0 */
    const struct hs_kernel_ops *kernels; /* hipshadow's own GPU kernels; NULL when none were built */
    /* Registers for the runtime's GPU memory-fault events (gpu_faults.h), once the runtime is
     * initialised.  true: settled (registered, or never possible); false: try after a later call.
     * NULL: the platform announces no faults. */
    bool (*arm_fault_events)(void);
    /* What the program can observe of the runtime, which hipshadow's own calls leave as they found
     * it (own_calls.h): save it; put it back, returning the last error the runtime no longer
     * holds and hipshadow now owes the program (0: none); and whether the program's call of `api`
     * that returned `result` replaced the runtime's per-thread last error (false for a layer
     * that keeps none).  NULL: nothing to keep. */
    void (*save_visible)(struct hs_visible *v);
    int (*restore_visible)(const struct hs_visible *v);
    bool (*replaces_last_error)(unsigned api, int result, int runtime_version);
} hs_frontend;

extern const hs_frontend hs_frontend_active;

/* The layer an api id belongs to. */
static inline const hs_layer *hs_layer_of(unsigned api)
{
    for (int i = 1; i < hs_frontend_active.n_layers; i++)
        if (api < hs_frontend_active.layers[i]->first_api)
            return hs_frontend_active.layers[i - 1];
    return hs_frontend_active.layers[hs_frontend_active.n_layers - 1];
}

#endif
