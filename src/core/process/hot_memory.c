/* The region of hot structures (see hot_memory.h). */
#define _GNU_SOURCE
#include "process/hot_memory.h"

#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

/* Address space only until touched (MAP_NORESERVE): what is carved is resident, rounded up to
 * the huge pages it falls in when the kernel grants them. */
enum { HUGE = 2 << 20, REGION = 16 << 20, ALIGN = 64 };

static _Atomic(uintptr_t) base; /* 0: not reserved yet; UINTPTR_MAX: could not be */
static atomic_size_t used;

void *hs_map_huge(size_t bytes)
{
    size_t rounded = (bytes + HUGE - 1) & ~(size_t)(HUGE - 1);
    char *p = mmap(NULL, rounded + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    char *aligned = (char *)(((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    if (aligned > p)
        munmap(p, (size_t)(aligned - p));
    munmap(aligned + rounded, (size_t)(p + HUGE - aligned));
    madvise(aligned, rounded, MADV_HUGEPAGE); /* a hint: refused or unsupported, pages stay small */
    return aligned;
}

static uintptr_t reserve(void)
{
    uintptr_t b = atomic_load_explicit(&base, memory_order_acquire);
    if (b)
        return b;
    void *p = hs_map_huge(REGION);
    uintptr_t got = p ? (uintptr_t)p : UINTPTR_MAX;
    /* Two threads that raced here: the loser gives its region back and takes the winner's. */
    if (!atomic_compare_exchange_strong_explicit(&base, &b, got, memory_order_acq_rel, memory_order_acquire)) {
        if (got != UINTPTR_MAX)
            munmap((void *)got, REGION);
        return b;
    }
#ifdef __SANITIZE_ADDRESS__
    /* What the region's structures point to (a stream's pending ring, the block tracker's
     * segments) is reachable: LeakSanitizer scans the region as it does globals. */
    if (got != UINTPTR_MAX)
        __lsan_register_root_region((void *)got, REGION);
#endif
    return got;
}

void *hs_hot_memory(size_t bytes)
{
    uintptr_t b = reserve();
    if (b == UINTPTR_MAX || bytes > REGION)
        return NULL;
    size_t want = (bytes + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    /* A piece of a huge page or more starts one: it then spans as few as it can. */
    size_t align = want >= HUGE ? HUGE : ALIGN;
    size_t at = atomic_load_explicit(&used, memory_order_relaxed), start;
    do {
        start = (at + align - 1) & ~(align - 1);
        if (start > REGION || want > REGION - start)
            return NULL;
    } while (
        !atomic_compare_exchange_weak_explicit(&used, &at, start + want, memory_order_relaxed, memory_order_relaxed));
    return (void *)(b + start);
}

bool hs_hot_memory_holds(const void *p)
{
    uintptr_t b = atomic_load_explicit(&base, memory_order_acquire);
    return b && b != UINTPTR_MAX && (uintptr_t)p >= b && (uintptr_t)p < b + REGION;
}
