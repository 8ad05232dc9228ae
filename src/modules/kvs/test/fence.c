/* test/fence.c - fence aggregation (fence.c) over a fake handle:
 *
 * ranks > 0: merging, self-clocked relays (one in flight, the rest with
 * the acknowledgement), relays held for the participants the last fence
 * of the same size brought (and released when relay-hold runs out), relays bounded by the size limit, and every way a
 * relay can fail turning its fences into error contributions (regression:
 * an oversized merge failed again on every pass and never reached rank 0;
 * a failed send dropped the contributions); answers from the setroot
 * event; disconnects; request validation (regression: an error text was
 * sent uninitialised).
 *
 * rank 0: readiness, too many participants, the finished table (late
 * joiners, names forgotten after FINISHED_KEEP), the status record of a
 * fence (kvs.fence-status), per-user limits,
 * timeouts, aborts, failing every open fence, an outcome whose event
 * cannot be sent (published again), allocation failures while joining
 * (every client answered once).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <errno.h>
#include <unistd.h>
#include <canopy/kvs.h>
#include "src/common/libutil/monotime.h"
#include "src/common/libkvs/kvs_relay.h"
#include "src/common/libkvs/treeobj.h"
#include "src/modules/kvs/fence.h"
#include "kvsenv.h"
#include "failalloc.h"

static struct kvsenv *setup (uint32_t rank)
{
    struct kvsenv *env = kvsenv_create (rank, 8);
    assert_non_null ((env->ctx.fences = fence_table_create (&env->ctx)));
    return env;
}

static void teardown (struct kvsenv *env)
{
    fence_table_destroy (env->ctx.fences);
    kvsenv_destroy (env);
}

/* A client joins fence 'name' with key=val; its matchtag is 'tag'. */
static void join (struct kvsenv *env, uint32_t tag, const char *sender,
                  const char *name, int nprocs, const char *key,
                  const void *val, size_t len)
{
    canopy_msg_t *msg = kvsenv_txn_request ("kvs.fence", tag, sender, name,
                                            nprocs, 0, key, val, len);
    fence_request (env->ctx.fences, msg, false);
    canopy_msg_decref (msg);
}

/* The response to request 'tag': its errnum (0 for success), or -1 if
 * there is none.
 */
static int answer (struct kvsenv *env, uint32_t tag, char *text, size_t size)
{
    canopy_msg_t *rsp = fakeh_take_response (env->fake, tag);
    int errnum = -1;
    if (rsp) {
        assert_int_equal (canopy_msg_get_errnum (rsp, &errnum), 0);
        if (text) {
            const char *s = errnum ? canopy_msg_errstr (rsp) : NULL;
            snprintf (text, size, "%s", s ? s : "");
        }
        canopy_msg_decref (rsp);
    }
    return errnum;
}

/* The next relay of 'topic' sent upstream (decoded; its request in
 * *req), or NULL.
 */
static kvs_relay_t *take_topic (struct kvsenv *env, const char *topic,
                                canopy_msg_t **req)
{
    canopy_error_t error;
    const void *data;
    size_t len;
    kvs_relay_t *r;

    if (!(*req = fakeh_take (env->fake, CANOPY_MSGTYPE_REQUEST, topic)))
        return NULL;
    assert_int_equal (canopy_msg_get_payload (*req, &data, &len), 0);
    assert_true (len <= env->ctx.limits.relay_max);
    if (!(r = kvs_relay_decode (data, len, &error)))
        fail_msg ("relay does not decode: %s", error.text);
    return r;
}

static kvs_relay_t *take_relay (struct kvsenv *env, canopy_msg_t **req)
{
    return take_topic (env, "kvs.relay", req);
}

/* Answer relay request 'req' (errnum 0: acknowledge), drop it, and run. */
static void reply (struct kvsenv *env, canopy_msg_t *req, int errnum)
{
    fakeh_respond (env->fake, req, errnum, NULL, 0);
    canopy_msg_decref (req);
    kvsenv_run (env);
}

static const struct kvs_relay_fence *find (kvs_relay_t *r, const char *name)
{
    for (int i = 0; i < kvs_relay_count (r); i++) {
        if (!strcmp (kvs_relay_fence (r, i)->name, name))
            return kvs_relay_fence (r, i);
    }
    return NULL;
}

static int ndirty_open (struct kvsenv *env)
{
    struct fence_stats st;
    fence_stats (env->ctx.fences, &st);
    return st.open;
}

static void test_merge_and_relay (void **state)
{
    struct kvsenv *env = setup (3);
    canopy_msg_t *req, *req2;
    kvs_relay_t *r;
    const struct kvs_relay_fence *c;

    /* two participants of "f" and a commit-like fence "g" in one pass */
    join (env, 1, "3:c1", "f", 4, "a", "1", 1);
    join (env, 2, "3:c2", "f", 4, "b", "2", 1);
    join (env, 3, "3:c3", "g", 1, "c", "3", 1);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "kvs.relay"), 0);
    kvsenv_run (env);
    assert_non_null ((r = take_relay (env, &req)));
    assert_int_equal (kvs_relay_count (r), 2);
    assert_non_null ((c = find (r, "f")));
    assert_int_equal (c->count, 2);
    assert_int_equal (c->nprocs, 4);
    assert_int_equal (c->nops, 2);
    assert_int_equal (c->errnum, 0);
    assert_non_null ((c = find (r, "g")));
    assert_int_equal (c->count, 1);
    kvs_relay_destroy (r);
    assert_int_equal (env->ctx.stats.relays_sent, 1);
    assert_int_equal (env->ctx.timing.relay_encode.count, 1);

    /* while it travels, more arrives: it waits for the acknowledgement
     * (and a pass that sends nothing times no relay)
     */
    join (env, 4, "3:c4", "f", 4, "d", "4", 1);
    kvsenv_run (env);
    assert_null (take_relay (env, &req2));
    assert_int_equal (env->ctx.timing.relay_encode.count, 1);
    reply (env, req, 0);
    assert_non_null ((r = take_relay (env, &req)));
    assert_int_equal (kvs_relay_count (r), 1);
    assert_non_null ((c = find (r, "f")));
    assert_int_equal (c->count, 1);     /* only what was merged since */
    kvs_relay_destroy (r);
    reply (env, req, 0);
    assert_null (take_relay (env, &req));

    /* nobody was answered yet: the event does it */
    assert_int_equal (answer (env, 1, NULL, 0), -1);
    json_t *names = json_pack ("[s]", "f");
    json_t *errors = json_pack ("[{s:s s:i s:s}]", "name", "g", "errnum", EIO,
                                "errstr", "it broke");
    fence_setroot (env->ctx.fences, names, errors, 7, "sha256-x");
    json_decref (names);
    json_decref (errors);
    char text[200];
    for (uint32_t tag = 1; tag <= 4; tag++) {
        if (tag == 3) {
            assert_int_equal (answer (env, tag, text, sizeof (text)), EIO);
            assert_string_equal (text, "it broke");
        }
        else
            assert_int_equal (answer (env, tag, NULL, 0), 0);
    }
    assert_int_equal (ndirty_open (env), 0);
    teardown (env);
}

