/* Everything that flows down the path of one wrapped call, in the order it is made:
 *   hs_call        what the program asked (front-ends fill it from their api.inc line)
 *   hs_facts       what hipshadow found out about it (facts.c)
 *   hs_finding     what the rules say is wrong (check.c)
 *   hs_decision    what the policy does about it (policy.c)
 *   hs_call_state  all of the above for one call, carried from before to after forwarding
 *   hs_event       one finding as reported (report.c, record.c)
 * The core never sees HIP or CUDA types: front-ends translate. */
#ifndef HS_CALL_H
#define HS_CALL_H

#include "shadow/hostmem.h"
#include "streams/access.h"
#include "streams/ordering.h"
#include "shadow/shadow.h"
#include "streams/streams.h"
#include "process/util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Same numbering as hipMemcpyKind and cudaMemcpyKind. */
typedef enum hs_dir { HS_DIR_H2H = 0, HS_DIR_H2D = 1, HS_DIR_D2H = 2, HS_DIR_D2D = 3, HS_DIR_DEFAULT = 4 } hs_dir;

/* The operations; what each one gathers, checks and changes is its row in ops.c. */
typedef enum hs_op {
    HS_OP_OTHER = 0,
    HS_OP_ALLOC, /* *out_ptr receives the allocation (or register_ptr names it) */
    HS_OP_FREE,
    HS_OP_COPY,
    HS_OP_MEMSET,
    HS_OP_STREAM_CREATE, /* *out_stream receives the handle */
    HS_OP_STREAM_DESTROY,
    HS_OP_SYNC,         /* stream/device/event synchronisation or query (see hs_sync) */
    HS_OP_LOOKUP,       /* get-proc-address style: checked only for its result */
    HS_OP_EVENT_CREATE, /* *out_event receives the handle */
    HS_OP_EVENT_DESTROY,
    HS_OP_EVENT_RECORD, /* event recorded on stream */
    HS_OP_STREAM_WAIT,  /* stream waits for event */
    HS_OP_CAPTURE_BEGIN,
    HS_OP_CAPTURE_END,
    HS_OP_POOL_CREATE, /* *out_pool receives the handle */
    HS_OP_POOL_DESTROY,
    HS_OP_LAUNCH,       /* a kernel, graph or host function enqueued on a stream */
    HS_OP_VMM_RESERVE,  /* *out_ptr receives the reserved range of alloc_bytes */
    HS_OP_VMM_FREE,     /* the reservation at free_ptr is given back */
    HS_OP_VMM_CREATE,   /* *out_vmm_handle receives a physical handle of alloc_bytes on `device` */
    HS_OP_VMM_RELEASE,  /* vmm_handle is released */
    HS_OP_VMM_MAP,      /* vmm_handle is mapped at dst, bytes long */
    HS_OP_VMM_UNMAP,    /* [dst, dst + bytes) is unmapped */
    HS_OP_MODULE_LOAD,  /* *out_module is loaded from module_image */
    HS_OP_FUNCTION_GET, /* *out_function is function_name of module */
    HS_OP_COUNT
} hs_op;

typedef enum hs_sync { HS_SYNC_STREAM = 0, HS_SYNC_DEVICE, HS_SYNC_EVENT } hs_sync;

/* ---- the call ---- */

