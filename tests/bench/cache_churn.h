/* What a runtime's or a framework's own work between two events does to the first-level caches:
 * 48 KiB of straight-line code run and 64 KiB of data touched.  Run before each event of a
 * benchmark's `cold` mode, it leaves hipshadow's code and data out of those caches, as between
 * an engine's calls (read under callgrind's cache model; the churn's own time is in any figure). */
#ifndef CACHE_CHURN_H
#define CACHE_CHURN_H

#include <stddef.h>

static unsigned char cache_churn_data[64 << 10];

__attribute__((noinline, unused)) static void cache_churn(void)
{
    unsigned long x = 0, y = 0, z = 0, w = 0; /* four chains: the code's fetch, not its latency */
    __asm__ volatile(".rept 3072\n\tadd $1, %0\n\tadd $1, %1\n\tadd $1, %2\n\tadd $1, %3\n\t.endr"
                     : "+r"(x), "+r"(y), "+r"(z), "+r"(w)); /* 48 KiB of code */
    x += y + z + w;
    for (size_t i = 0; i < sizeof cache_churn_data; i += 64)
        cache_churn_data[i] += (unsigned char)x;
}

#endif
