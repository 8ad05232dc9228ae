/* test/direct.c - direct channels (direct.h) without a broker.
 *
 * A "module" thread runs a handle over a pair of message queues (as the
 * broker builds for a module) with a direct server for service "kvs", and
 * a "broker" thread stands in for the broker's socket: it answers every
 * request with {"via":"broker","topic":T}.  Clients are real handles from
 * canopy_open on the broker's path.
 *
 * The module answers:
 *   kvs.echo     {"via":"direct","userid":U,"rolemask":R,"sender":S}
 *   kvs.stream   3 responses, then ENODATA
 *   kvs.hold     nothing (the request is kept, to be lost)
 *   kvs.quit     stops the module's reactor (the server is then destroyed)
 *   kvs.burst    20 responses of 8 KiB in one go, then ENODATA; notes
 *                whether a disconnect was dispatched while it ran
 *   kvs.disconnect  records the sender
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
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <jansson.h>
#include <canopy/canopy.h>
#include "src/common/libcanopy/handle_private.h"
#include "src/common/libcanopy/msg_queue.h"
#include "src/common/libcanopy/msg_stream.h"
#include "src/common/libcanopy/direct.h"

static char tmpdir[64];
static char brokerpath[128];
static char directpath[160];
static char uri[160];

/* The fake broker */

static int broker_listen_fd = -1;
static int broker_stop_pipe[2];
static pthread_t broker_thread;

static void *broker_main (void *arg)
{
    struct pollfd pfd[18];
    struct msg_instream in[16];
    int nconn = 0;

    for (;;) {
        pfd[0] = (struct pollfd){ .fd = broker_stop_pipe[0], .events = POLLIN };
        pfd[1] = (struct pollfd){ .fd = broker_listen_fd, .events = POLLIN };
        for (int i = 0; i < nconn; i++)
            pfd[2 + i] = (struct pollfd){ .fd = pfd[2 + i].fd, .events = POLLIN };
        if (poll (pfd, 2 + nconn, -1) < 0)
            continue;
        if (pfd[0].revents)
            break;
        if ((pfd[1].revents & POLLIN) && nconn < 16) {
            int fd = accept4 (broker_listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd >= 0) {
                pfd[2 + nconn].fd = fd;
                msg_instream_init (&in[nconn]);
                nconn++;
            }
        }
        for (int i = 0; i < nconn; i++) {
            canopy_msg_t *req, *rsp;
            if (!(pfd[2 + i].revents & POLLIN) || pfd[2 + i].fd < 0)
                continue;
            if (msg_instream_fill (&in[i], pfd[2 + i].fd) == 0) {
                close (pfd[2 + i].fd);
                pfd[2 + i].fd = -1;
                continue;
            }
            while ((req = msg_instream_next (&in[i]))) {
                if (!canopy_msg_has_flag (req, CANOPY_MSGFLAG_NORESPONSE)
                    && (rsp = canopy_response_derive (req, 0))) {
                    json_t *o = json_pack ("{s:s s:s}", "via", "broker",
                                           "topic", canopy_msg_get_topic (req));
                    char *s = json_dumps (o, JSON_COMPACT);
                    (void)canopy_msg_set_string (rsp, s);
                    (void)msg_frame_send (pfd[2 + i].fd, rsp, false);
                    free (s);
                    json_decref (o);
                    canopy_msg_decref (rsp);
                }
                canopy_msg_decref (req);
            }
        }
    }
    for (int i = 0; i < nconn; i++) {
        if (pfd[2 + i].fd >= 0)
            close (pfd[2 + i].fd);
        msg_instream_release (&in[i]);
    }
    return NULL;
}

/* The module */

struct module {
    pthread_t thread;
    msg_queue_t *in, *out;
    canopy_t *h;
    struct direct_server *ds;
    canopy_msg_t *held;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool ready;
    char disconnected[64];
    int ndisconnects;
    int burst_saw_disconnect;       /* -1 until kvs.burst ran */
    size_t out_limit;               /* 0: the default */
};

