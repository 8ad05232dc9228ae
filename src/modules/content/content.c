/* content.c - the content service: blobs by hash on every broker.
 *
 *   content.load        raw blobref -> raw blob (ENOENT if unknown)
 *   content.load-batch  raw blobrefs, one per line -> raw blob records
 *                       (blobrecs.h) of those found (loadbatch.h)
 *   content.store       raw blob -> {"ref"}
 *   content.store-batch raw [u32 len, bytes]... -> {"refs": [...]}
 *   content.store-local raw blob records [ref, u32 len, bytes]... (blobrecs.h;
 *                       local modules only:
 *                       the sender vouches for the refs; no re-hashing)
 *   content.flush       answer once every blob here is safe upstream
 *                       (rank 0: durable in the backing store)
 *   content.checkpoint-put {rootref, version, timestamp}  rank 0: once
 *                       every blob stored before it is in the backing
 *                       store, write a durable KVS checkpoint
 *   content.checkpoint-get  rank 0: {checkpoints: [...]} newest first
 *   content.stats       counters (rank 0: and the write-back's)
 *   content.dropcache   drop clean entries
 *
 * Design notes:
 * - A miss on a rank > 0 is loaded from the parent's content service (a
 *   request for our own service goes upstream), once per blob however
 *   many requests wait; loaded data is checked against its hash.  Misses
 *   go up in content.load-batch requests, at most LOAD_WINDOW in flight
 *   (loadbatch.h): a lone miss at once, misses that come meanwhile
 *   together (a child's batch is queued whole before any of it goes).
 *   A blob the parent leaves out of its answer, or that a failed batch
 *   did not bring, is asked for alone (content.load), whose answer
 *   carries its own error.  A blob nobody has is thus asked for twice at
 *   each hop (a batch, then alone): unknown blobs are the rare case.
 * - A content.load-batch request waits (a batch_op parked on each entry
 *   it misses) until every blob it names is here or has failed, then is
 *   answered with those that are.
 * - Stores on ranks > 0 write through: the request is answered once the
 *   parent has the blob, so afterwards any rank can load it.
 * - Rank 0 writes back to a backing store module (backing.c; the broker
 *   attribute content.backing-module names it, default content-sqlite,
 *   "none" for no backing store): a store is answered at once, the blob
 *   stays dirty until the backing store has it, and a miss is loaded from
 *   there (checked against its hash like a parent's answer).  Without a
 *   backing store every blob stays in memory.
 * - Clean entries expire LRU past the byte limit (module argument
 *   cache-max=BYTES, default 64 MiB), checked after stores and by a timer:
 *   every second on rank 0, every 10 s elsewhere.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <canopy/canopy.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libkvs/blobrecs.h"
#include "blobcache.h"
#include "backing.h"
#include "loadbatch.h"

CANOPY_MOD_NAME ("content");

struct content_ctx {
    canopy_t *h;
    uint32_t rank;
    blobcache_t *cache;
    struct backing *backing;        /* rank 0, or NULL */
    canopy_watcher_t *purge_timer;
    uint64_t loads;
    uint64_t load_misses;
    uint64_t stores;
    uint64_t upstream_loads;
    uint64_t upstream_batches;      /* content.load-batch requests sent */
    uint64_t batch_loads;           /* ... and received from children */
    uint64_t upstream_stores;
    loadq_t *loadq;                 /* ranks > 0: misses for the parent */
    int flush_pending;
    canopy_msg_t **flushers;
    int nflushers;
};

static bool is_topic (const canopy_msg_t *msg, const char *topic)
{
    const char *t = canopy_msg_get_topic (msg);
    return t && !strcmp (t, topic);
}

static void respond_loaded (struct content_ctx *ctx, const canopy_msg_t *msg,
                            struct blobentry *e)
{
    if (canopy_respond_raw (ctx->h, msg, e->data, e->len) < 0)
        canopy_log_error (ctx->h, "content.load respond");
}

static void batch_op_back (void *op);

static void respond_waiters (struct content_ctx *ctx, struct blobentry *e,
                             int errnum, const char *errstr)
{
    int n;
    void **ops = blobcache_take_ops (e, &n);
    for (int i = 0; i < n; i++)
        batch_op_back (ops[i]);
    free (ops);
    canopy_msg_t **v = blobcache_take_waiters (e, &n);
    for (int i = 0; i < n; i++) {
        if (errnum)
            (void)canopy_respond_error (ctx->h, v[i], errnum, errstr);
        else if (is_topic (v[i], "content.load"))
            respond_loaded (ctx, v[i], e);
        else
            (void)canopy_respond_pack (ctx->h, v[i], "{s:s}", "ref", e->ref);
        canopy_msg_decref (v[i]);
    }
    free (v);
}

