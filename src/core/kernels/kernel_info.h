/* What hipshadow knows of each kernel it has seen launched: its name and which of its
 * parameters are (or may be) pointers.  Asked of the front-end once per kernel; later lookups
 * are lock-free. */
#ifndef HS_KERNEL_INFO_H
#define HS_KERNEL_INFO_H

#include "call.h"
#include "runtime/frontend.h"

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

/* The launch's kernel; NULL for graphs and host functions, or when memory runs out. */
const hs_kernel_info *hs_kernel_info_of(const hs_call *c);
/* Whether the kernel's info was asked for before (lock-free, no runtime call). */
bool hs_kernel_info_known(const void *kernel);
void hs_kernel_info_after_fork(void);

#endif
