#include "torch/pystacks.h"
#include "process/depot.h"

#include <pthread.h>
#include <string.h>

static struct {
    pthread_mutex_t lock;
    hs_depot texts;  /* frame texts, NUL included */
    hs_depot stacks; /* arrays of frame ids (uint32_t), innermost first */
} pd = {.lock = PTHREAD_MUTEX_INITIALIZER};

void hs_pystacks_after_fork(void) { pthread_mutex_init(&pd.lock, NULL); }

/* Under pd.lock: the id of data in depot d, stored if new (0: out of memory). */
static uint32_t intern(hs_depot *d, const void *data, size_t bytes)
{
    uint64_t h = hs_depot_hash(data, bytes);
    uint32_t id = hs_depot_find(d, data, bytes, h);
    return id ? id : hs_depot_add(d, data, bytes, h);
}

uint32_t hs_pyframe_intern(const char *text)
{
    if (!text)
        return 0;
    pthread_mutex_lock(&pd.lock);
    uint32_t id = intern(&pd.texts, text, strlen(text) + 1);
    pthread_mutex_unlock(&pd.lock);
    return id;
}

uint32_t hs_pystack_put(const uint32_t *frames, int n)
{
    if (n <= 0)
        return 0;
    if (n > HS_PYSTACK_MAX_FRAMES)
        n = HS_PYSTACK_MAX_FRAMES;
    pthread_mutex_lock(&pd.lock);
    uint32_t id = intern(&pd.stacks, frames, (size_t)n * sizeof *frames);
    pthread_mutex_unlock(&pd.lock);
    return id;
}

int hs_pystack_frames(uint32_t id, const char **texts, int max)
{
    int n = 0;
    pthread_mutex_lock(&pd.lock);
    size_t bytes, text_bytes;
    const uint32_t *frames = hs_depot_get(&pd.stacks, id, &bytes);
    for (size_t i = 0; frames && i < bytes / sizeof *frames && n < max; i++) {
        const char *text = hs_depot_get(&pd.texts, frames[i], &text_bytes);
        if (text)
            texts[n++] = text; /* stored for the process's life */
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
