/* GPU memory faults announced by the runtime (see gpu_faults.h): the same steps as a call's
 * path (facts, rule, policy, suspects, record, report), for an event that is not a call. */
#include "path/gpu_faults.h"
#include "call.h"
#include "rules/check.h"
#include "path/facts.h"
#include "runtime/frontend.h"
#include "path/init.h"
#include "kernels/ledger.h"
#include "findings/policy.h"
#include "findings/record.h"
#include "findings/report.h"
#include "process/stacks.h"
#include "process/util.h"

#include <stdlib.h>

HS_HOT_DATA atomic_bool hs_fault_events_settled;

void hs_gpu_faults_arm(void)
{
    static atomic_flag busy = ATOMIC_FLAG_INIT; /* one thread tries at a time; the others go on */
    if (atomic_flag_test_and_set(&busy))
        return;
    if (!hs_opts()->fault_events || !hs_frontend_active.arm_fault_events || hs_frontend_active.arm_fault_events())
        atomic_store(&hs_fault_events_settled, true);
    atomic_flag_clear(&busy);
}

void hs_gpu_fault_report(uint16_t api, uintptr_t address, uint32_t reasons, uint64_t agent)
{
    if (!hs_tool_active())
        return;
    hs_gpu_fault fault = {.address = address, .reasons = reasons, .agent = agent};
    hs_gather_gpu_fault(&fault);
    hs_finding fi = hs_check_gpu_fault(&fault);
    if (hs_policy_suppressed(fi.kind, hs_frontend_active.api_names[api], NULL, 0))
        return;
    hs_policy_first_device_fault(); /* the sticky error the next calls return is this fault, reported here */

    /* The allocation it hit is the report's subject (its allocation and free stacks). */
    hs_facts facts = {0};
    bool in_or_next_to = fault.where != HS_FAULT_UNKNOWN && fault.where != HS_FAULT_RESERVED_UNMAPPED;
    if (in_or_next_to)
        facts.dst = (hs_side){.ptr = address,
                              .extent = 1,
                              .alloc = fault.alloc,
                              .where = fault.where == HS_FAULT_FREED ? HS_WHERE_FREED : HS_WHERE_LIVE};
    uint64_t near[3] = {fault.alloc.id, fault.has_below ? fault.below.id : 0, fault.has_above ? fault.above.id : 0};
    hs_suspects suspects;
    /* in or next to an allocation: launches into it first; near nothing: into either neighbour */
    hs_ledger_suspects_near(in_or_next_to ? near : near + 1, in_or_next_to ? 1 : 2, &suspects);

    /* No call made the access: the finding's stack is the launch most likely to have (the first
     * suspect's launch stack, or its caller alone unless launch_stacks=1). */
    uint32_t stack = 0;
    if (suspects.n)
        stack = suspects.launch[0].stack ? suspects.launch[0].stack : hs_stack_of_frames(&suspects.launch[0].caller, 1);
    hs_call call = {.api = api, .op = HS_OP_OTHER};
    hs_policy_count(&fi);
    hs_event e = {.call = &call,
                  .facts = &facts,
                  .finding = &fi,
                  .action = HS_ACTION_FORWARDED,
                  .stack = stack,
                  .thread = hs_thread_id(),
                  .time_ns = hs_now_ns(),
                  .suspects = &suspects,
                  .gpu_fault = &fault};
    uint32_t seq = hs_record_finding(&e, NULL);
    hs_record_gpu_fault(&e, seq);
    hs_report_finding(&e);
    hs_report_flush();
    if (hs_opts()->mode == HS_MODE_ABORT)
        abort();
}