static void echo_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    uint32_t userid = 0, rolemask = 0;
    (void)canopy_msg_get_userid (msg, &userid);
    (void)canopy_msg_get_rolemask (msg, &rolemask);
    canopy_respond_pack (h, msg, "{s:s s:i s:i s:s}", "via", "direct",
                         "userid", (int)userid, "rolemask", (int)rolemask,
                         "sender", canopy_msg_route_last (msg));
}

static void stream_cb (canopy_t *h, canopy_msg_handler_t *mh,
                       const canopy_msg_t *msg, void *arg)
{
    for (int i = 0; i < 3; i++)
        canopy_respond_pack (h, msg, "{s:i}", "i", i);
    canopy_respond_error (h, msg, ENODATA, NULL);
}

static void hold_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    struct module *m = arg;
    canopy_msg_decref (m->held);
    m->held = canopy_msg_incref ((canopy_msg_t *)msg);
}

static void burst_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct module *m = arg;
    static char big[8192];
    int before;

    pthread_mutex_lock (&m->lock);
    before = m->ndisconnects;
    pthread_mutex_unlock (&m->lock);
    memset (big, 'x', sizeof (big) - 1);
    for (int i = 0; i < 20; i++)
        canopy_respond_pack (h, msg, "{s:s}", "data", big);
    canopy_respond_error (h, msg, ENODATA, NULL);
    pthread_mutex_lock (&m->lock);
    m->burst_saw_disconnect = m->ndisconnects != before;
    pthread_mutex_unlock (&m->lock);
}

/* A response too large to frame (its payload alone is the limit; the
 * pages of the buffer are never touched, so it costs no memory).
 */
static void huge_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    canopy_msg_t *rsp = canopy_response_derive (msg, 0);
    void *data = malloc (CANOPY_MSG_SIZE_MAX);

    assert_non_null (rsp);
    assert_non_null (data);
    assert_int_equal (canopy_msg_set_payload_nocopy (rsp, data, CANOPY_MSG_SIZE_MAX), 0);
    assert_int_equal (canopy_send (h, rsp, 0), 0);
    canopy_msg_decref (rsp);
}

static void quit_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    canopy_respond (h, msg, NULL);
    canopy_reactor_stop (canopy_get_reactor (h));
}

static void disconnect_cb (canopy_t *h, canopy_msg_handler_t *mh,
                           const canopy_msg_t *msg, void *arg)
{
    struct module *m = arg;
    pthread_mutex_lock (&m->lock);
    snprintf (m->disconnected, sizeof (m->disconnected), "%s",
              canopy_msg_route_last (msg));
    m->ndisconnects++;
    pthread_cond_broadcast (&m->cond);
    pthread_mutex_unlock (&m->lock);
}

