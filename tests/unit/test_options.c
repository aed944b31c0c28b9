/* The options grammar: values, suffixes, quotes, bad values keep defaults and are named,
 * unknown keys are warned about, help lists every option. */
#define _GNU_SOURCE
#include "../../src/core/options.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

static int parse(hs_options *o, const char *text, char **messages)
{
    size_t len;
    FILE *f = open_memstream(messages, &len);
    hs_options_defaults(o);
    int problems = hs_options_parse(o, text, f);
    fclose(f);
    return problems;
}

int main(void)
{
    hs_options o;
    char *msg = NULL;
    CHECK_EQ(parse(&o, "mode=block:exitcode=3:quarantine=1m,stack_depth=8 findings='/tmp/a:b.json'", &msg), 0);
    CHECK_EQ(o.mode, HS_MODE_BLOCK);
    CHECK_EQ(o.exitcode, 3);
    CHECK_EQ(o.quarantine, 1u << 20);
    CHECK_EQ(o.stack_depth, 8);
    CHECK(!strcmp(o.findings, "/tmp/a:b.json"));
    free(msg);

    CHECK_EQ(parse(&o, "mode=loud:exitcode=x:bogus=1:quarantine=5q", &msg), 4);
    CHECK_EQ(o.mode, HS_MODE_WARN); /* defaults kept */
    CHECK_EQ(o.exitcode, 0);
    CHECK(strstr(msg, "option 'mode': bad value 'loud'") != NULL);
    CHECK(strstr(msg, "option 'exitcode': bad value 'x'") != NULL);
    CHECK(strstr(msg, "unknown option 'bogus'") != NULL);
    CHECK(strstr(msg, "option 'quarantine': bad value '5q'") != NULL);
    free(msg);

    CHECK_EQ(parse(&o, "mode", &msg), 1);
    CHECK(strstr(msg, "'mode' has no value") != NULL);
    free(msg);

    size_t len;
    FILE *f = open_memstream(&msg, &len);
    hs_options_defaults(&o);
    hs_options_print_help(&o, f);
    fclose(f);
    const char *every[] = {"mode", "findings", "report_path", "exitcode", "stack_depth", "quarantine",
                           "print_limit", "suppressions", "notes", "detect_leaks", "check_host", "query_runtime",
                           "verbosity", "help"};
    for (size_t i = 0; i < sizeof every / sizeof *every; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, "  %s ", every[i]);
        CHECK(strstr(msg, needle) != NULL);
    }
    free(msg);
    return UNIT_DONE();
}
