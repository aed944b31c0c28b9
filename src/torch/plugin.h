/* libhipshadow-torch.so, inside: the plugin's glue (plugin.c) talks to the core through
 * include/hipshadow/torch_plugin.h; the allocator's side (tracker.cpp, the one file that needs
 * PyTorch's C++ headers) and the interpreter's (pystack.c) are behind these few calls. */
#ifndef HS_TORCH_PLUGIN_INTERNAL_H
#define HS_TORCH_PLUGIN_INTERNAL_H

#include "hipshadow/torch_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HS_TP_EXPORT __attribute__((visibility("default")))

typedef void (*hs_tp_emit_fn)(const hipshadow_block_event *e);

/* tracker.cpp: is the PyTorch in this process the one the plugin was built against?  0 yes;
 * -1 no (why written). */
int hs_tp_check(char *why, size_t len);
/* tracker.cpp: attach emit to the caching allocator's trace.  with_context: also have the
 * allocator gather a context (our Python stack, hs_tp_python_stack) at each allocation and free,
 * outside its lock, as PyTorch's own memory history does; the entries then carry it.  1 attached;
 * 0 not initialised yet; -1 never (why written). */
int hs_tp_attach(hs_tp_emit_fn emit, int with_context, char *why, size_t len);
/* tracker.cpp: "PyTorch 2.11.0+cu130 (native caching allocator)". */
const char *hs_tp_description(void);

/* pystack.c: resolve the interpreter's API in this process (none: no Python stacks). */
void hs_tp_python_init(const hipshadow_torch_core *core);
/* pystack.c: the calling thread's Python stack as a core pystack id, 0 when none.  The GIL is
 * taken only when may_take_gil and the thread is one Python knows but that released it. */
uint32_t hs_tp_python_stack(int may_take_gil);

#ifdef __cplusplus
}
#endif

#endif
