#include "findings/report_json.h"
#include "findings/report_races.h"
#include "findings/report_sides.h"
#include "kernels/fault_report.h"
#include "process/own_fd.h"
#include "process/paths.h"
#include "process/print.h"
#include "process/stacks.h"
#include "rules/check.h"
#include "runtime/frontend.h"
#include "torch/block_report.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
    hs_own_fd fd;    /* the findings file */
    char path[4096]; /* the findings file this process writes */
    pid_t pid;       /* the process that opened it */
} fj = {.fd = {.fd = -1}};

/* This process's findings file, created as logs are (paths.h): a new file, O_EXCL|O_NOFOLLOW,
 * mode 0600; a taken name gets "-1", "-2", ... before its extension.  A name that is not a
 * regular file (a directory, a device, a symbolic link) is refused with a message. */
static int open_findings(const hs_options *o)
{
    char path[4096];
    hs_expand_path(o->findings, path, sizeof path, NULL);
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        hs_say("hipshadow: option 'findings': '%s' is %s, not a file; findings go to the text report only\n", path,
               S_ISDIR(st.st_mode)   ? "a directory"
               : S_ISLNK(st.st_mode) ? "a symbolic link"
                                     : "a device or special file");
        return -1;
    }
    int fd = hs_create_unique(path, O_WRONLY | O_APPEND, fj.path, sizeof fj.path);
    if (fd < 0)
        hs_say("hipshadow: option 'findings': cannot create '%s': %s; findings go to the text report only\n", path,
               strerror(errno));
    else if (strcmp(path, fj.path))
        hs_say("hipshadow: option 'findings': '%s' exists; this process writes its findings to '%s'\n", path, fj.path);
    return fd;
}

/* One finding's line into the findings file, whole or not at all: a short write (a full disk)
 * is cut back to where the line began, so every line of the file is a finding that parses. */
static void write_line(const char *line, size_t len)
{
    struct stat st;
    off_t start = fstat(fj.fd.fd, &st) == 0 ? st.st_size : -1; /* O_APPEND, and this process's own file */
    errno = 0;
    ssize_t w = hs_write_all(fj.fd.fd, line, len);
    if (w == (ssize_t)len)
        return;
    int err = errno ? errno : EIO;
    char what[128];
    if (w <= 0)
        snprintf(what, sizeof what, "nothing of it was written");
    else if (start >= 0 && ftruncate(fj.fd.fd, start) == 0)
        snprintf(what, sizeof what, "the %zd bytes of it that were written are removed", w);
    else
        snprintf(what, sizeof what, "its last line is cut short (%zd of %zu bytes)", w, len);
    hs_say("hipshadow: option 'findings': cannot write a finding to '%s': %s; %s, and findings go to the text "
           "report only from now on\n",
           fj.path, strerror(err), what);
    hs_own_fd_release(&fj.fd);
}

/* The fields, from the schema (hipshadow/finding_schema.inc): KEY(kind) is "\"kind\":", and a
 * name the schema lacks does not compile. */
enum {
#define HS_FIELD(name, type, writers, meaning) FIELD_##name,
#include "hipshadow/finding_schema.inc"
#undef HS_FIELD
};
#define NAME(name) (sizeof(char[FIELD_##name + 1]) ? #name : "")
#define KEY(name) (sizeof(char[FIELD_##name + 1]) ? "\"" #name "\":" : "")

/* overrun is a number for the overrun kinds (and any finding that has one), null for the others;
 * `hipshadow report` decides it the same way (tools/report/format_json.c). */
static bool has_overrun(const hs_finding *fi)
{
    return fi->overrun || fi->kind == HS_KIND_OUT_OF_BOUNDS || fi->kind == HS_KIND_HOST_OUT_OF_BOUNDS ||
           fi->kind == HS_KIND_REGION_OVERRUN;
}

