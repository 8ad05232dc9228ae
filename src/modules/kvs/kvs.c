/* kvs.c - the KVS service (DESIGN.md section 4): context, handlers,
 * mod_main.
 *
 *   kvs.lookup {key, flags}        value bytes (raw) or a tree object
 *   kvs.commit / kvs.fence         a transaction (kvs_wire.h); answered
 *                                  {version, rootref} once this broker has
 *                                  the new root
 *   kvs.relay                      merged contributions from a child broker
 *   kvs.relay-late                 the same, completing held fences: its
 *                                  acknowledgement comes later (fence.c)
 *   kvs.fence-abort {name, errnum} fail a fence for everyone (rank 0)
 *   kvs.fence-status {name}        rank 0's record of a fence: its state
 *                                  and when it began, became complete
 *                                  and was decided (fence_status)
 *   kvs.getroot                    {version, rootref}
 *   kvs.wait-version {version}     answered once version is reached
 *   kvs.watch / kvs.unwatch        streaming watch (watch.c)
 *   kvs.dropcache, kvs.stats, kvs.disconnect
 *   event kvs.setroot {version, rootref, names, errors, stamp[, prime]}
 *                                  after a collective fence a kvs_frame
 *                                  whose blobs are small new
 *                                  directories (cached encoded by every
 *                                  broker on arrival and decoded when a
 *                                  lookup needs one: priming); prime
 *                                  announces a kvs.prime event next: the
 *                                  first 8 hex digits of each value's
 *                                  ref it brings, concatenated, or true
 *   event kvs.prime {version, stamp} a kvs_frame whose body is that
 *                                  version's new small values as blob
 *                                  records (maybe none).  Separate, so
 *                                  the fence's answers do not wait for its
 *                                  bytes; meanwhile a broker holds the value
 *                                  loads its lookups would start (load.h),
 *                                  and releases them when it arrives (or a
 *                                  later setroot does, or a second passes:
 *                                  the event was lost)
 *
 * Rank 0 owns the root and applies transactions (apply.c); every broker
 * caches objects (objcache.c), merges fence contributions on their way up
 * (fence.c), and answers its own callers when the setroot event arrives.
 *
 * Module arguments (override broker attributes "kvs.NAME"):
 *   fence-timeout=SEC   fail fences not complete after SEC (default 0: off)
 *   max-nprocs=N        largest fence (default 1048576)
 *   max-pending=N       open fences per user (default 1024)
 *   max-ops=N           operations per transaction (default 1000000)
 *   cache-max=BYTES     object cache size (default 128 MiB)
 *   cache-age=SEC       drop objects unused that long (default 60)
 *   hdir-threshold=N    a directory with more entries is hashed (default 128)
 *   hdir-bytes=BYTES    ... or one whose encoding is longer (default 16384,
 *                       prime-max's: every plain directory can be primed;
 *                       0: entries only)
 *   prime-max=BYTES     setroot carries new directories up to this size
 *                       (default 16384; 0: none)
 *   prime-budget=BYTES  ... and up to this many bytes in all (default 512 KiB)
 *   prime-values=BYTES  new values (each up to prime-max) a collective
 *                       fence's kvs.prime carries, for the whole instance:
 *                       divided by the number of brokers (default 8 MiB)
 *   (BYTES: digits, with an optional binary suffix k, M, G or T)
 * Broker attribute kvs.guest-access=none|read|own: what users other than
 * the instance owner may do (access.h; default none).
 *   checkpoint-period=SEC  rank 0 checkpoints the root this often when it
 *                       changed (default 10; 0: only SYNC commits and unload)
 * A value out of bounds or not a number is refused (options.h): the
 * module does not load, and says why in the log.
 *
 * Persistence (rank 0, checkpoint.c): the root is restored from the newest
 * usable checkpoint at start, checkpointed periodically, by every KVS_SYNC
 * commit (which returns only once it is durable) and at unload.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <canopy/canopy.h>
#include <sodium.h>
#include "src/common/libutil/list.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/heap.h"
#include "src/common/libutil/modopt.h"
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/kvs_frame.h"
#include "kvs_ctx.h"
#include "lookup.h"
#include "src/common/libkvs/kvs_lookup_wire.h"
#include "fence.h"
#include "apply.h"
#include "watch.h"
#include "options.h"
#include "access.h"
#include "checkpoint.h"
#include "load.h"
#include "shmpub.h"
#include "src/common/libkvs/blobrecs.h"
#include "src/common/libkvs/kvs_shm.h"
#include "src/common/libcanopy/json_fast_dump.h"
#include "src/common/libcanopy/direct.h"

CANOPY_MOD_NAME ("kvs");

struct version_waiter {
    struct list_node node;
    canopy_msg_t *msg;
    int version;
    char sender[CANOPY_MSG_MAX_ROUTE_LEN + 1];
};

static struct kvs_ctx *the_ctx;     /* for lookup_done */

/* Root */

void kvs_root_update (struct kvs_ctx *ctx, int version, const char *rootref)
{
    struct list_node *pos, *tmp;

    if (version <= ctx->version && ctx->rootref[0])
        return;
    /* the shared read cache first: nothing of this version reaches a
     * client before its gets can find the version there
     */
    shmpub_root (ctx->shm, version, rootref);
    ctx->version = version;
    snprintf (ctx->rootref, sizeof (ctx->rootref), "%s", rootref);
    list_for_each_safe (pos, tmp, &ctx->version_waiters) {
        struct version_waiter *vw = list_entry (pos, struct version_waiter, node);
        if (vw->version <= version) {
            canopy_respond_pack (ctx->h, vw->msg, "{s:i s:s}", "version",
                                 ctx->version, "rootref", ctx->rootref);
            list_del (&vw->node);
            canopy_msg_decref (vw->msg);
            free (vw);
            ctx->nversion_waiters--;
        }
    }
    watch_setroot (ctx->watches);
}

