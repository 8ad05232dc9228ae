/* backing.c - see backing.h.
 *
 * Design notes:
 * - Batches are taken from a prepare watcher, i.e. once per reactor pass,
 *   after every store that arrived in that wake-up has been cached: stores
 *   that arrive together are written together.  When nobody waits and the
 *   backlog is small, the batch is taken 'delay' seconds later instead,
 *   so that the blobs of several commits share one transaction (fewer
 *   page writes per blob); a flush or checkpoint request, or a backlog of
 *   URGENT_BACKLOG blobs, sends at once.
 * - Waiters (flush and checkpoint requests) form one FIFO; each records
 *   the cache's sequence number when it arrived.  Only the head may be
 *   dispatched, so checkpoints reach the backing store in arrival order.
 *   Consecutive ready flush waiters share one sync request.
 * - A failed batch fails the waiters that were there when it was sent;
 *   later ones get a fresh attempt (so a flush after space was freed is
 *   not failed by an older batch).
 * - Every RPC in flight is on the 'inflight' list so that destroy can drop
 *   it; continuations never run after destroy.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <canopy/canopy.h>
#include "src/common/libutil/list.h"
#include "src/common/libutil/blobref.h"
#include "backing.h"

#define BATCH_MAX_BLOBS 1024
#define BATCH_MAX_BYTES (8 * 1024 * 1024)
#define BATCHES_IN_FLIGHT 2
#define URGENT_BACKLOG (BATCH_MAX_BLOBS / 4)

enum waiter_kind { WAIT_FLUSH, WAIT_CHECKPOINT };

struct waiter {
    struct list_node node;
    enum waiter_kind kind;
    canopy_msg_t *msg;
    uint64_t target;
    uint64_t id;                /* arrival order */
};

struct rpc {
    struct list_node node;
    struct backing *b;
    canopy_future_t *f;
    /* a store batch */
    char (*refs)[BLOBREF_MAX];
    int nrefs;
    size_t bytes;
    uint64_t waiter_mark;       /* newest waiter when the batch was sent */
    /* answered requests */
    canopy_msg_t **msgs;
    int nmsgs;
    /* a load */
    char ref[BLOBREF_MAX];
};

struct backing {
    canopy_t *h;
    blobcache_t *cache;
    char name[64];
    char topic_store[96], topic_load[96], topic_sync[96];
    char topic_ckput[96], topic_ckget[96];
    backing_loaded_f loaded;
    void *loaded_arg;
    canopy_watcher_t *prep;
    canopy_watcher_t *delay_timer;
    double delay;
    struct list_node waiters;
    int nwaiters;
    uint64_t waiter_seq;
    struct list_node inflight;
    int batches;                /* store batches in flight */
    bool absent;                /* ENOSYS from the backing store */
    bool blocked;               /* a batch failed: wait for a retry trigger */
    int last_errnum;
    char last_error[256];
    struct {
        uint64_t batches, blobs, bytes, errors, loads, load_errors;
        uint64_t syncs, checkpoints;
    } stats;
};

static void rpc_free (struct rpc *r)
{
    if (r) {
        for (int i = 0; i < r->nmsgs; i++)
            canopy_msg_decref (r->msgs[i]);
        free (r->msgs);
        free (r->refs);
        canopy_future_destroy (r->f);
        free (r);
    }
}

static void rpc_done (struct rpc *r)
{
    list_del (&r->node);
    rpc_free (r);
}

static struct rpc *rpc_send (struct backing *b, canopy_future_t *f,
                             void (*cb)(canopy_future_t *, void *))
{
    struct rpc *r;
    if (!f)
        return NULL;
    if (!(r = calloc (1, sizeof (*r)))) {
        canopy_future_destroy (f);
        errno = ENOMEM;
        return NULL;
    }
    r->b = b;
    r->f = f;
    if (canopy_future_then (f, -1, cb, r) < 0) {
        rpc_free (r);
        return NULL;
    }
    list_add_tail (&b->inflight, &r->node);
    return r;
}

static void set_absent (struct backing *b)
{
    if (!b->absent)
        canopy_log (b->h, LOG_ERR, "no backing store (%s): content stays in memory",
                    b->name);
    b->absent = true;
    canopy_watcher_stop (b->prep);
    canopy_watcher_stop (b->delay_timer);
}