void hs_findings_write(const hs_options *o, const hs_event *e)
{
    const hs_call *c = e->call;
    const hs_finding *fi = e->finding;
    hs_jbuf *b = &(hs_jbuf){.n = 0};
    hs_jb(b, "{%s\"%s\",%s\"%s\",%s\"%s\",%s\"%s\",%s", KEY(kind), hs_kind_name(fi->kind), KEY(severity),
          hs_severity_name(fi->severity), KEY(api), hs_frontend_active.api_names[c->api], KEY(action),
          hs_action_name(e->action), KEY(direction));
    if (c->op == HS_OP_COPY)
        hs_jb(b, "\"%s\"", hs_dir_name(e->facts->dir));
    else
        hs_jb(b, "null");
    hs_jb(b, ",%s\"0x%lx\",%s\"0x%lx\",%s%zu,%s", KEY(dst), (unsigned long)c->dst, KEY(src), (unsigned long)c->src,
          KEY(bytes), c->bytes, KEY(alloc));
    const hs_side *sub = subject_side(e);
    if (side_has_alloc(sub))
        hs_jb(b, "{\"base\":\"0x%lx\",\"size\":%zu,\"offset\":%lld,\"id\":%llu}", (unsigned long)sub->alloc.base,
              sub->alloc.size, (long long)(sub->ptr - sub->alloc.base), (unsigned long long)sub->alloc.id);
    else
        hs_jb(b, "null");
    hs_jb(b, ",%s", KEY(overrun));
    if (has_overrun(fi))
        hs_jb(b, "%llu", (unsigned long long)fi->overrun);
    else
        hs_jb(b, "null");
    hs_jb(b, ",%s", KEY(device));
    if (side_has_alloc(sub))
        hs_jb(b, "%d", sub->alloc.device);
    else
        hs_jb(b, "null");
    hs_jb(b, ",%s\"0x%lx\",%s[", KEY(stream), (unsigned long)c->stream, KEY(stack));
    uintptr_t frames[HS_STACK_MAX_FRAMES];
    int n = hs_stack_frames(e->stack, frames, HS_STACK_MAX_FRAMES);
    for (int i = 0; i < n; i++) {
        char where[512];
        hs_frame_describe(frames[i], where, sizeof where);
        hs_jb(b, i ? "," : "");
        hs_jb_string(b, where);
    }
    hs_jb(b, "]");
    hs_json_kernels(b, e);
    if (e->gpu_fault)
        hs_json_gpu_fault(b, e->gpu_fault);
    if (e->pystack)
        hs_pystack_json(b, NAME(python_stack), e->pystack);
    const hs_side *bs = block_subject(e);
    if (bs)
        hs_block_json(b, BLOCK_VIEW(bs));
    if (e->cause) {
        hs_jb(b, ",%s", KEY(cause));
        hs_jb_string(b, e->cause);
        hs_jb(b, ",%s", KEY(cause_rule));
        hs_jb_string(b, e->cause_rule);
    }
    hs_report_access_json(b->data, sizeof b->data, &b->n, e);
    hs_jb(b, ",%s%u,%s%llu}\n", KEY(thread), e->thread, KEY(time_ns), (unsigned long long)e->time_ns);

    pid_t pid = getpid();
    if (fj.pid != pid) {
        hs_own_fd_release(&fj.fd); /* the parent's, inherited across fork: this process writes its own */
        hs_own_fd_take(&fj.fd, open_findings(o));
        fj.pid = pid;
    }
    if (fj.fd.fd >= 0 && !hs_own_fd_ok(&fj.fd)) {
        hs_say("hipshadow: option 'findings': the program closed the descriptor of '%s'; findings go to the "
               "text report only from now on\n",
               fj.path);
        fj.fd = HS_OWN_FD_NONE; /* its number may be the program's file now: never written or closed */
    }
    if (fj.fd.fd >= 0)
        write_line(b->data, b->n);
}

void hs_findings_sync(void)
{
    if (hs_own_fd_ok(&fj.fd))
        fsync(fj.fd.fd);
}
