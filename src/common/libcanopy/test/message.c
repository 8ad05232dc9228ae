/* test/message.c - unit tests for message.c and msg_codec.c: accessors,
 * route stacks, both encodings, and decoding of malformed, truncated and
 * oversized input (which must fail with EPROTO/EMSGSIZE, never crash);
 * payloads shared between copies (also across threads) and sent to
 * ZeroMQ without a copy.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <pthread.h>
#include <zmq.h>
#include <canopy/message.h>

static void test_invalid (void **state)
{
    errno = 0;
    assert_null (canopy_msg_create (0));
    assert_int_equal (errno, EINVAL);
    canopy_msg_decref (NULL);
    assert_int_equal (canopy_msg_set_topic (NULL, "a"), -1);
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    uint32_t tag;
    assert_int_equal (canopy_msg_get_matchtag (msg, &tag), -1);
    assert_int_equal (errno, EPROTO);
    assert_int_equal (canopy_msg_set_topic (msg, ""), -1);
    char longtopic[300];
    memset (longtopic, 'a', sizeof (longtopic) - 1);
    longtopic[sizeof (longtopic) - 1] = '\0';
    assert_int_equal (canopy_msg_set_topic (msg, longtopic), -1);
    assert_null (canopy_msg_get_topic (msg));
    assert_int_equal (errno, EPROTO);
    assert_int_equal (canopy_msg_route_push (msg, "x"), -1);
    assert_int_equal (errno, EPROTO);
    assert_int_equal (canopy_msg_set_flag (msg, CANOPY_MSGFLAG_TOPIC, true), -1);
    canopy_msg_decref (msg);
}

static void test_accessors (void **state)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    uint32_t u;
    const char *s;
    int i;

    assert_non_null (msg);
    assert_int_equal (canopy_msg_get_nodeid (msg, &u), 0);
    assert_int_equal (u, CANOPY_NODEID_ANY);
    assert_int_equal (canopy_msg_set_topic (msg, "kvs.get"), 0);
    assert_string_equal (canopy_msg_get_topic (msg), "kvs.get");
    assert_int_equal (canopy_msg_pack (msg, "{s:s s:i}", "key", "a.b", "n", 42), 0);
    assert_int_equal (canopy_msg_unpack (msg, "{s:s s:i}", "key", &s, "n", &i), 0);
    assert_string_equal (s, "a.b");
    assert_int_equal (i, 42);
    assert_int_equal (canopy_msg_get_string (msg, &s), 0);
    assert_string_equal (s, "{\"key\":\"a.b\",\"n\":42}");
    assert_int_equal (canopy_msg_set_nodeid (msg, 7), 0);
    assert_int_equal (canopy_msg_set_matchtag (msg, 99), 0);
    assert_int_equal (canopy_msg_set_userid (msg, 1000), 0);
    assert_int_equal (canopy_msg_set_rolemask (msg, CANOPY_ROLE_OWNER), 0);

    canopy_msg_t *rsp = canopy_response_derive (msg, ENOENT);
    assert_non_null (rsp);
    assert_int_equal (canopy_msg_get_type (rsp), CANOPY_MSGTYPE_RESPONSE);
    assert_int_equal (canopy_msg_get_matchtag (rsp, &u), 0);
    assert_int_equal (u, 99);
    assert_int_equal (canopy_msg_get_errnum (rsp, &i), 0);
    assert_int_equal (i, ENOENT);
    assert_null (canopy_msg_errstr (rsp));
    assert_int_equal (canopy_msg_set_string (rsp, "no such key"), 0);
    assert_string_equal (canopy_msg_errstr (rsp), "no such key");
    canopy_msg_decref (rsp);

    /* a payload with an embedded NUL is not a string */
    assert_int_equal (canopy_msg_set_payload (msg, "a\0b", 3), 0);
    assert_int_equal (canopy_msg_get_string (msg, &s), -1);
    assert_int_equal (errno, EPROTO);
    json_t *o;
    assert_int_equal (canopy_msg_set_string (msg, "not json"), 0);
    assert_int_equal (canopy_msg_get_json (msg, &o), -1);
    assert_int_equal (errno, EPROTO);
    canopy_msg_decref (msg);
}

