/* The stream registry: which handles were created, which destroyed.  Lock-free lookups, so
 * validating the stream of every async copy costs one binary search. */
#ifndef HS_STREAMS_H
#define HS_STREAMS_H

#include "span_index.h"

typedef enum hs_stream_state {
    HS_STREAM_OK = 0,         /* live, or a built-in handle (null, legacy, per-thread) */
    HS_STREAM_DESTROYED,
    HS_STREAM_NEVER_CREATED,
} hs_stream_state;

int hs_streams_init(const uintptr_t *builtin, int n_builtin);
void hs_stream_created(uintptr_t handle, uint32_t stack, uint32_t thread, uint64_t now_ns);
/* Marks the handle destroyed; returns its state before (so destroying twice is caught). */
hs_stream_state hs_stream_destroyed(uintptr_t handle, uint32_t stack, uint32_t thread, uint64_t now_ns,
                                    hs_span *info);
/* Lock-free. info is filled for live and destroyed handles. */
hs_stream_state hs_stream_state_of(uintptr_t handle, hs_span *info);
const char *hs_stream_state_name(hs_stream_state s);
void hs_streams_after_fork(void);

#endif
