/* One row per copy.  The first eight columns are rocprofv3's memory_copy_trace.csv; then the
 * addresses, size and the device-side allocation. */
#include "formats.h"

static const char *rocprof_direction(unsigned d)
{
    static const char *const names[] = {"MEMORY_COPY_HOST_TO_HOST", "MEMORY_COPY_HOST_TO_DEVICE",
                                        "MEMORY_COPY_DEVICE_TO_HOST", "MEMORY_COPY_DEVICE_TO_DEVICE",
                                        "MEMORY_COPY_DEFAULT"};
    return d < 5 ? names[d] : "MEMORY_COPY_NONE";
}

void hsr_format_csv(hsr_set *set, const hsr_summary *s, FILE *out)
{
    (void)s;
    fprintf(out, "\"Kind\",\"Direction\",\"Stream_Id\",\"Source_Agent_Id\",\"Destination_Agent_Id\","
                 "\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Src\",\"Dst\",\"Bytes\",\"Alloc_Id\","
                 "\"Offset\",\"Api\",\"Pid\",\"Result\"\n");
    uint64_t correlation = 0;
    for (size_t i = 0; i < set->n_events; i++) {
        const hsr_event *e = &set->events[i];
        if (e->type != HS_LOG_COPY)
            continue;
        const hsr_log *l = &set->logs[e->log];
        const hs_log_copy *c = e->rec;
        unsigned d = c->direction;
        /* agents: 0 is the host, 1 the GPU */
        unsigned src_agent = (d == 2 || d == 3) ? 1 : 0, dst_agent = (d == 1 || d == 3) ? 1 : 0;
        bool device_src = d == 2 || d == 3;
        uint64_t alloc = device_src ? c->src_alloc : c->dst_alloc, offset = device_src ? c->src_offset : c->dst_offset;
        fprintf(out, "\"MEMORY_COPY\",\"%s\",%llu,%u,%u,%llu,%llu,%llu,\"0x%llx\",\"0x%llx\",%llu,%llu,%llu,\"%s\",%u,",
                rocprof_direction(d), (unsigned long long)c->stream, src_agent, dst_agent,
                (unsigned long long)++correlation, (unsigned long long)c->start_ns, (unsigned long long)c->end_ns,
                (unsigned long long)c->src, (unsigned long long)c->dst, (unsigned long long)c->bytes,
                (unsigned long long)alloc, (unsigned long long)offset, hsr_api_name(l, c->api), l->header.pid);
        if (c->result == HS_LOG_RESULT_PENDING)
            fprintf(out, "\"pending\"\n");
        else
            fprintf(out, "%d\n", c->result);
    }
}
