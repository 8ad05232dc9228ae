/* kvs.c - the KVS client API (canopy/kvs.h).
 *
 * Design notes:
 * - Each handle carries one pending transaction (aux "kvs::txn") that the
 *   put family appends to; commit and fence send it and start a new one.
 *   A failed send leaves the pending operations in place.
 * - Lookups return raw value bytes, or JSON for directories, symlinks and
 *   tree objects; the typed getters decode the bytes.
 * - The last service error text is kept per handle for kvs_errstr().
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <inttypes.h>
#include <math.h>
#include <canopy/canopy.h>
#include "src/common/libcanopy/json_fast.h"
#include "src/common/libcanopy/json_fast_dump.h"
#include "src/common/libutil/blobref.h"
#include "treeobj.h"
#include "kvs_path.h"
#include "kvs_txn.h"
#include "kvs_lookup_wire.h"
#include "kvs_shm_client.h"
#include "kvs_private.h"

static void txn_free (void *arg)
{
    kvs_txn_destroy (arg);
}

kvs_txn_t *kvs_handle_txn (canopy_t *h, bool create)
{
    kvs_txn_t *txn = canopy_aux_get (h, "kvs::txn");
    if (!txn && create) {
        if (!(txn = kvs_txn_create ()))
            return NULL;
        if (canopy_aux_set (h, "kvs::txn", txn, txn_free) < 0) {
            kvs_txn_destroy (txn);
            return NULL;
        }
    }
    return txn;
}

void kvs_set_errstr (canopy_t *h, canopy_future_t *f)
{
    const char *s = f ? canopy_future_error_string (f) : NULL;
    char *cpy = s ? strdup (s) : NULL;
    int saved_errno = errno;
    (void)canopy_aux_set (h, "kvs::errstr", cpy, free);
    errno = saved_errno;
}

const char *kvs_errstr (canopy_t *h)
{
    int saved_errno = errno;
    const char *s = h ? canopy_aux_get (h, "kvs::errstr") : NULL;
    errno = saved_errno;
    return s;
}

uint32_t kvs_target (canopy_t *h)
{
    uint32_t *rank = h ? canopy_aux_get (h, "kvs::rank") : NULL;
    return rank ? *rank : CANOPY_NODEID_ANY;
}

int kvs_set_rank (canopy_t *h, uint32_t rank)
{
    uint32_t *p;
    if (!h) {
        errno = EINVAL;
        return -1;
    }
    if (rank == CANOPY_NODEID_ANY)
        return canopy_aux_set (h, "kvs::rank", NULL, NULL);
    if (!(p = malloc (sizeof (*p)))) {
        errno = ENOMEM;
        return -1;
    }
    *p = rank;
    if (canopy_aux_set (h, "kvs::rank", p, free) < 0) {
        free (p);
        return -1;
    }
    return 0;
}

/* Writes */

static kvs_txn_t *txn_for (canopy_t *h)
{
    if (!h) {
        errno = EINVAL;
        return NULL;
    }
    return kvs_handle_txn (h, true);
}

int kvs_put_raw (canopy_t *h, const char *key, const void *data, size_t len)
{
    kvs_txn_t *txn = txn_for (h);
    return txn ? kvs_txn_put_raw (txn, key, data, len) : -1;
}

int kvs_put (canopy_t *h, const char *key, json_t *val)
{
    char *s;
    int rc;
    if (!val) {
        errno = EINVAL;
        return -1;
    }
    if (!(s = json_fast_dumps (val, JSON_COMPACT | JSON_ENCODE_ANY))) {
        errno = ENOMEM;
        return -1;
    }
    rc = kvs_put_raw (h, key, s, strlen (s));
    free (s);
    return rc;
}

int kvs_put_string (canopy_t *h, const char *key, const char *val)
{
    if (!val) {
        errno = EINVAL;
        return -1;
    }
    return kvs_put_raw (h, key, val, strlen (val));
}

int kvs_put_int (canopy_t *h, const char *key, int val)
{
    char buf[32];
    snprintf (buf, sizeof (buf), "%d", val);
    return kvs_put_raw (h, key, buf, strlen (buf));
}

int kvs_put_int64 (canopy_t *h, const char *key, int64_t val)
{
    char buf[32];
    snprintf (buf, sizeof (buf), "%" PRId64, val);
    return kvs_put_raw (h, key, buf, strlen (buf));
}

int kvs_put_double (canopy_t *h, const char *key, double val)
{
    char buf[64];
    if (!isfinite (val)) {
        errno = EINVAL;
        return -1;
    }
    snprintf (buf, sizeof (buf), "%.17g", val);
    return kvs_put_raw (h, key, buf, strlen (buf));
}