/* The blobs a setroot frame carries (after a collective fence) are new
 * directories; they go into the object cache, kept encoded until a
 * lookup asks for one (most brokers read only some of them), so the gets
 * that follow do not fault them in.  They come from rank 0, which
 * computed their refs: not hashed again.  They are not copied: the cache
 * entries point into the event's payload and keep the event (see
 * objcache_put_dir_encoded); one that cannot be cached is faulted in
 * later.  The values come in their own event, kvs.prime (prime_cb).
 */
struct prime {
    struct kvs_ctx *ctx;
    const canopy_msg_t *msg;    /* the event: primed entries share its payload */
};

/* Seconds a broker holds value loads for an announced kvs.prime event
 * before it takes the event as lost.
 */
static const double prime_wait = 1.0;

/* Hold the value loads the setroot's "prime" names: a string of ref
 * prefixes (those values only), or true (every value).  A malformed list
 * holds nothing.
 */
static void prime_hold (struct kvs_ctx *ctx, int version, json_t *prime)
{
    if (load_table_hold (ctx->loads, json_string_value (prime),
                         json_string_length (prime)) < 0) {
        canopy_log (ctx->h, LOG_ERR, "kvs.setroot: malformed prime list");
        return;
    }
    ctx->prime_version = version;
    canopy_timer_watcher_reset (ctx->prime_timer, prime_wait, 0);
    canopy_watcher_start (ctx->prime_timer);
}

static void prime_release (struct kvs_ctx *ctx)
{
    if (ctx->prime_version < 0)
        return;
    ctx->prime_version = -1;
    canopy_watcher_stop (ctx->prime_timer);
    ctx->stats.held_hits += load_table_release (ctx->loads);
}

static void prime_timer_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents,
                            void *arg)
{
    struct kvs_ctx *ctx = arg;
    if (ctx->prime_version >= 0)
        canopy_log (ctx->h, LOG_WARNING, "kvs.prime of version %d did not come "
                    "in %.0f s: %d held value loads started", ctx->prime_version,
                    prime_wait, load_table_nheld (ctx->loads));
    prime_release (ctx);
}

static int prime_blob (const char *ref, const void *data, size_t len, void *arg)
{
    struct prime *p = arg;
    struct kvs_ctx *ctx = p->ctx;

    shmpub_put (ctx->shm, ref, data, len);
    if (ctx->rank > 0
        && objcache_put_dir_encoded (ctx->cache, ref, data, len, p->msg) == 0)
        ctx->stats.primed++;
    return 0;
}

/* One value of a kvs.prime event: into the cache (ranks > 0; rank 0
 * cached them as it published them, apply.c), left in the event's
 * payload, and into the shared read cache.  One walk over the records
 * does both.
 */
struct prime_values {
    struct kvs_ctx *ctx;
    const canopy_msg_t *msg;
    int cached;
    bool failed;
};

static int prime_value (const char *ref, const void *data, size_t len, void *arg)
{
    struct prime_values *pv = arg;
    struct kvs_ctx *ctx = pv->ctx;

    if (ctx->rank > 0 && !pv->failed) {
        if (objcache_put_raw_shared (ctx->cache, ref, data, len, pv->msg) == 0)
            pv->cached++;
        else
            pv->failed = true;      /* out of memory: logged once */
    }
    shmpub_put (ctx->shm, ref, data, len);
    return 0;
}

/* kvs.setroot is JSON, or a kvs_frame (apply.c: publish_setroot) whose
 * header "fences" holds the same JSON object and whose blobs are new
 * directories.
 */
static void setroot_cb (canopy_t *h, canopy_msg_handler_t *mh,
                        const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    int version;
    const char *rootref;
    json_t *names = NULL, *errors = NULL;
    json_t *hdr = NULL, *fences, *table = NULL, *o = NULL;
    json_t *prime = NULL;
    const void *buf = NULL;
    size_t len = 0, off = 0;
    double stamp = 0;
    double now = monotime ();
    double t0 = thread_cputime ();

    if (canopy_msg_has_flag (msg, CANOPY_MSGFLAG_RAW)) {
        canopy_error_t error;
        if (canopy_msg_get_payload (msg, &buf, &len) < 0
            || kvs_frame_header (buf, len, "setroot", &hdr, &fences, &table, &off,
                                 &error) < 0
            || !json_is_object ((o = json_array_get (fences, 0))))
            goto malformed;
    }
    else if (canopy_msg_get_json (msg, &o) < 0)
        goto malformed;
    if (json_unpack (o, "{s:i s:s s?o s?o s?F s?o}", "version", &version,
                     "rootref", &rootref, "names", &names,
                     "errors", &errors, "stamp", &stamp, "prime", &prime) < 0
        || blobref_validate (rootref) < 0)
        goto malformed;
    ctx->stats.setroots++;
    if (stamp > 0 && now >= stamp)
        tstat_push (&ctx->timing.setroot_lag, (now - stamp) * 1e6);
    /* the hold first: the new root's watches may look values up at once.
     * Rank 0 holds too, like everyone (its kvs.prime comes back to it),
     * though it cached the values as it published them (apply.c), so
     * its lookups find them and start no load to hold.  Events come in
     * order: a hold for an older version whose kvs.prime has not come by
     * now was lost.
     */
    if (ctx->prime_version >= 0 && version > ctx->prime_version)
        prime_release (ctx);
    if ((json_is_true (prime) || json_is_string (prime))
        && version >= ctx->version)             /* not a stale event */
        prime_hold (ctx, version, prime);
    /* the primed directories before the root they belong to, so that a
     * client answered in this version finds them in the shared read
     * cache.  The answers leave when this handler returns (the direct
     * channel sends once the loop is idle), so this does not hold them
     * back; and the callers' next requests queue behind this handler
     * anyway.  Rank 0 made them: it caches them as it applies.
     */
    if ((ctx->rank > 0 || ctx->shm) && table && json_array_size (table) > 0) {
        canopy_error_t error;
        struct prime p = { .ctx = ctx, .msg = msg };
        if (kvs_frame_foreach_blob (buf, len, off, table, false, "setroot",
                                    prime_blob, &p, &error) < 0)
            canopy_log (h, LOG_ERR, "kvs.setroot: %s", error.text);
    }
    kvs_root_update (ctx, version, rootref);
    fence_setroot (ctx->fences, names, errors, ctx->version, ctx->rootref);
    tstat_push (&ctx->timing.setroot_handle, (thread_cputime () - t0) * 1e6);
    json_decref (hdr);
    return;
malformed:
    canopy_log (h, LOG_ERR, "malformed kvs.setroot event");
    json_decref (hdr);
}

