/* Small writers shared by the output formats: escaping and human-readable sizes.
 * Every string that comes from a log (API, kernel, module and symbol names, paths, the command
 * line, options) is data: it goes out through one of these writers, escaped for the format it
 * lands in.  Bytes that are not UTF-8 become U+FFFD, so every output is valid UTF-8. */
#ifndef HSR_EMIT_H
#define HSR_EMIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A JSON string, quotes included. */
void hsr_json_string(FILE *f, const char *s);
/* XML or HTML text and attribute values: markup escaped, characters XML 1.0 forbids replaced. */
void hsr_xml_string(FILE *f, const char *s);
/* A CSV field in double quotes: quotes doubled, control characters as spaces, and a field that
 * a spreadsheet would read as a formula (=, +, -, @ first) starts with a single quote. */
void hsr_csv_field(FILE *f, const char *s);
/* Text for a terminal: control characters and bytes that are not UTF-8 as \xNN, so a name cannot
 * start a line, move the cursor or reorder what follows it.  Returns the bytes written. */
int hsr_text_string(FILE *f, const char *s);
/* A path as a URI reference (SARIF's artifactLocation.uri): every byte but A-Z a-z 0-9 - . _ ~ /
 * percent-encoded, into buf (cut at len). */
void hsr_uri_encode(const char *s, char *buf, size_t len);
const char *hsr_human_bytes(uint64_t bytes, char *buf, size_t len);

#endif
