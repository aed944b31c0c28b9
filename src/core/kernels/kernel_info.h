/* What hipshadow knows of each kernel it has seen launched: its name and which of its
 * parameters are (or may be) pointers.  Asked of the front-end once per kernel; later lookups
 * are lock-free. */
#ifndef HS_KERNEL_INFO_H
#define HS_KERNEL_INFO_H

#include "call.h"
#include "runtime/frontend.h"
#include "process/util.h"

enum { HS_KERNEL_MAX_PARAMS = 64 };

typedef struct hs_kernel_info {
    const void *kernel;
    int ref;
    const char *name; /* NULL: the runtime does not say */
    int n_params;     /* -1: unknown */
    hs_kernel_param params[HS_KERNEL_MAX_PARAMS];
    uint32_t log_name_id; /* the post-mortem log's id of name (record.c fills it at the first
                               * logged launch, with __atomic builtins); 0: not yet */
} hs_kernel_info;

/* A launch asks up to four times (facts, model, accesses, record): this thread's last answer,
 * checked inline, so that the asking costs a compare, not a call. */
extern HS_TLS hs_kernel_info *hs_kernel_info_last;
/* The table's answer, filled from the front-end at a kernel's first launch (kernel_info.c). */
const hs_kernel_info *hs_kernel_info_find(const hs_call *c);
bool hs_kernel_info_in_table(const void *kernel); /* found: it becomes the thread's last */

/* The launch's kernel; NULL for graphs and host functions, or when memory runs out. */
static inline const hs_kernel_info *hs_kernel_info_of(const hs_call *c)
{
    if (!c->kernel || (c->kernel_ref != HS_KREF_STUB && c->kernel_ref != HS_KREF_FUNCTION))
        return NULL;
    hs_kernel_info *last = hs_kernel_info_last;
    return last && last->kernel == c->kernel ? last : hs_kernel_info_find(c);
}
/* Whether the kernel's info was asked for before (lock-free, no runtime call). */
static inline bool hs_kernel_info_known(const void *kernel)
{
    hs_kernel_info *last = hs_kernel_info_last;
    return (last && last->kernel == kernel) || hs_kernel_info_in_table(kernel);
}
void hs_kernel_info_after_fork(void);

#endif
