/* The launch ledger: each stream's recent kernel launches in a bounded ring, so that a fault
 * surfacing later (the next copy returns an illegal address) can be traced to the launches that
 * may have caused it: those not yet known to have completed. */
#ifndef HS_LEDGER_H
#define HS_LEDGER_H

#include "call.h"

typedef struct hs_launch {
    uint64_t seq;   /* the stream's operation number: complete once the stream's done >= seq */
    uint64_t stamp; /* hs_order_stamp(): orders launches across streams; its time: hs_stamp_ns */
    uintptr_t stream;
    uintptr_t caller; /* the program's return address at the launch (always recorded) */
    uint32_t stack;   /* the whole launch stack (launch_stacks=1 or serialize=1), else 0 */
    uint32_t thread;
    const char *name; /* the kernel's name, NULL when unknown */
    const void *kernel;
    uint32_t grid[3], block[3];
    uint32_t shmem;
    uint16_t api;
    uint8_t kernel_ref;
    uint8_t n_args;
    /* stream-race: its accesses are not in the access history yet, only here (path/accesses.c
     * adds them when another stream's call could race with them, or before this record is
     * overwritten) */
    bool deferred;
    hs_launch_arg args[HS_LAUNCH_MAX_ARGS];
} hs_launch;

enum { HS_MAX_SUSPECTS = 8 };

/* Suspects of a fault: launches not known to have completed, newest first. */
typedef struct hs_suspects {
    int n;
    bool serialized; /* serialize=1 found the one launch that faulted */
    bool users;      /* the launches that had a pointer into one allocation (redzones) */
    int n_near;      /* a GPU memory fault's: the first n_near point into or next to its address */
    hs_launch launch[HS_MAX_SUSPECTS];
} hs_suspects;

/* The ring size per stream (ledger_size=) and the launches remembered in all (ledger_max=): a
 * stream's ring is made at its first launch, with what is left of the budget when that is less;
 * once nothing is left, launches on streams without a ring are not remembered (said once). */
void hs_ledger_init(unsigned entries_per_stream, unsigned max_entries);
/* Records a launch on s, in two steps, so that the caller writes the record in place: the slot
 * the launch takes (NULL: not recorded: the budget was spent, or memory ran out), then, once the
 * caller filled its head and args[0..n_args), what the ledger keeps of it (whether its accesses
 * wait in it).  s's lock held: the launch takes its place in stream order and its record under
 * one hold (hs_order_enqueue_recorded).  The ring is made at the first one. */
hs_launch *hs_ledger_claim_locked(hs_stream *s);
void hs_ledger_commit_locked(hs_stream *s, const hs_launch *l);
/* s's lock held, for the launch taking stream operation number seq: the record the next
 * hs_ledger_claim_locked overwrites when it may be a deferred launch still in flight, else NULL
 * (the ring is not full, or that record is surely complete). */
const hs_launch *hs_ledger_next_overwritten_locked(hs_stream *s, uint64_t seq);
/* Whether a stream other than `me` has launches whose accesses are deferred (hs_launch.deferred),
 * perhaps still in flight: lock-free, and false in the common case of one stream at work. */
bool hs_ledger_others_deferred(const hs_stream *me);
/* Hands s's deferred launches that have not completed to fn, oldest first, under s's lock, and
 * marks all of s's launches as no longer deferred. */
void hs_ledger_take_deferred(hs_stream *s, void (*fn)(hs_stream *s, const hs_launch *l));
/* Every stream's launches that are not known to have completed, newest first. */
void hs_ledger_suspects(hs_suspects *out);
/* A GPU memory fault's suspects: the pending launches with a pointer into one of the
 * allocations ids[0..n) (the one the address falls in or next to) first, then the others. */
void hs_ledger_suspects_near(const uint64_t *ids, int n_ids, hs_suspects *out);
/* The launch numbered seq on s was not made after all (the runtime refused it): never a suspect. */
void hs_ledger_withdraw(hs_stream *s, uint64_t seq);
/* The launches still in the ledgers that had a pointer into allocation `alloc_id`, newest first
 * (a damaged redzone's suspects). */
void hs_ledger_users(uint64_t alloc_id, hs_suspects *out);
/* The last launch recorded on s (serialize=1: the one just made); false when none. */
bool hs_ledger_last(hs_stream *s, hs_launch *out);

#endif
