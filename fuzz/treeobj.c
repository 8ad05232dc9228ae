/* treeobj.c - fuzz treeobj_decode/treeobj_validate and the accessors the
 * KVS uses on objects it loads from the content store or gets from clients.
 *
 * Invariants: a decoded object validates; a valid object's canonical
 * encoding decodes to an equal object and re-encodes to the same bytes
 * (so equal objects hash to equal blobrefs); accessors on the wrong type
 * fail with an errno instead of crashing; the scan of an encoded
 * directory for one name (treeobj_scan.h) never reads outside the text,
 * answers only from text jansson reads, and answers as a decode of the
 * same text would; an index of it (treeobj_index.h) is made exactly when
 * the scan does not decline, and finds what the scan finds.
 */
#include <string.h>
#include <errno.h>
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/treeobj_scan.h"
#include "src/common/libkvs/treeobj_index.h"
#include "src/common/libutil/blobref.h"
#include "fuzz.h"

static void exercise (json_t *o)
{
    void *val;
    size_t len;
    int n;

    (void)treeobj_type (o);
    if (treeobj_decode_val (o, &val, &len) == 0) {
        FUZZ_CHECK (treeobj_is_val (o));
        free (val);
    }
    if ((n = treeobj_blobref_count (o)) >= 0) {
        for (int i = 0; i < n; i++)
            FUZZ_CHECK (blobref_validate (treeobj_blobref_at (o, i)) == 0);
        FUZZ_CHECK (treeobj_blobref_at (o, n) == NULL);
    }
    if ((n = treeobj_dir_count (o)) >= 0) {
        const char *name;
        json_t *entry;
        FUZZ_CHECK (treeobj_is_dir (o));
        json_object_foreach (treeobj_data (o), name, entry) {
            FUZZ_CHECK (treeobj_dir_get (o, name) == entry);
            (void)treeobj_type (entry);
        }
        json_t *copy = treeobj_dir_copy (o);
        FUZZ_CHECK (copy != NULL && treeobj_dir_count (copy) == n);
        FUZZ_CHECK (treeobj_dir_set (copy, "fuzz-new", treeobj_create_dir ()) == 0);
        FUZZ_CHECK (treeobj_dir_count (copy) == n + 1
                    || treeobj_dir_count (copy) == n);  /* already there */
        FUZZ_CHECK (treeobj_dir_remove (copy, "fuzz-new") == 0);
        json_decref (copy);
    }
    if (treeobj_symlink_target (o))
        FUZZ_CHECK (treeobj_is_symlink (o));
    if (treeobj_hdir_level (o) >= 0) {
        FUZZ_CHECK (treeobj_is_hdir (o));
        (void)treeobj_hdir_count (o);
        for (int i = 0; i < TREEOBJ_HDIR_FANOUT; i++) {
            const char *ref = treeobj_hdir_ref (o, i);
            if (ref)
                FUZZ_CHECK (blobref_validate (ref) == 0);
        }
        FUZZ_CHECK (treeobj_hdir_slot (o, TREEOBJ_HDIR_FANOUT) == NULL);
        int b = treeobj_hdir_bucket_of (o, "some.name");
        FUZZ_CHECK (b >= 0 && b < TREEOBJ_HDIR_FANOUT);
        json_t *copy = treeobj_hdir_copy (o);
        FUZZ_CHECK (copy != NULL && json_equal (copy, o));
        json_decref (copy);
    }
}

/* Scan the raw text for 'name': any answer must agree with the decoded
 * object 'o' (NULL: the text does not decode).
 */
static void scan_one (const uint8_t *data, size_t size, json_t *o, const char *name)
{
    size_t off = 0, vlen = 0;
    int rc = treeobj_dir_scan ((const char *)data, size, name, &off, &vlen);

    FUZZ_CHECK (rc >= -1 && rc <= 1);
    if (rc == 1)
        FUZZ_CHECK (off <= size && vlen <= size - off);
    if (rc >= 0 && !o) {
        /* the tree object rules of skipped entries are not the scan's,
         * but the JSON is: a text it answers from is one jansson reads */
        json_t *j = json_loadb ((const char *)data, size, 0, NULL);
        FUZZ_CHECK (j != NULL);
        json_decref (j);
    }
    if (rc < 0 || !o || !treeobj_is_dir (o))
        return;
    json_t *want = treeobj_dir_get (o, name);
    if (rc == 0)
        FUZZ_CHECK (want == NULL);
    else {
        FUZZ_CHECK (want != NULL);
        /* The entry alone may fail to decode: decoding it validates one
         * level deeper than the dir's decode did (the cache then decodes
         * the whole dir instead, objcache_find).  If it decodes, it is
         * the same entry.
         */
        json_t *got = treeobj_decode (data + off, vlen);
        FUZZ_CHECK (got == NULL || json_equal (got, want));
        json_decref (got);
    }
}

/* The index answers as the scan does, and exists exactly when the scan
 * reads the text.
 */
static void index_one (const uint8_t *data, size_t size, const treeobj_index_t *ix,
                       const char *name)
{
    size_t off = 0, vlen = 0, ioff = 0, ivlen = 0;
    int rc = treeobj_dir_scan ((const char *)data, size, name, &off, &vlen);

    if (!ix) {
        FUZZ_CHECK (rc == -1);
        return;
    }
    FUZZ_CHECK (rc >= 0);
    FUZZ_CHECK (treeobj_index_find (ix, (const char *)data, name, &ioff, &ivlen) == rc);
    if (rc == 1)
        FUZZ_CHECK (ioff == off && ivlen == vlen);
}

static void scan (const uint8_t *data, size_t size, json_t *o)
{
    treeobj_index_t *ix = treeobj_index_create ((const char *)data, size);

    FUZZ_CHECK (ix || errno == EPROTO || errno == ENOMEM || errno == EINVAL);
    scan_one (data, size, o, "a");
    scan_one (data, size, o, "key");
    index_one (data, size, ix, "a");
    index_one (data, size, ix, "key");
    if (o && treeobj_is_dir (o)) {
        const char *name;
        json_t *e;
        json_object_foreach (treeobj_data (o), name, e) {
            scan_one (data, size, o, name);
            index_one (data, size, ix, name);
        }
    }
    treeobj_index_destroy (ix);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    json_t *o, *o2;
    char *enc, *enc2;
    size_t len, len2;
    char ref[BLOBREF_MAX], ref2[BLOBREF_MAX];

    if (!(o = treeobj_decode (data, size))) {
        FUZZ_CHECK (errno == EPROTO || errno == ENOMEM);
        scan (data, size, NULL);
        return 0;
    }
    FUZZ_CHECK (treeobj_validate (o) == 0);
    scan (data, size, o);
    exercise (o);
    /* canonical encoding: may fail only on content the validator does not
     * look at (reals nested below the first level)
     */
    if ((enc = treeobj_encode_ref (o, &len, ref, sizeof (ref)))) {
        FUZZ_CHECK ((o2 = treeobj_decode (enc, len)) != NULL);
        FUZZ_CHECK (json_equal (o, o2));
        FUZZ_CHECK ((enc2 = treeobj_encode_ref (o2, &len2, ref2, sizeof (ref2))) != NULL);
        FUZZ_CHECK (len == len2 && memcmp (enc, enc2, len) == 0);
        FUZZ_CHECK (strcmp (ref, ref2) == 0);
        free (enc2);
        json_decref (o2);
        free (enc);
    }
    json_decref (o);
    return 0;
}