/* Load */

/* The bytes of pending entry e came from 'source' (the parent, or rank
 * 0's backing store): checked against e's hash, cached, and every waiter
 * answered.  A wrong hash (EIO: 'mismatch' says where) or no memory
 * answers the waiters with the error and removes e.
 */
static void fill_loaded (struct content_ctx *ctx, struct blobentry *e,
                         const void *data, size_t len, const char *source,
                         const char *mismatch)
{
    char computed[BLOBREF_MAX];

    if (blobref_hash (data, len, computed, sizeof (computed)) < 0
        || strcmp (computed, e->ref) != 0) {
        canopy_log (ctx->h, LOG_ERR, "%s sent wrong data for %s", source, e->ref);
        respond_waiters (ctx, e, EIO, mismatch);
        blobcache_remove (ctx->cache, e);
    }
    else if (blobcache_fill (ctx->cache, e, data, len, false) < 0) {
        respond_waiters (ctx, e, ENOMEM, NULL);
        blobcache_remove (ctx->cache, e);
    }
    else
        respond_waiters (ctx, e, 0, NULL);
}

static void from_parent (struct content_ctx *ctx, struct blobentry *e,
                         const void *data, size_t len)
{
    fill_loaded (ctx, e, data, len, "parent",
                 "content from parent failed its hash check");
}

static void upstream_load_cb (canopy_future_t *f, void *arg)
{
    struct content_ctx *ctx = arg;
    const char *ref = canopy_future_aux_get (f, "ref");
    struct blobentry *e = blobcache_lookup (ctx->cache, ref);
    const void *data;
    size_t len;

    /* an entry gone or filled by a store meanwhile needs nothing */
    if (e && !e->valid) {
        if (canopy_rpc_get_raw (f, &data, &len) < 0) {
            int errnum = errno;
            respond_waiters (ctx, e, errnum, canopy_future_error_string (f));
            blobcache_remove (ctx->cache, e);
        }
        else {
            from_parent (ctx, e, data, len);
            blobcache_purge (ctx->cache, false);
        }
    }
    canopy_future_destroy (f);
}

/* Load e (pending, waiters parked) from the parent on its own.  On
 * failure its waiters are answered and it is removed.
 */
static void single_load (struct content_ctx *ctx, struct blobentry *e)
{
    canopy_future_t *f = NULL;
    char *ref;

    ctx->upstream_loads++;
    if (!(ref = strdup (e->ref))
        || !(f = canopy_rpc (ctx->h, "content.load", e->ref, CANOPY_NODEID_UPSTREAM, 0))
        || canopy_future_aux_set (f, "ref", ref, free) < 0) {
        free (ref);
        goto error;
    }
    if (canopy_future_then (f, -1, upstream_load_cb, ctx) < 0)
        goto error;
    return;
error:
    respond_waiters (ctx, e, errno ? errno : ENOMEM,
                     "cannot reach parent content service");
    blobcache_remove (ctx->cache, e);
    canopy_future_destroy (f);
}

/* A blob of the parent's answer to a batch. */
static int batch_rec (const char *ref, const void *data, size_t len, void *arg)
{
    struct content_ctx *ctx = arg;
    struct blobentry *e = blobcache_lookup (ctx->cache, ref);

    if (e && !e->valid)
        from_parent (ctx, e, data, len);
    return 0;
}

/* A ref of a batch that brought no blob for it (left out of the answer,
 * or the whole batch failed): ask for it alone, so that its waiters hear
 * its own error.  A ref that meanwhile came another way is left alone.
 */
static int left_out (const char *ref, void *arg)
{
    struct content_ctx *ctx = arg;
    struct blobentry *e = blobcache_lookup (ctx->cache, ref);

    if (e && !e->valid)
        single_load (ctx, e);
    return 0;
}

static void upstream_flush (struct content_ctx *ctx);

/* A batch (payload req, len bytes) is no longer in flight: it came back,
 * or it could not go.  Its refs it did not bring are loaded alone.
 */
static void batch_back (struct content_ctx *ctx, const char *req, size_t len)
{
    loadq_done (ctx->loadq);
    (void)loadbatch_foreach (req, len, left_out, ctx, NULL);
}

static void batch_loaded_cb (canopy_future_t *f, void *arg)
{
    struct content_ctx *ctx = arg;
    const char *req = canopy_future_aux_get (f, "refs");
    const void *data;
    size_t len;
    canopy_error_t error;

    if (canopy_rpc_get_raw (f, &data, &len) < 0) {
        const char *why = canopy_future_error_string (f);
        canopy_log (ctx->h, LOG_DEBUG, "content.load-batch: %s: loading its blobs "
                    "one by one", why ? why : strerror (errno));
    }
    else if (blobrecs_foreach (data, len, batch_rec, ctx, &error) < 0)
        canopy_log (ctx->h, LOG_ERR, "content.load-batch answer: %s", error.text);
    batch_back (ctx, req, strlen (req));
    canopy_future_destroy (f);
    upstream_flush (ctx);
    blobcache_purge (ctx->cache, false);
}

