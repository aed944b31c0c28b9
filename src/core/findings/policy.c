#define _GNU_SOURCE
#include "findings/policy.h"
#include "rules/check.h"
#include "findings/report.h"
#include "process/stacks.h"
#include "process/util.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct suppression {
    int kind;      /* -1 = any kind */
    char *pattern; /* glob over the api name, the kernel's name (launches) and every frame of the call stack */
} suppression;

static struct {
    const hs_options *opt;
    suppression *rules;
    int n_rules;
    atomic_uint_least64_t counts[HS_KIND_COUNT];
    atomic_uint_least64_t errors;
    atomic_bool summarised;   /* the exit summary was printed */
    atomic_bool device_fault; /* a sticky device fault was reported */
} pol;

static int kind_by_name(const char *name)
{
    if (!strcmp(name, "*"))
        return -1;
    for (int k = 0; k < HS_KIND_COUNT; k++)
        if (!strcmp(name, hs_kind_name((hs_kind)k)))
            return k;
    return -2;
}

static void load_suppressions(const char *path)
{
    FILE *f = fopen(path, "re");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        hs_say("hipshadow: option 'suppressions': cannot read '%s': %s; no findings are suppressed\n", path,
               f ? (S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file") : strerror(errno));
        if (f)
            fclose(f);
        return;
    }
    /* whole lines, however long: a line cut at a buffer's end made its tail a line of its own (a
     * long comment's tail became a rule) */
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, bad = 0, first_bad = 0;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '#')
            continue;
        char *colon = strchr(p, ':');
        int kind = -2;
        if (colon) {
            *colon = 0;
            kind = kind_by_name(p);
        }
        if (!colon || kind == -2 || !colon[1]) {
            /* said once, after the file: a file that is not a suppressions file at all (a log, a
             * README named by mistake) gave one message per line, hundreds of them */
            if (!bad++)
                first_bad = lineno;
            continue;
        }
        suppression *grown = realloc(pol.rules, (pol.n_rules + 1) * sizeof *grown);
        char *pattern = strdup(colon + 1);
        if (!grown || !pattern) {
            free(pattern);
            if (grown)
                pol.rules = grown;
            break;
        }
        pol.rules = grown;
        pol.rules[pol.n_rules++] = (suppression){kind, pattern};
    }
    free(line);
    fclose(f);
    if (bad == 1)
        hs_say("hipshadow: %s:%d: expected 'kind:pattern' with a known kind or '*'; line ignored\n", path, first_bad);
    else if (bad > 1)
        hs_say("hipshadow: option 'suppressions': %d lines of '%s' are not 'kind:pattern' with a known kind "
               "or '*' (the first is line %d); they are ignored%s\n",
               bad, path, first_bad, pol.n_rules ? "" : ", and no findings are suppressed");
}

void hs_policy_init(const hs_options *o)
{
    pol.opt = o;
    if (o->suppressions[0])
        load_suppressions(o->suppressions);
}

bool hs_policy_suppressed(hs_kind kind, const char *api, const char *kernel, uint32_t stack)
{
    if (pol.n_rules == 0)
        return false;
    uintptr_t frames[HS_STACK_MAX_FRAMES];
    int n = hs_stack_frames(stack, frames, HS_STACK_MAX_FRAMES);
    for (int r = 0; r < pol.n_rules; r++) {
        const suppression *s = &pol.rules[r];
        if (s->kind != -1 && s->kind != (int)kind)
            continue;
        if (!fnmatch(s->pattern, api, 0) || (kernel && !fnmatch(s->pattern, kernel, 0)))
            return true;
        for (int i = 0; i < n; i++) {
            char where[512];
            hs_frame_describe(frames[i], where, sizeof where);
            /* "func+0xoff (module)": match the glob against the function name and the module too */
            char func[512];
            snprintf(func, sizeof func, "%s", where);
            func[strcspn(func, "+ ")] = 0;
            char *module = strrchr(where, '(');
            if (!fnmatch(s->pattern, func, 0) || !fnmatch(s->pattern, where, 0) ||
                (module && !fnmatch(s->pattern, module + 1, FNM_LEADING_DIR)))
                return true;
        }
    }
    return false;
}

void hs_policy_count(const hs_finding *f)
{
    atomic_fetch_add(&pol.counts[f->kind], 1);
    if (f->severity == HS_SEV_ERROR)
        atomic_fetch_add(&pol.errors, 1);
    if (HS_UNLIKELY(atomic_load(&pol.summarised)))
        hs_report_note("the next finding comes after the exit SUMMARY (from an exit handler or a thread that "
                       "outlived exit); it is written to findings= and the log, and the exit status is already set");
}

bool hs_policy_first_device_fault(void) { return !atomic_exchange(&pol.device_fault, true); }

void hs_policy_after_fork(void)
{
    atomic_store(&pol.device_fault, false);
    for (int k = 0; k < HS_KIND_COUNT; k++)
        atomic_store(&pol.counts[k], 0);
    atomic_store(&pol.errors, 0);
    atomic_store(&pol.summarised, false);
}

hs_decision hs_policy_decide(const hs_finding *f, int n)
{
    bool error = false;
    for (int i = 0; i < n; i++)
        error |= f[i].severity == HS_SEV_ERROR;
    if (!error || pol.opt->mode == HS_MODE_WARN)
        return HS_FORWARD;
    return pol.opt->mode == HS_MODE_BLOCK ? HS_BLOCK : HS_ABORT;
}

bool hs_policy_first_at_site(uintptr_t caller)
{
    enum { SLOTS = 4096 };
    static _Atomic uintptr_t seen[SLOTS];
    if (!caller)
        return true;
    for (unsigned i = 0, h = (unsigned)(caller >> 4) % SLOTS; i < 64; i++, h = (h + 1) % SLOTS) {
        uintptr_t expected = 0;
        if (atomic_load_explicit(&seen[h], memory_order_relaxed) == caller)
            return false;
        if (atomic_compare_exchange_strong(&seen[h], &expected, caller))
            return true;
        if (expected == caller)
            return false;
    }
    return false; /* table crowded: stay quiet rather than flood */
}

void hs_policy_at_exit(uint64_t calls_checked)
{
    uint64_t counts[HS_KIND_COUNT];
    for (int k = 0; k < HS_KIND_COUNT; k++)
        counts[k] = atomic_load(&pol.counts[k]);
    hs_report_summary(counts, atomic_load(&pol.errors), calls_checked);
    hs_report_flush();
    atomic_store(&pol.summarised, true);
    if (pol.opt->exitcode > 0 && atomic_load(&pol.errors) > 0) {
        fflush(NULL); /* we leave through _exit: flush the program's stdio first */
        _exit((int)pol.opt->exitcode);
    }
}
