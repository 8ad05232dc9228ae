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

/* Many descriptors: each watcher sees its own fd, once per byte, and
 * watchers stopped or destroyed by others' callbacks are not called.
 */
#define NPIPES 400     /* 800 descriptors: under a 1024 limit, over one epoll batch */
struct many {
    canopy_watcher_t *w[NPIPES];
    int fd[NPIPES][2];
    int seen[NPIPES];
    int total;
};

static void many_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct many *m = arg;
    char c;
    int i;
    for (i = 0; i < NPIPES; i++)
        if (m->w[i] == w)
            break;
    assert_true (i < NPIPES);
    assert_true (revents & CANOPY_POLLIN);
    assert_int_equal (read (m->fd[i][0], &c, 1), 1);
    assert_int_equal ((unsigned char)c, i % 256);
    m->seen[i]++;
    m->total++;
    /* even watchers destroy their odd neighbour before it can run */
    if (i % 2 == 0 && m->w[i + 1]) {
        canopy_watcher_destroy (m->w[i + 1]);
        m->w[i + 1] = NULL;
    }
    canopy_watcher_stop (w);
}

static void test_many_fds (void **state)
{
    canopy_reactor_t *r = canopy_reactor_create ();
    struct many *m = calloc (1, sizeof (*m));
    for (int i = 0; i < NPIPES; i++) {
        char c = i % 256;
        assert_int_equal (pipe (m->fd[i]), 0);
        assert_non_null ((m->w[i] = canopy_fd_watcher_create (r, m->fd[i][0],
                                                             CANOPY_POLLIN, many_cb, m)));
        canopy_watcher_start (m->w[i]);
        assert_int_equal (write (m->fd[i][1], &c, 1), 1);
    }
    assert_int_equal (canopy_reactor_run (r, 0), 0);
    /* every even one ran exactly once; an odd one ran only if it came
     * before its even neighbour in the same pass
     */
    for (int i = 0; i < NPIPES; i += 2)
        assert_int_equal (m->seen[i], 1);
    for (int i = 1; i < NPIPES; i += 2)
        assert_true (m->seen[i] <= 1);
    /* restart the survivors: the ones already read have nothing to say */
    for (int i = 0; i < NPIPES; i++) {
        if (m->w[i])
            canopy_watcher_start (m->w[i]);
    }
    assert_int_equal (canopy_reactor_run (r, CANOPY_REACTOR_NOWAIT), 0);
    for (int i = 0; i < NPIPES; i += 2)
        assert_int_equal (m->seen[i], 1);
    for (int i = 0; i < NPIPES; i++) {
        canopy_watcher_destroy (m->w[i]);
        close (m->fd[i][0]);
        close (m->fd[i][1]);
    }
    free (m);
    canopy_reactor_destroy (r);
}

static int hup_revents, same_a, same_b;

static void hup_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    hup_revents = revents;
    canopy_watcher_stop (w);
}

static void same_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    int *count = arg;
    (*count)++;
    canopy_watcher_stop (w);
}

static void test_fd_edges (void **state)
{
    canopy_reactor_t *r = canopy_reactor_create ();
    int p[2];

    /* a writer that went away is reported as an error, as zmq_poll does */
    assert_int_equal (pipe (p), 0);
    close (p[1]);
    canopy_watcher_t *w = canopy_fd_watcher_create (r, p[0], CANOPY_POLLIN, hup_cb, NULL);
    canopy_watcher_start (w);
    assert_int_equal (canopy_reactor_run (r, 0), 0);
    assert_true (hup_revents & CANOPY_POLLERR);
    canopy_watcher_destroy (w);
    close (p[0]);

    /* two watchers on one descriptor both work (the second is polled) */
    assert_int_equal (pipe (p), 0);
    assert_int_equal (write (p[1], "x", 1), 1);
    canopy_watcher_t *a = canopy_fd_watcher_create (r, p[0], CANOPY_POLLIN, same_cb, &same_a);
    canopy_watcher_t *b = canopy_fd_watcher_create (r, p[0], CANOPY_POLLIN, same_cb, &same_b);
    canopy_watcher_start (a);
    canopy_watcher_start (b);
    assert_int_equal (canopy_reactor_run (r, 0), 0);
    assert_int_equal (same_a, 1);
    assert_int_equal (same_b, 1);
    canopy_watcher_destroy (a);
    canopy_watcher_destroy (b);

    /* a descriptor closed under an active watcher, its number reused by a
     * new watcher: only the new one runs
     */
    int q[2];
    same_a = same_b = 0;
    a = canopy_fd_watcher_create (r, p[0], CANOPY_POLLIN, same_cb, &same_a);
    canopy_watcher_start (a);
    int num = p[0];
    close (p[0]);
    close (p[1]);
    assert_int_equal (pipe (q), 0);
    if (q[0] != num) {          /* make the number match */
        assert_int_equal (dup2 (q[0], num), num);
        close (q[0]);
        q[0] = num;
    }
    b = canopy_fd_watcher_create (r, q[0], CANOPY_POLLIN, same_cb, &same_b);
    canopy_watcher_stop (a);    /* its fd is gone: harmless */
    canopy_watcher_destroy (a);
    canopy_watcher_start (b);
    assert_int_equal (write (q[1], "y", 1), 1);
    assert_int_equal (canopy_reactor_run (r, 0), 0);
    assert_int_equal (same_a, 0);
    assert_int_equal (same_b, 1);
    /* changing events while active */
    canopy_watcher_set_events (b, CANOPY_POLLIN | CANOPY_POLLOUT);
    canopy_watcher_destroy (b);
    close (q[0]);
    close (q[1]);
    canopy_reactor_destroy (r);
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
        cmocka_unit_test (test_many_fds),
        cmocka_unit_test (test_fd_edges),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