static void test_routes (void **state)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    char *id;
    assert_int_equal (canopy_msg_route_count (msg), -1);
    assert_int_equal (canopy_msg_route_enable (msg), 0);
    assert_int_equal (canopy_msg_route_count (msg), 0);
    assert_null (canopy_msg_route_first (msg));
    assert_int_equal (canopy_msg_route_push (msg, "0:c1"), 0);
    assert_int_equal (canopy_msg_route_push (msg, "0"), 0);
    assert_int_equal (canopy_msg_route_push (msg, "1"), 0);
    assert_string_equal (canopy_msg_route_first (msg), "1");
    assert_string_equal (canopy_msg_route_last (msg), "0:c1");
    assert_string_equal (canopy_msg_route_at (msg, 1), "0");
    char *s = canopy_msg_route_string (msg);
    assert_string_equal (s, "0:c1!0!1");
    free (s);
    assert_int_equal (canopy_msg_route_pop (msg, &id), 0);
    assert_string_equal (id, "1");
    free (id);
    assert_int_equal (canopy_msg_route_count (msg), 2);
    for (int i = 2; i < CANOPY_MSG_MAX_ROUTES; i++)
        assert_int_equal (canopy_msg_route_push (msg, "x"), 0);
    assert_int_equal (canopy_msg_route_push (msg, "y"), -1);
    assert_int_equal (errno, EMSGSIZE);
    canopy_msg_decref (msg);
}

static canopy_msg_t *sample (void)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    assert_int_equal (canopy_msg_set_topic (msg, "svc.method"), 0);
    assert_int_equal (canopy_msg_set_string (msg, "{\"a\":1}"), 0);
    assert_int_equal (canopy_msg_route_enable (msg), 0);
    assert_int_equal (canopy_msg_route_push (msg, "3:c7"), 0);
    assert_int_equal (canopy_msg_route_push (msg, "3"), 0);
    assert_int_equal (canopy_msg_set_matchtag (msg, 12345), 0);
    assert_int_equal (canopy_msg_set_nodeid (msg, 5), 0);
    assert_int_equal (canopy_msg_set_userid (msg, 42), 0);
    return msg;
}

static void check_sample (canopy_msg_t *m)
{
    uint32_t u;
    const char *s;
    assert_non_null (m);
    assert_int_equal (canopy_msg_get_type (m), CANOPY_MSGTYPE_REQUEST);
    assert_string_equal (canopy_msg_get_topic (m), "svc.method");
    assert_int_equal (canopy_msg_get_string (m, &s), 0);
    assert_string_equal (s, "{\"a\":1}");
    assert_int_equal (canopy_msg_route_count (m), 2);
    assert_string_equal (canopy_msg_route_first (m), "3");
    assert_string_equal (canopy_msg_route_last (m), "3:c7");
    assert_int_equal (canopy_msg_get_matchtag (m, &u), 0);
    assert_int_equal (u, 12345);
    assert_int_equal (canopy_msg_get_nodeid (m, &u), 0);
    assert_int_equal (u, 5);
    assert_int_equal (canopy_msg_get_userid (m, &u), 0);
    assert_int_equal (u, 42);
}

