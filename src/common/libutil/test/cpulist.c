/* test/cpulist.c - CPU lists: parsing, formatting (round trips), the
 * n-th CPU, and that a failed call leaves its output alone.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include "src/common/libutil/cpulist.h"

static void roundtrip (const char *in, const char *want)
{
    cpu_set_t set;
    char buf[CPULIST_MAX];
    assert_int_equal (cpulist_parse (in, &set), 0);
    assert_int_equal (cpulist_format (&set, buf, sizeof (buf)), 0);
    assert_string_equal (buf, want);
}

static void test_parse_format (void **state)
{
    roundtrip ("0", "0");
    roundtrip ("3", "3");
    roundtrip ("0-3", "0-3");
    roundtrip ("0,1,2,3", "0-3");
    roundtrip ("8,0-1,10-11,2", "0-2,8,10-11");
    roundtrip ("5-5", "5");
    roundtrip ("1,1,1", "1");
    roundtrip ("1023", "1023");
}

static void test_parse_errors (void **state)
{
    const char *bad[] = { "", ",", "1,", ",1", "a", "1-", "-1", "3-1", " 1",
                          "1 ", "+1", "1--2", "1,,2", "0x1", "1024",
                          "99999999999999999999", "1-1024" };
    cpu_set_t set;

    CPU_ZERO (&set);
    CPU_SET (7, &set);
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        errno = 0;
        assert_int_equal (cpulist_parse (bad[i], &set), -1);
        assert_int_equal (errno, EINVAL);
        assert_int_equal (CPU_COUNT (&set), 1);     /* untouched */
        assert_true (CPU_ISSET (7, &set));
    }
    assert_int_equal (cpulist_parse (NULL, &set), -1);
    assert_int_equal (cpulist_parse ("1", NULL), -1);
}

static void test_format_edges (void **state)
{
    cpu_set_t set;
    char small[4];
    char buf[CPULIST_MAX];

    CPU_ZERO (&set);
    assert_int_equal (cpulist_format (&set, buf, sizeof (buf)), 0);
    assert_string_equal (buf, "");
    for (int c = 0; c < CPU_SETSIZE; c += 2)        /* the worst case */
        CPU_SET (c, &set);
    assert_int_equal (cpulist_format (&set, buf, sizeof (buf)), 0);
    assert_int_equal (strncmp (buf, "0,2,4,", 6), 0);
    assert_int_equal (cpulist_parse ("0-15", &set), 0);
    errno = 0;
    assert_int_equal (cpulist_format (&set, small, sizeof (small)), -1);
    assert_int_equal (errno, EOVERFLOW);
    assert_string_equal (small, "");
    assert_int_equal (cpulist_format (&set, buf, 0), -1);
    assert_int_equal (errno, EINVAL);
}

static void test_nth (void **state)
{
    cpu_set_t set;

    assert_int_equal (cpulist_parse ("2,5-6,9", &set), 0);
    assert_int_equal (cpulist_nth (&set, 0), 2);
    assert_int_equal (cpulist_nth (&set, 1), 5);
    assert_int_equal (cpulist_nth (&set, 2), 6);
    assert_int_equal (cpulist_nth (&set, 3), 9);
    errno = 0;
    assert_int_equal (cpulist_nth (&set, 4), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (cpulist_nth (&set, -1), -1);
    assert_int_equal (cpulist_nth (NULL, 0), -1);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_parse_format),
        cmocka_unit_test (test_parse_errors),
        cmocka_unit_test (test_format_edges),
        cmocka_unit_test (test_nth),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