/* Send one batch (req: its payload, len bytes and a NUL, malloc'd; taken).
 * If it cannot go, its refs are loaded one by one.
 */
static void send_batch (struct content_ctx *ctx, char *req, size_t len)
{
    canopy_future_t *f;

    if (!(f = canopy_rpc_raw (ctx->h, "content.load-batch", req, len,
                              CANOPY_NODEID_UPSTREAM, 0))
        || canopy_future_aux_set (f, "refs", req, free) < 0) {
        batch_back (ctx, req, len);
        free (req);
        canopy_future_destroy (f);
        return;
    }
    if (canopy_future_then (f, -1, batch_loaded_cb, ctx) < 0) {
        batch_back (ctx, req, len);
        canopy_future_destroy (f);    /* frees req */
    }
}

/* Send what the window allows of the queued misses.  Without memory for
 * a batch while none is in flight (so that no answer would call this
 * again), the queued misses are loaded one by one.
 */
static void upstream_flush (struct content_ctx *ctx)
{
    char *req;
    size_t len;
    int n;

    while ((req = loadq_next (ctx->loadq, &len, &n))) {
        ctx->upstream_batches++;
        ctx->upstream_loads += n;
        send_batch (ctx, req, len);
    }
    if (errno == ENOMEM && loadq_inflight (ctx->loadq) == 0) {
        char ref[BLOBREF_MAX];
        canopy_log (ctx->h, LOG_ERR, "content.load-batch: out of memory, "
                    "loading %d blobs one by one", loadq_waiting (ctx->loadq));
        while (loadq_pop (ctx->loadq, ref) == 0)
            (void)left_out (ref, ctx);
    }
}

/* Rank > 0: e (pending, waiters parked) joins the queue for the parent;
 * upstream_flush sends it.
 */
static void upstream_queue (struct content_ctx *ctx, struct blobentry *e)
{
    if (loadq_push (ctx->loadq, e->ref) < 0)
        single_load (ctx, e);
}

/* Rank 0: the backing store answered a load. */
static void backing_loaded (const char *ref, const void *data, size_t len,
                            int errnum, const char *errstr, void *arg)
{
    struct content_ctx *ctx = arg;
    struct blobentry *e = blobcache_lookup (ctx->cache, ref);

    if (!e || e->valid)         /* filled by a store meanwhile */
        return;
    if (errnum) {
        if (errnum != ENOENT)
            canopy_log (ctx->h, LOG_ERR, "loading %s from the content store: %s",
                        ref, errstr ? errstr : strerror (errnum));
        respond_waiters (ctx, e, errnum, errstr);
        blobcache_remove (ctx->cache, e);
        return;
    }
    fill_loaded (ctx, e, data, len, "the content store",
                 "stored content failed its hash check");
    blobcache_purge (ctx->cache, false);
}

/* e was just made pending for a miss, with its first waiter parked: load
 * it, on rank 0 from the backing store, elsewhere from the parent (queued,
 * and sent now unless 'queue_only': the caller flushes).  If the load
 * cannot start, the waiters hear why and e is removed.
 */
static void start_load (struct content_ctx *ctx, struct blobentry *e, bool queue_only)
{
    if (ctx->rank > 0) {
        upstream_queue (ctx, e);
        if (!queue_only)
            upstream_flush (ctx);
    }
    else if (backing_load (ctx->backing, e->ref) < 0) {
        int errnum = errno;
        respond_waiters (ctx, e, errnum, errnum == ENOENT
                                         ? "unknown blob"
                                         : "cannot reach the backing store");
        blobcache_remove (ctx->cache, e);
    }
}

static void load_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    struct content_ctx *ctx = arg;
    const char *ref;
    struct blobentry *e;

    ctx->loads++;
    if (canopy_msg_get_string (msg, &ref) < 0 || !ref || blobref_validate (ref) < 0) {
        canopy_respond_error (h, msg, EPROTO, "content.load takes a blobref");
        return;
    }
    if ((e = blobcache_lookup (ctx->cache, ref))) {
        if (e->valid) {
            blobcache_touch (ctx->cache, e);
            respond_loaded (ctx, msg, e);
            return;
        }
        if (blobcache_park (e, msg) < 0)
            canopy_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    ctx->load_misses++;
    if (ctx->rank == 0 && !backing_available (ctx->backing)) {
        canopy_respond_error (h, msg, ENOENT, "unknown blob");
        return;
    }
    if (!(e = blobcache_add_pending (ctx->cache, ref)) || blobcache_park (e, msg) < 0) {
        canopy_respond_error (h, msg, errno, NULL);
        if (e)
            blobcache_remove (ctx->cache, e);
        return;
    }
    start_load (ctx, e, false);
}

