/* test/runat.c - the initial program's environment, built before the
 * fork (a multithreaded broker's child may not allocate: the setenv it
 * used to call deadlocked it under ASan).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <stdlib.h>
#include "src/broker/runat.h"

static int count (char **v, const char *prefix)
{
    int n = 0;
    for (int i = 0; v[i]; i++)
        if (!strncmp (v[i], prefix, strlen (prefix)))
            n++;
    return n;
}

static void test_replace (void **state)
{
    char *env[] = { "A=1", "CANOPY_URI=old", "B=2", "CANOPY_URIX=keep", NULL };
    char **v = runat_environ (env, "local:///tmp/x/local-0");
    assert_non_null (v);
    assert_string_equal (v[0], "CANOPY_URI=local:///tmp/x/local-0");
    assert_int_equal (count (v, "CANOPY_URI="), 1);
    assert_int_equal (count (v, "A=1"), 1);
    assert_int_equal (count (v, "B=2"), 1);
    assert_int_equal (count (v, "CANOPY_URIX=keep"), 1);
    assert_null (v[4]);
    runat_environ_free (v);
}

static void test_empty (void **state)
{
    char *env[] = { NULL };
    char **v = runat_environ (env, "u");
    assert_string_equal (v[0], "CANOPY_URI=u");
    assert_null (v[1]);
    runat_environ_free (v);
    v = runat_environ (NULL, NULL);
    assert_string_equal (v[0], "CANOPY_URI=");
    runat_environ_free (v);
    runat_environ_free (NULL);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_replace),
        cmocka_unit_test (test_empty),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
