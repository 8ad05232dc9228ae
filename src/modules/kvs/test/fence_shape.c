/* test/fence_shape.c - the table of subtree counts learned from fences
 * (fence_shape.c): lookups by user and size, the spans learned with the
 * counts, what is ignored, updates, the listing (most recent first) and
 * replacement of the least recently learned when full.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include "src/modules/kvs/fence_shape.h"

static void test_learn_expect (void **state)
{
    fence_shape_t *fs = fence_shape_create ();

    assert_non_null (fs);
    assert_int_equal (fence_shape_expect (fs, 100, 32, NULL), 0);
    fence_shape_learn (fs, 100, 32, 4, 0.);
    assert_int_equal (fence_shape_expect (fs, 100, 32, NULL), 4);
    assert_int_equal (fence_shape_expect (fs, 101, 32, NULL), 0);    /* other user */
    assert_int_equal (fence_shape_expect (fs, 100, 31, NULL), 0);    /* other size */
    fence_shape_learn (fs, 101, 32, 8, 0.);
    assert_int_equal (fence_shape_expect (fs, 101, 32, NULL), 8);
    assert_int_equal (fence_shape_expect (fs, 100, 32, NULL), 4);
    /* the latest count wins */
    fence_shape_learn (fs, 100, 32, 6, 0.);
    assert_int_equal (fence_shape_expect (fs, 100, 32, NULL), 6);
    /* not collective, or a count that cannot be: ignored */
    fence_shape_learn (fs, 100, 1, 1, 0.);
    assert_int_equal (fence_shape_expect (fs, 100, 1, NULL), 0);
    fence_shape_learn (fs, 100, 32, 0, 0.);
    fence_shape_learn (fs, 100, 32, -3, 0.);
    fence_shape_learn (fs, 100, 32, 33, 0.);
    assert_int_equal (fence_shape_expect (fs, 100, 32, NULL), 6);
    fence_shape_learn (NULL, 100, 32, 1, 0.);
    assert_int_equal (fence_shape_expect (NULL, 100, 32, NULL), 0);
    fence_shape_destroy (fs);
}

/* The span is kept with the count; a span that cannot be is ignored. */
static void test_span (void **state)
{
    fence_shape_t *fs = fence_shape_create ();
    double span = -1;

    assert_non_null (fs);
    assert_int_equal (fence_shape_expect (fs, 7, 64, &span), 0);
    assert_true (span == 0);
    fence_shape_learn (fs, 7, 64, 16, 0.25);
    assert_int_equal (fence_shape_expect (fs, 7, 64, &span), 16);
    assert_true (span == 0.25);
    fence_shape_learn (fs, 7, 64, 12, 0.5);
    assert_int_equal (fence_shape_expect (fs, 7, 64, &span), 12);
    assert_true (span == 0.5);
    fence_shape_learn (fs, 7, 64, 3, -1.);
    fence_shape_learn (fs, 7, 64, 3, NAN);
    fence_shape_learn (fs, 7, 64, 3, INFINITY);
    assert_int_equal (fence_shape_expect (fs, 7, 64, &span), 12);
    assert_true (span == 0.5);
    span = -1;
    assert_int_equal (fence_shape_expect (NULL, 7, 64, &span), 0);
    assert_true (span == 0);
    fence_shape_destroy (fs);
}

struct listing {
    int n;
    int nprocs[FENCE_SHAPE_MAX + 1];
    int count[FENCE_SHAPE_MAX + 1];
    double span[FENCE_SHAPE_MAX + 1];
};

static void list_cb (uint32_t userid, int nprocs, int count, double span, void *arg)
{
    struct listing *l = arg;
    assert_true (l->n <= FENCE_SHAPE_MAX);
    assert_int_equal (userid, 9);
    l->nprocs[l->n] = nprocs;
    l->count[l->n] = count;
    l->span[l->n] = span;
    l->n++;
}

/* Every shape once, the most recently learned first. */
static void test_foreach (void **state)
{
    fence_shape_t *fs = fence_shape_create ();
    struct listing l = { 0 };

    assert_non_null (fs);
    fence_shape_foreach (fs, list_cb, &l);
    assert_int_equal (l.n, 0);
    fence_shape_learn (fs, 9, 8, 2, 0.5);
    fence_shape_learn (fs, 9, 16, 4, 1.5);
    fence_shape_learn (fs, 9, 32, 8, 2.5);
    fence_shape_learn (fs, 9, 8, 3, 0.25);     /* 8 again: now the latest */
    fence_shape_foreach (fs, list_cb, &l);
    assert_int_equal (l.n, 3);
    assert_int_equal (l.nprocs[0], 8);
    assert_int_equal (l.count[0], 3);
    assert_true (l.span[0] == 0.25);
    assert_int_equal (l.nprocs[1], 32);
    assert_int_equal (l.nprocs[2], 16);
    assert_int_equal (l.count[2], 4);
    /* a full table lists FENCE_SHAPE_MAX */
    for (int n = 100; n < 100 + 2 * FENCE_SHAPE_MAX; n++)
        fence_shape_learn (fs, 9, n, 1, 0.);
    l.n = 0;
    fence_shape_foreach (fs, list_cb, &l);
    assert_int_equal (l.n, FENCE_SHAPE_MAX);
    assert_int_equal (l.nprocs[0], 100 + 2 * FENCE_SHAPE_MAX - 1);
    fence_shape_foreach (NULL, list_cb, &l);
    fence_shape_foreach (fs, NULL, NULL);
    fence_shape_destroy (fs);
}

static void test_replacement (void **state)
{
    fence_shape_t *fs = fence_shape_create ();

    assert_non_null (fs);
    for (int n = 2; n < 2 + FENCE_SHAPE_MAX; n++)
        fence_shape_learn (fs, 0, n, 1, 0.);
    for (int n = 2; n < 2 + FENCE_SHAPE_MAX; n++)
        assert_int_equal (fence_shape_expect (fs, 0, n, NULL), 1);
    /* size 2 learned again: size 3 is now the least recent */
    fence_shape_learn (fs, 0, 2, 2, 0.);
    fence_shape_learn (fs, 0, 1000, 5, 0.);
    assert_int_equal (fence_shape_expect (fs, 0, 1000, NULL), 5);
    assert_int_equal (fence_shape_expect (fs, 0, 2, NULL), 2);
    assert_int_equal (fence_shape_expect (fs, 0, 3, NULL), 0);
    for (int n = 4; n < 2 + FENCE_SHAPE_MAX; n++)
        assert_int_equal (fence_shape_expect (fs, 0, n, NULL), 1);
    fence_shape_destroy (fs);
}

static void test_destroy_null (void **state)
{
    errno = 42;
    fence_shape_destroy (NULL);
    assert_int_equal (errno, 42);
    fence_shape_t *fs = fence_shape_create ();
    assert_non_null (fs);
    errno = 43;
    fence_shape_destroy (fs);
    assert_int_equal (errno, 43);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_learn_expect),
        cmocka_unit_test (test_span),
        cmocka_unit_test (test_foreach),
        cmocka_unit_test (test_replacement),
        cmocka_unit_test (test_destroy_null),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
