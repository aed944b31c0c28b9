/* The operations table: one row per operation (hs_op), naming everything the path does that
 * depends on the operation.  core.c walks a row; it never switches on the operation.  Adding
 * an operation means adding an hs_op value and a row.  Empty columns do nothing. */
#ifndef HS_OPS_H
#define HS_OPS_H

#include "call.h"
#include "rules/check.h"

typedef void (*hs_step_fn)(const hs_call *c, hs_call_state *st);
typedef void (*hs_log_fn)(const hs_call *c, hs_call_state *st, int result);

typedef struct hs_op_row {
    const char *name;
    bool pausable;     /* hipshadow_pause() skips its gathering and rules */
    bool serialize;    /* serialize=1 waits for it and checks for a fault (launches) */
    bool sync_point;   /* once it succeeded (and is synchronous), the work before it is done */
    bool lazy_sides;   /* its gather fills no side of the facts: they are cleared on demand (hs_sides_ready) */
    hs_step_fn claim;  /* model.c, before forwarding: changes others must see at once */
    hs_step_fn gather; /* facts.c: what the rules need */
    hs_rule_fn rules;  /* check.c: findings, after the stream-handle rule every call gets */
    void (*log_before)(const hs_call *c, hs_call_state *st, bool paused); /* record.c: before forwarding */
    hs_step_fn enqueue;  /* model.c, last before forwarding, when it is forwarded: work the device may
                                    * start before the call returns (undone by hs_model_unclaim if refused) */
    hs_step_fn settle;   /* model.c: after forwarding, whatever the result */
    hs_step_fn apply;    /* model.c: after the runtime succeeded */
    hs_step_fn explain;  /* facts.c: after the runtime failed, before runtime-error is reported */
    hs_log_fn log_after; /* record.c: after the call, forwarded or not */
} hs_op_row;

extern const hs_op_row hs_ops[HS_OP_COUNT];

#endif
