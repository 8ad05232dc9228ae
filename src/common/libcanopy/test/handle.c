/* test/handle.c - the client handle against a fake broker: a thread that
 * accepts one connection on a UNIX socket in a temporary directory and
 * answers requests by topic.  No real broker, no network.
 *
 *   echo.*     respond with the request payload
 *   slow.*     the same, 200 ms later
 *   err.*      respond ENOENT "no such key"
 *   stream.*   respond 3 times, then ENODATA
 *   evt.*      publish an event "hello.world" first, then respond
 *   attr.get   {"value":"7","immutable":true}
 *   call.*     send the client a request "client.unknown" first; the client
 *              must answer it with ENOSYS, which the fake then relays
 *   bye.*      close the connection without answering
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <canopy/canopy.h>
#include "src/common/libcanopy/msg_stream.h"

static char tmpdir[64];
static char sockpath[128];
static int listen_fd;
static pthread_t thread;

static void send_msg (int fd, const canopy_msg_t *msg)
{
    size_t size;
    void *buf = msg_frame_encode (msg, &size);
    assert_non_null (buf);
    assert_int_equal (send (fd, buf, size, MSG_NOSIGNAL), size);
    free (buf);
}

static canopy_msg_t *recv_msg (int fd, struct msg_instream *in)
{
    canopy_msg_t *msg;
    while (!(msg = msg_instream_next (in))) {
        if (errno != EAGAIN)
            return NULL;
        fd_set set;
        FD_ZERO (&set);
        FD_SET (fd, &set);
        select (fd + 1, &set, NULL, NULL, NULL);
        if (msg_instream_fill (in, fd) <= 0 && errno != EAGAIN)
            return NULL;
    }
    return msg;
}

static void respond (int fd, const canopy_msg_t *req, int errnum, const char *s)
{
    canopy_msg_t *rsp = canopy_response_derive (req, errnum);
    if (s)
        canopy_msg_set_string (rsp, s);
    send_msg (fd, rsp);
    canopy_msg_decref (rsp);
}

static void *fake_broker (void *arg)
{
    int fd = accept (listen_fd, NULL, NULL);
    struct msg_instream in;
    canopy_msg_t *msg;
    canopy_msg_t *pending_call = NULL;

    msg_instream_init (&in);
    while ((msg = recv_msg (fd, &in))) {
        const char *topic = canopy_msg_get_topic (msg);
        int type = canopy_msg_get_type (msg);
        if (type == CANOPY_MSGTYPE_RESPONSE) {
            /* the client's answer to our request: relay its errnum */
            int errnum = 0;
            canopy_msg_get_errnum (msg, &errnum);
            char buf[32];
            snprintf (buf, sizeof (buf), "{\"errnum\":%d}", errnum);
            respond (fd, pending_call, 0, buf);
            canopy_msg_decref (pending_call);
            pending_call = NULL;
        }
        else if (!strncmp (topic, "echo.", 5)) {
            const char *s = NULL;
            canopy_msg_get_string (msg, &s);
            respond (fd, msg, 0, s);
        }
        else if (!strncmp (topic, "slow.", 5)) {
            const char *s = NULL;
            canopy_msg_get_string (msg, &s);
            usleep (200 * 1000);
            respond (fd, msg, 0, s);
        }
        else if (!strncmp (topic, "err.", 4))
            respond (fd, msg, ENOENT, "no such key");
        else if (!strncmp (topic, "stream.", 7)) {
            for (int i = 0; i < 3; i++) {
                char buf[32];
                snprintf (buf, sizeof (buf), "{\"i\":%d}", i);
                respond (fd, msg, 0, buf);
            }
            respond (fd, msg, ENODATA, NULL);
        }
        else if (!strncmp (topic, "evt.", 4)) {
            canopy_msg_t *ev = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
            canopy_msg_set_topic (ev, "hello.world");
            canopy_msg_set_string (ev, "{\"x\":1}");
            send_msg (fd, ev);
            canopy_msg_decref (ev);
            respond (fd, msg, 0, "{}");
        }
        else if (!strcmp (topic, "attr.get"))
            respond (fd, msg, 0, "{\"value\":\"7\",\"immutable\":true}");
        else if (!strncmp (topic, "call.", 5)) {
            canopy_msg_t *req = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
            canopy_msg_set_topic (req, "client.unknown");
            canopy_msg_set_matchtag (req, 1);
            canopy_msg_set_rolemask (req, CANOPY_ROLE_OWNER);
            send_msg (fd, req);
            canopy_msg_decref (req);
            pending_call = canopy_msg_incref (msg);
        }
        else if (!strncmp (topic, "bye.", 4)) {
            canopy_msg_decref (msg);
            break;
        }
        canopy_msg_decref (msg);
    }
    canopy_msg_decref (pending_call);
    msg_instream_release (&in);
    close (fd);
    return NULL;
}