/* Regression: a merged relay over the size limit failed to encode on
 * every pass, forever, and rank 0 never heard of it.  Now what fits
 * goes, a fence too large for any message becomes an E2BIG error
 * contribution, and nothing is left to retry.
 */
static void test_relay_too_large (void **state)
{
    struct kvsenv *env = setup (1);
    char big[6000];
    int relays = 0;
    bool small_seen = false, big_seen = false;
    canopy_msg_t *req;
    kvs_relay_t *r;

    memset (big, 'x', sizeof (big));
    env->ctx.limits.relay_max = 4096;
    join (env, 1, "1:c1", "small", 2, "a", "1", 1);
    join (env, 2, "1:c2", "big", 2, "b", big, sizeof (big));
    kvsenv_run (env);
    while ((r = take_relay (env, &req))) {
        const struct kvs_relay_fence *c;
        relays++;
        if ((c = find (r, "small"))) {
            assert_int_equal (c->errnum, 0);
            assert_int_equal (c->count, 1);
            small_seen = true;
        }
        if ((c = find (r, "big"))) {
            assert_int_equal (c->errnum, E2BIG);
            assert_string_equal (c->errstr, "merged contribution too large for one message");
            assert_int_equal (c->nops, 0);
            big_seen = true;
        }
        kvs_relay_destroy (r);
        reply (env, req, 0);
        assert_true (relays <= 2);
    }
    assert_true (small_seen);
    assert_true (big_seen);
    canopy_msg_t *log = fakeh_take (env->fake, CANOPY_MSGTYPE_REQUEST, "log.append");
    assert_non_null (log);
    canopy_msg_decref (log);
    /* two fences that fit alone but not together leave one by one */
    char half[2000];
    memset (half, 'h', sizeof (half));
    join (env, 3, "1:c3", "h1", 2, "x", half, sizeof (half));
    half[0] = 'i';
    join (env, 4, "1:c4", "h2", 2, "y", half, sizeof (half));
    kvsenv_run (env);
    relays = 0;
    while ((r = take_relay (env, &req))) {
        assert_int_equal (kvs_relay_count (r), 1);
        assert_int_equal (kvs_relay_fence (r, 0)->errnum, 0);
        relays++;
        kvs_relay_destroy (r);
        reply (env, req, 0);
    }
    assert_int_equal (relays, 2);
    teardown (env);
}

/* Regression: a relay whose send failed was counted as sent and its
 * contributions dropped.  Now they become error contributions, sent at
 * once in a relay of errors.
 */
static void test_relay_send_fails (void **state)
{
    struct kvsenv *env = setup (1);
    canopy_msg_t *req;
    kvs_relay_t *r;
    const struct kvs_relay_fence *c;

    join (env, 1, "1:c1", "f", 2, "a", "1", 1);
    fakeh_fail_send (env->fake, "kvs.relay", 0, 1, EHOSTUNREACH);
    kvsenv_run (env);
    assert_int_equal (fakeh_failed_sends (env->fake), 1);
    assert_non_null ((r = take_relay (env, &req)));
    assert_non_null ((c = find (r, "f")));
    assert_int_equal (c->errnum, EHOSTUNREACH);
    assert_non_null (strstr (c->errstr, "cannot relay the fence to the parent broker"));
    assert_int_equal (c->nops, 0);
    assert_int_equal (env->ctx.stats.relays_sent, 1);
    kvs_relay_destroy (r);
    reply (env, req, 0);
    assert_null (take_relay (env, &req));

    /* both the relay and the relay of errors fail: logged, dropped, and
     * the table is not wedged: nothing dirty, nothing retried
     */
    join (env, 2, "1:c2", "g", 2, "a", "1", 1);
    fakeh_fail_send (env->fake, "kvs.relay", 0, 2, ECONNRESET);
    kvsenv_run (env);
    assert_int_equal (fakeh_failed_sends (env->fake), 3);
    assert_null (take_relay (env, &req));
    kvsenv_run (env);
    assert_null (take_relay (env, &req));
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "log.append"), 3);
    join (env, 3, "1:c3", "h", 2, "a", "1", 1);
    kvsenv_run (env);
    assert_non_null ((r = take_relay (env, &req)));
    assert_int_equal (kvs_relay_count (r), 1);
    assert_non_null ((c = find (r, "h")));
    assert_int_equal (c->errnum, 0);
    kvs_relay_destroy (r);
    canopy_msg_decref (req);
    teardown (env);
}

/* The parent refuses a relay (or cannot be reached): the fences it
 * carried become errors in the next relay; fences that were not in it
 * are untouched.
 */
static void test_relay_refused (void **state)
{
    struct kvsenv *env = setup (2);
    canopy_msg_t *req;
    kvs_relay_t *r;
    const struct kvs_relay_fence *c;

    join (env, 1, "2:c1", "f", 2, "a", "1", 1);
    kvsenv_run (env);
    assert_non_null ((r = take_relay (env, &req)));
    kvs_relay_destroy (r);
    join (env, 2, "2:c2", "later", 2, "b", "2", 1);     /* waits */
    kvsenv_run (env);
    reply (env, req, EPROTO);
    assert_non_null ((r = take_relay (env, &req)));
    assert_int_equal (kvs_relay_count (r), 2);
    assert_non_null ((c = find (r, "f")));
    assert_int_equal (c->errnum, EPROTO);
    assert_non_null (strstr (c->errstr, "the relay to the parent broker failed"));
    assert_non_null ((c = find (r, "later")));
    assert_int_equal (c->errnum, 0);
    assert_int_equal (c->count, 1);
    kvs_relay_destroy (r);
    /* refused again: "f" is already failed, "later" becomes one */
    reply (env, req, EPROTO);
    assert_non_null ((r = take_relay (env, &req)));
    assert_int_equal (kvs_relay_count (r), 1);
    assert_non_null ((c = find (r, "later")));
    assert_int_equal (c->errnum, EPROTO);
    kvs_relay_destroy (r);
    reply (env, req, EPROTO);
    assert_null (take_relay (env, &req));       /* nothing loops */
    teardown (env);
}

