/* libFuzzer target: any bytes as a log.  The reader must never read out of bounds, loop, or
 * crash; damage is only reported.  Built and run by tests/fuzz/run_fuzz.sh. */
#include "../report/summary.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hsr_set set = {0};
    hsr_add_buffer(&set, "fuzz", data, size);
    hsr_finish(&set);
    hsr_summary s;
    hsr_summarize(&set, &s);
    hsr_summary_free(&s);
    hsr_free(&set);
    return 0;
}
