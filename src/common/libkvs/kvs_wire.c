/* kvs_wire.c - see kvs_wire.h */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <canopy/kvs.h>
#include "src/common/libutil/errprintf.h"
#include "src/common/libutil/blobref.h"
#include "treeobj.h"
#include "kvs_path.h"
#include "kvs_wire.h"

int kvs_wire_encode (json_t *fences, const blobtab_t *blobs, void **bufp, size_t *lenp)
{
    json_t *hdr = NULL, *refs = NULL;
    char *s = NULL;
    size_t hlen, total;
    uint8_t *buf, *p;
    int n = blobtab_count (blobs);

    if (!fences || !json_is_array (fences) || !bufp || !lenp) {
        errno = EINVAL;
        return -1;
    }
    if (!(refs = json_array ()))
        goto nomem;
    for (int i = 0; i < n; i++) {
        const char *ref;
        size_t len;
        (void)blobtab_at (blobs, i, &ref, NULL, &len);
        if (json_array_append_new (refs, json_pack ("[s,I]", ref, (json_int_t)len)) < 0)
            goto nomem;
    }
    if (!(hdr = json_pack ("{s:O s:O}", "fences", fences, "blobs", refs))
        || !(s = json_dumps (hdr, JSON_COMPACT)))
        goto nomem;
    hlen = strlen (s);
    total = 4 + hlen + blobtab_bytes (blobs);
    if (total > CANOPY_MSG_SIZE_MAX) {
        free (s);
        json_decref (hdr);
        json_decref (refs);
        errno = EFBIG;
        return -1;
    }
    if (!(buf = malloc (total + 1)))
        goto nomem;
    buf[0] = hlen >> 24;
    buf[1] = hlen >> 16;
    buf[2] = hlen >> 8;
    buf[3] = hlen;
    memcpy (buf + 4, s, hlen);
    p = buf + 4 + hlen;
    for (int i = 0; i < n; i++) {
        const void *data;
        size_t len;
        (void)blobtab_at (blobs, i, NULL, &data, &len);
        memcpy (p, data, len);
        p += len;
    }
    free (s);
    json_decref (hdr);
    json_decref (refs);
    *bufp = buf;
    *lenp = total;
    return 0;
nomem:
    free (s);
    json_decref (hdr);
    json_decref (refs);
    errno = ENOMEM;
    return -1;
}

int kvs_wire_check_op (json_t *op, const blobtab_t *blobs, canopy_error_t *error)
{
    const char *key;
    json_t *obj;
    char *norm;

    if (!json_is_array (op) || json_array_size (op) != 2
        || !json_is_string (json_array_get (op, 0))) {
        errno = EPROTO;
        return errprintf (error, "malformed operation");
    }
    key = json_string_value (json_array_get (op, 0));
    obj = json_array_get (op, 1);
    if (!(norm = kvs_path_normalize (key))) {
        int e = errno;
        errprintf (error, e == ENAMETOOLONG ? "key too long" : "invalid key '%.64s'", key);
        errno = e;
        return -1;
    }
    if (kvs_path_is_root (norm) && !json_is_null (obj) && !treeobj_is_dir (obj)) {
        free (norm);
        errno = EINVAL;
        return errprintf (error, "the root can only be replaced by a directory");
    }
    free (norm);
    if (json_is_null (obj))
        return 0;
    if (treeobj_validate (obj) < 0) {
        errno = EPROTO;
        return errprintf (error, "invalid tree object for key '%.64s'", key);
    }
    if (treeobj_is_val (obj) || treeobj_is_symlink (obj))
        return 0;
    if (treeobj_is_dir (obj)) {
        if (treeobj_dir_count (obj) != 0) {
            errno = EINVAL;
            return errprintf (error, "only an empty directory may be put");
        }
        return 0;
    }
    if (treeobj_is_valref (obj)) {
        int n = treeobj_blobref_count (obj);
        for (int i = 0; i < n; i++) {
            if (!blobtab_has (blobs, treeobj_blobref_at (obj, i))) {
                errno = EPROTO;
                return errprintf (error, "value of '%.64s' references a missing blob",
                                  key);
            }
        }
        return 0;
    }
    errno = EINVAL;
    return errprintf (error, "tree objects of type %s may not be put", treeobj_type (obj));
}