static void test_disagree_disconnect (void **state)
{
    struct kvsenv *env = setup (1);
    canopy_msg_t *req;
    kvs_relay_t *r;
    const struct kvs_relay_fence *c;

    join (env, 1, "1:c1", "f", 3, "a", "1", 1);
    join (env, 2, "1:c2", "f", 4, "b", "2", 1);         /* nprocs differs */
    join (env, 3, "1:c3", "g", 3, "c", "3", 1);
    fence_disconnect (env->ctx.fences, "1:c3");
    kvsenv_run (env);
    assert_non_null ((r = take_relay (env, &req)));
    assert_non_null ((c = find (r, "f")));
    assert_int_equal (c->errnum, EINVAL);
    assert_non_null (strstr (c->errstr, "disagree"));
    assert_non_null ((c = find (r, "g")));
    assert_int_equal (c->errnum, ECONNRESET);
    assert_non_null (strstr (c->errstr, "disconnected"));
    kvs_relay_destroy (r);
    canopy_msg_decref (req);
    /* the disconnected client is not answered, the others will be */
    json_t *errors = json_pack ("[{s:s s:i s:s} {s:s s:i s:s}]",
                                "name", "f", "errnum", EINVAL, "errstr", "x",
                                "name", "g", "errnum", ECONNRESET, "errstr", "y");
    fence_setroot (env->ctx.fences, NULL, errors, 1, "sha256-x");
    json_decref (errors);
    assert_int_equal (answer (env, 1, NULL, 0), EINVAL);
    assert_int_equal (answer (env, 2, NULL, 0), EINVAL);
    assert_int_equal (answer (env, 3, NULL, 0), -1);
    teardown (env);
}

/* Requests that are refused at once, each with a clear error text. */
static void test_request_errors (void **state)
{
    struct kvsenv *env = setup (1);
    char text[200];
    canopy_msg_t *msg;

    /* no payload */
    msg = fakeh_request ("kvs.fence", 1, "1:c1", NULL, 0);
    fence_request (env->ctx.fences, msg, false);
    canopy_msg_decref (msg);
    assert_int_equal (answer (env, 1, text, sizeof (text)), EPROTO);
    assert_string_equal (text, "transaction too short");
    /* garbage */
    msg = fakeh_request ("kvs.fence", 2, "1:c1", "\0\0\0\2{}", 6);
    fence_request (env->ctx.fences, msg, false);
    canopy_msg_decref (msg);
    assert_int_equal (answer (env, 2, text, sizeof (text)), EPROTO);
    assert_string_equal (text, "malformed transaction header");
    /* regression: decoding failed without text (out of memory) and the
     * answer carried an uninitialised one
     */
    msg = kvsenv_txn_request ("kvs.fence", 3, "1:c1", "f", 2, 0, "a", "1", 1);
    failalloc_arm (0);
    fence_request (env->ctx.fences, msg, false);
    failalloc_disarm ();
    assert_true (failalloc_fired ());
    canopy_msg_decref (msg);
    assert_int_equal (answer (env, 3, text, sizeof (text)), ENOMEM);
    assert_string_equal (text, "out of memory decoding the transaction");
    /* limits */
    env->ctx.limits.max_nprocs = 10;
    msg = kvsenv_txn_request ("kvs.fence", 4, "1:c1", "f", 11, 0, "a", "1", 1);
    fence_request (env->ctx.fences, msg, false);
    canopy_msg_decref (msg);
    assert_int_equal (answer (env, 4, text, sizeof (text)), EINVAL);
    assert_string_equal (text, "fence nprocs is too large");
    env->ctx.limits.max_txn_ops = 0;
    msg = kvsenv_txn_request ("kvs.fence", 5, "1:c1", "f", 2, 0, "a", "1", 1);
    fence_request (env->ctx.fences, msg, false);
    canopy_msg_decref (msg);
    assert_int_equal (answer (env, 5, text, sizeof (text)), E2BIG);
    kvsenv_run (env);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "kvs.relay"), 0);
    assert_int_equal (ndirty_open (env), 0);
    teardown (env);
}

/* A transaction in a form the client library does not write (the header's
 * members in another order, an escaped key) is not for kvs_wire_scan: the
 * general path reads it, and its operations travel on as it meant them.
 * One in the client's form is relayed with the client's own text.
 */
static void test_request_general_form (void **state)
{
    struct kvsenv *env = setup (1);
    static const char hdr[] = "{\"blobs\":[],\"fences\":[{\"ops\":[[\"a\\u0062\","
        "{\"data\":\"eHk=\",\"type\":\"val\",\"ver\":1}]],\"nprocs\":2,"
        "\"name\":\"h\",\"flags\":0,\"count\":1}]}";
    uint8_t buf[sizeof (hdr) + 3];
    size_t hlen = sizeof (hdr) - 1;
    canopy_msg_t *msg, *req;
    kvs_relay_t *r;
    const struct kvs_relay_fence *c;

    buf[0] = buf[1] = buf[2] = 0;
    buf[3] = hlen;
    memcpy (buf + 4, hdr, hlen);
    msg = fakeh_request ("kvs.fence", 1, "1:c1", buf, 4 + hlen);
    fence_request (env->ctx.fences, msg, false);
    canopy_msg_decref (msg);
    join (env, 2, "1:c2", "h", 2, "c", "3", 1);
    kvsenv_run (env);
    assert_non_null ((r = take_relay (env, &req)));
    assert_non_null ((c = find (r, "h")));
    assert_int_equal (c->errnum, 0);
    assert_int_equal (c->count, 2);
    assert_int_equal (c->nops, 2);
    assert_non_null (memmem (c->ops, c->opslen, "[\"ab\",", 6));
    assert_non_null (memmem (c->ops, c->opslen, "[\"c\",", 5));
    kvs_relay_destroy (r);
    canopy_msg_decref (req);
    teardown (env);
}

/* rank 0 */

static json_t *take_setroot (struct kvsenv *env)
{
    return kvsenv_take_event (env, "kvs.setroot");
}

/* The error the setroot event 'ev' gives fence 'name' (0: none). */
static int event_error (json_t *ev, const char *name, const char **errstr)
{
    size_t i;
    json_t *v;
    json_array_foreach (json_object_get (ev, "errors"), i, v) {
        if (!strcmp (json_string_value (json_object_get (v, "name")), name)) {
            if (errstr)
                *errstr = json_string_value (json_object_get (v, "errstr"));
            return json_integer_value (json_object_get (v, "errnum"));
        }
    }
    return 0;
}

/* Deliver a setroot event to the table, as kvs.c's setroot_cb does. */
static void deliver (struct kvsenv *env, json_t *ev)
{
    fence_setroot (env->ctx.fences, json_object_get (ev, "names"),
                   json_object_get (ev, "errors"), 1, "sha256-x");
}

/* A relay of 'topic' (matchtag 'tag') from child rank 'from', of one
 * contribution to 'name' with the operations text 'ops' (nops of them).
 */
static void relay_in (struct kvsenv *env, const char *topic, uint32_t tag,
                      const char *from, const char *name, int nprocs,
                      const char *ops, int nops)
{
    struct kvs_relay_fence c = {
        .name = name, .nprocs = nprocs, .count = 1, .userid = -1, .errstr = "",
        .nops = nops, .ops = ops, .opslen = strlen (ops),
    };
    kvs_relay_enc_t *enc = kvs_relay_enc_create ();
    blobtab_t *none = blobtab_create ();
    canopy_msg_t *msg = canopy_rpc_raw_request (topic);
    assert_non_null (enc);
    assert_non_null (msg);
    assert_int_equal (kvs_relay_enc_add (enc, &c, none), 0);
    assert_int_equal (kvs_relay_enc_finish_msg (enc, msg), 0);
    assert_int_equal (canopy_msg_set_matchtag (msg, tag), 0);
    assert_int_equal (canopy_msg_route_enable (msg), 0);
    assert_int_equal (canopy_msg_route_push (msg, from), 0);
    fence_relay (env->ctx.fences, msg);
    canopy_msg_decref (msg);
    blobtab_destroy (none);
    kvs_relay_enc_destroy (enc);
}

