/* fence.c - fence aggregation (fence.h).
 *
 * Design notes:
 * - An entry's 'count' is, on rank 0, the participants joined so far; on
 *   other ranks, the participants merged here and not yet forwarded.
 * - Flushing happens from a prepare watcher, i.e. after the reactor has
 *   handled everything that arrived in one wake-up, so contributions that
 *   arrive together leave together (the merge on the way up).
 * - Relays are self-clocked: a broker has at most one kvs.relay in flight
 *   to its parent, which acknowledges it once decoded.  What arrives in
 *   the meantime waits and leaves as one message with the acknowledgement.
 *   An idle tree therefore forwards at once, and a busy one batches as
 *   much as its parent is slow.  A relay holds at most
 *   ctx->limits.relay_max bytes (the message limit): what does not fit
 *   waits for the next one.
 * - Holding (relay-hold): participants of a collective fence seldom
 *   arrive together, so self-clocking alone sends about one relay per
 *   contribution (8 brokers, 32 KAP ranks: 33 relays and as many
 *   acknowledgements per fence where 7 would do, CPU taken from the ranks
 *   still on their way to the fence).  So a broker learns, from each
 *   collective fence's setroot, how many participants its subtree brought
 *   (fence_shape.h), and holds the next fence of the same user and size
 *   until that many are merged: its relay is then one message, sent when
 *   the last of them arrives, which is when it would have been needed.
 *   A hold lasts from the fence's first contribution here at most
 *   relay_hold seconds, or twice as long as the subtree's participants
 *   took to arrive at the last fence of that shape if that is longer
 *   (RELAY_HOLD_SPANS): on a large instance they arrive over tens of ms,
 *   and a fixed 10 ms let every hold run out (64 brokers, 1 024 kap-crowd
 *   participants: 11-33 relays per broker and fence).  So an expectation
 *   that is wrong (the job's layout changed) costs at most that, once,
 *   and is then learned anew.  Errors are never held, nor an entry of
 *   RELAY_HOLD_BYTES or more (large values travel while the rest of the
 *   subtree is on its way).
 * - Late acknowledgements: a relay that completes held fences (each of
 *   them has now brought every participant its subtree is expected to,
 *   and none was sent this way before) is a kvs.relay-late.  It is sent
 *   even while a kvs.relay is in flight, takes no part in the clocking
 *   (nothing more is expected of those fences here), and its parent
 *   merges it at once but acknowledges it only RELAY_LATE_ACK_DELAY
 *   later, in one batch with the others it got meanwhile.  The
 *   acknowledgement (a message from the parent's KVS thread through two
 *   broker threads and two ZeroMQ I/O threads to ours) then travels
 *   when the fence is over, not while the ranks are entering it on the
 *   same cores (8 brokers, 32 KAP ranks: 7 of the 14 messages between
 *   brokers before the setroot).  It is still acknowledged, so a relay
 *   the parent refused or the link lost still fails its fences
 *   (late_ack_cb).
 * - A contribution is never dropped silently: one that cannot be relayed
 *   (too large for one message, out of memory, a failed send, a relay the
 *   parent refused) turns its fence into an error contribution, which the
 *   next relay carries up (flush, relay_ack_cb).  Only a relay of errors
 *   that itself cannot be sent is dropped (logged); rank 0's fence
 *   timeout and its handling of lost brokers cover that case.
 * - Operations are kept as text (kvs_relay.h): a client's transaction is
 *   validated and turned into text once, on its own broker; from there up
 *   merging is concatenation, and only rank 0 parses the text, once, when
 *   the fence is complete (check_ready).
 * - Only the blobs referenced by a fence's operations are merged into it,
 *   so a batch carrying several fences does not mix their blobs.
 * - Errors always travel to rank 0 (as error contributions) and come back
 *   in the setroot event, so every participant sees the same outcome.
 * - Rank 0 never loses an outcome to a failed publication: an event that
 *   cannot be built or sent leaves the outcome on the fence's entry
 *   ('unpublished', no allocation needed) and fence_timer publishes it
 *   again; the entry and its waiters stay until the event comes back.
 * - Rank 0 keeps, per fence, when its first contribution arrived, when it
 *   became complete and when its outcome was decided (CLOCK_REALTIME, the
 *   clock KAP's ranks on different nodes share), in the entry and then in
 *   the finished table: fence_status answers "where did this fence's time
 *   go" (kvs.fence-status, canopy kvs fence-status, KAP's sync timeline).
 * - A local request is merged only once its waiter has a slot, so an
 *   ENOMEM answer never goes to a client whose operations will commit.
 *   A contribution that cannot get an entry is answered ENOMEM (its
 *   client) and, on rank 0, fails the fence for every participant.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <canopy/canopy.h>
#include "src/common/libutil/hashmap.h"
#include "src/common/libutil/list.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libkvs/kvs_wire.h"
#include "src/common/libkvs/kvs_wire_scan.h"
#include "src/common/libkvs/kvs_relay.h"
#include "src/common/libkvs/treeobj.h"
#include "fence.h"
#include "fence_shape.h"

/* A held entry with this many bytes of operations and blobs goes anyway:
 * a message this large costs more to move than to send, so it travels
 * while the rest of the subtree is on its way instead of after it
 * (reference shape, 1 KiB values: rank 1's one relay of 256 KiB made the
 * last contribution's way up ~0.8 ms longer).
 */
#define RELAY_HOLD_BYTES (64 * 1024)

/* A hold may last this many times the span over which the subtree's
 * participants arrived at the last fence of the same shape, when that is
 * longer than relay_hold.
 */
#define RELAY_HOLD_SPANS 2.0

/* Seconds a parent waits before it acknowledges a kvs.relay-late. */
#define RELAY_LATE_ACK_DELAY 0.1

/* A kvs.relay-late in flight: the names of the fences it carried, failed
 * if it is refused.
 */
struct late_relay {
    struct list_node node;
    struct fence_table *ft;
    canopy_future_t *f;
    char **names;
    int n;
};

struct waiter {
    canopy_msg_t *msg;
    char sender[CANOPY_MSG_MAX_ROUTE_LEN + 1];
};

struct fence {
    char *name;
    int nprocs;
    int flags;
    uint32_t userid;
    int count;
    int total;                  /* rank > 0: participants merged here, ever */
    int expect;                 /* rank > 0: hold the relay until 'total'
                                 * reaches this (0: no hold) */
    bool was_held;              /* ... it has been held (counted once) */
    double hold_until;          /* ... but not past this (monotime) */
    double last_merge;          /* rank > 0: when 'total' last grew (monotime) */
    struct kvs_opsbuf ops;      /* rank > 0: merged operations, as text */
    json_t *parsed;             /* rank 0: the operations, parsed as each
                                 * contribution arrives */
    blobtab_t *blobs;
    struct waiter *waiters;
    int nwaiters;
    int capwaiters;             /* allocated slots in 'waiters' */
    bool dirty;                 /* rank > 0: something to forward */
    bool sending;               /* rank > 0: in the relay being built */
    bool inflight;              /* rank > 0: content in the relay in flight */
    bool late_sent;             /* rank > 0: a kvs.relay-late carried it */
    bool failed;                /* decided (error pending publication) */
    int errnum;                 /* rank > 0: error to forward */
    char errstr[160];
    double created;
    double first_rt;            /* rank 0: CLOCK_REALTIME of the first contribution */
    double ready_rt;            /* rank 0: ... when the last one made it complete
                                 * (0: not yet; kept once the applier takes it) */
    bool ready;
    struct list_node ready_node;
    bool unpublished;           /* rank 0: its outcome is still to publish */
    int pub_errnum;             /* ... that outcome (0: success) */
    char pub_errstr[160];
};