static void test_flat_roundtrip (void **state)
{
    canopy_msg_t *msg = sample ();
    void *buf;
    size_t size;
    assert_int_equal (canopy_msg_encode (msg, &buf, &size), 0);
    assert_int_equal (size, canopy_msg_encode_size (msg));
    canopy_msg_t *m = canopy_msg_decode (buf, size);
    check_sample (m);
    canopy_msg_decref (m);

    /* every truncation fails cleanly */
    for (size_t n = 0; n < size; n++) {
        errno = 0;
        assert_null (canopy_msg_decode (buf, n));
        assert_int_equal (errno, EPROTO);
    }
    /* trailing garbage */
    char *big = malloc (size + 1);
    memcpy (big, buf, size);
    big[size] = 'x';
    assert_null (canopy_msg_decode (big, size + 1));
    assert_int_equal (errno, EPROTO);
    free (big);
    /* corrupt each byte in turn: never crash; magic/version/type fail */
    for (size_t n = 0; n < size; n++) {
        char *c = malloc (size);
        memcpy (c, buf, size);
        c[n] ^= 0xff;
        canopy_msg_t *x = canopy_msg_decode (c, size);
        if (n < 4)
            assert_null (x);
        canopy_msg_decref (x);
        free (c);
    }
    assert_null (canopy_msg_decode (buf, (size_t)CANOPY_MSG_SIZE_MAX + 1));
    assert_int_equal (errno, EMSGSIZE);
    free (buf);
    canopy_msg_decref (msg);
}

static void test_random_garbage (void **state)
{
    unsigned int seed = 1;
    unsigned char buf[256];
    for (int iter = 0; iter < 20000; iter++) {
        size_t len = rand_r (&seed) % sizeof (buf);
        for (size_t i = 0; i < len; i++)
            buf[i] = rand_r (&seed);
        if (len >= 2) {     /* make it past the magic often */
            buf[0] = CANOPY_MSG_MAGIC;
            buf[1] = CANOPY_MSG_VERSION;
        }
        canopy_msg_t *m = canopy_msg_decode (buf, len);
        canopy_msg_decref (m);
    }
}

static void test_zmq_roundtrip (void **state)
{
    void *ctx = zmq_ctx_new ();
    void *a = zmq_socket (ctx, ZMQ_PAIR);
    void *b = zmq_socket (ctx, ZMQ_PAIR);
    assert_int_equal (zmq_bind (a, "inproc://test"), 0);
    assert_int_equal (zmq_connect (b, "inproc://test"), 0);

    canopy_msg_t *msg = sample ();
    assert_int_equal (canopy_msg_sendzsock (a, msg), 0);
    canopy_msg_t *m = canopy_msg_recvzsock (b);
    check_sample (m);
    canopy_msg_decref (m);

    /* header frame of the wrong size */
    zmq_send (a, "topic", 5, ZMQ_SNDMORE);
    zmq_send (a, "short", 5, 0);
    assert_null (canopy_msg_recvzsock (b));
    assert_int_equal (errno, EPROTO);
    /* a single empty frame */
    zmq_send (a, NULL, 0, 0);
    assert_null (canopy_msg_recvzsock (b));
    assert_int_equal (errno, EPROTO);
    /* route flag set but no delimiter */
    void *buf;
    size_t size;
    assert_int_equal (canopy_msg_encode (msg, &buf, &size), 0);
    zmq_send (a, "x", 1, ZMQ_SNDMORE);
    zmq_send (a, buf, 20, 0);   /* header only, with ROUTE|TOPIC|PAYLOAD flags */
    assert_null (canopy_msg_recvzsock (b));
    assert_int_equal (errno, EPROTO);
    free (buf);
    /* the socket still works afterwards */
    assert_int_equal (canopy_msg_sendzsock (a, msg), 0);
    m = canopy_msg_recvzsock (b);
    check_sample (m);
    canopy_msg_decref (m);
    /* nonblocking receive with nothing there */
    assert_null (canopy_msg_recvzsock_from (b, NULL, true));
    assert_int_equal (errno, EAGAIN);

    canopy_msg_decref (msg);
    zmq_close (a);
    zmq_close (b);
    zmq_ctx_term (ctx);
}

