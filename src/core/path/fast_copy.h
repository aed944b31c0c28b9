/* The fast path of a clean copy (tens of nanoseconds a copy at any number of allocations), in
 * two forms:
 *   - a synchronous 1-D copy on the legacy stream whose sides the shadow map's briefs place (a
 *     live allocation holding the whole range, or host memory the host probe's cache knows);
 *   - an asynchronous 1-D copy on a stream between two live device allocations (an engine's
 *     copy of a tensor into its cache): it touches no host range, so no other stream's work
 *     can overlap it, and it becomes pending on its stream as on the full path.  Where the
 *     access history is kept, only while its search is sure to find nothing (no other stream's
 *     accesses anywhere, initcheck off); its accesses then wait on its stream as the full
 *     path's would.
 * Either, when the rules' brief form calls it clean, is forwarded without the full path's call
 * state; every other copy, and every doubt, takes the full path.  fast_copies=0 turns it off. */
#ifndef HS_FAST_COPY_H
#define HS_FAST_COPY_H

#include "call.h"
#include "path/accesses.h"
#include "streams/streams.h"

/* The fields of a copy the fast path reads: the wrapper fills these, not a whole hs_call (352
 * bytes to clear), unless the copy goes down the full path. */
typedef struct hs_copy_args {
    uintptr_t dst, src, stream, caller;
    size_t bytes, dst_extent, src_extent;
    int dir;
    uint16_t api;
    bool async, has_stream;
} hs_copy_args;
#define HS_COPY_ARGS(c)                                                                                                \
    ((hs_copy_args){.dst = (c).dst,                                                                                    \
                    .src = (c).src,                                                                                    \
                    .stream = (c).stream,                                                                              \
                    .caller = (uintptr_t)__builtin_return_address(0),                                                  \
                    .bytes = (c).bytes,                                                                                \
                    .dst_extent = (c).dst_extent,                                                                      \
                    .src_extent = (c).src_extent,                                                                      \
                    .dir = (c).dir,                                                                                    \
                    .api = (c).api,                                                                                    \
                    .async = (c).async,                                                                                \
                    .has_stream = (c).has_stream})

/* What the model does once a clean copy was forwarded. */
typedef struct hs_fast_copy {
    hs_stream *stream;    /* an async copy's stream (NULL: a synchronous copy on the legacy stream) */
    hs_pending_op op;     /* an async copy's pending operation */
    bool accesses;        /* the access history is kept: the copy's accesses go into it */
    hs_access_copy where; /* an async copy's ranges and their allocations */
} hs_fast_copy;

/* Before forwarding: true when the copy is clean and needs nothing else from hipshadow. */
bool hs_fast_copy_clean(const hs_copy_args *a, hs_fast_copy *fc);
/* After forwarding it: the stream model; false when the runtime refused the copy, which the
 * caller then hands, described in full, to hs_after_refused_fast (core.h: explained, or rescued
 * by fallback=stage). */
bool hs_fast_copy_done(uint16_t api, hs_fast_copy *fc, int result);

#endif