struct finished {
    int errnum;
    char errstr[160];
    double when;
    int nprocs;                 /* 0: the entry was gone (no times) */
    double first_rt, ready_rt, decided_rt;
};

struct fence_table {
    struct kvs_ctx *ctx;
    hashmap_t *fences;
    hashmap_t *finished;
    hashmap_t *per_user;        /* "uid" -> count (as pointer) */
    struct list_node ready;
    int nready;
    canopy_watcher_t *prep;
    int ndirty;
    canopy_future_t *relay;     /* the relay in flight, or NULL */
    struct list_node late;      /* rank > 0: kvs.relay-late in flight */
    canopy_msg_t **late_acks;   /* kvs.relay-late to acknowledge */
    int nlate_acks;
    int caplate_acks;
    canopy_watcher_t *late_w;   /* ... when this fires */
    fence_shape_t *shapes;      /* rank > 0: subtree counts learned */
    canopy_watcher_t *hold_w;   /* rank > 0: ends the earliest hold */
    int nunpublished;           /* rank 0: fences with 'unpublished' */
    char *draft;                /* rank 0: the collective fence merged last,
                                 * still incomplete (fence_draft_candidate) */
};

static void fence_free (void *arg)
{
    struct fence *f = arg;
    if (f) {
        for (int i = 0; i < f->nwaiters; i++)
            canopy_msg_decref (f->waiters[i].msg);
        free (f->waiters);
        kvs_opsbuf_clear (&f->ops);
        json_decref (f->parsed);
        blobtab_destroy (f->blobs);
        if (list_node_linked (&f->ready_node))
            list_del (&f->ready_node);
        free (f->name);
        free (f);
    }
}

static void user_count (struct fence_table *ft, uint32_t userid, int delta)
{
    char key[16];
    intptr_t n;
    snprintf (key, sizeof (key), "%u", userid);
    n = (intptr_t)hashmap_lookup (ft->per_user, key) + delta;
    if (n <= 0)
        (void)hashmap_delete (ft->per_user, key);
    else
        (void)hashmap_update (ft->per_user, key, (void *)n);
}

static int user_pending (struct fence_table *ft, uint32_t userid)
{
    char key[16];
    snprintf (key, sizeof (key), "%u", userid);
    return (int)(intptr_t)hashmap_lookup (ft->per_user, key);
}

static void fence_remove (struct fence_table *ft, struct fence *f)
{
    if (f->ready) {
        ft->nready--;
        f->ready = false;
    }
    if (f->dirty) {
        f->dirty = false;
        ft->ndirty--;
    }
    if (f->unpublished) {
        f->unpublished = false;
        ft->nunpublished--;
    }
    if (ft->ctx->rank == 0)
        user_count (ft, f->userid, -1);
    (void)hashmap_delete (ft->fences, f->name);
}

static struct fence *fence_create (struct fence_table *ft, const char *name,
                                   int nprocs, int flags, uint32_t userid)
{
    struct fence *f = calloc (1, sizeof (*f));
    if (!f)
        goto nomem;
    list_node_init (&f->ready_node);
    kvs_opsbuf_init (&f->ops);
    if (!(f->name = strdup (name)) || !(f->blobs = blobtab_create ()))
        goto nomem;
    f->nprocs = nprocs;
    f->flags = flags;
    f->userid = userid;
    f->created = monotime ();
    if (hashmap_insert (ft->fences, f->name, f) < 0)
        goto error;
    if (ft->ctx->rank == 0) {
        f->first_rt = walltime ();
        user_count (ft, userid, 1);
    }
    else if (nprocs > 1 && ft->ctx->limits.relay_hold > 0) {
        double span, hold = ft->ctx->limits.relay_hold;
        f->expect = fence_shape_expect (ft->shapes, userid, nprocs, &span);
        if (hold < RELAY_HOLD_SPANS * span)
            hold = RELAY_HOLD_SPANS * span;
        f->hold_until = f->created + hold;
    }
    return f;
nomem:
    errno = ENOMEM;
error:
    fence_free (f);
    return NULL;
}

static void mark_dirty (struct fence_table *ft, struct fence *f)
{
    if (!f->dirty) {
        f->dirty = true;
        ft->ndirty++;
    }
    canopy_watcher_start (ft->prep);
}

/* rank 0: publish the outcome of one fence.  The setroot event carries
 * the current version; the names/errors tell who is done.  Returns 0, or
 * -1 with errno if the event could not be built or sent.
 */
static int publish_outcome (struct fence_table *ft, const char *name, int errnum,
                            const char *errstr)
{
    struct kvs_ctx *ctx = ft->ctx;
    json_t *names = json_array ();
    json_t *errors = json_array ();
    canopy_future_t *f = NULL;
    int rc = -1;

    if (!names || !errors)
        goto nomem;
    if (errnum) {
        if (json_array_append_new (errors, json_pack ("{s:s s:i s:s}", "name", name,
                                                      "errnum", errnum, "errstr",
                                                      errstr ? errstr : "")) < 0)
            goto nomem;
    }
    else if (json_array_append_new (names, json_string (name)) < 0)
        goto nomem;
    if (!(f = canopy_event_publish_pack (ctx->h, "kvs.setroot", 0,
                                         "{s:i s:s s:O s:O}",
                                         "version", ctx->version,
                                         "rootref", ctx->rootref,
                                         "names", names, "errors", errors)))
        goto done;
    canopy_future_destroy (f);
    rc = 0;
    goto done;
nomem:
    errno = ENOMEM;
done:;
    int e = errno;
    json_decref (names);
    json_decref (errors);
    errno = e;
    return rc;
}

/* rank 0: the outcome of 'name' could not be published.  It is kept on
 * the fence's entry (no allocation) and published again by fence_timer;
 * the entry, with its waiters, stays until the event comes back.
 */
static void publish_later (struct fence_table *ft, const char *name, int errnum,
                           const char *errstr)
{
    struct kvs_ctx *ctx = ft->ctx;
    struct fence *f = hashmap_lookup (ft->fences, name);
    int e = errno;

    if (!f) {
        /* no one on rank 0 waits for it; other brokers' waiters, if any,
         * wait for the fence timeout
         */
        canopy_log (ctx->h, LOG_ERR, "cannot publish the outcome of fence %.64s:"
                    " %s", name, strerror (e));
        return;
    }
    if (!f->unpublished) {
        f->unpublished = true;
        ft->nunpublished++;
    }
    f->pub_errnum = errnum;
    snprintf (f->pub_errstr, sizeof (f->pub_errstr), "%s", errstr ? errstr : "");
    canopy_log (ctx->h, LOG_ERR, "cannot publish the outcome of fence %.64s: %s;"
                " trying again", name, strerror (e));
}

void fence_publish_failed (struct fence_table *ft, const char *name)
{
    publish_later (ft, name, 0, NULL);
}

/* rank 0: publish the outcomes that could not be published before. */
static void publish_retry (struct fence_table *ft)
{
    void *val;
    if (ft->nunpublished == 0)
        return;
    for (const char *k = hashmap_first (ft->fences, &val); k;
         k = hashmap_next (ft->fences, &val)) {
        struct fence *f = val;
        if (!f->unpublished)
            continue;
        if (publish_outcome (ft, f->name, f->pub_errnum, f->pub_errstr) < 0)
            break;      /* still failing: the next tick tries again */
        f->unpublished = false;
        ft->nunpublished--;
    }
}

static void remember (struct fence_table *ft, const struct fence *f,
                      const char *name, int errnum, const char *errstr)
{
    struct finished *fin = calloc (1, sizeof (*fin));
    if (!fin)
        return;
    fin->errnum = errnum;
    snprintf (fin->errstr, sizeof (fin->errstr), "%s", errstr ? errstr : "");
    fin->when = monotime ();
    fin->decided_rt = walltime ();
    if (f) {
        fin->nprocs = f->nprocs;
        fin->first_rt = f->first_rt;
        fin->ready_rt = f->ready_rt;
    }
    (void)hashmap_update (ft->finished, name, fin);
}

