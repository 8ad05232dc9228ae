/* kap_gate.c - see kap_gate.h.
 *
 * The futex calls are the shared (not FUTEX_PRIVATE) forms: the waiters
 * are different processes mapping the same page.  A waiter re-checks the
 * word after every wake-up (spurious wake-ups and EINTR are allowed), and
 * FUTEX_WAIT returns at once (EAGAIN) if the word is no longer 0, so an
 * open between the check and the sleep is never missed.
 */
#include <errno.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include "kap_gate.h"

static long futex (uint32_t *word, int op, uint32_t val)
{
    return syscall (SYS_futex, word, op, val, NULL, NULL, 0);
}

void kap_gate_init (struct kap_gate *g)
{
    __atomic_store_n (&g->waiting, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n (&g->open, 0, __ATOMIC_SEQ_CST);
}

void kap_gate_wait (struct kap_gate *g)
{
    __atomic_add_fetch (&g->waiting, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n (&g->open, __ATOMIC_SEQ_CST) == 0)
        (void)futex (&g->open, FUTEX_WAIT, 0);
}

static double mono (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int kap_gate_ready (struct kap_gate *g, uint32_t n, double timeout)
{
    double deadline = mono () + timeout;
    struct timespec nap = { .tv_sec = 0, .tv_nsec = 50 * 1000 };

    while (__atomic_load_n (&g->waiting, __ATOMIC_SEQ_CST) < n) {
        if (mono () >= deadline) {
            errno = ETIMEDOUT;
            return -1;
        }
        nanosleep (&nap, NULL);
    }
    return 0;
}

void kap_gate_open (struct kap_gate *g)
{
    __atomic_store_n (&g->open, 1, __ATOMIC_SEQ_CST);
    (void)futex (&g->open, FUTEX_WAKE, INT_MAX);
}
