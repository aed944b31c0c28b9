#define _GNU_SOURCE
#include "findings/report.h"
#include "process/deep_stack.h"
#include "process/environment.h"
#include "process/own_fd.h"
#include "kernels/kernel_info.h"
#include "kernels/ledger.h"
#include "process/paths.h"
#include "rules/check.h"
#include "torch/blocks.h"
#include "torch/pystacks.h"
#include "runtime/frontend.h"
#include "shadow/regions.h"
#include "findings/report_races.h"
#include "findings/report_regions.h"
#include "process/stacks.h"
#include "process/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct {
    const hs_options *opt;
    pthread_mutex_t lock;
    _Atomic uint32_t owner;  /* the thread holding lock (0: none): a signal handler on it must not wait */
    FILE *text;              /* NULL until the first report */
    hs_own_fd text_file;     /* text's descriptor when it is report_path's file (own_fd.h) */
    char text_path[4096];    /* report_path's file this process writes */
    pid_t text_pid, json_pid;
    hs_own_fd json;          /* the findings file */
    char json_path[4096];    /* the findings file this process writes */
    long printed;
    bool environment_said;   /* the environment went out with the first report */
    atomic_bool cut_said;    /* "... could not be written" was said */
} rp = {.lock = PTHREAD_MUTEX_INITIALIZER, .text_file = {.fd = -1}, .json = {.fd = -1}};

const char *hs_action_name(hs_action a)
{
    static const char *const names[] = {"forwarded", "blocked", "aborted", "fallback"};
    return (unsigned)a < 4 ? names[a] : "?";
}

void hs_report_init(const hs_options *o) { rp.opt = o; }

void hs_report_after_fork(void)
{
    pthread_mutex_init(&rp.lock, NULL);
    atomic_store(&rp.owner, 0);
    atomic_store(&rp.cut_said, false);
    rp.printed = 0; /* the child's print_limit is its own */
    rp.environment_said = false;
    /* The child reopens its own files (text_pid/json_pid no longer match). */
}

/* ---- the report's lock ----
 * A signal can land while a thread holds it, and the handler may call exit(): the exit SUMMARY,
 * or a finding made on the way out, then runs on the thread that holds the lock, and waiting for
 * it would wait forever.  So the holder is known, and its own later turns do not wait. */

static bool held_here(void) { return atomic_load(&rp.owner) == hs_thread_id(); }

static void take_lock(void)
{
    pthread_mutex_lock(&rp.lock);
    atomic_store(&rp.owner, hs_thread_id());
}

static void drop_lock(void)
{
    atomic_store(&rp.owner, 0);
    pthread_mutex_unlock(&rp.lock);
}

/* Said once, straight to stderr: what a turn that could not take the lock did not write. */
static void say_cut(const char *what)
{
    if (!atomic_exchange(&rp.cut_said, true))
        hs_say("hipshadow: %s\n", what);
}

/* Creates report_path's file for this process as findings and logs are (paths.h): a new file,
 * O_EXCL|O_NOFOLLOW, mode 0600, a taken name numbered; a name that is not a regular file is
 * refused.  A link planted at a predictable name (%p) is never written through. */
static int open_text_file(const char *where)
{
    char path[4096];
    hs_expand_path(where, path, sizeof path, NULL);
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        hs_say("hipshadow: option 'report_path': '%s' is %s, not a file; reporting on stderr\n", path,
               S_ISDIR(st.st_mode) ? "a directory" : S_ISLNK(st.st_mode) ? "a symbolic link" : "a device or special file");
        return -1;
    }
    int fd = hs_create_unique(path, O_WRONLY | O_APPEND, rp.text_path, sizeof rp.text_path);
    if (fd < 0)
        hs_say("hipshadow: option 'report_path': cannot create '%s': %s; reporting on stderr\n", path, strerror(errno));
    else if (strcmp(path, rp.text_path))
        hs_say("hipshadow: option 'report_path': '%s' exists; this process writes its report to '%s'\n", path,
               rp.text_path);
    return fd;
}

/* Whether the text report is report_path's file and the program has closed its descriptor
 * (perhaps reusing the number for a file of its own): its FILE is then left as it is, never
 * written, flushed or closed. */
static bool text_file_lost(void)
{
    return rp.text && rp.text != hs_stderr_stream() && rp.text != stdout && !hs_own_fd_ok(&rp.text_file);
}

static FILE *text_out(void)
{
    pid_t pid = getpid();
    if (rp.text && rp.text_pid == pid) {
        if (!text_file_lost())
            return rp.text;
        hs_say("hipshadow: option 'report_path': the program closed the descriptor of '%s'; reporting on "
               "stderr from now on\n", rp.text_path);
        rp.text = hs_stderr_stream();
        return rp.text;
    }
    const char *where = rp.opt->report_path;
    if (!strcmp(where, "stderr") || !*where)
        rp.text = hs_stderr_stream();
    else if (!strcmp(where, "stdout"))
        rp.text = stdout;
    else {
        if (rp.text && rp.text != hs_stderr_stream() && rp.text != stdout)
            hs_own_fd_release(&rp.text_file); /* the parent's, inherited across fork: its FILE is left unused */
        int fd = hs_own_fd_take(&rp.text_file, open_text_file(where));
        rp.text = fd >= 0 ? fdopen(fd, "a") : NULL;
        if (!rp.text) {
            if (fd >= 0) {
                hs_say("hipshadow: option 'report_path': cannot open '%s': %s; reporting on stderr\n",
                       rp.text_path, strerror(errno));
                hs_own_fd_release(&rp.text_file);
            }
            rp.text = hs_stderr_stream();
        }
    }
    rp.text_pid = pid;
    return rp.text;
}

/* After writing to the text report: if the writes failed (a full disk, /dev/full), say so once,
 * with the reason, and go on with stderr.  True when the caller must write again to stderr. */
static bool text_failed(FILE *f)
{
    if (f == hs_stderr_stream() || (!ferror(f) && fflush(f) == 0))
        return false;
    int err = errno ? errno : EIO;
    hs_say("hipshadow: option 'report_path': cannot write to '%s': %s; reporting on stderr from now on\n",
           rp.text_path, strerror(err));
    rp.text = hs_stderr_stream();
    return true;
}

static const hs_side *side_of(const hs_event *e, hs_side_id id)
{
    return id == HS_SIDE_DST ? &e->facts->dst : id == HS_SIDE_SRC ? &e->facts->src : NULL;
}

static bool side_has_alloc(const hs_side *s) { return s && (s->where != HS_WHERE_NONE || s->runtime_known || s->unmapped); }

/* The side whose allocation a finding is about: the faulting side, else the device side. */
static const hs_side *subject_side(const hs_event *e)
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


const hs_side *hs_report_subject(const hs_event *e)
{
    const hs_side *s = subject_side(e);
    return side_has_alloc(s) ? s : NULL;
}

static const char *side_name(hs_side_id id) { return id == HS_SIDE_DST ? "destination" : "source"; }

static uint64_t largest_pow2_dividing(uint64_t x)
{
    return x ? x & (~x + 1) : 0;
}

