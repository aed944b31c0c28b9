/* hipshadow's post-mortem log: the on-disk format, shared by the recorder (src/core/log.c)
 * and the offline reader (tools/report).  Versioned; every field fixed-width little-endian.
 *
 * A log file is
 *   [file header, HS_LOG_HEADER_BYTES]
 *   [event ring: ring_chunks chunks]          (ring mode; absent in full mode)
 *   [growing area: chunk after chunk]         (metadata chunks; in full mode events too)
 * Every chunk is HS_LOG_CHUNK_BYTES: a chunk header, then records back to back.  A chunk has
 * one writer (a thread for events, the metadata lock for metadata), which stores `used` after
 * each complete record, so a reader after SIGKILL sees whole records only.  Chunks are ordered
 * by `seq`; in ring mode the oldest event chunks are overwritten first.  Metadata (modules and
 * the stack depot) is never overwritten, so every surviving event can be symbolized. */
#ifndef HIPSHADOW_LOG_FORMAT_H
#define HIPSHADOW_LOG_FORMAT_H

#include <stdint.h>

/* Read as a little-endian uint32 it is 'HSLG'; 0x474c5348 means the file's byte order is swapped. */
#define HS_LOG_MAGIC 0x48534c47u
#define HS_LOG_MAGIC_SWAPPED 0x474c5348u
#define HS_LOG_CHUNK_MAGIC 0x4b4e4843u /* 'CHNK' */
#define HS_LOG_FORMAT_VERSION 1
#define HS_LOG_HEADER_BYTES 8192u
#define HS_LOG_CHUNK_BYTES 65536u

enum { HS_LOG_FLAG_FULL = 1 }; /* every event kept: no ring */

enum { HS_LOG_CHUNK_EVENTS = 1, HS_LOG_CHUNK_META = 2 };

/* Every record type, once: HS_LOG_RECORD(ENUM, number, version, struct name). */
// clang-format off
#define HS_LOG_RECORDS(X)                                 \
    X(MODULE, 1, 1, hs_log_module)                        \
    X(STACK, 2, 1, hs_log_stack)                          \
    X(ALLOC, 3, 1, hs_log_alloc)                          \
    X(FREE, 4, 1, hs_log_free)                            \
    X(COPY, 5, 1, hs_log_copy)                            \
    X(MEMSET, 6, 1, hs_log_copy)                          \
    X(SYNC, 7, 1, hs_log_sync)                            \
    X(STREAM, 8, 1, hs_log_stream)                        \
    X(EVENT, 9, 1, hs_log_event)                          \
    X(FINDING, 10, 2, hs_log_finding)                     \
    X(API_NAME, 11, 1, hs_log_api_name)                   \
    X(LAUNCH, 12, 1, hs_log_launch)                       \
    X(KERNEL_NAME, 13, 1, hs_log_kernel_name)             \
    X(GPU_FAULT, 14, 1, hs_log_gpu_fault)
// clang-format on

/* Versioning: a new record type is appended to the table with the next number (existing numbers
 * never change) and leaves HS_LOG_FORMAT_VERSION alone; a record's layout that changes bumps its
 * own version.  HS_LOG_FORMAT_VERSION changes only with the file and chunk headers.  A reader
 * stops at a record type it does not know (the rest of that chunk is reported as damage). */
enum hs_log_record_type {
#define HS_LOG_ENUM(id, num, ver, type) HS_LOG_##id = num,
    HS_LOG_RECORDS(HS_LOG_ENUM)
#undef HS_LOG_ENUM
        HS_LOG_RECORD_TYPES = 15
};

#pragma pack(push, 1)

typedef struct hs_log_file_header {
    uint32_t magic;
    uint16_t format_version;
    uint16_t header_bytes;
    uint32_t chunk_bytes;
    uint32_t flags;          /* HS_LOG_FLAG_* */
    uint64_t ring_offset;    /* file offset of the event ring */
    uint64_t ring_chunks;    /* 0 in full mode */
    uint64_t growing_offset; /* file offset of the growing area */
    uint64_t start_time_ns;  /* CLOCK_REALTIME */
    uint32_t pid;
    uint32_t parent_pid;
    int32_t rank;                /* -1 when unknown */
    uint32_t runtime;            /* 1 HIP, 2 CUDA */
    uint8_t record_versions[32]; /* version of each record type, by type number */
    char host[64];
    char executable[512];
    char command_line[2048];
    char options[2048];
    /* The variables that change GPU memory behaviour, as set for the process: "NAME=value"
     * lines (src/core/environment.inc lists them).  All zero in logs written before it. */
    char environment[1536];
} hs_log_file_header;