int kvs_put_boolean (canopy_t *h, const char *key, bool val)
{
    return kvs_put_raw (h, key, val ? "true" : "false", val ? 4 : 5);
}

int kvs_unlink (canopy_t *h, const char *key)
{
    kvs_txn_t *txn = txn_for (h);
    return txn ? kvs_txn_unlink (txn, key) : -1;
}

int kvs_mkdir (canopy_t *h, const char *key)
{
    kvs_txn_t *txn = txn_for (h);
    return txn ? kvs_txn_mkdir (txn, key) : -1;
}

int kvs_symlink (canopy_t *h, const char *key, const char *target)
{
    kvs_txn_t *txn = txn_for (h);
    return txn ? kvs_txn_symlink (txn, key, target) : -1;
}

void kvs_discard (canopy_t *h)
{
    if (h)
        (void)canopy_aux_set (h, "kvs::txn", NULL, NULL);
}

int kvs_pending (canopy_t *h)
{
    return h ? kvs_txn_count (kvs_handle_txn (h, false)) : 0;
}

/* Commit and fence */

static canopy_future_t *send_txn (canopy_t *h, const char *topic, const char *name,
                                  int nprocs, int flags)
{
    kvs_txn_t *txn;
    kvs_txn_t *empty = NULL;
    canopy_msg_t *msg;
    canopy_future_t *f;

    if (!h || !name || !*name || strlen (name) > 255 || nprocs < 1) {
        errno = EINVAL;
        return NULL;
    }
    if (!(txn = kvs_handle_txn (h, false))) {
        if (!(empty = kvs_txn_create ()))
            return NULL;
        txn = empty;
    }
    /* the transaction is written straight into the request */
    if (!(msg = canopy_rpc_raw_request (topic))
        || kvs_txn_encode_msg (txn, name, nprocs, flags, msg) < 0) {
        int saved_errno = errno;
        canopy_msg_decref (msg);
        kvs_txn_destroy (empty);
        errno = saved_errno;
        return NULL;
    }
    f = canopy_rpc_message (h, msg, kvs_target (h), 0);
    canopy_msg_decref (msg);
    kvs_txn_destroy (empty);
    if (f && !empty)
        kvs_discard (h);    /* sent: start a new transaction */
    return f;
}

canopy_future_t *kvs_commit_async (canopy_t *h, int flags)
{
    return send_txn (h, "kvs.commit", "commit", 1, flags);
}

canopy_future_t *kvs_fence_async (canopy_t *h, const char *name, int nprocs, int flags)
{
    return send_txn (h, "kvs.fence", name, nprocs, flags);
}

int kvs_commit_get (canopy_future_t *f, int *version)
{
    canopy_t *h;
    int v;
    if (canopy_rpc_get_unpack (f, "{s:i}", "version", &v) < 0)
        return -1;
    /* read-your-writes from the local read cache (kvs_shm_client.h) */
    if ((h = canopy_future_get_handle (f)) && kvs_target (h) == CANOPY_NODEID_ANY)
        kvs_shm_client_floor (h, v);
    if (version)
        *version = v;
    return 0;
}

static int wait_txn (canopy_t *h, canopy_future_t *f)
{
    int rc;
    if (!f)
        return -1;
    rc = kvs_commit_get (f, NULL);
    if (rc < 0)
        kvs_set_errstr (h, f);
    canopy_future_destroy (f);
    return rc;
}

int kvs_commit (canopy_t *h, int flags)
{
    return wait_txn (h, kvs_commit_async (h, flags));
}

int kvs_fence (canopy_t *h, const char *name, int nprocs, int flags)
{
    return wait_txn (h, kvs_fence_async (h, name, nprocs, flags));
}

int kvs_fence_abort (canopy_t *h, const char *name, int errnum)
{
    canopy_future_t *f;
    int rc;
    if (!h || !name || errnum <= 0) {
        errno = EINVAL;
        return -1;
    }
    if (!(f = canopy_rpc_pack (h, "kvs.fence-abort", 0, 0, "{s:s s:i}",
                               "name", name, "errnum", errnum)))
        return -1;
    if ((rc = canopy_future_get (f, NULL)) < 0)
        kvs_set_errstr (h, f);
    canopy_future_destroy (f);
    return rc;
}

/* Lookups */

canopy_future_t *kvs_lookup (canopy_t *h, const char *key, int flags)
{
    if (!h || !key) {
        errno = EINVAL;
        return NULL;
    }
    if (strlen (key) > KVS_MAX_KEY) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    char *s = kvs_lookup_wire_encode (key, flags, NULL);
    canopy_future_t *f;
    if (!s)
        return NULL;
    f = canopy_rpc (h, "kvs.lookup", s, kvs_target (h), 0);
    free (s);
    return f;
}

