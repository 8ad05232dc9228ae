/* kvs_txn.c - see kvs_txn.h
 *
 * Every call either adds its operation (and the blobs it references) or,
 * failing, leaves the transaction exactly as it was.
 *
 * The operations are kept as JSON text, the elements of the ops array
 * comma separated: a put writes its [key, value] straight into the text
 * (a value as {"data":"B64","type":"val","ver":1}, a valref as
 * {"ver":1,"type":"valref","data":[...]}, as jansson encoded them before;
 * the other operations through the encoder), and kvs_txn_encode puts the
 * text into the fence as it is.  Building jansson objects per put and
 * encoding them at the fence had cost 1.2 us a put and 0.35 us an
 * operation: 16 puts and the encode of 8 B values now take 5.5 us instead
 * of 16 (1 KiB: 18 instead of 41).  kvs_txn_ops parses the text on demand
 * (a cache, dropped by the next put).
 *
 * Chunks are hashed late.  kvs_txn_put_raw copies a large value's chunks
 * into the pending list and writes a placeholder ref of the same length
 * where each chunk's ref goes; the first call that reads the transaction
 * (encode, ops, blobs) hashes every pending chunk in one batch
 * (blobref_hash_many: sixteen at a time with AVX-512), writes the real
 * refs over the placeholders and moves the chunks into the blob table,
 * where identical chunks collapse.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <canopy/kvs.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libutil/base64.h"
#include "src/common/libutil/strbuf.h"
#include "src/common/libcanopy/json_fast.h"
#include "src/common/libcanopy/json_fast_dump.h"
#include "treeobj.h"
#include "kvs_path.h"
#include "kvs_frame.h"
#include "kvs_txn.h"

struct pending {
    size_t off;             /* where its placeholder ref lies in the text */
    void *data;             /* the chunk's bytes (owned) */
    size_t len;
};

struct kvs_txn {
    struct strbuf text;     /* the operations, comma separated */
    int nops;
    json_t *ops;            /* kvs_txn_ops: the text parsed (a cache) */
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
    if (!(txn->blobs = blobtab_create ())) {
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
        free (txn->text.s);
        json_decref (txn->ops);
        blobtab_destroy (txn->blobs);
        for (int i = 0; i < txn->npend; i++)
            free (txn->pend[i].data);
        free (txn->pend);
        free (txn);
        errno = saved_errno;
    }
}

/* Start an operation on the normalised key 'norm': the separator, '[',
 * the key as a JSON string and ','.  A key of plain printable ASCII is
 * copied as it is (what the encoder writes for it); any other goes
 * through the encoder.  The caller rolls the text back on failure.
 */
