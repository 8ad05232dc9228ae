/* test/msg_handoff.c - messages between threads as pointers: a round trip
 * over an inproc ROUTER/DEALER pair keeps every field; the receiver gets a
 * private copy (the sender's message may change afterwards); frames left
 * unread are released when the sockets close (ASan/valgrind see no leak);
 * send_owned hands the message itself over when it is not shared;
 * a frame that is not a hand-off is rejected with EPROTO; and a second
 * thread can be on the other end.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <zmq.h>
#include <canopy/message.h>
#include "src/common/libcanopy/msg_handoff.h"

struct pair {
    void *ctx;
    void *router;
    void *dealer;
};

static void pair_open (struct pair *p, const char *ep)
{
    p->ctx = zmq_ctx_new ();
    assert_non_null (p->ctx);
    p->router = zmq_socket (p->ctx, ZMQ_ROUTER);
    p->dealer = zmq_socket (p->ctx, ZMQ_DEALER);
    int nohwm = 0, one = 1;     /* as the broker sets its module sockets */
    assert_int_equal (zmq_setsockopt (p->router, ZMQ_ROUTER_MANDATORY, &one, sizeof (one)), 0);
    assert_int_equal (zmq_setsockopt (p->router, ZMQ_SNDHWM, &nohwm, sizeof (nohwm)), 0);
    assert_int_equal (zmq_setsockopt (p->router, ZMQ_RCVHWM, &nohwm, sizeof (nohwm)), 0);
    assert_int_equal (zmq_setsockopt (p->dealer, ZMQ_SNDHWM, &nohwm, sizeof (nohwm)), 0);
    assert_int_equal (zmq_setsockopt (p->dealer, ZMQ_RCVHWM, &nohwm, sizeof (nohwm)), 0);
    assert_int_equal (zmq_bind (p->router, ep), 0);
    assert_int_equal (zmq_setsockopt (p->dealer, ZMQ_ROUTING_ID, "mod", 3), 0);
    assert_int_equal (zmq_connect (p->dealer, ep), 0);
}

static void pair_close (struct pair *p)
{
    int linger = 0;
    zmq_setsockopt (p->router, ZMQ_LINGER, &linger, sizeof (linger));
    zmq_setsockopt (p->dealer, ZMQ_LINGER, &linger, sizeof (linger));
    zmq_close (p->router);
    zmq_close (p->dealer);
    zmq_ctx_term (p->ctx);
}

static canopy_msg_t *mkreq (void)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    assert_non_null (msg);
    assert_int_equal (canopy_msg_set_topic (msg, "kvs.lookup"), 0);
    assert_int_equal (canopy_msg_set_string (msg, "{\"key\":\"a.b\"}"), 0);
    assert_int_equal (canopy_msg_set_matchtag (msg, 42), 0);
    assert_int_equal (canopy_msg_set_userid (msg, 1000), 0);
    assert_int_equal (canopy_msg_route_enable (msg), 0);
    assert_int_equal (canopy_msg_route_push (msg, "0:c1"), 0);
    assert_int_equal (canopy_msg_route_push (msg, "0:b"), 0);
    return msg;
}

static void check_req (const canopy_msg_t *msg)
{
    uint32_t tag = 0, uid = 0;
    const char *s;
    assert_int_equal (canopy_msg_get_type (msg), CANOPY_MSGTYPE_REQUEST);
    assert_string_equal (canopy_msg_get_topic (msg), "kvs.lookup");
    assert_int_equal (canopy_msg_get_string (msg, &s), 0);
    assert_string_equal (s, "{\"key\":\"a.b\"}");
    assert_int_equal (canopy_msg_get_matchtag (msg, &tag), 0);
    assert_int_equal (tag, 42);
    assert_int_equal (canopy_msg_get_userid (msg, &uid), 0);
    assert_int_equal (uid, 1000);
    assert_int_equal (canopy_msg_route_count (msg), 2);
    assert_string_equal (canopy_msg_route_first (msg), "0:b");
    assert_string_equal (canopy_msg_route_last (msg), "0:c1");
}

static void test_roundtrip (void **state)
{
    struct pair p;
    char *sender = NULL;
    pair_open (&p, "inproc://t-roundtrip");

    canopy_msg_t *req = mkreq ();
    assert_int_equal (msg_handoff_send (p.dealer, NULL, req, false), 0);
    /* the receiver has a copy: changing ours afterwards does not reach it */
    assert_int_equal (canopy_msg_set_topic (req, "changed"), 0);
    canopy_msg_decref (req);
    canopy_msg_t *got = msg_handoff_recv (p.router, &sender, false);
    assert_non_null (got);
    assert_string_equal (sender, "mod");
    check_req (got);

    /* and back, addressed by identity */
    assert_int_equal (msg_handoff_send (p.router, sender, got, false), 0);
    canopy_msg_decref (got);
    canopy_msg_t *back = msg_handoff_recv (p.dealer, NULL, false);
    assert_non_null (back);
    check_req (back);
    canopy_msg_decref (back);
    free (sender);

    errno = 0;
    assert_null (msg_handoff_recv (p.dealer, NULL, true));
    assert_int_equal (errno, EAGAIN);
    pair_close (&p);
}

/* send_owned hands over the message itself when the caller's reference is
 * the only one, and a copy otherwise (the other holder keeps its own).
 */