void fence_finished (struct fence_table *ft, const char *name, int errnum,
                     const char *errstr)
{
    struct fence *f = hashmap_lookup (ft->fences, name);
    remember (ft, f, name, errnum, errstr);
    if (f && errnum)
        f->failed = true;
    /* rank 0 keeps the entry until its own setroot event arrives, so its
     * local waiters are answered like everyone else's
     */
    if (errnum && publish_outcome (ft, name, errnum, errstr) < 0)
        publish_later (ft, name, errnum, errstr);
}

/* rank 0: decide a failure now. */
static void fail_fence (struct fence_table *ft, const char *name, int errnum,
                        const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));

static void fail_fence (struct fence_table *ft, const char *name, int errnum,
                        const char *fmt, ...)
{
    char buf[160];
    va_list ap;
    struct fence *f;

    va_start (ap, fmt);
    vsnprintf (buf, sizeof (buf), fmt, ap);
    va_end (ap);
    if ((f = hashmap_lookup (ft->fences, name))) {
        if (f->failed)
            return;
        if (f->ready) {
            list_del (&f->ready_node);
            f->ready = false;
            ft->nready--;
        }
        kvs_opsbuf_clear (&f->ops);
        json_decref (f->parsed);
        f->parsed = NULL;
    }
    fence_finished (ft, name, errnum, buf);
}

/* rank > 0: queue an error to forward upstream. */
static void forward_error (struct fence_table *ft, struct fence *f, int errnum,
                           const char *errstr)
{
    if (f->errnum)
        return;
    f->errnum = errnum;
    snprintf (f->errstr, sizeof (f->errstr), "%s", errstr);
    mark_dirty (ft, f);
}

static void fail (struct fence_table *ft, struct fence *f, const char *name,
                  int errnum, const char *errstr)
{
    if (ft->ctx->rank == 0)
        fail_fence (ft, name, errnum, "%s", errstr);
    else if (f)
        forward_error (ft, f, errnum, errstr);
}

/* Add to the fence the blobs its new operations reference: those named
 * in 'refs' (a relay entry), or every blob of 'blobs' (a client's own
 * transaction, whose blobs are all its own).
 */
static int merge_blobs (struct fence *f, json_t *refs, const blobtab_t *blobs)
{
    if (!refs)
        return blobtab_merge (f->blobs, blobs);
    size_t i;
    json_t *v;
    json_array_foreach (refs, i, v) {
        const char *ref = json_string_value (v);
        const void *data;
        size_t len;
        if (!ref || blobtab_get (blobs, ref, &data, &len) < 0
            || blobtab_add (f->blobs, ref, data, len, NULL, 0) < 0)
            return -1;
    }
    return 0;
}

/* rank 0: every valref of the parsed operations has its blobs. */
static int check_refs (json_t *ops, const blobtab_t *blobs)
{
    size_t i;
    json_t *op;
    json_array_foreach (ops, i, op) {
        json_t *obj = json_array_get (op, 1);
        if (!json_is_string (json_array_get (op, 0)))
            return -1;
        if (!treeobj_is_valref (obj))
            continue;
        int n = treeobj_blobref_count (obj);
        for (int j = 0; j < n; j++) {
            if (!blobtab_has (blobs, treeobj_blobref_at (obj, j)))
                return -1;
        }
    }
    return 0;
}

/* rank 0: parse a contribution's operations as it arrives and add them
 * to the fence's, checking their valrefs against the blobs merged so far
 * (its own are).  The last contribution then costs only its own parse:
 * parsing the 512 operations of a 32-rank fence at once took 0.5 ms on
 * the path from the last arrival to the new root.  Returns 0, or -1 with
 * errno EPROTO or ENOMEM, the fence's operations unchanged.
 */
static int parse_contribution (struct fence *f, const struct kvs_relay_fence *c)
{
    struct kvs_opsbuf view = {
        .data = (char *)c->ops, .len = c->opslen, .cap = c->opslen, .nops = c->nops,
    };
    json_t *ops;

    if (!(ops = kvs_opsbuf_parse (&view)))
        return -1;
    if (check_refs (ops, f->blobs) < 0) {
        json_decref (ops);
        errno = EPROTO;
        return -1;
    }
    if (!f->parsed) {
        f->parsed = ops;
        return 0;
    }
    if (json_array_extend (f->parsed, ops) < 0) {
        json_decref (ops);
        errno = ENOMEM;
        return -1;
    }
    json_decref (ops);
    return 0;
}

static void fail (struct fence_table *ft, struct fence *f, const char *name,
                  int errnum, const char *errstr);

static void check_ready (struct fence_table *ft, struct fence *f)
{
    if (ft->ctx->rank != 0 || f->failed || f->ready || f->count < f->nprocs)
        return;
    /* the operations were parsed as they came (parse_contribution) */
    if (!f->parsed && !(f->parsed = json_array ())) {
        fail (ft, f, f->name, ENOMEM, "out of memory");
        return;
    }
    f->ready = true;
    f->ready_rt = walltime ();
    tstat_push (&ft->ctx->timing.fence_wait, (monotime () - f->created) * 1e6);
    list_add_tail (&ft->ready, &f->ready_node);
    ft->nready++;
}

/* Room for one more waiter on 'f'.  Returns 0, or -1 (ENOMEM). */
static int reserve_waiter (struct fence *f)
{
    if (f->nwaiters < f->capwaiters)
        return 0;
    int cap = f->capwaiters ? f->capwaiters * 2 : 1;
    struct waiter *v = realloc (f->waiters, cap * sizeof (*v));
    if (!v) {
        errno = ENOMEM;
        return -1;
    }
    f->waiters = v;
    f->capwaiters = cap;
    return 0;
}

static void respond_nomem (struct fence_table *ft, const char *name,
                           const canopy_msg_t *waiter)
{
    char buf[160];
    snprintf (buf, sizeof (buf), "out of memory joining fence %.64s on rank %u",
              name, ft->ctx->rank);
    canopy_respond_error (ft->ctx->h, waiter, ENOMEM, buf);
}

/* A contribution to 'name' could not get an entry (out of memory): its
 * waiter, if any, is answered ENOMEM now.  On rank 0 the contribution is
 * lost, so (if 'fail_all') the fence fails for every participant; on
 * other ranks, the other participants see rank 0's fence timeout.
 */
static void create_failed (struct fence_table *ft, const char *name,
                           const canopy_msg_t *waiter, bool fail_all)
{
    char buf[160];
    if (waiter)
        respond_nomem (ft, name, waiter);
    snprintf (buf, sizeof (buf), "out of memory merging fence %.64s on rank %u",
              name, ft->ctx->rank);
    if (ft->ctx->rank == 0 && fail_all)
        fence_finished (ft, name, ENOMEM, buf);
    else if (!waiter)
        canopy_log (ft->ctx->h, LOG_ERR, "kvs.relay: %s: a contribution is lost", buf);
}

/* Merge one contribution 'c' (its blobs in 'blobs'; 'refs' as for
 * merge_blobs).  'waiter' is the local request to answer later, or NULL
 * for a relay.
 */