static void print_human_size(FILE *f, uint64_t bytes)
{
    if (bytes >= (1ull << 30))
        fprintf(f, "%.1f GiB", bytes / 1073741824.0);
    else if (bytes >= (1ull << 20))
        fprintf(f, "%.1f MiB", bytes / 1048576.0);
    else if (bytes >= 1024)
        fprintf(f, "%.1f KiB", bytes / 1024.0);
    else
        fprintf(f, "%llu B", (unsigned long long)bytes);
}

static void print_alloc_line(FILE *f, const hs_side *s, const char *label)
{
    const hs_span *a = &s->alloc;
    fprintf(f, "  %s allocation #%llu: %s memory [0x%lx, 0x%lx), %llu bytes (", label,
            (unsigned long long)a->id, hs_mem_kind_name(a->kind), (unsigned long)a->base,
            (unsigned long)(a->base + a->size), (unsigned long long)a->size);
    print_human_size(f, a->size);
    fprintf(f, ")");
    if (s->runtime_known)
        fprintf(f, ", not allocated through a wrapped call (the runtime knows it)");
    else if (a->api < 0xffff)
        fprintf(f, ", from %s", hs_frontend_active.api_names[a->api]);
    char name[256];
    if (a->id && hs_alloc_name(a->id, name, sizeof name))
        fprintf(f, ", named '%s'", name);
    fprintf(f, ", device %d%s\n", a->device, s->where == HS_WHERE_FREED ? ", FREED" : "");
    uint64_t offset = s->ptr - a->base;
    if (s->ptr >= a->base) {
        if (offset)
            fprintf(f, "  the %s pointer is interior: base + %llu (0x%llx); offset %% 4096 = %llu, offset alignment %llu\n",
                    label, (unsigned long long)offset, (unsigned long long)offset,
                    (unsigned long long)(offset % 4096), (unsigned long long)largest_pow2_dividing(offset));
        else
            fprintf(f, "  the %s pointer is the allocation's base (offset 0)\n", label);
    }
}

static const char *memset_or_copy(const hs_call *c) { return c->op == HS_OP_MEMSET ? "memset" : "copy"; }

/* ---- GPU memory faults the runtime announced ---- */

static const struct { uint32_t bit; const char *name, *text; } fault_reasons[] = {
    {HS_FAULT_PAGE_NOT_PRESENT, "page-not-present", "page not present or supervisor privilege"},
    {HS_FAULT_READ_ONLY, "read-only", "write to a read-only page"},
    {HS_FAULT_NX, "nx", "execute on a page marked no-execute"},
    {HS_FAULT_HOST_ONLY, "host-only", "GPU access to a host-only page"},
    {HS_FAULT_DRAMECC, "dram-ecc", "DRAM ECC failure"},
    {HS_FAULT_IMPRECISE, "imprecise", "imprecise: the GPU could not give the exact address"},
    {HS_FAULT_SRAMECC, "sram-ecc", "SRAM ECC failure"},
    {HS_FAULT_HANG, "hang", "GPU reset after a hang"},
};

static const char *fault_where_name(int where)
{
    static const char *const names[] = {"unknown", "inside", "past-end", "before-start", "freed", "reserved-unmapped"};
    return (unsigned)where < 6 ? names[where] : "unknown";
}

static void print_gpu_fault(FILE *f, const hs_event *e)
{
    const hs_gpu_fault *g = e->gpu_fault;
    const hs_span *a = &g->alloc;
    fprintf(f, "  the GPU faulted on address 0x%lx (", (unsigned long)g->address);
    const char *sep = "";
    for (size_t i = 0; i < sizeof fault_reasons / sizeof *fault_reasons; i++)
        if (g->reasons & fault_reasons[i].bit) {
            fprintf(f, "%s%s", sep, fault_reasons[i].text);
            sep = "; ";
        }
    fprintf(f, "%s)\n", *sep ? "" : "no reason given");
    fprintf(f, "  the runtime announced it (%s) as it happened: a kernel already on the device made the access,\n"
               "  not a call; this is reported before the runtime carries on (it aborts, or later calls fail)\n",
            hs_frontend_active.api_names[e->call->api]);
    switch (g->where) {
    case HS_FAULT_INSIDE:
        fprintf(f, "  the address is inside allocation #%llu [0x%lx, 0x%lx) at offset %lld\n", (unsigned long long)a->id,
                (unsigned long)a->base, (unsigned long)(a->base + a->size), (long long)g->offset);
        break;
    case HS_FAULT_PAST_END:
        fprintf(f, "  the address is %llu bytes past the end of allocation #%llu [0x%lx, 0x%lx), %zu bytes: offset %lld\n",
                (unsigned long long)(g->offset - (int64_t)a->size), (unsigned long long)a->id, (unsigned long)a->base,
                (unsigned long)(a->base + a->size), a->size, (long long)g->offset);
        break;
    case HS_FAULT_BEFORE_START:
        fprintf(f, "  the address is %lld bytes before the start of allocation #%llu [0x%lx, 0x%lx): offset %lld\n",
                -(long long)g->offset, (unsigned long long)a->id, (unsigned long)a->base,
                (unsigned long)(a->base + a->size), (long long)g->offset);
        break;
    case HS_FAULT_FREED:
        fprintf(f, "  the address is inside allocation #%llu [0x%lx, 0x%lx) at offset %lld, FREED %.6f s before the fault\n",
                (unsigned long long)a->id, (unsigned long)a->base, (unsigned long)(a->base + a->size), (long long)g->offset,
                (e->time_ns - a->end_time_ns) / 1e9);
        break;
    case HS_FAULT_RESERVED_UNMAPPED:
        fprintf(f, "  the address is inside the virtual-memory reservation [0x%lx, 0x%lx) at offset %lld, where nothing is mapped\n",
                (unsigned long)a->base, (unsigned long)(a->base + a->size), (long long)g->offset);
        break;
    default:
        fprintf(f, "  the address is near no allocation hipshadow knows");
        if (g->has_below)
            fprintf(f, "; the nearest below is allocation #%llu [0x%lx, 0x%lx), which ends %llu bytes before it",
                    (unsigned long long)g->below.id, (unsigned long)g->below.base,
                    (unsigned long)(g->below.base + g->below.size),
                    (unsigned long long)(g->address - (g->below.base + g->below.size)));
        if (g->has_above)
            fprintf(f, "; the nearest above is allocation #%llu [0x%lx, 0x%lx), which starts %llu bytes after it",
                    (unsigned long long)g->above.id, (unsigned long)g->above.base,
                    (unsigned long)(g->above.base + g->above.size), (unsigned long long)(g->above.base - g->address));
        fprintf(f, "\n");
    }
}

/* ---- PyTorch caching-allocator blocks ---- */

static const char *const block_noun = "PyTorch caching-allocator block";

/* "segment [a, b) (size, stream, pool), allocation #N" */
static void print_block_segment(FILE *f, const hs_side *s)
{
    hs_block_segment seg;
    if (hs_block_segment_of(s->block.base, &seg)) {
        fprintf(f, "  the block lies in the allocator's %ssegment [0x%lx, 0x%lx) (", seg.expandable ? "expandable " : "",
                (unsigned long)seg.base, (unsigned long)(seg.base + seg.size));
        print_human_size(f, seg.size);
        fprintf(f, ", stream 0x%lx, pool (%llu,%llu)), allocation #%llu\n", (unsigned long)seg.stream,
                (unsigned long long)seg.pool[0], (unsigned long long)seg.pool[1], (unsigned long long)s->alloc.id);
    } else {
        fprintf(f, "  the block lies in allocation #%llu [0x%lx, 0x%lx), one of the allocator's segments\n",
                (unsigned long long)s->alloc.id, (unsigned long)s->alloc.base, (unsigned long)(s->alloc.base + s->alloc.size));
    }
}

