/* test/kap_gate.c - the node start gate, with forked processes sharing an
 * anonymous MAP_SHARED page (what MPI's shared window gives kap): every
 * waiter announces itself, none passes before the gate opens, all pass
 * after one open; a gate opened early lets a late waiter straight
 * through; kap_gate_ready times out when too few wait.
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
    uint32_t passed;        /* waiters past the gate */
};

static struct shared *map_shared (void)
{
    struct shared *s = mmap (NULL, sizeof (*s), PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true (s != MAP_FAILED);
    kap_gate_init (&s->gate);
    s->passed = 0;
    return s;
}

static pid_t spawn_waiter (struct shared *s)
{
    pid_t pid = fork ();
    assert_true (pid >= 0);
    if (pid == 0) {
        kap_gate_wait (&s->gate);
        __atomic_add_fetch (&s->passed, 1, __ATOMIC_SEQ_CST);
        _exit (0);
    }
    return pid;
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
    struct shared *s = map_shared ();
    pid_t pids[N];
    struct timespec nap = { .tv_sec = 0, .tv_nsec = 20 * 1000 * 1000 };

    for (int i = 0; i < N; i++)
        pids[i] = spawn_waiter (s);
    assert_int_equal (kap_gate_ready (&s->gate, N, 30.), 0);
    nanosleep (&nap, NULL);             /* they are asleep now: none passed */
    assert_int_equal (__atomic_load_n (&s->passed, __ATOMIC_SEQ_CST), 0);
    kap_gate_open (&s->gate);
    reap (pids, N);
    assert_int_equal (s->passed, N);
    munmap (s, sizeof (*s));
}

static void test_open_before_wait (void **state)
{
    struct shared *s = map_shared ();
    pid_t pid;

    kap_gate_open (&s->gate);
    pid = spawn_waiter (s);
    reap (&pid, 1);
    assert_int_equal (s->passed, 1);
    assert_int_equal (s->gate.waiting, 1);
    munmap (s, sizeof (*s));
}

static void test_ready_timeout (void **state)
{
    struct shared *s = map_shared ();
    pid_t pid = spawn_waiter (s);

    errno = 0;
    assert_int_equal (kap_gate_ready (&s->gate, 2, 0.05), -1);
    assert_int_equal (errno, ETIMEDOUT);
    assert_int_equal (kap_gate_ready (&s->gate, 1, 30.), 0);
    kap_gate_open (&s->gate);
    reap (&pid, 1);
    munmap (s, sizeof (*s));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_release_all),
        cmocka_unit_test (test_open_before_wait),
        cmocka_unit_test (test_ready_timeout),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
