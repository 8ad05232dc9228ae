/* test/pmi_dl.c - unit tests for pmi_dl.c, against test/fakepmi.c */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <dlfcn.h>
#include "src/common/libpmi/pmi_dl.h"

static void *fake;
static void (*fake_set)(const char *what, int val);
static int (*fake_count)(const char *what);

static int setup (void **state)
{
    if (!(fake = dlopen (FAKEPMI_PATH, RTLD_NOW | RTLD_LOCAL)))
        return -1;
    *(void **)&fake_set = dlsym (fake, "fakepmi_set");
    *(void **)&fake_count = dlsym (fake, "fakepmi_count");
    return fake_set && fake_count ? 0 : -1;
}

static int teardown (void **state)
{
    dlclose (fake);
    return 0;
}

static void test_basic (void **state)
{
    char err[160] = "";
    char buf[64];
    int ranks[4];
    pmi_dl_t *dl = pmi_dl_create (FAKEPMI_PATH, err, sizeof (err));

    assert_non_null (dl);
    assert_int_equal (fake_count ("init"), 1);
    assert_int_equal (pmi_dl_rank (dl), 1);
    assert_int_equal (pmi_dl_size (dl), 4);
    assert_string_equal (pmi_dl_kvsname (dl), "fakekvs");
    assert_int_equal (pmi_dl_put (dl, "k", "v v"), 0);
    assert_int_equal (pmi_dl_commit (dl), 0);
    assert_int_equal (fake_count ("commit"), 1);
    assert_int_equal (pmi_dl_barrier (dl), 0);
    assert_int_equal (pmi_dl_get (dl, "k", buf, sizeof (buf)), 0);
    assert_string_equal (buf, "v v");
    assert_int_equal (pmi_dl_get (dl, "missing", buf, sizeof (buf)), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (pmi_dl_get (dl, "k", buf, 0), -1);
    assert_int_equal (errno, EINVAL);

    /* clique: fakepmi returns ranks[0] rather than PMI_SUCCESS, like MPICH */
    assert_int_equal (pmi_dl_clique (dl, ranks, 4), 2);
    assert_int_equal (ranks[0], 1);
    assert_int_equal (ranks[1], 3);
    ranks[0] = -1;
    assert_int_equal (pmi_dl_clique (dl, ranks, 1), 2);
    assert_int_equal (ranks[0], 1);
    assert_int_equal (pmi_dl_clique (dl, NULL, 0), 2);
    fake_set ("no_clique", 1);
    assert_int_equal (pmi_dl_clique (dl, ranks, 4), -1);
    assert_int_equal (errno, EIO);
    fake_set ("no_clique", 0);

    fake_set ("fail_barrier", 1);
    assert_int_equal (pmi_dl_barrier (dl), -1);
    assert_int_equal (errno, EIO);
    fake_set ("fail_barrier", 0);

    assert_int_equal (pmi_dl_abort (dl, 3, NULL), 0);
    assert_int_equal (fake_count ("abort"), 1);
    assert_int_equal (pmi_dl_finalize (dl), 0);
    assert_int_equal (fake_count ("finalize"), 1);
    pmi_dl_destroy (dl);
    pmi_dl_destroy (NULL);

    assert_int_equal (pmi_dl_put (NULL, "k", "v"), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (pmi_dl_rank (NULL), -1);
}

static void test_errors (void **state)
{
    char err[160] = "";

    assert_null (pmi_dl_create ("/nonexistent/libpmi.so", err, sizeof (err)));
    assert_int_equal (errno, ENOENT);
    assert_non_null (strstr (err, "cannot load PMI library /nonexistent/libpmi.so"));

    assert_null (pmi_dl_create ("libm.so.6", err, sizeof (err)));
    assert_int_equal (errno, ELIBBAD);
    assert_string_equal (err, "PMI library libm.so.6 lacks PMI_Init");

    assert_null (pmi_dl_create (NULL, err, sizeof (err)));
    assert_int_equal (errno, EINVAL);
    assert_null (pmi_dl_create ("", NULL, 0));
    assert_int_equal (errno, EINVAL);

    fake_set ("fail_init", 1);
    assert_null (pmi_dl_create (FAKEPMI_PATH, err, sizeof (err)));
    assert_int_equal (errno, EIO);
    assert_non_null (strstr (err, "PMI_Init failed"));
    fake_set ("fail_init", 0);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_basic),
        cmocka_unit_test (test_errors),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, setup, teardown);
}