static void print_block_freed(FILE *f, const hs_event *e, const hs_side *s, const char *who)
{
    const hs_span *b = &s->block;
    hs_block_info info;
    bool has_info = hs_block_info_of(b->id, &info);
    fprintf(f, "  %s 0x%lx lies in %s #%llu [0x%lx, 0x%lx) (%zu bytes asked for, offset %llu), which was freed:\n"
               "  its free completed %.6f s before this call", who, (unsigned long)s->ptr, block_noun,
            (unsigned long long)b->id, (unsigned long)b->base, (unsigned long)(b->base + b->size), b->size,
            (unsigned long long)(s->ptr - b->base), (e->time_ns - b->end_time_ns) / 1e9);
    if (has_info && info.free_requested_ns && info.free_requested_ns < b->end_time_ns)
        fprintf(f, " (the tensor let go of it %.6f s before)", (e->time_ns - info.free_requested_ns) / 1e9);
    fprintf(f, ", and the allocator has not handed it out again:\n  the memory is still the allocator's, so the runtime cannot see this\n");
    print_block_segment(f, s);
}

/* The block's own stacks: where it was handed out and where its tensor let go of it. */
static void print_block_stacks(FILE *f, const hs_side *s)
{
    const hs_span *b = &s->block;
    hs_block_info info = {0};
    hs_block_info_of(b->id, &info);
    fprintf(f, "Block #%llu (%s) handed out by thread T%u, %.6f s after start, on stream 0x%lx:\n",
            (unsigned long long)b->id, block_noun, b->thread, (b->time_ns - hs_start_ns()) / 1e9, (unsigned long)b->owner);
    bool any = false;
    if (b->stack) {
        hs_stack_print(b->stack, f);
        any = true;
    }
    if (info.alloc_pystack) {
        fprintf(f, "  Python:\n");
        hs_pystack_print(info.alloc_pystack, f);
        any = true;
    }
    if (!any)
        fprintf(f, "    <not recorded: python_stacks=alloc records the stacks of every block allocation and free>\n");
    if (s->block_state != HS_BLOCK_FREED)
        return;
    fprintf(f, "Block #%llu freed by thread T%u, %.6f s after start:\n", (unsigned long long)b->id, b->end_thread,
            ((info.free_requested_ns ? info.free_requested_ns : b->end_time_ns) - hs_start_ns()) / 1e9);
    any = false;
    if (b->end_stack) {
        hs_stack_print(b->end_stack, f);
        any = true;
    }
    if (info.free_pystack) {
        fprintf(f, "  Python:\n");
        hs_pystack_print(info.free_pystack, f);
        any = true;
    }
    if (!any)
        fprintf(f, "    <not recorded: python_stacks=alloc records the stacks of every block allocation and free>\n");
}

/* The side whose PyTorch block a finding is about, if any. */
static const hs_side *block_subject(const hs_event *e)
{
    const hs_side *s = side_of(e, e->finding->side);
    if (s && s->block_state != HS_BLOCK_NONE &&
        (e->finding->kind == HS_KIND_USE_AFTER_FREE || e->finding->kind == HS_KIND_KERNEL_USE_AFTER_FREE ||
         (e->finding->kind == HS_KIND_REGION_OVERRUN && !s->in_region)))
        return s;
    return NULL;
}