typedef struct hs_call {
    uint16_t api; /* index into the front-end's table */
    hs_op op;
    /* copies and memsets */
    uintptr_t dst, src;
    size_t bytes;      /* what the program asked for (2-D: width * height) */
    size_t dst_extent; /* bytes touched from dst; 0 = bytes (2-D: (height-1)*pitch + width) */
    size_t src_extent;
    /* 2-D and 3-D copies and memsets (HS_COPY_2D): the row width and each side's pitch, which the
     * runtime's geometry rules need (runtime_rules.c); height 0: no pitched geometry stated */
    size_t width, height, dst_pitch, src_pitch;
    int dir;             /* hs_dir as stated by the call */
    bool dir_by_address; /* the call names device memory by address, with no kind to state (the
                               * CUDA driver's cuMemcpyDtoH...): pinned or registered host memory,
                               * mapped at the same address on the device, is device memory to it */
    bool async;
    /* streams: has_stream is false for calls that take none (then the null stream is implied) */
    bool has_stream;
    uintptr_t stream;
    void *out_stream;      /* hipStream_t* / cudaStream_t* */
    unsigned stream_flags; /* creation flags: 1 = non-blocking */
    uint8_t sync;          /* hs_sync, for HS_OP_SYNC */
    int capture_mode;
    /* events and pools */
    uintptr_t event;
    void *out_event;
    uintptr_t pool;
    void *out_pool;
    /* the program's return address into its own code: dedupes info notes per call site */
    uintptr_t caller;
    /* allocation and free */
    void **out_ptr;
    uintptr_t register_ptr; /* hipHostRegister: the host range being registered */
    size_t alloc_bytes;
    size_t *out_pitch; /* pitched allocations: size = *out_pitch * alloc_rows */
    size_t alloc_rows;
    uint32_t mem_kind; /* hs_mem_kind */
    uintptr_t free_ptr;
    /* virtual memory: physical handles */
    uint64_t vmm_handle;
    void *out_vmm_handle; /* CUmemGenericAllocationHandle* / hipMemGenericAllocationHandle_t* */
    /* devices the call names (peer copies; where a physical handle lives) */
    bool devices_stated;
    int dst_device, src_device;
    /* lookups (hipGetProcAddress): the symbol asked for and where the answer goes */
    const char *lookup_symbol;
    void **lookup_result;
    /* kernel launches: what names the kernel (a host stub, a module function, a graph), its
     * geometry, and its arguments (one pointer per argument, to its value; or one buffer) */
    const void *kernel;
    uint8_t kernel_ref; /* hs_kernel_ref */
    uint32_t grid[3], block[3];
    size_t shmem;
    void **kernel_params;
    void *host_data;        /* host functions and stream callbacks (kernel: the function): its data */
    bool host_callback;     /* a stream callback (stream, status, data), not a host function (data) */
    const void *arg_buffer; /* HIP_LAUNCH_PARAM_BUFFER_POINTER / CU_LAUNCH_PARAM_BUFFER_POINTER */
    size_t arg_buffer_size;
    /* modules */
    void **out_module;
    const void *module_image;
    void **out_function;
    const void *module;
    const char *function_name;
} hs_call;

/* How a launch names its kernel, so the front-end can ask the runtime about it. */
typedef enum hs_kernel_ref {
    HS_KREF_NONE = 0,
    HS_KREF_STUB,     /* a host-side stub: hipLaunchKernel, cudaLaunchKernel */
    HS_KREF_FUNCTION, /* a module function: hipFunction_t, CUfunction */
    HS_KREF_GRAPH,    /* an executable graph: its kernels are not looked into */
    HS_KREF_HOST_FN,  /* a host function run in stream order */
} hs_kernel_ref;

/* What a launch's arguments point into. */
typedef enum hs_arg_state { HS_ARG_LIVE = 0, HS_ARG_FREED, HS_ARG_UNKNOWN } hs_arg_state;
typedef enum hs_arg_how { HS_ARG_EXACT = 0, HS_ARG_SCANNED } hs_arg_how;

typedef struct hs_launch_arg {
    uint16_t index; /* the argument's position (scanned: the byte offset / 8) */
    uint8_t state;  /* hs_arg_state */
    uint8_t how;    /* hs_arg_how: the platform says it is a pointer, or a scan found it */
    uint8_t kind;   /* the allocation's hs_mem_kind (0: in none) */
    uintptr_t value;
    uint64_t alloc_id;
    int64_t offset;      /* from the allocation's base */
    uint64_t alloc_size; /* the allocation's size, and its redzone (redzones=N) */
    uint32_t redzone;
    uint8_t block_state; /* live allocation: the PyTorch block it points into (hs_block_state; 0: none) */
    bool region_freed;   /* a pointer parameter into a region freed through NVTX */
    uint8_t access;      /* what the kernel does through it, when the platform says (hs_param_access) */
} hs_launch_arg;

enum { HS_LAUNCH_MAX_ARGS = 8 };

/* ---- the facts ---- */

typedef enum hs_side_id { HS_SIDE_NONE = 0, HS_SIDE_DST, HS_SIDE_SRC } hs_side_id;

/* What the shadow and the host probe know about one side of a copy (or the pointer freed). */
typedef struct hs_side {
    uintptr_t ptr;
    size_t extent;      /* bytes the call touches from ptr */
    hs_where where;     /* live / freed / none */
    bool runtime_known; /* where == NONE, but the runtime reports device memory (alloc filled) */
    hs_span alloc;      /* valid when where != NONE or runtime_known */
    bool host_checked;  /* the host probe ran (pageable host side) */
    hs_host_fact host;
    bool in_region;        /* an annotated region (hipshadow_region_register, NVTX) holds ptr */
    bool region_freed;     /* instead, a region freed through NVTX (quarantined) holds it */
    uint8_t region_denied; /* in_region: the access (regions.h READ/WRITE) this thread lacks */
    hs_span region;
    /* mapped memory: bytes mapped without a gap from alloc.base on, through the adjacent maps
     * of the same reservation (0: just alloc.size) */
    uint64_t contiguous;
    /* where == NONE, inside a reservation but in no map: alloc is the nearest map (below if
     * there is one), reservation the address space */
    bool unmapped;
    hs_span reservation;
    /* PyTorch's caching allocator (blocks.h): the block of the live allocation (its segment)
     * that holds ptr, live or freed (block_state: hs_block_state; 0: none) */
    uint8_t block_state;
    hs_span block;
} hs_side;

