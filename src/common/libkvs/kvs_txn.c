/* kvs_txn.c - see kvs_txn.h
 *
 * Every call either adds its operation (and the blobs it references) or,
 * failing, leaves the transaction exactly as it was.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <canopy/kvs.h>
#include "src/common/libutil/blobref.h"
#include "treeobj.h"
#include "kvs_path.h"
#include "kvs_wire.h"
#include "kvs_txn.h"

struct kvs_txn {
    json_t *ops;
    blobtab_t *blobs;
    size_t bytes;
};

kvs_txn_t *kvs_txn_create (void)
{
    kvs_txn_t *txn = calloc (1, sizeof (*txn));
    if (!txn) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(txn->ops = json_array ()) || !(txn->blobs = blobtab_create ())) {
        kvs_txn_destroy (txn);
        errno = ENOMEM;
        return NULL;
    }
    return txn;
}

void kvs_txn_destroy (kvs_txn_t *txn)
{
    if (txn) {
        int saved_errno = errno;
        json_decref (txn->ops);
        blobtab_destroy (txn->blobs);
        free (txn);
        errno = saved_errno;
    }
}

/* Append [key, obj] (steals obj, may be json_null()). */
static int append_op (kvs_txn_t *txn, const char *key, json_t *obj)
{
    char *norm;
    json_t *op;

    if (!obj)
        return -1;
    if (!(norm = kvs_path_normalize (key))) {
        json_decref (obj);
        return -1;
    }
    if (kvs_path_is_root (norm) && !json_is_null (obj) && !treeobj_is_dir (obj)) {
        free (norm);
        json_decref (obj);
        errno = EINVAL;
        return -1;
    }
    if (!(op = json_pack ("[s,o]", norm, obj))
        || json_array_append_new (txn->ops, op) < 0) {
        free (norm);
        errno = ENOMEM;
        return -1;
    }
    txn->bytes += strlen (norm) + 32;
    free (norm);
    return 0;
}

int kvs_txn_put_raw (kvs_txn_t *txn, const char *key, const void *data, size_t len)
{
    json_t *obj;

    if (!txn || !key || (!data && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (len > CANOPY_MSG_SIZE_MAX / 2) {
        errno = EFBIG;
        return -1;
    }
    if (len <= KVS_INLINE_MAX) {
        if (!(obj = treeobj_create_val (data, len)) || append_op (txn, key, obj) < 0)
            return -1;
        txn->bytes += len * 4 / 3 + 4;
        return 0;
    }
    /* a failure leaves the transaction as it was: the chunks added for
     * this value are taken out again
     */
    int mark = blobtab_count (txn->blobs);
    size_t bytes = txn->bytes;
    if (!(obj = treeobj_create_valref ()))
        return -1;
    for (size_t off = 0; off < len; off += KVS_CHUNK_SIZE) {
        size_t n = len - off < KVS_CHUNK_SIZE ? len - off : KVS_CHUNK_SIZE;
        char ref[BLOBREF_MAX];
        int rc = blobtab_add (txn->blobs, NULL, (const char *)data + off, n,
                              ref, sizeof (ref));
        if (rc < 0 || treeobj_append_blobref (obj, ref) < 0) {
            json_decref (obj);
            goto error;
        }
        if (rc == 1)
            txn->bytes += n;
        txn->bytes += BLOBREF_STRLEN + 4;
    }
    if (append_op (txn, key, obj) < 0)
        goto error;
    return 0;
error:
    blobtab_truncate (txn->blobs, mark);
    txn->bytes = bytes;
    return -1;
}

int kvs_txn_unlink (kvs_txn_t *txn, const char *key)
{
    if (!txn || !key) {
        errno = EINVAL;
        return -1;
    }
    return append_op (txn, key, json_null ());
}

int kvs_txn_mkdir (kvs_txn_t *txn, const char *key)
{
    if (!txn || !key) {
        errno = EINVAL;
        return -1;
    }
    return append_op (txn, key, treeobj_create_dir ());
}

int kvs_txn_symlink (kvs_txn_t *txn, const char *key, const char *target)
{
    char *norm;
    json_t *obj;

    if (!txn || !key || !target) {
        errno = EINVAL;
        return -1;
    }
    if (!(norm = kvs_path_normalize (target)))
        return -1;
    obj = treeobj_create_symlink (norm);
    free (norm);
    return append_op (txn, key, obj);
}

int kvs_txn_count (const kvs_txn_t *txn)
{
    return txn ? (int)json_array_size (txn->ops) : 0;
}

size_t kvs_txn_bytes (const kvs_txn_t *txn)
{
    return txn ? txn->bytes : 0;
}

json_t *kvs_txn_ops (const kvs_txn_t *txn)
{
    return txn ? txn->ops : NULL;
}

const blobtab_t *kvs_txn_blobs (const kvs_txn_t *txn)
{
    return txn ? txn->blobs : NULL;
}

int kvs_txn_encode (const kvs_txn_t *txn, const char *name, int nprocs, int flags,
                    void **buf, size_t *len)
{
    json_t *fences;
    int rc;

    if (!txn || !name || nprocs < 1) {
        errno = EINVAL;
        return -1;
    }
    if (!(fences = json_pack ("[{s:s s:i s:i s:i s:O}]", "name", name,
                              "nprocs", nprocs, "flags", flags, "count", 1,
                              "ops", txn->ops))) {
        errno = ENOMEM;
        return -1;
    }
    rc = kvs_wire_encode (fences, txn->blobs, buf, len);
    json_decref (fences);
    return rc;
}
