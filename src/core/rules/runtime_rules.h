/* The runtime's documented rules for a call's arguments, each one row of runtime_rules.inc: when
 * the runtime refuses a call in which hipshadow's checks found nothing, the first rule the
 * arguments break is the cause said with the runtime-error.  Pure: the call, its facts and the
 * device's limits in, a sentence out.  Cold: asked only after a refusal. */
#ifndef HS_RUNTIME_RULES_H
#define HS_RUNTIME_RULES_H

#include "call.h"
#include "runtime/frontend.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct hs_rule_input {
    const hs_call *call;
    const hs_facts *facts;
    const hs_device_limits *limits; /* the current device's (NULL: unknown) */
    /* the devices involved, as recorded at creation (-1: unknown) */
    int current_device, stream_device, event_device;
    bool kernels_on_current_device; /* the layer's rule (frontend.h) */
} hs_rule_input;

typedef struct hs_cause {
    const char *rule; /* the row's name (NULL: no rule decided) */
    char text[320];   /* what the arguments do, then the rule they break */
} hs_cause;

/* The first row that decides; false when none does (a row that cannot decide says nothing). */
bool hs_runtime_cause(const hs_rule_input *in, hs_cause *out);

#endif
