/* JUnit XML for CI panels: one test case per finding kind; error kinds that occurred fail. */
#include "emit.h"
#include "formats.h"

#include <stdlib.h>

void hsr_format_junit(hsr_set *set, const hsr_summary *s, FILE *out)
{
    /* a kind fails when one of its findings is an error (info notes and warnings do not) */
    bool *fails = calloc(hsr_kind_count(), sizeof *fails);
    hsr_log *l;
    const hs_log_finding *f;
    for (size_t i = 0; fails && (f = hsr_next_finding(set, &i, &l));)
        if (f->kind < hsr_kind_count() && f->severity == 2)
            fails[f->kind] = true;
    unsigned failures = 0;
    for (unsigned k = 0; k < hsr_kind_count(); k++)
        failures += s->findings_by_kind[k] && fails && fails[k];
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"hipshadow\" tests=\"%u\" failures=\"%u\">\n"
            "<testsuite name=\"hipshadow\" tests=\"%u\" failures=\"%u\">\n",
            hsr_kind_count(), failures, hsr_kind_count(), failures);
    for (unsigned k = 0; k < hsr_kind_count(); k++) {
        fprintf(out, "<testcase classname=\"hipshadow\" name=\"%s\">", hsr_kind_name(k));
        if (s->findings_by_kind[k]) {
            bool failing = fails && fails[k];
            fprintf(out, failing ? "<failure message=\"%llu finding(s)\">" : "<system-out>%llu finding(s)\n",
                    (unsigned long long)s->findings_by_kind[k]);
            for (size_t i = 0; (f = hsr_next_finding(set, &i, &l));) {
                if (f->kind != k)
                    continue;
                char msg[4096];
                hsr_finding_message_full(l, f, msg, sizeof msg);
                hsr_xml_string(out, msg);
                fputc('\n', out);
            }
            fprintf(out, failing ? "</failure>" : "</system-out>");
        }
        fprintf(out, "</testcase>\n");
    }
    fprintf(out, "</testsuite>\n</testsuites>\n");
    free(fails);
}