static void merge (struct fence_table *ft, const struct kvs_relay_fence *c,
                   json_t *refs, const blobtab_t *blobs,
                   const canopy_msg_t *waiter, uint32_t userid)
{
    struct kvs_ctx *ctx = ft->ctx;
    const char *name = c->name;
    int nprocs = c->nprocs, flags = c->flags, count = c->count;
    int errnum = c->errnum;
    const char *errstr = c->errstr && *c->errstr ? c->errstr : NULL;
    struct fence *f;
    struct finished *fin;

    if (c->userid >= 0)
        userid = c->userid;
    if (ctx->rank == 0 && (fin = hashmap_lookup (ft->finished, name))
        && !hashmap_lookup (ft->fences, name)) {
        /* late joiner of a finished fence: same error, or "complete";
         * the entry keeps the waiter so the event answers it
         */
        int e = fin->errnum ? fin->errnum : EINVAL;
        char es[160];
        snprintf (es, sizeof (es), "%s", fin->errnum ? fin->errstr
                  : "fence already complete: too many participants");
        if (waiter) {
            if (!(f = fence_create (ft, name, nprocs, flags, userid))) {
                create_failed (ft, name, waiter, false);
                return;
            }
            f->failed = true;
        }
        if (publish_outcome (ft, name, e, es) < 0)
            publish_later (ft, name, e, es);
        if (waiter)
            goto add_waiter;
        return;
    }
    if (!(f = hashmap_lookup (ft->fences, name))) {
        if (ctx->rank == 0 && !errnum
            && user_pending (ft, userid) >= ctx->limits.max_pending_per_user) {
            if (!(f = fence_create (ft, name, nprocs, flags, userid))) {
                create_failed (ft, name, waiter, false);
                return;
            }
            fail (ft, f, name, EAGAIN, "too many open fences for this user");
            goto add_waiter;
        }
        if (!(f = fence_create (ft, name, nprocs, flags, userid))) {
            create_failed (ft, name, waiter, true);
            return;
        }
    }
    /* the waiter's slot first: a contribution is merged only if its
     * waiter can be kept to hear the outcome
     */
    if (waiter && reserve_waiter (f) < 0) {
        respond_nomem (ft, name, waiter);
        return;
    }
    if (errnum) {
        fail (ft, f, name, errnum, errstr ? errstr : "fence failed");
        goto add_waiter;
    }
    if (f->failed)
        goto add_waiter;
    if (f->nprocs != nprocs || f->flags != flags) {
        char buf[160];
        snprintf (buf, sizeof (buf), "fence %.64s: participants disagree "
                  "(nprocs %d vs %d, flags %d vs %d)", name, f->nprocs, nprocs,
                  f->flags, flags);
        fail (ft, f, name, EINVAL, buf);
        goto add_waiter;
    }
    if (ctx->rank == 0 && f->count + count > f->nprocs) {
        fail (ft, f, name, EINVAL, "too many participants");
        goto add_waiter;
    }
    if (c->nops > 0) {
        long have = ctx->rank == 0 ? (long)json_array_size (f->parsed) : f->ops.nops;
        if (have + (long)c->nops > 10000000
            || merge_blobs (f, refs, blobs) < 0
            || (ctx->rank > 0
                && kvs_opsbuf_append_text (&f->ops, c->ops, c->opslen, c->nops) < 0)) {
            fail (ft, f, name, E2BIG, "transaction too large");
            goto add_waiter;
        }
        if (ctx->rank == 0 && parse_contribution (f, c) < 0) {
            fail (ft, f, name, errno == ENOMEM ? ENOMEM : EPROTO,
                  "the merged transaction is malformed");
            goto add_waiter;
        }
    }
    f->count += count;
    f->total += count;
    if (ctx->rank == 0) {
        check_ready (ft, f);
        /* the applier may apply what it has so far (apply.c, drafts) */
        if (!f->ready && f->nprocs > 1 && f->parsed
            && (!ft->draft || strcmp (ft->draft, f->name) != 0)) {
            char *copy = strdup (f->name);
            if (copy) {         /* without it there is no draft: no harm */
                free (ft->draft);
                ft->draft = copy;
            }
        }
    }
    else {
        f->last_merge = monotime ();
        mark_dirty (ft, f);
    }
add_waiter:
    if (waiter) {
        const char *sender = canopy_msg_route_last (waiter);
        if (reserve_waiter (f) < 0) {
            respond_nomem (ft, name, waiter);
            return;
        }
        f->waiters[f->nwaiters].msg = canopy_msg_incref ((canopy_msg_t *)waiter);
        snprintf (f->waiters[f->nwaiters].sender,
                  sizeof (f->waiters[f->nwaiters].sender), "%s", sender ? sender : "");
        f->nwaiters++;
    }
}

/* A client's checked contribution c (its blobs in 'blobs'), from either
 * path of fence_request: the limits, then a commit becomes a fence of one
 * participant with a name unique across restarts of this broker too, then
 * it is merged with msg as its waiter (or answered with the error).
 */
static void enter (struct fence_table *ft, const canopy_msg_t *msg,
                   struct kvs_relay_fence *c, const blobtab_t *blobs, bool commit)
{
    struct kvs_ctx *ctx = ft->ctx;
    char name[64];

    if (c->nops > ctx->limits.max_txn_ops) {
        canopy_respond_error (ctx->h, msg, E2BIG, "too many operations in one transaction");
        return;
    }
    if (c->nprocs > ctx->limits.max_nprocs) {
        canopy_respond_error (ctx->h, msg, EINVAL, "fence nprocs is too large");
        return;
    }
    if (commit) {
        snprintf (name, sizeof (name), "commit.%u.%llx.%llu", ctx->rank,
                  (unsigned long long)ctx->nonce,
                  (unsigned long long)++ctx->commit_seq);
        c->name = name;
        c->nprocs = 1;
        ctx->stats.commits++;
    }
    else
        ctx->stats.fences++;
    merge (ft, c, NULL, blobs, msg, c->userid);
}

/* A client transaction kvs_wire_scan reads, entered with its operations'
 * text as the client wrote it.  Returns 1 (handled: merged or answered),
 * 0 (declined: take the general path) or -1 (out of memory).
 */
static int fence_request_scan (struct fence_table *ft, const canopy_msg_t *msg,
                               const void *data, size_t len, bool commit,
                               uint32_t userid)
{
    struct kvs_wire_txn txn;
    blobtab_t *blobs;
    int rc;

    if ((rc = kvs_wire_scan (data, len, true, &txn, &blobs)) <= 0)
        return rc;
    struct kvs_relay_fence c = {
        .name = txn.name,
        .nprocs = txn.nprocs,
        .flags = txn.flags,
        .count = 1,
        .userid = userid,
        .errstr = "",
        .nops = txn.nops,
        .ops = txn.ops,
        .opslen = txn.opslen,
    };
    enter (ft, msg, &c, blobs, commit);
    blobtab_destroy (blobs);
    return 1;
}