/* Rank 0 gets a child's relay of one contribution to 'name' with the
 * operations text 'ops' (nops of them).
 */
static void relay_to_rank0 (struct kvsenv *env, const char *name, int nprocs,
                            const char *ops, int nops)
{
    relay_in (env, "kvs.relay", 99, "1", name, nprocs, ops, nops);
}

/* Rank 0 parses each contribution as it arrives: the operations are
 * those of every contribution in arrival order, and a malformed one
 * fails the fence at once, before its other participants are in.
 */
static void test_rank0_parse_on_arrival (void **state)
{
    struct kvsenv *env = setup (0);
    struct ready_fence *rf[2];
    json_t *ev;
    const char *errstr;

    join (env, 1, "0:c1", "p", 3, "a", "1", 1);
    relay_to_rank0 (env, "p", 3, "[\"b\",{\"data\":\"Mg==\",\"type\":\"val\",\"ver\":1}],"
                    "[\"c\",{\"data\":\"Mw==\",\"type\":\"val\",\"ver\":1}]", 2);
    assert_false (fence_have_ready (env->ctx.fences));
    join (env, 2, "0:c2", "p", 3, "d", "4", 1);
    assert_int_equal (fence_take_ready (env->ctx.fences, rf, 2), 1);
    assert_int_equal (json_array_size (rf[0]->ops), 4);
    const char *want[] = { "a", "b", "c", "d" };
    for (int i = 0; i < 4; i++)
        assert_string_equal (json_string_value (json_array_get (json_array_get (rf[0]->ops, i), 0)),
                             want[i]);
    ready_fence_free (rf[0]);

    join (env, 3, "0:c3", "q", 3, "a", "1", 1);
    relay_to_rank0 (env, "q", 3, "[\"b\",{\"data\":", 1);
    assert_non_null ((ev = take_setroot (env)));   /* failed now, not at the end */
    assert_int_equal (event_error (ev, "q", &errstr), EPROTO);
    assert_string_equal (errstr, "the merged transaction is malformed");
    json_decref (ev);
    join (env, 4, "0:c4", "q", 3, "d", "4", 1);
    assert_false (fence_have_ready (env->ctx.fences));
    teardown (env);
}

static void test_rank0_ready (void **state)
{
    struct kvsenv *env = setup (0);
    struct ready_fence *rf[8];
    json_t *ev;
    const char *errstr;

    join (env, 1, "0:c1", "f", 2, "a", "1", 1);
    assert_false (fence_have_ready (env->ctx.fences));
    join (env, 2, "0:c2", "f", 2, "b", "2", 1);
    assert_true (fence_have_ready (env->ctx.fences));
    /* a third participant of a complete fence */
    join (env, 3, "0:c3", "f", 2, "c", "3", 1);
    assert_non_null ((ev = take_setroot (env)));
    assert_int_equal (event_error (ev, "f", &errstr), EINVAL);
    assert_string_equal (errstr, "too many participants");
    json_decref (ev);
    assert_false (fence_have_ready (env->ctx.fences));  /* failed: not applied */
    /* the applier takes what is ready, in order; NO_MERGE goes alone */
    join (env, 4, "0:c4", "g", 1, "d", "4", 1);
    canopy_msg_t *msg = kvsenv_txn_request ("kvs.fence", 5, "0:c5", "h", 1,
                                            KVS_NO_MERGE, "e", "5", 1);
    fence_request (env->ctx.fences, msg, false);
    canopy_msg_decref (msg);
    join (env, 6, "0:c6", "i", 1, "big", "0123456789012345678901234567890123456789"
          "0123456789012345678901234567890123456789", 80);
    assert_int_equal (fence_take_ready (env->ctx.fences, rf, 8), 1);
    assert_string_equal (rf[0]->name, "g");
    assert_int_equal (json_array_size (rf[0]->ops), 1);
    ready_fence_free (rf[0]);
    assert_int_equal (fence_take_ready (env->ctx.fences, rf, 8), 1);
    assert_string_equal (rf[0]->name, "h");
    ready_fence_free (rf[0]);
    assert_int_equal (fence_take_ready (env->ctx.fences, rf, 8), 1);
    assert_string_equal (rf[0]->name, "i");
    assert_int_equal (blobtab_count (rf[0]->blobs), 1);     /* the valref's chunk */
    ready_fence_free (rf[0]);
    assert_int_equal (fence_take_ready (env->ctx.fences, rf, 8), 0);
    teardown (env);
}

static void test_rank0_finished (void **state)
{
    struct kvsenv *env = setup (0);
    struct ready_fence *rf[2];
    json_t *ev;
    const char *errstr;

    join (env, 1, "0:c1", "f", 1, "a", "1", 1);
    assert_int_equal (fence_take_ready (env->ctx.fences, rf, 2), 1);
    ready_fence_free (rf[0]);
    fence_finished (env->ctx.fences, "f", 0, NULL);
    json_t *names = json_pack ("[s]", "f");
    fence_setroot (env->ctx.fences, names, NULL, 1, "sha256-x");
    json_decref (names);
    assert_int_equal (answer (env, 1, NULL, 0), 0);
    /* a late joiner gets EINVAL, by the event */
    join (env, 2, "0:c2", "f", 1, "a", "1", 1);
    assert_non_null ((ev = take_setroot (env)));
    assert_int_equal (event_error (ev, "f", &errstr), EINVAL);
    assert_string_equal (errstr, "fence already complete: too many participants");
    assert_int_equal (answer (env, 2, NULL, 0), -1);
    deliver (env, ev);
    json_decref (ev);
    assert_int_equal (answer (env, 2, NULL, 0), EINVAL);
    /* a failed fence: late joiners get its error */
    fence_finished (env->ctx.fences, "bad", ETIMEDOUT, "too slow");
    json_decref (take_setroot (env));
    join (env, 3, "0:c3", "bad", 2, "a", "1", 1);
    assert_non_null ((ev = take_setroot (env)));
    assert_int_equal (event_error (ev, "bad", &errstr), ETIMEDOUT);
    assert_string_equal (errstr, "too slow");
    deliver (env, ev);
    json_decref (ev);
    assert_int_equal (answer (env, 3, NULL, 0), ETIMEDOUT);
    /* still remembered before FINISHED_KEEP (300 s), forgotten after */
    double now = monotime ();
    fence_timer (env->ctx.fences, now + 290);
    join (env, 4, "0:c4", "f", 2, "a", "1", 1);
    assert_non_null ((ev = take_setroot (env)));
    deliver (env, ev);
    json_decref (ev);
    assert_int_equal (answer (env, 4, NULL, 0), EINVAL);
    fence_timer (env->ctx.fences, now + 301);
    join (env, 5, "0:c5", "f", 2, "a", "1", 1);
    assert_null (take_setroot (env));
    assert_int_equal (answer (env, 5, NULL, 0), -1);    /* open, waiting */
    assert_int_equal (ndirty_open (env), 1);
    teardown (env);
}