/* Memory ahead of the next fence.  A broker's cache grows by each
 * kvs.prime it keeps (the event's buffer, ~0.5 MiB for 512 values of
 * 1 KiB; on rank 0 also the copy the content service keeps), and fresh
 * memory takes a page fault per page written: 2-3 us each here, ~2 300 a
 * fence on 8 brokers, most of them inside the next fence.  So a while
 * after a large kvs.prime, when its gets are usually done, the broker
 * touches three times its size of free memory (heap_prefault), which the
 * broker keeps (broker.heap-keep, one arena for all threads): the next
 * event is received, cached and built in pages already there.
 */
#define PREFAULT_MIN (64 * 1024)
#define PREFAULT_DELAY 0.03

static void prefault_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents,
                         void *arg)
{
    struct kvs_ctx *ctx = arg;
    heap_prefault (ctx->prefault_size);
    ctx->stats.prefaults++;
}

static void prefault_after (struct kvs_ctx *ctx, size_t len)
{
    if (!ctx->prefault_w || ctx->heap_keep == 0 || len < PREFAULT_MIN)
        return;
    ctx->prefault_size = len * 3 < ctx->heap_keep ? len * 3 : ctx->heap_keep;
    canopy_timer_watcher_reset (ctx->prefault_w, PREFAULT_DELAY, 0);
    canopy_watcher_start (ctx->prefault_w);
}

/* kvs.prime: the new values of the collective fence that made 'version'
 * (apply.c), as blob records in the frame's body (blobrecs.h), cached
 * without a copy like setroot's; then the held value loads are released:
 * those the event brought complete at once.  A malformed event caches
 * nothing, and still ends a hold (the held loads load).
 */
static void prime_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    json_t *hdr = NULL, *fences, *table = NULL, *o;
    const void *buf = NULL;
    size_t len = 0, off = 0;
    int version;
    double stamp = 0, now = monotime ();
    double t0 = thread_cputime ();
    canopy_error_t error;

    if (!canopy_msg_has_flag (msg, CANOPY_MSGFLAG_RAW)
        || canopy_msg_get_payload (msg, &buf, &len) < 0
        || kvs_frame_header (buf, len, "prime", &hdr, &fences, &table, &off,
                             &error) < 0
        || json_array_size (table) != 0
        || !json_is_object ((o = json_array_get (fences, 0)))
        || json_unpack (o, "{s:i s?F}", "version", &version, "stamp", &stamp) < 0) {
        canopy_log (h, LOG_ERR, "malformed kvs.prime event");
        json_decref (hdr);
        /* events come in order: this was the one a hold waits for */
        prime_release (ctx);
        return;
    }
    if (stamp > 0 && now >= stamp)
        tstat_push (&ctx->timing.prime_lag, (now - stamp) * 1e6);
    /* every record is checked before any is delivered */
    struct prime_values pv = { .ctx = ctx, .msg = msg };
    if ((ctx->rank > 0 || ctx->shm)
        && blobrecs_foreach ((const char *)buf + off, len - off, prime_value, &pv,
                             &error) < 0)
        canopy_log (h, LOG_ERR, "kvs.prime: %s", error.text);
    if (pv.failed)
        canopy_log (h, LOG_ERR, "kvs.prime: some values could not be cached: %s",
                    strerror (ENOMEM));
    ctx->stats.primed_values += pv.cached;
    if (ctx->prime_version >= 0 && version >= ctx->prime_version)
        prime_release (ctx);
    tstat_push (&ctx->timing.prime_handle, (thread_cputime () - t0) * 1e6);
    json_decref (hdr);
    prefault_after (ctx, len);
}

/* A broker (and the subtree below it) was lost.  Rank 0 fails every
 * fence still open: fences do not record on which brokers their
 * participants are, and one with a participant down there would otherwise
 * wait forever, or complete without it.  Conservative: an unrelated open
 * fence fails too, and its participants may retry.
 */
static void lost_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    int rank;
    json_t *ranks = NULL;
    const char *reason = "lost";
    char buf[160];

    if (canopy_event_unpack (msg, NULL, "{s:i s?o s?s}", "rank", &rank,
                             "ranks", &ranks, "reason", &reason) < 0) {
        canopy_log (h, LOG_ERR, "malformed overlay.lost event");
        return;
    }
    if (ctx->rank != 0)
        return;
    size_t below = ranks && json_array_size (ranks) > 0 ? json_array_size (ranks) - 1 : 0;
    snprintf (buf, sizeof (buf), "broker rank %d was lost (%s), with %zu"
              " broker%s below it", rank, reason, below, below == 1 ? "" : "s");
    ctx->stats.lost_events++;
    fence_fail_all (ctx->fences, EHOSTUNREACH, buf);
}

