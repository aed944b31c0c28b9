/* Small helpers shared by the core: clocks, thread ids, a bounded text builder. */
#ifndef HS_UTIL_H
#define HS_UTIL_H

#include <stddef.h>
#include <stdint.h>

#define HS_EXPORT __attribute__((visibility("default")))
#define HS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HS_TLS __thread __attribute__((tls_model("initial-exec")))

uint64_t hs_now_ns(void);          /* CLOCK_REALTIME, for records that are compared across processes */
uint64_t hs_coarse_ns(void);       /* the same clock at a few ms resolution, for the hot path's ages */
uint64_t hs_order_stamp(void);     /* a cheap, monotonic stamp: which of two events came first */
uint32_t hs_thread_id(void);       /* kernel tid, cached per thread */
uint64_t hs_start_ns(void);        /* when hipshadow started in this process */
void hs_thread_id_after_fork(void);

/* printf into buf[*len..cap): never past cap (a full buffer keeps its last byte for a NUL), no
 * allocation; *len grows by what fitted. */
void hs_appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