static void respond_error (struct backing *b, const canopy_msg_t *msg, int errnum,
                           const char *text)
{
    (void)canopy_respond_error (b->h, msg, errnum, text);
}

static void waiter_free (struct waiter *w)
{
    canopy_msg_decref (w->msg);
    free (w);
}

/* Fail the waiters not yet dispatched that arrived up to 'mark'. */
static void fail_waiters (struct backing *b, uint64_t mark, int errnum, const char *text)
{
    while (!list_empty (&b->waiters)) {
        struct waiter *w = list_entry (b->waiters.next, struct waiter, node);
        if (w->id > mark)
            break;
        list_del (&w->node);
        b->nwaiters--;
        respond_error (b, w->msg, errnum, text);
        waiter_free (w);
    }
}

/* Answers from the backing store to flush and checkpoint requests. */
static void reply_cb (canopy_future_t *f, void *arg)
{
    struct rpc *r = arg;
    struct backing *b = r->b;

    if (canopy_future_get (f, NULL) < 0) {
        int errnum = errno;
        const char *text = canopy_future_error_string (f);
        if (errnum == ENOSYS)
            set_absent (b);
        for (int i = 0; i < r->nmsgs; i++)
            respond_error (b, r->msgs[i], errnum,
                           errnum == ENOSYS ? "no backing store" : text);
    }
    else {
        for (int i = 0; i < r->nmsgs; i++)
            (void)canopy_respond (b->h, r->msgs[i], NULL);
    }
    rpc_done (r);
}

static int dispatch_flushes (struct backing *b, struct waiter **v, int n)
{
    struct rpc *r;
    canopy_future_t *f = canopy_rpc (b->h, b->topic_sync, "{}", CANOPY_NODEID_ANY, 0);
    if (!(r = rpc_send (b, f, reply_cb)))
        return -1;
    if (!(r->msgs = calloc (n, sizeof (*r->msgs)))) {
        rpc_done (r);
        errno = ENOMEM;
        return -1;
    }
    for (int i = 0; i < n; i++)
        r->msgs[r->nmsgs++] = canopy_msg_incref (v[i]->msg);
    b->stats.syncs++;
    return 0;
}

static int dispatch_checkpoint (struct backing *b, struct waiter *w)
{
    const char *s = NULL;
    struct rpc *r;
    canopy_future_t *f;

    (void)canopy_msg_get_string (w->msg, &s);
    f = canopy_rpc (b->h, b->topic_ckput, s ? s : "{}", CANOPY_NODEID_ANY, 0);
    if (!(r = rpc_send (b, f, reply_cb)))
        return -1;
    if (!(r->msgs = calloc (1, sizeof (*r->msgs)))) {
        rpc_done (r);
        errno = ENOMEM;
        return -1;
    }
    r->msgs[r->nmsgs++] = canopy_msg_incref (w->msg);
    b->stats.checkpoints++;
    return 0;
}

/* Dispatch the waiters at the head whose blobs are all clean. */
static void process_waiters (struct backing *b)
{
    uint64_t clean = blobcache_clean_through (b->cache);

    while (!list_empty (&b->waiters)) {
        struct waiter *head = list_entry (b->waiters.next, struct waiter, node);
        struct waiter *v[64];
        int n = 0;
        int rc;

        if (head->target > clean)
            break;
        if (head->kind == WAIT_CHECKPOINT) {
            list_del (&head->node);
            b->nwaiters--;
            v[n++] = head;
            rc = dispatch_checkpoint (b, head);
        }
        else {
            while (n < 64 && !list_empty (&b->waiters)) {
                struct waiter *w = list_entry (b->waiters.next, struct waiter, node);
                if (w->kind != WAIT_FLUSH || w->target > clean)
                    break;
                list_del (&w->node);
                b->nwaiters--;
                v[n++] = w;
            }
            rc = dispatch_flushes (b, v, n);
        }
        for (int i = 0; i < n; i++) {
            if (rc < 0)
                respond_error (b, v[i]->msg, errno, "cannot reach the backing store");
            waiter_free (v[i]);
        }
    }
}

