/* Tiny test macros: each failed CHECK prints where and counts; main returns the count. */
#ifndef HS_UNIT_H
#define HS_UNIT_H

#include <stdio.h>

static int unit_failures;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                                   \
            unit_failures++;                                                                                           \
        }                                                                                                              \
    } while (0)

#define CHECK_EQ(a, b)                                                                                                 \
    do {                                                                                                               \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);                                 \
        if (a_ != b_) {                                                                                                \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %llu, %s = %llu\n", __FILE__, __LINE__, #a, a_, #b, b_);     \
            unit_failures++;                                                                                           \
        }                                                                                                              \
    } while (0)

#define UNIT_DONE() (fprintf(stderr, "%d failure(s)\n", unit_failures), unit_failures ? 1 : 0)

#endif
