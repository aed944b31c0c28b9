/* Python stacks: a depot of interpreter frames as text ("file:line in function") and of stacks
 * as arrays of frame ids, each distinct one stored once, like the native stack depot
 * (stacks.h).  The frames come from the PyTorch plugin, which walks the interpreter; the core
 * only stores and prints them.  Cold path, or python_stacks=alloc: one mutex. */
#ifndef HS_PYSTACKS_H
#define HS_PYSTACKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { HS_PYSTACK_MAX_FRAMES = 64 };

/* The id (>= 1) of a frame's text; 0 when out of memory. */
uint32_t hs_pyframe_intern(const char *text);
/* The id (>= 1) of a stack of frame ids, innermost first; 0 when n is 0 or out of memory. */
uint32_t hs_pystack_put(const uint32_t *frames, int n);
/* Up to max frame texts of stack id, innermost first (the texts live as long as the process). */
int hs_pystack_frames(uint32_t id, const char **texts, int max);
/* "    #N file:line in function" lines; nothing for id 0. */
void hs_pystack_print(uint32_t id, FILE *out);
void hs_pystacks_after_fork(void);

#endif
