/* test/future.c - unit tests for future.c (no handle involved). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <canopy/future.h>
#include <canopy/reactor.h>

static void test_basic (void **state)
{
    canopy_future_t *f = canopy_future_create (NULL, NULL);
    const void *result;
    assert_false (canopy_future_is_ready (f));
    /* no handle, no reactor: waiting can never succeed */
    assert_int_equal (canopy_future_wait_for (f, 0), -1);
    assert_int_equal (errno, EDEADLK);
    canopy_future_fulfill (f, strdup ("hello"), free);
    assert_true (canopy_future_is_ready (f));
    assert_int_equal (canopy_future_get (f, &result), 0);
    assert_string_equal (result, "hello");
    canopy_future_reset (f);
    assert_false (canopy_future_is_ready (f));
    canopy_future_fulfill_error (f, ENOENT, "no such thing");
    assert_int_equal (canopy_future_get (f, &result), -1);
    assert_int_equal (errno, ENOENT);
    assert_string_equal (canopy_future_error_string (f), "no such thing");
    canopy_future_destroy (f);
    canopy_future_destroy (NULL);
}

static void test_aux (void **state)
{
    canopy_future_t *f = canopy_future_create (NULL, NULL);
    assert_int_equal (canopy_future_aux_set (f, "x", strdup ("v"), free), 0);
    assert_string_equal (canopy_future_aux_get (f, "x"), "v");
    assert_null (canopy_future_aux_get (f, "y"));
    assert_int_equal (errno, ENOENT);
    /* several items; setting a name again replaces (and frees) its value */
    assert_int_equal (canopy_future_aux_set (f, "y", strdup ("w"), free), 0);
    assert_int_equal (canopy_future_aux_set (f, "z", NULL, NULL), 0);
    assert_int_equal (canopy_future_aux_set (f, "x", strdup ("v2"), free), 0);
    assert_string_equal (canopy_future_aux_get (f, "x"), "v2");
    assert_string_equal (canopy_future_aux_get (f, "y"), "w");
    assert_null (canopy_future_aux_get (f, "z"));
    assert_int_equal (canopy_future_aux_set (f, NULL, NULL, NULL), -1);
    assert_int_equal (errno, EINVAL);
    assert_null (canopy_future_aux_get (NULL, "x"));
    canopy_future_destroy (f);      /* frees "w" and "v2" (ASan/valgrind) */
}

static int calls;
static void cont_cb (canopy_future_t *f, void *arg)
{
    const void *result;
    calls++;
    if (canopy_future_get (f, &result) == 0 && result && !strcmp (result, "last"))
        canopy_future_destroy (f);      /* destroy inside the continuation */
    else
        canopy_future_reset (f);
}

static void fulfill_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    canopy_future_t *f = arg;
    canopy_future_fulfill (f, strdup ("one"), free);
    canopy_future_fulfill (f, strdup ("two"), free);
    canopy_future_fulfill (f, strdup ("last"), free);
}

static void test_then_stream (void **state)
{
    canopy_reactor_t *r = canopy_reactor_create ();
    canopy_future_t *f = canopy_future_create (NULL, NULL);
    canopy_future_set_reactor (f, r);
    calls = 0;
    assert_int_equal (canopy_future_then (f, -1, cont_cb, NULL), 0);
    canopy_watcher_t *w = canopy_timer_watcher_create (r, 0.001, 0, fulfill_cb, f);
    canopy_watcher_start (w);
    assert_int_equal (canopy_reactor_run (r, 0), 0);
    assert_int_equal (calls, 3);
    canopy_watcher_destroy (w);
    canopy_reactor_destroy (r);
}

static int timeout_errno;
static void timeout_cb (canopy_future_t *f, void *arg)
{
    timeout_errno = canopy_future_get (f, NULL) < 0 ? errno : 0;
    canopy_future_destroy (f);
}

static void test_then_timeout (void **state)
{
    canopy_reactor_t *r = canopy_reactor_create ();
    canopy_future_t *f = canopy_future_create (NULL, NULL);
    canopy_future_set_reactor (f, r);
    timeout_errno = 0;
    assert_int_equal (canopy_future_then (f, 0.01, timeout_cb, NULL), 0);
    assert_int_equal (canopy_reactor_run (r, 0), 0);
    assert_int_equal (timeout_errno, ETIMEDOUT);
    canopy_reactor_destroy (r);
}

static void ready_cb (canopy_future_t *f, void *arg)
{
    (*(int *)arg)++;
}

static void test_then_ready (void **state)
{
    canopy_reactor_t *r = canopy_reactor_create ();
    canopy_future_t *f = canopy_future_create (NULL, NULL);
    int count = 0;
    canopy_future_set_reactor (f, r);
    canopy_future_fulfill (f, NULL, NULL);
    assert_int_equal (canopy_future_then (f, -1, ready_cb, &count), 0);
    assert_int_equal (count, 0);    /* never called from inside then() */
    assert_int_equal (canopy_reactor_run (r, 0), 0);
    assert_int_equal (count, 1);
    canopy_future_destroy (f);
    canopy_reactor_destroy (r);
}

static void test_wait_for_reactor (void **state)
{
    canopy_reactor_t *r = canopy_reactor_create ();
    canopy_future_t *f = canopy_future_create (NULL, NULL);
    canopy_future_set_reactor (f, r);
    canopy_watcher_t *w = canopy_timer_watcher_create (r, 0.01, 0, fulfill_cb, f);
    canopy_watcher_start (w);
    assert_int_equal (canopy_future_wait_for (f, 5), 0);
    const void *result;
    assert_int_equal (canopy_future_get (f, &result), 0);
    assert_string_equal (result, "one");
    canopy_future_destroy (f);
    canopy_watcher_destroy (w);
    /* timeout */
    f = canopy_future_create (NULL, NULL);
    canopy_future_set_reactor (f, r);
    w = canopy_timer_watcher_create (r, 10, 0, fulfill_cb, f);
    canopy_watcher_start (w);
    assert_int_equal (canopy_future_wait_for (f, 0.02), -1);
    assert_int_equal (errno, ETIMEDOUT);
    canopy_watcher_destroy (w);
    canopy_future_destroy (f);
    canopy_reactor_destroy (r);
}

static void test_composite (void **state)
{
    canopy_reactor_t *r = canopy_reactor_create ();
    canopy_future_t *all = canopy_future_wait_all_create ();
    canopy_future_t *a = canopy_future_create (NULL, NULL);
    canopy_future_t *b = canopy_future_create (NULL, NULL);
    canopy_future_set_reactor (a, r);
    canopy_future_set_reactor (b, r);
    assert_int_equal (canopy_future_push (all, "a", a), 0);
    assert_int_equal (canopy_future_push (all, "b", b), 0);
    assert_int_equal (canopy_future_push (all, "a", a), -1);
    assert_ptr_equal (canopy_future_get_child (all, "b"), b);
    canopy_future_fulfill (a, NULL, NULL);
    assert_false (canopy_future_is_ready (all));
    canopy_future_fulfill_error (b, EIO, NULL);
    assert_true (canopy_future_is_ready (all));
    assert_int_equal (canopy_future_get (b, NULL), -1);
    canopy_future_destroy (all);    /* destroys children */
    canopy_reactor_destroy (r);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_basic),
        cmocka_unit_test (test_aux),
        cmocka_unit_test (test_then_stream),
        cmocka_unit_test (test_then_timeout),
        cmocka_unit_test (test_then_ready),
        cmocka_unit_test (test_wait_for_reactor),
        cmocka_unit_test (test_composite),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
