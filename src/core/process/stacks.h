/* Stack capture (libunwind) and the stack depot: each distinct stack is stored once and named
 * by a small id.  Capture is done by policy (allocations, frees, findings), never per copy. */
#ifndef HS_STACKS_H
#define HS_STACKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum { HS_STACK_MAX_FRAMES = 64 };

/* Called once at start: records which code is ours, so our frames are left out of stacks.
 * The depot stores at most max_bytes of stacks (stack_depot_max; 0: no cap). */
void hs_stacks_init(int depth, uint64_t max_bytes, const void *any_symbol_of_ours);

/* Captures the caller's stack (without hipshadow's own frames) and returns its depot id;
 * 0 when capture is off or failed, or when the stack is new and the depot is full (a stack
 * already stored is always found). */
uint32_t hs_stack_capture(void);
/* The same for a finding's stack: it may take the depot 1/8 past its cap, so that reports made
 * after the cap was reached still show where they happened. */
uint32_t hs_stack_capture_for_finding(void);
/* A stack was left unrecorded for want of room (stack_depot_max; said once on stderr). */
bool hs_stack_depot_full(void);

/* The depot id of a finding's stack known otherwise (frames, innermost first); 0 when n is 0.
 * Like hs_stack_capture_for_finding, it may use the reserve past the cap. */
uint32_t hs_stack_of_frames(const uintptr_t *frames, int n);

/* Copies up to max frames of stack id into frames; returns how many. */
int hs_stack_frames(uint32_t id, uintptr_t *frames, int max);

/* Cold path: one frame as "func+0xoff (module)", or "?? (module+0xoff)" without a symbol. */
void hs_frame_describe(uintptr_t pc, char *buf, size_t len);

/* Cold path: prints "    #N 0xPC in func+0xoff (module)" lines. */
void hs_stack_print(uint32_t id, FILE *out);

/* Where the program's call entered hipshadow: the stack slot that holds the wrapper's return
 * address (the wrapper sets it, from its own frame address, before it captures anything), 0
 * outside a wrapper.  A stack captured for an event is looked up by it first (stacks.c). */
extern __thread uintptr_t hs_entry_slot __attribute__((tls_model("initial-exec")));
static inline void hs_stack_entry(uintptr_t slot) { hs_entry_slot = slot; }

void hs_stacks_after_fork(void);

#endif
