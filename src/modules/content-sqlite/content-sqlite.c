/* content-sqlite.c - rank 0's backing store for the content service
 * (DESIGN.md section 5): blobs and KVS checkpoints in SQLite files in the
 * state directory.  Its own thread does the disk I/O, so the content
 * module's reactor never waits for a disk.
 *
 *   content-sqlite.load            raw blobref -> raw blob (ENOENT)
 *   content-sqlite.store           raw [ref(71) u32-be len bytes]... -> {count, added}
 *                                  (one SQLite transaction per shard, no fsync)
 *   content-sqlite.sync            {} once everything stored is durable
 *   content-sqlite.checkpoint-put  {rootref, version, timestamp}: durable
 *                                  (blob files synced first)
 *   content-sqlite.checkpoint-get  {checkpoints: [{rootref, version,
 *                                  timestamp, seq}...]} newest first
 *   content-sqlite.stats           counters
 *
 * Configuration: broker attributes, overridden by module arguments NAME=VALUE
 *   statedir                      the store's directory; unset: a throwaway
 *                                 store in the run directory (no fsync,
 *                                 removed at exit)
 *   content.shards / shards=N     blob files for a new store (1..256, power
 *                                 of 2; default 1)
 *   content.shard-max / shard-max=SIZE   cap per blob file (k, M, G
 *                                 suffixes; default none)
 *   content.validate / validate=none|quick|full   check at open (default
 *                                 quick: PRAGMA quick_check; full also
 *                                 re-hashes every blob)
 *   content.compress-threshold / compress-threshold=BYTES (default 256)
 *   content.checkpoints / checkpoints=N   checkpoints kept (default 5)
 *   content.nice / nice=N         this thread's nice value, 0..19 (default
 *                                 10): the write-back is background work
 *                                 (stores are answered by the content
 *                                 module before they reach it), so on a
 *                                 node whose cores are all busy it yields
 *                                 them to the threads that answer
 *                                 requests; a durability wait (sync,
 *                                 checkpoint) is only slower then
 *
 * Design notes:
 * - Loaded on every rank (broker.modules lists it) but returns at once on
 *   ranks > 0: only rank 0 writes back.
 * - A store that cannot be opened or fails its check is refused: the
 *   reason is logged at LOG_CRIT, the instance is asked to shut down with
 *   status 1, and until then every request is answered with that error, so
 *   nothing that depends on the store (the content module, the KVS
 *   restoring its checkpoint) waits forever.
 * - Every request gets exactly one response; SQLite errors map to errno
 *   (ENOSPC for a full disk) with the SQLite message as text.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <limits.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <canopy/canopy.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/modopt.h"
#include "src/common/libutil/sched_slice.h"
#include "sqlstore.h"

CANOPY_MOD_NAME ("content-sqlite");

struct backing_ctx {
    canopy_t *h;
    sqlstore_t *store;
    struct sqlstore_config cfg;
    char dir[PATH_MAX];
    bool temporary;
    enum sqlstore_check validate;
    int nice;                   /* the nice value asked for */
    int nice_now;               /* this thread's, as set */
    int failed_errnum;          /* the store was refused */
    char failed_text[PATH_MAX + CANOPY_ERROR_TEXT_MAX + 64];
    double open_seconds;
    struct sqlstore_check_result check;
    uint64_t loads, load_misses, stores, store_requests, syncs;
    uint64_t checkpoints_put, errors;
};

static bool refuse (struct backing_ctx *ctx, const canopy_msg_t *msg)
{
    if (ctx->store)
        return false;
    canopy_respond_error (ctx->h, msg, ctx->failed_errnum, ctx->failed_text);
    return true;
}

static void respond_store_error (struct backing_ctx *ctx, const canopy_msg_t *msg,
                                 canopy_error_t *error)
{
    int errnum = errno ? errno : EIO;
    ctx->errors++;
    canopy_respond_error (ctx->h, msg, errnum, error->text);
}