int kvs_lookup_get_raw (canopy_future_t *f, const void **data, size_t *len)
{
    const canopy_msg_t *msg;
    if (canopy_rpc_get_msg (f, &msg) < 0)
        return -1;
    if (!canopy_msg_has_flag (msg, CANOPY_MSGFLAG_RAW)
        && canopy_msg_has_flag (msg, CANOPY_MSGFLAG_PAYLOAD)) {
        errno = EPROTO;
        return -1;
    }
    return canopy_msg_get_payload (msg, data, len);
}

int kvs_lookup_get_treeobj (canopy_future_t *f, json_t **treeobj)
{
    const canopy_msg_t *msg;
    json_t *o;
    if (canopy_rpc_get_msg (f, &msg) < 0 || canopy_msg_get_json (msg, &o) < 0)
        return -1;
    if (treeobj)
        *treeobj = o;
    return 0;
}

/* Bytes that are not JSON are returned as a JSON string when they are
 * valid UTF-8 (so a value stored by kvs_put_string reads back).
 */
static json_t *bytes_to_json (const void *data, size_t len)
{
    json_t *o;
    if (len == 0)
        return json_string ("");
    if ((o = json_fast_loadb (data, len, JSON_DECODE_ANY, NULL)))
        return o;
    if (memchr (data, '\0', len) || !(o = json_stringn (data, len))) {
        errno = EPROTO;
        return NULL;
    }
    return o;
}

int kvs_lookup_get_json (canopy_future_t *f, json_t **val)
{
    const void *data;
    size_t len;
    json_t *o;
    if (kvs_lookup_get_raw (f, &data, &len) < 0)
        return -1;
    if (!(o = bytes_to_json (data, len)))
        return -1;
    if (val)
        *val = o;
    else
        json_decref (o);
    return 0;
}

/* Synchronous lookup of a value's bytes; copies them (NUL-terminated).
 * The local read cache first (kvs_shm_client.h), then the KVS.
 */
static int get_bytes (canopy_t *h, const char *key, char **datap, size_t *lenp)
{
    canopy_future_t *f;
    const void *data;
    size_t len;
    char *cpy;
    int rc;

    if (h && key && (rc = kvs_shm_client_get (h, key, (void **)datap, lenp)) != 0)
        return rc < 0 ? -1 : 0;
    if (!(f = kvs_lookup (h, key, 0)))
        return -1;
    kvs_shm_client_count_rpc (h);
    if (kvs_lookup_get_raw (f, &data, &len) < 0) {
        kvs_set_errstr (h, f);
        canopy_future_destroy (f);
        return -1;
    }
    if (!(cpy = malloc (len + 1))) {
        canopy_future_destroy (f);
        errno = ENOMEM;
        return -1;
    }
    if (len)
        memcpy (cpy, data, len);
    cpy[len] = '\0';
    canopy_future_destroy (f);
    *datap = cpy;
    *lenp = len;
    return 0;
}

int kvs_get_raw (canopy_t *h, const char *key, void **data, size_t *len)
{
    char *buf;
    size_t n;
    if (!data || !len) {
        errno = EINVAL;
        return -1;
    }
    if (get_bytes (h, key, &buf, &n) < 0)
        return -1;
    *data = buf;
    *len = n;
    return 0;
}

int kvs_get (canopy_t *h, const char *key, json_t **val)
{
    char *buf;
    size_t len;
    json_t *o;
    if (!val) {
        errno = EINVAL;
        return -1;
    }
    if (get_bytes (h, key, &buf, &len) < 0)
        return -1;
    o = bytes_to_json (buf, len);
    free (buf);
    if (!o)
        return -1;
    *val = o;
    return 0;
}

int kvs_get_string (canopy_t *h, const char *key, char **val)
{
    char *buf;
    size_t len;
    if (!val) {
        errno = EINVAL;
        return -1;
    }
    if (get_bytes (h, key, &buf, &len) < 0)
        return -1;
    if (memchr (buf, '\0', len)) {
        free (buf);
        errno = EPROTO;
        return -1;
    }
    *val = buf;
    return 0;
}

int kvs_get_int64 (canopy_t *h, const char *key, int64_t *val)
{
    char *buf, *end;
    size_t len;
    long long v;
    if (!val) {
        errno = EINVAL;
        return -1;
    }
    if (get_bytes (h, key, &buf, &len) < 0)
        return -1;
    errno = 0;
    v = strtoll (buf, &end, 10);
    if (errno || end == buf || *end || len == 0) {
        free (buf);
        errno = EPROTO;
        return -1;
    }
    free (buf);
    *val = v;
    return 0;
}