static int op_begin (kvs_txn_t *txn, const char *norm)
{
    size_t n = strlen (norm);
    bool plain = true;

    for (size_t i = 0; i < n && plain; i++) {
        unsigned char c = norm[i];
        plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    }
    if (txn->nops > 0 && strbuf_putc (&txn->text, ',') < 0)
        return -1;
    if (plain) {
        if (strbuf_put (&txn->text, "[\"", 2) < 0
            || strbuf_put (&txn->text, norm, n) < 0
            || strbuf_put (&txn->text, "\",", 2) < 0)
            return -1;
        return 0;
    }
    json_t *o = json_string (norm);
    char *enc = o ? json_fast_dumps (o, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    int rc = -1;
    json_decref (o);
    if (!enc) {
        errno = o ? ENOMEM : EINVAL;    /* not UTF-8: jansson refuses it */
        return -1;
    }
    if (strbuf_putc (&txn->text, '[') == 0 && strbuf_str (&txn->text, enc) == 0
        && strbuf_putc (&txn->text, ',') == 0)
        rc = 0;
    free (enc);
    return rc;
}

/* The operation is complete: count it, forget the parsed cache. */
static void op_end (kvs_txn_t *txn, const char *norm)
{
    txn->nops++;
    txn->bytes += strlen (norm) + 32;
    json_decref (txn->ops);
    txn->ops = NULL;
}

/* Normalise key; the root takes only a directory (or an unlink). */
static char *key_norm (const char *key, bool dir_or_null)
{
    char *norm = kvs_path_normalize (key);
    if (norm && kvs_path_is_root (norm) && !dir_or_null) {
        free (norm);
        errno = EINVAL;
        return NULL;
    }
    return norm;
}

/* Append [key, obj] (steals obj, may be json_null()). */
static int append_op (kvs_txn_t *txn, const char *key, json_t *obj)
{
    size_t mark = txn->text.len;
    char *norm, *enc = NULL;

    if (!obj) {
        errno = ENOMEM;
        return -1;
    }
    if (!(norm = key_norm (key, json_is_null (obj) || treeobj_is_dir (obj)))) {
        json_decref (obj);
        return -1;
    }
    if (op_begin (txn, norm) < 0
        || !(enc = json_fast_dumps (obj, JSON_ENCODE_ANY | JSON_COMPACT))
        || strbuf_str (&txn->text, enc) < 0
        || strbuf_putc (&txn->text, ']') < 0)
        goto error;
    free (enc);
    json_decref (obj);
    op_end (txn, norm);
    free (norm);
    return 0;
error:
    free (enc);
    json_decref (obj);
    free (norm);
    strbuf_truncate (&txn->text, mark);
    errno = ENOMEM;
    return -1;
}

int kvs_txn_put_raw (kvs_txn_t *txn, const char *key, const void *data, size_t len)
{
    static const char val_head[] = "{\"data\":\"";
    static const char val_tail[] = "\",\"type\":\"val\",\"ver\":1}]";
    static const char ref_tail[] = "]}]";
    size_t mark = txn ? txn->text.len : 0;
    size_t bytes = txn ? txn->bytes : 0;
    int pmark = txn ? txn->npend : 0;
    char *norm = NULL;

    if (!txn || !key || (!data && len > 0)) {
        errno = EINVAL;
        return -1;
    }
    if (len > CANOPY_MSG_SIZE_MAX / 2) {
        errno = EFBIG;
        return -1;
    }
    if (!(norm = key_norm (key, false)))
        return -1;
    if (op_begin (txn, norm) < 0)
        goto nomem;
    if (len <= KVS_INLINE_MAX) {
        /* {"data":"B64","type":"val","ver":1}, as treeobj_create_val
         * encodes */
        size_t b64len = base64_encoded_len (len) - 1;
        if (strbuf_put (&txn->text, val_head, sizeof (val_head) - 1) < 0
            || strbuf_reserve (&txn->text, b64len) < 0)
            goto nomem;
        base64_encode_to (txn->text.s + txn->text.len, data, len);  /* and a NUL */
        txn->text.len += b64len;
        if (strbuf_put (&txn->text, val_tail, sizeof (val_tail) - 1) < 0)
            goto nomem;
        op_end (txn, norm);
        txn->bytes += len * 4 / 3 + 4;
        free (norm);
        return 0;
    }
    /* a valref of placeholder refs, set when the chunks are hashed; a
     * failure takes the chunks added for this value out again
     */
    if (strbuf_put (&txn->text, "{\"ver\":1,\"type\":\"valref\",\"data\":[", 33) < 0)
        goto nomem;
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
        if ((off > 0 && strbuf_putc (&txn->text, ',') < 0)
            || strbuf_putc (&txn->text, '"') < 0)
            goto nomem;
        p = &txn->pend[txn->npend];
        p->off = txn->text.len;
        if (strbuf_put (&txn->text, placeholder, sizeof (placeholder) - 1) < 0
            || strbuf_putc (&txn->text, '"') < 0
            || !(p->data = malloc (n)))
            goto nomem;
        memcpy (p->data, (const char *)data + off, n);
        p->len = n;
        txn->npend++;
        /* an upper bound until the chunks are hashed: identical chunks
         * are counted once only then
         */
        txn->bytes += n + BLOBREF_STRLEN + 4;
    }
    if (strbuf_put (&txn->text, ref_tail, sizeof (ref_tail) - 1) < 0)
        goto nomem;
    op_end (txn, norm);
    free (norm);
    return 0;
nomem:
    errno = ENOMEM;
    while (txn->npend > pmark)
        free (txn->pend[--txn->npend].data);
    txn->bytes = bytes;
    free (norm);
    strbuf_truncate (&txn->text, mark);
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
        if (strlen (refs[done]) != sizeof (placeholder) - 1
            || (added = blobtab_adopt (txn->blobs, refs[done], p->data, p->len)) < 0)
            goto done;
        memcpy (txn->text.s + p->off, refs[done], sizeof (placeholder) - 1);
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
    return txn ? txn->nops : 0;
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
    if (resolve_pending (txn) < 0)
        return NULL;
    if (!txn->ops) {
        struct strbuf b = { 0 };
        if (strbuf_putc (&b, '[') < 0
            || (txn->text.len > 0 && strbuf_put (&b, txn->text.s, txn->text.len) < 0)
            || strbuf_putc (&b, ']') < 0
            || !(txn->ops = json_fast_loadb (b.s, b.len, 0, NULL))) {
            free (b.s);
            errno = ENOMEM;
            return NULL;
        }
        free (b.s);
    }
    return txn->ops;
}

