/* fence.c - fence aggregation (fence.h).
 *
 * Design notes:
 * - An entry's 'count' is, on rank 0, the participants joined so far; on
 *   other ranks, the participants merged here and not yet forwarded.
 * - Flushing happens from a prepare watcher, i.e. after the reactor has
 *   handled everything that arrived in one wake-up, so contributions that
 *   arrive together leave together (the merge on the way up).
 * - Only the blobs referenced by a fence's operations are merged into it,
 *   so a batch carrying several fences does not mix their blobs.
 * - Errors always travel to rank 0 (as error contributions) and come back
 *   in the setroot event, so every participant sees the same outcome.
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
#include "src/common/libkvs/treeobj.h"
#include "fence.h"

#define FINISHED_KEEP 300.0     /* seconds a finished name is remembered */

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
    json_t *ops;
    blobtab_t *blobs;
    struct waiter *waiters;
    int nwaiters;
    bool dirty;                 /* rank > 0: something to forward */
    bool failed;                /* decided (error pending publication) */
    int errnum;                 /* rank > 0: error to forward */
    char errstr[160];
    double created;
    bool ready;
    struct list_node ready_node;
};

struct finished {
    int errnum;
    char errstr[160];
    double when;
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
};

static void fence_free (void *arg)
{
    struct fence *f = arg;
    if (f) {
        for (int i = 0; i < f->nwaiters; i++)
            canopy_msg_decref (f->waiters[i].msg);
        free (f->waiters);
        json_decref (f->ops);
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
    if (!(f->name = strdup (name)) || !(f->ops = json_array ())
        || !(f->blobs = blobtab_create ()))
        goto nomem;
    f->nprocs = nprocs;
    f->flags = flags;
    f->userid = userid;
    f->created = monotime ();
    if (hashmap_insert (ft->fences, f->name, f) < 0)
        goto error;
    if (ft->ctx->rank == 0)
        user_count (ft, userid, 1);
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
 * the current version; the names/errors tell who is done.
 */
static void publish_outcome (struct fence_table *ft, const char *name, int errnum,
                             const char *errstr)
{
    struct kvs_ctx *ctx = ft->ctx;
    json_t *names = json_array ();
    json_t *errors = json_array ();
    canopy_future_t *f;

    if (!names || !errors)
        goto done;
    if (errnum)
        json_array_append_new (errors, json_pack ("{s:s s:i s:s}", "name", name,
                                                  "errnum", errnum,
                                                  "errstr", errstr ? errstr : ""));
    else
        json_array_append_new (names, json_string (name));
    f = canopy_event_publish_pack (ctx->h, "kvs.setroot", 0, "{s:i s:s s:O s:O}",
                                   "version", ctx->version, "rootref", ctx->rootref,
                                   "names", names, "errors", errors);
    if (!f)
        canopy_log_error (ctx->h, "publish kvs.setroot");
    canopy_future_destroy (f);
done:
    json_decref (names);
    json_decref (errors);
}

static void remember (struct fence_table *ft, const char *name, int errnum,
                      const char *errstr)
{
    struct finished *fin = calloc (1, sizeof (*fin));
    if (!fin)
        return;
    fin->errnum = errnum;
    snprintf (fin->errstr, sizeof (fin->errstr), "%s", errstr ? errstr : "");
    fin->when = monotime ();
    (void)hashmap_update (ft->finished, name, fin);
}

void fence_finished (struct fence_table *ft, const char *name, int errnum,
                     const char *errstr)
{
    struct fence *f = hashmap_lookup (ft->fences, name);
    remember (ft, name, errnum, errstr);
    if (f && errnum)
        f->failed = true;
    /* rank 0 keeps the entry until its own setroot event arrives, so its
     * local waiters are answered like everyone else's
     */
    if (errnum)
        publish_outcome (ft, name, errnum, errstr);
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
        json_decref (f->ops);
        f->ops = json_array ();
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

/* Merge the blobs referenced by ops into the fence. */
static int merge_blobs (struct fence *f, json_t *ops, const blobtab_t *blobs)
{
    size_t i;
    json_t *op;
    json_array_foreach (ops, i, op) {
        json_t *obj = json_array_get (op, 1);
        if (!treeobj_is_valref (obj))
            continue;
        int n = treeobj_blobref_count (obj);
        for (int j = 0; j < n; j++) {
            const char *ref = treeobj_blobref_at (obj, j);
            const void *data;
            size_t len;
            if (blobtab_get (blobs, ref, &data, &len) < 0)
                return -1;
            if (blobtab_add (f->blobs, ref, data, len, NULL, 0) < 0)
                return -1;
        }
    }
    return 0;
}

static void check_ready (struct fence_table *ft, struct fence *f)
{
    if (ft->ctx->rank != 0 || f->failed || f->ready || f->count < f->nprocs)
        return;
    f->ready = true;
    list_add_tail (&ft->ready, &f->ready_node);
    ft->nready++;
}

/* Merge one contribution.  'waiter' is the local request (or NULL for a
 * relay).  Returns the fence (which may have failed), or NULL if the
 * contribution was answered/handled otherwise.
 */
static void merge (struct fence_table *ft, json_t *c, const blobtab_t *blobs,
                   const canopy_msg_t *waiter, uint32_t userid)
{
    struct kvs_ctx *ctx = ft->ctx;
    const char *name;
    int nprocs, flags, count;
    json_t *ops = NULL;
    int errnum = 0;
    const char *errstr = NULL;
    json_int_t cuserid = -1;    /* a uid_t: int would truncate 2^31 and up */
    struct fence *f;
    struct finished *fin;

    if (json_unpack (c, "{s:s s:i s:i s:i s?o s?i s?s s?I}", "name", &name,
                     "nprocs", &nprocs, "flags", &flags, "count", &count,
                     "ops", &ops, "errnum", &errnum, "errstr", &errstr,
                     "userid", &cuserid) < 0)
        return;
    if (cuserid >= 0)
        userid = cuserid;
    if (ctx->rank == 0 && (fin = hashmap_lookup (ft->finished, name))
        && !hashmap_lookup (ft->fences, name)) {
        /* late joiner of a finished fence: same error, or "complete" */
        if (fin->errnum)
            publish_outcome (ft, name, fin->errnum, fin->errstr);
        else
            publish_outcome (ft, name, EINVAL, "fence already complete: too many participants");
        /* keep the waiter so the event answers it */
        if (waiter) {
            if (!(f = fence_create (ft, name, nprocs, flags, userid)))
                return;
            f->failed = true;
            goto add_waiter;
        }
        return;
    }
    if (!(f = hashmap_lookup (ft->fences, name))) {
        if (ctx->rank == 0 && !errnum
            && user_pending (ft, userid) >= ctx->limits.max_pending_per_user) {
            if (!(f = fence_create (ft, name, nprocs, flags, userid)))
                return;
            fail (ft, f, name, EAGAIN, "too many open fences for this user");
            goto add_waiter;
        }
        if (!(f = fence_create (ft, name, nprocs, flags, userid)))
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
    if (ops && json_array_size (ops) > 0) {
        if (json_array_size (f->ops) + json_array_size (ops) > 10000000
            || merge_blobs (f, ops, blobs) < 0
            || json_array_extend (f->ops, ops) < 0) {
            fail (ft, f, name, E2BIG, "transaction too large");
            goto add_waiter;
        }
    }
    f->count += count;
    if (ctx->rank == 0)
        check_ready (ft, f);
    else
        mark_dirty (ft, f);
add_waiter:
    if (waiter) {
        struct waiter *v = realloc (f->waiters, (f->nwaiters + 1) * sizeof (*v));
        const char *sender = canopy_msg_route_last (waiter);
        if (!v) {
            canopy_respond_error (ctx->h, waiter, ENOMEM, NULL);
            return;
        }
        f->waiters = v;
        f->waiters[f->nwaiters].msg = canopy_msg_incref ((canopy_msg_t *)waiter);
        snprintf (f->waiters[f->nwaiters].sender,
                  sizeof (f->waiters[f->nwaiters].sender), "%s", sender ? sender : "");
        f->nwaiters++;
    }
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

    (void)canopy_msg_get_userid (msg, &userid);
    if (canopy_msg_get_payload (msg, &data, &len) < 0
        || kvs_wire_decode (data, len, true, &fences, &blobs, &error) < 0) {
        canopy_respond_error (ctx->h, msg, EPROTO, error.text);
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
        if (kvs_wire_check_op (op, blobs, &error) < 0) {
            canopy_respond_error (ctx->h, msg, errno, error.text);
            goto done;
        }
    }
    int nprocs = json_integer_value (json_object_get (c, "nprocs"));
    if (nprocs > ctx->limits.max_nprocs) {
        canopy_respond_error (ctx->h, msg, EINVAL, "fence nprocs is too large");
        goto done;
    }
    if (commit) {
        char name[64];
        /* unique across restarts of this broker too */
        snprintf (name, sizeof (name), "commit.%u.%llx.%llu", ctx->rank,
                  (unsigned long long)ctx->nonce,
                  (unsigned long long)++ctx->commit_seq);
        json_object_set_new (c, "name", json_string (name));
        json_object_set_new (c, "nprocs", json_integer (1));
        ctx->stats.commits++;
    }
    else
        ctx->stats.fences++;
    json_object_set_new (c, "userid", json_integer (userid));
    merge (ft, c, blobs, msg, userid);
done:
    json_decref (fences);
    blobtab_destroy (blobs);
}

void fence_relay (struct fence_table *ft, const canopy_msg_t *msg)
{
    struct kvs_ctx *ctx = ft->ctx;
    const void *data;
    size_t len;
    json_t *fences = NULL, *c;
    blobtab_t *blobs = NULL;
    canopy_error_t error;
    size_t i;

    ctx->stats.relays_received++;
    if (canopy_msg_get_payload (msg, &data, &len) < 0
        || kvs_wire_decode (data, len, false, &fences, &blobs, &error) < 0) {
        canopy_log (ctx->h, LOG_ERR, "dropped malformed kvs.relay: %s", error.text);
        return;
    }
    json_array_foreach (fences, i, c)
        merge (ft, c, blobs, NULL, 0);
    json_decref (fences);
    blobtab_destroy (blobs);
}

/* rank > 0: send what was merged this pass upstream, as one message. */
static void flush (struct fence_table *ft)
{
    struct kvs_ctx *ctx = ft->ctx;
    json_t *batch = json_array ();
    blobtab_t *blobs = blobtab_create ();
    void *val;
    void *buf = NULL;
    size_t len;

    if (!batch || !blobs)
        goto done;
    for (const char *k = hashmap_first (ft->fences, &val); k;
         k = hashmap_next (ft->fences, &val)) {
        struct fence *f = val;
        json_t *c;
        if (!f->dirty)
            continue;
        if (f->errnum)
            c = json_pack ("{s:s s:i s:i s:i s:i s:s s:I}", "name", f->name,
                           "nprocs", f->nprocs, "flags", f->flags, "count", 0,
                           "errnum", f->errnum, "errstr", f->errstr,
                           "userid", (json_int_t)f->userid);
        else
            c = json_pack ("{s:s s:i s:i s:i s:O s:I}", "name", f->name,
                           "nprocs", f->nprocs, "flags", f->flags, "count", f->count,
                           "ops", f->ops, "userid", (json_int_t)f->userid);
        if (!c || json_array_append_new (batch, c) < 0
            || blobtab_merge (blobs, f->blobs) < 0)
            goto done;
    }
    if (kvs_wire_encode (batch, blobs, &buf, &len) < 0) {
        canopy_log_error (ctx->h, "kvs.relay encode");
        goto done;
    }
    canopy_future_t *fut = canopy_rpc_raw (ctx->h, "kvs.relay", buf, len,
                                           CANOPY_NODEID_UPSTREAM, CANOPY_RPC_NORESPONSE);
    if (!fut)
        canopy_log_error (ctx->h, "kvs.relay send");
    canopy_future_destroy (fut);
    ctx->stats.relays_sent++;
    /* reset what was sent */
    for (const char *k = hashmap_first (ft->fences, &val); k;
         k = hashmap_next (ft->fences, &val)) {
        struct fence *f = val;
        if (!f->dirty)
            continue;
        f->dirty = false;
        f->count = 0;
        json_array_clear (f->ops);
        blobtab_destroy (f->blobs);
        f->blobs = blobtab_create ();
        if (f->errnum)
            f->failed = true;
    }
    ft->ndirty = 0;
done:
    free (buf);
    json_decref (batch);
    blobtab_destroy (blobs);
}

static void prep_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct fence_table *ft = arg;
    if (ft->ctx->rank > 0 && ft->ndirty > 0)
        flush (ft);
    canopy_watcher_stop (w);
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
        struct ready_fence *rf = calloc (1, sizeof (*rf));
        if (!rf || !(rf->name = strdup (f->name))) {
            free (rf);
            break;
        }
        rf->flags = f->flags;
        rf->ops = f->ops;
        rf->blobs = f->blobs;
        f->ops = json_array ();
        f->blobs = blobtab_create ();
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

bool fence_have_ready (struct fence_table *ft)
{
    return ft->nready > 0;
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
    for (int i = 0; i < f->nwaiters; i++) {
        if (errnum)
            canopy_respond_error (ft->ctx->h, f->waiters[i].msg, errnum, errstr);
        else
            canopy_respond_pack (ft->ctx->h, f->waiters[i].msg, "{s:i s:s}",
                                 "version", version, "rootref", rootref);
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
    for (const char *k = hashmap_first (ft->finished, &val); k;
         k = hashmap_next (ft->finished, &val)) {
        struct finished *fin = val;
        if (now - fin->when > FINISHED_KEEP) {
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
    if (!(ft->fences = hashmap_create (fence_free))
        || !(ft->finished = hashmap_create (finished_free))
        || !(ft->per_user = hashmap_create (NULL))
        || !(ft->prep = canopy_prepare_watcher_create (ctx->r, prep_cb, ft))) {
        fence_table_destroy (ft);
        return NULL;
    }
    canopy_watcher_unref (ft->prep);
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
        canopy_watcher_destroy (ft->prep);
        hashmap_destroy (ft->fences);
        hashmap_destroy (ft->finished);
        hashmap_destroy (ft->per_user);
        free (ft);
        errno = saved_errno;
    }
}
