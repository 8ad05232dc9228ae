/* test/reactor.c - unit tests for reactor.c: timers, fd and zmq watchers,
 * idle/prepare/check, stop, unref, and destroying watchers from callbacks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <zmq.h>
#include <canopy/reactor.h>

static int order[8];
static int norder;

static void timer_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    order[norder++] = (int)(intptr_t)arg;
}

static void test_timers (void **state)
{
    canopy_reactor_t *r = canopy_reactor_create ();
    canopy_watcher_t *w[3];
    norder = 0;
    w[0] = canopy_timer_watcher_create (r, 0.03, 0, timer_cb, (void *)3);
    w[1] = canopy_timer_watcher_create (r, 0.01, 0, timer_cb, (void *)1);
    w[2] = canopy_timer_watcher_create (r, 0.02, 0, timer_cb, (void *)2);
    for (int i = 0; i < 3; i++)
        canopy_watcher_start (w[i]);
    assert_int_equal (canopy_reactor_run (r, 0), 0);    /* returns: none left */
    assert_int_equal (norder, 3);
    assert_int_equal (order[0], 1);
    assert_int_equal (order[1], 2);
    assert_int_equal (order[2], 3);
    for (int i = 0; i < 3; i++)
        canopy_watcher_destroy (w[i]);
    canopy_reactor_destroy (r);
}

static int repeat_count;
static void repeat_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    if (++repeat_count == 5)
        canopy_watcher_destroy (w);     /* destroy self */
}

static void test_repeat_destroy_self (void **state)
{
    canopy_reactor_t *r = canopy_reactor_create ();
    canopy_watcher_t *w = canopy_timer_watcher_create (r, 0, 0.001, repeat_cb, NULL);
    repeat_count = 0;
    canopy_watcher_start (w);
    assert_int_equal (canopy_reactor_run (r, 0), 0);
    assert_int_equal (repeat_count, 5);
    canopy_reactor_destroy (r);
}

struct fdctx {
    int fd;
    int reads;
    canopy_watcher_t *other;
};

static void fd_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct fdctx *ctx = arg;
    char c;
    assert_true (revents & CANOPY_POLLIN);
    assert_int_equal (read (ctx->fd, &c, 1), 1);
    if (++ctx->reads == 3) {
        canopy_watcher_destroy (ctx->other);    /* destroy another watcher */
        canopy_reactor_stop (r);
    }
}

static void test_fd_and_stop (void **state)
{
    canopy_reactor_t *r = canopy_reactor_create ();
    int p[2];
    struct fdctx ctx = { 0 };
    assert_int_equal (pipe (p), 0);
    assert_int_equal (write (p[1], "abc", 3), 3);
    ctx.fd = p[0];
    canopy_watcher_t *w = canopy_fd_watcher_create (r, p[0], CANOPY_POLLIN, fd_cb, &ctx);
    ctx.other = canopy_timer_watcher_create (r, 100, 0, timer_cb, NULL);
    canopy_watcher_start (ctx.other);
    canopy_watcher_start (w);
    assert_int_equal (canopy_reactor_run (r, 0), 0);
    assert_int_equal (ctx.reads, 3);
    canopy_watcher_destroy (w);
    close (p[0]);
    close (p[1]);
    canopy_reactor_destroy (r);
}

static int idle_count, prep_count, check_count;
static void idle_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    if (++idle_count == 10)
        canopy_watcher_stop (w);
}
static void prep_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    prep_count++;
}
static void check_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    check_count++;
}

