/* The text report's sentences about regions (see report_regions.h). */
#include "findings/report_regions.h"
#include "shadow/regions.h"
#include "process/stacks.h"
#include "process/util.h"

#include <string.h>

const char *hs_report_region_label(const hs_span *r, char *buf, size_t len)
{
    char name[256];
    hs_region_name(r->id, name, sizeof name);
    if (*name)
        snprintf(buf, len, "'%s'", name);
    else
        snprintf(buf, len, "#%llu", (unsigned long long)r->id);
    return buf;
}

static const char *freed_by(const hs_span *r)
{
    switch (r->api) {
    case HS_REGION_END_UNREGISTER: return "nvtxMemRegionsUnregister";
    case HS_REGION_END_HEAP_RESET: return "nvtxMemHeapReset";
    case HS_REGION_END_HEAP_UNREGISTER: return "nvtxMemHeapUnregister";
    default: return "?";
    }
}

static const char *access_name(uint32_t access)
{
    static const char *const names[] = {"no access", "read-only", "write-only", "read-write"};
    return names[access & HS_REGION_RW];
}

void hs_report_region_line(FILE *f, const hs_side *s, const char *label)
{
    if (!s->in_region && !s->region_freed)
        return;
    const hs_span *r = &s->region;
    char name[300];
    bool one_side = !strcmp(label, "the"); /* "the pointer", not "the the pointer" */
    fprintf(f, "  the %s%spointer lies in %sregion %s [0x%lx, 0x%lx), %zu bytes at pool offset %llu",
            one_side ? "" : label, one_side ? "" : " ", s->region_freed ? "FREED " : "",
            hs_report_region_label(r, name, sizeof name), (unsigned long)r->base, (unsigned long)(r->base + r->size),
            r->size, (unsigned long long)(r->base - s->alloc.base));
    if (r->owner == HS_REGION_OWNER_NVTX_PROCESS)
        fprintf(f, ", in NVTX's process-wide heap");
    else if (r->owner)
        fprintf(f, ", in NVTX heap 0x%lx", (unsigned long)r->owner);
    if (s->in_region && s->region_denied)
        fprintf(f, ", %s for this thread", access_name(HS_REGION_RW & ~s->region_denied));
    fprintf(f, "\n");
}

void hs_report_region_freed(FILE *f, const hs_event *e, const hs_side *s, const char *who)
{
    const hs_span *r = &s->region;
    char name[300];
    fprintf(f,
            "  %s 0x%lx lies in region %s [0x%lx, 0x%lx) of allocation #%llu, which %s freed %.6f s before\n"
            "  this call; the allocation itself is live, so the runtime cannot see this\n",
            who, (unsigned long)s->ptr, hs_report_region_label(r, name, sizeof name), (unsigned long)r->base,
            (unsigned long)(r->base + r->size), (unsigned long long)s->alloc.id, freed_by(r),
            (e->time_ns - r->end_time_ns) / 1e9);
}

void hs_report_region_permission(FILE *f, const hs_side *s, const char *side, bool write)
{
    const hs_span *r = &s->region;
    char name[300];
    bool process_wide = (r->kind & HS_REGION_ACCESS_SET) && !(r->kind & (write ? HS_REGION_WRITE : HS_REGION_READ));
    fprintf(f,
            "  the %s range [0x%lx, 0x%lx) %s region %s [0x%lx, 0x%lx), which is %s for this thread\n"
            "  (%s)\n",
            side, (unsigned long)s->ptr, (unsigned long)(s->ptr + s->extent), write ? "writes" : "reads",
            hs_report_region_label(r, name, sizeof name), (unsigned long)r->base, (unsigned long)(r->base + r->size),
            access_name(HS_REGION_RW & ~s->region_denied),
            process_wide ? "its process-wide permissions, nvtxMemPermissionsAssign"
                         : "the permissions object bound to this thread, nvtxMemPermissionsBind");
}

void hs_report_region_stacks(FILE *f, const hs_side *s)
{
    if (!s || !s->region_freed)
        return;
    const hs_span *r = &s->region;
    char name[300];
    fprintf(f, "Region %s freed by thread T%u, %.6f s after start (%s):\n",
            hs_report_region_label(r, name, sizeof name), r->end_thread, (r->end_time_ns - hs_start_ns()) / 1e9,
            freed_by(r));
    hs_stack_print(r->end_stack, f);
}