/* Requests */

static void lookup_done (struct lookup *l, void *arg)
{
    struct kvs_ctx *ctx = the_ctx;
    canopy_msg_t *msg = arg;
    const void *data;
    size_t len;
    json_t *o;

    if (lookup_errnum (l))
        canopy_respond_error (ctx->h, msg, lookup_errnum (l), lookup_errstr (l));
    else if ((o = lookup_get_treeobj (l))) {
        char *s = json_fast_dumps (o, JSON_COMPACT);
        if (!s)
            canopy_respond_error (ctx->h, msg, ENOMEM, NULL);
        else
            canopy_respond (ctx->h, msg, s);
        free (s);
    }
    else {
        (void)lookup_get_value (l, &data, &len);
        canopy_respond_raw (ctx->h, msg, data, len);
    }
    canopy_msg_decref (msg);
    lookup_destroy (l);
}

static void lookup_cb (canopy_t *h, canopy_msg_handler_t *mh,
                       const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    char key[KVS_MAX_KEY + 1];
    const void *payload;
    size_t size;
    int flags = 0;
    struct lookup *l;

    ctx->stats.lookups++;
    int rc = -1;
    errno = EPROTO;     /* a raw payload or none at all */
    if (!canopy_msg_has_flag (msg, CANOPY_MSGFLAG_RAW)
        && canopy_msg_get_payload (msg, &payload, &size) == 0)
        rc = kvs_lookup_wire_decode (payload, size, key, sizeof (key), &flags);
    if (rc < 0) {
        if (errno == ENAMETOOLONG)
            canopy_respond_error (h, msg, ENAMETOOLONG, "key too long");
        else
            canopy_respond_error (h, msg, EPROTO, "malformed kvs.lookup");
        return;
    }
    if (!(l = lookup_create (ctx, key, flags, ctx->rootref, lookup_done,
                             canopy_msg_incref ((canopy_msg_t *)msg)))) {
        int e = errno;
        canopy_respond_error (h, msg, e, e == ENAMETOOLONG ? "key too long"
                                        : e == EINVAL ? "invalid key" : NULL);
        canopy_msg_decref ((canopy_msg_t *)msg);
        return;
    }
    lookup_run (l);
}

/* A write from a guest (kvs.guest-access=own admits them to the handler):
 * every key under its own namespace.  Returns true if it may go on;
 * otherwise it has been answered (EPERM).
 */
static bool guest_write_ok (struct kvs_ctx *ctx, const canopy_msg_t *msg,
                            bool commit)
{
    uint32_t rolemask = 0, userid = 0;
    const void *data;
    size_t len, off;
    json_t *hdr = NULL, *fences, *table;
    canopy_error_t error;

    (void)canopy_msg_get_rolemask (msg, &rolemask);
    if (rolemask & CANOPY_ROLE_OWNER)
        return true;
    (void)canopy_msg_get_userid (msg, &userid);
    error.text[0] = '\0';
    /* the header names every key and fence; the values need not be read
     * (fence_request decodes and checks the whole transaction)
     */
    if (canopy_msg_get_payload (msg, &data, &len) < 0
        || kvs_frame_header (data, len, "transaction", &hdr, &fences, &table,
                             &off, &error) < 0) {
        canopy_respond_error (ctx->h, msg, EPROTO, error.text[0] ? error.text : NULL);
        return false;
    }
    int rc = kvs_guest_check (userid, fences, !commit, &error);
    json_decref (hdr);
    if (rc < 0) {
        canopy_respond_error (ctx->h, msg, EPERM, error.text);
        return false;
    }
    return true;
}

static void commit_cb (canopy_t *h, canopy_msg_handler_t *mh,
                       const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    if (!guest_write_ok (ctx, msg, true))
        return;
    fence_request (ctx->fences, msg, true);
    applier_kick (ctx->applier);
}

static void fence_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    if (!guest_write_ok (ctx, msg, false))
        return;
    fence_request (ctx->fences, msg, false);
    applier_kick (ctx->applier);
}

static void relay_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    fence_relay (ctx->fences, msg);
    applier_kick (ctx->applier);
}

static void abort_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    fence_abort_request (ctx->fences, msg);
}

static void getroot_cb (canopy_t *h, canopy_msg_handler_t *mh,
                        const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    canopy_respond_pack (h, msg, "{s:i s:s}", "version", ctx->version,
                         "rootref", ctx->rootref);
}

static void wait_version_cb (canopy_t *h, canopy_msg_handler_t *mh,
                             const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    int version;
    struct version_waiter *vw;
    const char *sender = canopy_msg_route_last (msg);

    if (canopy_msg_unpack (msg, "{s:i}", "version", &version) < 0) {
        canopy_respond_error (h, msg, EPROTO, "malformed kvs.wait-version");
        return;
    }
    if (version <= ctx->version) {
        canopy_respond_pack (h, msg, "{s:i s:s}", "version", ctx->version,
                             "rootref", ctx->rootref);
        return;
    }
    if (!(vw = calloc (1, sizeof (*vw)))) {
        canopy_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    vw->msg = canopy_msg_incref ((canopy_msg_t *)msg);
    vw->version = version;
    snprintf (vw->sender, sizeof (vw->sender), "%s", sender ? sender : "");
    list_add_tail (&ctx->version_waiters, &vw->node);
    ctx->nversion_waiters++;
}

static void watch_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    watch_request (ctx->watches, msg);
}

