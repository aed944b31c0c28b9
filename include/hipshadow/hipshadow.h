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

/* Resolves name once per call site; NULL without the library. */
#define HIPSHADOW__RESOLVE(name)                                                   \
    ({                                                                             \
        static void *hipshadow__fn;                                                \
        static int hipshadow__looked;                                              \
        if (!__atomic_load_n(&hipshadow__looked, __ATOMIC_ACQUIRE)) {              \
            __atomic_store_n(&hipshadow__fn, dlsym(RTLD_DEFAULT, name), __ATOMIC_RELAXED); \
            __atomic_store_n(&hipshadow__looked, 1, __ATOMIC_RELEASE);             \
        }                                                                          \
        __atomic_load_n(&hipshadow__fn, __ATOMIC_RELAXED);                         \
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

#ifdef __cplusplus
}
#endif

#endif
