/* NVTX strings (see messages.h).  Registered strings are numbered from 1: a handle is its number,
 * so a handle that is not one of ours is found out instead of followed. */
#include "messages.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct interned {
    char *text;
    uintptr_t handle;
    UT_hash_handle hh;
} interned;

static struct {
    pthread_mutex_t lock;
    interned *by_text;
    char **texts; /* texts[handle - 1] */
    size_t n, cap;
} ms = {.lock = PTHREAD_MUTEX_INITIALIZER};

void hs_nvtx_messages_after_fork(void) { pthread_mutex_init(&ms.lock, NULL); }

/* One wide character as UTF-8 into buf at *at (what fits). */
static void put_utf8(char *buf, size_t len, size_t *at, uint32_t c)
{
    char enc[4];
    int n = c < 0x80       ? (enc[0] = (char)c, 1)
            : c < 0x800    ? (enc[0] = (char)(0xc0 | c >> 6), enc[1] = (char)(0x80 | (c & 0x3f)), 2)
            : c < 0x10000  ? (enc[0] = (char)(0xe0 | c >> 12), enc[1] = (char)(0x80 | (c >> 6 & 0x3f)),
                             enc[2] = (char)(0x80 | (c & 0x3f)), 3)
            : c < 0x110000 ? (enc[0] = (char)(0xf0 | c >> 18), enc[1] = (char)(0x80 | (c >> 12 & 0x3f)),
                              enc[2] = (char)(0x80 | (c >> 6 & 0x3f)), enc[3] = (char)(0x80 | (c & 0x3f)), 4)
                           : (enc[0] = '?', 1);
    if (*at + (size_t)n < len) {
        memcpy(buf + *at, enc, (size_t)n);
        *at += (size_t)n;
    }
}

static const char *wide_text(const wchar_t *w, char *buf, size_t len)
{
    size_t at = 0;
    for (; w && *w && at + 1 < len; w++)
        put_utf8(buf, len, &at, (uint32_t)*w);
    buf[at] = 0;
    return buf;
}

const char *hs_nvtx_text(uint32_t type, hs_nvtx_message m, char *buf, size_t len)
{
    if (!len)
        return buf;
    buf[0] = 0;
    if (type == HS_NVTX_MESSAGE_ASCII && m.ascii) {
        snprintf(buf, len, "%s", m.ascii);
    } else if (type == HS_NVTX_MESSAGE_UNICODE) {
        wide_text(m.unicode, buf, len);
    } else if (type == HS_NVTX_MESSAGE_REGISTERED) {
        uintptr_t h = (uintptr_t)m.registered;
        pthread_mutex_lock(&ms.lock);
        if (h >= 1 && h <= ms.n)
            snprintf(buf, len, "%s", ms.texts[h - 1]);
        pthread_mutex_unlock(&ms.lock);
    }
    return buf;
}

const void *hs_nvtx_register_string_a(const void *domain, const char *text)
{
    (void)domain; /* names are the program's, whatever its domains */
    if (!text)
        return NULL;
    pthread_mutex_lock(&ms.lock);
    interned *e = NULL;
    HASH_FIND_STR(ms.by_text, text, e);
    if (!e && ms.n == ms.cap) {
        size_t cap = ms.cap ? ms.cap * 2 : 64;
        char **grown = realloc(ms.texts, cap * sizeof *grown);
        if (grown) {
            ms.texts = grown;
            ms.cap = cap;
        }
    }
    if (!e && ms.n < ms.cap && (e = calloc(1, sizeof *e)) && (e->text = strdup(text))) {
        ms.texts[ms.n++] = e->text;
        e->handle = ms.n;
        HASH_ADD_KEYPTR(hh, ms.by_text, e->text, strlen(e->text), e);
    } else if (e && !e->text) {
        free(e);
        e = NULL;
    }
    const void *handle = e ? (const void *)e->handle : NULL;
    pthread_mutex_unlock(&ms.lock);
    return handle;
}

const void *hs_nvtx_register_string_w(const void *domain, const wchar_t *text)
{
    char buf[1024];
    return text ? hs_nvtx_register_string_a(domain, wide_text(text, buf, sizeof buf)) : NULL;
}
