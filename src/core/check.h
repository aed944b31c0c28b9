/* The rules: facts about one call in, findings out.  A pure function of its input, so the
 * whole rule set is unit-tested without a runtime (tests/unit/test_check.c). */
#ifndef HS_CHECK_H
#define HS_CHECK_H

#include "call.h"
#include "hostmem.h"
#include "ordering.h"
#include "shadow.h"
#include "streams.h"

typedef enum hs_severity { HS_SEV_INFO, HS_SEV_WARNING, HS_SEV_ERROR } hs_severity;

typedef enum hs_kind {
#define HS_KIND(id, name, sev) HS_KIND_##id,
#include "hipshadow/finding_kinds.inc"
#undef HS_KIND
    HS_KIND_COUNT
} hs_kind;

typedef enum hs_side_id { HS_SIDE_NONE = 0, HS_SIDE_DST, HS_SIDE_SRC } hs_side_id;

/* What the shadow and the host probe know about one side of a copy. */
typedef struct hs_side {
    uintptr_t ptr;
    size_t extent;            /* bytes the call touches from ptr */
    hs_where where;           /* live / freed / none */
    bool runtime_known;       /* where == NONE, but the runtime reports device memory (alloc filled) */
    hs_span alloc;            /* valid when where != NONE or runtime_known */
    bool host_checked;        /* the host probe ran (pageable host side) */
    hs_host_fact host;
    bool in_region;           /* an annotated region (hipshadow_region_register) holds ptr */
    hs_span region;
} hs_side;

typedef struct hs_facts {
    int dir;                  /* effective direction: hipMemcpyDefault resolved from the shadow map */
    hs_side dst, src;
    hs_stream_state stream_state;
    hs_span stream_info;      /* the destroyed stream, when stream_state is DESTROYED */
    hs_conflict conflict;     /* async-overlap / free-while-pending: the other operation */
    uintptr_t capturing_stream; /* capture-violation: the stream being captured */
} hs_facts;

typedef struct hs_finding {
    hs_kind kind;
    hs_severity severity;
    hs_side_id side;          /* which side is at fault */
    uint64_t overrun;         /* bytes past the end, for overrun kinds */
    int expected_role;        /* for direction-mismatch: 1 = the side should be device, 2 = host */
} hs_finding;

enum { HS_MAX_FINDINGS_PER_CALL = 4 };

const char *hs_kind_name(hs_kind k);
hs_severity hs_kind_severity(hs_kind k);
const char *hs_severity_name(hs_severity s);
const char *hs_dir_name(int dir);

/* Is this side device memory as far as the shadow (or the runtime) knows? */
bool hs_side_is_device(const hs_side *s);
/* hipMemcpyDefault: the direction the pointers imply. */
int hs_effective_direction(int stated, const hs_side *dst, const hs_side *src);
/* The role a side must play for a direction: 1 device, 2 host. */
int hs_role_of(int dir, hs_side_id side);

/* The checks that run before a copy or memset is forwarded. Returns the number of findings. */
int hs_check_memory_op(const hs_call *call, const hs_facts *facts, hs_finding *out, int max);

#endif
