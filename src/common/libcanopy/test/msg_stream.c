/* test/msg_stream.c - length-prefixed framing over a socketpair:
 * many messages per read, one message split across many reads, an
 * oversized or corrupt frame, and msg_frame_send's gathered writes (the
 * same bytes as msg_frame_encode, large payloads sent in many pieces, a
 * long head, a full socket without waiting, a peer gone).
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
#include <sys/socket.h>
#include <pthread.h>
#include <canopy/message.h>
#include "src/common/libcanopy/msg_stream.h"

static canopy_msg_t *mkmsg (int i)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    char topic[32];
    snprintf (topic, sizeof (topic), "t.%d", i);
    assert_int_equal (canopy_msg_set_topic (msg, topic), 0);
    assert_int_equal (canopy_msg_set_seq (msg, i), 0);
    return msg;
}

static void test_batch (void **state)
{
    int sv[2];
    struct msg_instream in;
    assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, sv), 0);
    msg_instream_init (&in);
    for (int i = 0; i < 100; i++) {
        canopy_msg_t *msg = mkmsg (i);
        size_t size;
        void *buf = msg_frame_encode (msg, &size);
        assert_int_equal (write (sv[0], buf, size), size);
        free (buf);
        canopy_msg_decref (msg);
    }
    int got = 0;
    while (got < 100) {
        canopy_msg_t *msg = msg_instream_next (&in);
        if (!msg) {
            assert_int_equal (errno, EAGAIN);
            assert_true (msg_instream_fill (&in, sv[1]) > 0);
            continue;
        }
        uint32_t seq;
        assert_int_equal (canopy_msg_get_seq (msg, &seq), 0);
        assert_int_equal (seq, got);
        got++;
        canopy_msg_decref (msg);
    }
    assert_false (msg_instream_ready (&in));
    assert_int_equal (msg_instream_fill (&in, sv[1]), -1);
    assert_int_equal (errno, EAGAIN);
    close (sv[0]);
    assert_int_equal (msg_instream_fill (&in, sv[1]), 0);   /* EOF */
    close (sv[1]);
    msg_instream_release (&in);
}

static void test_split_large (void **state)
{
    int sv[2];
    struct msg_instream in;
    assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, sv), 0);
    msg_instream_init (&in);
    canopy_msg_t *msg = mkmsg (1);
    size_t plen = 1000000;
    char *payload = malloc (plen);
    memset (payload, 'z', plen);
    assert_int_equal (canopy_msg_set_payload (msg, payload, plen), 0);
    size_t size;
    char *buf = msg_frame_encode (msg, &size);
    size_t off = 0;
    canopy_msg_t *out = NULL;
    while (!out) {
        if (off < size) {
            size_t n = size - off > 3001 ? 3001 : size - off;
            assert_int_equal (write (sv[0], buf + off, n), n);
            off += n;
        }
        assert_true (msg_instream_fill (&in, sv[1]) > 0);
        out = msg_instream_next (&in);
        if (!out)
            assert_int_equal (errno, EAGAIN);
    }
    const void *data;
    size_t dlen;
    assert_int_equal (canopy_msg_get_payload (out, &data, &dlen), 0);
    assert_int_equal (dlen, plen);
    assert_memory_equal (data, payload, plen);
    canopy_msg_decref (out);
    canopy_msg_decref (msg);
    free (buf);
    free (payload);
    close (sv[0]);
    close (sv[1]);
    msg_instream_release (&in);
}

struct sink {
    int fd;
    char *buf;
    size_t len;
};

/* Read everything until EOF. */
static void *sink_thread (void *arg)
{
    struct sink *sk = arg;
    size_t cap = 0;
    for (;;) {
        if (cap - sk->len < 65536) {
            cap = cap ? cap * 2 : 1 << 20;
            sk->buf = realloc (sk->buf, cap);
            if (!sk->buf)
                return NULL;
        }
        ssize_t n = read (sk->fd, sk->buf + sk->len, cap - sk->len);
        if (n <= 0)
            break;
        sk->len += n;
    }
    return NULL;
}