static void store_cb (canopy_future_t *f, void *arg)
{
    struct rpc *r = arg;
    struct backing *b = r->b;
    int errnum = 0;

    b->batches--;
    if (canopy_future_get (f, NULL) < 0)
        errnum = errno;
    for (int i = 0; i < r->nrefs; i++) {
        struct blobentry *e = blobcache_lookup (b->cache, r->refs[i]);
        if (!e)
            continue;
        if (errnum)
            blobcache_unflush (b->cache, e);
        else
            blobcache_mark_clean (b->cache, e);
    }
    if (errnum) {
        const char *text = canopy_future_error_string (f);
        char buf[sizeof (b->last_error)];
        snprintf (buf, sizeof (buf), "%s", text ? text : strerror (errnum));
        uint64_t mark = r->waiter_mark;
        b->stats.errors++;
        rpc_done (r);
        if (errnum == ENOSYS) {
            set_absent (b);
            fail_waiters (b, UINT64_MAX, ENOSYS, "no backing store");
            return;
        }
        if (errnum != b->last_errnum || strcmp (buf, b->last_error) != 0)
            canopy_log (b->h, LOG_ERR, "writing to the content store failed: %s "
                        "(retrying on the next flush or checkpoint)", buf);
        b->last_errnum = errnum;
        snprintf (b->last_error, sizeof (b->last_error), "%s", buf);
        /* requests that were waiting when the batch went out get its error;
         * later ones deserve an attempt of their own
         */
        fail_waiters (b, mark, errnum, buf);
        b->blocked = list_empty (&b->waiters);
        backing_kick (b);
        return;
    }
    b->stats.batches++;
    b->stats.blobs += r->nrefs;
    b->stats.bytes += r->bytes;
    if (b->last_errnum) {
        canopy_log (b->h, LOG_INFO, "writing to the content store works again");
        b->last_errnum = 0;
        b->last_error[0] = '\0';
    }
    rpc_done (r);
    process_waiters (b);
    blobcache_purge (b->cache, false);
    backing_kick (b);
}

/* Send one batch of dirty entries.  Returns 1 if sent, 0 if none, -1. */
static int send_batch (struct backing *b)
{
    struct blobentry *v[BATCH_MAX_BLOBS];
    int n = blobcache_take_dirty (b->cache, v, BATCH_MAX_BLOBS, BATCH_MAX_BYTES);
    size_t total = 0, bytes = 0;
    uint8_t *buf, *p;
    struct rpc *r;
    canopy_future_t *f;

    if (n <= 0)
        return 0;
    for (int i = 0; i < n; i++) {
        total += BLOBREF_STRLEN + 4 + v[i]->len;
        bytes += v[i]->len;
    }
    if (!(buf = malloc (total + 1)))
        goto error;
    p = buf;
    for (int i = 0; i < n; i++) {
        uint32_t len = v[i]->len;
        memcpy (p, v[i]->ref, BLOBREF_STRLEN);
        p += BLOBREF_STRLEN;
        p[0] = len >> 24;
        p[1] = len >> 16;
        p[2] = len >> 8;
        p[3] = len;
        memcpy (p + 4, v[i]->data, len);
        p += 4 + len;
    }
    f = canopy_rpc_raw (b->h, b->topic_store, buf, total, CANOPY_NODEID_ANY, 0);
    free (buf);
    if (!(r = rpc_send (b, f, store_cb)))
        goto error;
    if (!(r->refs = calloc (n, sizeof (*r->refs)))) {
        rpc_done (r);
        goto error;
    }
    for (int i = 0; i < n; i++)
        memcpy (r->refs[i], v[i]->ref, BLOBREF_MAX);
    r->nrefs = n;
    r->bytes = bytes;
    r->waiter_mark = b->waiter_seq;
    b->batches++;
    return 1;
error:
    for (int i = 0; i < n; i++)
        blobcache_unflush (b->cache, v[i]);
    return -1;
}

static void prep_cb (canopy_reactor_t *rx, canopy_watcher_t *w, int revents, void *arg)
{
    struct backing *b = arg;

    canopy_watcher_stop (b->prep);
    canopy_watcher_stop (b->delay_timer);
    if (b->absent || b->blocked)
        return;
    while (b->batches < BATCHES_IN_FLIGHT) {
        int rc = send_batch (b);
        if (rc < 0)
            canopy_log_error (b->h, "content write-back");
        if (rc <= 0)
            break;
    }
}

