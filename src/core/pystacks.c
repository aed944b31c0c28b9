#include "pystacks.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

typedef struct frame_text {
    char *text;          /* key */
    uint32_t id;
    UT_hash_handle hh;
} frame_text;

typedef struct py_stack {
    uint64_t hash;       /* key */
    uint32_t id, n;
    uint32_t *frames;
    struct py_stack *next_same_hash;
    UT_hash_handle hh;
} py_stack;

static struct {
    pthread_mutex_t lock;
    frame_text *by_text;
    char **texts;        /* texts[id - 1] */
    uint32_t n_texts, cap_texts;
    py_stack *by_hash;
    py_stack **stacks;   /* stacks[id - 1] */
    uint32_t n_stacks, cap_stacks;
} pd = {.lock = PTHREAD_MUTEX_INITIALIZER};

void hs_pystacks_after_fork(void) { pthread_mutex_init(&pd.lock, NULL); }

static int grow(void **array, uint32_t *cap, size_t elem)
{
    uint32_t n = *cap ? *cap * 2 : 256;
    void *p = realloc(*array, n * elem);
    if (!p)
        return -1;
    *array = p;
    *cap = n;
    return 0;
}

uint32_t hs_pyframe_intern(const char *text)
{
    if (!text)
        return 0;
    uint32_t id = 0;
    pthread_mutex_lock(&pd.lock);
    frame_text *f = NULL;
    HASH_FIND_STR(pd.by_text, text, f);
    if (f) {
        id = f->id;
    } else if (pd.n_texts < pd.cap_texts || grow((void **)&pd.texts, &pd.cap_texts, sizeof *pd.texts) == 0) {
        f = calloc(1, sizeof *f);
        char *copy = strdup(text);
        if (f && copy) {
            f->text = copy;
            f->id = ++pd.n_texts;
            pd.texts[f->id - 1] = copy;
            HASH_ADD_KEYPTR(hh, pd.by_text, f->text, strlen(f->text), f);
            id = f->id;
        } else {
            free(f);
            free(copy);
        }
    }
    pthread_mutex_unlock(&pd.lock);
    return id;
}

uint32_t hs_pystack_put(const uint32_t *frames, int n)
{
    if (n <= 0)
        return 0;
    if (n > HS_PYSTACK_MAX_FRAMES)
        n = HS_PYSTACK_MAX_FRAMES;
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < n; i++) {
        h ^= frames[i];
        h *= 1099511628211ULL;
    }
    h ^= (uint64_t)n;
    uint32_t id = 0;
    pthread_mutex_lock(&pd.lock);
    py_stack *head = NULL;
    HASH_FIND(hh, pd.by_hash, &h, sizeof h, head);
    for (py_stack *s = head; s; s = s->next_same_hash)
        if (s->n == (uint32_t)n && !memcmp(s->frames, frames, n * sizeof *frames)) {
            id = s->id;
            goto out;
        }
    if (pd.n_stacks == pd.cap_stacks && grow((void **)&pd.stacks, &pd.cap_stacks, sizeof *pd.stacks) != 0)
        goto out;
    py_stack *s = calloc(1, sizeof *s);
    uint32_t *copy = malloc(n * sizeof *copy);
    if (!s || !copy) {
        free(s);
        free(copy);
        goto out;
    }
    memcpy(copy, frames, n * sizeof *copy);
    *s = (py_stack){.hash = h, .n = (uint32_t)n, .frames = copy, .id = ++pd.n_stacks};
    pd.stacks[s->id - 1] = s;
    if (head) {
        s->next_same_hash = head->next_same_hash;
        head->next_same_hash = s;
    } else {
        HASH_ADD(hh, pd.by_hash, hash, sizeof s->hash, s);
    }
    id = s->id;
out:
    pthread_mutex_unlock(&pd.lock);
    return id;
}

int hs_pystack_frames(uint32_t id, const char **texts, int max)
{
    int n = 0;
    pthread_mutex_lock(&pd.lock);
    if (id >= 1 && id <= pd.n_stacks) {
        const py_stack *s = pd.stacks[id - 1];
        for (uint32_t i = 0; i < s->n && n < max; i++)
            if (s->frames[i] >= 1 && s->frames[i] <= pd.n_texts)
                texts[n++] = pd.texts[s->frames[i] - 1];
    }
    pthread_mutex_unlock(&pd.lock);
    return n;
}

void hs_pystack_print(uint32_t id, FILE *out)
{
    const char *texts[HS_PYSTACK_MAX_FRAMES];
    int n = hs_pystack_frames(id, texts, HS_PYSTACK_MAX_FRAMES);
    for (int i = 0; i < n; i++)
        fprintf(out, "    #%d %s\n", i, texts[i]);
}