static void load_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    struct backing_ctx *ctx = arg;
    const char *ref;
    uint8_t digest[BLOBREF_HASHLEN];
    void *data;
    size_t len;
    canopy_error_t error;

    if (refuse (ctx, msg))
        return;
    ctx->loads++;
    if (canopy_msg_get_string (msg, &ref) < 0 || !ref
        || blobref_to_digest (ref, digest) < 0) {
        canopy_respond_error (h, msg, EPROTO, "content-sqlite.load takes a blobref");
        return;
    }
    if (sqlstore_get (ctx->store, digest, &data, &len, &error) < 0) {
        if (errno == ENOENT) {
            ctx->load_misses++;
            canopy_respond_error (h, msg, ENOENT, "unknown blob");
        }
        else {
            canopy_log (h, LOG_ERR, "load %s: %s", ref, error.text);
            respond_store_error (ctx, msg, &error);
        }
        return;
    }
    if (canopy_respond_raw (h, msg, data, len) < 0)
        canopy_log_error (h, "load: respond");
    free (data);
}

/* Parse [ref(71) u32-be len bytes]... into blobs (digests in *digests). */
static int parse_batch (const uint8_t *p, size_t size, struct sqlstore_blob **vp,
                        uint8_t **digestsp, int *np)
{
    size_t off = 0;
    int n = 0, alloc = 0;
    struct sqlstore_blob *v = NULL;
    uint8_t *digests = NULL;
    char ref[BLOBREF_MAX];

    while (off < size) {
        if (size - off < BLOBREF_STRLEN + 4)
            goto proto;
        memcpy (ref, p + off, BLOBREF_STRLEN);
        ref[BLOBREF_STRLEN] = '\0';
        off += BLOBREF_STRLEN;
        uint32_t len = ((uint32_t)p[off] << 24) | ((uint32_t)p[off + 1] << 16)
                       | ((uint32_t)p[off + 2] << 8) | p[off + 3];
        off += 4;
        if (len > size - off)
            goto proto;
        if (n == alloc) {
            alloc = alloc ? alloc * 2 : 64;
            struct sqlstore_blob *nv = realloc (v, alloc * sizeof (*v));
            uint8_t *nd = realloc (digests, alloc * BLOBREF_HASHLEN);
            if (nv)
                v = nv;
            if (nd)
                digests = nd;
            if (!nv || !nd) {
                errno = ENOMEM;
                goto error;
            }
        }
        if (blobref_to_digest (ref, digests + n * BLOBREF_HASHLEN) < 0)
            goto proto;
        v[n].data = p + off;
        v[n].len = len;
        n++;
        off += len;
    }
    for (int i = 0; i < n; i++)
        v[i].digest = digests + i * BLOBREF_HASHLEN;
    *vp = v;
    *digestsp = digests;
    *np = n;
    return 0;
proto:
    errno = EPROTO;
error:
    free (v);
    free (digests);
    return -1;
}

static void store_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct backing_ctx *ctx = arg;
    const void *p;
    size_t size;
    struct sqlstore_blob *v = NULL;
    uint8_t *digests = NULL;
    int n = 0, added = 0;
    canopy_error_t error;

    if (refuse (ctx, msg))
        return;
    ctx->store_requests++;
    if (canopy_msg_get_payload (msg, &p, &size) < 0
        || parse_batch (p, size, &v, &digests, &n) < 0) {
        canopy_respond_error (h, msg, errno == ENOMEM ? ENOMEM : EPROTO,
                              "malformed content-sqlite.store request");
        return;
    }
    errno = 0;
    if (sqlstore_put (ctx->store, v, n, &added, &error) < 0)
        respond_store_error (ctx, msg, &error);
    else {
        ctx->stores += n;
        canopy_respond_pack (h, msg, "{s:i s:i}", "count", n, "added", added);
    }
    free (v);
    free (digests);
}

static void sync_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    struct backing_ctx *ctx = arg;
    canopy_error_t error;

    if (refuse (ctx, msg))
        return;
    errno = 0;
    if (sqlstore_sync (ctx->store, &error) < 0) {
        canopy_log (h, LOG_ERR, "sync: %s", error.text);
        respond_store_error (ctx, msg, &error);
        return;
    }
    ctx->syncs++;
    canopy_respond (h, msg, NULL);
}