static int setup (void **state)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    snprintf (tmpdir, sizeof (tmpdir), "/tmp/canopy-test-XXXXXX");
    assert_non_null (mkdtemp (tmpdir));
    snprintf (sockpath, sizeof (sockpath), "%s/sock", tmpdir);
    strcpy (addr.sun_path, sockpath);
    listen_fd = socket (AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal (bind (listen_fd, (struct sockaddr *)&addr, sizeof (addr)), 0);
    assert_int_equal (listen (listen_fd, 4), 0);
    assert_int_equal (pthread_create (&thread, NULL, fake_broker, NULL), 0);
    return 0;
}

static int teardown (void **state)
{
    pthread_join (thread, NULL);
    close (listen_fd);
    unlink (sockpath);
    rmdir (tmpdir);
    return 0;
}

static canopy_t *h;

static void test_open_errors (void **state)
{
    canopy_error_t error;
    assert_null (canopy_open ("tcp://x", 0, &error));
    assert_int_equal (errno, EINVAL);
    assert_null (canopy_open ("local:///nonexistent/sock", 0, &error));
    assert_int_equal (errno, ENOENT);
    assert_non_null (strstr (error.text, "cannot connect"));
}

static void test_open (void **state)
{
    char uri[160];
    canopy_error_t error;
    snprintf (uri, sizeof (uri), "local://%s", sockpath);
    h = canopy_open (uri, 0, &error);
    assert_non_null (h);
}

static void test_rpc (void **state)
{
    canopy_future_t *f = canopy_rpc (h, "echo.x", "{\"a\":1}", CANOPY_NODEID_ANY, 0);
    int a;
    assert_non_null (f);
    assert_int_equal (canopy_rpc_get_unpack (f, "{s:i}", "a", &a), 0);
    assert_int_equal (a, 1);
    canopy_future_destroy (f);

    f = canopy_rpc (h, "err.x", NULL, CANOPY_NODEID_ANY, 0);
    assert_int_equal (canopy_rpc_get (f, NULL), -1);
    assert_int_equal (errno, ENOENT);
    assert_string_equal (canopy_future_error_string (f), "no such key");
    canopy_future_destroy (f);
}

/* A synchronous wait polls before it reads (connector_ops.poll_first):
 * its deadline still holds, the answer still comes after a timeout, and
 * an answer already in the socket is read even when the deadline is 0.
 */
static void test_wait_deadline (void **state)
{
    canopy_future_t *f = canopy_rpc (h, "slow.x", "{\"a\":2}", CANOPY_NODEID_ANY, 0);
    int a = 0;
    assert_non_null (f);
    errno = 0;
    assert_int_equal (canopy_future_wait_for (f, 0.05), -1);
    assert_int_equal (errno, ETIMEDOUT);
    assert_int_equal (canopy_rpc_get_unpack (f, "{s:i}", "a", &a), 0);
    assert_int_equal (a, 2);
    canopy_future_destroy (f);

    f = canopy_rpc (h, "echo.x", "{\"a\":3}", CANOPY_NODEID_ANY, 0);
    assert_non_null (f);
    usleep (100 * 1000);        /* the answer is in the socket by now */
    assert_int_equal (canopy_future_wait_for (f, 0.), 0);
    assert_int_equal (canopy_rpc_get_unpack (f, "{s:i}", "a", &a), 0);
    assert_int_equal (a, 3);
    canopy_future_destroy (f);
}

static void test_many_in_flight (void **state)
{
    canopy_future_t *f[100];
    for (int i = 0; i < 100; i++) {
        char buf[32];
        snprintf (buf, sizeof (buf), "{\"i\":%d}", i);
        assert_non_null ((f[i] = canopy_rpc (h, "echo.x", buf, 0, 0)));
    }
    for (int i = 99; i >= 0; i--) {     /* wait in reverse order */
        int v;
        assert_int_equal (canopy_rpc_get_unpack (f[i], "{s:i}", "i", &v), 0);
        assert_int_equal (v, i);
        canopy_future_destroy (f[i]);
    }
}

