/* The operations table (see ops.h). */
#include "path/ops.h"
#include "path/facts.h"
#include "path/model.h"
#include "findings/record.h"

const hs_op_row hs_ops[HS_OP_COUNT] = {
    [HS_OP_OTHER] = {.name = "other"},
    [HS_OP_LOOKUP] = {.name = "lookup"},
    [HS_OP_POOL_CREATE] = {.name = "pool-create"},

    [HS_OP_ALLOC] = {.name = "alloc", .apply = hs_model_alloc, .log_after = hs_record_alloc},
    [HS_OP_FREE] = {.name = "free",
                    .claim = hs_model_release,
                    .gather = hs_gather_free,
                    .rules = hs_check_free,
                    .apply = hs_model_free,
                    .log_after = hs_record_free},
    [HS_OP_POOL_DESTROY] = {.name = "pool-destroy", .apply = hs_model_pool_destroy},

    [HS_OP_COPY] = {.name = "copy",
                    .pausable = true,
                    .sync_point = true,
                    .gather = hs_gather_copy,
                    .rules = hs_check_copy,
                    .log_before = hs_record_copy_start,
                    .apply = hs_model_copy,
                    .explain = hs_gather_after_failure,
                    .log_after = hs_record_copy_end},
    [HS_OP_MEMSET] = {.name = "memset",
                      .pausable = true,
                      .sync_point = true,
                      .gather = hs_gather_copy,
                      .rules = hs_check_copy,
                      .log_before = hs_record_copy_start,
                      .apply = hs_model_copy,
                      .explain = hs_gather_after_failure,
                      .log_after = hs_record_copy_end},

    [HS_OP_SYNC] = {.name = "sync",
                    .sync_point = true,
                    .gather = hs_gather_sync,
                    .rules = hs_check_stream_work,
                    .apply = hs_model_sync,
                    .log_after = hs_record_sync},
    [HS_OP_STREAM_CREATE] = {.name = "stream-create", .apply = hs_model_stream_create, .log_after = hs_record_stream},
    [HS_OP_STREAM_DESTROY] = {.name = "stream-destroy", .claim = hs_model_destroy_stream, .log_after = hs_record_stream},

    [HS_OP_EVENT_CREATE] = {.name = "event-create", .apply = hs_model_event_create, .log_after = hs_record_event_create},
    [HS_OP_EVENT_DESTROY] = {.name = "event-destroy",
                             .apply = hs_model_event_destroy,
                             .log_after = hs_record_event_destroy},
    [HS_OP_EVENT_RECORD] = {.name = "event-record", .apply = hs_model_event_record, .log_after = hs_record_event_record},
    [HS_OP_STREAM_WAIT] = {.name = "stream-wait", .apply = hs_model_stream_wait, .log_after = hs_record_stream_wait},

    [HS_OP_CAPTURE_BEGIN] = {.name = "capture-begin",
                             .apply = hs_model_capture_begin,
                             .log_after = hs_record_capture_begin},
    [HS_OP_CAPTURE_END] = {.name = "capture-end", .settle = hs_model_capture_end, .log_after = hs_record_capture_end},

    [HS_OP_LAUNCH] = {.name = "launch",
                      .gather = hs_gather_launch,
                      .lazy_sides = true,
                      .rules = hs_check_launch,
                      .enqueue = hs_model_launch,
                      .serialize = true,
                      .log_after = hs_record_launch},

    [HS_OP_MODULE_LOAD] = {.name = "module-load", .apply = hs_model_module_load},
    [HS_OP_FUNCTION_GET] = {.name = "function-get", .apply = hs_model_function_get},

    [HS_OP_VMM_RESERVE] = {.name = "vmm-reserve", .apply = hs_model_vmm_reserve},
    [HS_OP_VMM_FREE] = {.name = "vmm-free", .apply = hs_model_vmm_free},
    [HS_OP_VMM_CREATE] = {.name = "vmm-create", .apply = hs_model_vmm_create},
    [HS_OP_VMM_RELEASE] = {.name = "vmm-release", .apply = hs_model_vmm_release},
    [HS_OP_VMM_MAP] = {.name = "vmm-map", .apply = hs_model_vmm_map, .log_after = hs_record_alloc},
    [HS_OP_VMM_UNMAP] = {.name = "vmm-unmap", .apply = hs_model_vmm_unmap, .log_after = hs_record_free},
};