static void print_what(FILE *f, const hs_event *e)
{
    const hs_call *c = e->call;
    const hs_finding *fi = e->finding;
    const hs_side *s = side_of(e, fi->side);
    switch (fi->kind) {
    case HS_KIND_OUT_OF_BOUNDS:
    case HS_KIND_HOST_OUT_OF_BOUNDS:
        if (s && s->unmapped) {
            fprintf(f, "  the %s range [0x%lx, 0x%lx) lies in reserved address space [0x%lx, 0x%lx) that is not mapped\n"
                       "  (%llu bytes outside any map); the nearest map is allocation #%llu\n",
                    side_name(fi->side), (unsigned long)s->ptr, (unsigned long)(s->ptr + s->extent),
                    (unsigned long)s->reservation.base, (unsigned long)(s->reservation.base + s->reservation.size),
                    (unsigned long long)fi->overrun, (unsigned long long)s->alloc.id);
        } else if (s && side_has_alloc(s)) {
            fprintf(f, "  the %s range [0x%lx, 0x%lx) runs %llu bytes past the end of %s #%llu\n",
                    side_name(fi->side), (unsigned long)s->ptr, (unsigned long)(s->ptr + s->extent),
                    (unsigned long long)fi->overrun,
                    s->contiguous > s->alloc.size ? "the maps that follow allocation" : "allocation",
                    (unsigned long long)s->alloc.id);
            if (s->contiguous > s->alloc.size)
                fprintf(f, "  (mapped without a gap: [0x%lx, 0x%lx), %llu bytes)\n", (unsigned long)s->alloc.base,
                        (unsigned long)(s->alloc.base + s->contiguous), (unsigned long long)s->contiguous);
        } else if (s && s->host_checked) {
            fprintf(f, "  the %s range [0x%lx, 0x%lx) is %s at 0x%lx (mapping %s %s): the %s would %s it\n",
                    side_name(fi->side), (unsigned long)s->ptr, (unsigned long)(s->ptr + s->extent),
                    s->host.status == HS_HOST_UNMAPPED ? "not mapped" : "not accessible",
                    (unsigned long)s->host.bad_at, s->host.perms[0] ? s->host.perms : "----",
                    s->host.mapping[0] ? s->host.mapping : "(none)", memset_or_copy(c),
                    fi->side == HS_SIDE_DST ? "write" : "read");
        }
        break;
    case HS_KIND_USE_AFTER_FREE:
        if (s->region_freed) {
            char who[32];
            snprintf(who, sizeof who, "the %s pointer", side_name(fi->side));
            hs_report_region_freed(f, e, s, who);
            break;
        }
        if (s->block_state == HS_BLOCK_FREED) {
            char who[32];
            snprintf(who, sizeof who, "the %s pointer", side_name(fi->side));
            print_block_freed(f, e, s, who);
            break;
        }
        fprintf(f, "  the %s pointer 0x%lx lies in allocation #%llu, which was freed %.6f s before this call\n",
                side_name(fi->side), (unsigned long)s->ptr, (unsigned long long)s->alloc.id,
                (e->time_ns - s->alloc.end_time_ns) / 1e9);
        break;
    case HS_KIND_UNKNOWN_POINTER:
        fprintf(f, "  the %s pointer 0x%lx should be device memory for a %s %s, but no live or recently freed "
                   "allocation holds it and the runtime does not know it either\n",
                side_name(fi->side), (unsigned long)s->ptr, hs_dir_name(e->facts->dir), memset_or_copy(c));
        break;
    case HS_KIND_NULL_POINTER:
        fprintf(f, "  the %s pointer is NULL\n", side_name(fi->side));
        break;
    case HS_KIND_DIRECTION_MISMATCH:
        if (fi->expected_role == 3) {
            const hs_side *other = side_of(e, fi->side == HS_SIDE_DST ? HS_SIDE_SRC : HS_SIDE_DST);
            fprintf(f, "  the call says %s, but its %s 0x%lx is %s memory and its %s 0x%lx is in no device allocation\n"
                       "  (host memory): the direction is reversed, or the pointers are swapped\n",
                    hs_dir_name(e->facts->dir), side_name(fi->side), (unsigned long)s->ptr,
                    side_has_alloc(s) ? hs_mem_kind_name(s->alloc.kind) : "device",
                    side_name(fi->side == HS_SIDE_DST ? HS_SIDE_SRC : HS_SIDE_DST), (unsigned long)(other ? other->ptr : 0));
            break;
        }
        fprintf(f, "  the call says %s, but its %s 0x%lx is %s memory, not %s memory\n", hs_dir_name(e->facts->dir),
                side_name(fi->side), (unsigned long)s->ptr, side_has_alloc(s) ? hs_mem_kind_name(s->alloc.kind) : "host",
                fi->expected_role == 1 ? "device" : "host");
        break;
    case HS_KIND_INVALID_STREAM:
        fprintf(f, "  stream 0x%lx was %s\n", (unsigned long)c->stream,
                e->facts->stream_state == HS_STREAM_DESTROYED ? "destroyed before this call" : "never created");
        break;
    case HS_KIND_INVALID_FREE:
        if (e->facts->dst.where == HS_WHERE_FREED)
            fprintf(f, "  0x%lx was already freed (double free)\n", (unsigned long)c->free_ptr);
        else if (e->facts->dst.where == HS_WHERE_LIVE)
            fprintf(f, "  0x%lx is not the start of an allocation: it is base + %llu\n", (unsigned long)c->free_ptr,
                    (unsigned long long)(c->free_ptr - e->facts->dst.alloc.base));
        else
            fprintf(f, "  0x%lx was never allocated through a wrapped call\n", (unsigned long)c->free_ptr);
        break;
    case HS_KIND_RUNTIME_ERROR:
        fprintf(f, "  the runtime returned %s (%d)\n", hs_layer_of(c->api)->error_name(e->result), e->result);
        if (e->action == HS_ACTION_FALLBACK)
            fprintf(f, "  the copy is in bounds: hipshadow staged it through its own GPU kernel and a D2H from the\n"
                       "  staging buffer, and the program got success (fallback=%s)\n", rp.opt->fallback);
        if (e->n_earlier) {
            fprintf(f, "  before forwarding, hipshadow had found:");
            for (int i = 0; i < e->n_earlier; i++)
                fprintf(f, " %s", hs_kind_name(e->earlier[i].kind));
            fprintf(f, "\n");
        } else if (c->op == HS_OP_COPY || c->op == HS_OP_MEMSET) {
            fprintf(f, "  the checks before forwarding found nothing wrong with the ranges\n");
        }
        if (e->cause)
            fprintf(f, "  cause: %s (rule %s)\n", e->cause, e->cause_rule);
        break;
    case HS_KIND_LEAK:
        fprintf(f, "  allocation #%llu is still live at exit\n", (unsigned long long)e->facts->dst.alloc.id);
        break;
    case HS_KIND_REGION_OVERRUN: {
        char name[256];
        const hs_span *r = &s->region;
        if (!s->in_region && s->block_state == HS_BLOCK_LIVE) {
            const hs_span *b = &s->block;
            fprintf(f, "  the %s range [0x%lx, 0x%lx) runs %llu bytes past the end of %s #%llu [0x%lx, 0x%lx)\n"
                       "  (%zu bytes asked for; the range starts at offset %llu of the block) but stays inside the\n"
                       "  allocator's memory: the runtime cannot see this\n",
                    side_name(fi->side), (unsigned long)s->ptr, (unsigned long)(s->ptr + s->extent),
                    (unsigned long long)fi->overrun, block_noun, (unsigned long long)b->id, (unsigned long)b->base,
                    (unsigned long)(b->base + b->size), b->size, (unsigned long long)(s->ptr - b->base));
            print_block_segment(f, s);
            break;
        }
        fprintf(f, "  the %s range [0x%lx, 0x%lx) runs %llu bytes past the end of region %s "
                   "(pool offset %llu, %zu bytes) but stays inside allocation #%llu: the runtime cannot see this\n",
                side_name(fi->side), (unsigned long)s->ptr, (unsigned long)(s->ptr + s->extent),
                (unsigned long long)fi->overrun, hs_report_region_label(r, name, sizeof name),
                (unsigned long long)(r->base - s->alloc.base), r->size, (unsigned long long)s->alloc.id);
        break;
    }
    case HS_KIND_REGION_PERMISSION:
        hs_report_region_permission(f, s, side_name(fi->side), fi->side == HS_SIDE_DST);
        break;
    case HS_KIND_ASYNC_OVERLAP:
    case HS_KIND_FREE_WHILE_PENDING: {
        const hs_conflict *k = &e->facts->conflict;
        if (fi->kind == HS_KIND_ASYNC_OVERLAP)
            fprintf(f, "  this async %s %s host memory [0x%lx, 0x%lx) that a pending %s (%s, %llu bytes) on stream 0x%lx\n"
                       "  also %s, and nothing orders the two: no synchronisation, no event between the streams\n",
                    memset_or_copy(c), fi->side == HS_SIDE_DST ? "writes" : "reads", (unsigned long)k->op.host_lo,
                    (unsigned long)k->op.host_hi, hs_frontend_active.api_names[k->op.api], hs_dir_name(k->op.dir),
                    (unsigned long long)k->op.bytes, (unsigned long)k->stream, k->op.host_write ? "writes" : "reads");
        else
            fprintf(f, "  allocation #%llu is freed while a pending %s (%s, %llu bytes) on stream 0x%lx still uses it,\n"
                       "  and nothing orders that operation before the free\n",
                    (unsigned long long)e->facts->dst.alloc.id, hs_frontend_active.api_names[k->op.api], hs_dir_name(k->op.dir),
                    (unsigned long long)k->op.bytes, (unsigned long)k->stream);
        fprintf(f, "  the other operation was enqueued by thread T%u, %.6f s before this call\n", k->op.thread,
                (e->time_ns - k->op.time_ns) / 1e9);
        break;
    }
    case HS_KIND_CAPTURE_VIOLATION:
        fprintf(f, "  stream 0x%lx is being captured into a graph: a synchronous %s is not allowed during capture\n",
                (unsigned long)e->facts->capturing_stream, c->op == HS_OP_SYNC ? "synchronisation" : memset_or_copy(c));
        break;
    case HS_KIND_DEVICE_FAULT:
        if (e->gpu_fault) {
            print_gpu_fault(f, e);
            break;
        }
        fprintf(f, "  the runtime returned %s (%d): a fault of asynchronous work already on the device,\n"
                   "  not of this call", hs_layer_of(c->api)->error_name(e->result), e->result);
        if (e->suspects && e->suspects->serialized)
            fprintf(f, " (serialize=1: the launch below, waited for right after it was made)\n");
        else if (e->n_earlier)
            fprintf(f, "; this call's own checks found:%s%s\n", e->n_earlier ? " " : "", hs_kind_name(e->earlier[0].kind));
        else
            fprintf(f, "; this call's own arguments were checked and are clean\n");
        break;
    case HS_KIND_KERNEL_OUT_OF_BOUNDS_WRITE: {
        const hs_side *d = &e->facts->dst;
        uint64_t first = d->ptr - (d->alloc.base + d->alloc.size);
        fprintf(f, "  bytes %llu..%llu past the end of allocation #%llu were overwritten (its redzone of %u bytes,\n"
                   "  checked %s %s): a kernel wrote past the end; the launches that\n"
                   "  had a pointer into it are below\n",
                (unsigned long long)first, (unsigned long long)(first + d->extent - 1), (unsigned long long)d->alloc.id,
                d->alloc.redzone, c->op == HS_OP_FREE ? "at its free" : c->op == HS_OP_OTHER ? "at exit"
                                                              : "at this synchronisation point",
                e->facts->redzone_by_kernel ? "by hipshadow's kernel" : "by reading it back");
        break;
    }
    case HS_KIND_KERNEL_USE_AFTER_FREE: {
        const hs_facts *fa = e->facts;
        if (fa->dst.region_freed) {
            const hs_kernel_info *k = hs_kernel_info_of(c);
            char who[64] = "an argument";
            for (int i = 0; i < fa->n_args; i++)
                if (fa->args[i].value == fa->dst.ptr)
                    snprintf(who, sizeof who, "argument %u =", fa->args[i].index);
            fprintf(f, "  kernel '%s' is launched with a pointer into a freed region:\n", k && k->name ? k->name : "?");
            hs_report_region_freed(f, e, &fa->dst, who);
            break;
        }
        if (fa->dst.block_state == HS_BLOCK_FREED) {
            const hs_kernel_info *k = hs_kernel_info_of(c);
            char who[64];
            for (int i = 0; i < fa->n_args; i++)
                if (fa->args[i].value == fa->dst.ptr)
                    snprintf(who, sizeof who, "argument %u =", fa->args[i].index);
            fprintf(f, "  kernel '%s' is launched with a pointer into a freed %s:\n", k && k->name ? k->name : "?",
                    block_noun);
            print_block_freed(f, e, &fa->dst, who);
            break;
        }
        for (int i = 0; i < fa->n_args; i++)
            if (fa->args[i].state == HS_ARG_FREED) {
                const hs_kernel_info *k = hs_kernel_info_of(c);
                fprintf(f, "  kernel '%s' is launched with a pointer into freed memory:\n", k && k->name ? k->name : "?");
                fprintf(f, "  argument %u = 0x%lx (%s) points into allocation #%llu + %lld, freed %.6f s before this launch\n",
                        fa->args[i].index, (unsigned long)fa->args[i].value,
                        fa->args[i].how == HS_ARG_EXACT ? "a pointer parameter" : "found by scanning the arguments",
                        (unsigned long long)fa->args[i].alloc_id, (long long)fa->args[i].offset,
                        (e->time_ns - fa->dst.alloc.end_time_ns) / 1e9);
                break;
            }
        break;
    }
    case HS_KIND_STREAM_RACE:
    case HS_KIND_UNINITIALIZED_READ:
        hs_report_access_text(f, e);
        break;
    case HS_KIND_PAGEABLE_ASYNC:
        fprintf(f, "  the destination 0x%lx is pageable host memory: the runtime stages the copy and it becomes\n"
                   "  synchronous; pin the buffer (hipHostMalloc/cudaHostAlloc, or register it) for a truly\n"
                   "  asynchronous copy\n"
                   "  (said once per call site)\n", (unsigned long)c->dst);
        break;
    default:
        break;
    }
}

