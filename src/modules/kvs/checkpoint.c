/* checkpoint.c - see checkpoint.h.
 *
 * Design notes:
 * - Writes are content.checkpoint-put RPCs; the content service answers
 *   them in the order sent, so 'last' (the newest durable checkpoint) only
 *   moves forward.  'requested' is the newest version asked for, so the
 *   timer does not ask twice for the same root.
 * - Every write in flight is on a list, so destroy can drop them.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <canopy/canopy.h>
#include "src/common/libutil/list.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libkvs/treeobj.h"
#include "checkpoint.h"

struct write {
    struct list_node node;
    struct checkpointer *cp;
    canopy_future_t *f;
    int version;
    double timestamp;
    checkpoint_done_f cb;
    void *arg;
};

struct checkpointer {
    struct kvs_ctx *ctx;
    double period;
    canopy_watcher_t *timer;
    struct list_node writes;
    bool disabled;              /* no backing store */
    int requested;              /* newest version asked for */
    int last_version;           /* newest durable checkpoint */
    double last_timestamp;
    int restored_version;
    double restored_timestamp;
    uint64_t written, failed;
    int last_errnum;
    char last_error[160];
};

static void format_time (double t, char *buf, size_t size)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!localtime_r (&tt, &tm) || strftime (buf, size, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
        snprintf (buf, size, "%.0f", t);
}

static void write_free (struct write *w)
{
    list_del (&w->node);
    canopy_future_destroy (w->f);
    free (w);
}

static void write_cb (canopy_future_t *f, void *arg)
{
    struct write *w = arg;
    struct checkpointer *cp = w->cp;
    int errnum = 0;
    const char *text = NULL;

    if (canopy_future_get (f, NULL) < 0) {
        errnum = errno;
        text = canopy_future_error_string (f);
        cp->failed++;
        if (errnum == ENOSYS)
            cp->disabled = true;
        else if (errnum != cp->last_errnum) {
            canopy_log (cp->ctx->h, LOG_ERR, "checkpoint of version %d failed: %s",
                        w->version, text ? text : strerror (errnum));
        }
        cp->last_errnum = errnum;
        snprintf (cp->last_error, sizeof (cp->last_error), "%s",
                  text ? text : strerror (errnum));
        /* let the timer try this root again */
        if (cp->requested == w->version)
            cp->requested = cp->last_version;
    }
    else {
        cp->written++;
        if (cp->last_errnum)
            canopy_log (cp->ctx->h, LOG_INFO, "checkpoints work again (version %d)",
                        w->version);
        cp->last_errnum = 0;
        cp->last_error[0] = '\0';
        if (w->version >= cp->last_version) {
            cp->last_version = w->version;
            cp->last_timestamp = w->timestamp;
        }
    }
    checkpoint_done_f cb = w->cb;
    void *cbarg = w->arg;
    write_free (w);
    if (cb)
        cb (errnum, errnum ? (text ? text : strerror (errnum)) : NULL, cbarg);
}

int checkpointer_write (struct checkpointer *cp, const char *rootref, int version,
                        checkpoint_done_f cb, void *arg)
{
    struct write *w;

    if (cp->disabled) {
        errno = ENOSYS;
        return -1;
    }
    if (!(w = calloc (1, sizeof (*w)))) {
        errno = ENOMEM;
        return -1;
    }
    w->cp = cp;
    w->version = version;
    w->timestamp = walltime ();
    w->cb = cb;
    w->arg = arg;
    if (!(w->f = canopy_rpc_pack (cp->ctx->h, "content.checkpoint-put", CANOPY_NODEID_ANY,
                                  0, "{s:s s:i s:f}", "rootref", rootref,
                                  "version", version, "timestamp", w->timestamp))
        || canopy_future_then (w->f, -1, write_cb, w) < 0) {
        canopy_future_destroy (w->f);
        free (w);
        return -1;
    }
    list_add_tail (&cp->writes, &w->node);
    if (version > cp->requested)
        cp->requested = version;
    return 0;
}

static void timer_cb (canopy_reactor_t *r, canopy_watcher_t *tw, int revents, void *arg)
{
    struct checkpointer *cp = arg;
    struct kvs_ctx *ctx = cp->ctx;

    if (cp->disabled || !list_empty (&cp->writes) || ctx->version <= cp->requested)
        return;
    if (checkpointer_write (cp, ctx->rootref, ctx->version, NULL, NULL) < 0)
        canopy_log_error (ctx->h, "periodic checkpoint");
}

void checkpointer_final (struct checkpointer *cp)
{
    struct kvs_ctx *ctx;
    canopy_future_t *f;

    if (!cp)
        return;
    ctx = cp->ctx;
    if (cp->disabled || ctx->version <= cp->last_version || !ctx->rootref[0])
        return;
    if (!(f = canopy_rpc_pack (ctx->h, "content.checkpoint-put", CANOPY_NODEID_ANY, 0,
                               "{s:s s:i s:f}", "rootref", ctx->rootref,
                               "version", ctx->version, "timestamp", walltime ()))
        || canopy_future_get (f, NULL) < 0) {
        if (errno != ENOSYS)
            canopy_log (ctx->h, LOG_ERR, "final checkpoint of version %d failed: %s",
                        ctx->version, f ? canopy_future_error_string (f)
                                        : strerror (errno));
    }
    else {
        cp->written++;
        cp->last_version = ctx->version;
        canopy_log (ctx->h, LOG_INFO, "checkpoint of version %d written at unload",
                    ctx->version);
    }
    canopy_future_destroy (f);
}