static const struct canopy_msg_handler_spec htab[] = {
    { CANOPY_MSGTYPE_REQUEST, "kvs.echo", echo_cb, CANOPY_ROLE_USER },
    { CANOPY_MSGTYPE_REQUEST, "kvs.stream", stream_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.hold", hold_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.quit", quit_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.burst", burst_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.huge", huge_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.disconnect", disconnect_cb, CANOPY_ROLE_ALL },
    CANOPY_MSGHANDLER_TABLE_END,
};

static void *module_main (void *arg)
{
    struct module *m = arg;
    canopy_msg_handler_t **handlers = NULL;
    canopy_error_t error;

    assert_non_null (canopy_get_reactor (m->h));
    assert_int_equal (canopy_msg_handler_addvec (m->h, htab, m, &handlers), 0);
    m->ds = direct_server_create (m->h, directpath, "kvs", 3, &error);
    if (m->out_limit)
        direct_server_set_out_limit (m->ds, m->out_limit);
    pthread_mutex_lock (&m->lock);
    m->ready = true;
    pthread_cond_broadcast (&m->cond);
    pthread_mutex_unlock (&m->lock);
    if (m->ds)
        (void)canopy_reactor_run (canopy_get_reactor (m->h), 0);
    canopy_msg_decref (m->held);
    m->held = NULL;
    direct_server_destroy (m->ds);
    canopy_msg_handler_delvec (handlers);
    return NULL;
}

static struct module *module_start_limit (size_t out_limit)
{
    struct module *m = calloc (1, sizeof (*m));
    assert_non_null (m);
    m->out_limit = out_limit;
    pthread_mutex_init (&m->lock, NULL);
    pthread_cond_init (&m->cond, NULL);
    m->burst_saw_disconnect = -1;
    assert_non_null ((m->in = msg_queue_create ()));
    assert_non_null ((m->out = msg_queue_create ()));
    assert_non_null ((m->h = handle_create (&connector_queue_ops,
                                            connector_queue_create (m->in, m->out), 0)));
    assert_int_equal (pthread_create (&m->thread, NULL, module_main, m), 0);
    pthread_mutex_lock (&m->lock);
    while (!m->ready)
        pthread_cond_wait (&m->cond, &m->lock);
    pthread_mutex_unlock (&m->lock);
    assert_non_null (m->ds);
    return m;
}

static struct module *module_start (void)
{
    return module_start_limit (0);
}

/* Stop through a request (the module's reactor is its own thread's). */
static void module_stop (struct module *m, canopy_t *client)
{
    canopy_future_t *f = canopy_rpc (client, "kvs.quit", NULL, CANOPY_NODEID_ANY, 0);
    assert_non_null (f);
    assert_int_equal (canopy_future_get (f, NULL), 0);
    canopy_future_destroy (f);
    assert_int_equal (pthread_join (m->thread, NULL), 0);
    canopy_close (m->h);
    pthread_mutex_destroy (&m->lock);
    pthread_cond_destroy (&m->cond);
    free (m);
}

/* Helpers */

static canopy_t *client_open (void)
{
    canopy_error_t error;
    canopy_t *h = canopy_open (uri, 0, &error);
    assert_non_null (h);
    return h;
}

/* Send topic to nodeid; return "via" of the answer (static buffer). */
static const char *via (canopy_t *h, const char *topic, uint32_t nodeid)
{
    static char buf[32];
    const char *v;
    canopy_future_t *f = canopy_rpc (h, topic, NULL, nodeid, 0);
    assert_non_null (f);
    assert_int_equal (canopy_rpc_get_unpack (f, "{s:s}", "via", &v), 0);
    snprintf (buf, sizeof (buf), "%s", v);
    canopy_future_destroy (f);
    return buf;
}

static int setup (void **state)
{
    struct sockaddr_un addr;

    snprintf (tmpdir, sizeof (tmpdir), "/tmp/test-direct.XXXXXX");
    assert_non_null (mkdtemp (tmpdir));
    snprintf (brokerpath, sizeof (brokerpath), "%s/local-3", tmpdir);
    assert_int_equal (direct_path (directpath, sizeof (directpath), brokerpath, "kvs"), 0);
    assert_string_equal (directpath + strlen (tmpdir), "/local-3-kvs");
    snprintf (uri, sizeof (uri), "local://%s", brokerpath);
    broker_listen_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true (broker_listen_fd >= 0);
    memset (&addr, 0, sizeof (addr));
    addr.sun_family = AF_UNIX;
    strcpy (addr.sun_path, brokerpath);
    assert_int_equal (bind (broker_listen_fd, (struct sockaddr *)&addr, sizeof (addr)), 0);
    assert_int_equal (listen (broker_listen_fd, 16), 0);
    assert_int_equal (pipe (broker_stop_pipe), 0);
    assert_int_equal (pthread_create (&broker_thread, NULL, broker_main, NULL), 0);
    return 0;
}

static int teardown (void **state)
{
    assert_int_equal (write (broker_stop_pipe[1], "x", 1), 1);
    pthread_join (broker_thread, NULL);
    close (broker_listen_fd);
    close (broker_stop_pipe[0]);
    close (broker_stop_pipe[1]);
    unlink (brokerpath);
    rmdir (tmpdir);
    return 0;
}

/* Tests */

static void test_path (void **state)
{
    char buf[200], big[150];
    assert_int_equal (direct_path (buf, sizeof (buf), "/run/x/local-0", "kvs"), 0);
    assert_string_equal (buf, "/run/x/local-0-kvs");
    memset (big, 'a', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    errno = 0;
    assert_int_equal (direct_path (buf, sizeof (buf), big, "kvs"), -1);
    assert_int_equal (errno, ENAMETOOLONG);
    assert_int_equal (direct_path (buf, 8, "/run/x", "kvs"), -1);
}

/* kvs.* for the local broker goes direct, with the broker's credentials
 * and a hop of its own; other services and other ranks go to the broker.
 */
static void test_routing_and_credentials (void **state)
{
    struct module *m = module_start ();
    canopy_t *h = client_open ();
    canopy_future_t *f;
    int userid, rolemask;
    const char *sender;

    f = canopy_rpc (h, "kvs.echo", NULL, CANOPY_NODEID_ANY, 0);
    assert_non_null (f);
    assert_int_equal (canopy_rpc_get_unpack (f, "{s:i s:i s:s}", "userid", &userid,
                                             "rolemask", &rolemask, "sender", &sender), 0);
    assert_int_equal (userid, (int)getuid ());
    assert_int_equal (rolemask, CANOPY_ROLE_OWNER | CANOPY_ROLE_LOCAL);
    assert_string_equal (sender, "3:d1");
    canopy_future_destroy (f);

    assert_string_equal (via (h, "other.echo", CANOPY_NODEID_ANY), "broker");
    assert_string_equal (via (h, "kvs.echo", 0), "broker");
    assert_string_equal (via (h, "kvsx.echo", CANOPY_NODEID_ANY), "broker");
    assert_string_equal (via (h, "kvs.echo", CANOPY_NODEID_UPSTREAM), "broker");
    assert_string_equal (via (h, "kvs.echo", CANOPY_NODEID_ANY), "direct");

    /* the owner may present other credentials (tests of guest access) */
    canopy_msg_t *req = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    assert_non_null (req);
    assert_int_equal (canopy_msg_set_topic (req, "kvs.echo"), 0);
    assert_int_equal (canopy_msg_set_userid (req, 4242), 0);
    assert_int_equal (canopy_msg_set_rolemask (req, CANOPY_ROLE_USER), 0);
    f = canopy_rpc_message (h, req, CANOPY_NODEID_ANY, 0);
    assert_non_null (f);
    assert_int_equal (canopy_rpc_get_unpack (f, "{s:i s:i}", "userid", &userid,
                                             "rolemask", &rolemask), 0);
    assert_int_equal (userid, 4242);
    assert_int_equal (rolemask, CANOPY_ROLE_USER | CANOPY_ROLE_LOCAL);
    canopy_future_destroy (f);
    canopy_msg_decref (req);

    struct direct_server_stats st;
    direct_server_get_stats (m->ds, &st);   /* counters only: racy is fine */
    assert_int_equal (st.accepted, 1);
    assert_true (st.requests >= 3);

    module_stop (m, h);
    canopy_close (h);
}

static void test_streaming (void **state)
{
    struct module *m = module_start ();
    canopy_t *h = client_open ();
    canopy_future_t *f = canopy_rpc (h, "kvs.stream", NULL, CANOPY_NODEID_ANY,
                                     CANOPY_RPC_STREAMING);
    int i;

    assert_non_null (f);
    for (int n = 0; n < 3; n++) {
        assert_int_equal (canopy_rpc_get_unpack (f, "{s:i}", "i", &i), 0);
        assert_int_equal (i, n);
        canopy_future_reset (f);
    }
    assert_int_equal (canopy_future_get (f, NULL), -1);
    assert_int_equal (errno, ENODATA);
    canopy_future_destroy (f);
    module_stop (m, h);
    canopy_close (h);
}

/* A client that goes away is reported with its hop. */
static void test_disconnect (void **state)
{
    struct module *m = module_start ();
    canopy_t *h = client_open ();
    canopy_t *h2 = client_open ();

    assert_string_equal (via (h, "kvs.echo", CANOPY_NODEID_ANY), "direct");
    assert_string_equal (via (h2, "kvs.echo", CANOPY_NODEID_ANY), "direct");
    canopy_close (h);
    pthread_mutex_lock (&m->lock);
    while (m->ndisconnects == 0)
        pthread_cond_wait (&m->cond, &m->lock);
    assert_string_equal (m->disconnected, "3:d1");
    pthread_mutex_unlock (&m->lock);
    module_stop (m, h2);
    canopy_close (h2);
}

/* The module goes away: an outstanding request gets ENOSYS, and so do
 * later ones while nobody listens (never the broker: a watch and its
 * unwatch must travel the same way); when a module listens again the
 * same client reconnects.
 */
static void test_module_lost (void **state)
{
    struct module *m = module_start ();
    canopy_t *h = client_open ();
    canopy_t *h2 = client_open ();
    canopy_future_t *held, *f;

    held = canopy_rpc (h, "kvs.hold", NULL, CANOPY_NODEID_ANY, 0);
    assert_non_null (held);
    assert_string_equal (via (h, "kvs.echo", CANOPY_NODEID_ANY), "direct");
    module_stop (m, h2);
    assert_int_equal (canopy_future_get (held, NULL), -1);
    assert_int_equal (errno, ENOSYS);
    assert_non_null (strstr (canopy_future_error_string (held), "went away"));
    canopy_future_destroy (held);
    assert_true (access (directpath, F_OK) < 0);    /* the socket is removed */

    f = canopy_rpc (h, "kvs.echo", NULL, CANOPY_NODEID_ANY, 0);
    assert_non_null (f);
    assert_int_equal (canopy_future_get (f, NULL), -1);
    assert_int_equal (errno, ENOSYS);
    assert_non_null (strstr (canopy_future_error_string (f), "not running"));
    canopy_future_destroy (f);
    assert_string_equal (via (h, "other.echo", CANOPY_NODEID_ANY), "broker");

    m = module_start ();
    assert_string_equal (via (h, "kvs.echo", CANOPY_NODEID_ANY), "direct");
    module_stop (m, h);
    canopy_close (h);
    canopy_close (h2);
}

/* The other half of flow control (test_overflow_kill drops a client
 * whose unread output passes the limit): a client that writes far faster
 * than the module answers is held back by its socket, and every request
 * is answered, in order.
 */
static void test_flood (void **state)
{
    struct module *m = module_start ();
    canopy_t *h = client_open ();
    enum { N = 3000 };
    canopy_future_t *f[N];

    for (int i = 0; i < N; i++)
        assert_non_null ((f[i] = canopy_rpc (h, "kvs.echo", NULL, CANOPY_NODEID_ANY, 0)));
    for (int i = 0; i < N; i++) {
        const char *v;
        assert_int_equal (canopy_rpc_get_unpack (f[i], "{s:s}", "via", &v), 0);
        assert_string_equal (v, "direct");
        canopy_future_destroy (f[i]);
    }
    module_stop (m, h);
    canopy_close (h);
}

/* A response that overflows a client's output drops the client, but the
 * disconnect reaches the module only after the handler that sent it has
 * returned (it must not change the handler's state under it).  The
 * client sees its stream end with ENOSYS, and a new connection works.
 */
static void test_overflow_kill (void **state)
{
    struct module *m = module_start_limit (64 * 1024);
    canopy_t *h = client_open ();
    canopy_t *h2 = client_open ();
    canopy_future_t *f;
    int n = 0;

    f = canopy_rpc (h, "kvs.burst", NULL, CANOPY_NODEID_ANY, CANOPY_RPC_STREAMING);
    assert_non_null (f);
    while (canopy_future_get (f, NULL) == 0) {
        n++;
        canopy_future_reset (f);
    }
    assert_int_equal (errno, ENOSYS);
    assert_true (n < 20);
    canopy_future_destroy (f);
    pthread_mutex_lock (&m->lock);
    while (m->ndisconnects == 0)
        pthread_cond_wait (&m->cond, &m->lock);
    assert_int_equal (m->burst_saw_disconnect, 0);
    assert_string_equal (m->disconnected, "3:d1");
    pthread_mutex_unlock (&m->lock);
    assert_string_equal (via (h2, "kvs.echo", CANOPY_NODEID_ANY), "direct");
    module_stop (m, h2);
    canopy_close (h);
    canopy_close (h2);
}

/* A response too large to send is answered with EMSGSIZE in its place
 * (it was dropped, and the client waited for ever); the connection
 * goes on.
 */
static void test_too_large (void **state)
{
    struct module *m = module_start ();
    canopy_t *h = client_open ();
    canopy_future_t *f;

    assert_non_null ((f = canopy_rpc (h, "kvs.huge", NULL, CANOPY_NODEID_ANY, 0)));
    assert_int_equal (canopy_future_wait_for (f, 30.), 0);
    assert_int_equal (canopy_rpc_get (f, NULL), -1);
    assert_int_equal (errno, EMSGSIZE);
    assert_non_null (strstr (canopy_future_error_string (f), "too large"));
    canopy_future_destroy (f);
    assert_string_equal (via (h, "kvs.echo", CANOPY_NODEID_ANY), "direct");
    module_stop (m, h);
    canopy_close (h);
}

/* A client whose first request found nobody listening stays with the
 * broker for that service; CANOPY_DIRECT=0 turns the channel off.
 */
static void test_broker_when_absent_or_off (void **state)
{
    canopy_t *early = client_open ();
    assert_string_equal (via (early, "kvs.echo", CANOPY_NODEID_ANY), "broker");

    struct module *m = module_start ();
    assert_string_equal (via (early, "kvs.echo", CANOPY_NODEID_ANY), "broker");

    setenv ("CANOPY_DIRECT", "0", 1);
    assert_false (direct_enabled ());
    canopy_t *off = client_open ();
    unsetenv ("CANOPY_DIRECT");
    assert_true (direct_enabled ());
    assert_string_equal (via (off, "kvs.echo", CANOPY_NODEID_ANY), "broker");

    canopy_t *h = client_open ();
    assert_string_equal (via (h, "kvs.echo", CANOPY_NODEID_ANY), "direct");
    module_stop (m, h);
    canopy_close (h);
    canopy_close (off);
    canopy_close (early);
}

/* A client that sends something other than a request is dropped; the
 * server goes on serving others.
 */
static void test_protocol_error (void **state)
{
    struct module *m = module_start ();
    struct sockaddr_un addr;
    int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    canopy_msg_t *ev = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    char c;

    assert_true (fd >= 0);
    memset (&addr, 0, sizeof (addr));
    addr.sun_family = AF_UNIX;
    strcpy (addr.sun_path, directpath);
    assert_int_equal (connect (fd, (struct sockaddr *)&addr, sizeof (addr)), 0);
    assert_int_equal (canopy_msg_set_topic (ev, "kvs.setroot"), 0);
    assert_int_equal (msg_frame_send (fd, ev, false), 0);
    assert_int_equal (read (fd, &c, 1), 0);     /* closed on us */
    close (fd);
    canopy_msg_decref (ev);

    /* garbage: a frame that does not decode */
    fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_equal (connect (fd, (struct sockaddr *)&addr, sizeof (addr)), 0);
    assert_int_equal (write (fd, "\0\0\0\4abcd", 8), 8);
    assert_int_equal (read (fd, &c, 1), 0);
    close (fd);

    canopy_t *h = client_open ();
    assert_string_equal (via (h, "kvs.echo", CANOPY_NODEID_ANY), "direct");
    module_stop (m, h);
    canopy_close (h);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_path),
        cmocka_unit_test (test_routing_and_credentials),
        cmocka_unit_test (test_streaming),
        cmocka_unit_test (test_disconnect),
        cmocka_unit_test (test_module_lost),
        cmocka_unit_test (test_flood),
        cmocka_unit_test (test_overflow_kill),
        cmocka_unit_test (test_too_large),
        cmocka_unit_test (test_broker_when_absent_or_off),
        cmocka_unit_test (test_protocol_error),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, setup, teardown);
}