static const char *arg_state_name(int state)
{
    return state == HS_ARG_LIVE ? "live" : state == HS_ARG_FREED ? "freed" : "unknown";
}

static void print_launch_args(FILE *f, const hs_launch *l)
{
    for (int a = 0; a < l->n_args; a++) {
        const hs_launch_arg *x = &l->args[a];
        if (x->state == HS_ARG_UNKNOWN)
            fprintf(f, "      arg %u = 0x%lx: in no known allocation (%s)\n", x->index, (unsigned long)x->value,
                    x->how == HS_ARG_EXACT ? "a pointer parameter" : "scanned");
        else
            fprintf(f, "      arg %u = 0x%lx: allocation #%llu + %lld, %s%s%s\n", x->index, (unsigned long)x->value,
                    (unsigned long long)x->alloc_id, (long long)x->offset, x->state == HS_ARG_FREED ? "FREED" : "live",
                    x->block_state == HS_BLOCK_FREED ? ", in a FREED PyTorch block" : "",
                    x->how == HS_ARG_EXACT ? "" : " (scanned)");
    }
}

/* A device fault's suspects: the launches not known to have completed, newest first. */
static void print_suspects(FILE *f, const hs_suspects *s, uint64_t now_ns)
{
    if (!s->n) {
        fprintf(f, "Suspects: no launch is pending that hipshadow saw (launches it does not wrap, or all completed)\n");
        return;
    }
    fprintf(f, "Suspects (%s", s->serialized ? "the launch that faulted"
                                    : s->users ? "launches with a pointer into the allocation, newest first"
                                               : "launches not yet known to have completed, newest first");
    if (s->n_near)
        fprintf(f, "; the first %d had a pointer into or next to the faulting address", s->n_near);
    fprintf(f, "):\n");
    for (int i = 0; i < s->n; i++) {
        const hs_launch *l = &s->launch[i];
        char where[512];
        hs_frame_describe(l->caller, where, sizeof where);
        fprintf(f, "  #%d kernel '%s' (%s) on stream 0x%lx, grid (%u,%u,%u) block (%u,%u,%u), %.6f s before, by thread T%u\n",
                i, l->name ? l->name : "?", hs_frontend_active.api_names[l->api], (unsigned long)l->stream, l->grid[0],
                l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], (now_ns - l->time_ns) / 1e9, l->thread);
        print_launch_args(f, l);
        if (l->stack) {
            fprintf(f, "    launched at:\n");
            hs_stack_print(l->stack, f);
        } else {
            fprintf(f, "    launched from %s (launch_stacks=1 keeps the whole stack)\n", where);
        }
    }
}

/* The environment behind GPU memory behaviour, once, with the first report; a variable known to
 * cause faults when misused, beside every device-fault (the reader's first suspect then). */
static void print_environment(FILE *f, const hs_finding *fi)
{
    const char *all = hs_environment_text();
    const char *risky = hs_environment_fault_prone();
    if (hs_finding_is_device_fault(fi) && *risky) {
        fprintf(f, "Set for this process, and known to cause device faults when misused:\n");
        for (const char *l = risky; *l;) {
            const char *end = strchr(l, '\n');
            fprintf(f, "    %.*s\n", (int)(end - l), l);
            l = end + 1;
        }
    }
    if (rp.environment_said || !*all)
        return;
    rp.environment_said = true;
    fprintf(f, "Environment (variables that change GPU memory behaviour, as set for this process):\n");
    for (const char *l = all; *l;) {
        const char *end = strchr(l, '\n');
        fprintf(f, "    %.*s\n", (int)(end - l), l);
        l = end + 1;
    }
}