typedef struct hs_log_chunk_header {
    uint32_t magic; /* HS_LOG_CHUNK_MAGIC */
    uint16_t kind;  /* HS_LOG_CHUNK_EVENTS / _META */
    uint16_t reserved;
    uint64_t seq; /* reservation order, across all chunks of the file */
    uint32_t thread;
    uint32_t used; /* bytes of complete records after this header */
} hs_log_chunk_header;

typedef struct hs_log_record_header {
    uint16_t type; /* enum hs_log_record_type */
    uint8_t version;
    uint8_t flags;
    uint32_t size; /* whole record, this header included */
} hs_log_record_header;

/* MODULE: a loaded object, for offline symbolization.  Followed by n_segments segments, then the
 * path (path_bytes, no terminator).  `generation` grows each time the map is rewritten (dlopen). */
typedef struct hs_log_module {
    hs_log_record_header h;
    uint64_t load_bias;
    uint32_t generation;
    uint16_t n_segments;
    uint16_t path_bytes;
} hs_log_module;

typedef struct hs_log_segment {
    uint64_t start; /* absolute address */
    uint64_t size;
    uint32_t flags; /* PF_X | PF_W | PF_R */
    uint32_t reserved;
} hs_log_segment;

/* STACK: one stack-depot entry, followed by n_frames uint64 return addresses, innermost first. */
typedef struct hs_log_stack {
    hs_log_record_header h;
    uint32_t id;
    uint32_t n_frames;
} hs_log_stack;

/* API_NAME: the name of an api number in this log (front-end table order). */
typedef struct hs_log_api_name {
    hs_log_record_header h;
    uint16_t api;
    uint16_t name_bytes; /* followed by the name */
} hs_log_api_name;

typedef struct hs_log_alloc {
    hs_log_record_header h;
    uint64_t time_ns;
    uint32_t thread;
    uint16_t api;
    uint8_t mem_kind; /* 1 device, 2 managed, 3 pinned host, 4 registered host, 6 mapped device */
    uint8_t reserved;
    int32_t device;
    uint32_t stack;
    uint64_t id;
    uint64_t base;
    uint64_t size;
    uint64_t stream;
    int32_t result;
    uint32_t reserved2;
} hs_log_alloc;

typedef struct hs_log_free {
    hs_log_record_header h;
    uint64_t time_ns;
    uint32_t thread;
    uint16_t api;
    uint16_t reserved;
    uint32_t stack;
    int32_t result;
    uint64_t id; /* 0 when the pointer was not a known allocation */
    uint64_t base;
    uint64_t stream;
} hs_log_free;

#define HS_LOG_RESULT_PENDING INT32_MIN /* written before forwarding; replaced after the call returns */

/* COPY and MEMSET (for MEMSET, src holds the value and src_alloc is 0). */
typedef struct hs_log_copy {
    hs_log_record_header h;
    uint64_t start_ns;
    uint64_t end_ns; /* 0 while pending (the process died inside the call) */
    uint32_t thread;
    uint16_t api;
    uint8_t direction; /* as stated, resolved for hipMemcpyDefault: 0 H2H 1 H2D 2 D2H 3 D2D */
    uint8_t flags;     /* 1 async, 2 blocked, 4 paused, 8 staged by the fallback */
    uint64_t stream;
    uint64_t dst;
    uint64_t src;
    uint64_t bytes;
    uint64_t dst_alloc; /* allocation id holding dst, 0 if none */
    uint64_t dst_offset;
    uint64_t src_alloc;
    uint64_t src_offset;
    int32_t result;
    uint32_t first_finding; /* sequence number of its first finding, 0 if none */
} hs_log_copy;

typedef struct hs_log_sync {
    hs_log_record_header h;
    uint64_t start_ns;
    uint64_t end_ns;
    uint32_t thread;
    uint16_t api;
    uint16_t reserved;
    uint64_t stream; /* or the event, for event synchronisation */
    int32_t result;
    uint32_t reserved2;
} hs_log_sync;

enum { HS_LOG_STREAM_CREATE = 1, HS_LOG_STREAM_DESTROY = 2 };
typedef struct hs_log_stream {
    hs_log_record_header h;
    uint64_t time_ns;
    uint32_t thread;
    uint16_t api;
    uint8_t op;
    uint8_t reserved;
    uint64_t stream;
    uint32_t stack;
    int32_t result;
} hs_log_stream;

enum {
    HS_LOG_EVENT_CREATE = 1,
    HS_LOG_EVENT_RECORD,
    HS_LOG_EVENT_WAIT,
    HS_LOG_EVENT_SYNC,
    HS_LOG_EVENT_DESTROY,
    HS_LOG_CAPTURE_BEGIN,
    HS_LOG_CAPTURE_END
};
typedef struct hs_log_event {
    hs_log_record_header h;
    uint64_t time_ns;
    uint32_t thread;
    uint16_t api;
    uint8_t op;
    uint8_t reserved;
    uint64_t event;
    uint64_t stream;
    int32_t result;
    uint32_t reserved2;
} hs_log_event;

