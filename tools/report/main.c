/* hipshadow report [--format F] [--output FILE] LOG...
 * Reads post-mortem logs (several merge into one report and one timeline) and writes a report. */
#include "emit.h"
#include "formats.h"
#include "output.h"
#include "symbolize.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    hsr_format_fn fn;
} formats[] = {
    {"text", hsr_format_text},         {"json", hsr_format_json}, {"csv", hsr_format_csv},
    {"perfetto", hsr_format_perfetto}, {"html", hsr_format_html}, {"sarif", hsr_format_sarif},
    {"junit", hsr_format_junit},
};

static int usage(FILE *f, int status)
{
    fprintf(f, "usage: hipshadow report [--format text|json|csv|perfetto|html|sarif|junit] [--output FILE] LOG...\n");
    return status;
}

int main(int argc, char **argv)
{
    hsr_format_fn fn = hsr_format_text;
    const char *output = NULL;
    int first_log = argc;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--format") || !strcmp(argv[i], "-f")) {
            if (++i >= argc)
                return usage(stderr, 2);
            fn = NULL;
            for (size_t k = 0; k < sizeof formats / sizeof *formats; k++)
                if (!strcmp(argv[i], formats[k].name))
                    fn = formats[k].fn;
            if (!fn) {
                fprintf(stderr, "hipshadow report: unknown format '%s'\n", argv[i]);
                return usage(stderr, 2);
            }
        } else if (!strcmp(argv[i], "--output") || !strcmp(argv[i], "-o")) {
            if (++i >= argc)
                return usage(stderr, 2);
            output = argv[i];
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            return usage(stdout, 0);
        } else if (!strcmp(argv[i], "--")) {
            first_log = i + 1;
            break;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "hipshadow report: unknown argument '%s'\n", argv[i]);
            return usage(stderr, 2);
        } else {
            first_log = i;
            break;
        }
    }
    if (first_log >= argc) {
        fprintf(stderr, "hipshadow report: no log given\n");
        return usage(stderr, 2);
    }
    hsr_output out;
    if (!hsr_output_open(&out, output))
        return 2;
    hsr_set set = {0};
    int unreadable = 0;
    for (int i = first_log; i < argc; i++)
        if (!hsr_add_file(&set, argv[i])) {
            fprintf(stderr, "hipshadow report: cannot read '");
            hsr_text_string(stderr, argv[i]);
            fprintf(stderr, "': %s\n", errno == EINVAL ? "not a regular file" : strerror(errno));
            unreadable++;
        }
    for (int i = 0; i < set.n_logs; i++)
        for (int d = 0; d < set.logs[i].n_damage; d++) {
            fprintf(stderr, "hipshadow report: ");
            hsr_text_string(stderr, set.logs[i].path);
            fprintf(stderr, ": %s\n", set.logs[i].damage[d]);
        }
    hsr_finish(&set);
    hsr_summary s;
    hsr_summarize(&set, &s);
    fn(&set, &s, out.f);
    bool written = hsr_output_close(&out);
    hsr_summary_free(&s);
    for (int i = 0; i < set.n_logs; i++)
        hsr_symbolizer_free(&set.logs[i]);
    hsr_free(&set);
    return unreadable || !written ? 2 : 0;
}