/* Batched loads: a request waiting for the blobs it misses */

struct batch_op {
    struct content_ctx *ctx;
    canopy_msg_t *msg;
    int remaining;          /* parkings not back yet (+1 while setting up) */
    size_t size;            /* of the answer */
    char *p;                /* where the next record goes */
};

/* Blobs of an answer: at most this many bytes (the rest are left out,
 * and loaded one by one by the requester).
 */
enum { BATCH_ANSWER_MAX = 16 * 1024 * 1024 };

/* The entry of 'ref' if the answer takes it (here, and within the size
 * bound after what it took so far, counted in op->size).  Both passes of
 * batch_respond ask this, in the same order, so they agree.
 */
static struct blobentry *answer_takes (struct batch_op *op, const char *ref)
{
    struct blobentry *e = blobcache_lookup (op->ctx->cache, ref);

    if (!e || !e->valid || op->size + blobrecs_size (e->len) > BATCH_ANSWER_MAX)
        return NULL;
    op->size += blobrecs_size (e->len);
    return e;
}

static int answer_size (const char *ref, void *arg)
{
    (void)answer_takes (arg, ref);
    return 0;
}

static int answer_put (const char *ref, void *arg)
{
    struct batch_op *op = arg;
    struct blobentry *e = answer_takes (op, ref);

    if (e) {
        op->p = blobrecs_put (op->p, e->ref, e->data, e->len);
        blobcache_touch (op->ctx->cache, e);
    }
    return 0;
}

static void batch_respond (struct batch_op *op)
{
    struct content_ctx *ctx = op->ctx;
    const void *req;
    size_t reqlen;
    char *buf = NULL;

    (void)canopy_msg_get_payload (op->msg, &req, &reqlen);
    op->size = 0;
    (void)loadbatch_foreach (req, reqlen, answer_size, op, NULL);
    if (op->size > 0 && !(buf = malloc (op->size))) {
        (void)canopy_respond_error (ctx->h, op->msg, ENOMEM, NULL);
        return;
    }
    size_t size = op->size;
    op->size = 0;
    op->p = buf;
    (void)loadbatch_foreach (req, reqlen, answer_put, op, NULL);
    if (canopy_respond_raw (ctx->h, op->msg, buf, size) < 0)
        canopy_log_error (ctx->h, "content.load-batch respond");
    free (buf);
}

/* One of the blobs op waited for is here, or failed. */
static void batch_op_back (void *arg)
{
    struct batch_op *op = arg;

    if (--op->remaining > 0)
        return;
    batch_respond (op);
    canopy_msg_decref (op->msg);
    free (op);
}

static int batch_want (const char *ref, void *arg)
{
    struct batch_op *op = arg;
    struct content_ctx *ctx = op->ctx;
    struct blobentry *e = blobcache_lookup (ctx->cache, ref);

    if (e && e->valid)
        return 0;
    if (!e) {
        ctx->load_misses++;
        if (ctx->rank == 0 && !backing_available (ctx->backing))
            return 0;       /* left out: the requester hears ENOENT */
        if (!(e = blobcache_add_pending (ctx->cache, ref)))
            return 0;       /* left out */
        if (blobcache_park_op (e, op) < 0) {
            blobcache_remove (ctx->cache, e);
            return 0;
        }
        op->remaining++;
        start_load (ctx, e, true);      /* load_batch_cb flushes once */
        return 0;
    }
    if (blobcache_park_op (e, op) == 0)      /* pending: wait for it */
        op->remaining++;
    return 0;
}

