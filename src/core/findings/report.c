#define _GNU_SOURCE
#include "findings/report.h"
#include "findings/report_json.h"
#include "findings/report_sides.h"
#include "findings/report_text.h"
#include "process/deep_stack.h"
#include "process/exit_lock.h"
#include "process/own_fd.h"
#include "process/paths.h"
#include "process/util.h"
#include "rules/check.h"

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
    FILE *text;           /* NULL until the first report */
    hs_own_fd text_file;  /* text's descriptor when it is report_path's file (own_fd.h) */
    char text_path[4096]; /* report_path's file this process writes */
    pid_t text_pid;
    long printed;
    bool environment_said; /* the environment went out with the first report */
    atomic_bool cut_said;  /* "... could not be written" was said */
} rp = {.lock = PTHREAD_MUTEX_INITIALIZER, .text_file = {.fd = -1}};

void hs_report_init(const hs_options *o)
{
    rp.opt = o;
    hs_report_text_init(o);
}

void hs_report_after_fork(void)
{
    pthread_mutex_init(&rp.lock, NULL);
    atomic_store(&rp.cut_said, false);
    rp.printed = 0; /* the child's print_limit is its own */
    rp.environment_said = false;
    /* The child reopens its own files (text_pid, and the findings file's, no longer match). */
}

/* ---- the report's lock ----
 * A signal handler that calls exit() can interrupt the thread holding it: that thread's exit
 * SUMMARY, or a finding made on the way out, must not wait for it (process/exit_lock.h). */

static bool held_here(void) { return hs_exit_lock_held_here(HS_EXIT_LOCK_REPORT); }
static void take_lock(void) { hs_exit_lock_take(&rp.lock, HS_EXIT_LOCK_REPORT); }
static void drop_lock(void) { hs_exit_lock_drop(&rp.lock, HS_EXIT_LOCK_REPORT); }

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
               S_ISDIR(st.st_mode)   ? "a directory"
               : S_ISLNK(st.st_mode) ? "a symbolic link"
                                     : "a device or special file");
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
               "stderr from now on\n",
               rp.text_path);
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
                hs_say("hipshadow: option 'report_path': cannot open '%s': %s; reporting on stderr\n", rp.text_path,
                       strerror(errno));
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
    hs_say("hipshadow: option 'report_path': cannot write to '%s': %s; reporting on stderr from now on\n", rp.text_path,
           strerror(err));
    rp.text = hs_stderr_stream();
    return true;
}
const hs_side *hs_report_subject(const hs_event *e)
{
    const hs_side *s = subject_side(e);
    return side_has_alloc(s) ? s : NULL;
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
        hs_report_text(f, e, &rp.environment_said);
        if (text_failed(f))
            hs_report_text(hs_stderr_stream(), e, &rp.environment_said);
        fflush(f);
    } else if (rp.printed == rp.opt->print_limit) {
        fprintf(f, "hipshadow: print_limit=%ld reached: later findings are counted%s but not printed\n",
                rp.opt->print_limit, rp.opt->findings[0] ? " and written to findings=" : "");
        fflush(f);
    }
    rp.printed++;
    if (rp.opt->findings[0])
        hs_findings_write(rp.opt, e);
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

typedef struct summary_args {
    const char *line;
    size_t len;
} summary_args;

/* How long the SUMMARY waits for another thread's report to end (it is being written, so it
 * ends; a thread stopped for good while writing one must not stop the exit). */
enum { SUMMARY_WAIT_S = 5 };

static void report_summary(void *arg)
{
    const summary_args *a = arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += SUMMARY_WAIT_S;
    if (!hs_exit_lock_take_until(&rp.lock, HS_EXIT_LOCK_REPORT, &until)) {
        hs_write_all(2, "\n", 1);
        if (!atomic_exchange(&rp.cut_said, true))
            hs_say("hipshadow: another thread held the report for %d s at exit: the SUMMARY goes straight to "
                   "stderr\n",
                   SUMMARY_WAIT_S);
        hs_write_all(2, a->line, a->len);
        return;
    }
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
    if (held_here()) {            /* exit() from a signal handler that interrupted this thread's report */
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
    hs_findings_sync();
}
