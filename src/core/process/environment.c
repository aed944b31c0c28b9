/* The environment behind GPU memory behaviour (environment.h). */
#include "process/environment.h"
#include "process/util.h"

#include <string.h>

typedef struct env_row {
    const char *name;
    bool fault_prone;
    const char *why;
} env_row;

static const env_row rows[] = {
#define HS_ENV(name, fault_prone, why) {#name, fault_prone, why},
#include "process/environment.inc"
#undef HS_ENV
};

enum { VALUE_MAX = 256, TEXT_MAX = 4096 };
static char text[TEXT_MAX], fault_prone[TEXT_MAX];

/* Appends "NAME=value" (and " (why)") and a newline, the value cut and made printable. */
static void append(char *buf, size_t *n, const env_row *r, const char *value, bool with_why)
{
    char v[VALUE_MAX + 1];
    size_t len = strlen(value) < VALUE_MAX ? strlen(value) : VALUE_MAX;
    for (size_t i = 0; i < len; i++)
        v[i] = (unsigned char)value[i] < 0x20 || value[i] == 0x7f ? '?' : value[i];
    v[len] = 0;
    if (with_why)
        hs_appendf(buf, TEXT_MAX, n, "%s=%s (%s)\n", r->name, v, r->why);
    else
        hs_appendf(buf, TEXT_MAX, n, "%s=%s\n", r->name, v);
}

void hs_environment_init(void)
{
    size_t n = 0, m = 0;
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        const char *value = hs_getenv(rows[i].name);
        if (!value)
            continue;
        append(text, &n, &rows[i], value, false);
        if (rows[i].fault_prone)
            append(fault_prone, &m, &rows[i], value, true);
    }
}

const char *hs_environment_text(void) { return text; }

const char *hs_environment_fault_prone(void) { return fault_prone; }

const char *hs_environment_why(const char *name)
{
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        if (strcmp(rows[i].name, name) == 0)
            return rows[i].why;
    return NULL;
}