/* rank 0's record of a fence: open with its count, applying once
 * complete, then complete (or failed) with when it began, became
 * complete and was decided, in that order
 */
static void test_rank0_status (void **state)
{
    struct kvsenv *env = setup (0);
    struct ready_fence *rf[2];
    json_t *o;
    const char *st, *errstr;
    int count, nprocs, errnum;
    double first, ready, decided;

    join (env, 1, "0:c1", "f", 2, "a", "1", 1);
    assert_int_equal (fence_status (env->ctx.fences, "f", &o), 0);
    assert_int_equal (json_unpack (o, "{s:s s:i s:i s:F s:F}", "state", &st,
                                   "count", &count, "nprocs", &nprocs,
                                   "first", &first, "ready", &ready), 0);
    assert_string_equal (st, "open");
    assert_true (count == 1 && nprocs == 2 && first > 1e9 && ready == 0);
    json_decref (o);
    join (env, 2, "0:c2", "f", 2, "b", "2", 1);
    assert_int_equal (fence_status (env->ctx.fences, "f", &o), 0);
    assert_int_equal (json_unpack (o, "{s:s s:F}", "state", &st, "ready", &ready), 0);
    assert_string_equal (st, "applying");
    assert_true (ready >= first);
    json_decref (o);
    assert_int_equal (fence_take_ready (env->ctx.fences, rf, 2), 1);
    ready_fence_free (rf[0]);
    fence_finished (env->ctx.fences, "f", 0, NULL);
    json_t *names = json_pack ("[s]", "f");
    fence_setroot (env->ctx.fences, names, NULL, 1, "sha256-x");   /* answers */
    json_decref (names);
    assert_int_equal (answer (env, 1, NULL, 0), 0);
    assert_int_equal (fence_status (env->ctx.fences, "f", &o), 0);
    assert_int_equal (json_unpack (o, "{s:s s:i s:i s:F s:F s:F}", "state", &st,
                                   "errnum", &errnum, "nprocs", &nprocs,
                                   "first", &first, "ready", &ready,
                                   "decided", &decided), 0);
    assert_string_equal (st, "complete");
    assert_true (errnum == 0 && nprocs == 2);
    assert_true (first > 1e9 && first <= ready && ready <= decided);
    json_decref (o);
    /* a failure decided with no entry: its error, no times but 'decided' */
    fence_finished (env->ctx.fences, "bad", ETIMEDOUT, "too slow");
    json_decref (take_setroot (env));
    assert_int_equal (fence_status (env->ctx.fences, "bad", &o), 0);
    assert_int_equal (json_unpack (o, "{s:s s:i s:s s:F s:F}", "state", &st,
                                   "errnum", &errnum, "errstr", &errstr,
                                   "first", &first, "decided", &decided), 0);
    assert_string_equal (st, "failed");
    assert_int_equal (errnum, ETIMEDOUT);
    assert_string_equal (errstr, "too slow");
    assert_true (first == 0 && decided > 1e9);
    json_decref (o);
    /* unknown, or forgotten after FINISHED_KEEP */
    errno = 0;
    assert_int_equal (fence_status (env->ctx.fences, "nope", &o), -1);
    assert_int_equal (errno, ENOENT);
    fence_timer (env->ctx.fences, monotime () + 301);
    assert_int_equal (fence_status (env->ctx.fences, "f", &o), -1);
    assert_int_equal (errno, ENOENT);
    teardown (env);

    /* only rank 0 keeps the record */
    env = setup (1);
    join (env, 1, "1:c1", "f", 2, "a", "1", 1);
    assert_int_equal (fence_status (env->ctx.fences, "f", &o), -1);
    assert_int_equal (errno, EINVAL);
    teardown (env);
}

static void test_rank0_limits (void **state)
{
    struct kvsenv *env = setup (0);
    json_t *ev;
    const char *errstr;

    env->ctx.limits.max_pending_per_user = 2;
    join (env, 1, "0:c1", "f1", 2, "a", "1", 1);
    join (env, 2, "0:c2", "f2", 2, "a", "1", 1);
    join (env, 3, "0:c3", "f3", 2, "a", "1", 1);
    assert_non_null ((ev = take_setroot (env)));
    assert_int_equal (event_error (ev, "f3", &errstr), EAGAIN);
    assert_string_equal (errstr, "too many open fences for this user");
    json_decref (ev);
    /* timeouts: only fences older than the timeout, not complete */
    env->ctx.limits.fence_timeout = 5;
    fence_timer (env->ctx.fences, monotime () + 1);
    assert_null (take_setroot (env));
    fence_timer (env->ctx.fences, monotime () + 10);
    int timedout = 0;
    while ((ev = take_setroot (env))) {
        if (event_error (ev, "f1", &errstr) == ETIMEDOUT
            || event_error (ev, "f2", &errstr) == ETIMEDOUT) {
            assert_non_null (strstr (errstr, "only 1 of 2 participants joined"));
            timedout++;
        }
        json_decref (ev);
    }
    assert_int_equal (timedout, 2);
    teardown (env);
}

static void test_rank0_abort_fail_all (void **state)
{
    struct kvsenv *env = setup (0);
    json_t *ev;
    const char *errstr;
    canopy_msg_t *msg;
    const char *abort = "{\"name\":\"f\",\"errnum\":5}";

    join (env, 1, "0:c1", "f", 2, "a", "1", 1);
    join (env, 2, "0:c2", "g", 2, "a", "1", 1);
    msg = fakeh_request_json ("kvs.fence-abort", 3, "0:c3", abort);
    fence_abort_request (env->ctx.fences, msg);
    canopy_msg_decref (msg);
    assert_int_equal (answer (env, 3, NULL, 0), 0);
    assert_non_null ((ev = take_setroot (env)));
    assert_int_equal (event_error (ev, "f", &errstr), 5);
    assert_non_null (strstr (errstr, "aborted"));
    json_decref (ev);
    fence_fail_all (env->ctx.fences, EHOSTUNREACH, "broker rank 3 was lost");
    assert_non_null ((ev = take_setroot (env)));
    assert_int_equal (event_error (ev, "g", &errstr), EHOSTUNREACH);
    assert_string_equal (errstr, "broker rank 3 was lost");
    json_decref (ev);
    assert_null (take_setroot (env));   /* "f" had failed already */
    /* a malformed abort */
    msg = fakeh_request_json ("kvs.fence-abort", 4, "0:c3", "{}");
    fence_abort_request (env->ctx.fences, msg);
    canopy_msg_decref (msg);
    assert_int_equal (answer (env, 4, NULL, 0), EPROTO);
    teardown (env);
}

/* A failure whose setroot event cannot be sent is published again by
 * fence_timer: the waiters are answered then, once.
 */
