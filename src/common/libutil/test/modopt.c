/* test/modopt.c - options from attributes then arguments: order, the
 * prefix, malformed arguments, and the setter's text in the error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <errno.h>
#include "src/common/libutil/modopt.h"

static const char *fake_attr (canopy_t *h, const char *name)
{
    if (!strcmp (name, "mod.a"))
        return "1";
    if (!strcmp (name, "mod.bad"))
        return "x";
    return NULL;
}

struct seen {
    char log[256];
};

static int set (void *arg, const char *name, const char *value,
                canopy_error_t *error)
{
    struct seen *s = arg;
    size_t n = strlen (s->log);
    snprintf (s->log + n, sizeof (s->log) - n, "%s=%s;", name, value);
    if (!strcmp (value, "x")) {
        snprintf (error->text, sizeof (error->text), "expected a number");
        return -1;
    }
    if (!strcmp (name, "quiet"))
        return -1;              /* fails without a sentence */
    return 0;
}

static void test_order (void **state)
{
    const char *names[] = { "a", "b", NULL };
    char *argv[] = { "b=2", "a=3", "c=" };
    struct seen s = { "" };
    canopy_error_t error;
    assert_int_equal (modopt_apply (NULL, fake_attr, "mod", names, 3, argv,
                                    set, &s, &error), 0);
    /* attributes first (only those set), then arguments in order */
    assert_string_equal (s.log, "a=1;b=2;a=3;c=;");
}

static void test_errors (void **state)
{
    const char *names[] = { "bad", NULL };
    struct seen s = { "" };
    canopy_error_t error;
    errno = 0;
    assert_int_equal (modopt_apply (NULL, fake_attr, "mod", names, 0, NULL,
                                    set, &s, &error), -1);
    assert_int_equal (errno, EINVAL);
    assert_string_equal (error.text, "bad attribute mod.bad: expected a number");

    char *noeq[] = { "novalue" };
    assert_int_equal (modopt_apply (NULL, NULL, "mod", NULL, 1, noeq, set, &s,
                                    &error), -1);
    assert_string_equal (error.text, "bad argument novalue: expected NAME=VALUE");
    char *noname[] = { "=1" };
    assert_int_equal (modopt_apply (NULL, NULL, "mod", NULL, 1, noname, set, &s,
                                    &error), -1);
    char *longname[] = { "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1" };
    assert_int_equal (modopt_apply (NULL, NULL, "mod", NULL, 1, longname, set,
                                    &s, &error), -1);
    char *quiet[] = { "quiet=1" };
    assert_int_equal (modopt_apply (NULL, NULL, "mod", NULL, 1, quiet, set, &s,
                                    &error), -1);
    assert_string_equal (error.text, "bad argument quiet=1");
    /* the first failure stops: nothing after it is set */
    char *two[] = { "n=x", "m=1" };
    s.log[0] = '\0';
    assert_int_equal (modopt_apply (NULL, NULL, "mod", NULL, 2, two, set, &s,
                                    &error), -1);
    assert_string_equal (s.log, "n=x;");
    assert_string_equal (error.text, "bad argument: expected a number");
    assert_int_equal (modopt_apply (NULL, NULL, "mod", NULL, 0, NULL, NULL, NULL,
                                    &error), -1);
    assert_int_equal (errno, EINVAL);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_order),
        cmocka_unit_test (test_errors),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