static void test_stream (void **state)
{
    canopy_future_t *f = canopy_rpc (h, "stream.x", "{}", 0, CANOPY_RPC_STREAMING);
    int i, n = 0;
    while (canopy_rpc_get_unpack (f, "{s:i}", "i", &i) == 0) {
        assert_int_equal (i, n);
        n++;
        canopy_future_reset (f);
    }
    assert_int_equal (errno, ENODATA);
    assert_int_equal (n, 3);
    canopy_future_destroy (f);
}

static int events_seen;
static void event_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    const char *topic;
    assert_int_equal (canopy_event_decode (msg, &topic, NULL), 0);
    assert_string_equal (topic, "hello.world");
    events_seen++;
    canopy_msg_handler_stop (mh);   /* nothing left: reactor returns */
}

static void test_requeue_event (void **state)
{
    /* the event arrives during a synchronous wait: it is requeued and
     * dispatched to a handler when the reactor runs
     */
    canopy_future_t *f = canopy_rpc (h, "evt.x", "{}", 0, 0);
    assert_int_equal (canopy_future_get (f, NULL), 0);
    canopy_future_destroy (f);
    canopy_msg_handler_t *mh = canopy_msg_handler_create (h, CANOPY_MATCH_EVENT,
                                                          event_cb, NULL);
    canopy_msg_handler_start (mh);
    events_seen = 0;
    assert_int_equal (canopy_reactor_run (canopy_get_reactor (h), 0), 0);
    assert_int_equal (events_seen, 1);
    canopy_msg_handler_destroy (mh);
}

static void then_cb (canopy_future_t *f, void *arg)
{
    int *count = arg;
    assert_int_equal (canopy_future_get (f, NULL), 0);
    (*count)++;
    canopy_future_destroy (f);
}

static void test_then (void **state)
{
    int count = 0;
    for (int i = 0; i < 10; i++) {
        canopy_future_t *f = canopy_rpc (h, "echo.x", "{}", 0, 0);
        assert_int_equal (canopy_future_then (f, 5, then_cb, &count), 0);
    }
    assert_int_equal (canopy_reactor_run (canopy_get_reactor (h), 0), 0);
    assert_int_equal (count, 10);
}

static void test_enosys_for_client (void **state)
{
    /* The fake sends us a request nobody handles; dispatch answers ENOSYS.
     * Dispatch only happens from the reactor, so wait with a continuation.
     */
    int count = 0;
    canopy_future_t *f = canopy_rpc (h, "call.x", "{}", 0, 0);
    canopy_msg_handler_t *dummy = canopy_msg_handler_create (h,
        (struct canopy_match){ .typemask = CANOPY_MSGTYPE_EVENT, .topic_glob = "none" },
        event_cb, NULL);
    canopy_msg_handler_start (dummy);   /* dispatch needs at least the reactor */
    canopy_msg_handler_stop (dummy);
    assert_int_equal (canopy_future_then (f, 5, then_cb, &count), 0);
    assert_int_equal (canopy_reactor_run (canopy_get_reactor (h), 0), 0);
    assert_int_equal (count, 1);
    canopy_msg_handler_destroy (dummy);
}

static void test_attr (void **state)
{
    uint32_t rank;
    assert_int_equal (canopy_get_rank (h, &rank), 0);
    assert_int_equal (rank, 7);
    assert_string_equal (canopy_attr_get (h, "rank"), "7");  /* cached */
}

static void test_disconnect (void **state)
{
    canopy_future_t *f1 = canopy_rpc (h, "bye.x", "{}", 0, 0);
    assert_int_equal (canopy_future_get (f1, NULL), -1);
    assert_int_equal (errno, ECONNRESET);
    canopy_future_destroy (f1);
    assert_null (canopy_rpc (h, "echo.x", "{}", 0, 0));
    assert_int_equal (errno, ECONNRESET);
    canopy_close (h);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_open_errors),
        cmocka_unit_test (test_open),
        cmocka_unit_test (test_rpc),
        cmocka_unit_test (test_wait_deadline),
        cmocka_unit_test (test_many_in_flight),
        cmocka_unit_test (test_stream),
        cmocka_unit_test (test_requeue_event),
        cmocka_unit_test (test_then),
        cmocka_unit_test (test_enosys_for_client),
        cmocka_unit_test (test_attr),
        cmocka_unit_test (test_disconnect),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, setup, teardown);
}
