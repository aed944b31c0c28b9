/* An ordered set of non-overlapping address ranges, built for many readers and few writers.
 *
 * Readers never lock: they binary-search a directory of sorted blocks under a sequence counter
 * and retry if a writer was active (a seqlock).  Nothing is ever unmapped (blocks are reused,
 * directories retired when they grow), so a reader racing a writer can read stale bytes but
 * never unmapped memory; the sequence check throws stale reads away.  Writers serialize on the
 * index's own mutex; an insert or remove moves one block's spans, not the whole set. */
#ifndef HS_SPAN_INDEX_H
#define HS_SPAN_INDEX_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shadow/span.h"

/* Spans per block of the index (span_index.c: a directory of sorted blocks). */
enum { HS_SPAN_BLOCK = 64 };
typedef struct hs_span_block hs_span_block;

typedef struct hs_span_index {
    atomic_uint seq;               /* odd while a writer is changing the index */
    _Atomic(hs_span_block **) dir; /* the blocks in address order */
    _Atomic(uintptr_t *) keys;     /* keys[b]: the first base in block b */
    atomic_size_t nblocks;
    atomic_size_t count; /* spans in all */
    size_t capacity;     /* of dir and keys */
    pthread_mutex_t writer;
    /* writer side: blocks are never unmapped, emptied ones are reused */
    hs_span_block *free_blocks;
    hs_span_block *slab;
    size_t slab_left;
    /* Where recent addresses were found (block + 1, span), by a hash of the address: an engine
     * looks up the same tensors at every step, and a hint checked against its neighbours costs a
     * few loads where the two binary searches cost a dozen, mostly cache misses.  Any caller
     * may write one; a wrong or stale hint fails its check and the search runs. */
    _Atomic uint64_t *hints;
} hs_span_index;

/* 0 on success, -1 when memory for the index could not be mapped. */
int hs_span_index_init(hs_span_index *ix);

/* Lock-free: the span containing addr, copied into *out (which a false answer may leave
 * changed: a writer raced with the search). */
bool hs_span_find(hs_span_index *ix, uintptr_t addr, hs_span *out);
/* Lock-free: the span with the highest base <= addr, and the one after it (the nearest below
 * and above, when addr lies in neither). */
void hs_span_neighbours(hs_span_index *ix, uintptr_t addr, hs_span *below, bool *has_below, hs_span *above,
                        bool *has_above);
/* Lock-free: the span whose base is exactly addr (*out as hs_span_find's). */
bool hs_span_find_exact(hs_span_index *ix, uintptr_t addr, hs_span *out);
size_t hs_span_count(hs_span_index *ix);
/* Changes whenever the index does: a span read under the same generation is still there as read. */
unsigned hs_span_generation(hs_span_index *ix);

/* Writers: call with ix->writer held (hs_span_lock / hs_span_unlock), or under an owner's lock
 * that every writer of this index takes. */
void hs_span_lock(hs_span_index *ix);
void hs_span_unlock(hs_span_index *ix);
/* Insert, replacing any span that overlaps it (their sizes are added to *replaced_bytes when
 * that is not NULL).  -1 when out of memory. */
int hs_span_insert_locked(hs_span_index *ix, const hs_span *s, uint64_t *replaced_bytes);
/* Overwrite, in place, the span whose base is s->base with s, when s overlaps no other span (it
 * may shrink, or grow up to the next one); *old (if not NULL) gets what was there.  False, and
 * nothing changed, otherwise.  No span moves: the cheap way to change a span's state or size. */
bool hs_span_overwrite_locked(hs_span_index *ix, const hs_span *s, hs_span *old);
/* End, in place, the span whose base is base and that has not ended (end_time_ns 0): its
 * end_time_ns (not 0), end_stack and end_thread are set, and *ended gets it as it is now.  One
 * search; false, and nothing changed, when there is no such span. */
bool hs_span_end_locked(hs_span_index *ix, uintptr_t base, uint64_t end_time_ns, uint32_t end_stack,
                        uint32_t end_thread, hs_span *ended);
/* Remove the span whose base is addr (and, if id != 0, whose id matches). */
bool hs_span_remove_locked(hs_span_index *ix, uintptr_t base, uint64_t id, hs_span *removed);
/* Replace the whole content with n sorted, non-overlapping spans. */
int hs_span_replace_all_locked(hs_span_index *ix, const hs_span *sorted, size_t n);
/* Visit every span in address order (writer side, for exit-time reports). */
void hs_span_foreach_locked(hs_span_index *ix, void (*fn)(const hs_span *, void *), void *arg);

/* After fork the child owns a copy whose writer mutex may be held by a thread that no longer exists. */
void hs_span_index_after_fork(hs_span_index *ix);

#endif
