/* kvs_shm.c - fuzz the reader of the KVS shared read cache (kvs_shm_get),
 * which client processes run on memory another process writes.
 *
 * A segment holding a small tree (a plain directory, an hdir of two
 * levels' worth of buckets, inline values, a two-chunk value) is built
 * once; each input is a list of patches applied to a copy of it: five
 * bytes each, a little-endian offset (modulo the segment's size) and the
 * byte to write there.  Anything may be patched, the header included.
 *
 * Invariants: a reader refusing the segment is fine (EPROTO); otherwise
 * every get returns HIT (with a NUL after the value's bytes), MISS or
 * CLOSED, never faults; without patches every key gives its value.
 */
#include <string.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/kvs_shm.h"
#include "fuzz.h"

#define SEG_SIZE (64 * 1024)
#define NHDIR 40

static uint64_t pristine[SEG_SIZE / 8];
static uint64_t work[SEG_SIZE / 8];
static bool built;

static const char *store (kvs_shm_t *w, json_t *obj, char *ref)
{
    size_t len;
    char *enc = treeobj_encode_ref (obj, &len, ref, BLOBREF_MAX);
    FUZZ_CHECK (enc != NULL);
    FUZZ_CHECK (kvs_shm_put (w, ref, enc, len) >= 0);
    free (enc);
    json_decref (obj);
    return ref;
}

static void build (void)
{
    kvs_shm_t *w = kvs_shm_format (pristine, SEG_SIZE, true);  /* static: zeros */
    char ref[BLOBREF_MAX], c1[BLOBREF_MAX], c2[BLOBREF_MAX];
    json_t *a = treeobj_create_dir ();
    json_t *v = treeobj_create_valref ();
    json_t *hdir = treeobj_create_hdir (0);
    json_t *buckets[TREEOBJ_HDIR_FANOUT] = { NULL };
    json_t *root = treeobj_create_dir ();

    FUZZ_CHECK (w && a && v && hdir && root);
    FUZZ_CHECK (blobref_hash ("chunk-one", 9, c1, sizeof (c1)) == 0);
    FUZZ_CHECK (blobref_hash ("chunk-two", 9, c2, sizeof (c2)) == 0);
    FUZZ_CHECK (kvs_shm_put (w, c1, "chunk-one", 9) == 1);
    FUZZ_CHECK (kvs_shm_put (w, c2, "chunk-two", 9) == 1);
    treeobj_append_blobref (v, c1);
    treeobj_append_blobref (v, c2);
    treeobj_dir_set (a, "b", treeobj_create_val ("1", 1));
    treeobj_dir_set (a, "c", v);
    for (int i = 0; i < NHDIR; i++) {
        char name[16];
        snprintf (name, sizeof (name), "k%d", i);
        int b = treeobj_hdir_bucket_of (hdir, name);
        if (!buckets[b])
            buckets[b] = treeobj_create_dir ();
        treeobj_dir_set (buckets[b], name, treeobj_create_val (name, strlen (name)));
    }
    for (int b = 0; b < TREEOBJ_HDIR_FANOUT; b++) {
        if (buckets[b])
            treeobj_hdir_set_slot (hdir, b, json_string (store (w, buckets[b], ref)));
    }
    treeobj_hdir_set_count (hdir, NHDIR);
    treeobj_dir_set (root, "a", treeobj_create_dirref (store (w, a, ref)));
    treeobj_dir_set (root, "h", treeobj_create_dirref (store (w, hdir, ref)));
    treeobj_dir_set (root, "t", treeobj_create_val ("top", 3));
    kvs_shm_set_root (w, 7, store (w, root, ref));
    kvs_shm_destroy (w);
    built = true;
}

static const struct {
    const char *key;
    const char *value;
} keys[] = {
    { "t", "top" }, { "a.b", "1" }, { "a.c", "chunk-onechunk-two" },
    { "h.k0", "k0" }, { "h.k39", "k39" }, { "h.k17", "k17" },
    { "a", NULL }, { "a.x", NULL }, { "h.none", NULL }, { "a.b.c", NULL },
};

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    kvs_shm_reader_t *r;

    if (!built)
        build ();
    memcpy (work, pristine, SEG_SIZE);
    for (size_t i = 0; i + 5 <= size; i += 5) {
        uint32_t off = (uint32_t)data[i] | (uint32_t)data[i + 1] << 8
                       | (uint32_t)data[i + 2] << 16 | (uint32_t)data[i + 3] << 24;
        ((uint8_t *)work)[off % SEG_SIZE] = data[i + 4];
    }
    if (!(r = kvs_shm_reader_create (work, SEG_SIZE))) {
        FUZZ_CHECK (errno == EPROTO);
        return 0;
    }
    for (size_t k = 0; k < sizeof (keys) / sizeof (keys[0]); k++) {
        void *val = NULL;
        size_t len = 0;
        int rc = kvs_shm_get (r, keys[k].key, 0, &val, &len);
        FUZZ_CHECK (rc == KVS_SHM_HIT || rc == KVS_SHM_MISS || rc == KVS_SHM_CLOSED);
        if (rc == KVS_SHM_HIT) {
            FUZZ_CHECK (((char *)val)[len] == '\0');
            free (val);
        }
        if (size < 5) {     /* untouched: the tree as built */
            FUZZ_CHECK (rc == (keys[k].value ? KVS_SHM_HIT : KVS_SHM_MISS));
        }
        if (size < 5 && keys[k].value) {
            val = NULL;
            FUZZ_CHECK (kvs_shm_get (r, keys[k].key, 0, &val, &len) == KVS_SHM_HIT);
            FUZZ_CHECK (len == strlen (keys[k].value));
            FUZZ_CHECK (memcmp (val, keys[k].value, len) == 0);
            free (val);
        }
    }
    kvs_shm_reader_destroy (r);
    return 0;
}