void fence_request (struct fence_table *ft, const canopy_msg_t *msg, bool commit)
{
    struct kvs_ctx *ctx = ft->ctx;
    const void *data;
    size_t len;
    json_t *fences = NULL;
    blobtab_t *blobs = NULL;
    canopy_error_t error;
    json_t *c;
    uint32_t userid = 0;

    error.text[0] = '\0';
    (void)canopy_msg_get_userid (msg, &userid);
    if (canopy_msg_get_payload (msg, &data, &len) < 0) {
        canopy_respond_error (ctx->h, msg, EPROTO, "cannot read the transaction");
        return;
    }
    /* the form clients write, read without JSON values; else the general
     * path, which also reports what is wrong
     */
    switch (fence_request_scan (ft, msg, data, len, commit, userid)) {
        case 1:
            return;
        case -1:
            canopy_respond_error (ctx->h, msg, ENOMEM,
                                  "out of memory decoding the transaction");
            return;
    }
    if (kvs_wire_decode (data, len, true, &fences, &blobs, &error) < 0) {
        int e = errno == ENOMEM ? ENOMEM : EPROTO;
        canopy_respond_error (ctx->h, msg, e, error.text[0] ? error.text
                              : e == ENOMEM ? "out of memory decoding the transaction"
                                            : "malformed transaction");
        return;
    }
    if (json_array_size (fences) != 1) {
        canopy_respond_error (ctx->h, msg, EPROTO, "one transaction per request");
        goto done;
    }
    c = json_array_get (fences, 0);
    json_t *ops = json_object_get (c, "ops");
    if (!ops || json_object_get (c, "errnum")
        || json_integer_value (json_object_get (c, "count")) != 1) {
        canopy_respond_error (ctx->h, msg, EPROTO, "malformed transaction");
        goto done;
    }
    if ((int)json_array_size (ops) > ctx->limits.max_txn_ops) {
        canopy_respond_error (ctx->h, msg, E2BIG, "too many operations in one transaction");
        goto done;
    }
    size_t i;
    json_t *op;
    json_array_foreach (ops, i, op) {
        error.text[0] = '\0';
        if (kvs_wire_check_op (op, blobs, &error) < 0) {
            canopy_respond_error (ctx->h, msg, errno, error.text[0] ? error.text
                                                                   : "invalid operation");
            goto done;
        }
    }
    /* validated: from here on the operations are text */
    struct kvs_opsbuf text;
    kvs_opsbuf_init (&text);
    if (kvs_opsbuf_append_json (&text, ops) < 0) {
        canopy_respond_error (ctx->h, msg, ENOMEM, NULL);
        goto done;
    }
    struct kvs_relay_fence rc = {
        .name = json_string_value (json_object_get (c, "name")),
        .nprocs = json_integer_value (json_object_get (c, "nprocs")),
        .flags = json_integer_value (json_object_get (c, "flags")),
        .count = 1,
        .userid = userid,
        .errstr = "",
        .nops = text.nops,
        .ops = text.data,
        .opslen = text.len,
    };
    enter (ft, msg, &rc, blobs, commit);
    kvs_opsbuf_clear (&text);
done:
    json_decref (fences);
    blobtab_destroy (blobs);
}

/* Acknowledge every kvs.relay-late received so far. */
static void late_ack_all (struct fence_table *ft)
{
    for (int i = 0; i < ft->nlate_acks; i++) {
        if (canopy_respond (ft->ctx->h, ft->late_acks[i], NULL) < 0)
            canopy_log (ft->ctx->h, LOG_ERR, "kvs.relay-late: cannot acknowledge: %s",
                        strerror (errno));
        canopy_msg_decref (ft->late_acks[i]);
    }
    ft->nlate_acks = 0;
}

static void late_ack_timer_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents,
                               void *arg)
{
    late_ack_all (arg);
}

/* Keep a kvs.relay-late to acknowledge RELAY_LATE_ACK_DELAY from the first
 * of a batch.  Without the memory to keep it, acknowledge it now.
 */
static void late_ack_later (struct fence_table *ft, const canopy_msg_t *msg)
{
    if (ft->nlate_acks == ft->caplate_acks) {
        int cap = ft->caplate_acks ? ft->caplate_acks * 2 : 16;
        canopy_msg_t **v = realloc (ft->late_acks, cap * sizeof (*v));
        if (!v) {
            canopy_respond (ft->ctx->h, msg, NULL);
            return;
        }
        ft->late_acks = v;
        ft->caplate_acks = cap;
    }
    ft->late_acks[ft->nlate_acks++] = canopy_msg_incref ((canopy_msg_t *)msg);
    if (ft->nlate_acks == 1) {
        canopy_timer_watcher_reset (ft->late_w, RELAY_LATE_ACK_DELAY, 0);
        canopy_watcher_start (ft->late_w);
    }
}

void fence_relay (struct fence_table *ft, const canopy_msg_t *msg)
{
    struct kvs_ctx *ctx = ft->ctx;
    const void *data;
    size_t len;
    kvs_relay_t *r;
    canopy_error_t error;
    double t0 = thread_cputime ();

    error.text[0] = '\0';
    ctx->stats.relays_received++;
    if (canopy_msg_get_payload (msg, &data, &len) < 0
        || !(r = kvs_relay_decode (data, len, &error))) {
        int e = errno == ENOMEM ? ENOMEM : EPROTO;
        canopy_log (ctx->h, LOG_ERR, "dropped kvs.relay: %s", error.text);
        canopy_respond_error (ctx->h, msg, e, error.text[0] ? error.text : NULL);
        return;
    }
    /* acknowledge first: the child's next batch is on its way while we
     * merge; a kvs.relay-late later, with the others
     */
    const char *topic = canopy_msg_get_topic (msg);
    if (topic && !strcmp (topic, "kvs.relay-late"))
        late_ack_later (ft, msg);
    else
        canopy_respond (ctx->h, msg, NULL);
    for (int i = 0; i < kvs_relay_count (r); i++) {
        const struct kvs_relay_fence *c = kvs_relay_fence (r, i);
        merge (ft, c, c->refs, kvs_relay_blobs (r), NULL, 0);
    }
    kvs_relay_destroy (r);
    tstat_push (&ctx->timing.relay_decode, (thread_cputime () - t0) * 1e6);
}

/* The parent has merged our last relay: send what gathered meanwhile.
 * If it refused it (or could not be reached), the contributions it
 * carried are lost: each of those fences becomes an error contribution,
 * sent in the next relay, so that rank 0 fails it for everyone.
 */
static void relay_ack_cb (canopy_future_t *f, void *arg)
{
    struct fence_table *ft = arg;
    int errnum = 0;
    char buf[160];
    void *val;

    if (canopy_future_get (f, NULL) < 0) {
        const char *s = canopy_future_error_string (f);
        errnum = errno ? errno : EIO;
        canopy_log (ft->ctx->h, LOG_ERR, "kvs.relay: %s", s ? s : strerror (errnum));
        snprintf (buf, sizeof (buf), "the relay to the parent broker failed: %s",
                  s ? s : strerror (errnum));
    }
    canopy_future_destroy (f);
    ft->relay = NULL;
    for (const char *k = hashmap_first (ft->fences, &val); k;
         k = hashmap_next (ft->fences, &val)) {
        struct fence *fe = val;
        if (!fe->inflight)
            continue;
        fe->inflight = false;
        if (errnum)
            forward_error (ft, fe, errnum, buf);
    }
    if (ft->ndirty > 0)
        canopy_watcher_start (ft->prep);
}

/* The relay entry of a dirty fence: its merged content, or its error. */
static struct kvs_relay_fence relay_entry (struct fence *f)
{
    struct kvs_relay_fence c = {
        .name = f->name,
        .nprocs = f->nprocs,
        .flags = f->flags,
        .count = f->errnum ? 0 : f->count,
        .userid = f->userid,
        .errnum = f->errnum,
        .errstr = f->errstr,
        .nops = f->errnum ? 0 : f->ops.nops,
        .ops = f->ops.data,
        .opslen = f->errnum ? 0 : f->ops.len,
    };
    return c;
}

/* Whether dirty fence f waits for more of its expected participants.
 * A hold that ran out is ended for good (the fence is self-clocked from
 * then on) and counted.
 */
static bool held (struct fence_table *ft, struct fence *f, double now)
{
    if (f->expect <= 0 || f->errnum || f->total >= f->expect
        || f->ops.len + blobtab_bytes (f->blobs) >= RELAY_HOLD_BYTES)
        return false;
    if (now >= f->hold_until) {
        f->expect = 0;
        ft->ctx->stats.relay_hold_expired++;
        return false;
    }
    if (!f->was_held) {
        f->was_held = true;
        ft->ctx->stats.relay_holds++;
    }
    return true;
}

/* Whether dirty fence f goes in a kvs.relay-late: it has brought every
 * participant its subtree is expected to, holds no error, and was never
 * sent that way (so a wrong expectation cannot turn every later
 * contribution into an unclocked relay).
 */
static bool completes (const struct fence *f)
{
    return f->dirty && f->expect > 0 && !f->errnum && !f->late_sent
           && f->total >= f->expect;
}