/* One side of a copy as the fast path knows it (fast_copy.c, from hs_shadow_brief): live, a live
 * allocation of `kind` holds the whole range; else no allocation holds it, and host_ok is the
 * host probe's answer (true when check_host=0). */
typedef struct hs_brief_side {
    bool live;
    uint32_t kind;
    bool host_ok;
} hs_brief_side;

/* What the access history (streams/access.h) says about a call's accesses: a stream-race, an
 * uninitialized read (initcheck=1). */
typedef struct hs_access_facts {
    bool has_race, has_uninit;
    hs_race race;
    hs_uninit uninit;
} hs_access_facts;

typedef struct hs_facts {
    int dir;          /* effective direction: hipMemcpyDefault resolved from the shadow map */
    hs_side dst, src; /* frees describe the freed pointer as dst */
    /* the stream the call names */
    hs_stream_state stream_state;
    hs_span stream_info; /* the destroyed stream, when stream_state is DESTROYED */
    /* graph capture: a captured stream that this synchronous call would break (0: none) */
    uintptr_t capturing_stream;
    bool own_stream_capturing;
    /* async copies and memsets: what becomes pending if forwarded */
    bool has_pending;
    hs_pending_op pending;
    hs_conflict conflict; /* async-overlap / free-while-pending: the other operation */
    /* frees: what the shadow map said when the allocation was released */
    hs_release_result release;
    /* the access history's findings (NULL: nothing, or not tracked: hs_access_tracking()) */
    const hs_access_facts *access;
    /* launches: the arguments that point into known allocations (live or freed) */
    uint8_t n_args;
    hs_launch_arg args[HS_LAUNCH_MAX_ARGS];
    /* the end of the live PyTorch block args[i] points into, as its gather found it (0: none):
     * the launch's accesses end there, without a second search */
    uintptr_t arg_block_end[HS_LAUNCH_MAX_ARGS];
    /* after a failed call: the failure is a sticky device fault (asynchronous work faulted) */
    bool device_fault;
    /* kernel-out-of-bounds-write: hipshadow's verification kernel checked the redzone (else a copy read it back) */
    bool redzone_by_kernel;
    /* options the rules honour */
    bool want_notes; /* notes=1: info notes such as pageable-async */
} hs_facts;

/* ---- the findings ---- */

typedef enum hs_severity { HS_SEV_INFO, HS_SEV_WARNING, HS_SEV_ERROR } hs_severity;

typedef enum hs_kind {
#define HS_KIND(id, name, sev, meaning) HS_KIND_##id,
#include "hipshadow/finding_kinds.inc"
#undef HS_KIND
    HS_KIND_COUNT
} hs_kind;

/* The role a side of a copy must play for its direction (hs_role_of), and what a
 * direction-mismatch says the side should have been. */
typedef enum hs_role {
    HS_ROLE_NONE = 0,
    HS_ROLE_DEVICE = 1,   /* the side should be device memory */
    HS_ROLE_HOST = 2,     /* the side should be host memory */
    HS_ROLE_REVERSED = 3, /* both sides contradict the direction (reversed, or the pointers swapped) */
} hs_role;

typedef struct hs_finding {
    hs_kind kind;
    hs_severity severity;
    hs_side_id side;       /* which side is at fault */
    uint64_t overrun;      /* bytes past the end, for overrun kinds */
    hs_role expected_role; /* for direction-mismatch: what the side should have been */
} hs_finding;

enum { HS_MAX_FINDINGS_PER_CALL = 4 };

/* ---- the decision and the action taken ---- */

typedef enum hs_decision { HS_FORWARD = 0, HS_BLOCK, HS_ABORT, HS_RESCUED } hs_decision;
typedef enum hs_action { HS_ACTION_FORWARDED, HS_ACTION_BLOCKED, HS_ACTION_ABORTED, HS_ACTION_FALLBACK } hs_action;

/* ---- one call, from before to after forwarding ---- */