static void checkpoint_put_cb (canopy_t *h, canopy_msg_handler_t *mh,
                               const canopy_msg_t *msg, void *arg)
{
    struct backing_ctx *ctx = arg;
    const char *rootref;
    int version;
    double timestamp;
    canopy_error_t error;

    if (refuse (ctx, msg))
        return;
    if (canopy_request_unpack (msg, NULL, "{s:s s:i s:F}", "rootref", &rootref,
                               "version", &version, "timestamp", &timestamp) < 0
        || blobref_validate (rootref) < 0) {
        canopy_respond_error (h, msg, EPROTO, "malformed content-sqlite.checkpoint-put");
        return;
    }
    errno = 0;
    if (sqlstore_checkpoint_put (ctx->store, rootref, version, timestamp, &error) < 0) {
        canopy_log (h, LOG_ERR, "checkpoint: %s", error.text);
        respond_store_error (ctx, msg, &error);
        return;
    }
    ctx->checkpoints_put++;
    canopy_respond (h, msg, NULL);
}

static void checkpoint_get_cb (canopy_t *h, canopy_msg_handler_t *mh,
                               const canopy_msg_t *msg, void *arg)
{
    struct backing_ctx *ctx = arg;
    struct sqlstore_checkpoint *v;
    int n;
    json_t *a;
    canopy_error_t error;

    if (refuse (ctx, msg))
        return;
    errno = 0;
    if (sqlstore_checkpoint_list (ctx->store, &v, &n, &error) < 0) {
        respond_store_error (ctx, msg, &error);
        return;
    }
    if (!(a = json_array ()))
        goto nomem;
    for (int i = 0; i < n; i++) {
        json_t *o = json_pack ("{s:s s:i s:f s:I}", "rootref", v[i].rootref,
                               "version", v[i].version, "timestamp", v[i].timestamp,
                               "seq", (json_int_t)v[i].seq);
        if (!o || json_array_append_new (a, o) < 0) {
            json_decref (a);
            goto nomem;
        }
    }
    free (v);
    if (canopy_respond_pack (h, msg, "{s:o}", "checkpoints", a) < 0)
        canopy_log_error (h, "checkpoint-get: respond");
    return;
nomem:
    free (v);
    canopy_respond_error (h, msg, ENOMEM, NULL);
}

static const char *check_name (enum sqlstore_check c)
{
    return c == SQLSTORE_CHECK_FULL ? "full" : c == SQLSTORE_CHECK_QUICK ? "quick" : "none";
}

static void stats_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    struct backing_ctx *ctx = arg;
    struct sqlstore_stats st;
    canopy_error_t error;

    if (refuse (ctx, msg))
        return;
    errno = 0;
    if (sqlstore_stats (ctx->store, &st, &error) < 0) {
        respond_store_error (ctx, msg, &error);
        return;
    }
    canopy_respond_pack (h, msg,
        "{s:s s:b s:i s:I s:I s:I s:I s:s s:i s:f s:f s:I"
        " s:{s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I s:I}}",
        "statedir", ctx->dir,
        "temporary", ctx->temporary,
        "shards", st.shards,
        "blobs", (json_int_t)st.blobs,
        "raw-bytes", (json_int_t)st.raw_bytes,
        "stored-bytes", (json_int_t)st.stored_bytes,
        "file-bytes", (json_int_t)st.file_bytes,
        "validate", check_name (ctx->validate),
        "nice", ctx->nice_now,
        "open-seconds", ctx->open_seconds,
        "check-seconds", ctx->check.seconds,
        "check-blobs", (json_int_t)ctx->check.blobs,
        "counters",
            "loads", (json_int_t)ctx->loads,
            "load-misses", (json_int_t)ctx->load_misses,
            "store-requests", (json_int_t)ctx->store_requests,
            "stores", (json_int_t)ctx->stores,
            "blobs-added", (json_int_t)st.puts,
            "bytes-added", (json_int_t)st.put_bytes,
            "compressed", (json_int_t)st.compressed,
            "syncs", (json_int_t)st.syncs,
            "sync-requests", (json_int_t)ctx->syncs,
            "checkpoints", (json_int_t)ctx->checkpoints_put,
            "errors", (json_int_t)ctx->errors);
}