/* A ROUTER names a peer that set no identity with one ZeroMQ makes up
 * (a zero byte, then a number), as it renames a connection that
 * ROUTER_HANDOVER replaced: refused with ENOTCONN, not taken for a peer.
 */
static void test_zmq_generated_identity (void **state)
{
    void *ctx = zmq_ctx_new ();
    void *r = zmq_socket (ctx, ZMQ_ROUTER);
    void *anon = zmq_socket (ctx, ZMQ_DEALER);
    void *named = zmq_socket (ctx, ZMQ_DEALER);
    char *sender = NULL;

    assert_int_equal (zmq_bind (r, "inproc://gen"), 0);
    assert_int_equal (zmq_setsockopt (named, ZMQ_ROUTING_ID, "7", 1), 0);
    assert_int_equal (zmq_connect (anon, "inproc://gen"), 0);
    assert_int_equal (zmq_connect (named, "inproc://gen"), 0);

    canopy_msg_t *msg = sample ();
    assert_int_equal (canopy_msg_sendzsock (anon, msg), 0);
    assert_null (canopy_msg_recvzsock_from (r, &sender, false));
    assert_int_equal (errno, ENOTCONN);
    assert_null (sender);
    /* the whole message was consumed: the next one is read whole */
    assert_int_equal (canopy_msg_sendzsock (named, msg), 0);
    canopy_msg_t *m = canopy_msg_recvzsock_from (r, &sender, false);
    check_sample (m);
    assert_string_equal (sender, "7");
    canopy_msg_decref (m);
    free (sender);

    canopy_msg_decref (msg);
    zmq_close (anon);
    zmq_close (named);
    zmq_close (r);
    zmq_ctx_term (ctx);
}

/* Regression: a nonblocking send on a socket without a dest frame (a
 * DEALER) must not block when no peer can take the message.
 */
static void test_zmq_nonblock (void **state)
{
    void *ctx = zmq_ctx_new ();
    void *d = zmq_socket (ctx, ZMQ_DEALER);
    int one = 1;
    canopy_msg_t *msg = sample ();

    alarm (30);     /* the bug was a hang: fail instead */
    assert_int_equal (zmq_setsockopt (d, ZMQ_IMMEDIATE, &one, sizeof (one)), 0);
    char uri[300];
    const char *tmp = getenv ("TMPDIR");
    /* ipc: (inproc queues messages for a peer that may bind later) */
    snprintf (uri, sizeof (uri), "ipc://%s/canopy-test-nobody-%d",
              tmp && *tmp ? tmp : "/tmp", (int)getpid ());
    assert_int_equal (zmq_connect (d, uri), 0);
    assert_int_equal (canopy_msg_sendzsock_to (d, NULL, msg, true), -1);
    assert_int_equal (errno, EAGAIN);
    assert_int_equal (canopy_msg_sendzsock_ex (d, msg, true), -1);
    assert_int_equal (errno, EAGAIN);
    alarm (0);
    canopy_msg_decref (msg);
    int zero = 0;
    zmq_setsockopt (d, ZMQ_LINGER, &zero, sizeof (zero));
    zmq_close (d);
    zmq_ctx_term (ctx);
}

static void test_match (void **state)
{
    canopy_msg_t *msg = sample ();
    assert_true (canopy_msg_cmp (msg, CANOPY_MATCH_ANY));
    assert_true (canopy_msg_cmp (msg, CANOPY_MATCH_REQUEST));
    assert_false (canopy_msg_cmp (msg, CANOPY_MATCH_EVENT));
    struct canopy_match m = { .typemask = CANOPY_MSGTYPE_REQUEST,
                              .topic_glob = "svc.*" };
    assert_true (canopy_msg_cmp (msg, m));
    m.topic_glob = "other.*";
    assert_false (canopy_msg_cmp (msg, m));
    m.topic_glob = NULL;
    m.matchtag = 12345;
    assert_true (canopy_msg_cmp (msg, m));
    m.matchtag = 1;
    assert_false (canopy_msg_cmp (msg, m));
    canopy_msg_decref (msg);
}