void backing_kick (struct backing *b)
{
    size_t backlog;

    if (!b || b->absent || b->blocked || b->batches >= BATCHES_IN_FLIGHT
        || (backlog = blobcache_backlog (b->cache)) == 0)
        return;
    /* someone waits, or enough for a good batch: now; else a little later,
     * so that more commits share one transaction
     */
    if (b->nwaiters > 0 || b->delay <= 0 || backlog >= URGENT_BACKLOG)
        canopy_watcher_start (b->prep);
    else if (!canopy_watcher_is_active (b->delay_timer)) {
        canopy_timer_watcher_reset (b->delay_timer, b->delay, 0);
        canopy_watcher_start (b->delay_timer);
    }
}

bool backing_available (struct backing *b)
{
    return b && !b->absent;
}

static void load_cb (canopy_future_t *f, void *arg)
{
    struct rpc *r = arg;
    struct backing *b = r->b;
    const void *data = NULL;
    size_t len = 0;
    int errnum = 0;
    const char *text = NULL;

    if (canopy_rpc_get_raw (f, &data, &len) < 0) {
        errnum = errno;
        text = canopy_future_error_string (f);
        if (errnum == ENOSYS) {
            set_absent (b);
            errnum = ENOENT;
            text = "unknown blob";
        }
        else if (errnum != ENOENT)
            b->stats.load_errors++;
    }
    b->loaded (r->ref, data, len, errnum, text, b->loaded_arg);
    rpc_done (r);
}

int backing_load (struct backing *b, const char *ref)
{
    struct rpc *r;
    canopy_future_t *f;

    if (b->absent) {
        errno = ENOENT;
        return -1;
    }
    f = canopy_rpc (b->h, b->topic_load, ref, CANOPY_NODEID_ANY, 0);
    if (!(r = rpc_send (b, f, load_cb)))
        return -1;
    snprintf (r->ref, sizeof (r->ref), "%s", ref);
    b->stats.loads++;
    return 0;
}

static void add_waiter (struct backing *b, const canopy_msg_t *msg, enum waiter_kind kind)
{
    struct waiter *w;

    if (b->absent) {
        respond_error (b, msg, ENOSYS, "no backing store");
        return;
    }
    if (!(w = calloc (1, sizeof (*w)))) {
        respond_error (b, msg, ENOMEM, NULL);
        return;
    }
    w->kind = kind;
    w->msg = canopy_msg_incref ((canopy_msg_t *)msg);
    w->target = blobcache_seq (b->cache);
    w->id = ++b->waiter_seq;
    list_add_tail (&b->waiters, &w->node);
    b->nwaiters++;
    /* a request is a reason to try again after a failure */
    b->blocked = false;
    process_waiters (b);
    backing_kick (b);
}

void backing_flush_request (struct backing *b, const canopy_msg_t *msg)
{
    add_waiter (b, msg, WAIT_FLUSH);
}

void backing_checkpoint_put (struct backing *b, const canopy_msg_t *msg)
{
    const char *rootref;
    int version;
    double timestamp;

    if (canopy_request_unpack (msg, NULL, "{s:s s:i s:F}", "rootref", &rootref,
                               "version", &version, "timestamp", &timestamp) < 0
        || blobref_validate (rootref) < 0) {
        respond_error (b, msg, EPROTO,
                       "content.checkpoint-put takes {rootref, version, timestamp}");
        return;
    }
    add_waiter (b, msg, WAIT_CHECKPOINT);
}

static void ckget_cb (canopy_future_t *f, void *arg)
{
    struct rpc *r = arg;
    struct backing *b = r->b;
    const char *s;

    if (canopy_rpc_get (f, &s) < 0) {
        int errnum = errno;
        if (errnum == ENOSYS)
            set_absent (b);
        respond_error (b, r->msgs[0], errnum, errnum == ENOSYS ? "no backing store"
                                              : canopy_future_error_string (f));
    }
    else
        (void)canopy_respond (b->h, r->msgs[0], s);
    rpc_done (r);
}