static void print_text(FILE *f, const hs_event *e)
{
    const hs_call *c = e->call;
    const hs_finding *fi = e->finding;
    const char *api = hs_frontend_active.api_names[c->api];
    fprintf(f, "=================================================================\n");
    fprintf(f, "==%d==%s: hipshadow: %s on %s", (int)getpid(),
            fi->severity == HS_SEV_ERROR ? "ERROR" : fi->severity == HS_SEV_WARNING ? "WARNING" : "INFO",
            hs_kind_name(fi->kind), api);
    if (c->op == HS_OP_COPY)
        fprintf(f, " (%s, %zu bytes)\n", hs_dir_name(e->facts->dir), c->bytes);
    else if (c->op == HS_OP_MEMSET)
        fprintf(f, " (memset, %zu bytes)\n", c->bytes);
    else
        fprintf(f, "\n");
    if (c->op == HS_OP_COPY)
        fprintf(f, "  copy of %zu bytes from 0x%lx to 0x%lx%s\n", c->bytes, (unsigned long)c->src,
                (unsigned long)c->dst, c->dir == HS_DIR_DEFAULT ? " (hipMemcpyDefault: direction taken from the shadow map)" : "");
    else if (c->op == HS_OP_MEMSET)
        fprintf(f, "  memset of %zu bytes at 0x%lx\n", c->bytes, (unsigned long)c->dst);
    print_what(f, e);
    if (e->facts && (c->op == HS_OP_COPY || c->op == HS_OP_MEMSET || fi->kind == HS_KIND_INVALID_FREE || fi->kind == HS_KIND_LEAK)) {
        const hs_side *sides[2] = {&e->facts->src, &e->facts->dst};
        for (int i = 0; i < 2; i++)
            if (side_has_alloc(sides[i]) && sides[i]->ptr) {
                print_alloc_line(f, sides[i], c->op == HS_OP_COPY ? (i ? "destination" : "source") : "the");
                hs_report_region_line(f, sides[i], c->op == HS_OP_COPY ? (i ? "destination" : "source") : "the");
            }
    }
    if (c->has_stream || c->op == HS_OP_COPY || c->op == HS_OP_MEMSET)
        fprintf(f, "  stream 0x%lx%s;", (unsigned long)c->stream, c->stream ? "" : " (null stream)");
    else
        fprintf(f, " ");
    if (e->gpu_fault)
        fprintf(f, " reported on the runtime's event thread T%u (mode=%s)\n", e->thread, hs_mode_name(rp.opt->mode));
    else
        fprintf(f, " action: %s (mode=%s)\n", hs_action_name(e->action), hs_mode_name(rp.opt->mode));
    if (fi->kind != HS_KIND_LEAK && !e->gpu_fault) {
        fprintf(f, "Call stack (thread T%u):\n", e->thread);
        hs_stack_print(e->stack, f);
        if (e->pystack) {
            fprintf(f, "Python stack (thread T%u, innermost first):\n", e->thread);
            hs_pystack_print(e->pystack, f);
        }
    }
    const hs_side *sub = subject_side(e);
    bool stacks_already_shown = fi->kind == HS_KIND_RUNTIME_ERROR && e->n_earlier > 0;
    if (side_has_alloc(sub) && !sub->runtime_known && !stacks_already_shown) {
        fprintf(f, "Allocation #%llu made by thread T%u, %.6f s after start:\n", (unsigned long long)sub->alloc.id,
                sub->alloc.thread, (sub->alloc.time_ns - hs_start_ns()) / 1e9);
        hs_stack_print(sub->alloc.stack, f);
        if (sub->where == HS_WHERE_FREED) {
            fprintf(f, "Freed by thread T%u, %.6f s after start:\n", sub->alloc.end_thread,
                    (sub->alloc.end_time_ns - hs_start_ns()) / 1e9);
            hs_stack_print(sub->alloc.end_stack, f);
        }
    }
    if (!stacks_already_shown)
        hs_report_region_stacks(f, sub);
    const hs_side *bs = block_subject(e);
    if (bs)
        print_block_stacks(f, bs);
    if (fi->kind == HS_KIND_INVALID_STREAM && e->facts->stream_state == HS_STREAM_DESTROYED && !stacks_already_shown) {
        fprintf(f, "Stream created by thread T%u:\n", e->facts->stream_info.thread);
        hs_stack_print(e->facts->stream_info.stack, f);
        fprintf(f, "Stream destroyed by thread T%u:\n", e->facts->stream_info.end_thread);
        hs_stack_print(e->facts->stream_info.end_stack, f);
    }
    if (e->suspects)
        print_suspects(f, e->suspects, e->time_ns);
    print_environment(f, fi);
    fprintf(f, "SUMMARY: hipshadow: %s %s", hs_kind_name(fi->kind), api);
    if (e->gpu_fault)
        fprintf(f, " address=0x%lx where=%s", (unsigned long)e->gpu_fault->address, fault_where_name(e->gpu_fault->where));
    if (side_has_alloc(sub))
        fprintf(f, " allocation #%llu%+lld", (unsigned long long)sub->alloc.id, (long long)(sub->ptr - sub->alloc.base));
    if (bs)
        fprintf(f, " block #%llu%+lld", (unsigned long long)bs->block.id, (long long)(bs->ptr - bs->block.base));
    if (c->op == HS_OP_COPY || c->op == HS_OP_MEMSET)
        fprintf(f, " bytes=%zu", c->bytes);
    if (fi->overrun)
        fprintf(f, " overrun=%llu", (unsigned long long)fi->overrun);
    fprintf(f, "\n=================================================================\n");
}

/* A bounded string builder for one JSON line: no FILE*, one write() per finding. */
typedef struct jbuf { char data[16384]; size_t n; } jbuf;

#define jb(b, ...) hs_appendf((b)->data, sizeof (b)->data, &(b)->n, __VA_ARGS__)

static void jb_string(jbuf *b, const char *s)
{
    jb(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            jb(b, "\\%c", ch);
        else if (ch < 0x20)
            jb(b, "\\u%04x", ch);
        else
            jb(b, "%c", ch);
    }
    jb(b, "\"");
}

static void json_span(jbuf *b, const char *key, bool has, const hs_span *a)
{
    if (has)
        jb(b, ",\"%s\":{\"id\":%llu,\"base\":\"0x%lx\",\"size\":%zu}", key, (unsigned long long)a->id,
           (unsigned long)a->base, a->size);
    else
        jb(b, ",\"%s\":null", key);
}

/* "fault": {"address", "reasons": [..], "where", "alloc": {"id", "base", "size", "offset"}, "below", "above"} */
static void json_gpu_fault(jbuf *b, const hs_gpu_fault *g)
{
    jb(b, ",\"fault\":{\"address\":\"0x%lx\",\"reasons\":[", (unsigned long)g->address);
    const char *sep = "";
    for (size_t i = 0; i < sizeof fault_reasons / sizeof *fault_reasons; i++)
        if (g->reasons & fault_reasons[i].bit) {
            jb(b, "%s\"%s\"", sep, fault_reasons[i].name);
            sep = ",";
        }
    jb(b, "],\"where\":\"%s\",\"alloc\":", fault_where_name(g->where));
    if (g->where == HS_FAULT_UNKNOWN)
        jb(b, "null");
    else
        jb(b, "{\"id\":%llu,\"base\":\"0x%lx\",\"size\":%zu,\"offset\":%lld}",
           (unsigned long long)(g->where == HS_FAULT_RESERVED_UNMAPPED ? 0 : g->alloc.id),
           (unsigned long)g->alloc.base, g->alloc.size, (long long)g->offset);
    json_span(b, "below", g->has_below, &g->below);
    json_span(b, "above", g->has_above, &g->above);
    jb(b, "}");
}