static void test_copy (void **state)
{
    canopy_msg_t *msg = sample ();
    canopy_msg_t *cpy = canopy_msg_copy (msg, true);
    check_sample (cpy);
    canopy_msg_decref (cpy);
    cpy = canopy_msg_copy (msg, false);
    const void *data;
    size_t size;
    assert_int_equal (canopy_msg_get_payload (cpy, &data, &size), 0);
    assert_null (data);
    assert_int_equal (size, 0);
    canopy_msg_decref (cpy);
    canopy_msg_decref (msg);
}

/* A payload reserved and filled in place is shared by copies like one set
 * by copy; bad sizes leave the message as it was.
 */
static void test_payload_reserve (void **state)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    const void *a, *b;
    size_t la, lb;
    char *p;

    assert_int_equal (canopy_msg_set_payload (msg, "old", 3), 0);
    errno = 0;
    assert_null (canopy_msg_payload_reserve (msg, 0));
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_null (canopy_msg_payload_reserve (msg, (size_t)CANOPY_MSG_SIZE_MAX + 1));
    assert_int_equal (errno, EMSGSIZE);
    errno = 0;
    assert_null (canopy_msg_payload_reserve (NULL, 4));
    assert_int_equal (errno, EINVAL);
    assert_int_equal (canopy_msg_get_payload (msg, &a, &la), 0);
    assert_int_equal (la, 3);
    assert_memory_equal (a, "old", 3);

    assert_non_null ((p = canopy_msg_payload_reserve (msg, 4)));
    assert_int_equal (p[4], '\0');
    memcpy (p, "fill", 4);
    canopy_msg_t *cpy = canopy_msg_copy (msg, true);
    assert_int_equal (canopy_msg_get_payload (msg, &a, &la), 0);
    assert_int_equal (canopy_msg_get_payload (cpy, &b, &lb), 0);
    assert_ptr_equal (a, p);
    assert_ptr_equal (b, p);            /* shared, not copied */
    assert_int_equal (lb, 4);
    canopy_msg_decref (msg);
    assert_string_equal (b, "fill");
    canopy_msg_decref (cpy);
}

/* Copies share the payload's bytes; replacing one copy's payload leaves
 * the others alone; the bytes outlive the original; a payload given
 * with _nocopy is copied once, then shared.
 */
static void test_copy_shares_payload (void **state)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    const void *a, *b, *c;
    size_t la, lb;

    assert_int_equal (canopy_msg_set_payload (msg, "hello", 5), 0);
    canopy_msg_t *cpy = canopy_msg_copy (msg, true);
    assert_int_equal (canopy_msg_get_payload (msg, &a, &la), 0);
    assert_int_equal (canopy_msg_get_payload (cpy, &b, &lb), 0);
    assert_ptr_equal (a, b);
    assert_int_equal (lb, 5);
    assert_int_equal (canopy_msg_set_payload (cpy, "other", 5), 0);
    assert_int_equal (canopy_msg_get_payload (msg, &a, &la), 0);
    assert_memory_equal (a, "hello", 5);
    canopy_msg_t *cpy2 = canopy_msg_copy (msg, true);
    canopy_msg_decref (msg);
    assert_int_equal (canopy_msg_get_payload (cpy2, &c, &lb), 0);
    assert_string_equal (c, "hello");       /* NUL-terminated, still there */
    canopy_msg_decref (cpy2);
    canopy_msg_decref (cpy);

    msg = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    assert_int_equal (canopy_msg_set_payload_nocopy (msg, strdup ("plain"), 5), 0);
    cpy = canopy_msg_copy (msg, true);
    cpy2 = canopy_msg_copy (cpy, true);
    assert_int_equal (canopy_msg_get_payload (msg, &a, &la), 0);
    assert_int_equal (canopy_msg_get_payload (cpy, &b, &lb), 0);
    assert_int_equal (canopy_msg_get_payload (cpy2, &c, &lb), 0);
    assert_ptr_not_equal (a, b);            /* copied once ... */
    assert_ptr_equal (b, c);                /* ... then shared */
    assert_string_equal (c, "plain");
    canopy_msg_decref (msg);
    canopy_msg_decref (cpy);
    canopy_msg_decref (cpy2);
}