int kvs_get_int (canopy_t *h, const char *key, int *val)
{
    int64_t v;
    if (!val) {
        errno = EINVAL;
        return -1;
    }
    if (kvs_get_int64 (h, key, &v) < 0)
        return -1;
    if (v < INT32_MIN || v > INT32_MAX) {
        errno = ERANGE;
        return -1;
    }
    *val = (int)v;
    return 0;
}

int kvs_get_double (canopy_t *h, const char *key, double *val)
{
    char *buf, *end;
    size_t len;
    double v;
    if (!val) {
        errno = EINVAL;
        return -1;
    }
    if (get_bytes (h, key, &buf, &len) < 0)
        return -1;
    errno = 0;
    v = strtod (buf, &end);
    if (errno || end == buf || *end) {
        free (buf);
        errno = EPROTO;
        return -1;
    }
    free (buf);
    *val = v;
    return 0;
}

int kvs_get_boolean (canopy_t *h, const char *key, bool *val)
{
    char *buf;
    size_t len;
    if (!val) {
        errno = EINVAL;
        return -1;
    }
    if (get_bytes (h, key, &buf, &len) < 0)
        return -1;
    if (!strcmp (buf, "true"))
        *val = true;
    else if (!strcmp (buf, "false"))
        *val = false;
    else {
        free (buf);
        errno = EPROTO;
        return -1;
    }
    free (buf);
    return 0;
}

int kvs_readlink (canopy_t *h, const char *key, char **target)
{
    canopy_future_t *f;
    json_t *o;
    const char *t;
    if (!target) {
        errno = EINVAL;
        return -1;
    }
    if (!(f = kvs_lookup (h, key, KVS_READLINK | KVS_TREEOBJ)))
        return -1;
    if (kvs_lookup_get_treeobj (f, &o) < 0) {
        kvs_set_errstr (h, f);
        canopy_future_destroy (f);
        return -1;
    }
    if (!(t = treeobj_symlink_target (o)) || !(*target = strdup (t))) {
        canopy_future_destroy (f);
        errno = EINVAL;
        return -1;
    }
    canopy_future_destroy (f);
    return 0;
}

/* Versions */

canopy_future_t *kvs_getroot (canopy_t *h)
{
    if (!h) {
        errno = EINVAL;
        return NULL;
    }
    return canopy_rpc (h, "kvs.getroot", "{}", kvs_target (h), 0);
}

int kvs_getroot_get (canopy_future_t *f, int *version, const char **rootref)
{
    int v;
    const char *r;
    if (canopy_rpc_get_unpack (f, "{s:i s:s}", "version", &v, "rootref", &r) < 0)
        return -1;
    if (version)
        *version = v;
    if (rootref)
        *rootref = r;
    return 0;
}

int kvs_get_version (canopy_t *h, int *version)
{
    canopy_future_t *f = kvs_getroot (h);
    int rc;
    if (!f)
        return -1;
    if ((rc = kvs_getroot_get (f, version, NULL)) < 0)
        kvs_set_errstr (h, f);
    canopy_future_destroy (f);
    return rc;
}

canopy_future_t *kvs_wait_version_async (canopy_t *h, int version)
{
    if (!h || version < 0) {
        errno = EINVAL;
        return NULL;
    }
    return canopy_rpc_pack (h, "kvs.wait-version", kvs_target (h), 0,
                            "{s:i}", "version", version);
}

int kvs_wait_version (canopy_t *h, int version)
{
    canopy_future_t *f = kvs_wait_version_async (h, version);
    int rc;
    if (!f)
        return -1;
    if ((rc = canopy_future_get (f, NULL)) < 0)
        kvs_set_errstr (h, f);
    canopy_future_destroy (f);
    return rc;
}

int kvs_dropcache (canopy_t *h, bool all)
{
    uint32_t size = 1;
    int rc = 0;

    if (!h) {
        errno = EINVAL;
        return -1;
    }
    if (all && canopy_get_size (h, &size) < 0)
        return -1;
    for (uint32_t r = 0; r < size; r++) {
        canopy_future_t *f = canopy_rpc (h, "kvs.dropcache", "{}",
                                         all ? r : kvs_target (h), 0);
        if (!f || canopy_future_get (f, NULL) < 0) {
            kvs_set_errstr (h, f);
            rc = -1;
        }
        canopy_future_destroy (f);
    }
    return rc;
}
