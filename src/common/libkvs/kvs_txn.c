/* kvs_txn.c - see kvs_txn.h
 *
 * Every call either adds its operation (and the blobs it references) or,
 * failing, leaves the transaction exactly as it was.
 *
 * Chunks are hashed late.  kvs_txn_put_raw copies a large value's chunks
 * into the pending list and gives its valref placeholder refs; the first
 * call that reads the transaction (encode, ops, blobs) hashes every
 * pending chunk in one batch (blobref_hash_many: sixteen at a time with
 * AVX-512), writes the real refs into the valrefs and moves the chunks
 * into the blob table, where identical chunks collapse.  A pending entry
 * borrows its valref from the ops array, which holds it as long as the
 * transaction lives.
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

struct pending {
    json_t *valref;         /* borrowed: held by an op in ops */
    int index;              /* which of its refs is a placeholder */
    void *data;             /* the chunk's bytes (owned) */
    size_t len;
};

struct kvs_txn {
    json_t *ops;
    blobtab_t *blobs;
    size_t bytes;
    struct pending *pend;
    int npend;
    int apend;
};

/* a well-formed ref that stands in until the chunk is hashed */
static const char placeholder[] =
    "sha256-0000000000000000000000000000000000000000000000000000000000000000";

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
        for (int i = 0; i < txn->npend; i++)
            free (txn->pend[i].data);
        free (txn->pend);
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
    int mark = txn->npend;
    size_t bytes = txn->bytes;
    if (!(obj = treeobj_create_valref ()))
        return -1;
    for (size_t off = 0; off < len; off += KVS_CHUNK_SIZE) {
        size_t n = len - off < KVS_CHUNK_SIZE ? len - off : KVS_CHUNK_SIZE;
        struct pending *p;
        if (txn->npend == txn->apend) {
            int na = txn->apend ? txn->apend * 2 : 16;
            struct pending *v = realloc (txn->pend, na * sizeof (*v));
            if (!v)
                goto nomem;
            txn->pend = v;
            txn->apend = na;
        }
        p = &txn->pend[txn->npend];
        if (!(p->data = malloc (n)))
            goto nomem;
        memcpy (p->data, (const char *)data + off, n);
        p->len = n;
        p->valref = obj;
        p->index = treeobj_blobref_count (obj);
        txn->npend++;
        if (treeobj_append_blobref (obj, placeholder) < 0)
            goto error;
        /* an upper bound until the chunks are hashed: identical chunks
         * are counted once only then
         */
        txn->bytes += n + BLOBREF_STRLEN + 4;
    }
    if (append_op (txn, key, obj) < 0) {
        obj = NULL;     /* append_op took it */
        goto error;
    }
    return 0;
nomem:
    errno = ENOMEM;
error:
    json_decref (obj);
    while (txn->npend > mark)
        free (txn->pend[--txn->npend].data);
    txn->bytes = bytes;
    return -1;
}

/* Hash every pending chunk (one batch), set the real refs and move the
 * chunks into the blob table.  On failure the entries not yet moved stay
 * pending (the transaction is unchanged in meaning) and -1 is returned.
 */
static int resolve_pending (kvs_txn_t *txn)
{
    const void **datav = NULL;
    size_t *lenv = NULL;
    char (*refs)[BLOBREF_MAX] = NULL;
    size_t n = (size_t)txn->npend, done = 0;
    int rc = -1;

    if (n == 0)
        return 0;
    if (!(datav = malloc (n * sizeof (*datav))) || !(lenv = malloc (n * sizeof (*lenv)))
        || !(refs = malloc (n * sizeof (*refs)))) {
        errno = ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        datav[i] = txn->pend[i].data;
        lenv[i] = txn->pend[i].len;
    }
    if (blobref_hash_many (n, datav, lenv, refs) < 0)
        goto done;
    for (; done < n; done++) {
        struct pending *p = &txn->pend[done];
        int added;
        if (treeobj_set_blobref (p->valref, p->index, refs[done]) < 0
            || (added = blobtab_adopt (txn->blobs, refs[done], p->data, p->len)) < 0)
            goto done;
        if (added == 0)
            txn->bytes -= p->len;   /* an identical chunk was there */
    }
    rc = 0;
done:
    if (done > 0) {
        memmove (txn->pend, txn->pend + done, (n - done) * sizeof (*txn->pend));
        txn->npend -= (int)done;
    }
    free (datav);
    free (lenv);
    free (refs);
    return rc;
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

json_t *kvs_txn_ops (kvs_txn_t *txn)
{
    if (!txn) {
        errno = EINVAL;
        return NULL;
    }
    return resolve_pending (txn) < 0 ? NULL : txn->ops;
}

const blobtab_t *kvs_txn_blobs (kvs_txn_t *txn)
{
    if (!txn) {
        errno = EINVAL;
        return NULL;
    }
    return resolve_pending (txn) < 0 ? NULL : txn->blobs;
}

int kvs_txn_encode (kvs_txn_t *txn, const char *name, int nprocs, int flags,
                    void **buf, size_t *len)
{
    json_t *fences;
    int rc;

    if (!txn || !name || nprocs < 1) {
        errno = EINVAL;
        return -1;
    }
    if (resolve_pending (txn) < 0)
        return -1;
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
