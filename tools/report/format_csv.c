/* One row per copy and per kernel launch, in time order, under one header.  Copies: the first
 * eight columns are rocprofv3's memory_copy_trace.csv (Kind MEMORY_COPY); then the addresses,
 * size and the device-side allocation.  Launches (Kind KERNEL_DISPATCH) fill the shared columns
 * (Stream_Id, Correlation_Id, Start/End_Timestamp, Api, Pid, Result) and, at the end, columns named
 * as in rocprofv3's kernel_trace.csv: Kernel_Name, LDS_Block_Size, Workgroup_Size_X..Z and
 * Grid_Size_X..Z (in work-items: the grid in blocks times the block, as rocprofv3 counts it).
 * Their timestamps are the host's launch call, not the kernel's run on the GPU.  Names from the
 * log go out through hsr_csv_field: one field each, never a formula. */
#include "emit.h"
#include "formats.h"

static const char *rocprof_direction(unsigned d)
{
    static const char *const names[] = {"MEMORY_COPY_HOST_TO_HOST", "MEMORY_COPY_HOST_TO_DEVICE",
                                        "MEMORY_COPY_DEVICE_TO_HOST", "MEMORY_COPY_DEVICE_TO_DEVICE",
                                        "MEMORY_COPY_DEFAULT"};
    return d < 5 ? names[d] : "MEMORY_COPY_NONE";
}

static void launch_row(FILE *out, const hsr_log *l, const hs_log_launch *k, uint64_t correlation)
{
    fprintf(out, "\"KERNEL_DISPATCH\",,%llu,,,%llu,%llu,%llu,,,,,,", (unsigned long long)k->stream,
            (unsigned long long)correlation, (unsigned long long)k->start_ns, (unsigned long long)k->end_ns);
    hsr_csv_field(out, hsr_api_name(l, k->api));
    fprintf(out, ",%u,%d,%u,", l->header.pid, k->result, k->thread);
    hsr_csv_field(out, hsr_launch_name(l, k));
    fprintf(out, ",%u,%u,%u,%u,%llu,%llu,%llu,%llu,\"", k->shmem, k->block[0], k->block[1], k->block[2],
            (unsigned long long)k->grid[0] * k->block[0], (unsigned long long)k->grid[1] * k->block[1],
            (unsigned long long)k->grid[2] * k->block[2], (unsigned long long)k->seq);
    for (unsigned i = 0; i < k->n_args; i++) {
        hs_log_launch_arg a = hsr_launch_arg(k, i);
        fprintf(out, "%s%u=#%llu%+lld%s", i ? " " : "", a.index, (unsigned long long)a.alloc_id, (long long)a.offset,
                a.state == HS_LOG_ARG_FREED  ? "(freed)"
                : a.state == HS_LOG_ARG_LIVE ? ""
                                             : "(unknown)");
    }
    fprintf(out, "\"\n");
}

void hsr_format_csv(hsr_set *set, const hsr_summary *s, FILE *out)
{
    (void)s;
    fprintf(out, "\"Kind\",\"Direction\",\"Stream_Id\",\"Source_Agent_Id\",\"Destination_Agent_Id\","
                 "\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Src\",\"Dst\",\"Bytes\",\"Alloc_Id\","
                 "\"Offset\",\"Api\",\"Pid\",\"Result\",\"Thread_Id\",\"Kernel_Name\",\"LDS_Block_Size\","
                 "\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\","
                 "\"Grid_Size_Z\",\"Stream_Seq\",\"Pointer_Args\"\n");
    uint64_t correlation = 0;
    for (size_t i = 0; i < set->n_events; i++) {
        const hsr_event *e = &set->events[i];
        const hsr_log *l = &set->logs[e->log];
        if (e->type == HS_LOG_LAUNCH) {
            launch_row(out, l, e->rec, ++correlation);
            continue;
        }
        if (e->type != HS_LOG_COPY)
            continue;
        const hs_log_copy *c = e->rec;
        unsigned d = c->direction;
        /* agents: 0 is the host, 1 the GPU */
        unsigned src_agent = (d == 2 || d == 3) ? 1 : 0, dst_agent = (d == 1 || d == 3) ? 1 : 0;
        bool device_src = d == 2 || d == 3;
        uint64_t alloc = device_src ? c->src_alloc : c->dst_alloc, offset = device_src ? c->src_offset : c->dst_offset;
        fprintf(out, "\"MEMORY_COPY\",\"%s\",%llu,%u,%u,%llu,%llu,%llu,\"0x%llx\",\"0x%llx\",%llu,%llu,%llu,",
                rocprof_direction(d), (unsigned long long)c->stream, src_agent, dst_agent,
                (unsigned long long)++correlation, (unsigned long long)c->start_ns, (unsigned long long)c->end_ns,
                (unsigned long long)c->src, (unsigned long long)c->dst, (unsigned long long)c->bytes,
                (unsigned long long)alloc, (unsigned long long)offset);
        hsr_csv_field(out, hsr_api_name(l, c->api));
        fprintf(out, ",%u,", l->header.pid);
        if (c->result == HS_LOG_RESULT_PENDING)
            fprintf(out, "\"pending\"");
        else
            fprintf(out, "%d", c->result);
        fprintf(out, ",%u,,,,,,,,,,\n", c->thread);
    }
}