static bool any_completes (struct fence_table *ft)
{
    void *val;
    for (const char *k = hashmap_first (ft->fences, &val); k;
         k = hashmap_next (ft->fences, &val)) {
        if (completes (val))
            return true;
    }
    return false;
}

/* Whether a relay would carry something now: a dirty fence not held.
 * If fences are held, the hold timer is set for the first to run out.
 */
static bool sendable (struct fence_table *ft)
{
    double now = monotime (), until = 0;
    void *val;

    for (const char *k = hashmap_first (ft->fences, &val); k;
         k = hashmap_next (ft->fences, &val)) {
        struct fence *f = val;
        if (!f->dirty)
            continue;
        if (!held (ft, f, now))
            return true;
        if (until == 0 || f->hold_until < until)
            until = f->hold_until;
    }
    if (until > 0) {
        canopy_timer_watcher_reset (ft->hold_w, until - now, 0);
        canopy_watcher_start (ft->hold_w);
    }
    return false;
}

/* Fill a relay with dirty fences, in table order, as long as its size
 * bound stays under the limit; the others wait for the next relay.  A
 * fence whose bound alone is over the limit goes alone (the encoder then
 * decides).  A kvs.relay-late ('late') takes only fences that complete.
 * Marks the chosen fences 'sending'.  Returns how many, or -1 (ENOMEM)
 * with the fences chosen so far still marked.
 */
static int fill_relay (struct fence_table *ft, kvs_relay_enc_t *enc, bool late)
{
    size_t max = ft->ctx->limits.relay_max;
    int n = 0;
    bool alone = false;
    double now = monotime ();
    void *val;

    for (const char *k = hashmap_first (ft->fences, &val); k && !alone;
         k = hashmap_next (ft->fences, &val)) {
        struct fence *f = val;
        if (late ? !completes (f) : !f->dirty || held (ft, f, now))
            continue;
        struct kvs_relay_fence c = relay_entry (f);
        const blobtab_t *blobs = f->errnum ? NULL : f->blobs;
        size_t bound = kvs_relay_fence_bound (&c, blobs);
        if (n > 0 && kvs_relay_enc_bound (enc) + bound > max)
            continue;
        if (kvs_relay_enc_add (enc, &c, blobs) < 0)
            return -1;
        f->sending = true;
        n++;
        if (kvs_relay_enc_bound (enc) > max)
            alone = true;
    }
    return n;
}

static void late_relay_destroy (struct late_relay *lr)
{
    if (lr) {
        int saved_errno = errno;
        if (list_node_linked (&lr->node))
            list_del (&lr->node);
        canopy_future_destroy (lr->f);
        for (int i = 0; i < lr->n; i++)
            free (lr->names[i]);
        free (lr->names);
        free (lr);
        errno = saved_errno;
    }
}

/* A kvs.relay-late was acknowledged.  If it was refused (or the link to
 * the parent was lost), the fences it carried become error contributions,
 * as with relay_ack_cb.
 */
static void late_ack_cb (canopy_future_t *f, void *arg)
{
    struct late_relay *lr = arg;
    struct fence_table *ft = lr->ft;

    if (canopy_future_get (f, NULL) < 0) {
        const char *s = canopy_future_error_string (f);
        int errnum = errno ? errno : EIO;
        char buf[160];
        canopy_log (ft->ctx->h, LOG_ERR, "kvs.relay-late: %s", s ? s : strerror (errnum));
        snprintf (buf, sizeof (buf), "the relay to the parent broker failed: %s",
                  s ? s : strerror (errnum));
        for (int i = 0; i < lr->n; i++) {
            struct fence *fe = hashmap_lookup (ft->fences, lr->names[i]);
            if (fe)
                forward_error (ft, fe, errnum, buf);
        }
    }
    late_relay_destroy (lr);
}

/* The names of the n fences chosen for a kvs.relay-late, kept with it. */
static struct late_relay *late_relay_create (struct fence_table *ft, int n)
{
    struct late_relay *lr = calloc (1, sizeof (*lr));
    void *val;

    if (!lr)
        return NULL;
    list_node_init (&lr->node);
    lr->ft = ft;
    if (!(lr->names = calloc (n ? n : 1, sizeof (char *))))
        goto error;
    for (const char *k = hashmap_first (ft->fences, &val); k;
         k = hashmap_next (ft->fences, &val)) {
        struct fence *f = val;
        if (f->sending && lr->n < n && !(lr->names[lr->n++] = strdup (f->name)))
            goto error;
    }
    return lr;
error:
    late_relay_destroy (lr);
    errno = ENOMEM;
    return NULL;
}

/* Encode and send one relay ('late': a kvs.relay-late of the fences that
 * complete).  Returns 0, or -1 with errno (EFBIG, ENOMEM, or the send's
 * errno) and *ncontent the fences with content it held.  The chosen
 * fences are marked 'sending' in both cases.
 */
static int send_relay (struct fence_table *ft, bool late, int *ncontent)
{
    struct kvs_ctx *ctx = ft->ctx;
    kvs_relay_enc_t *enc;
    canopy_msg_t *msg = NULL;
    const void *buf;
    size_t len = 0;
    canopy_future_t *fut;
    struct late_relay *lr = NULL;
    int n, e;

    *ncontent = 0;
    if (!(enc = kvs_relay_enc_create ()))
        return -1;
    kvs_relay_enc_set_max (enc, ctx->limits.relay_max);
    if ((n = fill_relay (ft, enc, late)) < 0)
        goto error;
    if (late && !(lr = late_relay_create (ft, n)))
        goto error;
    /* encoded straight into the request: a relay of large values is not
     * copied a second time on its way out
     */
    if (!(msg = canopy_rpc_raw_request (late ? "kvs.relay-late" : "kvs.relay"))
        || kvs_relay_enc_finish_msg (enc, msg) < 0
        || canopy_msg_get_payload (msg, &buf, &len) < 0
        || !(fut = canopy_rpc_message (ctx->h, msg, CANOPY_NODEID_UPSTREAM, 0)))
        goto error;
    if (canopy_future_then (fut, -1, late ? late_ack_cb : relay_ack_cb,
                            late ? (void *)lr : (void *)ft) < 0) {
        e = errno;
        canopy_future_destroy (fut);
        errno = e;
        goto error;
    }
    if (late) {
        lr->f = fut;
        list_add_tail (&ft->late, &lr->node);
        ctx->stats.relays_late++;
    }
    else
        ft->relay = fut;
    ctx->stats.relays_sent++;
    ctx->stats.relay_bytes += len;
    canopy_msg_decref (msg);
    kvs_relay_enc_destroy (enc);
    return 0;
error:
    e = errno ? errno : ENOMEM;
    /* what was chosen, even if the filling stopped half way */
    void *val;
    for (const char *k = hashmap_first (ft->fences, &val); k;
         k = hashmap_next (ft->fences, &val)) {
        struct fence *f = val;
        if (f->sending && !f->errnum)
            (*ncontent)++;
    }
    late_relay_destroy (lr);
    canopy_msg_decref (msg);
    kvs_relay_enc_destroy (enc);
    errno = e;
    return -1;
}

/* The chosen fences left (sent, or dropped; 'late': in a kvs.relay-late):
 * reset them.  An entry keeps only its waiters until the setroot event
 * names it.
 */
static void sent (struct fence_table *ft, bool delivered, bool late)
{
    void *val;
    for (const char *k = hashmap_first (ft->fences, &val); k;
         k = hashmap_next (ft->fences, &val)) {
        struct fence *f = val;
        if (!f->sending)
            continue;
        f->sending = false;
        f->dirty = false;
        ft->ndirty--;
        if (delivered && late)
            f->late_sent = true;
        else if (delivered && !f->errnum)
            f->inflight = true;
        f->count = 0;
        kvs_opsbuf_clear (&f->ops);
        blobtab_truncate (f->blobs, 0);
        if (f->errnum)
            f->failed = true;
    }
}