static void test_frame_send (void **state)
{
    int sv[2];
    struct sink sk = { 0 };
    pthread_t t;
    canopy_msg_t *m[4];
    char route[61];
    size_t big = 3 << 20;       /* larger than the socket's buffer */
    char *payload = malloc (big);

    assert_non_null (payload);
    for (size_t i = 0; i < big; i++)
        payload[i] = (char)(i * 7 + 3);
    memset (route, 'r', sizeof (route) - 1);
    route[sizeof (route) - 1] = '\0';
    for (int i = 0; i < 4; i++)
        assert_non_null ((m[i] = canopy_msg_create (CANOPY_MSGTYPE_REQUEST)));
    /* routes, topic and a large payload */
    assert_int_equal (canopy_msg_route_enable (m[0]), 0);
    assert_int_equal (canopy_msg_route_push (m[0], "a"), 0);
    assert_int_equal (canopy_msg_set_topic (m[0], "x.y"), 0);
    assert_int_equal (canopy_msg_set_payload (m[0], payload, big), 0);
    /* no payload */
    assert_int_equal (canopy_msg_set_topic (m[1], "only.topic"), 0);
    /* a head longer than the stack buffer (ten 60-byte routes) */
    assert_int_equal (canopy_msg_route_enable (m[2]), 0);
    for (int i = 0; i < 10; i++)
        assert_int_equal (canopy_msg_route_push (m[2], route), 0);
    assert_int_equal (canopy_msg_set_topic (m[2], "long.head"), 0);
    assert_int_equal (canopy_msg_set_payload (m[2], "abc", 3), 0);
    /* a one-byte payload, nothing else */
    assert_int_equal (canopy_msg_set_payload (m[3], "z", 1), 0);

    assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, sv), 0);
    sk.fd = sv[1];
    assert_int_equal (pthread_create (&t, NULL, sink_thread, &sk), 0);
    /* the large one first without waiting: what fits goes at once, the
     * rest in more writes, resuming inside the payload
     */
    for (int i = 0; i < 4; i++)
        assert_int_equal (msg_frame_send (sv[0], m[i], i == 0), 0);
    close (sv[0]);
    assert_int_equal (pthread_join (t, NULL), 0);
    close (sv[1]);
    /* the stream is exactly the frames msg_frame_encode makes */
    size_t off = 0;
    for (int i = 0; i < 4; i++) {
        size_t size;
        void *want = msg_frame_encode (m[i], &size);
        assert_non_null (want);
        assert_true (off + size <= sk.len);
        assert_memory_equal (sk.buf + off, want, size);
        off += size;
        free (want);
    }
    assert_int_equal (off, sk.len);
    free (sk.buf);

    /* a full socket: with nonblock, EAGAIN and nothing written */
    assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, sv), 0);
    int sent = 0;
    while (msg_frame_send (sv[0], m[3], true) == 0)
        sent++;
    assert_int_equal (errno, EAGAIN);
    assert_true (sent > 0);
    struct msg_instream in;
    msg_instream_init (&in);
    int got = 0;
    close (sv[0]);
    for (;;) {
        canopy_msg_t *msg = msg_instream_next (&in);
        if (msg) {
            got++;
            canopy_msg_decref (msg);
            continue;
        }
        assert_int_equal (errno, EAGAIN);
        if (msg_instream_fill (&in, sv[1]) <= 0)
            break;
    }
    assert_int_equal (got, sent);       /* whole frames only */
    msg_instream_release (&in);
    close (sv[1]);

    /* the peer gone */
    assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, sv), 0);
    close (sv[1]);
    errno = 0;
    assert_int_equal (msg_frame_send (sv[0], m[0], false), -1);
    assert_int_equal (errno, ECONNRESET);
    close (sv[0]);

    for (int i = 0; i < 4; i++)
        canopy_msg_decref (m[i]);
    free (payload);
}

static void test_bad_frames (void **state)
{
    int sv[2];
    struct msg_instream in;
    assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, sv), 0);
    msg_instream_init (&in);
    /* claims 4 GiB */
    unsigned char huge[4] = { 0xff, 0xff, 0xff, 0xff };
    assert_int_equal (write (sv[0], huge, 4), 4);
    assert_true (msg_instream_fill (&in, sv[1]) > 0);
    assert_null (msg_instream_next (&in));
    assert_int_equal (errno, EMSGSIZE);
    msg_instream_release (&in);

    /* well-framed garbage */
    msg_instream_init (&in);
    unsigned char garbage[] = { 0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o' };
    assert_int_equal (write (sv[0], garbage, sizeof (garbage)), sizeof (garbage));
    assert_true (msg_instream_fill (&in, sv[1]) > 0);
    assert_null (msg_instream_next (&in));
    assert_int_equal (errno, EPROTO);
    msg_instream_release (&in);
    close (sv[0]);
    close (sv[1]);
}

/* Regression: a 4-byte header claiming a frame just under the size limit
 * made msg_instream_fill() allocate the whole frame (256 MiB) before any of
 * it arrived: one connection, four bytes, a quarter gigabyte.  The buffer
 * must grow with the bytes actually received.
 */
