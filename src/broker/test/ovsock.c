/* test/ovsock.c - overlay socket security and limits, with real sockets
 * in one process (ipc:// in a temporary directory, no network):
 *   - a DEALER with the instance certificate gets its message through;
 *   - a NULL-security DEALER, a CURVE DEALER with an unknown key, and one
 *     with the wrong server key each send a message: nothing arrives
 *     within 1 s (the T11 gate: 0 messages accepted);
 *   - a message over MAXMSGSIZE is refused and its sender disconnected,
 *     and the link carries small messages again afterwards;
 *   - the ZAP handler rejects malformed keys.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>
#include <zmq.h>
#include "src/common/libutil/monotime.h"
#include "src/broker/ovsock.h"
#include "src/broker/zap.h"
#include "src/broker/cert.h"

static void *ctx;
static zap_t *zap;
static cert_t *instance_cert;
static void *router;
static char dir[256];
static char uri[300];
static struct ovsock_opts opts;

static int setup (void **state)
{
    const char *tmp = getenv ("TMPDIR");
    snprintf (dir, sizeof (dir), "%s/ovsock-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    assert_non_null (mkdtemp (dir));
    snprintf (uri, sizeof (uri), "ipc://%s/router", dir);
    assert_non_null ((ctx = zmq_ctx_new ()));
    assert_non_null ((zap = zap_create (ctx)));
    assert_non_null ((instance_cert = cert_create ()));
    assert_int_equal (zap_authorize (zap, cert_public (instance_cert)), 0);
    ovsock_opts_default (&opts);
    opts.maxmsgsize = 4096;
    assert_non_null ((router = ovsock_router (ctx, &opts, instance_cert, uri)));
    return 0;
}

static int teardown (void **state)
{
    char path[300];
    zmq_close (router);
    zap_destroy (zap);
    cert_destroy (instance_cert);
    zmq_ctx_term (ctx);
    snprintf (path, sizeof (path), "%s/router", dir);
    (void)unlink (path);
    (void)rmdir (dir);
    return 0;
}

/* Serve ZAP requests and wait up to 'timeout' s for a message on the
 * router.  Returns the sender's identity (caller frees) and the size of
 * the message body, or NULL on timeout.
 */
static char *pump (double timeout, size_t *size)
{
    double t0 = monotime ();
    while (monotime () - t0 < timeout) {
        zmq_pollitem_t items[] = {
            { .socket = zap_socket (zap), .events = ZMQ_POLLIN },
            { .socket = router, .events = ZMQ_POLLIN },
        };
        int rc = zmq_poll (items, 2, 50);
        assert_true (rc >= 0);
        if (items[0].revents & ZMQ_POLLIN)
            assert_true (zap_handle (zap) >= 0);
        if (items[1].revents & ZMQ_POLLIN) {
            zmq_msg_t id, body;
            zmq_msg_init (&id);
            zmq_msg_init (&body);
            assert_true (zmq_msg_recv (&id, router, 0) >= 0);
            assert_true (zmq_msg_more (&id));
            assert_true (zmq_msg_recv (&body, router, 0) >= 0);
            char *s = strndup (zmq_msg_data (&id), zmq_msg_size (&id));
            *size = zmq_msg_size (&body);
            zmq_msg_close (&id);
            zmq_msg_close (&body);
            return s;
        }
    }
    return NULL;
}

static void send_bytes (void *sock, size_t size)
{
    char *buf = calloc (1, size + 1);
    assert_non_null (buf);
    memset (buf, 'x', size);
    /* IMMEDIATE: the handshake may not be done yet; retry briefly while
     * serving ZAP so that it can finish
     */
    double t0 = monotime ();
    while (zmq_send (sock, buf, size, ZMQ_DONTWAIT) < 0) {
        assert_int_equal (errno, EAGAIN);
        if (monotime () - t0 > 1.0)
            break;      /* never connected: the message is not sent at all */
        zmq_pollitem_t item = { .socket = zap_socket (zap), .events = ZMQ_POLLIN };
        (void)zmq_poll (&item, 1, 10);
        if (item.revents & ZMQ_POLLIN)
            (void)zap_handle (zap);
    }
    free (buf);
}

/* A DEALER whose messages are queued regardless of the handshake (as an
 * attacker's would be): IMMEDIATE off.
 */
