/* What every format summarizes: calls by API, bytes by direction, device memory in use over
 * time and its peak, findings by kind, and leaks. */
#ifndef HSR_SUMMARY_H
#define HSR_SUMMARY_H

#include "reader.h"

typedef struct hsr_api_count {
    const char *name;
    uint64_t calls;
} hsr_api_count;

typedef struct hsr_leak {
    uint32_t log;
    const hs_log_alloc *alloc;
} hsr_leak;

typedef struct hsr_memory_point {
    uint64_t time_ns;
    uint32_t log;
    uint64_t bytes; /* device memory in use in all logs together, after this event */
} hsr_memory_point;

typedef struct hsr_kernel_count {
    const char *name; /* hsr_launch_name(): points into the log */
    uint64_t launches;
} hsr_kernel_count;

/* One log's launches, by what they ran. */
typedef struct hsr_log_launches {
    uint64_t launches;
    hsr_kernel_count *kernels; /* most launched first, then by name */
    int n_kernels;
} hsr_log_launches;

/* A record that belongs to a finding: the launch that made it (kernel-use-after-free, a blocked
 * launch), the GPU fault that explains it. */
typedef struct hsr_finding_ref {
    uint32_t log;
    uint32_t finding; /* the finding's seq in that log */
    size_t event;     /* the record's place in the timeline: the first one wins */
    const void *rec;
} hsr_finding_ref;

typedef struct hsr_summary {
    hsr_api_count *apis; /* most called first */
    int n_apis;
    uint64_t copies, memsets, allocs, frees, syncs, findings, launches;
    hsr_log_launches *launches_by_log; /* n_launch_logs: one per log of the set */
    int n_launch_logs;
    hsr_finding_ref *finding_launches; /* sorted by log, finding, event */
    size_t n_finding_launches;
    hsr_finding_ref *finding_faults; /* GPU_FAULT records, sorted the same way */
    size_t n_finding_faults;
    uint64_t copies_by_dir[5], bytes_by_dir[5];
    uint64_t peak_device_bytes, peak_time_ns;
    uint64_t *findings_by_kind; /* hsr_kind_count() entries */
    hsr_leak *leaks;
    size_t n_leaks;
    uint64_t leaked_bytes;
    hsr_memory_point *memory; /* one point per device alloc/free */
    size_t n_memory;
    uint64_t first_ns, last_ns;
    bool any_ring; /* some log kept only its last events */
} hsr_summary;

void hsr_summarize(const hsr_set *set, hsr_summary *s);
void hsr_summary_free(hsr_summary *s);
/* The launch that made finding `seq` of log `log`, NULL if none. */
const hs_log_launch *hsr_launch_of_finding(const hsr_summary *s, uint32_t log, uint32_t seq);
/* The GPU fault record explaining a device-fault finding (NULL when it came from a call, not from
 * the runtime's fault event). */
const hs_log_gpu_fault *hsr_gpu_fault_of(const hsr_summary *s, uint32_t log, uint32_t seq);

#endif
