/* test/sched_slice.c - unit tests for sched_slice.c: range checks, a slice
 * set and read back on this thread, inherited by a thread made after it,
 * and the return to the kernel's default.  On a kernel that does not take
 * custom slices (before 6.12) the read-back tests are skipped.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#include "src/common/libutil/sched_slice.h"

static void test_range (void **state)
{
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

    assert_true (dflt >= 0);
    if (sched_slice_set (300) < 0 || sched_slice_get () != 300) {
        (void)sched_slice_set (0);
        skip ();    /* the kernel keeps its own slice */
    }
    assert_int_equal (pthread_create (&t, NULL, child_slice, &inherited), 0);
    assert_int_equal (pthread_join (t, NULL), 0);
    assert_int_equal (inherited, 300);
    assert_int_equal (sched_slice_set (0), 0);
    assert_int_equal (sched_slice_get (), dflt);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_range),
        cmocka_unit_test (test_set_get),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
