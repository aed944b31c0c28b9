/* libhipshadow-torch.so's entry point: the table the core asked for (torch_plugin.h). */
#include "plugin.h"

#include <stdio.h>
#include <string.h>

static hipshadow_torch_core core; /* a copy: the core passes its table by address once */

/* Called by the allocator, under its lock, for every trace entry. */
static void emit(const hipshadow_block_event *e)
{
    if (core.python_stacks == 2 &&
        (e->action == HIPSHADOW_BLOCK_ALLOC || e->action == HIPSHADOW_BLOCK_FREE_REQUESTED)) {
        hipshadow_block_event with = *e;
        if (!with.context) /* no context gathered: the frames only if this thread holds the GIL */
            with.pystack = hs_tp_python_stack(0); /* never take the GIL under the allocator's lock */
        core.block_event(&with);
        return;
    }
    core.block_event(e);
}

static int attach(char *why, size_t len) { return hs_tp_attach(emit, core.python_stacks == 2, why, len); }

HS_TP_EXPORT int hipshadow_torch_plugin_init(const hipshadow_torch_core *c, hipshadow_torch_plugin *out, char *why,
                                             size_t len)
{
    if (!c || c->abi != HIPSHADOW_TORCH_ABI || c->size < sizeof core || !c->block_event) {
        snprintf(why, len, "the core speaks another plugin ABI (%u, this plugin %u)", c ? c->abi : 0,
                 HIPSHADOW_TORCH_ABI);
        return -1;
    }
    if (hs_tp_check(why, len) != 0)
        return -1;
    core = *c;
    hs_tp_python_init(&core);
    *out = (hipshadow_torch_plugin){.abi = HIPSHADOW_TORCH_ABI,
                                    .size = sizeof *out,
                                    .description = hs_tp_description(),
                                    .attach = attach,
                                    .python_stack = hs_tp_python_stack};
    return 0;
}