static void test_idle_prepare_check (void **state)
{
    canopy_reactor_t *r = canopy_reactor_create ();
    canopy_watcher_t *i = canopy_idle_watcher_create (r, idle_cb, NULL);
    canopy_watcher_t *p = canopy_prepare_watcher_create (r, prep_cb, NULL);
    canopy_watcher_t *c = canopy_check_watcher_create (r, check_cb, NULL);
    canopy_watcher_unref (p);
    canopy_watcher_unref (c);
    canopy_watcher_start (i);
    canopy_watcher_start (p);
    canopy_watcher_start (c);
    idle_count = prep_count = check_count = 0;
    assert_int_equal (canopy_reactor_run (r, 0), 0);
    assert_int_equal (idle_count, 10);
    assert_int_equal (prep_count, 10);
    assert_int_equal (check_count, 10);
    canopy_watcher_destroy (i);
    canopy_watcher_destroy (p);
    canopy_watcher_destroy (c);
    canopy_reactor_destroy (r);
}

static void test_unref_and_nowait (void **state)
{
    canopy_reactor_t *r = canopy_reactor_create ();
    canopy_watcher_t *w = canopy_timer_watcher_create (r, 100, 0, timer_cb, NULL);
    canopy_watcher_start (w);
    canopy_watcher_unref (w);
    /* only an unreferenced watcher: run returns at once */
    assert_int_equal (canopy_reactor_run (r, 0), 0);
    canopy_watcher_ref (w);
    assert_true (canopy_watcher_is_active (w));
    assert_int_equal (canopy_reactor_run (r, CANOPY_REACTOR_NOWAIT), 0);
    canopy_watcher_destroy (w);
    canopy_reactor_destroy (r);
}

static void stop_error_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    canopy_reactor_stop_error (r);
}

static void test_stop_error (void **state)
{
    canopy_reactor_t *r = canopy_reactor_create ();
    canopy_watcher_t *w = canopy_timer_watcher_create (r, 0, 0, stop_error_cb, NULL);
    canopy_watcher_start (w);
    assert_int_equal (canopy_reactor_run (r, 0), -1);
    canopy_watcher_destroy (w);
    canopy_reactor_destroy (r);
}

static void zmq_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    char buf[16];
    assert_true (zmq_recv (arg, buf, sizeof (buf), 0) > 0);
    canopy_reactor_stop (r);
}

static void test_zmq (void **state)
{
    void *ctx = zmq_ctx_new ();
    void *a = zmq_socket (ctx, ZMQ_PAIR);
    void *b = zmq_socket (ctx, ZMQ_PAIR);
    assert_int_equal (zmq_bind (a, "inproc://r"), 0);
    assert_int_equal (zmq_connect (b, "inproc://r"), 0);
    canopy_reactor_t *r = canopy_reactor_create ();
    canopy_watcher_t *w = canopy_zmq_watcher_create (r, b, CANOPY_POLLIN, zmq_cb, b);
    canopy_watcher_start (w);
    assert_int_equal (zmq_send (a, "hi", 2, 0), 2);
    assert_int_equal (canopy_reactor_run (r, 0), 0);
    canopy_watcher_destroy (w);
    canopy_reactor_destroy (r);
    zmq_close (a);
    zmq_close (b);
    zmq_ctx_term (ctx);
}

static void test_invalid (void **state)
{
    assert_null (canopy_fd_watcher_create (NULL, 0, 0, timer_cb, NULL));
    assert_null (canopy_timer_watcher_create (NULL, 1, 0, timer_cb, NULL));
    canopy_reactor_t *r = canopy_reactor_create ();
    assert_null (canopy_fd_watcher_create (r, -1, 0, timer_cb, NULL));
    assert_null (canopy_timer_watcher_create (r, -1, 0, timer_cb, NULL));
    canopy_watcher_destroy (NULL);
    canopy_watcher_start (NULL);
    canopy_reactor_destroy (r);
    canopy_reactor_destroy (NULL);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_invalid),
        cmocka_unit_test (test_timers),
        cmocka_unit_test (test_repeat_destroy_self),
        cmocka_unit_test (test_fd_and_stop),
        cmocka_unit_test (test_idle_prepare_check),
        cmocka_unit_test (test_unref_and_nowait),
        cmocka_unit_test (test_stop_error),
        cmocka_unit_test (test_zmq),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
