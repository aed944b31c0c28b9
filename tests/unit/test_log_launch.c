/* Launches in the post-mortem log, written by the core (log.c, record.c) and read back by the
 * report's reader: kernel-name ids (one per distinct name, by pointer or by content, a table that
 * grows, names cut at HS_LOG_KERNEL_NAME_MAX), LAUNCH records with their arguments, and a forked
 * child whose own log names every kernel its parent had numbered. */
#define _GNU_SOURCE
#include "process/log.h"
#include "findings/record.h"
#include "../../tools/report/reader.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MANY = 3000 };

static const char *names_read(const hsr_log *log, uint32_t id) { return hsr_kernel_name(log, id); }

static const hsr_event *nth_launch(const hsr_set *set, int n)
{
    for (size_t i = 0; i < set->n_events; i++)
        if (set->events[i].type == HS_LOG_LAUNCH && n-- == 0)
            return &set->events[i];
    return NULL;
}

static void write_launch(uint64_t stream, uint64_t seq, int n_args)
{
    hs_call c = {.api = 1,
                 .op = HS_OP_LAUNCH,
                 .kernel_ref = HS_KREF_GRAPH,
                 .kernel = (void *)0x1000,
                 .stream = stream,
                 .has_stream = true,
                 .grid = {4, 2, 1},
                 .block = {64, 1, 1},
                 .shmem = 512,
                 .caller = 0x401234};
    static hs_call_state st; /* large: not on the stack */
    memset(&st, 0, sizeof st);
    st.start_ns = 1000 + seq + (stream == 0x99 ? 100 : 0); /* the child's after the parent's */
    st.launch_seq = seq;
    st.first_finding = seq == 2 ? 7 : 0;
    st.facts.n_args = (uint8_t)n_args;
    for (int i = 0; i < n_args; i++)
        st.facts.args[i] = (hs_launch_arg){.index = (uint16_t)i,
                                           .state = i == 1 ? HS_ARG_FREED : HS_ARG_LIVE,
                                           .how = i >= 4 ? HS_ARG_SCANNED : HS_ARG_EXACT,
                                           .value = 0x7000 + i,
                                           .alloc_id = 10 + i,
                                           .offset = -i};
    hs_record_launch(&c, &st, seq == 3 ? 98 : 0);
}

