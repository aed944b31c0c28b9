/* stats=1: event counts, printed at exit (stats.h).  The counters are shared and counted with a
 * relaxed add: only a run that asks for them pays it, and runs that time things leave it off. */
#include "process/stats.h"
#include "process/util.h"

#include <stdio.h>

HS_HOT_DATA bool hs_stats_on;
_Atomic(uint64_t) hs_stats[HS_STAT_COUNT];

bool hs_stats_print(void)
{
    if (!hs_stats_on)
        return false;
    char line[1024];
    size_t n = (size_t)snprintf(line, sizeof line, "hipshadow: STATS");
    double ns_per_tick = hs_ns_per_stamp();
#define HS_STAT_PRINT(name)                                                                                            \
    if (n < sizeof line) {                                                                                             \
        uint64_t v = atomic_load_explicit(&hs_stats[HS_STAT_##name], memory_order_relaxed);                            \
        if (HS_STAT_IS_TIME(HS_STAT_##name))                                                                           \
            v = (uint64_t)((double)v * ns_per_tick);                                                                   \
        n += (size_t)snprintf(line + n, sizeof line - n, " %s=%llu", #name, (unsigned long long)v);                    \
    }
    HS_STAT_KINDS(HS_STAT_PRINT)
#undef HS_STAT_PRINT
    hs_say("%s\n", line);
    return true;
}