/* rank > 0: send what was merged since the last relay, as one message
 * (as much as fits: the rest leaves with the next acknowledgement); with
 * 'late', the fences that complete, as one kvs.relay-late.
 *
 * Failures never leave a fence dirty to fail again, and never drop a
 * contribution silently: the fences whose content could not be sent
 * become error contributions (E2BIG if the merged content does not fit
 * in one message, else the errno of the failure), and a relay of errors
 * only is sent at once, so rank 0 fails them for every participant.  If
 * even that relay cannot be sent, its errors are dropped (logged): rank
 * 0's fence timeout or its handling of a lost broker remain.
 */
static void send_batch (struct fence_table *ft, bool late)
{
    struct kvs_ctx *ctx = ft->ctx;
    double t0 = thread_cputime ();
    int ncontent;
    bool delivered = false;

    while (!(delivered = send_relay (ft, late, &ncontent) == 0)) {
        int e = errno;
        void *val;
        if (ncontent == 0) {
            canopy_log (ctx->h, LOG_ERR, "kvs.relay: cannot send the failures of"
                        " fences to the parent broker: %s", strerror (e));
            sent (ft, false, late);
            break;
        }
        char buf[160];
        if (e == EFBIG)
            snprintf (buf, sizeof (buf), "merged contribution too large for one message");
        else
            snprintf (buf, sizeof (buf), "cannot relay the fence to the parent broker: %s",
                      strerror (e));
        canopy_log (ctx->h, LOG_ERR, "kvs.relay: %s (%d fence%s)", buf, ncontent,
                    ncontent == 1 ? "" : "s");
        for (const char *k = hashmap_first (ft->fences, &val); k;
             k = hashmap_next (ft->fences, &val)) {
            struct fence *f = val;
            if (!f->sending)
                continue;
            f->sending = false;
            if (!f->errnum)
                forward_error (ft, f, e == EFBIG ? E2BIG : e, buf);
        }
        /* the failed fences are errors now: a kvs.relay carries them */
        if (late)
            break;
    }
    if (delivered)
        sent (ft, true, late);
    tstat_push (&ctx->timing.relay_encode, (thread_cputime () - t0) * 1e6);
}

/* rank > 0: the fences that complete go in a kvs.relay-late, at once; the
 * rest in a kvs.relay when none is in flight and one is not held.
 */
static void flush (struct fence_table *ft)
{
    if (any_completes (ft))
        send_batch (ft, true);
    if (ft->ndirty > 0 && !ft->relay && sendable (ft))
        send_batch (ft, false);
}

static void prep_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct fence_table *ft = arg;
    if (ft->ctx->rank > 0 && ft->ndirty > 0)
        flush (ft);
    canopy_watcher_stop (w);
}

/* A hold ran out: the next pass sends what it held. */
static void hold_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct fence_table *ft = arg;
    canopy_watcher_stop (w);
    canopy_watcher_start (ft->prep);
}

void fence_abort_request (struct fence_table *ft, const canopy_msg_t *msg)
{
    const char *name;
    int errnum;
    char buf[160];

    if (canopy_msg_unpack (msg, "{s:s s:i}", "name", &name, "errnum", &errnum) < 0
        || errnum <= 0) {
        canopy_respond_error (ft->ctx->h, msg, EPROTO, "malformed kvs.fence-abort");
        return;
    }
    if (ft->ctx->rank != 0) {
        canopy_respond_error (ft->ctx->h, msg, EINVAL, "send kvs.fence-abort to rank 0");
        return;
    }
    snprintf (buf, sizeof (buf), "fence %.64s aborted: %s", name, strerror (errnum));
    if (!hashmap_lookup (ft->finished, name) || hashmap_lookup (ft->fences, name))
        fail_fence (ft, name, errnum, "%s", buf);
    canopy_respond (ft->ctx->h, msg, NULL);
}

void fence_disconnect (struct fence_table *ft, const char *sender)
{
    struct kvs_ctx *ctx = ft->ctx;
    void *val;
    char **names = NULL;
    int n = 0;

    /* collect first: failing may change the table */
    for (const char *k = hashmap_first (ft->fences, &val); k;
         k = hashmap_next (ft->fences, &val)) {
        struct fence *f = val;
        for (int i = 0; i < f->nwaiters; i++) {
            if (!strcmp (f->waiters[i].sender, sender)) {
                char **v = realloc (names, (n + 1) * sizeof (char *));
                if (v) {
                    names = v;
                    names[n++] = strdup (f->name);
                }
                canopy_msg_decref (f->waiters[i].msg);
                f->waiters[i] = f->waiters[--f->nwaiters];
                break;
            }
        }
    }
    for (int i = 0; i < n; i++) {
        struct fence *f = names[i] ? hashmap_lookup (ft->fences, names[i]) : NULL;
        char buf[160];
        if (f && !f->failed && !f->ready && f->count < f->nprocs) {
            snprintf (buf, sizeof (buf), "fence %.64s: a participant on rank %u "
                      "disconnected", f->name, ctx->rank);
            fail (ft, f, f->name, ECONNRESET, buf);
        }
        free (names[i]);
    }
    free (names);
}

int fence_take_ready (struct fence_table *ft, struct ready_fence **out, int max)
{
    int n = 0;
    while (n < max && !list_empty (&ft->ready)) {
        struct fence *f = list_entry (ft->ready.next, struct fence, ready_node);
        if ((f->flags & KVS_NO_MERGE) && n > 0)
            break;
        /* nothing is taken unless everything needed was allocated */
        struct ready_fence *rf = calloc (1, sizeof (*rf));
        blobtab_t *fresh = blobtab_create ();
        if (!rf || !fresh || !(rf->name = strdup (f->name))) {
            free (rf);
            blobtab_destroy (fresh);
            break;
        }
        rf->flags = f->flags;
        rf->nprocs = f->nprocs;
        rf->ops = f->parsed;
        rf->blobs = f->blobs;
        f->parsed = NULL;
        f->blobs = fresh;
        list_del (&f->ready_node);
        f->ready = false;
        ft->nready--;
        out[n++] = rf;
        if (rf->flags & KVS_NO_MERGE)
            break;
    }
    return n;
}

void ready_fence_free (struct ready_fence *rf)
{
    if (rf) {
        free (rf->name);
        json_decref (rf->ops);
        blobtab_destroy (rf->blobs);
        free (rf);
    }
}

bool fence_draft_candidate (struct fence_table *ft, const char **name, json_t **ops)
{
    struct fence *f;
    if (!ft->draft || !(f = hashmap_lookup (ft->fences, ft->draft))
        || f->ready || f->failed || !f->parsed || f->nprocs < 2)
        return false;
    if (name)
        *name = f->name;
    if (ops)
        *ops = f->parsed;
    return true;
}

bool fence_have_ready (struct fence_table *ft)
{
    return ft->nready > 0;
}

int fence_ready_count (struct fence_table *ft)
{
    return ft->nready;
}

void fence_fail_all (struct fence_table *ft, int errnum, const char *errstr)
{
    void *val;
    char **names = NULL;
    int n = 0;
    for (const char *k = hashmap_first (ft->fences, &val); k;
         k = hashmap_next (ft->fences, &val)) {
        struct fence *f = val;
        if (f->failed || f->count >= f->nprocs)
            continue;
        char **v = realloc (names, (n + 1) * sizeof (char *));
        if (v) {
            names = v;
            names[n++] = strdup (f->name);
        }
    }
    for (int i = 0; i < n; i++) {
        if (names[i])
            fail_fence (ft, names[i], errnum, "%s", errstr);
        free (names[i]);
    }
    free (names);
}

