/* libFuzzer target: any bytes as a log.  The reader must never read out of bounds, loop, or
 * crash; damage is only reported.  Built and run by tests/fuzz/run_fuzz.sh. */
#include "../report/summary.h"

#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hsr_set set = {0};
    hsr_add_buffer(&set, "fuzz", data, size);
    hsr_finish(&set);
    hsr_summary s;
    hsr_summarize(&set, &s);
    /* what the formats read of each launch: its name, its end, every argument it claims */
    volatile size_t sink = 0;
    for (size_t i = 0; i < set.n_events; i++) {
        const hsr_event *e = &set.events[i];
        sink += (size_t)hsr_event_end(e);
        if (e->type != HS_LOG_LAUNCH)
            continue;
        const hs_log_launch *l = e->rec;
        sink += strlen(hsr_launch_name(&set.logs[e->log], l)) + strlen(hsr_kernel_ref_name(l->kernel_ref));
        for (unsigned a = 0; a < l->n_args; a++) {
            hs_log_launch_arg arg = hsr_launch_arg(l, a);
            sink += arg.value + strlen(hsr_arg_state_name(arg.state));
        }
        if (l->first_finding)
            sink += hsr_launch_of_finding(&s, e->log, l->first_finding) != NULL;
    }
    (void)sink;
    hsr_summary_free(&s);
    hsr_free(&set);
    return 0;
}