/* Ask the instance to stop: the KVS cannot start on this store. */
static void request_shutdown (struct kvs_ctx *ctx)
{
    canopy_future_t *f = canopy_rpc_pack (ctx->h, "broker.shutdown", 0, 0,
                                          "{s:i}", "exitcode", 1);
    if (!f || canopy_future_get (f, NULL) < 0)
        canopy_log (ctx->h, LOG_ERR, "cannot request shutdown: %s",
                    f ? canopy_future_error_string (f) : strerror (errno));
    canopy_future_destroy (f);
}

/* Load and decode a root; 0 with the dir cached, or -1 and a reason. */
static int try_root (struct kvs_ctx *ctx, const char *rootref, char *why, size_t size)
{
    canopy_future_t *f;
    const void *data;
    size_t len;
    json_t *dir;

    if (blobref_validate (rootref) < 0) {
        snprintf (why, size, "its root reference is malformed");
        return -1;
    }
    if (!(f = canopy_rpc (ctx->h, "content.load", rootref, CANOPY_NODEID_ANY, 0))
        || canopy_rpc_get_raw (f, &data, &len) < 0) {
        snprintf (why, size, "its root object cannot be loaded: %s",
                  f ? canopy_future_error_string (f) : strerror (errno));
        canopy_future_destroy (f);
        return -1;
    }
    dir = treeobj_decode (data, len);
    if (!dir || (!treeobj_is_dir (dir) && !treeobj_is_hdir (dir))) {
        snprintf (why, size, "its root object is not a directory");
        json_decref (dir);
        canopy_future_destroy (f);
        return -1;
    }
    (void)objcache_put_dir (ctx->cache, rootref, dir, len);
    json_decref (dir);
    canopy_future_destroy (f);
    return 0;
}

int checkpoint_restore (struct checkpointer *cp)
{
    struct kvs_ctx *ctx = cp->ctx;
    canopy_future_t *f;
    json_t *list;
    size_t i;
    json_t *o;
    int skipped = 0;

    if (!(f = canopy_rpc (ctx->h, "content.checkpoint-get", "{}", CANOPY_NODEID_ANY, 0))
        || canopy_rpc_get_unpack (f, "{s:o}", "checkpoints", &list) < 0) {
        int errnum = errno;
        if (errnum == ENOSYS) {
            canopy_log (ctx->h, LOG_INFO, "no backing store: the KVS is not persistent");
            cp->disabled = true;
            canopy_future_destroy (f);
            return 0;
        }
        canopy_log (ctx->h, LOG_CRIT, "cannot read the KVS checkpoints: %s; "
                    "stopping the instance",
                    f ? canopy_future_error_string (f) : strerror (errnum));
        canopy_future_destroy (f);
        request_shutdown (ctx);
        return -1;
    }
    json_array_foreach (list, i, o) {
        const char *rootref = "";
        int version = 0;
        double timestamp = 0;
        char why[256], when[64];

        if (json_unpack (o, "{s:s s:i s:F}", "rootref", &rootref, "version", &version,
                         "timestamp", &timestamp) < 0) {
            snprintf (why, sizeof (why), "it is malformed");
            version = -1;
        }
        format_time (timestamp, when, sizeof (when));
        if (version < 0 || try_root (ctx, rootref, why, sizeof (why)) < 0) {
            canopy_log (ctx->h, LOG_ERR, "skipping the checkpoint of version %d (%s): %s",
                        version, when, why);
            skipped++;
            continue;
        }
        snprintf (ctx->rootref, sizeof (ctx->rootref), "%s", rootref);
        ctx->version = version;
        cp->requested = cp->last_version = cp->restored_version = version;
        cp->last_timestamp = cp->restored_timestamp = timestamp;
        canopy_log (ctx->h, skipped ? LOG_WARNING : LOG_INFO,
                    "restored KVS version %d from the checkpoint of %s (%s)%s",
                    version, when, rootref,
                    skipped ? ", an older checkpoint: newer ones were unusable" : "");
        canopy_future_destroy (f);
        return 1;
    }
    if (skipped > 0) {
        canopy_log (ctx->h, LOG_CRIT, "none of the %d KVS checkpoints can be used; "
                    "refusing to start with an empty KVS; stopping the instance",
                    skipped);
        canopy_future_destroy (f);
        request_shutdown (ctx);
        return -1;
    }
    canopy_future_destroy (f);
    return 0;
}

json_t *checkpointer_stats (struct checkpointer *cp)
{
    return json_pack ("{s:f s:b s:i s:f s:i s:f s:I s:I s:i s:s}",
                      "period", cp->period,
                      "enabled", !cp->disabled,
                      "version", cp->last_version,
                      "timestamp", cp->last_timestamp,
                      "restored-version", cp->restored_version,
                      "restored-timestamp", cp->restored_timestamp,
                      "written", (json_int_t)cp->written,
                      "failed", (json_int_t)cp->failed,
                      "in-flight", list_empty (&cp->writes) ? 0 : 1,
                      "last-error", cp->last_error);
}

struct checkpointer *checkpointer_create (struct kvs_ctx *ctx, double period)
{
    struct checkpointer *cp = calloc (1, sizeof (*cp));
    if (!cp) {
        errno = ENOMEM;
        return NULL;
    }
    cp->ctx = ctx;
    cp->period = period;
    cp->restored_version = -1;
    list_init (&cp->writes);
    if (period > 0) {
        if (!(cp->timer = canopy_timer_watcher_create (ctx->r, period, period,
                                                       timer_cb, cp))) {
            free (cp);
            return NULL;
        }
        canopy_watcher_unref (cp->timer);
        canopy_watcher_start (cp->timer);
    }
    return cp;
}

void checkpointer_destroy (struct checkpointer *cp)
{
    if (cp) {
        int saved = errno;
        while (!list_empty (&cp->writes))
            write_free (list_entry (cp->writes.next, struct write, node));
        canopy_watcher_destroy (cp->timer);
        free (cp);
        errno = saved;
    }
}