typedef struct hs_call_state {
    hs_facts facts;
    hs_finding findings[HS_MAX_FINDINGS_PER_CALL];
    int n_findings;
    uint32_t stack; /* captured only when something is reported */
    hs_span freed;  /* HS_OP_FREE: what was released before forwarding */
    bool released;
    hs_span allocated; /* HS_OP_ALLOC: what was registered after the call */
    hs_decision decision;
    hs_stream *stream; /* the stream record the call works on (NULL: none or invalid) */
    /* post-mortem log */
    uint64_t start_ns;
    void *log_record; /* the pending copy/memset record, patched after the call */
    uint32_t first_finding;
    uint64_t launch_seq; /* HS_OP_LAUNCH: the stream's operation number hs_model_launch gave it (0: none) */
    void *host_box;      /* a host function's box (hs_model_launch), passed to the runtime instead */
    /* fallback: the result of a copy hipshadow did itself (decision HS_RESCUED) */
    int rescued_result;
    bool fallback_used;
    /* a launch's facts.dst and facts.src (a kilobyte) are cleared only once something reads or
     * writes them (hs_sides_ready): a launch that finds nothing never does */
    bool sides_stale;
    /* last, and not cleared with the rest (its entries are valid up to .n): syncs and sync
     * copies: what they wait for, taken at the call */
    hs_vclock sync_clock;
} hs_call_state;

/* Before facts.dst or facts.src is read or written: they hold what the gather found (or nothing). */
static inline void hs_sides_ready(hs_call_state *st)
{
    if (st->sides_stale) {
        memset(&st->facts.dst, 0, sizeof st->facts.dst + sizeof st->facts.src);
        st->sides_stale = false;
    }
}

/* The call's time, read once per call (a clock read is 20-50 ns): the log's record of the call
 * and the shadow's stamps (allocated at, freed at) share it. */
static inline uint64_t hs_call_time(hs_call_state *st)
{
    if (!st->start_ns)
        st->start_ns = hs_now_ns();
    return st->start_ns;
}

/* ---- a GPU memory fault the runtime announced (AMD: HSA_AMD_GPU_MEMORY_FAULT_EVENT) ---- */

/* Why the GPU faulted: the same bits as HSA's hsa_amd_memory_fault_reason_t. */
enum {
    HS_FAULT_PAGE_NOT_PRESENT = 1u << 0,
    HS_FAULT_READ_ONLY = 1u << 1,
    HS_FAULT_NX = 1u << 2,
    HS_FAULT_HOST_ONLY = 1u << 3,
    HS_FAULT_DRAMECC = 1u << 4,
    HS_FAULT_IMPRECISE = 1u << 5, /* the address may not be exact */
    HS_FAULT_SRAMECC = 1u << 6,
    HS_FAULT_HANG = 1u << 31,
};

/* Where the faulting address falls in the shadow map. */
typedef enum hs_fault_where {
    HS_FAULT_UNKNOWN = 0,       /* near nothing: below and above are the nearest allocations */
    HS_FAULT_INSIDE,            /* inside a live allocation */
    HS_FAULT_PAST_END,          /* just past a live allocation's end */
    HS_FAULT_BEFORE_START,      /* just before a live allocation's start */
    HS_FAULT_FREED,             /* inside a freed allocation (quarantine) */
    HS_FAULT_RESERVED_UNMAPPED, /* inside a virtual-memory reservation, in no map */
} hs_fault_where;

/* A fault this far past an allocation's end (or before its start) is that allocation's. */
#define HS_FAULT_NEAR_BYTES (1u << 20)

typedef struct hs_gpu_fault {
    uintptr_t address;
    uint32_t reasons;          /* HS_FAULT_* */
    uint64_t agent;            /* the runtime's handle of the faulting GPU */
    uint8_t where;             /* hs_fault_where */
    hs_span alloc;             /* the allocation it falls in or next to (reserved-unmapped: the reservation) */
    int64_t offset;            /* address - alloc.base: past-end > size, before-start < 0 */
    bool has_below, has_above; /* unknown: the nearest live allocations */
    hs_span below, above;
} hs_gpu_fault;

/* ---- one finding, as reported ---- */

typedef struct hs_event {
    const hs_call *call;
    const hs_facts *facts;
    const hs_finding *finding;
    hs_action action;
    bool has_result; /* runtime-error: the runtime's answer */
    int result;
    const hs_finding *earlier; /* runtime-error: what the checks had found before forwarding */
    int n_earlier;
    uint32_t stack; /* the program's stack at the call */
    uint32_t thread;
    uint64_t time_ns;
    const struct hs_suspects *suspects; /* device-fault: the launches that may have caused it (ledger.h) */
    const hs_gpu_fault *gpu_fault;      /* device-fault from the runtime's memory-fault event: the address */
    uint32_t pystack;                   /* the Python stack at the call (pystacks.h), 0: none */
    const char *cause;      /* runtime-error: the runtime's rule the arguments break (runtime_rules.h), or NULL */
    const char *cause_rule; /* that rule's name */
} hs_event;

#endif
