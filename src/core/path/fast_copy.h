/* The fast path of a clean synchronous copy (tens of nanoseconds a copy at any number
 * of allocations).  A synchronous 1-D copy on the legacy stream whose sides the shadow map's
 * briefs place (a live allocation holding the whole range, or host memory the host probe's cache
 * knows) and that the rules' brief form calls clean is forwarded without the full path's call
 * state; every other copy, and every doubt, takes the full path.  fast_copies=0 turns it off. */
#ifndef HS_FAST_COPY_H
#define HS_FAST_COPY_H

#include "call.h"

/* The fields of a copy the fast path reads: the wrapper fills these, not a whole hs_call (352
 * bytes to clear), unless the copy goes down the full path. */
typedef struct hs_copy_args {
    uintptr_t dst, src;
    size_t bytes, dst_extent, src_extent;
    int dir;
    uint16_t api;
    bool async, has_stream;
} hs_copy_args;
#define HS_COPY_ARGS(c)                                                                                                \
    ((hs_copy_args){.dst = (c).dst,                                                                                    \
                    .src = (c).src,                                                                                    \
                    .bytes = (c).bytes,                                                                                \
                    .dst_extent = (c).dst_extent,                                                                      \
                    .src_extent = (c).src_extent,                                                                      \
                    .dir = (c).dir,                                                                                    \
                    .api = (c).api,                                                                                    \
                    .async = (c).async,                                                                                \
                    .has_stream = (c).has_stream})

/* Before forwarding: true when the copy is clean and needs nothing else from hipshadow. */
bool hs_fast_copy_clean(const hs_copy_args *a);
/* After forwarding it: the stream model; false when the runtime refused the copy, which the
 * caller then hands, described in full, to hs_after_refused_fast (core.h: explained, or rescued
 * by fallback=stage). */
bool hs_fast_copy_done(uint16_t api, int result);

#endif