static void unwatch_cb (canopy_t *h, canopy_msg_handler_t *mh,
                        const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    watch_unwatch (ctx->watches, msg);
}

/* kvs.fence-status {name}: rank 0's record of one fence (fence_status). */
static void fence_status_cb (canopy_t *h, canopy_msg_handler_t *mh,
                             const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    const char *name;
    json_t *o = NULL;

    if (canopy_msg_unpack (msg, "{s:s}", "name", &name) < 0) {
        canopy_respond_error (h, msg, EPROTO, "malformed kvs.fence-status");
        return;
    }
    if (fence_status (ctx->fences, name, &o) < 0) {
        int e = errno;
        char text[80];
        snprintf (text, sizeof (text), "no such fence (or finished over %d"
                  " seconds ago)", FENCE_FINISHED_KEEP);
        canopy_respond_error (h, msg, e,
                              e == ENOENT ? text
                              : e == EINVAL ? "kvs.fence-status is answered by rank 0"
                              : NULL);
        return;
    }
    if (canopy_respond_pack (h, msg, "o", o) < 0)   /* takes o */
        canopy_respond_error (h, msg, errno, NULL);
}

static void dropcache_cb (canopy_t *h, canopy_msg_handler_t *mh,
                          const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    int n = objcache_clear (ctx->cache);
    canopy_respond_pack (h, msg, "{s:i}", "dropped", n);
}

/* {count, mean, min, max, stddev}; a new reference (NULL on ENOMEM makes
 * the pack in stats_cb fail, which answers with an error).
 */
static json_t *tstat_json (const struct tstat *ts)
{
    return json_pack ("{s:f s:f s:f s:f s:f}", "count", ts->count,
                      "mean", tstat_mean (ts),
                      "min", ts->count > 0 ? ts->min : 0.,
                      "max", ts->count > 0 ? ts->max : 0.,
                      "stddev", tstat_stddev (ts));
}

static void stats_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    struct objcache_stats cs;
    struct fence_stats fs;
    struct direct_server_stats ds;

    direct_server_get_stats (ctx->direct, &ds);
    objcache_stats (ctx->cache, &cs);
    fence_stats (ctx->fences, &fs);
    json_t *ck = ctx->checkpt ? checkpointer_stats (ctx->checkpt) : json_null ();
    json_t *shapes = fence_shapes_json (ctx->fences);
    if (!shapes) {
        json_decref (ck);
        canopy_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    int pending = ctx->nlookups + fs.waiters + ctx->nversion_waiters
                  + (applier_busy (ctx->applier) ? 1 : 0);
    canopy_respond_pack (h, msg,
        "{s:i s:i s:s s:{s:I s:I s:I s:I s:I s:I s:I s:I} s:{s:i s:i s:i} s:i s:i s:i s:i"
        " s:{s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I}"
        " s:{s:o s:o s:o s:o s:o s:o s:o s:o s:o} s:o s:o s:{s:b s:I s:I s:I s:I} s:o}",
        "rank", (int)ctx->rank,
        "version", ctx->version,
        "rootref", ctx->rootref,
        "cache", "count", (json_int_t)cs.count, "bytes", (json_int_t)cs.bytes,
                 "pending", (json_int_t)cs.pending, "waiters", (json_int_t)cs.waiters,
                 "encoded", (json_int_t)cs.encoded,
                 "scans", (json_int_t)cs.scans, "indexed", (json_int_t)cs.indexed,
                 "decodes", (json_int_t)cs.decodes,
        "fences", "open", fs.open, "waiters", fs.waiters, "ready", fs.ready,
        "lookups", ctx->nlookups,
        "watchers", watch_count (ctx->watches),
        "version-waiters", ctx->nversion_waiters,
        "pending-requests", pending,
        "counters", "lookups", (json_int_t)ctx->stats.lookups,
                    "commits", (json_int_t)ctx->stats.commits,
                    "fences", (json_int_t)ctx->stats.fences,
                    "setroots", (json_int_t)ctx->stats.setroots,
                    "loads", (json_int_t)ctx->stats.loads,
                    "load-bytes", (json_int_t)ctx->stats.load_bytes,
                    "relays-sent", (json_int_t)ctx->stats.relays_sent,
                    "relays-late", (json_int_t)ctx->stats.relays_late,
                    "relays-received", (json_int_t)ctx->stats.relays_received,
                    "applies", (json_int_t)ctx->stats.applies,
                    "applied-txns", (json_int_t)ctx->stats.apply_txns,
                    "drafts-used", (json_int_t)ctx->stats.drafts_used,
                    "drafted-ops", (json_int_t)ctx->stats.drafted_ops,
                    "relay-bytes", (json_int_t)ctx->stats.relay_bytes,
                    "relay-holds", (json_int_t)ctx->stats.relay_holds,
                    "relay-hold-expired", (json_int_t)ctx->stats.relay_hold_expired,
                    "primed", (json_int_t)ctx->stats.primed,
                    "primed-values", (json_int_t)ctx->stats.primed_values,
                    "held-loads", (json_int_t)ctx->stats.held_loads,
                    "held-hits", (json_int_t)ctx->stats.held_hits,
                    "lost-events", (json_int_t)ctx->stats.lost_events,
                    "prefaults", (json_int_t)ctx->stats.prefaults,
        "timing", "relay-decode", tstat_json (&ctx->timing.relay_decode),
                  "relay-encode", tstat_json (&ctx->timing.relay_encode),
                  "fence-wait", tstat_json (&ctx->timing.fence_wait),
                  "apply", tstat_json (&ctx->timing.apply),
                  "apply-ops", tstat_json (&ctx->timing.apply_ops),
                  "setroot-lag", tstat_json (&ctx->timing.setroot_lag),
                  "prime-lag", tstat_json (&ctx->timing.prime_lag),
                  "setroot-handle", tstat_json (&ctx->timing.setroot_handle),
                  "prime-handle", tstat_json (&ctx->timing.prime_handle),
        "checkpoint", ck ? ck : json_null (),
        "shm", shmpub_stats (ctx->shm),
        "direct", "listening", ctx->direct != NULL,
                  "connections", (json_int_t)ds.connections,
                  "accepted", (json_int_t)ds.accepted,
                  "requests", (json_int_t)ds.requests,
                  "responses", (json_int_t)ds.responses,
        "relay-shapes", shapes);
}