static const struct canopy_msg_handler_spec htab[] = {
    { CANOPY_MSGTYPE_REQUEST, "content-sqlite.load", load_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "content-sqlite.store", store_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "content-sqlite.sync", sync_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "content-sqlite.checkpoint-put", checkpoint_put_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "content-sqlite.checkpoint-get", checkpoint_get_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "content-sqlite.stats", stats_cb, CANOPY_ROLE_USER },
    CANOPY_MSGHANDLER_TABLE_END,
};

/* Configuration */

static int parse_size (const char *s, int64_t *out)
{
    char *end;
    double d = strtod (s, &end);
    if (end == s || d < 0)
        return -1;
    switch (*end) {
        case 'k': case 'K': d *= 1024; end++; break;
        case 'm': case 'M': d *= 1024 * 1024; end++; break;
        case 'g': case 'G': d *= 1024.0 * 1024 * 1024; end++; break;
        default: break;
    }
    if (*end == 'i' || *end == 'B')
        end++;
    if (*end == 'B')
        end++;
    if (*end || d > 9e18)
        return -1;
    *out = (int64_t)d;
    return 0;
}

static int set_option (void *arg, const char *name, const char *value,
                       canopy_error_t *error)
{
    struct backing_ctx *ctx = arg;
    int64_t v;
    if (!strcmp (name, "validate")) {
        if (!strcmp (value, "none"))
            ctx->validate = SQLSTORE_CHECK_NONE;
        else if (!strcmp (value, "quick"))
            ctx->validate = SQLSTORE_CHECK_QUICK;
        else if (!strcmp (value, "full"))
            ctx->validate = SQLSTORE_CHECK_FULL;
        else
            return -1;
        return 0;
    }
    if (parse_size (value, &v) < 0)
        return -1;
    if (!strcmp (name, "shards") && v >= 1 && v <= 256)
        ctx->cfg.shards = (int)v;
    else if (!strcmp (name, "shard-max"))
        ctx->cfg.shard_max_bytes = v;
    else if (!strcmp (name, "compress-threshold"))
        ctx->cfg.compress_threshold = (size_t)v;
    else if (!strcmp (name, "checkpoints") && v >= 1 && v <= 1000)
        ctx->cfg.keep_checkpoints = (int)v;
    else if (!strcmp (name, "nice") && v <= 19)
        ctx->nice = (int)v;
    else
        return -1;
    return 0;
}

static int configure (struct backing_ctx *ctx, int argc, char **argv)
{
    static const char *names[] = { "shards", "shard-max", "validate",
                                   "compress-threshold", "checkpoints", "nice",
                                   NULL };
    const char *statedir;
    canopy_error_t error;

    ctx->cfg.shards = 1;
    ctx->cfg.compress_threshold = 256;
    ctx->cfg.keep_checkpoints = 5;
    ctx->nice = 10;
    ctx->validate = SQLSTORE_CHECK_QUICK;
    if (modopt_apply (ctx->h, canopy_attr_get, "content", names, argc, argv,
                      set_option, ctx, &error) < 0) {
        canopy_log (ctx->h, LOG_ERR, "%s", error.text);
        errno = EINVAL;
        return -1;
    }
    if ((statedir = canopy_attr_get (ctx->h, "statedir")) && *statedir)
        snprintf (ctx->dir, sizeof (ctx->dir), "%s", statedir);
    else {
        const char *rundir = canopy_attr_get (ctx->h, "rundir");
        if (!rundir) {
            canopy_log (ctx->h, LOG_ERR, "neither statedir nor rundir is set");
            errno = EINVAL;
            return -1;
        }
        snprintf (ctx->dir, sizeof (ctx->dir), "%s", rundir);
        ctx->temporary = true;
    }
    ctx->cfg.dir = ctx->dir;
    ctx->cfg.durability = ctx->temporary ? SQLSTORE_VOLATILE : SQLSTORE_DURABLE;
    return 0;
}

/* Lower this thread's priority to ctx->nice (Linux: a thread's own nice
 * value, set through its thread id).  Raising a nice value needs no
 * privilege; a failure is logged and changes nothing else.
 */
static void set_nice (struct backing_ctx *ctx)
{
    id_t tid = (id_t)syscall (SYS_gettid);

    errno = 0;
    ctx->nice_now = getpriority (PRIO_PROCESS, tid);
    if (ctx->nice_now == -1 && errno != 0)
        ctx->nice_now = 0;
    if (ctx->nice <= ctx->nice_now)
        return;
    if (setpriority (PRIO_PROCESS, tid, ctx->nice) < 0)
        canopy_log (ctx->h, LOG_WARNING, "cannot set the write-back's nice value"
                    " to %d: %s", ctx->nice, strerror (errno));
    else
        ctx->nice_now = ctx->nice;
}

