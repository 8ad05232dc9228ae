/* test/rpctrack.c - requests in flight on a link: add, match by route
 * stack and matchtag, streaming, duplicates, purge, selective purge.
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
#include "src/broker/rpctrack.h"

static canopy_msg_t *req (uint32_t tag, const char **hops, int nhops, bool streaming)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    assert_non_null (msg);
    assert_int_equal (canopy_msg_set_topic (msg, "svc.method"), 0);
    assert_int_equal (canopy_msg_set_matchtag (msg, tag), 0);
    assert_int_equal (canopy_msg_set_string (msg, "{\"pad\":\"xxxxxxxx\"}"), 0);
    assert_int_equal (canopy_msg_route_enable (msg), 0);
    for (int i = 0; i < nhops; i++)
        assert_int_equal (canopy_msg_route_push (msg, hops[i]), 0);
    if (streaming)
        assert_int_equal (canopy_msg_set_flag (msg, CANOPY_MSGFLAG_STREAMING, true), 0);
    return msg;
}

static canopy_msg_t *rsp (const canopy_msg_t *r, int errnum)
{
    canopy_msg_t *msg = canopy_response_derive (r, errnum);
    assert_non_null (msg);
    return msg;
}

static void test_basic (void **state)
{
    const char *a[] = { "0:c1", "0" };
    const char *b[] = { "0:c2", "0" };
    rpctrack_t *t = rpctrack_create ();
    canopy_msg_t *r1 = req (1, a, 2, false);
    canopy_msg_t *r2 = req (1, b, 2, false);   /* same tag, other sender */
    canopy_msg_t *r3 = req (2, a, 2, false);

    assert_non_null (t);
    assert_int_equal (rpctrack_add (t, r1), 0);
    assert_int_equal (rpctrack_add (t, r2), 0);
    assert_int_equal (rpctrack_add (t, r3), 0);
    assert_int_equal (rpctrack_count (t), 3);

    canopy_msg_t *x = rsp (r2, 0);
    assert_true (rpctrack_match (t, x));
    assert_false (rpctrack_match (t, x));       /* answered already */
    assert_int_equal (rpctrack_count (t), 2);
    canopy_msg_decref (x);

    /* a request is not a response */
    assert_false (rpctrack_match (t, r1));
    rpctrack_remove (t, r3);
    assert_int_equal (rpctrack_count (t), 1);

    canopy_msg_decref (r1);
    canopy_msg_decref (r2);
    canopy_msg_decref (r3);
    rpctrack_destroy (t);
    rpctrack_destroy (NULL);
}

static void test_untracked (void **state)
{
    const char *a[] = { "3:c9" };
    rpctrack_t *t = rpctrack_create ();
    canopy_msg_t *r = req (5, a, 1, false);
    canopy_msg_t *ev = canopy_msg_create (CANOPY_MSGTYPE_EVENT);

    assert_int_equal (canopy_msg_set_flag (r, CANOPY_MSGFLAG_NORESPONSE, true), 0);
    assert_int_equal (rpctrack_add (t, r), 0);
    assert_int_equal (rpctrack_add (t, ev), 0);
    assert_int_equal (rpctrack_count (t), 0);
    assert_int_equal (rpctrack_add (NULL, r), -1);
    assert_int_equal (errno, EINVAL);
    canopy_msg_decref (r);
    canopy_msg_decref (ev);
    rpctrack_destroy (t);
}

static void test_streaming (void **state)
{
    const char *a[] = { "1:mkvs", "1" };
    rpctrack_t *t = rpctrack_create ();
    canopy_msg_t *r = req (7, a, 2, true);
    canopy_msg_t *ok = rsp (r, 0);
    canopy_msg_t *end = rsp (r, ENODATA);

    assert_int_equal (rpctrack_add (t, r), 0);
    for (int i = 0; i < 5; i++)
        assert_true (rpctrack_match (t, ok));
    assert_int_equal (rpctrack_count (t), 1);
    assert_true (rpctrack_match (t, end));
    assert_int_equal (rpctrack_count (t), 0);
    assert_false (rpctrack_match (t, ok));
    canopy_msg_decref (r);
    canopy_msg_decref (ok);
    canopy_msg_decref (end);
    rpctrack_destroy (t);
}

