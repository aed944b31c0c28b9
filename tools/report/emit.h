/* Small writers shared by the output formats: escaping and human-readable sizes. */
#ifndef HSR_EMIT_H
#define HSR_EMIT_H

#include <stdint.h>
#include <stdio.h>

void hsr_json_string(FILE *f, const char *s);
void hsr_xml_string(FILE *f, const char *s);
const char *hsr_human_bytes(uint64_t bytes, char *buf, size_t len);

#endif