static void load_batch_cb (canopy_t *h, canopy_msg_handler_t *mh,
                           const canopy_msg_t *msg, void *arg)
{
    struct content_ctx *ctx = arg;
    struct batch_op *op;
    const void *req;
    size_t reqlen;
    canopy_error_t error;

    ctx->batch_loads++;
    if (canopy_msg_get_payload (msg, &req, &reqlen) < 0) {
        req = NULL;
        reqlen = 0;
    }
    if (loadbatch_foreach (req, reqlen, NULL, NULL, &error) < 0) {
        canopy_respond_error (h, msg, EPROTO, error.text);
        return;
    }
    if (!(op = calloc (1, sizeof (*op)))) {
        canopy_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    op->ctx = ctx;
    op->msg = canopy_msg_incref ((canopy_msg_t *)msg);
    op->remaining = 1;
    ctx->loads += loadbatch_foreach (req, reqlen, batch_want, op, NULL);
    if (ctx->rank > 0)
        upstream_flush (ctx);
    batch_op_back (op);
}

/* Store */

struct store_op {
    struct content_ctx *ctx;
    canopy_msg_t *req;
    char **refs;        /* refs stored by this request (answer order) */
    int nrefs;
};

static void store_op_destroy (void *arg)
{
    struct store_op *op = arg;
    if (op) {
        for (int i = 0; i < op->nrefs; i++)
            free (op->refs[i]);
        free (op->refs);
        canopy_msg_decref (op->req);
        free (op);
    }
}

static void respond_refs (struct content_ctx *ctx, const canopy_msg_t *req,
                          char **refs, int n)
{
    if (is_topic (req, "content.store")) {
        (void)canopy_respond_pack (ctx->h, req, "{s:s}", "ref", refs[0]);
        return;
    }
    json_t *a = json_array ();
    for (int i = 0; a && i < n; i++)
        json_array_append_new (a, json_string (refs[i]));
    if (!a || canopy_respond_pack (ctx->h, req, "{s:o}", "refs", a) < 0)
        canopy_respond_error (ctx->h, req, ENOMEM, NULL);
}

static void check_flush (struct content_ctx *ctx);

static void upstream_store_cb (canopy_future_t *f, void *arg)
{
    struct store_op *op = arg;
    struct content_ctx *ctx = op->ctx;

    if (canopy_future_get (f, NULL) < 0) {
        canopy_respond_error (ctx->h, op->req, errno, canopy_future_error_string (f));
        canopy_future_destroy (f);
        return;
    }
    for (int i = 0; i < op->nrefs; i++) {
        struct blobentry *e = blobcache_lookup (ctx->cache, op->refs[i]);
        if (e)
            blobcache_mark_clean (ctx->cache, e);
    }
    respond_refs (ctx, op->req, op->refs, op->nrefs);
    canopy_future_destroy (f);  /* destroys op */
    check_flush (ctx);
    blobcache_purge (ctx->cache, false);
}

/* The blob records of a store-local request (blobrecs.h), as arrays. */
struct local_blobs {
    char (*refs)[BLOBREF_MAX];
    const void **dv;
    size_t *lv;
    int n;
    int cap;
};

static int add_local (const char *ref, const void *data, size_t len, void *arg)
{
    struct local_blobs *lb = arg;
    if (lb->n == lb->cap) {
        int cap = lb->cap ? lb->cap * 2 : 16;
        void *r = realloc (lb->refs, cap * sizeof (*lb->refs));
        if (r)
            lb->refs = r;
        void *d = r ? realloc (lb->dv, cap * sizeof (*lb->dv)) : NULL;
        if (d)
            lb->dv = d;
        void *l = d ? realloc (lb->lv, cap * sizeof (*lb->lv)) : NULL;
        if (!l) {
            errno = ENOMEM;
            return -1;
        }
        lb->lv = l;
        lb->cap = cap;
    }
    memcpy (lb->refs[lb->n], ref, BLOBREF_MAX);
    lb->dv[lb->n] = data;
    lb->lv[lb->n] = len;
    lb->n++;
    return 0;
}

/* Parse a request into (data, len) blobs, and for store-local their refs
 * (checked, every one, before anything is stored: a malformed request
 * stores nothing).  Returns 0, or -1 with EPROTO or ENOMEM.
 */
static int parse_blobs (const canopy_msg_t *msg, bool batch, bool withref,
                        char (**refv)[BLOBREF_MAX], const void ***datav,
                        size_t **lenv, int *count)
{
    const uint8_t *p;
    size_t len;
    int n = 0, alloc = 0;
    const void **dv = NULL;
    size_t *lv = NULL;

    if (canopy_msg_get_payload (msg, (const void **)&p, &len) < 0)
        return -1;
    if (!batch) {
        if (!(dv = malloc (sizeof (*dv))) || !(lv = malloc (sizeof (*lv)))) {
            free (dv);
            errno = ENOMEM;
            return -1;
        }
        dv[0] = p ? (const void *)p : (const void *)"";
        lv[0] = len;
        *datav = dv;
        *lenv = lv;
        *count = 1;
        return 0;
    }
    if (withref) {
        /* every record is checked before add_local sees one */
        struct local_blobs lb = { 0 };
        if (blobrecs_foreach (p, len, add_local, &lb, NULL) < 0) {
            int e = errno;      /* EPROTO, or add_local's ENOMEM */
            free (lb.refs);
            free (lb.dv);
            free (lb.lv);
            errno = e;
            return -1;
        }
        *refv = lb.refs;
        *datav = lb.dv;
        *lenv = lb.lv;
        *count = lb.n;
        return 0;
    }
    size_t off = 0;
    while (off < len) {
        if (len - off < 4)
            goto proto;
        uint32_t blen = ((uint32_t)p[off] << 24) | ((uint32_t)p[off + 1] << 16)
                      | ((uint32_t)p[off + 2] << 8) | p[off + 3];
        off += 4;
        if (blen > len - off)
            goto proto;
        if (n == alloc) {
            alloc = alloc ? alloc * 2 : 16;
            const void **d2 = realloc (dv, alloc * sizeof (*dv));
            size_t *l2 = realloc (lv, alloc * sizeof (*lv));
            if (d2)
                dv = d2;
            if (l2)
                lv = l2;
            if (!d2 || !l2) {
                free (dv);
                free (lv);
                errno = ENOMEM;
                return -1;
            }
        }
        dv[n] = p + off;
        lv[n] = blen;
        n++;
        off += blen;
    }
    *datav = dv;
    *lenv = lv;
    *count = n;
    return 0;
proto:
    free (dv);
    free (lv);
    errno = EPROTO;
    return -1;
}

static void store_common (struct content_ctx *ctx, const canopy_msg_t *msg, bool batch,
                          bool withref)
{
    const void **datav = NULL;
    size_t *lenv = NULL;
    char (*refv)[BLOBREF_MAX] = NULL;
    int n = 0;
    struct store_op *op = NULL;
    char **upref = NULL;
    int nup = 0;
    size_t upbytes = 0;
    char (*hashed)[BLOBREF_MAX] = NULL;

    if (parse_blobs (msg, batch, withref, &refv, &datav, &lenv, &n) < 0) {
        canopy_respond_error (ctx->h, msg, errno, "malformed content store request");
        return;
    }
    if (!(op = calloc (1, sizeof (*op))) || !(op->refs = calloc (n + 1, sizeof (char *)))
        || !(upref = calloc (n + 1, sizeof (char *))))
        goto nomem;
    /* blobs without refs are hashed in one batch */
    if (!withref && n > 0 && (!(hashed = malloc (n * sizeof (*hashed)))
                              || blobref_hash_many (n, datav, lenv, hashed) < 0))
        goto nomem;
    op->ctx = ctx;
    op->req = canopy_msg_incref ((canopy_msg_t *)msg);
    for (int i = 0; i < n; i++) {
        bool added;
        struct blobentry *e;
        char ref[BLOBREF_MAX];
        if (withref)
            memcpy (ref, refv[i], sizeof (ref));    /* checked by parse_blobs */
        else
            memcpy (ref, hashed[i], sizeof (ref));
        e = blobcache_lookup (ctx->cache, ref);
        bool was_pending = e && !e->valid;
        /* dirty everywhere: ranks > 0 until the parent has it, rank 0
         * until the backing store has it (forever without one: rank 0 is
         * then the only copy and must never expire it)
         */
        if (!(e = blobcache_insert_ref (ctx->cache, ref, datav[i], lenv[i], true,
                                        &added)))
            goto nomem;
        ctx->stores++;
        if (was_pending)
            respond_waiters (ctx, e, 0, NULL);   /* loads waiting for it */
        if (!(op->refs[op->nrefs++] = strdup (e->ref)))
            goto nomem;
        if (e->dirty && ctx->rank > 0) {
            upref[nup] = op->refs[op->nrefs - 1];
            nup++;
            upbytes += e->len + 4;
        }
    }
    if (ctx->rank == 0 || nup == 0) {
        respond_refs (ctx, msg, op->refs, op->nrefs);
        backing_kick (ctx->backing);
        store_op_destroy (op);
        free (upref);
        free (datav);
        free (lenv);
        free (refv);
        free (hashed);
        blobcache_purge (ctx->cache, false);
        return;
    }
    /* write through: send the dirty blobs to the parent as one batch */
    uint8_t *buf = malloc (upbytes + 1), *p = buf;
    if (!buf)
        goto nomem;
    for (int i = 0; i < nup; i++) {
        struct blobentry *e = blobcache_lookup (ctx->cache, upref[i]);
        uint32_t len = e->len;
        p[0] = len >> 24;
        p[1] = len >> 16;
        p[2] = len >> 8;
        p[3] = len;
        memcpy (p + 4, e->data, len);
        p += 4 + len;
    }
    ctx->upstream_stores++;
    canopy_future_t *f = canopy_rpc_raw (ctx->h, "content.store-batch", buf, upbytes,
                                         CANOPY_NODEID_UPSTREAM, 0);
    free (buf);
    if (!f || canopy_future_aux_set (f, "op", op, store_op_destroy) < 0
        || canopy_future_then (f, -1, upstream_store_cb, op) < 0) {
        canopy_respond_error (ctx->h, msg, errno, "cannot reach parent content service");
        if (f)
            canopy_future_destroy (f);
        else
            store_op_destroy (op);
    }
    free (upref);
    free (datav);
    free (lenv);
    free (refv);
    free (hashed);
    return;
nomem:
    canopy_respond_error (ctx->h, msg, ENOMEM, NULL);
    store_op_destroy (op);
    free (upref);
    free (datav);
    free (lenv);
    free (refv);
    free (hashed);
}

static void store_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    store_common (arg, msg, false, false);
}