void backing_checkpoint_get (struct backing *b, const canopy_msg_t *msg)
{
    struct rpc *r;
    canopy_future_t *f;

    if (b->absent) {
        respond_error (b, msg, ENOSYS, "no backing store");
        return;
    }
    f = canopy_rpc (b->h, b->topic_ckget, "{}", CANOPY_NODEID_ANY, 0);
    if (!(r = rpc_send (b, f, ckget_cb))
        || !(r->msgs = calloc (1, sizeof (*r->msgs)))) {
        respond_error (b, msg, errno ? errno : ENOMEM, "cannot reach the backing store");
        if (r)
            rpc_done (r);
        return;
    }
    r->msgs[r->nmsgs++] = canopy_msg_incref ((canopy_msg_t *)msg);
}

void backing_tick (struct backing *b)
{
    if (b && b->blocked) {
        b->blocked = false;
        backing_kick (b);
    }
}

json_t *backing_stats (struct backing *b)
{
    return json_pack ("{s:s s:s s:i s:i s:I s:I s:I s:I s:I s:I s:I s:I s:I s:s}",
                      "name", b->name,
                      "state", b->absent ? "absent" : b->last_errnum ? "failing" : "ok",
                      "batches-in-flight", b->batches,
                      "waiters", b->nwaiters,
                      "backlog", (json_int_t)blobcache_backlog (b->cache),
                      "batches", (json_int_t)b->stats.batches,
                      "blobs-written", (json_int_t)b->stats.blobs,
                      "bytes-written", (json_int_t)b->stats.bytes,
                      "write-errors", (json_int_t)b->stats.errors,
                      "loads", (json_int_t)b->stats.loads,
                      "load-errors", (json_int_t)b->stats.load_errors,
                      "syncs", (json_int_t)b->stats.syncs,
                      "checkpoints", (json_int_t)b->stats.checkpoints,
                      "last-error", b->last_error);
}

struct backing *backing_create (canopy_t *h, blobcache_t *cache, const char *name,
                                double delay, backing_loaded_f loaded, void *arg)
{
    struct backing *b;

    if (!name || strlen (name) >= 64 || !loaded) {
        errno = EINVAL;
        return NULL;
    }
    if (!(b = calloc (1, sizeof (*b)))) {
        errno = ENOMEM;
        return NULL;
    }
    b->h = h;
    b->cache = cache;
    b->loaded = loaded;
    b->loaded_arg = arg;
    b->delay = delay;
    snprintf (b->name, sizeof (b->name), "%s", name);
    snprintf (b->topic_store, sizeof (b->topic_store), "%s.store", name);
    snprintf (b->topic_load, sizeof (b->topic_load), "%s.load", name);
    snprintf (b->topic_sync, sizeof (b->topic_sync), "%s.sync", name);
    snprintf (b->topic_ckput, sizeof (b->topic_ckput), "%s.checkpoint-put", name);
    snprintf (b->topic_ckget, sizeof (b->topic_ckget), "%s.checkpoint-get", name);
    list_init (&b->waiters);
    list_init (&b->inflight);
    if (!(b->prep = canopy_prepare_watcher_create (canopy_get_reactor (h), prep_cb, b))
        || !(b->delay_timer = canopy_timer_watcher_create (canopy_get_reactor (h),
                                                           delay, 0, prep_cb, b))) {
        canopy_watcher_destroy (b->prep);
        free (b);
        return NULL;
    }
    canopy_watcher_unref (b->prep);
    canopy_watcher_unref (b->delay_timer);
    return b;
}

void backing_destroy (struct backing *b)
{
    if (b) {
        int saved = errno;
        fail_waiters (b, UINT64_MAX, ENOSYS, "content service unloading");
        while (!list_empty (&b->inflight)) {
            struct rpc *r = list_entry (b->inflight.next, struct rpc, node);
            for (int i = 0; i < r->nmsgs; i++)
                respond_error (b, r->msgs[i], ENOSYS, "content service unloading");
            rpc_done (r);
        }
        canopy_watcher_destroy (b->prep);
        canopy_watcher_destroy (b->delay_timer);
        free (b);
        errno = saved;
    }
}