const blobtab_t *kvs_txn_blobs (kvs_txn_t *txn)
{
    if (!txn) {
        errno = EINVAL;
        return NULL;
    }
    return resolve_pending (txn) < 0 ? NULL : txn->blobs;
}

/* The header's "fences" text, [{"name":N,"nprocs":P,"flags":F,"count":1,
 * "ops":[TEXT]}]: the operations are text already, the rest is encoded
 * without them.  Returns 0 with f filled (the caller frees f->s), or -1.
 */
static int fences_text (kvs_txn_t *txn, const char *name, int nprocs, int flags,
                        struct strbuf *f)
{
    json_t *fences;
    char *head = NULL;
    size_t hlen;
    int rc = -1;

    if (!txn || !name || nprocs < 1) {
        errno = EINVAL;
        return -1;
    }
    if (resolve_pending (txn) < 0)
        return -1;
    if (!(fences = json_pack ("[{s:s s:i s:i s:i}]", "name", name,
                              "nprocs", nprocs, "flags", flags, "count", 1))) {
        errno = EINVAL;     /* a name that is not UTF-8 */
        return -1;
    }
    if (!(head = json_fast_dumps (fences, JSON_COMPACT))
        || (hlen = strlen (head)) < 2
        || strbuf_put (f, head, hlen - 2) < 0
        || strbuf_put (f, ",\"ops\":[", 8) < 0
        || (txn->text.len > 0 && strbuf_put (f, txn->text.s, txn->text.len) < 0)
        || strbuf_put (f, "]}]", 3) < 0) {
        free (f->s);
        f->s = NULL;
        errno = ENOMEM;
        goto done;
    }
    rc = 0;
done:
    free (head);
    json_decref (fences);
    return rc;
}

int kvs_txn_encode (kvs_txn_t *txn, const char *name, int nprocs, int flags,
                    void **buf, size_t *len)
{
    struct strbuf f = { 0 };
    int rc;

    if (!buf || !len) {
        errno = EINVAL;
        return -1;
    }
    if (fences_text (txn, name, nprocs, flags, &f) < 0)
        return -1;
    rc = kvs_frame_encode_text (f.s, f.len, txn->blobs, NULL, 0, CANOPY_MSG_SIZE_MAX,
                                buf, len);
    free (f.s);
    return rc;
}

int kvs_txn_encode_msg (kvs_txn_t *txn, const char *name, int nprocs, int flags,
                        canopy_msg_t *msg)
{
    struct strbuf f = { 0 };
    int rc;

    if (!msg) {
        errno = EINVAL;
        return -1;
    }
    if (fences_text (txn, name, nprocs, flags, &f) < 0)
        return -1;
    rc = kvs_frame_encode_text_msg (f.s, f.len, txn->blobs, NULL, 0,
                                    CANOPY_MSG_SIZE_MAX, msg);
    free (f.s);
    return rc;
}