static void store_batch_cb (canopy_t *h, canopy_msg_handler_t *mh,
                            const canopy_msg_t *msg, void *arg)
{
    store_common (arg, msg, true, false);
}

/* Only a module on this broker may vouch for refs. */
static void store_local_cb (canopy_t *h, canopy_msg_handler_t *mh,
                            const canopy_msg_t *msg, void *arg)
{
    struct content_ctx *ctx = arg;
    const char *sender = canopy_msg_route_last (msg);
    char prefix[32];
    snprintf (prefix, sizeof (prefix), "%u:m", ctx->rank);
    if (canopy_msg_route_count (msg) != 1 || !sender
        || strncmp (sender, prefix, strlen (prefix)) != 0) {
        canopy_respond_error (h, msg, EPERM, "content.store-local is for local modules");
        return;
    }
    store_common (ctx, msg, true, true);
}

/* Flush: answer when nothing is dirty (ranks > 0). */

static void check_flush (struct content_ctx *ctx)
{
    struct blobcache_stats st;
    blobcache_stats (ctx->cache, &st);
    if (st.dirty > 0 || ctx->nflushers == 0)
        return;
    for (int i = 0; i < ctx->nflushers; i++) {
        (void)canopy_respond (ctx->h, ctx->flushers[i], NULL);
        canopy_msg_decref (ctx->flushers[i]);
    }
    ctx->nflushers = 0;
}