static void test_claimed_size_not_preallocated (void **state)
{
    int sv[2];
    struct msg_instream in;
    uint32_t claim = CANOPY_MSG_SIZE_MAX;
    unsigned char hdr[4] = { claim >> 24, claim >> 16, claim >> 8, claim };
    char chunk[4096];

    assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, sv), 0);
    msg_instream_init (&in);
    assert_int_equal (write (sv[0], hdr, 4), 4);
    assert_true (msg_instream_fill (&in, sv[1]) > 0);
    assert_null (msg_instream_next (&in));
    assert_int_equal (errno, EAGAIN);
    /* nothing more arrived: the buffer holds 4 bytes */
    assert_true (msg_instream_fill (&in, sv[1]) < 0 && errno == EAGAIN);
    assert_true (in.cap <= 1024 * 1024);
    /* 64 KiB more: the buffer stays proportional to what was received */
    memset (chunk, 'x', sizeof (chunk));
    for (int i = 0; i < 16; i++)
        assert_int_equal (write (sv[0], chunk, sizeof (chunk)), sizeof (chunk));
    while (msg_instream_fill (&in, sv[1]) > 0)
        ;
    assert_int_equal (in.len - in.off, 4 + 16 * sizeof (chunk));
    assert_true (in.cap <= 4 * 1024 * 1024);
    assert_null (msg_instream_next (&in));
    assert_int_equal (errno, EAGAIN);
    msg_instream_release (&in);
    close (sv[0]);
    close (sv[1]);
}

/* A local peer's request gets the connection's credentials plus LOCAL;
 * only the owner may present others, and only complete ones.
 */
/* Stamp msg as from a peer of (peer_uid, peer_roles) and check what it
 * carries then.
 */
static void check_stamp (canopy_msg_t *msg, uint32_t peer_uid, uint32_t peer_roles,
                         uint32_t want_uid, uint32_t want_roles)
{
    uint32_t userid = 0, rolemask = 0;

    assert_int_equal (msg_stamp_credentials (msg, peer_uid, peer_roles), 0);
    assert_int_equal (canopy_msg_get_userid (msg, &userid), 0);
    assert_int_equal (canopy_msg_get_rolemask (msg, &rolemask), 0);
    assert_int_equal (userid, want_uid);
    assert_int_equal (rolemask, want_roles | CANOPY_ROLE_LOCAL);
}

static void test_stamp_credentials (void **state)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);

    assert_non_null (msg);
    check_stamp (msg, 1000, CANOPY_ROLE_USER, 1000, CANOPY_ROLE_USER);

    /* a guest presenting the owner's role gets its own */
    assert_int_equal (canopy_msg_set_userid (msg, 0), 0);
    assert_int_equal (canopy_msg_set_rolemask (msg, CANOPY_ROLE_OWNER), 0);
    check_stamp (msg, 1000, CANOPY_ROLE_USER, 1000, CANOPY_ROLE_USER);

    /* the owner presenting a guest keeps it */
    assert_int_equal (canopy_msg_set_userid (msg, 4242), 0);
    assert_int_equal (canopy_msg_set_rolemask (msg, CANOPY_ROLE_USER), 0);
    check_stamp (msg, 0, CANOPY_ROLE_OWNER, 4242, CANOPY_ROLE_USER);

    /* ... but not half of one */
    assert_int_equal (canopy_msg_set_userid (msg, CANOPY_USERID_UNKNOWN), 0);
    check_stamp (msg, 0, CANOPY_ROLE_OWNER, 0, CANOPY_ROLE_OWNER);
    canopy_msg_decref (msg);
}

/* The disconnect notice: NORESPONSE request, the peer as the only hop,
 * its credentials plus LOCAL.
 */
static void test_disconnect_create (void **state)
{
    canopy_msg_t *msg = msg_disconnect_create ("kvs.disconnect", 3, "0:d7",
                                               1000, CANOPY_ROLE_USER);
    uint32_t nodeid = 0, userid = 0, rolemask = 0;

    assert_non_null (msg);
    assert_int_equal (canopy_msg_get_type (msg), CANOPY_MSGTYPE_REQUEST);
    assert_string_equal (canopy_msg_get_topic (msg), "kvs.disconnect");
    assert_true (canopy_msg_has_flag (msg, CANOPY_MSGFLAG_NORESPONSE));
    assert_int_equal (canopy_msg_get_nodeid (msg, &nodeid), 0);
    assert_int_equal (nodeid, 3);
    assert_int_equal (canopy_msg_route_count (msg), 1);
    assert_string_equal (canopy_msg_route_last (msg), "0:d7");
    assert_int_equal (canopy_msg_get_userid (msg, &userid), 0);
    assert_int_equal (canopy_msg_get_rolemask (msg, &rolemask), 0);
    assert_int_equal (userid, 1000);
    assert_int_equal (rolemask, CANOPY_ROLE_USER | CANOPY_ROLE_LOCAL);
    canopy_msg_decref (msg);

    errno = 0;
    assert_null (msg_disconnect_create ("", 0, "0:d7", 0, CANOPY_ROLE_OWNER));
    assert_int_equal (errno, EINVAL);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_batch),
        cmocka_unit_test (test_split_large),
        cmocka_unit_test (test_frame_send),
        cmocka_unit_test (test_bad_frames),
        cmocka_unit_test (test_claimed_size_not_preallocated),
        cmocka_unit_test (test_stamp_credentials),
        cmocka_unit_test (test_disconnect_create),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