static void test_rank0_publish_fails (void **state)
{
    struct kvsenv *env = setup (0);
    char text[200];
    json_t *ev;
    canopy_msg_t *msg;

    join (env, 1, "0:c1", "f", 2, "a", "1", 1);
    fakeh_fail_send (env->fake, "event.pub", 0, 1, ENOMEM);
    msg = fakeh_request_json ("kvs.fence-abort", 2, "0:c3",
                              "{\"name\":\"f\",\"errnum\":5}");
    fence_abort_request (env->ctx.fences, msg);
    canopy_msg_decref (msg);
    assert_int_equal (answer (env, 2, NULL, 0), 0);
    assert_int_equal (fakeh_failed_sends (env->fake), 1);
    assert_null (take_setroot (env));
    assert_int_equal (answer (env, 1, NULL, 0), -1);   /* not yet */
    fence_timer (env->ctx.fences, monotime ());
    assert_non_null ((ev = take_setroot (env)));
    assert_int_equal (event_error (ev, "f", NULL), 5);
    deliver (env, ev);
    json_decref (ev);
    assert_int_equal (answer (env, 1, text, sizeof (text)), 5);
    assert_non_null (strstr (text, "aborted"));
    assert_int_equal (answer (env, 1, NULL, 0), -1);
    fence_timer (env->ctx.fences, monotime ());
    assert_null (take_setroot (env));                  /* published once */
    teardown (env);
}

/* Fail each calloc of a join on rank 0 in turn (the entry, its waiter
 * slot, the finished table...): every client is answered exactly once
 * (regression: a waiter whose entry could not be made was never
 * answered).
 */
static void test_rank0_join_alloc_failures (void **state)
{
    bool fired = true;
    int k;

    for (k = 0; fired && k < 200; k++) {
        struct kvsenv *env = setup (0);
        json_t *ev;
        join (env, 1, "0:c1", "f", 3, "a", "1", 1);
        canopy_msg_t *m2 = kvsenv_txn_request ("kvs.fence", 2, "0:c2", "f", 3, 0,
                                               "b", "2", 1);  /* existing entry */
        canopy_msg_t *m3 = kvsenv_txn_request ("kvs.fence", 3, "0:c3", "g", 2, 0,
                                               "c", "3", 1);  /* a new one */
        failalloc_arm (k);
        fence_request (env->ctx.fences, m2, false);
        fence_request (env->ctx.fences, m3, false);
        failalloc_disarm ();
        canopy_msg_decref (m2);
        canopy_msg_decref (m3);
        fired = failalloc_fired ();
        fence_fail_all (env->ctx.fences, EHOSTUNREACH, "broker rank 3 was lost");
        fence_timer (env->ctx.fences, monotime ());
        while ((ev = take_setroot (env))) {
            deliver (env, ev);
            json_decref (ev);
        }
        for (uint32_t tag = 1; tag <= 3; tag++) {
            char text[200];
            int e = answer (env, tag, text, sizeof (text));
            if (e != EHOSTUNREACH && e != ENOMEM)
                fail_msg ("calloc %d failed: client %u got %d", k, tag, e);
            if (e == ENOMEM && strncmp (text, "out of memory", 13) != 0)
                fail_msg ("calloc %d failed: client %u got '%s'", k, tag, text);
            assert_int_equal (answer (env, tag, NULL, 0), -1);
        }
        teardown (env);
    }
    assert_false (fired);   /* the sweep went past the last calloc */
    assert_true (k > 3);
}

/* At unload every waiter is answered. */
static void test_unload (void **state)
{
    struct kvsenv *env = setup (1);
    char text[200];
    join (env, 1, "1:c1", "f", 2, "a", "1", 1);
    kvsenv_run (env);
    fence_table_destroy (env->ctx.fences);
    env->ctx.fences = NULL;
    assert_int_equal (answer (env, 1, text, sizeof (text)), ENOSYS);
    assert_string_equal (text, "KVS module unloading");
    kvsenv_destroy (env);
}

/* The relay of 'name' alone, with 'count' participants: taken, checked,
 * acknowledged.
 */
static void expect_topic_of (struct kvsenv *env, const char *topic,
                             const char *name, int count)
{
    canopy_msg_t *req;
    kvs_relay_t *r;
    const struct kvs_relay_fence *c;

    assert_non_null ((r = take_topic (env, topic, &req)));
    assert_int_equal (kvs_relay_count (r), 1);
    assert_non_null ((c = find (r, name)));
    assert_int_equal (c->count, count);
    assert_int_equal (c->errnum, 0);
    kvs_relay_destroy (r);
    reply (env, req, 0);
}

static void expect_relay_of (struct kvsenv *env, const char *name, int count)
{
    expect_topic_of (env, "kvs.relay", name, count);
}

/* A kvs.relay-late: the fence completes here. */
static void expect_late_of (struct kvsenv *env, const char *name, int count)
{
    expect_topic_of (env, "kvs.relay-late", name, count);
}

static void setroot_names (struct kvsenv *env, const char *name, int version)
{
    json_t *names = json_pack ("[s]", name);
    assert_non_null (names);
    fence_setroot (env->ctx.fences, names, NULL, version, "sha256-x");
    json_decref (names);
}

/* Fence 'name' of nprocs 8 with 'n' participants here (tags from 'tag'),
 * relayed and completed: the broker learns that its subtree brings n.
 */
static void learn (struct kvsenv *env, const char *name, uint32_t tag, int n)
{
    char sender[16];
    for (int i = 0; i < n; i++) {
        snprintf (sender, sizeof (sender), "3:c%d", i);
        join (env, tag + i, sender, name, 8, name, "v", 1);
    }
    kvsenv_run (env);
    expect_relay_of (env, name, n);
    setroot_names (env, name, 1);
    for (int i = 0; i < n; i++)
        assert_int_equal (answer (env, tag + i, NULL, 0), 0);
}

/* A broker learns how many participants its subtree brought to a fence
 * and holds the next fence of that size until as many are in: one relay
 * instead of one per contribution.  Other fences are not held meanwhile.
 */
