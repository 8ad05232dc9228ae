/* test/fdutil.c - unit tests for fdutil.c: descriptor flags, whole-buffer
 * I/O over a pipe, and raising the descriptor limit (up to the hard limit,
 * never down).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "src/common/libutil/test/test_skip.h"
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>
#include "src/common/libutil/fdutil.h"

static void test_flags_and_io (void **state)
{
    int p[2];
    char buf[16];

    assert_int_equal (pipe (p), 0);
    assert_int_equal (fd_set_nonblocking (p[0]), 0);
    assert_true (fcntl (p[0], F_GETFL) & O_NONBLOCK);
    assert_int_equal (fd_set_blocking (p[0]), 0);
    assert_false (fcntl (p[0], F_GETFL) & O_NONBLOCK);
    assert_int_equal (fd_set_cloexec (p[1]), 0);
    assert_true (fcntl (p[1], F_GETFD) & FD_CLOEXEC);
    assert_int_equal (fd_unset_cloexec (p[1]), 0);
    assert_false (fcntl (p[1], F_GETFD) & FD_CLOEXEC);
    assert_int_equal (write_all (p[1], "hello", 5), 5);
    close (p[1]);
    assert_int_equal (read_all (p[0], buf, sizeof (buf)), 5);  /* short: EOF */
    assert_memory_equal (buf, "hello", 5);
    close (p[0]);
    assert_int_equal (fd_set_nonblocking (-1), -1);
    assert_int_equal (errno, EBADF);
}

static void test_raise_limit (void **state)
{
    struct rlimit rl, now;

    assert_int_equal (getrlimit (RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max < 128)
        TEST_SKIP ("no finite hard limit of 128 descriptors or more to test with");
    /* start low, so that raising has room */
    now = rl;
    now.rlim_cur = 64;
    assert_int_equal (setrlimit (RLIMIT_NOFILE, &now), 0);

    unsigned long limit = 0;
    assert_int_equal (fd_raise_limit (100, &limit), 0);
    assert_int_equal (getrlimit (RLIMIT_NOFILE, &now), 0);
    assert_int_equal (now.rlim_cur, 100);
    assert_int_equal (limit, 100);
    /* never lowered */
    assert_int_equal (fd_raise_limit (80, &limit), 0);
    assert_int_equal (getrlimit (RLIMIT_NOFILE, &now), 0);
    assert_int_equal (now.rlim_cur, 100);
    assert_int_equal (limit, 100);      /* what is in force, not 'want' */
    /* capped by the hard limit */
    assert_int_equal (fd_raise_limit ((unsigned long)rl.rlim_max + 1000, &limit), 0);
    assert_int_equal (getrlimit (RLIMIT_NOFILE, &now), 0);
    assert_int_equal (now.rlim_cur, rl.rlim_max);
    assert_int_equal (limit, rl.rlim_max);
    assert_int_equal (fd_raise_limit (10, NULL), 0);
    assert_int_equal (now.rlim_max, rl.rlim_max);

    assert_int_equal (setrlimit (RLIMIT_NOFILE, &rl), 0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_flags_and_io),
        cmocka_unit_test (test_raise_limit),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