typedef struct hs_log_finding {
    hs_log_record_header h;
    uint64_t time_ns;
    uint32_t seq; /* 1, 2, ... in this process */
    uint32_t thread;
    uint16_t api;
    uint8_t kind;      /* index into hipshadow/finding_kinds.inc */
    uint8_t severity;  /* 0 info, 1 warning, 2 error */
    uint8_t action;    /* 0 forwarded, 1 blocked, 2 aborted, 3 fallback */
    uint8_t direction; /* 0..3, 4 default, 255 none */
    uint16_t reserved;
    uint32_t stack;
    int32_t result; /* runtime-error: what the runtime returned */
    uint64_t dst;
    uint64_t src;
    uint64_t bytes;
    uint64_t stream;
    uint64_t alloc_base;
    uint64_t alloc_size;
    uint64_t alloc_offset;
    uint64_t alloc_id; /* 0: no allocation */
    uint64_t overrun;
    uint32_t alloc_stack;
    uint32_t free_stack;
} hs_log_finding;

/* FINDING version 2: what a finding adds past its fixed fields, as parts after hs_log_finding,
 * each an hs_log_part header then its payload (`size` bytes in all, header included).  The
 * record's size covers them: a version-1 reader reads the fixed fields and steps over the rest;
 * a reader skips a part whose kind it does not know.  Version-1 records have no parts. */
enum { HS_LOG_PART_CAUSE = 1, HS_LOG_PART_RACE = 2, HS_LOG_PART_UNINIT = 3 };
enum { HS_LOG_PART_TEXT_MAX = 1024 }; /* longer strings (kernel names) are cut there */

typedef struct hs_log_part {
    uint16_t kind; /* HS_LOG_PART_* */
    uint16_t reserved;
    uint32_t size;
} hs_log_part;

/* CAUSE (runtime-error): followed by the rule's name (rule_bytes), then the sentence (text_bytes). */
typedef struct hs_log_cause {
    hs_log_part p;
    uint16_t rule_bytes;
    uint16_t text_bytes;
    uint32_t reserved;
} hs_log_cause;

/* One access of an allocation by one call (a stream-race's two, an uninitialized-read's short write). */
enum { HS_LOG_ACCESS_WRITE = 1, HS_LOG_ACCESS_ASSUMED = 2, HS_LOG_ACCESS_LAUNCH = 4, HS_LOG_ACCESS_OPEN = 8 };
enum { HS_LOG_ACCESS_COPY = 1, HS_LOG_ACCESS_MEMSET = 2, HS_LOG_ACCESS_KERNEL = 3 };
typedef struct hs_log_access {
    uint64_t lo, hi; /* offsets from the allocation's base */
    uint64_t seq;    /* its stream's operation number; 0: synchronous */
    uint64_t time_ns;
    uint64_t bytes; /* what the call asked for */
    uint64_t stream;
    uint64_t caller; /* the program's return address */
    uint32_t stack;  /* 0: none */
    uint32_t thread;
    uint16_t api;
    uint8_t op;    /* HS_LOG_ACCESS_COPY / _MEMSET / _KERNEL */
    uint8_t arg;   /* a launch: the argument's index */
    uint8_t flags; /* HS_LOG_ACCESS_* */
    uint8_t reserved;
    uint16_t kernel_bytes; /* a launch's kernel name, in the part after its fixed fields; 0: none */
} hs_log_access;

/* RACE (stream-race): followed by mine's kernel name, then other's (their kernel_bytes). */
typedef struct hs_log_race {
    hs_log_part p;
    uint64_t alloc_id, alloc_base, alloc_size;
    uint64_t lo, hi;           /* the overlap, offsets from alloc_base */
    hs_log_access mine, other; /* this call's access; the earlier one on another stream */
} hs_log_race;

/* UNINIT (uninitialized-read): [lo, hi) read; never-written ranges (gaps, up to 4 kept, n_gaps
 * counts all), written ranges, and the last write not by a kernel. */
enum { HS_LOG_UNINIT_RANGES = 4 };
typedef struct hs_log_uninit {
    hs_log_part p;
    uint64_t alloc_id, alloc_base, alloc_size;
    uint64_t lo, hi;
    uint32_t n_gaps, n_written;
    uint64_t gaps[HS_LOG_UNINIT_RANGES][2], written[HS_LOG_UNINIT_RANGES][2];
    uint8_t has_last_write;
    uint8_t kernel; /* a kernel reads it (not a copy) */
    uint8_t reserved[6];
    hs_log_access last_write;
} hs_log_uninit;