static void answer (struct fence_table *ft, struct fence *f, int errnum,
                    const char *errstr, int version, const char *rootref)
{
    /* every waiter gets the same answer: encode it once */
    char buf[64 + BLOBREF_MAX];
    if (!errnum)
        snprintf (buf, sizeof (buf), "{\"version\":%d,\"rootref\":\"%s\"}",
                  version, rootref);
    for (int i = 0; i < f->nwaiters; i++) {
        if (errnum)
            canopy_respond_error (ft->ctx->h, f->waiters[i].msg, errnum, errstr);
        else
            canopy_respond (ft->ctx->h, f->waiters[i].msg, buf);
    }
}

void fence_setroot (struct fence_table *ft, json_t *names, json_t *errors,
                    int version, const char *rootref)
{
    size_t i;
    json_t *v;
    struct fence *f;

    json_array_foreach (names, i, v) {
        if (json_is_string (v) && (f = hashmap_lookup (ft->fences, json_string_value (v)))) {
            /* every participant from this subtree came through here */
            if (ft->ctx->rank > 0 && !f->errnum)
                fence_shape_learn (ft->shapes, f->userid, f->nprocs, f->total,
                                   f->last_merge > f->created
                                   ? f->last_merge - f->created : 0);
            answer (ft, f, 0, NULL, version, rootref);
            fence_remove (ft, f);
        }
    }
    json_array_foreach (errors, i, v) {
        const char *name, *errstr = NULL;
        int errnum;
        if (json_unpack (v, "{s:s s:i s?s}", "name", &name, "errnum", &errnum,
                         "errstr", &errstr) < 0)
            continue;
        if ((f = hashmap_lookup (ft->fences, name))) {
            answer (ft, f, errnum, errstr, version, rootref);
            fence_remove (ft, f);
        }
    }
}

void fence_timer (struct fence_table *ft, double now)
{
    void *val;
    char **names = NULL;
    int n = 0;

    if (ft->ctx->rank != 0)
        return;
    publish_retry (ft);
    for (const char *k = hashmap_first (ft->finished, &val); k;
         k = hashmap_next (ft->finished, &val)) {
        struct finished *fin = val;
        if (now - fin->when > FENCE_FINISHED_KEEP) {
            char key[300];
            snprintf (key, sizeof (key), "%s", k);
            (void)hashmap_delete (ft->finished, key);
        }
    }
    if (ft->ctx->limits.fence_timeout <= 0)
        return;
    for (const char *k = hashmap_first (ft->fences, &val); k;
         k = hashmap_next (ft->fences, &val)) {
        struct fence *f = val;
        if (!f->failed && !f->ready && f->count < f->nprocs
            && now - f->created > ft->ctx->limits.fence_timeout) {
            char **v = realloc (names, (n + 1) * sizeof (char *));
            if (v) {
                names = v;
                names[n++] = strdup (f->name);
            }
        }
    }
    for (int i = 0; i < n; i++) {
        struct fence *f = names[i] ? hashmap_lookup (ft->fences, names[i]) : NULL;
        if (f)
            fail_fence (ft, names[i], ETIMEDOUT,
                        "fence %.64s: only %d of %d participants joined within %.0fs",
                        f->name, f->count, f->nprocs, ft->ctx->limits.fence_timeout);
        free (names[i]);
    }
    free (names);
}

static void shape_json (uint32_t userid, int nprocs, int count, double span,
                        void *arg)
{
    json_t **a = arg;
    json_t *o;

    if (!*a)
        return;
    if (!(o = json_pack ("{s:I s:i s:i s:f}", "userid", (json_int_t)userid,
                         "nprocs", nprocs, "count", count, "span", span))
        || json_array_append_new (*a, o) < 0) {
        json_decref (*a);
        *a = NULL;
    }
}

json_t *fence_shapes_json (struct fence_table *ft)
{
    json_t *a = json_array ();

    fence_shape_foreach (ft->shapes, shape_json, &a);
    if (!a)
        errno = ENOMEM;
    return a;
}

void fence_stats (struct fence_table *ft, struct fence_stats *st)
{
    void *val;
    memset (st, 0, sizeof (*st));
    for (const char *k = hashmap_first (ft->fences, &val); k;
         k = hashmap_next (ft->fences, &val)) {
        struct fence *f = val;
        st->open++;
        st->waiters += f->nwaiters;
    }
    st->ready = ft->nready;
}

int fence_status (struct fence_table *ft, const char *name, json_t **out)
{
    struct finished *fin;
    struct fence *f;
    json_t *o;

    if (ft->ctx->rank != 0) {
        errno = EINVAL;
        return -1;
    }
    if ((fin = hashmap_lookup (ft->finished, name))) {
        o = json_pack ("{s:s s:s s:i s:s s:i s:f s:f s:f}", "name", name,
                       "state", fin->errnum ? "failed" : "complete",
                       "errnum", fin->errnum, "errstr", fin->errstr,
                       "nprocs", fin->nprocs, "first", fin->first_rt,
                       "ready", fin->ready_rt, "decided", fin->decided_rt);
    }
    else if ((f = hashmap_lookup (ft->fences, name)) && !f->failed) {
        o = json_pack ("{s:s s:s s:i s:i s:f s:f}", "name", name,
                       "state", f->ready_rt > 0 ? "applying" : "open",
                       "count", f->count, "nprocs", f->nprocs,
                       "first", f->first_rt, "ready", f->ready_rt);
    }
    else {
        errno = ENOENT;
        return -1;
    }
    if (!o) {
        errno = ENOMEM;
        return -1;
    }
    *out = o;
    return 0;
}

static void finished_free (void *arg)
{
    free (arg);
}

struct fence_table *fence_table_create (struct kvs_ctx *ctx)
{
    struct fence_table *ft = calloc (1, sizeof (*ft));
    if (!ft) {
        errno = ENOMEM;
        return NULL;
    }
    ft->ctx = ctx;
    list_init (&ft->ready);
    list_init (&ft->late);
    if (!(ft->fences = hashmap_create (fence_free))
        || !(ft->finished = hashmap_create (finished_free))
        || !(ft->per_user = hashmap_create (NULL))
        || !(ft->prep = canopy_prepare_watcher_create (ctx->r, prep_cb, ft))
        || !(ft->shapes = fence_shape_create ())
        || !(ft->hold_w = canopy_timer_watcher_create (ctx->r, 0, 0, hold_cb, ft))
        || !(ft->late_w = canopy_timer_watcher_create (ctx->r, 0, 0, late_ack_timer_cb,
                                                       ft))) {
        fence_table_destroy (ft);
        return NULL;
    }
    canopy_watcher_unref (ft->prep);
    canopy_watcher_unref (ft->hold_w);
    canopy_watcher_unref (ft->late_w);
    return ft;
}

void fence_table_destroy (struct fence_table *ft)
{
    if (ft) {
        int saved_errno = errno;
        void *val;
        /* nobody is left waiting */
        for (const char *k = hashmap_first (ft->fences, &val); k;
             k = hashmap_next (ft->fences, &val))
            answer (ft, val, ENOSYS, "KVS module unloading", 0, "");
        canopy_future_destroy (ft->relay);
        while (!list_empty (&ft->late))
            late_relay_destroy (list_first_entry (&ft->late, struct late_relay, node));
        /* what was merged is acknowledged: the children forget it */
        late_ack_all (ft);
        free (ft->late_acks);
        canopy_watcher_destroy (ft->prep);
        canopy_watcher_destroy (ft->hold_w);
        canopy_watcher_destroy (ft->late_w);
        fence_shape_destroy (ft->shapes);
        hashmap_destroy (ft->fences);
        hashmap_destroy (ft->finished);
        hashmap_destroy (ft->per_user);
        free (ft->draft);
        free (ft);
        errno = saved_errno;
    }
}
