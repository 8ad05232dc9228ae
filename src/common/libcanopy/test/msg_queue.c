/* test/msg_queue.c - the queue between the broker and a module thread:
 * a message crosses with every field intact as a private copy (the
 * sender's message may change afterwards); send_owned hands the message
 * itself over when it is not shared; order is kept across the ring's
 * growth; the descriptor is readable exactly while something waits
 * (after a partial drain too) and not after EAGAIN; messages left queued
 * are released with the last reference (ASan/valgrind see no leak);
 * close fails further sends and, once drained, the receiver; and two
 * senders on other threads lose nothing against a receiver that sleeps
 * on the descriptor (a lost wake-up would hang the test).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <canopy/message.h>
#include "src/common/libcanopy/msg_queue.h"

static canopy_msg_t *mkreq (uint32_t tag)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    assert_non_null (msg);
    assert_int_equal (canopy_msg_set_topic (msg, "kvs.lookup"), 0);
    assert_int_equal (canopy_msg_set_string (msg, "{\"key\":\"a.b\"}"), 0);
    assert_int_equal (canopy_msg_set_matchtag (msg, tag), 0);
    assert_int_equal (canopy_msg_set_userid (msg, 1000), 0);
    assert_int_equal (canopy_msg_route_enable (msg), 0);
    assert_int_equal (canopy_msg_route_push (msg, "0:c1"), 0);
    assert_int_equal (canopy_msg_route_push (msg, "0:b"), 0);
    return msg;
}

static uint32_t tag_of (const canopy_msg_t *msg)
{
    uint32_t tag = 0;
    assert_int_equal (canopy_msg_get_matchtag (msg, &tag), 0);
    return tag;
}

static bool readable (msg_queue_t *q)
{
    struct pollfd pfd = { .fd = msg_queue_pollfd (q), .events = POLLIN };
    return poll (&pfd, 1, 0) == 1;
}

static void test_roundtrip (void **state)
{
    msg_queue_t *q = msg_queue_create ();
    canopy_msg_t *req = mkreq (42);
    const char *s;
    uint32_t uid = 0;

    assert_non_null (q);
    assert_false (readable (q));
    assert_int_equal (msg_queue_send (q, req), 0);
    assert_true (readable (q));
    assert_int_equal (msg_queue_count (q), 1);
    /* the sender's message changes after the send: the copy does not */
    assert_int_equal (canopy_msg_set_topic (req, "changed"), 0);
    canopy_msg_t *got = msg_queue_recv (q);
    assert_non_null (got);
    assert_ptr_not_equal (got, req);
    assert_string_equal (canopy_msg_get_topic (got), "kvs.lookup");
    assert_int_equal (canopy_msg_get_string (got, &s), 0);
    assert_string_equal (s, "{\"key\":\"a.b\"}");
    assert_int_equal (tag_of (got), 42);
    assert_int_equal (canopy_msg_get_userid (got, &uid), 0);
    assert_int_equal (uid, 1000);
    assert_int_equal (canopy_msg_route_count (got), 2);
    assert_string_equal (canopy_msg_route_first (got), "0:b");
    assert_string_equal (canopy_msg_route_last (got), "0:c1");
    /* empty now: EAGAIN, and the descriptor is quiet */
    errno = 0;
    assert_null (msg_queue_recv (q));
    assert_int_equal (errno, EAGAIN);
    assert_false (readable (q));
    canopy_msg_decref (got);
    canopy_msg_decref (req);
    msg_queue_decref (q);
}

