/* SARIF 2.1.0 for code scanning: one result per finding, located at the innermost frame of the
 * program's own code that has a source line (its path percent-encoded: a URI reference). */
#include "emit.h"
#include "formats.h"

void hsr_format_sarif(hsr_set *set, const hsr_summary *s, FILE *out)
{
    (void)s;
    fprintf(out, "{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\",\"runs\":[{"
                 "\"tool\":{\"driver\":{\"name\":\"hipshadow\",\"version\":\"0.1.0\",\"rules\":[");
    for (unsigned k = 0; k < hsr_kind_count(); k++)
        fprintf(out, "%s{\"id\":\"%s\",\"shortDescription\":{\"text\":\"hipshadow %s\"}}", k ? "," : "",
                hsr_kind_name(k), hsr_kind_name(k));
    fprintf(out, "]}},\"results\":[");
    int n = 0;
    hsr_log *l;
    const hs_log_finding *f;
    for (size_t i = 0; (f = hsr_next_finding(set, &i, &l));) {
        char msg[4096], file[512], uri[3 * sizeof file];
        int line = 0;
        hsr_finding_message_full(l, f, msg, sizeof msg);
        const char *level = f->severity == 2 ? "error" : f->severity == 1 ? "warning" : "note";
        fprintf(out, "%s\n{\"ruleId\":\"%s\",\"ruleIndex\":%u,\"level\":\"%s\",\"message\":{\"text\":", n++ ? "," : "",
                hsr_kind_name(f->kind), f->kind, level);
        hsr_json_string(out, msg);
        fprintf(out, "}");
        if (hsr_own_frame(l, f->stack, file, sizeof file, &line)) {
            fprintf(out, ",\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{\"uri\":");
            hsr_uri_encode(file, uri, sizeof uri);
            hsr_json_string(out, uri);
            fprintf(out, "},\"region\":{\"startLine\":%d}}}]", line);
        }
        fprintf(out, ",\"properties\":{\"pid\":%u,\"seq\":%u,\"action\":\"%s\"}}", l->header.pid, f->seq,
                hsr_action_name(f->action));
    }
    fprintf(out, "\n]}]}\n");
}