/* An event made from the tail of a request's payload ("topic\0body")
 * shares the request's buffer; it outlives the request, keeps the NUL
 * after it, is itself shared by copies, and goes out over ZeroMQ whole.
 */
static void test_share_payload (void **state)
{
    canopy_msg_t *req = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    canopy_msg_t *ev = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    const void *a, *b, *c;
    size_t la, lb, lc;

    assert_int_equal (canopy_msg_set_payload (req, "t.x\0body!", 9), 0);
    assert_int_equal (canopy_msg_set_payload (ev, "old", 3), 0);
    assert_int_equal (canopy_msg_share_payload (ev, req, 4), 0);
    assert_int_equal (canopy_msg_get_payload (req, &a, &la), 0);
    assert_int_equal (canopy_msg_get_payload (ev, &b, &lb), 0);
    assert_ptr_equal (b, (const char *)a + 4);      /* no copy */
    assert_int_equal (lb, 5);
    canopy_msg_decref (req);
    canopy_msg_t *cpy = canopy_msg_copy (ev, true);
    assert_int_equal (canopy_msg_get_payload (cpy, &c, &lc), 0);
    assert_ptr_equal (c, b);
    assert_int_equal (lc, 5);
    assert_string_equal (c, "body!");               /* the NUL after it */
    canopy_msg_decref (ev);
    canopy_msg_decref (cpy);

    /* over ZeroMQ (zero-copy from the shared buffer), still the tail only */
    void *ctx = zmq_ctx_new ();
    void *za = zmq_socket (ctx, ZMQ_PAIR);
    void *zb = zmq_socket (ctx, ZMQ_PAIR);
    assert_int_equal (zmq_bind (za, "inproc://share"), 0);
    assert_int_equal (zmq_connect (zb, "inproc://share"), 0);
    size_t n = 64 * 1024;
    char *big = malloc (n + 2);
    assert_non_null (big);
    memcpy (big, "t\0", 2);
    for (size_t j = 0; j < n; j++)
        big[2 + j] = (char)('a' + j % 26);
    req = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    ev = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    assert_int_equal (canopy_msg_set_payload (req, big, n + 2), 0);
    assert_int_equal (canopy_msg_set_topic (ev, "t"), 0);
    assert_int_equal (canopy_msg_share_payload (ev, req, 2), 0);
    canopy_msg_decref (req);
    assert_int_equal (canopy_msg_sendzsock (za, ev), 0);
    canopy_msg_decref (ev);
    canopy_msg_t *m = canopy_msg_recvzsock (zb);
    assert_non_null (m);
    assert_int_equal (canopy_msg_get_payload (m, &a, &la), 0);
    assert_int_equal (la, n);
    assert_memory_equal (a, big + 2, n);
    canopy_msg_decref (m);
    free (big);
    zmq_close (za);
    zmq_close (zb);
    zmq_ctx_term (ctx);

    /* a plain (unshared) payload is copied; the whole tail, or nothing */
    req = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    ev = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    char *plain = malloc (5);
    assert_non_null (plain);
    memcpy (plain, "ab\0cd", 5);
    assert_int_equal (canopy_msg_set_payload_nocopy (req, plain, 5), 0);
    assert_int_equal (canopy_msg_share_payload (ev, req, 3), 0);
    assert_int_equal (canopy_msg_get_payload (ev, &b, &lb), 0);
    assert_int_equal (lb, 2);
    assert_string_equal (b, "cd");
    assert_int_equal (canopy_msg_share_payload (ev, req, 5), 0);
    assert_int_equal (canopy_msg_get_payload (ev, &b, &lb), 0);
    assert_null (b);                                /* none */
    assert_int_equal (lb, 0);

    /* errors leave the message as it was */
    assert_int_equal (canopy_msg_set_payload (ev, "keep", 4), 0);
    errno = 0;
    assert_int_equal (canopy_msg_share_payload (ev, req, 6), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (canopy_msg_share_payload (ev, ev, 0), -1);
    assert_int_equal (canopy_msg_share_payload (NULL, req, 0), -1);
    assert_int_equal (canopy_msg_share_payload (ev, NULL, 0), -1);
    assert_int_equal (canopy_msg_get_payload (ev, &b, &lb), 0);
    assert_string_equal (b, "keep");
    canopy_msg_decref (req);
    canopy_msg_decref (ev);
}

enum { NCOPIES = 2000 };

static void *drop_copies (void *arg)
{
    canopy_msg_t **v = arg;
    for (int i = 0; i < NCOPIES; i += 2)
        canopy_msg_decref (v[i]);
    return NULL;
}

/* Copies released in two threads at once (as the broker and a module
 * thread do): the shared buffer's count is atomic, so it is freed once,
 * after the last (ASan, in the sanitized suite, sees any error).
 */
static void test_copies_across_threads (void **state)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    canopy_msg_t **v = calloc (NCOPIES, sizeof (*v));
    char big[10000];
    pthread_t t;

    assert_non_null (v);
    memset (big, 'q', sizeof (big));
    assert_int_equal (canopy_msg_set_payload (msg, big, sizeof (big)), 0);
    for (int i = 0; i < NCOPIES; i++)
        assert_non_null ((v[i] = canopy_msg_copy (msg, true)));
    canopy_msg_decref (msg);
    assert_int_equal (pthread_create (&t, NULL, drop_copies, v), 0);
    for (int i = 1; i < NCOPIES; i += 2)
        canopy_msg_decref (v[i]);
    assert_int_equal (pthread_join (t, NULL), 0);
    free (v);
}