static void flush_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct content_ctx *ctx = arg;
    canopy_msg_t **v;

    if (ctx->rank == 0) {
        if (!ctx->backing)
            canopy_respond_error (h, msg, ENOSYS, "rank 0 has no backing store");
        else
            backing_flush_request (ctx->backing, msg);
        return;
    }
    if (!(v = realloc (ctx->flushers, (ctx->nflushers + 1) * sizeof (*v)))) {
        canopy_respond_error (h, msg, ENOMEM, NULL);
        return;
    }
    ctx->flushers = v;
    ctx->flushers[ctx->nflushers++] = canopy_msg_incref ((canopy_msg_t *)msg);
    check_flush (ctx);
}

static bool have_backing (struct content_ctx *ctx, const canopy_msg_t *msg)
{
    if (ctx->rank != 0) {
        canopy_respond_error (ctx->h, msg, EINVAL, "checkpoints are kept on rank 0");
        return false;
    }
    if (!ctx->backing) {
        canopy_respond_error (ctx->h, msg, ENOSYS, "rank 0 has no backing store");
        return false;
    }
    return true;
}

static void checkpoint_put_cb (canopy_t *h, canopy_msg_handler_t *mh,
                               const canopy_msg_t *msg, void *arg)
{
    struct content_ctx *ctx = arg;
    if (have_backing (ctx, msg))
        backing_checkpoint_put (ctx->backing, msg);
}

static void checkpoint_get_cb (canopy_t *h, canopy_msg_handler_t *mh,
                               const canopy_msg_t *msg, void *arg)
{
    struct content_ctx *ctx = arg;
    if (have_backing (ctx, msg))
        backing_checkpoint_get (ctx->backing, msg);
}

static void stats_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct content_ctx *ctx = arg;
    struct blobcache_stats st;
    blobcache_stats (ctx->cache, &st);
    json_t *bk = ctx->backing ? backing_stats (ctx->backing) : json_null ();
    canopy_respond_pack (h, msg, "{s:i s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:o}",
                         "rank", (int)ctx->rank,
                         "count", (json_int_t)st.count,
                         "bytes", (json_int_t)st.bytes,
                         "dirty", (json_int_t)st.dirty,
                         "pending", (json_int_t)st.pending,
                         "max-bytes", (json_int_t)st.max_bytes,
                         "loads", (json_int_t)ctx->loads,
                         "load-misses", (json_int_t)ctx->load_misses,
                         "stores", (json_int_t)ctx->stores,
                         "upstream-loads", (json_int_t)ctx->upstream_loads,
                         "upstream-batches", (json_int_t)ctx->upstream_batches,
                         "batch-loads", (json_int_t)ctx->batch_loads,
                         "upstream-stores", (json_int_t)ctx->upstream_stores,
                         "backing", bk ? bk : json_null ());
}