static void test_owned (void **state)
{
    struct pair p;
    char *sender = NULL;
    pair_open (&p, "inproc://t-owned");

    canopy_msg_t *req = mkreq ();
    canopy_msg_t *sent = req;
    assert_int_equal (msg_handoff_send_owned (p.dealer, NULL, req, false), 0);
    canopy_msg_t *got = msg_handoff_recv (p.router, &sender, false);
    assert_ptr_equal (got, sent);       /* no copy */
    check_req (got);
    canopy_msg_decref (got);
    free (sender);

    req = mkreq ();
    canopy_msg_incref (req);            /* someone else holds it too */
    assert_int_equal (msg_handoff_send_owned (p.dealer, NULL, req, false), 0);
    got = msg_handoff_recv (p.router, &sender, false);
    assert_ptr_not_equal (got, req);    /* a copy */
    check_req (got);
    check_req (req);                    /* still ours, intact */
    canopy_msg_decref (got);
    canopy_msg_decref (req);
    free (sender);

    errno = 0;
    assert_int_equal (msg_handoff_send_owned (NULL, NULL, mkreq (), false), -1);
    assert_int_equal (errno, EINVAL);   /* and the message was dropped */
    pair_close (&p);
}

static void test_unread_released (void **state)
{
    struct pair p;
    pair_open (&p, "inproc://t-unread");
    for (int i = 0; i < 100; i++) {
        canopy_msg_t *req = mkreq ();
        assert_int_equal (msg_handoff_send (p.dealer, NULL, req, false), 0);
        canopy_msg_decref (req);
    }
    pair_close (&p);    /* the leak checkers would see 100 lost copies */
}

static void test_stray_frame (void **state)
{
    struct pair p;
    char *sender = NULL;
    pair_open (&p, "inproc://t-stray");
    /* a frame of the right size but not a hand-off, then a multipart one */
    char junk[16] = "0123456789abcdef";
    assert_int_equal (zmq_send (p.dealer, junk, sizeof (junk), 0), (int)sizeof (junk));
    assert_int_equal (zmq_send (p.dealer, "x", 1, ZMQ_SNDMORE), 1);
    assert_int_equal (zmq_send (p.dealer, "y", 1, 0), 1);
    canopy_msg_t *req = mkreq ();
    assert_int_equal (msg_handoff_send (p.dealer, NULL, req, false), 0);
    canopy_msg_decref (req);

    errno = 0;
    assert_null (msg_handoff_recv (p.router, &sender, false));
    assert_int_equal (errno, EPROTO);
    assert_null (msg_handoff_recv (p.router, &sender, false));
    assert_int_equal (errno, EPROTO);
    canopy_msg_t *got = msg_handoff_recv (p.router, &sender, false);
    assert_non_null (got);      /* the stream recovered */
    check_req (got);
    canopy_msg_decref (got);
    free (sender);

    /* a DEALER never gets an identity frame: asking for one is EPROTO */
    req = mkreq ();
    assert_int_equal (msg_handoff_send (p.router, "mod", req, false), 0);
    canopy_msg_decref (req);
    assert_null (msg_handoff_recv (p.dealer, &sender, false));
    assert_int_equal (errno, EPROTO);
    pair_close (&p);
}

static void test_invalid (void **state)
{
    canopy_msg_t *req = mkreq ();
    errno = 0;
    assert_int_equal (msg_handoff_send (NULL, NULL, req, false), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (msg_handoff_send (req, NULL, NULL, false), -1);
    assert_int_equal (errno, EINVAL);
    assert_null (msg_handoff_recv (NULL, NULL, false));
    assert_int_equal (errno, EINVAL);
    canopy_msg_decref (req);
}

#define NTHREAD_MSGS 10000

static void *echo_thread (void *arg)
{
    void *dealer = arg;
    for (int i = 0; i < NTHREAD_MSGS; i++) {
        canopy_msg_t *msg = msg_handoff_recv (dealer, NULL, false);
        if (!msg)
            return (void *)1;
        int rc = msg_handoff_send (dealer, NULL, msg, false);
        canopy_msg_decref (msg);
        if (rc < 0)
            return (void *)1;
    }
    return NULL;
}

static void test_threads (void **state)
{
    struct pair p;
    pthread_t t;
    void *result;
    pair_open (&p, "inproc://t-threads");
    /* the ROUTER knows the DEALER's identity once it has heard from it */
    canopy_msg_t *hello = mkreq ();
    char *id = NULL;
    assert_int_equal (msg_handoff_send (p.dealer, NULL, hello, false), 0);
    canopy_msg_decref (hello);
    assert_non_null ((hello = msg_handoff_recv (p.router, &id, false)));
    canopy_msg_decref (hello);
    free (id);
    assert_int_equal (pthread_create (&t, NULL, echo_thread, p.dealer), 0);
    for (int i = 0; i < NTHREAD_MSGS; i++) {
        canopy_msg_t *req = mkreq ();
        assert_int_equal (msg_handoff_send (p.router, "mod", req, false), 0);
        canopy_msg_decref (req);
    }
    for (int i = 0; i < NTHREAD_MSGS; i++) {
        char *sender = NULL;
        canopy_msg_t *got = msg_handoff_recv (p.router, &sender, false);
        assert_non_null (got);
        check_req (got);
        canopy_msg_decref (got);
        free (sender);
    }
    assert_int_equal (pthread_join (t, &result), 0);
    assert_null (result);
    pair_close (&p);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_roundtrip),
        cmocka_unit_test (test_owned),
        cmocka_unit_test (test_unread_released),
        cmocka_unit_test (test_stray_frame),
        cmocka_unit_test (test_invalid),
        cmocka_unit_test (test_threads),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