static void test_hold (void **state)
{
    struct kvsenv *env = setup (3);

    env->ctx.limits.relay_hold = 60;    /* does not run out here */
    /* nothing learned yet: self-clocked, one relay per pass */
    join (env, 1, "3:c1", "a", 8, "a1", "1", 1);
    kvsenv_run (env);
    expect_relay_of (env, "a", 1);
    join (env, 2, "3:c2", "a", 8, "a2", "2", 1);
    join (env, 3, "3:c3", "a", 8, "a3", "3", 1);
    kvsenv_run (env);
    expect_relay_of (env, "a", 2);
    assert_int_equal (env->ctx.stats.relay_holds, 0);
    setroot_names (env, "a", 1);

    /* the next fence of 8 is held until 3 are in */
    join (env, 4, "3:c1", "b", 8, "b1", "1", 1);
    kvsenv_run (env);
    join (env, 5, "3:c2", "b", 8, "b2", "2", 1);
    kvsenv_run (env);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "kvs.relay"), 0);
    assert_int_equal (env->ctx.stats.relay_holds, 1);
    /* a commit, and a fence of another size, go at once */
    join (env, 6, "3:c3", "g", 1, "g1", "1", 1);
    kvsenv_run (env);
    expect_relay_of (env, "g", 1);
    join (env, 7, "3:c4", "h", 5, "h1", "1", 1);
    kvsenv_run (env);
    expect_relay_of (env, "h", 1);
    /* the third participant: all of "b" in one relay, acknowledged late */
    join (env, 8, "3:c3", "b", 8, "b3", "3", 1);
    kvsenv_run (env);
    expect_late_of (env, "b", 3);
    assert_null (fakeh_take (env->fake, CANOPY_MSGTYPE_REQUEST, "kvs.relay"));
    assert_int_equal (env->ctx.stats.relays_late, 1);
    /* one more than expected is not held, nor sent late again */
    join (env, 9, "3:c5", "b", 8, "b4", "4", 1);
    kvsenv_run (env);
    expect_relay_of (env, "b", 1);
    assert_int_equal (env->ctx.stats.relay_holds, 1);
    assert_int_equal (env->ctx.stats.relay_hold_expired, 0);
    setroot_names (env, "b", 2);
    for (uint32_t tag = 1; tag <= 9; tag++) {
        if (tag != 6 && tag != 7)
            assert_int_equal (answer (env, tag, NULL, 0), 0);
    }
    /* ... and it learned 4 from "b" */
    for (int i = 0; i < 3; i++) {
        char sender[16];
        snprintf (sender, sizeof (sender), "3:d%d", i);
        join (env, 20 + i, sender, "c", 8, "c", "v", 1);
        kvsenv_run (env);
    }
    assert_null (fakeh_take (env->fake, CANOPY_MSGTYPE_REQUEST, "kvs.relay"));
    join (env, 23, "3:d3", "c", 8, "c", "v", 1);
    kvsenv_run (env);
    expect_late_of (env, "c", 4);
    teardown (env);
}

/* An expectation that is not met (the job's layout changed) holds the
 * relay for relay-hold seconds, then it goes and the fence is
 * self-clocked from there.  Errors are never held, and relay-hold 0
 * turns holding off.
 */
static void test_hold_runs_out (void **state)
{
    struct kvsenv *env = setup (3);
    canopy_msg_t *req;
    kvs_relay_t *r;
    const struct kvs_relay_fence *c;

    env->ctx.limits.relay_hold = 0.05;
    learn (env, "a", 1, 2);
    join (env, 10, "3:c1", "b", 8, "b1", "1", 1);
    kvsenv_run (env);
    assert_null (fakeh_take (env->fake, CANOPY_MSGTYPE_REQUEST, "kvs.relay"));
    assert_int_equal (env->ctx.stats.relay_holds, 1);
    usleep (80000);
    kvsenv_run (env);
    expect_relay_of (env, "b", 1);
    assert_int_equal (env->ctx.stats.relay_hold_expired, 1);
    join (env, 11, "3:c2", "b", 8, "b2", "2", 1);
    kvsenv_run (env);
    expect_relay_of (env, "b", 1);      /* no second hold */
    assert_int_equal (env->ctx.stats.relay_holds, 1);
    setroot_names (env, "b", 2);
    assert_int_equal (answer (env, 10, NULL, 0), 0);
    assert_int_equal (answer (env, 11, NULL, 0), 0);

    /* an error contribution goes at once, held or not */
    env->ctx.limits.relay_hold = 60;
    join (env, 12, "3:c1", "c", 8, "c1", "1", 1);
    kvsenv_run (env);
    assert_null (fakeh_take (env->fake, CANOPY_MSGTYPE_REQUEST, "kvs.relay"));
    join (env, 13, "3:c2", "c", 7, "c2", "2", 1);   /* nprocs differs */
    kvsenv_run (env);
    assert_non_null ((r = take_relay (env, &req)));
    assert_non_null ((c = find (r, "c")));
    assert_int_equal (c->errnum, EINVAL);
    kvs_relay_destroy (r);
    reply (env, req, 0);
    json_t *errors = json_pack ("[{s:s s:i s:s}]", "name", "c", "errnum", EINVAL,
                                "errstr", "x");
    fence_setroot (env->ctx.fences, NULL, errors, 2, "sha256-x");
    json_decref (errors);
    assert_int_equal (answer (env, 12, NULL, 0), EINVAL);
    assert_int_equal (answer (env, 13, NULL, 0), EINVAL);

    /* relay-hold 0: a known shape is not waited for */
    env->ctx.limits.relay_hold = 0;
    join (env, 14, "3:c1", "d", 8, "d1", "1", 1);
    kvsenv_run (env);
    expect_relay_of (env, "d", 1);
    assert_int_equal (env->ctx.stats.relay_holds, 2);
    teardown (env);
}

/* A subtree whose participants arrived over longer than relay-hold is
 * held for up to twice that span at its next fence of the same shape.
 */
static void test_hold_span (void **state)
{
    struct kvsenv *env = setup (3);

    env->ctx.limits.relay_hold = 0.05;
    /* "a": two participants 0.3 s apart teach rank 3 a span of 0.3 s */
    join (env, 1, "3:c1", "a", 8, "a1", "1", 1);
    kvsenv_run (env);
    expect_relay_of (env, "a", 1);
    usleep (300000);
    join (env, 2, "3:c2", "a", 8, "a2", "2", 1);
    kvsenv_run (env);
    expect_relay_of (env, "a", 1);
    setroot_names (env, "a", 1);
    assert_int_equal (answer (env, 1, NULL, 0), 0);
    assert_int_equal (answer (env, 2, NULL, 0), 0);

    /* the next fence of 8: still held past relay-hold ... */
    join (env, 3, "3:c1", "b", 8, "b1", "1", 1);
    kvsenv_run (env);
    usleep (100000);
    kvsenv_run (env);
    assert_null (fakeh_take (env->fake, CANOPY_MSGTYPE_REQUEST, "kvs.relay"));
    assert_int_equal (env->ctx.stats.relay_holds, 1);
    assert_int_equal (env->ctx.stats.relay_hold_expired, 0);
    /* ... and released by its second participant */
    join (env, 4, "3:c2", "b", 8, "b2", "2", 1);
    kvsenv_run (env);
    expect_late_of (env, "b", 2);
    assert_int_equal (env->ctx.stats.relay_hold_expired, 0);
    setroot_names (env, "b", 2);
    assert_int_equal (answer (env, 3, NULL, 0), 0);
    assert_int_equal (answer (env, 4, NULL, 0), 0);

    /* "b" arrived over 0.1 s: the next hold runs out after about 0.2 s */
    join (env, 5, "3:c1", "c", 8, "c1", "1", 1);
    kvsenv_run (env);
    assert_null (fakeh_take (env->fake, CANOPY_MSGTYPE_REQUEST, "kvs.relay"));
    usleep (500000);
    kvsenv_run (env);
    expect_relay_of (env, "c", 1);
    assert_int_equal (env->ctx.stats.relay_hold_expired, 1);
    teardown (env);
}

