/* Reads hipshadow post-mortem logs into one merged timeline.  A truncated or damaged log is
 * read up to the damage; each problem becomes a message that says where it starts. */
#ifndef HSR_READER_H
#define HSR_READER_H

#include "hipshadow/log_format.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct hsr_module {
    const char *path;
    uint64_t load_bias;
    uint32_t generation;
    const hs_log_segment *segments; /* n_segments, unaligned: points into the log */
    int n_segments;
} hsr_module;

typedef struct hsr_stack {
    uint32_t id;
    uint32_t n_frames;
    const uint8_t *frames; /* n_frames little-endian uint64, unaligned */
} hsr_stack;

typedef struct hsr_kname {
    uint32_t id;
    char *name;
} hsr_kname;

typedef struct hsr_log {
    char *path;
    uint64_t size; /* of the file or buffer */
    hs_log_file_header header;
    bool header_ok;
    /* The header's strings, each cut at its field's size: a field may lack its terminator. */
    char host[sizeof(((hs_log_file_header *)0)->host) + 1];
    char executable[sizeof(((hs_log_file_header *)0)->executable) + 1];
    char command_line[sizeof(((hs_log_file_header *)0)->command_line) + 1];
    char options[sizeof(((hs_log_file_header *)0)->options) + 1];
    char environment[sizeof(((hs_log_file_header *)0)->environment) + 1]; /* "NAME=value" lines */
    uint8_t **blocks; /* the chunks' records read from a file (records point into them) */
    size_t n_blocks, blocks_cap;
    hsr_module *modules;
    int n_modules;
    size_t modules_cap;
    hsr_stack *stacks; /* sorted by id */
    size_t n_stacks, stacks_cap;
    char **api_names; /* by api number */
    int n_api_names;
    size_t api_names_cap;
    hsr_kname *kernel_names; /* KERNEL_NAME records, sorted by id */
    size_t n_kernel_names, kernel_names_cap;
    char **damage; /* one message per problem, with the file offset */
    int n_damage;
    size_t damage_cap, damage_unlisted;
    void *symbolizer; /* symbolize.c's state for this log */
} hsr_log;

/* One record of the merged timeline: points into its log's data. */
typedef struct hsr_event {
    uint64_t time_ns;
    const void *rec; /* hs_log_copy, hs_log_alloc, ... (packed, unaligned) */
    uint32_t log;    /* index into hsr_set.logs */
    uint16_t type;   /* HS_LOG_* */
} hsr_event;

typedef struct hsr_set {
    hsr_log *logs;
    int n_logs;
    size_t logs_cap;
    hsr_event *events; /* every event record of every log, by time */
    size_t n_events, events_cap;
} hsr_set;

/* Adds a log file.  Only the header and the chunks that hold records are read (holes and
 * unwritten chunks of a sparse or reserved file are skipped), so memory follows what the log
 * holds, not its size.  Returns false (errno set) only when the file cannot be opened or is not a
 * regular file; damage inside it is recorded in the log's messages. */
bool hsr_add_file(hsr_set *set, const char *path);
/* Adds a log held in memory (the fuzz target's entry). The buffer must outlive the set. */
void hsr_add_buffer(hsr_set *set, const char *name, const uint8_t *data, size_t size);
/* Sorts the merged timeline; call once after adding every log. */
void hsr_finish(hsr_set *set);
void hsr_free(hsr_set *set);

const hsr_stack *hsr_find_stack(const hsr_log *log, uint32_t id);
uint64_t hsr_frame(const hsr_stack *s, uint32_t i);
const char *hsr_api_name(const hsr_log *log, uint16_t api);
const char *hsr_kind_name(unsigned kind);
unsigned hsr_kind_count(void);
const char *hsr_direction_name(unsigned dir);
uint64_t hsr_event_end(const hsr_event *e); /* end time of copies, syncs and launches, else time_ns */

/* Launches (the reader has checked n_args against the record's size: args are safe to read). */
const char *hsr_kernel_name(const hsr_log *log, uint32_t id); /* NULL when the log does not name it */
/* What a launch ran: its kernel's name, else "(graph)", "(host function)" or "(unknown kernel)". */
const char *hsr_launch_name(const hsr_log *log, const hs_log_launch *l);
hs_log_launch_arg hsr_launch_arg(const hs_log_launch *l, unsigned i);
const char *hsr_kernel_ref_name(unsigned ref);  /* "host-stub", "module-function", "graph", "host-function" */
const char *hsr_arg_state_name(unsigned state); /* "live", "freed", "unknown" */

/* What a finding adds past its fixed fields (FINDING version 2, log_format.h): a runtime-error's
 * cause, a stream-race's two accesses, an uninitialized-read's ranges.  Strings are as the log
 * holds them (data: escape them for the output), cut at HS_LOG_PART_TEXT_MAX bytes. */
typedef struct hsr_finding_parts {
    bool has_cause, has_race, has_uninit;
    char cause_rule[HS_LOG_PART_TEXT_MAX + 1], cause[HS_LOG_PART_TEXT_MAX + 1];
    hs_log_race race; /* copied out: aligned */
    char mine_kernel[HS_LOG_PART_TEXT_MAX + 1], other_kernel[HS_LOG_PART_TEXT_MAX + 1];
    hs_log_uninit uninit;
    char last_write_kernel[HS_LOG_PART_TEXT_MAX + 1];
} hsr_finding_parts;

/* Reads f's parts into out; false when it has none (a version-1 record, or none that this reader
 * knows).  A part that does not fit its record, or whose strings run past it, is left out. */
bool hsr_finding_parts_of(const hs_log_finding *f, hsr_finding_parts *out);

#endif
