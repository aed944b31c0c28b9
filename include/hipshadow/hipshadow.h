/* hipshadow's public API.
 *
 * A program includes this header and calls these functions whether or not hipshadow is
 * preloaded: each call looks its function up once with dlsym (in the spirit of valgrind's
 * client requests) and is a cheap no-op when the library is absent.  Link with -ldl on old
 * glibc. */
#ifndef HIPSHADOW_H
#define HIPSHADOW_H

#include <dlfcn.h>
#include <stddef.h>

#define HIPSHADOW_VERSION_MAJOR 0
#define HIPSHADOW_VERSION_MINOR 1

#ifdef __cplusplus
extern "C" {
#endif

/* The exported entry points (only present while the library is loaded). */
void hipshadow_pause_impl(void);
void hipshadow_resume_impl(void);
int hipshadow_region_register_impl(const void *base, size_t size, const char *name);
int hipshadow_region_unregister_impl(const void *base);
int hipshadow_name_allocation_impl(const void *ptr, const char *name);
int hipshadow_transpose2d_impl(void *dst, const void *src, size_t rows, size_t cols, size_t elem_size, void *stream);
int hipshadow_transpose2d_pitched_impl(void *dst, size_t dst_pitch, const void *src, size_t src_pitch, size_t rows,
                                       size_t cols, size_t elem_size, void *stream);
int hipshadow_print_stats_impl(void);

/* Resolves name once per call site; NULL without the library. */
#define HIPSHADOW__RESOLVE(name)                                                                                       \
    ({                                                                                                                 \
        static void *hipshadow__fn;                                                                                    \
        static int hipshadow__looked;                                                                                  \
        if (!__atomic_load_n(&hipshadow__looked, __ATOMIC_ACQUIRE)) {                                                  \
            __atomic_store_n(&hipshadow__fn, dlsym(RTLD_DEFAULT, name), __ATOMIC_RELAXED);                             \
            __atomic_store_n(&hipshadow__looked, 1, __ATOMIC_RELEASE);                                                 \
        }                                                                                                              \
        __atomic_load_n(&hipshadow__fn, __ATOMIC_RELAXED);                                                             \
    })

/* Stops checking copies and memsets (process-wide, nestable) until hipshadow_resume();
 * allocations and frees are still tracked, so checking resumes with an exact shadow map. */
static inline void hipshadow_pause(void)
{
    void (*fn)(void) = (void (*)(void))HIPSHADOW__RESOLVE("hipshadow_pause_impl");
    if (fn)
        fn();
}

static inline void hipshadow_resume(void)
{
    void (*fn)(void) = (void (*)(void))HIPSHADOW__RESOLVE("hipshadow_resume_impl");
    if (fn)
        fn();
}

/* stats=1: prints the event counts and hipshadow's own time so far, as the line printed at exit
 * ("hipshadow: STATS launch=N ..."), so that a program can bracket one phase (its timed steady
 * state, without loading and warm-up) and take the difference.  Returns 0, or -1 when stats are
 * off or hipshadow is not loaded (nothing printed). */
static inline int hipshadow_print_stats(void)
{
    int (*fn)(void) = (int (*)(void))HIPSHADOW__RESOLVE("hipshadow_print_stats_impl");
    return fn ? fn() : -1;
}

/* Declares [base, base+size) a sub-buffer of a pool (a tensor in an arena) called name.  A copy
 * that starts in it and runs past its end, while staying inside the allocation, is reported as
 * region-overrun naming it.  Returns 0, or -1 (also when hipshadow is not loaded). */
static inline int hipshadow_region_register(const void *base, size_t size, const char *name)
{
    int (*fn)(const void *, size_t, const char *) = (int (*)(const void *, size_t, const char *))HIPSHADOW__RESOLVE(
        "hipshadow_region_register_impl");
    return fn ? fn(base, size, name) : -1;
}

static inline int hipshadow_region_unregister(const void *base)
{
    int (*fn)(const void *) = (int (*)(const void *))HIPSHADOW__RESOLVE("hipshadow_region_unregister_impl");
    return fn ? fn(base) : -1;
}

/* Names the allocation holding ptr in every report about it ("kv_cache", "arena 0"). */
static inline int hipshadow_name_allocation(const void *ptr, const char *name)
{
    int (*fn)(const void *,
              const char *) = (int (*)(const void *, const char *))HIPSHADOW__RESOLVE("hipshadow_name_allocation_impl");
    return fn ? fn(ptr, name) : -1;
}

/* On the GPU, dst (cols x rows) = the transpose of src (rows x cols), both device memory, rows
 * packed; elem_size 1, 2, 4, 8 or 16.  Asynchronous on stream (a hipStream_t / cudaStream_t).
 * Returns the runtime's error code (hipError_t / cudaError_t; 0 is success), or -1 when
 * hipshadow is not loaded.  It replaces a D2H, a CPU transpose and an H2D with one call. */
static inline int hipshadow_transpose2d(void *dst, const void *src, size_t rows, size_t cols, size_t elem_size,
                                        void *stream)
{
    int (*fn)(void *, const void *, size_t, size_t, size_t, void *) =
        (int (*)(void *, const void *, size_t, size_t, size_t, void *))HIPSHADOW__RESOLVE("hipshadow_transpose2d_impl");
    return fn ? fn(dst, src, rows, cols, elem_size, stream) : -1;
}

/* The same with pitched rows: row r of src starts at src + r * src_pitch (bytes). */
static inline int hipshadow_transpose2d_pitched(void *dst, size_t dst_pitch, const void *src, size_t src_pitch,
                                                size_t rows, size_t cols, size_t elem_size, void *stream)
{
    int (*fn)(void *, size_t, const void *, size_t, size_t, size_t, size_t,
              void *) = (int (*)(void *, size_t, const void *, size_t, size_t, size_t, size_t,
                                 void *))HIPSHADOW__RESOLVE("hipshadow_transpose2d_pitched_impl");
    return fn ? fn(dst, dst_pitch, src, src_pitch, rows, cols, elem_size, stream) : -1;
}

#ifdef __cplusplus
}
#endif

#endif