/* A fence that completes here leaves in a kvs.relay-late at once, even
 * while a kvs.relay is in flight; refused, it becomes an error the next
 * kvs.relay carries.
 */
static void test_late_relay (void **state)
{
    struct kvsenv *env = setup (3);
    canopy_msg_t *greq, *lreq, *req;
    kvs_relay_t *r;
    const struct kvs_relay_fence *c;

    env->ctx.limits.relay_hold = 60;
    join (env, 1, "3:c1", "a", 8, "a1", "1", 1);
    join (env, 2, "3:c2", "a", 8, "a2", "2", 1);
    kvsenv_run (env);
    expect_relay_of (env, "a", 2);              /* nothing learned yet */
    setroot_names (env, "a", 1);
    assert_int_equal (answer (env, 1, NULL, 0), 0);
    assert_int_equal (answer (env, 2, NULL, 0), 0);

    /* a commit's relay in flight, not acknowledged yet */
    join (env, 3, "3:c3", "g", 1, "g1", "1", 1);
    kvsenv_run (env);
    assert_non_null ((r = take_relay (env, &greq)));
    kvs_relay_destroy (r);
    /* "b" completes meanwhile: its relay does not wait for that ack */
    join (env, 4, "3:c1", "b", 8, "b1", "1", 1);
    kvsenv_run (env);
    assert_null (fakeh_take (env->fake, CANOPY_MSGTYPE_REQUEST, "kvs.relay-late"));
    join (env, 5, "3:c2", "b", 8, "b2", "2", 1);
    kvsenv_run (env);
    assert_non_null ((r = take_topic (env, "kvs.relay-late", &lreq)));
    assert_int_equal (kvs_relay_count (r), 1);
    assert_non_null ((c = find (r, "b")));
    assert_int_equal (c->count, 2);
    kvs_relay_destroy (r);
    assert_int_equal (env->ctx.stats.relays_late, 1);

    /* refused: "b" fails, carried by the next kvs.relay, after g's ack */
    reply (env, lreq, EPROTO);
    assert_null (take_relay (env, &req));
    assert_null (fakeh_take (env->fake, CANOPY_MSGTYPE_REQUEST, "kvs.relay-late"));
    reply (env, greq, 0);
    assert_non_null ((r = take_relay (env, &req)));
    assert_int_equal (kvs_relay_count (r), 1);
    assert_non_null ((c = find (r, "b")));
    assert_int_equal (c->errnum, EPROTO);
    assert_non_null (strstr (c->errstr, "the relay to the parent broker failed"));
    kvs_relay_destroy (r);
    reply (env, req, 0);
    assert_null (take_relay (env, &req));       /* nothing loops */
    teardown (env);
}

/* A relay from child rank 3 of one contribution to 'name' (topic 'topic',
 * matchtag 'tag').
 */
static void relay_from_child (struct kvsenv *env, const char *topic, uint32_t tag,
                              const char *name)
{
    relay_in (env, topic, tag, "3", name, 8,
              "[\"k\",{\"data\":\"MQ==\",\"type\":\"val\",\"ver\":1}]", 1);
}

/* The parent merges a kvs.relay-late at once and acknowledges it later,
 * with the others that came meanwhile; a kvs.relay at once.  A module
 * unloading acknowledges what it merged.
 */
static void test_late_ack (void **state)
{
    struct kvsenv *env = setup (1);
    canopy_msg_t *req;
    kvs_relay_t *r;
    const struct kvs_relay_fence *c;

    relay_from_child (env, "kvs.relay-late", 41, "x");
    relay_from_child (env, "kvs.relay-late", 42, "y");
    relay_from_child (env, "kvs.relay", 43, "z");
    assert_int_equal (answer (env, 43, NULL, 0), 0);
    kvsenv_run (env);
    assert_int_equal (answer (env, 41, NULL, 0), -1);   /* not yet */
    assert_int_equal (answer (env, 42, NULL, 0), -1);
    /* merged at once: relayed on */
    assert_non_null ((r = take_relay (env, &req)));
    assert_int_equal (kvs_relay_count (r), 3);
    assert_non_null ((c = find (r, "x")));
    assert_int_equal (c->count, 1);
    kvs_relay_destroy (r);
    fakeh_respond (env->fake, req, 0, NULL, 0);
    canopy_msg_decref (req);
    usleep (150000);
    kvsenv_run (env);
    assert_int_equal (answer (env, 41, NULL, 0), 0);
    assert_int_equal (answer (env, 42, NULL, 0), 0);

    relay_from_child (env, "kvs.relay-late", 44, "w");
    kvsenv_run (env);
    assert_int_equal (answer (env, 44, NULL, 0), -1);
    fence_table_destroy (env->ctx.fences);
    env->ctx.fences = NULL;
    assert_int_equal (answer (env, 44, NULL, 0), 0);
    kvsenv_destroy (env);
}

/* An entry of 64 KiB or more is not held: large values travel while the
 * rest of the subtree is on its way.
 */
static void test_hold_large (void **state)
{
    struct kvsenv *env = setup (3);
    char *big = calloc (1, 70000);

    assert_non_null (big);
    env->ctx.limits.relay_hold = 60;
    learn (env, "a", 1, 2);
    join (env, 10, "3:c1", "b", 8, "b1", "1", 1);
    kvsenv_run (env);
    assert_int_equal (env->ctx.stats.relay_holds, 1);
    assert_null (fakeh_take (env->fake, CANOPY_MSGTYPE_REQUEST, "kvs.relay"));
    join (env, 11, "3:c2", "c", 8, "big", big, 70000);
    kvsenv_run (env);
    expect_relay_of (env, "c", 1);
    assert_int_equal (env->ctx.stats.relay_holds, 1);
    free (big);
    teardown (env);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_merge_and_relay),
        cmocka_unit_test (test_relay_too_large),
        cmocka_unit_test (test_relay_send_fails),
        cmocka_unit_test (test_relay_refused),
        cmocka_unit_test (test_hold),
        cmocka_unit_test (test_hold_runs_out),
        cmocka_unit_test (test_hold_span),
        cmocka_unit_test (test_hold_large),
        cmocka_unit_test (test_late_relay),
        cmocka_unit_test (test_late_ack),
        cmocka_unit_test (test_disagree_disconnect),
        cmocka_unit_test (test_request_errors),
        cmocka_unit_test (test_request_general_form),
        cmocka_unit_test (test_rank0_ready),
        cmocka_unit_test (test_rank0_parse_on_arrival),
        cmocka_unit_test (test_rank0_finished),
        cmocka_unit_test (test_rank0_status),
        cmocka_unit_test (test_rank0_limits),
        cmocka_unit_test (test_rank0_abort_fail_all),
        cmocka_unit_test (test_rank0_publish_fails),
        cmocka_unit_test (test_rank0_join_alloc_failures),
        cmocka_unit_test (test_unload),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