/* The store cannot be used: say why, and stop the instance. */
static void refuse_store (struct backing_ctx *ctx, int errnum, const char *text)
{
    canopy_future_t *f;

    ctx->failed_errnum = errnum ? errnum : EIO;
    snprintf (ctx->failed_text, sizeof (ctx->failed_text),
              "content store in %s refused: %s", ctx->dir, text);
    canopy_log (ctx->h, LOG_CRIT, "%s; stopping the instance", ctx->failed_text);
    f = canopy_rpc_pack (ctx->h, "broker.shutdown", 0, 0, "{s:i}", "exitcode", 1);
    if (!f || canopy_future_get (f, NULL) < 0)
        canopy_log (ctx->h, LOG_ERR, "cannot request shutdown: %s",
                    f ? canopy_future_error_string (f) : strerror (errno));
    canopy_future_destroy (f);
}

static void open_store (struct backing_ctx *ctx)
{
    canopy_error_t error;
    double t0 = monotime ();

    if (ctx->temporary)
        sqlstore_remove_files (ctx->dir);   /* a run directory used before */
    errno = 0;
    if (!(ctx->store = sqlstore_open (&ctx->cfg, &error))) {
        refuse_store (ctx, errno, error.text);
        return;
    }
    ctx->open_seconds = monotime () - t0;
    if (sqlstore_is_new (ctx->store))
        ctx->validate = SQLSTORE_CHECK_NONE;    /* nothing to check */
    errno = 0;
    if (sqlstore_check (ctx->store, ctx->validate, &ctx->check, &error) < 0) {
        int errnum = errno;
        sqlstore_close (ctx->store);
        ctx->store = NULL;
        refuse_store (ctx, errnum, error.text);
        return;
    }
    if (!ctx->temporary) {
        canopy_log (ctx->h, LOG_INFO, "%s store in %s: %d shard%s, %s check in %.4fs%s",
                    sqlstore_is_new (ctx->store) ? "new" : "opened", ctx->dir,
                    sqlstore_shards (ctx->store),
                    sqlstore_shards (ctx->store) > 1 ? "s" : "",
                    check_name (ctx->validate), ctx->check.seconds,
                    ctx->validate == SQLSTORE_CHECK_FULL ? " (every blob re-hashed)" : "");
        if (!sqlstore_is_new (ctx->store) && ctx->cfg.shards != sqlstore_shards (ctx->store))
            canopy_log (ctx->h, LOG_INFO, "the store keeps its %d shards (%d asked for)",
                        sqlstore_shards (ctx->store), ctx->cfg.shards);
    }
}

int mod_main (canopy_t *h, int argc, char **argv)
{
    struct backing_ctx ctx;
    canopy_msg_handler_t **handlers = NULL;
    uint32_t rank;
    int rc = -1;

    memset (&ctx, 0, sizeof (ctx));
    ctx.h = h;
    if (canopy_get_rank (h, &rank) < 0)
        return -1;
    if (rank != 0)
        return 0;       /* the backing store lives on rank 0 only */
    if (configure (&ctx, argc, argv) < 0)
        return -1;
    set_nice (&ctx);
    /* background work: not the short slice of the broker's other threads
     * (broker.sched-slice), which would let it run ahead of the ranks */
    (void)sched_slice_set (0);
    if (canopy_msg_handler_addvec (h, htab, &ctx, &handlers) < 0)
        goto done;
    open_store (&ctx);
    rc = canopy_reactor_run (canopy_get_reactor (h), 0);
done:
    canopy_msg_handler_delvec (handlers);
    if (ctx.store) {
        canopy_error_t error;
        if (!ctx.temporary && sqlstore_sync (ctx.store, &error) < 0)
            canopy_log (h, LOG_ERR, "final sync: %s", error.text);
        sqlstore_close (ctx.store);
        if (ctx.temporary)
            sqlstore_remove_files (ctx.dir);
    }
    return rc;
}
