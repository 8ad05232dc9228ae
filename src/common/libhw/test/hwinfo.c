/* test/hwinfo.c - the hwloc wrapper reports this machine sensibly and can
 * bind the calling process to a core.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "src/common/libutil/test/test_skip.h"
#include <errno.h>
#include <unistd.h>
#include <sched.h>
#include "src/common/libhw/hwinfo.h"

static void test_get (void **state)
{
    struct hwinfo info;
    assert_int_equal (hwinfo_get (&info), 0);
    assert_true (info.cores >= 1);
    assert_true (info.pus >= info.cores);
    assert_true (info.memory > 0);
    assert_true (info.cpuset[0] != '\0');
    assert_int_equal (hwinfo_get (NULL), -1);
}

static void test_bind (void **state)
{
    cpu_set_t before, after;
    assert_int_equal (sched_getaffinity (0, sizeof (before), &before), 0);
    if (hwinfo_bind_core (getpid (), 0) < 0) {
        TEST_SKIP ("binding to a core is not permitted here");
    }
    assert_int_equal (sched_getaffinity (0, sizeof (after), &after), 0);
    assert_true (CPU_COUNT (&after) >= 1);
    assert_true (CPU_COUNT (&after) <= CPU_COUNT (&before));
    assert_int_equal (sched_setaffinity (0, sizeof (before), &before), 0);
    assert_int_equal (hwinfo_bind_core (getpid (), -1), -1);
    assert_int_equal (errno, EINVAL);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_get),
        cmocka_unit_test (test_bind),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
