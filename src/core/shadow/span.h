/* The record the shadow map keeps about one address range: allocations, mappings, pool regions,
 * streams and events all are spans.  Its own header, because the front-ends and every layer pass
 * it around without needing the index that stores it. */
#ifndef HS_SPAN_H
#define HS_SPAN_H

#include <stddef.h>
#include <stdint.h>

/* What the shadow keeps about one range.  Copied out by value on every lookup. */
typedef struct hs_span {
    uintptr_t base;
    size_t size;
    uint64_t id;          /* allocation id, stream serial, ... */
    uint64_t time_ns;     /* when it was created */
    uint64_t end_time_ns; /* when it was freed/destroyed (quarantine only) */
    uint32_t kind;        /* meaning chosen by the owner of the index */
    uint32_t api;         /* which wrapped entry point created it (front-end's numbering) */
    uint64_t owner;       /* the memory pool it came from (0: none) */
    int32_t device;
    uint32_t stack;     /* stack-depot id of the creating call */
    uint32_t end_stack; /* stack-depot id of the freeing call */
    uint32_t thread;    /* creating thread (kernel tid) */
    uint32_t end_thread;
    uint32_t redzone; /* bytes of redzone after size (redzones=N), 0: none */
} hs_span;

#endif
