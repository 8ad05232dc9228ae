/* test/sched_slice.c - unit tests for sched_slice.c: range checks, a slice
 * set and read back on this thread, inherited by a thread made after it,
 * and the return to the kernel's default; a thread of another policy is
 * refused.  On a kernel that reports no slices (before 6.12) the read-back
 * test is skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "src/common/libutil/test/test_skip.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <sys/wait.h>
#include "src/common/libutil/sched_slice.h"

static void test_range (void **state)
{
    assert_true (sched_slice_valid (0));
    assert_true (sched_slice_valid (SCHED_SLICE_MIN_US));
    assert_true (sched_slice_valid (SCHED_SLICE_MAX_US));
    assert_false (sched_slice_valid (SCHED_SLICE_MIN_US - 1));
    assert_false (sched_slice_valid (SCHED_SLICE_MAX_US + 1));
    errno = 0;
    assert_int_equal (sched_slice_set (SCHED_SLICE_MIN_US - 1), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (sched_slice_set (SCHED_SLICE_MAX_US + 1), -1);
    assert_int_equal (errno, EINVAL);
}

static void *child_slice (void *arg)
{
    *(long *)arg = sched_slice_get ();
    return NULL;
}

static void test_set_get (void **state)
{
    long dflt = sched_slice_get ();
    long inherited = -1;
    pthread_t t;

    /* skipped only where the kernel has no slices to report (before
     * 6.12) or the calls are filtered out, never because a set failed */
    if (dflt == 0 || (dflt < 0 && (errno == ENOSYS || errno == EPERM)))
        TEST_SKIP ("this kernel reports no scheduler slices (before 6.12)");
    assert_true (dflt > 0);
    assert_int_equal (sched_slice_set (300), 0);
    assert_int_equal (sched_slice_get (), 300);
    assert_int_equal (pthread_create (&t, NULL, child_slice, &inherited), 0);
    assert_int_equal (pthread_join (t, NULL), 0);
    assert_int_equal (inherited, 300);
    assert_int_equal (sched_slice_set (0), 0);
    assert_int_equal (sched_slice_get (), dflt);
}

/* Not a fair policy: refused, nothing changed (checked in a child, as
 * SCHED_IDLE cannot be left without privilege).
 */
static void test_not_fair (void **state)
{
    struct sched_param sp = { .sched_priority = 0 };
    int status;
    pid_t pid = fork ();

    assert_true (pid >= 0);
    if (pid == 0) {
        if (sched_setscheduler (0, SCHED_IDLE, &sp) < 0)
            _exit (2);
        errno = 0;
        if (sched_slice_set (300) != -1 || errno != EINVAL)
            _exit (1);
        if (sched_getscheduler (0) != SCHED_IDLE || sched_slice_get () != 0)
            _exit (1);
        _exit (0);
    }
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFEXITED (status));
    if (WEXITSTATUS (status) == 2)
        TEST_SKIP ("SCHED_IDLE is not permitted here");
    assert_int_equal (WEXITSTATUS (status), 0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_range),
        cmocka_unit_test (test_set_get),
        cmocka_unit_test (test_not_fair),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