/* A large payload goes to ZeroMQ without a copy: the message may be gone
 * before the frame is received, and the bytes arrive intact; a small one
 * and a _nocopy one are copied as before.
 */
static void test_zmq_zerocopy (void **state)
{
    void *ctx = zmq_ctx_new ();
    void *a = zmq_socket (ctx, ZMQ_PAIR);
    void *b = zmq_socket (ctx, ZMQ_PAIR);
    size_t sizes[] = { 64 * 1024, 100, 5000 };
    canopy_msg_t *late = NULL;
    assert_int_equal (zmq_bind (a, "inproc://zerocopy"), 0);
    assert_int_equal (zmq_connect (b, "inproc://zerocopy"), 0);

    for (int i = 0; i < 3; i++) {
        size_t n = sizes[i];
        char *buf = malloc (n);
        assert_non_null (buf);
        for (size_t j = 0; j < n; j++)
            buf[j] = (char)('a' + j % 26);
        canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
        assert_int_equal (canopy_msg_set_topic (msg, "z"), 0);
        if (i == 2) {
            char *own = malloc (n);
            assert_non_null (own);
            memcpy (own, buf, n);
            assert_int_equal (canopy_msg_set_payload_nocopy (msg, own, n), 0);
        }
        else
            assert_int_equal (canopy_msg_set_payload (msg, buf, n), 0);
        assert_int_equal (canopy_msg_sendzsock (a, msg), 0);
        canopy_msg_decref (msg);    /* before the receive */
        canopy_msg_t *m = canopy_msg_recvzsock (b);
        const void *data;
        size_t len;
        assert_non_null (m);
        assert_int_equal (canopy_msg_get_payload (m, &data, &len), 0);
        assert_int_equal (len, n);
        assert_memory_equal (data, buf, n);
        assert_int_equal (((const char *)data)[n], '\0');  /* NUL after, as always */
        /* a large one is received in place; shared and copied from
         * there, and it outlives the socket and its first message
         */
        canopy_msg_t *tail = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
        canopy_msg_t *cpy = canopy_msg_copy (m, true);
        assert_non_null (tail);
        assert_non_null (cpy);
        assert_int_equal (canopy_msg_share_payload (tail, m, 10), 0);
        canopy_msg_decref (m);
        const void *td, *cd;
        size_t tlen, clen;
        assert_int_equal (canopy_msg_get_payload (tail, &td, &tlen), 0);
        assert_int_equal (canopy_msg_get_payload (cpy, &cd, &clen), 0);
        assert_int_equal (tlen, n - 10);
        assert_memory_equal (td, buf + 10, n - 10);
        assert_memory_equal (cd, buf, n);
        if (n >= 4096)
            assert_ptr_equal (td, (const char *)cd + 10);
        const char *str;
        assert_int_equal (canopy_msg_get_string (cpy, &str), 0);
        assert_int_equal (strlen (str), n);
        if (i == 0)
            late = cpy;     /* kept past the end of the context */
        else
            canopy_msg_decref (cpy);
        canopy_msg_decref (tail);
        free (buf);
    }
    /* a payload frame without its NUL is malformed */
    uint8_t hdr[20];
    void *enc;
    size_t esize;
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    assert_int_equal (canopy_msg_set_topic (msg, "z"), 0);
    assert_int_equal (canopy_msg_set_payload (msg, "abc", 3), 0);
    assert_int_equal (canopy_msg_encode (msg, &enc, &esize), 0);
    memcpy (hdr, enc, sizeof (hdr));
    free (enc);
    for (int k = 0; k < 2; k++) {
        zmq_send (a, "z", 1, ZMQ_SNDMORE);
        zmq_send (a, "abc", k == 0 ? 3 : 0, ZMQ_SNDMORE);
        zmq_send (a, hdr, sizeof (hdr), 0);
        assert_null (canopy_msg_recvzsock (b));
        assert_int_equal (errno, EPROTO);
    }
    zmq_send (a, "z", 1, ZMQ_SNDMORE);
    zmq_send (a, "abc", 4, ZMQ_SNDMORE);      /* with its NUL */
    zmq_send (a, hdr, sizeof (hdr), 0);
    canopy_msg_t *m = canopy_msg_recvzsock (b);
    const char *str;
    assert_non_null (m);
    assert_int_equal (canopy_msg_get_string (m, &str), 0);
    assert_string_equal (str, "abc");
    canopy_msg_decref (m);
    canopy_msg_decref (msg);
    zmq_close (b);      /* received payloads may outlive their socket */
    zmq_close (a);
    zmq_ctx_term (ctx);
    const void *ld;
    size_t llen;
    assert_int_equal (canopy_msg_get_payload (late, &ld, &llen), 0);
    assert_int_equal (llen, 64 * 1024);
    assert_int_equal (((const char *)ld)[llen - 1], (char)('a' + (llen - 1) % 26));
    canopy_msg_decref (late);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_invalid),
        cmocka_unit_test (test_accessors),
        cmocka_unit_test (test_routes),
        cmocka_unit_test (test_flat_roundtrip),
        cmocka_unit_test (test_random_garbage),
        cmocka_unit_test (test_zmq_roundtrip),
        cmocka_unit_test (test_zmq_generated_identity),
        cmocka_unit_test (test_zmq_nonblock),
        cmocka_unit_test (test_match),
        cmocka_unit_test (test_copy),
        cmocka_unit_test (test_payload_reserve),
        cmocka_unit_test (test_copy_shares_payload),
        cmocka_unit_test (test_share_payload),
        cmocka_unit_test (test_copies_across_threads),
        cmocka_unit_test (test_zmq_zerocopy),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
