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
#include "kvs_frame.h"
#include "kvs_wire.h"

int kvs_wire_encode (json_t *fences, const blobtab_t *blobs, void **bufp, size_t *lenp)
{
    return kvs_frame_encode (fences, blobs, NULL, 0, CANOPY_MSG_SIZE_MAX, bufp, lenp);
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

int kvs_wire_decode (const void *buf, size_t len, bool verify,
                     json_t **fencesp, blobtab_t **blobsp, canopy_error_t *error)
{
    json_t *hdr = NULL, *fences, *table, *v;
    blobtab_t *blobs = NULL;
    size_t off, i;

    if (kvs_frame_header (buf, len, "transaction", &hdr, &fences, &table,
                          &off, error) < 0)
        return -1;
    json_array_foreach (fences, i, v) {
        if (check_fence (v, error) < 0)
            goto error;
    }
    if (!(blobs = blobtab_create ()))
        goto error;
    if (kvs_frame_blobs (buf, len, off, table, verify, "transaction", blobs,
                         error) < 0)
        goto error;
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