/* The integers are read as json_int_t and range-checked: the kvs module
 * reads them back as int, and json_unpack "i" truncates, so nprocs 2^32+5
 * passed as 5 (caught by the fuzz/kvs_wire invariants; regression inputs in
 * fuzz/regressions/kvs_wire/).
 */
static int check_fence (json_t *f, canopy_error_t *error)
{
    const char *name;
    json_int_t nprocs, flags, count;
    json_t *ops = NULL;
    json_int_t errnum = 0;
    json_t *userid;

    if (json_unpack (f, "{s:s s:I s:I s:I s?o s?I}", "name", &name,
                     "nprocs", &nprocs, "flags", &flags, "count", &count,
                     "ops", &ops, "errnum", &errnum) < 0
        || !*name || strlen (name) > 255 || nprocs < 1 || nprocs > INT_MAX
        || count < 0 || count > nprocs || flags < INT_MIN || flags > INT_MAX
        || errnum < 0 || errnum > INT_MAX
        || ((userid = json_object_get (f, "userid"))
            && (!json_is_integer (userid) || json_integer_value (userid) < 0
                || json_integer_value (userid) > UINT32_MAX))
        || (errnum == 0 && (!ops || !json_is_array (ops)))) {
        errno = EPROTO;
        return errprintf (error, "malformed transaction header");
    }
    return 0;
}

static uint32_t get32 (const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16)
         | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

int kvs_wire_decode (const void *buf, size_t len, bool verify,
                     json_t **fencesp, blobtab_t **blobsp, canopy_error_t *error)
{
    const uint8_t *p = buf;
    uint32_t hlen;
    json_t *hdr = NULL, *fences, *refs, *v;
    blobtab_t *blobs = NULL;
    size_t off, i;
    json_error_t jerr;

    if (!buf || len < 4) {
        errno = EPROTO;
        return errprintf (error, "transaction too short");
    }
    hlen = get32 (p);
    if (hlen > len - 4) {
        errno = EPROTO;
        return errprintf (error, "transaction header length is wrong");
    }
    if (!(hdr = json_loadb ((const char *)p + 4, hlen, 0, &jerr))
        || json_unpack (hdr, "{s:o s:o}", "fences", &fences, "blobs", &refs) < 0
        || !json_is_array (fences) || !json_is_array (refs)) {
        json_decref (hdr);
        errno = EPROTO;
        return errprintf (error, "malformed transaction header");
    }
    json_array_foreach (fences, i, v) {
        if (check_fence (v, error) < 0)
            goto error;
    }
    if (!(blobs = blobtab_create ()))
        goto error;
    off = 4 + hlen;
    json_array_foreach (refs, i, v) {
        const char *ref;
        json_int_t blen;
        char computed[BLOBREF_MAX];
        if (json_unpack (v, "[s,I]", &ref, &blen) < 0 || blen < 0
            || (size_t)blen > len - off || blobref_validate (ref) < 0) {
            errno = EPROTO;
            errprintf (error, "malformed blob table");
            goto error;
        }
        if (verify) {
            if (blobref_hash (p + off, blen, computed, sizeof (computed)) < 0)
                goto error;
            if (strcmp (computed, ref) != 0) {
                errno = EPROTO;
                errprintf (error, "blob %s does not match its data", ref);
                goto error;
            }
        }
        if (blobtab_add (blobs, ref, p + off, blen, NULL, 0) < 0)
            goto error;
        off += blen;
    }
    if (off != len) {
        errno = EPROTO;
        errprintf (error, "transaction has trailing bytes");
        goto error;
    }
    *fencesp = json_incref (fences);
    *blobsp = blobs;
    json_decref (hdr);
    return 0;
error:
    {
        int saved_errno = errno;
        json_decref (hdr);
        blobtab_destroy (blobs);
        errno = saved_errno;
    }
    return -1;
}
