/* The hot path's lock (process/spin.h): one holder at a time among more threads than cores, each
 * increment of a plain counter under it kept; a waiter gets the lock once a holder that sleeps
 * with it lets go; try fails while it is held. */
#include "process/spin.h"
#include "unit.h"

#include <pthread.h>
#include <time.h>

enum { THREADS = 8, ROUNDS = 20000 };

static hs_spin lock = HS_SPIN_INIT;
static volatile unsigned long counter; /* plain: only the lock keeps the increments */
static volatile int inside;            /* holders at once, seen by each holder */
static int most_inside;

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        hs_spin_lock(&lock);
        int now = ++inside;
        if (now > most_inside)
            most_inside = now;
        unsigned long c = counter; /* read, wait, write: two holders at once would lose updates */
        for (int k = 0; k < 8; k++)
            hs_spin_pause();
        counter = c + 1;
        inside--;
        hs_spin_unlock(&lock);
    }
    return NULL;
}

static void *sleepy_holder(void *arg)
{
    (void)arg;
    hs_spin_lock(&lock);
    struct timespec t = {0, 20 * 1000 * 1000}; /* holds it 20 ms: the waiter spins, yields, sleeps */
    nanosleep(&t, NULL);
    counter = 1;
    hs_spin_unlock(&lock);
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK_EQ(counter, (unsigned long)THREADS * ROUNDS);
    CHECK_EQ(most_inside, 1);

    counter = 0;
    pthread_t h;
    pthread_create(&h, NULL, sleepy_holder, NULL);
    int tries = 0;
    while (hs_spin_try(&lock) &&
           ++tries < 1000000) { /* until the holder has it (bounded: a broken lock fails, not hangs) */
        hs_spin_unlock(&lock);
        sched_yield();
    }
    CHECK(tries < 1000000);
    if (tries >= 1000000)
        return UNIT_DONE();
    CHECK(!hs_spin_try(&lock));
    hs_spin_lock(&lock); /* waits out the holder's sleep */
    CHECK_EQ(counter, 1);
    hs_spin_unlock(&lock);
    pthread_join(h, NULL);
    CHECK(hs_spin_try(&lock));
    hs_spin_unlock(&lock);
    return UNIT_DONE();
}
