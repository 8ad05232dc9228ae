/* kap_gate.c - see kap_gate.h.
 *
 * The futex calls are the shared (not FUTEX_PRIVATE) forms: the waiters
 * are different processes mapping the same page.  A sleeper re-checks its
 * word after every wake-up (spurious wake-ups and EINTR are allowed), and
 * FUTEX_WAIT returns at once (EAGAIN) if the word no longer holds the
 * value the sleeper saw, so a change between the check and the sleep is
 * never missed.
 *
 * Order within a round: a waiter reads `generation` before it increments
 * `arrived`; the leader sees `arrived` complete, clears it, then advances
 * `generation` (all sequentially consistent).  So a waiter can only see
 * the generation of the round it arrived in, and an early arrival for the
 * next round counts in the cleared `arrived`.
 */
#include <errno.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include "kap_gate.h"
#include "src/common/libutil/monotime.h"

static long futex (uint32_t *word, int op, uint32_t val,
                   const struct timespec *timeout)
{
    return syscall (SYS_futex, word, op, val, timeout, NULL, 0);
}

void kap_gate_init (struct kap_gate *g, uint32_t others)
{
    __atomic_store_n (&g->others, others, __ATOMIC_SEQ_CST);
    __atomic_store_n (&g->arrived, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n (&g->generation, 0, __ATOMIC_SEQ_CST);
}

void kap_gate_wait (struct kap_gate *g)
{
    uint32_t gen = __atomic_load_n (&g->generation, __ATOMIC_SEQ_CST);
    uint32_t n = __atomic_add_fetch (&g->arrived, 1, __ATOMIC_SEQ_CST);

    if (n == __atomic_load_n (&g->others, __ATOMIC_SEQ_CST))
        (void)futex (&g->arrived, FUTEX_WAKE, 1, NULL);    /* the leader */
    while (__atomic_load_n (&g->generation, __ATOMIC_SEQ_CST) == gen)
        (void)futex (&g->generation, FUTEX_WAIT, gen, NULL);
}

int kap_gate_ready (struct kap_gate *g, double timeout)
{
    double deadline = monotime () + timeout;
    uint32_t n;

    while ((n = __atomic_load_n (&g->arrived, __ATOMIC_SEQ_CST))
           < __atomic_load_n (&g->others, __ATOMIC_SEQ_CST)) {
        double left = deadline - monotime ();
        if (left <= 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        struct timespec ts = { .tv_sec = (time_t)left };
        ts.tv_nsec = (long)((left - ts.tv_sec) * 1e9);
        (void)futex (&g->arrived, FUTEX_WAIT, n, &ts);
    }
    return 0;
}

void kap_gate_open (struct kap_gate *g)
{
    __atomic_store_n (&g->arrived, 0, __ATOMIC_SEQ_CST);
    __atomic_add_fetch (&g->generation, 1, __ATOMIC_SEQ_CST);
    (void)futex (&g->generation, FUTEX_WAKE, INT_MAX, NULL);
}
