/* test/kap_gate.c - the node barrier, with forked processes sharing an
 * anonymous MAP_SHARED page (what MPI's shared window gives kap): every
 * waiter announces itself and wakes the leader, none passes before the
 * round opens, all pass after one open; rounds follow each other with no
 * waiter passing a round early; kap_gate_ready times out when too few
 * wait, and can be called again.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "kap_gate.h"

struct shared {
    struct kap_gate gate;
    uint32_t passed;        /* waiters past the gate, all rounds */
    uint32_t bad;           /* passages seen before their round opened */
    uint32_t opened;        /* rounds the leader opened */
};

static struct shared *map_shared (uint32_t others)
{
    struct shared *s = mmap (NULL, sizeof (*s), PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true (s != MAP_FAILED);
    kap_gate_init (&s->gate, others);
    s->passed = s->bad = s->opened = 0;
    return s;
}

/* A waiter that goes through `rounds` rounds and checks, after each,
 * that the leader opened at least that many.
 */
static pid_t spawn_waiter (struct shared *s, int rounds)
{
    pid_t pid = fork ();
    assert_true (pid >= 0);
    if (pid == 0) {
        alarm (60);     /* a broken gate fails the test, not hangs it */
        for (int r = 1; r <= rounds; r++) {
            kap_gate_wait (&s->gate);
            if (__atomic_load_n (&s->opened, __ATOMIC_SEQ_CST) < (uint32_t)r)
                __atomic_add_fetch (&s->bad, 1, __ATOMIC_SEQ_CST);
            __atomic_add_fetch (&s->passed, 1, __ATOMIC_SEQ_CST);
        }
        _exit (0);
    }
    return pid;
}

static void open_round (struct shared *s)
{
    __atomic_add_fetch (&s->opened, 1, __ATOMIC_SEQ_CST);
    kap_gate_open (&s->gate);
}

static void reap (pid_t *pids, int n)
{
    for (int i = 0; i < n; i++) {
        int status;
        assert_int_equal (waitpid (pids[i], &status, 0), pids[i]);
        assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    }
}

static void test_release_all (void **state)
{
    enum { N = 12 };
    struct shared *s = map_shared (N);
    pid_t pids[N];
    struct timespec nap = { .tv_sec = 0, .tv_nsec = 20 * 1000 * 1000 };

    for (int i = 0; i < N; i++)
        pids[i] = spawn_waiter (s, 1);
    assert_int_equal (kap_gate_ready (&s->gate, 30.), 0);
    assert_int_equal (s->gate.arrived, N);
    nanosleep (&nap, NULL);             /* they are asleep now: none passed */
    assert_int_equal (__atomic_load_n (&s->passed, __ATOMIC_SEQ_CST), 0);
    open_round (s);
    reap (pids, N);
    assert_int_equal (s->passed, N);
    assert_int_equal (s->bad, 0);
    munmap (s, sizeof (*s));
}

static void test_rounds (void **state)
{
    enum { N = 6, ROUNDS = 200 };
    struct shared *s = map_shared (N);
    pid_t pids[N];

    for (int i = 0; i < N; i++)
        pids[i] = spawn_waiter (s, ROUNDS);
    for (int r = 0; r < ROUNDS; r++) {
        assert_int_equal (kap_gate_ready (&s->gate, 30.), 0);
        open_round (s);
    }
    reap (pids, N);
    assert_int_equal (s->passed, N * ROUNDS);
    assert_int_equal (s->bad, 0);
    assert_int_equal (s->gate.generation, ROUNDS);
    munmap (s, sizeof (*s));
}

static void test_leader_alone (void **state)
{
    struct shared *s = map_shared (0);

    assert_int_equal (kap_gate_ready (&s->gate, 0.), 0);
    open_round (s);
    assert_int_equal (s->gate.generation, 1);
    munmap (s, sizeof (*s));
}

static void test_ready_timeout (void **state)
{
    struct shared *s = map_shared (2);
    pid_t pids[2];

    pids[0] = spawn_waiter (s, 1);
    errno = 0;
    assert_int_equal (kap_gate_ready (&s->gate, 0.05), -1);
    assert_int_equal (errno, ETIMEDOUT);
    pids[1] = spawn_waiter (s, 1);      /* the round was kept: go on */
    assert_int_equal (kap_gate_ready (&s->gate, 30.), 0);
    open_round (s);
    reap (pids, 2);
    assert_int_equal (s->passed, 2);
    munmap (s, sizeof (*s));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_release_all),
        cmocka_unit_test (test_rounds),
        cmocka_unit_test (test_leader_alone),
        cmocka_unit_test (test_ready_timeout),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