static void dropcache_cb (canopy_t *h, canopy_msg_handler_t *mh,
                          const canopy_msg_t *msg, void *arg)
{
    struct content_ctx *ctx = arg;
    int n = blobcache_purge (ctx->cache, true);
    canopy_respond_pack (h, msg, "{s:i}", "dropped", n);
}

static void purge_timer_cb (canopy_reactor_t *r, canopy_watcher_t *w,
                            int revents, void *arg)
{
    struct content_ctx *ctx = arg;
    blobcache_purge (ctx->cache, false);
    backing_tick (ctx->backing);
}

static const struct canopy_msg_handler_spec htab[] = {
    { CANOPY_MSGTYPE_REQUEST, "content.load", load_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "content.load-batch", load_batch_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "content.store", store_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "content.store-batch", store_batch_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "content.store-local", store_local_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "content.flush", flush_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "content.checkpoint-put", checkpoint_put_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "content.checkpoint-get", checkpoint_get_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "content.stats", stats_cb, CANOPY_ROLE_USER },
    { CANOPY_MSGTYPE_REQUEST, "content.dropcache", dropcache_cb, 0 },
    CANOPY_MSGHANDLER_TABLE_END,
};

static int parse_args (struct content_ctx *ctx, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (!strncmp (argv[i], "cache-max=", 10)) {
            char *end;
            unsigned long long v = strtoull (argv[i] + 10, &end, 10);
            if (*end || end == argv[i] + 10) {
                canopy_log (ctx->h, LOG_ERR, "bad argument %s", argv[i]);
                errno = EINVAL;
                return -1;
            }
            blobcache_set_max (ctx->cache, v);
        }
        else {
            canopy_log (ctx->h, LOG_ERR, "unknown argument %s", argv[i]);
            errno = EINVAL;
            return -1;
        }
    }
    return 0;
}

static void unload_respond (const canopy_msg_t *msg, void *arg)
{
    struct content_ctx *ctx = arg;
    (void)canopy_respond_error (ctx->h, msg, ENOSYS, "content service unloading");
}

/* Unloading: a batch is answered with what is here (its requester loads
 * the rest alone and hears ENOSYS).
 */
static void unload_op (void *op, void *arg)
{
    batch_op_back (op);
}

int mod_main (canopy_t *h, int argc, char **argv)
{
    struct content_ctx ctx;
    canopy_msg_handler_t **handlers = NULL;
    int rc = -1;

    memset (&ctx, 0, sizeof (ctx));
    ctx.h = h;
    if (canopy_get_rank (h, &ctx.rank) < 0
        || !(ctx.cache = blobcache_create (64 * 1024 * 1024))
        || !(ctx.loadq = loadq_create ())
        || parse_args (&ctx, argc, argv) < 0)
        goto done;
    if (ctx.rank == 0) {
        const char *name = canopy_attr_get (h, "content.backing-module");
        const char *d = canopy_attr_get (h, "content.flush-delay");
        double delay = d ? strtod (d, NULL) : 0.01;
        if (!name)
            name = "content-sqlite";
        if (strcmp (name, "none") != 0
            && !(ctx.backing = backing_create (h, ctx.cache, name, delay < 0 ? 0 : delay,
                                               backing_loaded, &ctx))) {
            canopy_log_error (h, "backing store %s", name);
            goto done;
        }
    }
    if (canopy_msg_handler_addvec (h, htab, &ctx, &handlers) < 0)
        goto done;
    /* Stores purge as they go; the timer catches what expires otherwise,
     * and on rank 0 retries a blocked backing store.  Elsewhere it need
     * not wake an idle broker often.
     */
    double period = ctx.rank == 0 ? 1.0 : 10.0;
    if (!(ctx.purge_timer = canopy_timer_watcher_create (canopy_get_reactor (h),
                                                         period, period,
                                                         purge_timer_cb, &ctx)))
        goto done;
    canopy_watcher_unref (ctx.purge_timer);
    canopy_watcher_start (ctx.purge_timer);
    rc = canopy_reactor_run (canopy_get_reactor (h), 0);
done:
    for (int i = 0; i < ctx.nflushers; i++) {
        (void)canopy_respond_error (h, ctx.flushers[i], ENOSYS, "content unloading");
        canopy_msg_decref (ctx.flushers[i]);
    }
    free (ctx.flushers);
    backing_destroy (ctx.backing);
    if (ctx.cache) {
        blobcache_drain_ops (ctx.cache, unload_op, &ctx);
        blobcache_drain_waiters (ctx.cache, unload_respond, &ctx);
    }
    loadq_destroy (ctx.loadq);
    canopy_watcher_destroy (ctx.purge_timer);
    canopy_msg_handler_delvec (handlers);
    blobcache_destroy (ctx.cache);
    return rc;
}