int main(void)
{
    char dir[] = "/tmp/hs-unit-log-XXXXXX", text[256], path[512];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(text, sizeof text, "log=%s/t.log:log_mode=full", dir);
    static hs_options o;
    hs_options_defaults(&o);
    CHECK_EQ(hs_options_parse(&o, text, stderr), 0);
    static const char *const apis[] = {"testAlloc", "testLaunch"};
    hs_log_configure(&o, apis, 2, 1);

    /* ids before the log exists: the names are written when it opens */
    const char *scale = "scale";
    CHECK_EQ(hs_log_kernel_name_id(scale), 1);
    hs_log_open_for_process();
    CHECK(hs_log_on());
    char *copy = strdup("scale");
    CHECK_EQ(hs_log_kernel_name_id(scale), 1);
    CHECK_EQ(hs_log_kernel_name_id(copy), 1); /* another pointer, the same name */
    CHECK_EQ(hs_log_kernel_name_id("poke"), 2);
    CHECK_EQ(hs_log_kernel_name_id(NULL), 0);
    static char many[MANY][24];
    for (int i = 0; i < MANY; i++) {
        snprintf(many[i], sizeof many[i], "kernel_%d", i);
        CHECK_EQ(hs_log_kernel_name_id(many[i]), 3 + i);
    }
    for (int i = 0; i < MANY; i += 97)
        CHECK_EQ(hs_log_kernel_name_id(many[i]), 3 + i);
    char *long_name = malloc(HS_LOG_KERNEL_NAME_MAX + 100);
    memset(long_name, 'k', HS_LOG_KERNEL_NAME_MAX + 99);
    long_name[HS_LOG_KERNEL_NAME_MAX + 99] = 0;
    uint32_t long_id = hs_log_kernel_name_id(long_name);
    CHECK_EQ(long_id, 3 + MANY);

    write_launch(0x77, 1, 0);
    write_launch(0x88, 2, 2);
    write_launch(0x77, 3, HS_LAUNCH_MAX_ARGS);

    pid_t child = fork();
    if (child == 0) {
        hs_log_after_fork();
        hs_log_open_for_process();
        int bad = !hs_log_on() || hs_log_kernel_name_id(scale) != 1 ||
                  hs_log_kernel_name_id("child_only") != long_id + 1;
        write_launch(0x99, 1, 1);
        _exit(bad);
    }
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    hs_log_close();

    hsr_set set = {0};
    snprintf(path, sizeof path, "%s/t.log", dir);
    CHECK(hsr_add_file(&set, path));
    snprintf(path, sizeof path, "%s/t-1.log", dir);
    CHECK(hsr_add_file(&set, path)); /* the child's */
    hsr_finish(&set);
    CHECK_EQ(set.n_logs, 2);
    for (int i = 0; i < set.n_logs; i++) {
        CHECK_EQ(set.logs[i].n_damage, 0);
        CHECK(names_read(&set.logs[i], 1) && !strcmp(names_read(&set.logs[i], 1), "scale"));
        CHECK(names_read(&set.logs[i], 2) && !strcmp(names_read(&set.logs[i], 2), "poke"));
        CHECK(names_read(&set.logs[i], 3 + 1234) && !strcmp(names_read(&set.logs[i], 3 + 1234), "kernel_1234"));
        const char *l = names_read(&set.logs[i], long_id);
        CHECK(l && strlen(l) == HS_LOG_KERNEL_NAME_MAX && l[0] == 'k');
    }
    CHECK_EQ(set.logs[0].n_kernel_names, long_id);
    CHECK_EQ(set.logs[1].n_kernel_names, long_id + 1);
    CHECK(names_read(&set.logs[1], long_id + 1) && !strcmp(names_read(&set.logs[1], long_id + 1), "child_only"));
    CHECK(names_read(&set.logs[0], long_id + 1) == NULL);

    const hsr_event *e = nth_launch(&set, 0);
    CHECK(e != NULL);
    if (e) {
        const hs_log_launch *l = e->rec;
        CHECK_EQ(l->stream, 0x77);
        CHECK_EQ(l->seq, 1);
        CHECK_EQ(l->start_ns, 1001);
        CHECK(l->end_ns >= l->start_ns);
        CHECK_EQ(l->kernel_ref, HS_LOG_KREF_GRAPH);
        CHECK_EQ(l->name, 0);
        CHECK(!strcmp(hsr_launch_name(&set.logs[e->log], l), "(graph)"));
        CHECK_EQ(l->grid[0] * 10 + l->grid[1], 42);
        CHECK_EQ(l->block[0], 64);
        CHECK_EQ(l->shmem, 512);
        CHECK_EQ(l->caller, 0x401234);
        CHECK_EQ(l->n_args, 0);
        CHECK_EQ(l->h.size, sizeof *l);
    }
    e = nth_launch(&set, 1);
    CHECK(e != NULL);
    if (e) {
        const hs_log_launch *l = e->rec;
        CHECK_EQ(l->n_args, 2);
        CHECK_EQ(l->first_finding, 7);
        hs_log_launch_arg a = hsr_launch_arg(l, 1);
        CHECK_EQ(a.state, HS_LOG_ARG_FREED);
        CHECK_EQ(a.alloc_id, 11);
        CHECK_EQ(a.offset, (uint64_t)-1);
        CHECK_EQ(a.value, 0x7001);
    }
    e = nth_launch(&set, 2);
    CHECK(e != NULL);
    if (e) {
        const hs_log_launch *l = e->rec;
        CHECK_EQ(l->n_args, HS_LOG_LAUNCH_MAX_ARGS);
        CHECK_EQ(l->result, 98);
        hs_log_launch_arg a = hsr_launch_arg(l, 7);
        CHECK_EQ(a.how, HS_LOG_ARG_SCANNED);
        CHECK_EQ(a.index, 7);
    }
    e = nth_launch(&set, 3);
    CHECK(e != NULL && e->log == 1 && ((const hs_log_launch *)e->rec)->stream == 0x99);
    CHECK(nth_launch(&set, 4) == NULL);
    hsr_free(&set);
    free(copy);
    free(long_name);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    return UNIT_DONE();
}
