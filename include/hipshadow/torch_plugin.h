/* The table between hipshadow's core and its PyTorch plugin (libhipshadow-torch.so).
 *
 * The core loads the plugin when it finds PyTorch's libc10_cuda.so in the process (at a device
 * allocation), calls hipshadow_torch_plugin_init once, then asks attach() at each segment
 * allocation until the caching allocator is initialised.  The plugin turns every entry of the
 * allocator's trace (c10::cuda::CUDACachingAllocator::attachAllocatorTraceTracker) into one
 * hipshadow_block_event and hands it to core->block_event; it walks Python frames for the
 * core (python_stack).  C only, fixed-width fields: the two sides are built separately (the
 * plugin on the machine that has torch's headers), so the table is versioned by abi and size. */
#ifndef HIPSHADOW_TORCH_PLUGIN_H
#define HIPSHADOW_TORCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HIPSHADOW_TORCH_ABI 1

/* The allocator's actions, in the order and with the names of PyTorch's TraceEntry::Action. */
enum hipshadow_block_action {
    HIPSHADOW_BLOCK_ALLOC = 0,      /* a block handed out: addr, size = the size asked for */
    HIPSHADOW_BLOCK_FREE_REQUESTED, /* the tensor let go of it; still in use in stream order */
    HIPSHADOW_BLOCK_FREE_COMPLETED, /* back in the cache: the old pointer is dead from now on */
    HIPSHADOW_BLOCK_SEGMENT_ALLOC,  /* cudaMalloc of a segment: addr, size */
    HIPSHADOW_BLOCK_SEGMENT_FREE,   /* cudaFree of a segment */
    HIPSHADOW_BLOCK_SEGMENT_MAP,    /* expandable segments: [addr, addr + size) mapped */
    HIPSHADOW_BLOCK_SEGMENT_UNMAP,  /* expandable segments: [addr, addr + size) unmapped */
    HIPSHADOW_BLOCK_SNAPSHOT,
    HIPSHADOW_BLOCK_OOM, /* addr is the free memory the driver reported */
    HIPSHADOW_BLOCK_ACTION_COUNT
};

typedef struct hipshadow_block_event {
    uint32_t action; /* enum hipshadow_block_action */
    int32_t device;  /* -1 when the allocator does not say */
    uint64_t addr;
    uint64_t size;
    uint64_t stream;  /* cudaStream_t */
    uint64_t pool[2]; /* MempoolId_t: {0, 0} the default pool, else a graph's or a user's private pool */
    uint32_t pystack; /* the Python stack at the event (python_stacks=alloc), 0 when none */
    uint32_t context; /* python_stacks=alloc: which gathering the allocator attached (0: none).  The
                           * allocator attaches a block's allocation context to its free when the free
                           * gathered none: the same number then means "no stack of the free" */
} hipshadow_block_event;

/* What the core offers the plugin. */
typedef struct hipshadow_torch_core {
    uint32_t abi;      /* HIPSHADOW_TORCH_ABI */
    uint32_t size;     /* sizeof(hipshadow_torch_core) */
    int python_stacks; /* 0: off; 1: at findings; 2: also at block allocations and frees */
    void (*block_event)(const hipshadow_block_event *e);
    /* Python stacks: frames are interned text ("file:line in function"), stacks arrays of frame ids. */
    uint32_t (*pyframe_intern)(const char *text);
    uint32_t (*pystack_put)(const uint32_t *frames, int n);
} hipshadow_torch_core;

/* What the plugin offers the core. */
typedef struct hipshadow_torch_plugin {
    uint32_t abi;
    uint32_t size;
    const char *description; /* "PyTorch 2.11.0+cu130 (native caching allocator)" */
    /* Attach the trace tracker.  1: attached; 0: the allocator is not initialised yet (ask again
     * at the next segment allocation); -1: never (why is written to why[0..len)). */
    int (*attach)(char *why, size_t len);
    /* The calling thread's Python stack as a core pystack id; 0 when none.  may_take_gil: the
     * caller holds no lock a Python thread could wait for (the GIL is taken only then). */
    uint32_t (*python_stack)(int may_take_gil);
} hipshadow_torch_plugin;

/* Exported by the plugin.  0 on success; -1 with the reason in why. */
typedef int (*hipshadow_torch_plugin_init_fn)(const hipshadow_torch_core *core, hipshadow_torch_plugin *out, char *why,
                                              size_t len);
#define HIPSHADOW_TORCH_PLUGIN_INIT "hipshadow_torch_plugin_init"

#ifdef __cplusplus
}
#endif

#endif