struct purged {
    int n;
    uint32_t tags;
    rpctrack_t *t;
};

static void purge_cb (const canopy_msg_t *r, void *arg)
{
    struct purged *p = arg;
    uint32_t tag;
    const void *data;
    size_t size;
    assert_int_equal (canopy_msg_get_matchtag (r, &tag), 0);
    /* the copy has no payload but keeps the route stack */
    assert_int_equal (canopy_msg_get_payload (r, &data, &size), 0);
    assert_int_equal (size, 0);
    assert_int_equal (canopy_msg_route_count (r), 2);
    p->tags += tag;
    /* callbacks may use the tracker again: it was emptied first, so it
     * holds only what earlier callbacks added
     */
    assert_int_equal (rpctrack_count (p->t), p->n);
    assert_int_equal (rpctrack_add (p->t, r), 0);
    p->n++;
}

static void test_purge_and_duplicates (void **state)
{
    const char *a[] = { "0:c1", "0" };
    rpctrack_t *t = rpctrack_create ();
    struct purged p = { .t = t };
    canopy_msg_t *r[4];

    for (int i = 0; i < 4; i++) {
        r[i] = req (i < 2 ? 10 : 10 + i, a, 2, false);
        assert_int_equal (rpctrack_add (t, r[i]), 0);
    }
    assert_int_equal (rpctrack_count (t), 4);   /* two share a key */
    rpctrack_purge (t, purge_cb, &p);
    assert_int_equal (p.n, 4);
    assert_int_equal (p.tags, 10 + 10 + 12 + 13);
    assert_int_equal (rpctrack_count (t), 4);   /* re-added by the callback */
    rpctrack_purge (t, NULL, NULL);
    assert_int_equal (rpctrack_count (t), 0);
    rpctrack_purge (t, purge_cb, &p);           /* empty: no calls */
    assert_int_equal (p.n, 4);
    for (int i = 0; i < 4; i++)
        canopy_msg_decref (r[i]);
    rpctrack_destroy (t);
}

/* Purge only what the predicate picks: requests that came from "0"
 * through "1", not those of rank 1's own clients or of another child.
 */
static bool came_from_0 (const canopy_msg_t *r, void *arg)
{
    (*(int *)arg)++;
    return canopy_msg_route_count (r) >= 2 && !strcmp (canopy_msg_route_at (r, 1), "0");
}

/* Does the tracker know the request that a success response to r answers? */
static bool answered (rpctrack_t *t, const canopy_msg_t *r)
{
    canopy_msg_t *x = rsp (r, 0);
    bool found = rpctrack_match (t, x);
    canopy_msg_decref (x);
    return found;
}

static void count_cb (const canopy_msg_t *r, void *arg)
{
    (*(int *)arg)++;
}