static void test_owned (void **state)
{
    msg_queue_t *q = msg_queue_create ();
    canopy_msg_t *req = mkreq (1);

    /* not shared: the message itself crosses */
    assert_int_equal (msg_queue_send_owned (q, req), 0);
    canopy_msg_t *got = msg_queue_recv (q);
    assert_ptr_equal (got, req);
    canopy_msg_decref (got);

    /* shared: a copy crosses, the caller's extra reference is dropped */
    req = mkreq (2);
    canopy_msg_incref (req);
    assert_int_equal (msg_queue_send_owned (q, req), 0);
    got = msg_queue_recv (q);
    assert_ptr_not_equal (got, req);
    assert_int_equal (tag_of (got), 2);
    canopy_msg_decref (got);
    canopy_msg_decref (req);

    /* bad arguments consume the reference too */
    errno = 0;
    assert_int_equal (msg_queue_send_owned (NULL, mkreq (3)), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (msg_queue_send (q, NULL), -1);
    assert_int_equal (msg_queue_send (NULL, req = mkreq (4)), -1);
    canopy_msg_decref (req);
    assert_null (msg_queue_recv (NULL));
    assert_int_equal (errno, EINVAL);
    assert_int_equal (msg_queue_pollfd (NULL), -1);
    assert_int_equal (msg_queue_count (NULL), 0);
    msg_queue_decref (NULL);
    msg_queue_close (NULL);
    msg_queue_decref (q);
}

/* Order across growth of the ring (64 -> 128 -> ... -> 1024), with the
 * head wrapped: take some first, then queue past capacity.
 */
static void test_order_growth (void **state)
{
    msg_queue_t *q = msg_queue_create ();
    uint32_t next = 0, sent = 0;

    for (; sent < 40; sent++)
        assert_int_equal (msg_queue_send_owned (q, mkreq (sent)), 0);
    for (int i = 0; i < 30; i++) {
        canopy_msg_t *m = msg_queue_recv (q);
        assert_int_equal (tag_of (m), next++);
        canopy_msg_decref (m);
    }
    for (; sent < 1000; sent++)
        assert_int_equal (msg_queue_send_owned (q, mkreq (sent)), 0);
    assert_int_equal (msg_queue_count (q), 970);
    /* a partial drain leaves the descriptor readable for the rest */
    for (int i = 0; i < 500; i++) {
        canopy_msg_t *m = msg_queue_recv (q);
        assert_int_equal (tag_of (m), next++);
        canopy_msg_decref (m);
    }
    assert_true (readable (q));
    canopy_msg_t *m;
    while ((m = msg_queue_recv (q))) {
        assert_int_equal (tag_of (m), next++);
        canopy_msg_decref (m);
    }
    assert_int_equal (errno, EAGAIN);
    assert_int_equal (next, 1000);
    assert_false (readable (q));
    msg_queue_decref (q);
}

/* Messages still queued go with the last reference. */
static void test_release_queued (void **state)
{
    msg_queue_t *q = msg_queue_create ();
    assert_ptr_equal (msg_queue_incref (q), q);
    for (int i = 0; i < 100; i++)
        assert_int_equal (msg_queue_send_owned (q, mkreq (i)), 0);
    msg_queue_decref (q);
    assert_int_equal (msg_queue_count (q), 100);    /* one reference left */
    msg_queue_decref (q);
}

static void test_close (void **state)
{
    msg_queue_t *q = msg_queue_create ();
    canopy_msg_t *req = mkreq (7);

    assert_int_equal (msg_queue_send (q, req), 0);
    msg_queue_close (q);
    msg_queue_close (q);        /* idempotent */
    errno = 0;
    assert_int_equal (msg_queue_send (q, req), -1);
    assert_int_equal (errno, ECONNRESET);
    assert_int_equal (msg_queue_send_owned (q, canopy_msg_incref (req)), -1);
    assert_int_equal (errno, ECONNRESET);
    /* what was queued before the close is still delivered */
    canopy_msg_t *got = msg_queue_recv (q);
    assert_non_null (got);
    assert_int_equal (tag_of (got), 7);
    canopy_msg_decref (got);
    /* then the receiver learns, and stays woken */
    assert_true (readable (q));
    assert_null (msg_queue_recv (q));
    assert_int_equal (errno, ECONNRESET);
    assert_true (readable (q));
    assert_int_equal (msg_queue_wait (q, -1), 1);
    canopy_msg_decref (req);
    msg_queue_decref (q);
}

#define PER_SENDER 20000

struct sender {
    msg_queue_t *q;
    uint32_t base;
    int pace;           /* spin up to this many rounds between sends */
};

static void *sender_thread (void *arg)
{
    struct sender *s = arg;
    for (uint32_t i = 0; i < PER_SENDER; i++) {
        canopy_msg_t *m = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
        if (!m || canopy_msg_set_matchtag (m, s->base + i) < 0
            || msg_queue_send_owned (s->q, m) < 0)
            return (void *)1;
        /* let the receiver catch up now and then, so that it often
         * finds the queue empty just as a message arrives */
        for (volatile int spin = (i * 7919u) % (s->pace + 1); spin > 0; spin--)
            ;
    }
    return NULL;
}

/* Two sender threads, pacing their sends by up to 'pace' spin rounds. */
static void senders_start (msg_queue_t *q, int pace, struct sender s[2],
                           pthread_t t[2])
{
    for (int i = 0; i < 2; i++) {
        s[i] = (struct sender){ .q = q, .base = (uint32_t)i << 24, .pace = pace };
        assert_int_equal (pthread_create (&t[i], NULL, sender_thread, &s[i]), 0);
    }
}

/* Join the senders; the receiver has taken everything: the queue is
 * empty and its descriptor no longer readable.
 */
static void senders_finish (msg_queue_t *q, pthread_t t[2])
{
    for (int i = 0; i < 2; i++) {
        void *rc;
        pthread_join (t[i], &rc);
        assert_null (rc);
    }
    assert_null (msg_queue_recv (q));
    assert_false (readable (q));
}

/* Each sender's messages arrive in the order it sent them. */
static void check_order (canopy_msg_t *m, uint32_t next[2])
{
    uint32_t tag = tag_of (m);
    int who = tag >> 24;
    assert_int_equal (tag & 0xffffff, next[who]);
    next[who]++;
}

/* Two senders, one receiver that sleeps whenever it sees EAGAIN: every
 * message arrives, each sender's in order, and the receiver is never
 * left asleep with a message queued (that would hang here).
 */
static void test_threads (void **state)
{
    msg_queue_t *q = msg_queue_create ();
    struct sender s[2];
    pthread_t t[2];
    uint32_t next[2] = { 0, 0 };
    int got = 0, sleeps = 0;

    senders_start (q, 0, s, t);
    while (got < 2 * PER_SENDER) {
        canopy_msg_t *m = msg_queue_recv (q);
        if (!m) {
            assert_int_equal (errno, EAGAIN);
            assert_int_equal (msg_queue_wait (q, 10000), 1);
            sleeps++;
            continue;
        }
        check_order (m, next);
        got++;
        canopy_msg_decref (m);
    }
    senders_finish (q, t);
    print_message ("# %d messages, receiver slept %d times\n", got, sleeps);
    msg_queue_decref (q);
}

/* The reactor's pattern: wait for the descriptor, take at most a few
 * messages, go back to waiting.  The descriptor must be readable
 * whenever a message waits, so the wait never times out with messages
 * queued.  Regression: the receiver used to clear the wake-up flag and
 * read the eventfd in two steps; a sender in between had its write read
 * away with its message still queued, and a receiver that stopped after
 * a batch then slept on a queue that was not empty.
 */
static void test_threads_batches (void **state)
{
    msg_queue_t *q = msg_queue_create ();
    struct sender s[2];
    pthread_t t[2];
    uint32_t next[2] = { 0, 0 };
    int got = 0, wakes = 0;

    senders_start (q, 2000, s, t);
    while (got < 2 * PER_SENDER) {
        int rc = msg_queue_wait (q, 5000);
        if (rc == 0 && msg_queue_count (q) > 0)
            fail_msg ("asleep with %d messages queued after %d",
                      msg_queue_count (q), got);
        assert_int_equal (rc, 1);
        wakes++;
        for (int i = 0; i < 3; i++) {
            canopy_msg_t *m = msg_queue_recv (q);
            if (!m) {
                assert_int_equal (errno, EAGAIN);
                break;
            }
            check_order (m, next);
            got++;
            canopy_msg_decref (m);
        }
    }
    senders_finish (q, t);
    print_message ("# %d messages in %d wake-ups\n", got, wakes);
    msg_queue_decref (q);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_roundtrip),
        cmocka_unit_test (test_owned),
        cmocka_unit_test (test_order_growth),
        cmocka_unit_test (test_release_queued),
        cmocka_unit_test (test_close),
        cmocka_unit_test (test_threads),
        cmocka_unit_test (test_threads_batches),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