/* Serve local clients on the KVS's own socket (direct.h), beside the
 * broker's.  Without it (CANOPY_DIRECT=0, a path too long, a bind error)
 * clients reach the KVS through the broker as before.
 */
static void direct_start (struct kvs_ctx *ctx)
{
    const char *uri = canopy_attr_get (ctx->h, "local-uri");
    char path[108];
    canopy_error_t error;

    if (!direct_enabled () || !uri || strncmp (uri, "local://", 8) != 0)
        return;
    if (direct_path (path, sizeof (path), uri + 8, "kvs") < 0) {
        canopy_log (ctx->h, LOG_INFO, "no direct channel: socket path too long");
        return;
    }
    if (!(ctx->direct = direct_server_create (ctx->h, path, "kvs", ctx->rank, &error)))
        canopy_log (ctx->h, LOG_WARNING, "no direct channel: %s", error.text);
}

/* The shared read cache (shmpub.h), beside the direct channel.  Without
 * it (kvs.shm-size=0, no local socket, an error: logged) every get is a
 * request.
 */
static void shm_start (struct kvs_ctx *ctx)
{
    const char *uri = canopy_attr_get (ctx->h, "local-uri");
    canopy_error_t error;

    if (ctx->shm_size == 0 || !uri || strncmp (uri, "local://", 8) != 0)
        return;
    if (!(ctx->shm = shmpub_create (ctx->h, uri + 8, ctx->shm_size,
                                    ctx->limits.guest_access >= KVS_GUEST_READ,
                                    &error))) {
        canopy_log (ctx->h, LOG_WARNING, "no shared read cache: %s", error.text);
        return;
    }
    shmpub_root (ctx->shm, ctx->version, ctx->rootref);
}

static void disconnect_cb (canopy_t *h, canopy_msg_handler_t *mh,
                           const canopy_msg_t *msg, void *arg)
{
    struct kvs_ctx *ctx = arg;
    const char *sender = canopy_msg_route_last (msg);
    struct list_node *pos, *tmp;

    if (!sender)
        return;
    fence_disconnect (ctx->fences, sender);
    watch_disconnect (ctx->watches, sender);
    list_for_each_safe (pos, tmp, &ctx->version_waiters) {
        struct version_waiter *vw = list_entry (pos, struct version_waiter, node);
        if (!strcmp (vw->sender, sender)) {
            list_del (&vw->node);
            canopy_msg_decref (vw->msg);
            free (vw);
            ctx->nversion_waiters--;
        }
    }
}

static void timer_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct kvs_ctx *ctx = arg;
    double now = monotime ();
    objcache_expire (ctx->cache, now);
    fence_timer (ctx->fences, now);
}

