/* test/decimal.c - decimal_u32 and decimal_u32_len against snprintf, at the edges and on
 * random values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/common/libutil/decimal.h"

static void check (uint32_t v)
{
    char got[DECIMAL_U32_MAX], want[32];
    size_t n = decimal_u32 (got, v);
    snprintf (want, sizeof (want), "%u", v);
    assert_string_equal (got, want);
    assert_int_equal (n, strlen (want));
    assert_int_equal (decimal_u32_len (v), n);
}

static void test_edges (void **state)
{
    const uint32_t v[] = { 0, 1, 9, 10, 99, 100, 4294967295u, 4294967294u,
                           1000000000u, 999999999u };
    for (size_t i = 0; i < sizeof (v) / sizeof (v[0]); i++)
        check (v[i]);
}

static void test_random (void **state)
{
    srand (7);
    for (int i = 0; i < 100000; i++)
        check (((uint32_t)rand () << 16) ^ (uint32_t)rand ());
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_edges),
        cmocka_unit_test (test_random),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
