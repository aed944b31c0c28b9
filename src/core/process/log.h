/* The post-mortem recorder: fixed-size binary records into a file-backed mmap, per-thread
 * chunks, no lock per event (include/hipshadow/log_format.h says what is on disk). */
#ifndef HS_LOG_H
#define HS_LOG_H

#include "hipshadow/log_format.h"
#include "process/options.h"

#include <stdbool.h>
#include <stddef.h>

/* At start: remembers what to log.  No file is made yet: a process that never makes a wrapped
 * call (a shell, a launcher, a worker that only computes) leaves nothing behind. */
void hs_log_configure(const hs_options *o, const char *const *api_names, int n_apis, int runtime);
/* At this process's first wrapped call: creates the file named by log= (a no-op when empty).
 * Problems give one warning and leave logging off; the program carries on. */
void hs_log_open_for_process(void);
bool hs_log_on(void);

/* Reserves `size` bytes for a record of `type` in this thread's chunk and fills its header.
 * The caller fills the rest, then calls hs_log_commit.  NULL when logging is off. */
void *hs_log_begin(uint16_t type, uint32_t size);
void hs_log_commit(void *record);
/* True while a committed record is still this thread's (ring mode may have reused the chunk):
 * only then may it be patched, e.g. with the result of the call it describes. */
bool hs_log_still_mine(const void *record);

/* Metadata, never overwritten: a new stack-depot entry.  Rewrites the module map first when
 * objects were loaded since it was last written. */
void hs_log_write_stack(uint32_t id, const uintptr_t *frames, int n);

/* Cold path (once per kernel: callers cache it): the id LAUNCH records use for a kernel's name,
 * 1, 2, ... for the life of the process; 0 for NULL or when memory runs out.  A new name is
 * written to the log as a KERNEL_NAME metadata record (a forked child's log gets every name
 * known when it opens, so ids cached before the fork stay valid). */
uint32_t hs_log_kernel_name_id(const char *name);

/* In a forked child: stops writing into the parent's file; the child's own is made at its first
 * wrapped call. */
void hs_log_after_fork(void);
void hs_log_close(void);

#endif