/* KERNEL_NAME (metadata): the name of a kernel-name id used by LAUNCH records, written once per
 * distinct name before the first launch that uses it.  Followed by the name (name_bytes, no
 * terminator; long names are cut to HS_LOG_KERNEL_NAME_MAX bytes). */
#define HS_LOG_KERNEL_NAME_MAX 4096
typedef struct hs_log_kernel_name {
    hs_log_record_header h;
    uint32_t id; /* 1, 2, ... in this process */
    uint16_t name_bytes;
    uint16_t reserved;
} hs_log_kernel_name;

/* LAUNCH: a kernel, graph or host function enqueued on a stream, written after the call.
 * Followed by n_args hs_log_launch_arg (at most HS_LOG_LAUNCH_MAX_ARGS): the arguments that point
 * into allocations the shadow map knows (live or freed). */
enum { HS_LOG_KREF_STUB = 1, HS_LOG_KREF_FUNCTION = 2, HS_LOG_KREF_GRAPH = 3, HS_LOG_KREF_HOST_FN = 4 };
enum { HS_LOG_LAUNCH_BLOCKED = 1 }; /* flags: not forwarded (mode=block) */
enum { HS_LOG_LAUNCH_MAX_ARGS = 8 };
enum { HS_LOG_ARG_LIVE = 0, HS_LOG_ARG_FREED = 1, HS_LOG_ARG_UNKNOWN = 2 };
enum { HS_LOG_ARG_EXACT = 0, HS_LOG_ARG_SCANNED = 1 };

typedef struct hs_log_launch_arg {
    uint16_t index; /* the argument's position (scanned: its byte offset / 8) */
    uint8_t state;  /* HS_LOG_ARG_LIVE / _FREED / _UNKNOWN */
    uint8_t how;    /* HS_LOG_ARG_EXACT: a pointer parameter; _SCANNED: found in a struct or buffer */
    uint32_t reserved;
    uint64_t alloc_id;
    int64_t offset; /* from the allocation's base */
    uint64_t value; /* the pointer */
} hs_log_launch_arg;

typedef struct hs_log_launch {
    hs_log_record_header h;
    uint64_t start_ns; /* the launch call, on the host: not the kernel's run on the GPU */
    uint64_t end_ns;
    uint32_t thread;
    uint16_t api;
    uint8_t kernel_ref; /* HS_LOG_KREF_* */
    uint8_t n_args;
    uint64_t stream;
    uint64_t seq; /* the stream's operation number; 0: none (captured into a graph, blocked, failed) */
    uint32_t grid[3];
    uint32_t block[3];
    uint32_t shmem;  /* dynamic shared memory (LDS) bytes */
    uint32_t stack;  /* 0: none captured (launch_stacks=0 and nothing reported) */
    uint64_t caller; /* the program's return address at the launch */
    uint32_t name;   /* KERNEL_NAME id; 0: unknown (graphs, host functions, no name from the runtime) */
    int32_t result;
    uint8_t flags; /* HS_LOG_LAUNCH_* */
    uint8_t reserved[3];
    uint32_t first_finding; /* sequence number of its first finding, 0 if none */
} hs_log_launch;

/* GPU_FAULT: a GPU memory fault the runtime announced (AMD: HSA_AMD_GPU_MEMORY_FAULT_EVENT),
 * written right after the device-fault FINDING it explains (finding_seq). */
enum {
    HS_LOG_FAULT_UNKNOWN = 0,
    HS_LOG_FAULT_INSIDE = 1,
    HS_LOG_FAULT_PAST_END = 2,
    HS_LOG_FAULT_BEFORE_START = 3,
    HS_LOG_FAULT_FREED = 4,
    HS_LOG_FAULT_RESERVED_UNMAPPED = 5
};
typedef struct hs_log_gpu_fault {
    hs_log_record_header h;
    uint64_t time_ns;
    uint32_t finding_seq;
    uint32_t reasons; /* hsa_amd_memory_fault_reason_t bits */
    uint64_t address;
    uint64_t agent;
    uint8_t where; /* HS_LOG_FAULT_* */
    uint8_t reserved[7];
    uint64_t alloc_id; /* 0: none (unknown); reserved-unmapped: 0, base/size the reservation */
    uint64_t alloc_base;
    uint64_t alloc_size;
    int64_t offset;                            /* address - alloc_base */
    uint64_t below_id, below_base, below_size; /* the nearest live allocations (0: none) */
    uint64_t above_id, above_base, above_size;
} hs_log_gpu_fault;

#pragma pack(pop)

/* Finding kinds: the `kind` byte indexes hipshadow/finding_kinds.inc. */

#endif