static const struct canopy_msg_handler_spec htab[] = {
    { CANOPY_MSGTYPE_REQUEST, "kvs.lookup", lookup_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.commit", commit_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.fence", fence_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.relay", relay_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.relay-late", relay_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.fence-abort", abort_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.fence-status", fence_status_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.getroot", getroot_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.wait-version", wait_version_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.watch", watch_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.unwatch", unwatch_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.dropcache", dropcache_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "kvs.stats", stats_cb, CANOPY_ROLE_USER },
    { CANOPY_MSGTYPE_REQUEST, "kvs.disconnect", disconnect_cb, CANOPY_ROLE_ALL },
    { CANOPY_MSGTYPE_EVENT, "kvs.setroot", setroot_cb, 0 },
    { CANOPY_MSGTYPE_EVENT, "kvs.prime", prime_cb, 0 },
    { CANOPY_MSGTYPE_EVENT, "overlay.lost", lost_cb, 0 },
    CANOPY_MSGHANDLER_TABLE_END,
};

/* Guests (access.h): admit them to the handlers their access allows.
 * handlers[] follows htab[].
 */
static void guest_admit (struct kvs_ctx *ctx, canopy_msg_handler_t **handlers)
{
    static const struct {
        const char *topic;
        enum kvs_guest_access needs;
    } open[] = {
        { "kvs.lookup", KVS_GUEST_READ }, { "kvs.getroot", KVS_GUEST_READ },
        { "kvs.wait-version", KVS_GUEST_READ }, { "kvs.watch", KVS_GUEST_READ },
        { "kvs.unwatch", KVS_GUEST_READ },
        { "kvs.commit", KVS_GUEST_OWN }, { "kvs.fence", KVS_GUEST_OWN },
    };

    for (int i = 0; htab[i].topic_glob; i++) {
        for (size_t j = 0; j < sizeof (open) / sizeof (open[0]); j++) {
            if (ctx->limits.guest_access >= open[j].needs
                && !strcmp (htab[i].topic_glob, open[j].topic))
                canopy_msg_handler_allow_rolemask (handlers[i], CANOPY_ROLE_USER);
        }
    }
}

/* Configuration */

static int set_option (void *arg, const char *name, const char *value,
                       canopy_error_t *error)
{
    return kvs_option_set (arg, name, value, error);
}

static int configure (struct kvs_ctx *ctx, int argc, char **argv)
{
    const char *const *names = kvs_option_names;
    const char *keep = canopy_attr_get (ctx->h, "broker.heap-keep");
    canopy_error_t error;
    /* no memory is touched ahead if the broker gives it back (heap.h) */
    ctx->heap_keep = keep ? strtoull (keep, NULL, 10) : 0;
    ctx->limits.max_nprocs = 1048576;
    ctx->limits.max_pending_per_user = 1024;
    ctx->limits.max_txn_ops = 1000000;
    ctx->limits.fence_timeout = 0;
    /* a hold ends when the expected participants are in; this bounds what
     * a wrong expectation costs (fence.c)
     */
    ctx->limits.relay_hold = 0.01;
    ctx->limits.hdir_threshold = 128;
    ctx->limits.prime_max = 16384; /* a full plain directory (hdir-threshold
                                    * entries, ~5-14 KiB) or hdir bucket */
    /* ... which holds only for small entries: 128 directory references
     * are ~14 KiB, and KAP's namespace directory ("kap", one entry per
     * run) went over prime-max at its 72nd entry: from then on no
     * setroot carried it, and every consumer's first get of a run
     * faulted it in (0.5-0.8 ms against 5-40 us from the shared read
     * cache).  So a plain directory over prime-max bytes is hashed too.
     * Both were 8 KiB until 2026-12-07, which hashed KAP's round
     * directory of 128 value references (~14 KiB): one header and 16
     * buckets to build, hash, store and carry in every setroot, where
     * one plain directory does.  At 16 KiB, 128 KAP ranks on 64 brokers
     * (512 B redundant values, 4 alternated rounds of 6 runs a side):
     * rank 0's apply 404 -> 305 us (median), the fence's KVS part 1.48
     * -> 1.43 ms, gets 7.4 -> 7.7 ms; with the last rank 30 ms late and
     * k=8, KVS part 1.62 -> 1.27 ms.
     */
    ctx->limits.hdir_bytes = 16384;
    /* the hdir of a KAP round of up to ~8 000 small values; at 2 048 to
     * 6 144 participants 64 KiB left most of its buckets to be faulted
     * in: one-directory gets 3.7-8x slower; 1 MiB made 1 KiB fences at
     * 6 144 participants ~10% slower for no faster gets
     */
    ctx->limits.prime_budget = 512 * 1024;
    ctx->limits.prime_values = 8 * 1024 * 1024;    /* for the instance */
    ctx->limits.prime_delay = 0.002;
    ctx->limits.relay_max = CANOPY_MSG_SIZE_MAX;
    ctx->cache_max = 128 * 1024 * 1024;
    ctx->cache_age = 60;
    ctx->checkpoint_period = 10;
    /* room for the objects of a dozen fences of 512 1 KiB values; pages
     * are used only as they are written
     */
    ctx->shm_size = 8 * 1024 * 1024;
    ctx->limits.guest_access = KVS_GUEST_NONE;
    /* an attribute only: what guests may do is the instance's business */
    const char *ga = canopy_attr_get (ctx->h, "kvs.guest-access");
    enum kvs_guest_access access;
    if (ga) {
        if (kvs_guest_access_parse (ga, &access) < 0) {
            canopy_log (ctx->h, LOG_ERR, "bad attribute kvs.guest-access=%s"
                        " (expected none, read or own)", ga);
            errno = EINVAL;
            return -1;
        }
        ctx->limits.guest_access = access;
    }
    if (modopt_apply (ctx->h, canopy_attr_get, "kvs", names, argc, argv,
                      set_option, ctx, &error) < 0) {
        canopy_log (ctx->h, LOG_ERR, "%s", error.text);
        errno = EINVAL;
        return -1;
    }
    if (ctx->shm_size != 0
        && (ctx->shm_size < KVS_SHM_MIN_SIZE || ctx->shm_size >= ((size_t)1 << 40))) {
        canopy_log (ctx->h, LOG_ERR, "kvs: option shm-size=%zu: expected 0 (off)"
                    " or from %d to 2^40-1 bytes", ctx->shm_size, KVS_SHM_MIN_SIZE);
        errno = EINVAL;
        return -1;
    }
    return 0;
}

/* Start-up: rank 0 restores its newest checkpoint or makes an empty root;
 * the others ask their parent.
 */
static int root_init (struct kvs_ctx *ctx)
{
    canopy_future_t *f;
    int version;
    const char *rootref;

    if (ctx->rank == 0) {
        int rc = checkpoint_restore (ctx->checkpt);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
        json_t *dir = treeobj_create_dir ();
        char ref[BLOBREF_MAX];
        size_t len;
        char *enc = dir ? treeobj_encode_ref (dir, &len, ref, sizeof (ref)) : NULL;
        if (!enc) {
            json_decref (dir);
            return -1;
        }
        f = canopy_rpc_raw (ctx->h, "content.store", enc, len, CANOPY_NODEID_ANY, 0);
        free (enc);
        if (!f || canopy_future_get (f, NULL) < 0) {
            canopy_log (ctx->h, LOG_ERR, "cannot store the initial root: %s",
                        f ? canopy_future_error_string (f) : strerror (errno));
            canopy_future_destroy (f);
            json_decref (dir);
            return -1;
        }
        canopy_future_destroy (f);
        (void)objcache_put_dir (ctx->cache, ref, dir, len);
        json_decref (dir);
        ctx->version = 0;
        snprintf (ctx->rootref, sizeof (ctx->rootref), "%s", ref);
        return 0;
    }
    if (!(f = canopy_rpc (ctx->h, "kvs.getroot", "{}", CANOPY_NODEID_UPSTREAM, 0))
        || canopy_rpc_get_unpack (f, "{s:i s:s}", "version", &version,
                                  "rootref", &rootref) < 0) {
        canopy_log (ctx->h, LOG_ERR, "cannot get the root from upstream: %s",
                    f ? canopy_future_error_string (f) : strerror (errno));
        canopy_future_destroy (f);
        return -1;
    }
    if (version > ctx->version || !ctx->rootref[0]) {
        ctx->version = version;
        snprintf (ctx->rootref, sizeof (ctx->rootref), "%s", rootref);
    }
    canopy_future_destroy (f);
    return 0;
}

int mod_main (canopy_t *h, int argc, char **argv)
{
    struct kvs_ctx ctx;
    canopy_msg_handler_t **handlers = NULL;
    canopy_watcher_t *timer = NULL;
    int rc = -1;

    memset (&ctx, 0, sizeof (ctx));
    ctx.h = h;
    ctx.version = -1;
    ctx.prime_version = -1;
    list_init (&ctx.version_waiters);
    the_ctx = &ctx;
    randombytes_buf (&ctx.nonce, sizeof (ctx.nonce));
    tstat_init (&ctx.timing.relay_decode);
    tstat_init (&ctx.timing.relay_encode);
    tstat_init (&ctx.timing.fence_wait);
    tstat_init (&ctx.timing.apply);
    tstat_init (&ctx.timing.apply_ops);
    tstat_init (&ctx.timing.setroot_lag);
    tstat_init (&ctx.timing.prime_lag);
    tstat_init (&ctx.timing.setroot_handle);
    tstat_init (&ctx.timing.prime_handle);
    if (!(ctx.r = canopy_get_reactor (h))
        || canopy_get_rank (h, &ctx.rank) < 0
        || canopy_get_size (h, &ctx.size) < 0
        || configure (&ctx, argc, argv) < 0
        || !(ctx.cache = objcache_create (ctx.cache_max, ctx.cache_age))
        || !(ctx.loads = load_table_create (&ctx))
        || !(ctx.fences = fence_table_create (&ctx))
        || !(ctx.watches = watch_table_create (&ctx))
        || !(ctx.prime_timer = canopy_timer_watcher_create (ctx.r, prime_wait, 0,
                                                           prime_timer_cb, &ctx))
        || !(ctx.prefault_w = canopy_timer_watcher_create (ctx.r, PREFAULT_DELAY, 0,
                                                           prefault_cb, &ctx))
        || (ctx.rank == 0 && !(ctx.applier = applier_create (&ctx)))
        || (ctx.rank == 0 && !(ctx.checkpt = checkpointer_create (&ctx,
                                                              ctx.checkpoint_period))))
        goto done;
    if (canopy_event_subscribe (h, "kvs.setroot") < 0
        || canopy_event_subscribe (h, "kvs.prime") < 0
        || canopy_event_subscribe (h, "overlay.lost") < 0) {
        canopy_log_error (h, "subscribe to kvs.setroot, kvs.prime, overlay.lost");
        goto done;
    }
    if (root_init (&ctx) < 0)
        goto done;
    if (canopy_msg_handler_addvec (h, htab, &ctx, &handlers) < 0)
        goto done;
    guest_admit (&ctx, handlers);
    shm_start (&ctx);
    direct_start (&ctx);
    /* rank 0 times fences out and expires finished names (1 s steps);
     * elsewhere the timer only ages the cache, so an idle broker wakes
     * rarely
     */
    double period = ctx.rank == 0 ? 1.0 : 10.0;
    if (!(timer = canopy_timer_watcher_create (ctx.r, period, period, timer_cb, &ctx)))
        goto done;
    canopy_watcher_unref (timer);
    canopy_watcher_start (timer);
    rc = canopy_reactor_run (ctx.r, 0);
done:
    canopy_watcher_destroy (timer);
    /* readers stop using the cache; their gets go to the module, which
     * answers what is left below
     */
    shmpub_destroy (ctx.shm);
    ctx.shm = NULL;
    canopy_msg_handler_delvec (handlers);
    while (!list_empty (&ctx.version_waiters)) {
        struct version_waiter *vw = list_entry (ctx.version_waiters.next,
                                                struct version_waiter, node);
        list_del (&vw->node);
        canopy_respond_error (h, vw->msg, ENOSYS, "KVS module unloading");
        canopy_msg_decref (vw->msg);
        free (vw);
    }
    /* lookups (and a round, and watches) waiting for a load are answered
     * now, while everything they belong to is still there
     */
    ctx.unloading = true;
    load_table_fail_all (ctx.loads, ENOSYS);    /* held ones too */
    canopy_watcher_destroy (ctx.prime_timer);
    ctx.prime_timer = NULL;
    canopy_watcher_destroy (ctx.prefault_w);
    ctx.prefault_w = NULL;
    if (rc == 0)
        checkpointer_final (ctx.checkpt);   /* clean unload only */
    applier_destroy (ctx.applier);
    checkpointer_destroy (ctx.checkpt);
    watch_table_destroy (ctx.watches);
    fence_table_destroy (ctx.fences);
    load_table_destroy (ctx.loads);
    direct_server_destroy (ctx.direct);     /* after the last answers */
    objcache_destroy (ctx.cache);
    the_ctx = NULL;
    return rc;
}
