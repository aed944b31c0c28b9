/* Options from HIPSHADOW_OPTIONS, in the sanitizer grammar: key=value:key=value.  Pairs are
 * separated by ':', ',' or white space; a value in single or double quotes is taken whole, up to
 * the same quote (it cannot hold that quote).  A value whose quote is never closed is refused,
 * and the text after it is parsed from the first separator after the quote. */
#ifndef HS_OPTIONS_H
#define HS_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum { HS_MODE_WARN, HS_MODE_BLOCK, HS_MODE_ABORT } hs_mode;

#define HS_OPT_CTYPE_BOOL bool
#define HS_OPT_CTYPE_INT long
#define HS_OPT_CTYPE_SIZE uint64_t
#define HS_OPT_CTYPE_STRING char *
#define HS_OPT_CTYPE_MODE hs_mode

typedef struct hs_options {
#define HS_OPTION(type, name, def, limits, help) HS_OPT_CTYPE_##type name;
#include "process/options.inc"
#undef HS_OPTION
} hs_options;

void hs_options_defaults(hs_options *o);
/* Parses text into o.  Every problem is written to `warn` as one line naming the key or value
 * and, for a bad value, the range or the values allowed (options.inc's limits column); a bad
 * value is not taken: the option keeps its value (the default, unless set earlier in text).
 * Values longer than HS_OPTION_VALUE_MAX and keys longer than HS_OPTION_KEY_MAX are refused,
 * not cut.  Returns the number of problems (as many lines went to `warn`). */
enum { HS_OPTION_KEY_MAX = 63, HS_OPTION_VALUE_MAX = 4095 };
int hs_options_parse(hs_options *o, const char *text, FILE *warn);
/* The limits column of option `name` ("0..255", "warn|block|abort", ""); NULL for no such option. */
const char *hs_option_limits(const char *name);
void hs_options_print_help(const hs_options *defaults, FILE *out);
void hs_options_print(const hs_options *o, FILE *out);
/* "key=value:key=value" of every option, into buf (for the log header). */
void hs_options_format(const hs_options *o, char *buf, size_t len);
const char *hs_mode_name(hs_mode m);

#endif
