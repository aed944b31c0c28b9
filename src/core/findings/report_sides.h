/* The findings' reports (report.c, report_text.c, report_json.c): which side of a call a finding
 * is about, and the action's name.  Private to findings/. */
#ifndef HS_REPORT_SIDES_H
#define HS_REPORT_SIDES_H

#include "call.h"
#include "rules/check.h"
#include "torch/block_report.h"

static inline const hs_side *side_of(const hs_event *e, hs_side_id id)
{
    return id == HS_SIDE_DST ? &e->facts->dst : id == HS_SIDE_SRC ? &e->facts->src : NULL;
}

static inline bool side_has_alloc(const hs_side *s)
{
    return s && (s->where != HS_WHERE_NONE || s->runtime_known || s->unmapped);
}

/* The side whose allocation a finding is about: the faulting side, else the device side. */
static inline const hs_side *subject_side(const hs_event *e)
{
    const hs_side *s = side_of(e, e->finding->side);
    if (s)
        return s;
    if (!e->facts)
        return NULL;
    if (side_has_alloc(&e->facts->src) && hs_side_is_device(&e->facts->src))
        return &e->facts->src;
    if (side_has_alloc(&e->facts->dst))
        return &e->facts->dst;
    if (e->facts->src.where != HS_WHERE_NONE)
        return &e->facts->src;
    return NULL;
}

/* The side whose PyTorch block a finding is about, if any. */
static inline const hs_side *block_subject(const hs_event *e)
{
    const hs_side *s = side_of(e, e->finding->side);
    if (s && s->block_state != HS_BLOCK_NONE &&
        (e->finding->kind == HS_KIND_USE_AFTER_FREE || e->finding->kind == HS_KIND_KERNEL_USE_AFTER_FREE ||
         (e->finding->kind == HS_KIND_REGION_OVERRUN && !s->in_region)))
        return s;
    return NULL;
}

static inline const char *hs_action_name(hs_action a)
{
    static const char *const names[] = {"forwarded", "blocked", "aborted", "fallback"};
    return (unsigned)a < 4 ? names[a] : "?";
}

/* A side's block as the PyTorch wording takes it (torch/block_report.h). */
#define BLOCK_VIEW(s) (&(hs_block_view){(s)->ptr, &(s)->block, &(s)->alloc, (hs_block_state)(s)->block_state})

#endif