/* "key": ["file:line in function", ...], innermost first ([] when none). */
static void json_python_stack(jbuf *b, const char *key, uint32_t id)
{
    const char *texts[HS_PYSTACK_MAX_FRAMES];
    int n = id ? hs_pystack_frames(id, texts, HS_PYSTACK_MAX_FRAMES) : 0;
    jb(b, ",\"%s\":[", key);
    for (int i = 0; i < n; i++) {
        jb(b, i ? "," : "");
        jb_string(b, texts[i]);
    }
    jb(b, "]");
}

/* "block": the PyTorch caching-allocator block a finding is about, or null. */
static void json_block(jbuf *b, const hs_side *s)
{
    if (!s) {
        jb(b, ",\"block\":null");
        return;
    }
    const hs_span *k = &s->block;
    hs_block_info info = {0};
    hs_block_info_of(k->id, &info);
    jb(b, ",\"block\":{\"id\":%llu,\"base\":\"0x%lx\",\"size\":%zu,\"offset\":%lld,\"state\":\"%s\",\"stream\":\"0x%lx\","
          "\"pool\":[%llu,%llu],\"segment\":",
       (unsigned long long)k->id, (unsigned long)k->base, k->size, (long long)(s->ptr - k->base),
       s->block_state == HS_BLOCK_FREED ? "freed" : "live", (unsigned long)k->owner, (unsigned long long)info.pool[0],
       (unsigned long long)info.pool[1]);
    hs_block_segment seg;
    if (hs_block_segment_of(k->base, &seg))
        jb(b, "{\"base\":\"0x%lx\",\"size\":%zu,\"expandable\":%s}", (unsigned long)seg.base, seg.size,
           seg.expandable ? "true" : "false");
    else
        jb(b, "null");
    json_python_stack(b, "alloc_python_stack", info.alloc_pystack);
    json_python_stack(b, "free_python_stack", info.free_pystack);
    jb(b, "}");
}

/* This process's findings file, created as logs are (paths.h): a new file, O_EXCL|O_NOFOLLOW,
 * mode 0600; a taken name gets "-1", "-2", ... before its extension.  A name that is not a
 * regular file (a directory, a device, a symbolic link) is refused with a message. */
static int open_findings(void)
{
    char path[4096];
    hs_expand_path(rp.opt->findings, path, sizeof path, NULL);
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        hs_say("hipshadow: option 'findings': '%s' is %s, not a file; findings go to the text report only\n",
               path, S_ISDIR(st.st_mode) ? "a directory" : S_ISLNK(st.st_mode) ? "a symbolic link" : "a device or special file");
        return -1;
    }
    int fd = hs_create_unique(path, O_WRONLY | O_APPEND, rp.json_path, sizeof rp.json_path);
    if (fd < 0)
        hs_say("hipshadow: option 'findings': cannot create '%s': %s; findings go to the text report only\n",
               path, strerror(errno));
    else if (strcmp(path, rp.json_path))
        hs_say("hipshadow: option 'findings': '%s' exists; this process writes its findings to '%s'\n", path,
               rp.json_path);
    return fd;
}

/* One finding's line into the findings file, whole or not at all: a short write (a full disk)
 * is cut back to where the line began, so every line of the file is a finding that parses. */
static void write_line(const char *line, size_t len)
{
    struct stat st;
    off_t start = fstat(rp.json.fd, &st) == 0 ? st.st_size : -1; /* O_APPEND, and this process's own file */
    errno = 0;
    ssize_t w = hs_write_all(rp.json.fd, line, len);
    if (w == (ssize_t)len)
        return;
    int err = errno ? errno : EIO;
    char what[128];
    if (w <= 0)
        snprintf(what, sizeof what, "nothing of it was written");
    else if (start >= 0 && ftruncate(rp.json.fd, start) == 0)
        snprintf(what, sizeof what, "the %zd bytes of it that were written are removed", w);
    else
        snprintf(what, sizeof what, "its last line is cut short (%zd of %zu bytes)", w, len);
    hs_say("hipshadow: option 'findings': cannot write a finding to '%s': %s; %s, and findings go to the text "
           "report only from now on\n", rp.json_path, strerror(err), what);
    hs_own_fd_release(&rp.json);
}

static void write_json(const hs_event *e)
{
    const hs_call *c = e->call;
    const hs_finding *fi = e->finding;
    jbuf *b = &(jbuf){.n = 0};
    jb(b, "{\"kind\":\"%s\",\"severity\":\"%s\",\"api\":\"%s\",\"action\":\"%s\",\"direction\":",
       hs_kind_name(fi->kind), hs_severity_name(fi->severity), hs_frontend_active.api_names[c->api],
       hs_action_name(e->action));
    if (c->op == HS_OP_COPY)
        jb(b, "\"%s\"", hs_dir_name(e->facts->dir));
    else
        jb(b, "null");
    jb(b, ",\"dst\":\"0x%lx\",\"src\":\"0x%lx\",\"bytes\":%zu,\"alloc\":", (unsigned long)c->dst,
       (unsigned long)c->src, c->bytes);
    const hs_side *sub = subject_side(e);
    if (side_has_alloc(sub))
        jb(b, "{\"base\":\"0x%lx\",\"size\":%zu,\"offset\":%lld,\"id\":%llu}", (unsigned long)sub->alloc.base,
           sub->alloc.size, (long long)(sub->ptr - sub->alloc.base), (unsigned long long)sub->alloc.id);
    else
        jb(b, "null");
    if (fi->overrun || fi->kind == HS_KIND_OUT_OF_BOUNDS || fi->kind == HS_KIND_HOST_OUT_OF_BOUNDS ||
        fi->kind == HS_KIND_REGION_OVERRUN)
        jb(b, ",\"overrun\":%llu", (unsigned long long)fi->overrun);
    else
        jb(b, ",\"overrun\":null");
    if (side_has_alloc(sub))
        jb(b, ",\"device\":%d", sub->alloc.device);
    else
        jb(b, ",\"device\":null");
    jb(b, ",\"stream\":\"0x%lx\",\"stack\":[", (unsigned long)c->stream);
    uintptr_t frames[HS_STACK_MAX_FRAMES];
    int n = hs_stack_frames(e->stack, frames, HS_STACK_MAX_FRAMES);
    for (int i = 0; i < n; i++) {
        char where[512];
        hs_frame_describe(frames[i], where, sizeof where);
        jb(b, i ? "," : "");
        jb_string(b, where);
    }
    jb(b, "]");
    if (e->suspects || fi->kind == HS_KIND_KERNEL_USE_AFTER_FREE) {
        jb(b, ",\"kernels\":[");
        int n = e->suspects ? e->suspects->n : 1;
        for (int i = 0; i < n; i++) {
            const hs_launch *l = e->suspects ? &e->suspects->launch[i] : NULL;
            const hs_launch_arg *args = l ? l->args : e->facts->args;
            int n_args = l ? l->n_args : e->facts->n_args;
            jb(b, "%s{\"name\":", i ? "," : "");
            const hs_kernel_info *k = l ? NULL : hs_kernel_info_of(c);
            const char *name = l ? l->name : k ? k->name : NULL;
            if (name)
                jb_string(b, name);
            else
                jb(b, "null");
            jb(b, ",\"stream\":\"0x%lx\",\"args\":[", (unsigned long)(l ? l->stream : c->stream));
            for (int a = 0; a < n_args; a++) {
                const hs_launch_arg *x = &args[a];
                jb(b, "%s{\"index\":%u,\"alloc\":", a ? "," : "", x->index);
                if (x->state == HS_ARG_UNKNOWN)
                    jb(b, "null");
                else
                    jb(b, "{\"id\":%llu,\"offset\":%lld}", (unsigned long long)x->alloc_id, (long long)x->offset);
                jb(b, ",\"state\":\"%s\",\"how\":\"%s\"}", arg_state_name(x->state),
                   x->how == HS_ARG_EXACT ? "exact" : "scanned");
            }
            jb(b, "]}");
        }
        jb(b, "]");
    }
    if (e->gpu_fault)
        json_gpu_fault(b, e->gpu_fault);
    if (e->pystack)
        json_python_stack(b, "python_stack", e->pystack);
    if (block_subject(e))
        json_block(b, block_subject(e));
    if (e->cause) {
        jb(b, ",\"cause\":");
        jb_string(b, e->cause);
        jb(b, ",\"cause_rule\":");
        jb_string(b, e->cause_rule);
    }
    hs_report_access_json(b->data, sizeof b->data, &b->n, e);
    jb(b, ",\"thread\":%u,\"time_ns\":%llu}\n", e->thread, (unsigned long long)e->time_ns);

    pid_t pid = getpid();
    if (rp.json_pid != pid) {
        hs_own_fd_release(&rp.json); /* the parent's, inherited across fork: this process writes its own */
        hs_own_fd_take(&rp.json, open_findings());
        rp.json_pid = pid;
    }
    if (rp.json.fd >= 0 && !hs_own_fd_ok(&rp.json)) {
        hs_say("hipshadow: option 'findings': the program closed the descriptor of '%s'; findings go to the "
               "text report only from now on\n", rp.json_path);
        rp.json = HS_OWN_FD_NONE; /* its number may be the program's file now: never written or closed */
    }
    if (rp.json.fd >= 0)
        write_line(b->data, b->n);
}

