/* An intern table of byte arrays: each distinct array is stored once and named by an id (>= 1,
 * in the order they came).  The native stack depot (stacks.c: arrays of return addresses) and
 * the Python one (pystacks.c: frame texts, and stacks as arrays of frame ids) are built on it.
 * Not thread-safe: its owner holds its own lock around every call. */
#ifndef HS_DEPOT_H
#define HS_DEPOT_H

#include <stddef.h>
#include <stdint.h>

typedef struct hs_depot_entry hs_depot_entry;

typedef struct hs_depot {
    hs_depot_entry *by_hash; /* uthash, one entry per hash; equal hashes chain */
    hs_depot_entry **by_id;  /* by_id[id - 1] */
    uint32_t count, capacity;
} hs_depot;

/* The hash to pass to find and add. */
uint64_t hs_depot_hash(const void *data, size_t bytes);
/* The id of an array already stored, or 0. */
uint32_t hs_depot_find(const hs_depot *d, const void *data, size_t bytes, uint64_t hash);
/* Stores an array not stored yet: its id, or 0 when memory or ids run out. */
uint32_t hs_depot_add(hs_depot *d, const void *data, size_t bytes, uint64_t hash);
/* The array named id (and its size), or NULL. */
const void *hs_depot_get(const hs_depot *d, uint32_t id, size_t *bytes);
/* What storing an array of this size costs: its entry, its by_id slot, uthash's share. */
size_t hs_depot_entry_cost(size_t bytes);

#endif