static void *rogue_dealer (const char *id, const cert_t *cert, const char *server_key)
{
    void *s = zmq_socket (ctx, ZMQ_DEALER);
    int zero = 0;
    assert_non_null (s);
    assert_int_equal (zmq_setsockopt (s, ZMQ_ROUTING_ID, id, strlen (id)), 0);
    assert_int_equal (zmq_setsockopt (s, ZMQ_LINGER, &zero, sizeof (zero)), 0);
    if (cert) {
        assert_int_equal (zmq_setsockopt (s, ZMQ_CURVE_SERVERKEY, server_key, 40), 0);
        assert_int_equal (zmq_setsockopt (s, ZMQ_CURVE_PUBLICKEY, cert_public (cert), 40), 0);
        assert_int_equal (zmq_setsockopt (s, ZMQ_CURVE_SECRETKEY, cert_secret (cert), 40), 0);
    }
    assert_int_equal (zmq_connect (s, uri), 0);
    return s;
}

static void test_authorized (void **state)
{
    size_t size;
    void *d = ovsock_dealer (ctx, &opts, "1", instance_cert,
                             cert_public (instance_cert), uri);
    assert_non_null (d);
    send_bytes (d, 10);
    char *id = pump (10.0, &size);
    assert_non_null (id);
    assert_string_equal (id, "1");
    assert_int_equal (size, 10);
    free (id);
    assert_true (zap_allowed_count (zap) >= 1);
    zmq_close (d);
}

static void test_null_security (void **state)
{
    size_t size;
    void *d = rogue_dealer ("2", NULL, NULL);
    assert_int_equal (zmq_send (d, "hello", 5, 0), 5);
    char *id = pump (1.0, &size);
    assert_null (id);
    zmq_close (d);
}

static void test_unknown_key (void **state)
{
    size_t size;
    uint64_t denied = zap_denied_count (zap);
    cert_t *stranger = cert_create ();
    void *d = rogue_dealer ("3", stranger, cert_public (instance_cert));
    assert_int_equal (zmq_send (d, "hello", 5, 0), 5);
    char *id = pump (1.0, &size);
    assert_null (id);
    assert_true (zap_denied_count (zap) > denied);
    zmq_close (d);
    cert_destroy (stranger);
}

static void test_wrong_server_key (void **state)
{
    size_t size;
    cert_t *other = cert_create ();
    void *d = rogue_dealer ("4", instance_cert, cert_public (other));
    assert_int_equal (zmq_send (d, "hello", 5, 0), 5);
    char *id = pump (1.0, &size);
    assert_null (id);
    zmq_close (d);
    cert_destroy (other);
}

static void test_oversize (void **state)
{
    size_t size;
    void *d = ovsock_dealer (ctx, &opts, "5", instance_cert,
                             cert_public (instance_cert), uri);
    void *mon = ovsock_monitor (ctx, d, ZMQ_EVENT_DISCONNECTED
                                        | ZMQ_EVENT_HANDSHAKE_SUCCEEDED);
    assert_non_null (d);
    assert_non_null (mon);
    send_bytes (d, 10);
    char *id = pump (10.0, &size);
    assert_non_null (id);
    free (id);

    send_bytes (d, 2 * 4096);
    assert_null (pump (1.0, &size));
    /* the router dropped the connection */
    int event = 0, value, disconnects = 0;
    double t0 = monotime ();
    while (disconnects == 0 && monotime () - t0 < 10.0) {
        if (ovsock_monitor_recv (mon, &event, &value) == 0) {
            if (event == ZMQ_EVENT_DISCONNECTED)
                disconnects++;
        }
        else
            usleep (10000);
    }
    assert_int_equal (disconnects, 1);
    /* it reconnects, and small messages flow again */
    send_bytes (d, 100);
    id = pump (10.0, &size);
    assert_non_null (id);
    assert_string_equal (id, "5");
    assert_int_equal (size, 100);
    free (id);
    zmq_close (mon);
    zmq_close (d);
}

static void test_bad_keys (void **state)
{
    assert_int_equal (zap_authorize (zap, "1234"), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (zap_authorize (zap, NULL), -1);
    assert_int_equal (zap_authorize (NULL, cert_public (instance_cert)), -1);
    /* one handler per context */
    assert_null (zap_create (ctx));
    /* dealer: a certificate needs a server key */
    assert_null (ovsock_dealer (ctx, &opts, "6", instance_cert, NULL, uri));
    assert_int_equal (errno, EINVAL);
    assert_null (ovsock_dealer (ctx, &opts, "", NULL, NULL, uri));
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_authorized),
        cmocka_unit_test (test_null_security),
        cmocka_unit_test (test_unknown_key),
        cmocka_unit_test (test_wrong_server_key),
        cmocka_unit_test (test_oversize),
        cmocka_unit_test (test_bad_keys),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, setup, teardown);
}