static void test_purge_if (void **state)
{
    const char *above[] = { "0:c1", "0", "1" };
    const char *local[] = { "1:c2", "1" };
    const char *sibling[] = { "3:c3", "3", "1" };
    const char *via0[] = { "2:c4", "2", "0", "1" };   /* from rank 2, via 0 */
    const char *via3[] = { "0:c5", "0", "3", "1" };   /* from rank 0's client, via 3 */
    rpctrack_t *t = rpctrack_create ();
    canopy_msg_t *a1 = req (1, above, 3, false);
    canopy_msg_t *a2 = req (2, above, 3, true);
    canopy_msg_t *l = req (1, local, 2, false);
    canopy_msg_t *s = req (1, sibling, 3, false);
    canopy_msg_t *v0 = req (5, via0, 4, false);
    canopy_msg_t *v3 = req (5, via3, 4, false);
    int asked = 0, called = 0;

    assert_int_equal (rpctrack_purge_if (NULL, came_from_0, &asked, NULL, NULL), 0);
    assert_int_equal (rpctrack_purge_if (t, came_from_0, &asked, NULL, NULL), 0);
    assert_int_equal (asked, 0);                /* empty: not asked */
    assert_int_equal (rpctrack_add (t, a1), 0);
    assert_int_equal (rpctrack_add (t, a1), 0); /* a duplicate counts twice */
    assert_int_equal (rpctrack_add (t, a2), 0);
    assert_int_equal (rpctrack_add (t, l), 0);
    assert_int_equal (rpctrack_add (t, s), 0);
    assert_int_equal (rpctrack_add (t, v0), 0);
    assert_int_equal (rpctrack_add (t, v3), 0);
    assert_int_equal (rpctrack_count (t), 7);
    assert_int_equal (rpctrack_purge_if (t, came_from_0, &asked, count_cb, &called), 4);
    assert_int_equal (called, 4);
    assert_int_equal (rpctrack_count (t), 3);
    /* the others still match their responses; the purged ones do not */
    assert_false (answered (t, v0));
    assert_false (answered (t, a1));
    assert_true (answered (t, v3));
    assert_true (answered (t, l));
    assert_true (answered (t, s));
    assert_int_equal (rpctrack_count (t), 0);
    assert_int_equal (rpctrack_purge_if (t, NULL, NULL, NULL, NULL), 0);
    canopy_msg_decref (a1);
    canopy_msg_decref (a2);
    canopy_msg_decref (l);
    canopy_msg_decref (s);
    canopy_msg_decref (v0);
    canopy_msg_decref (v3);
    rpctrack_destroy (t);
}

/* Keys longer than the stack buffer (deep route stacks of long ids) take
 * the allocated path; stacks that differ only in where the '!' separators
 * fall, or in the tag, stay distinct.
 */
static void test_long_keys (void **state)
{
    char ids[40][64];
    const char *hops[40];
    rpctrack_t *t = rpctrack_create ();
    assert_non_null (t);
    for (int i = 0; i < 40; i++) {
        snprintf (ids[i], sizeof (ids[i]), "%d:%s", i,
                  "a-rather-long-identifier-for-a-route-hop");
        hops[i] = ids[i];
    }
    canopy_msg_t *deep = req (4294967295u, hops, 40, false);
    canopy_msg_t *deep0 = req (0, hops, 40, false);
    const char *x[] = { "ab", "c" };
    const char *y[] = { "a", "bc" };
    canopy_msg_t *rx = req (7, x, 2, false);
    canopy_msg_t *ry = req (7, y, 2, false);
    assert_int_equal (rpctrack_add (t, deep), 0);
    assert_int_equal (rpctrack_add (t, deep0), 0);
    assert_int_equal (rpctrack_add (t, rx), 0);
    assert_int_equal (rpctrack_add (t, ry), 0);
    assert_int_equal (rpctrack_count (t), 4);
    canopy_msg_t *a = rsp (deep, 0), *b = rsp (rx, 0);
    assert_true (rpctrack_match (t, a));
    assert_false (rpctrack_match (t, a));   /* answered once */
    assert_true (rpctrack_match (t, b));
    assert_int_equal (rpctrack_count (t), 2);
    rpctrack_remove (t, deep0);
    rpctrack_remove (t, ry);
    assert_int_equal (rpctrack_count (t), 0);
    canopy_msg_decref (a);
    canopy_msg_decref (b);
    canopy_msg_decref (deep);
    canopy_msg_decref (deep0);
    canopy_msg_decref (rx);
    canopy_msg_decref (ry);
    rpctrack_destroy (t);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_basic),
        cmocka_unit_test (test_untracked),
        cmocka_unit_test (test_streaming),
        cmocka_unit_test (test_purge_and_duplicates),
        cmocka_unit_test (test_purge_if),
        cmocka_unit_test (test_long_keys),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
