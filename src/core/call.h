/* The runtime-neutral description of one wrapped call.  Front-ends fill it from their
 * arguments (one line per entry point in their api.inc); the core never sees HIP or CUDA types. */
#ifndef HS_CALL_H
#define HS_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Same numbering as hipMemcpyKind and cudaMemcpyKind. */
typedef enum hs_dir { HS_DIR_H2H = 0, HS_DIR_H2D = 1, HS_DIR_D2H = 2, HS_DIR_D2D = 3, HS_DIR_DEFAULT = 4 } hs_dir;

typedef enum hs_op {
    HS_OP_OTHER = 0,
    HS_OP_ALLOC,          /* *out_ptr receives the allocation (or register_ptr names it) */
    HS_OP_FREE,
    HS_OP_COPY,
    HS_OP_MEMSET,
    HS_OP_STREAM_CREATE,  /* *out_stream receives the handle */
    HS_OP_STREAM_DESTROY,
    HS_OP_SYNC,           /* stream/device/event synchronisation or query (see hs_sync) */
    HS_OP_LOOKUP,         /* get-proc-address style: checked only for its result */
    HS_OP_EVENT_CREATE,   /* *out_event receives the handle */
    HS_OP_EVENT_DESTROY,
    HS_OP_EVENT_RECORD,   /* event recorded on stream */
    HS_OP_STREAM_WAIT,    /* stream waits for event */
    HS_OP_CAPTURE_BEGIN,
    HS_OP_CAPTURE_END,
    HS_OP_POOL_CREATE,    /* *out_pool receives the handle */
    HS_OP_POOL_DESTROY,
} hs_op;

typedef enum hs_sync { HS_SYNC_STREAM = 0, HS_SYNC_DEVICE, HS_SYNC_EVENT } hs_sync;

typedef struct hs_call {
    uint16_t api;             /* index into the front-end's table */
    hs_op op;
    /* copies and memsets */
    uintptr_t dst, src;
    size_t bytes;             /* what the program asked for (2-D: width * height) */
    size_t dst_extent;        /* bytes touched from dst; 0 = bytes (2-D: (height-1)*pitch + width) */
    size_t src_extent;
    int dir;                  /* hs_dir as stated by the call */
    bool async;
    /* streams: has_stream is false for calls that take none (then the null stream is implied) */
    bool has_stream;
    uintptr_t stream;
    void *out_stream;         /* hipStream_t* / cudaStream_t* */
    unsigned stream_flags;    /* creation flags: 1 = non-blocking */
    uint8_t sync;             /* hs_sync, for HS_OP_SYNC */
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
    uintptr_t register_ptr;   /* hipHostRegister: the host range being registered */
    size_t alloc_bytes;
    size_t *out_pitch;        /* pitched allocations: size = *out_pitch * alloc_rows */
    size_t alloc_rows;
    uint32_t mem_kind;        /* hs_mem_kind */
    uintptr_t free_ptr;
    /* lookups (hipGetProcAddress): the symbol asked for and where the answer goes */
    const char *lookup_symbol;
    void **lookup_result;
} hs_call;

#endif