/* Each entry point below runs its body through hs_run_deep: a report's path buffers and stdio
 * need more stack than a thread made with a small one has left (deep_stack.h). */
static void report_finding(void *arg)
{
    const hs_event *e = arg;
    if (held_here()) { /* a signal handler on this thread, while it was writing a report */
        say_cut("a finding made while this thread was interrupted in the middle of writing a report (a signal "
                "handler) is counted in the SUMMARY, but neither printed nor written to findings=");
        return;
    }
    take_lock();
    FILE *f = text_out();
    if (rp.printed < rp.opt->print_limit) {
        print_text(f, e);
        if (text_failed(f))
            print_text(hs_stderr_stream(), e);
        fflush(f);
    } else if (rp.printed == rp.opt->print_limit) {
        fprintf(f, "hipshadow: print_limit=%ld reached: later findings are counted%s but not printed\n",
                rp.opt->print_limit, rp.opt->findings[0] ? " and written to findings=" : "");
        fflush(f);
    }
    rp.printed++;
    if (rp.opt->findings[0])
        write_json(e);
    drop_lock();
}

/* The SUMMARY line, formatted into buf (no stdio: it may go out with one write, from any state). */
static size_t format_summary(char *buf, size_t cap, const uint64_t counts[HS_KIND_COUNT], uint64_t errors,
                             uint64_t calls_checked)
{
    size_t n = 0;
    uint64_t total = 0;
    for (int k = 0; k < HS_KIND_COUNT; k++)
        total += counts[k];
    hs_appendf(buf, cap, &n, "SUMMARY: hipshadow: %llu finding%s (%llu error%s)", (unsigned long long)total,
               total == 1 ? "" : "s", (unsigned long long)errors, errors == 1 ? "" : "s");
    const char *sep = ": ";
    for (int k = 0; k < HS_KIND_COUNT; k++)
        if (counts[k]) {
            hs_appendf(buf, cap, &n, "%s%s=%llu", sep, hs_kind_name((hs_kind)k), (unsigned long long)counts[k]);
            sep = ", ";
        }
    hs_appendf(buf, cap, &n, " in %llu checked calls\n", (unsigned long long)calls_checked);
    return n;
}

void hs_report_finding(const hs_event *e) { hs_run_deep(report_finding, (void *)e); }

typedef struct summary_args { const char *line; size_t len; } summary_args;

/* How long the SUMMARY waits for another thread's report to end (it is being written, so it
 * ends; a thread stopped for good while writing one must not stop the exit). */
enum { SUMMARY_WAIT_S = 5 };

static void report_summary(void *arg)
{
    const summary_args *a = arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += SUMMARY_WAIT_S;
    if (pthread_mutex_timedlock(&rp.lock, &until) != 0) {
        hs_write_all(2, "\n", 1);
        if (!atomic_exchange(&rp.cut_said, true))
            hs_say("hipshadow: another thread held the report for %d s at exit: the SUMMARY goes straight to "
                   "stderr\n", SUMMARY_WAIT_S);
        hs_write_all(2, a->line, a->len);
        return;
    }
    atomic_store(&rp.owner, hs_thread_id());
    FILE *f = text_out();
    fwrite(a->line, 1, a->len, f);
    if (text_failed(f))
        fwrite(a->line, 1, a->len, hs_stderr_stream());
    fflush(f);
    if (f != hs_stderr_stream())
        fflush(hs_stderr_stream());
    drop_lock();
}

void hs_report_summary(const uint64_t counts[HS_KIND_COUNT], uint64_t errors, uint64_t calls_checked)
{
    char line[2048];
    summary_args a = {line, format_summary(line, sizeof line, counts, errors, calls_checked)};
    if (held_here()) { /* exit() from a signal handler that interrupted this thread's report */
        hs_write_all(2, "\n", 1); /* the report may have stopped in the middle of a line */
        say_cut("exit came while this thread was writing a report (exit() from a signal handler): that report "
                "is cut short, and the SUMMARY goes straight to stderr");
        hs_write_all(2, line, a.len);
        return;
    }
    hs_run_deep(report_summary, &a); /* report_path's file may be opened now: path buffers */
}

static void report_note(void *arg)
{
    if (held_here()) {
        hs_say("hipshadow: %s\n", (const char *)arg);
        return;
    }
    take_lock();
    FILE *f = text_out();
    fprintf(f, "hipshadow: %s\n", (const char *)arg);
    fflush(f);
    drop_lock();
}

void hs_report_note(const char *text) { hs_run_deep(report_note, (void *)text); }

void hs_report_flush(void)
{
    if (held_here()) /* the stream is half-way through a report of this thread's */
        return;
    if (rp.text && !text_file_lost())
        fflush(rp.text);
    if (hs_own_fd_ok(&rp.json))
        fsync(rp.json.fd);
}
