/* test/kvswalk.c - walking a snapshot held in memory: key order across
 * dir and hdir shapes, values from val and valref, symlinks, empty
 * directories; a missing chunk and a missing directory are reported with
 * their keys and the walk goes on.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <jansson.h>
#include "src/common/libkvs/treeobj.h"
#include "src/common/libutil/blobref.h"
#include "src/cmd/kvswalk.h"

#define MAXBLOBS 64
static struct { char ref[BLOBREF_MAX]; char *data; size_t len; } blobs[MAXBLOBS];
static int nblobs;

static void add_blob (const void *data, size_t len, char *ref)
{
    assert_true (nblobs < MAXBLOBS);
    assert_int_equal (blobref_hash (data, len, ref, BLOBREF_MAX), 0);
    strcpy (blobs[nblobs].ref, ref);
    blobs[nblobs].data = malloc (len + 1);
    memcpy (blobs[nblobs].data, data, len);
    blobs[nblobs].len = len;
    nblobs++;
}

static void add_obj (json_t *o, char *ref)
{
    size_t len;
    char *enc = treeobj_encode_ref (o, &len, ref, BLOBREF_MAX);
    assert_non_null (enc);
    add_blob (enc, len, ref);
    free (enc);
}

static void drop_blob (const char *ref)
{
    for (int i = 0; i < nblobs; i++) {
        if (!strcmp (blobs[i].ref, ref))
            blobs[i].ref[0] = '\0';
    }
}

static int loader (const char **refs, int n, void **data, size_t *len, int *errnum,
                   void *arg)
{
    for (int k = 0; k < n; k++) {
        data[k] = NULL;
        errnum[k] = ENOENT;
        for (int i = 0; i < nblobs; i++) {
            if (!strcmp (blobs[i].ref, refs[k])) {
                data[k] = malloc (blobs[i].len + 1);
                memcpy (data[k], blobs[i].data, blobs[i].len);
                len[k] = blobs[i].len;
                errnum[k] = 0;
            }
        }
    }
    return 0;
}

static char out[4096];

static int on_value (const char *key, const void *data, size_t len, void *arg)
{
    char buf[256];
    snprintf (buf, sizeof (buf), "V %s %zu %.*s\n", key, len, len > 20 ? 20 : (int)len,
              (const char *)data);
    strcat (out, buf);
    return 0;
}

static int on_dir (const char *key, int count, void *arg)
{
    char buf[256];
    snprintf (buf, sizeof (buf), "D %s %d\n", key, count);
    strcat (out, buf);
    return 0;
}

static int on_symlink (const char *key, const char *target, void *arg)
{
    char buf[256];
    snprintf (buf, sizeof (buf), "L %s %s\n", key, target);
    strcat (out, buf);
    return 0;
}

static void on_problem (const char *key, const char *ref, int errnum, const char *what,
                        void *arg)
{
    char buf[256];
    snprintf (buf, sizeof (buf), "P %s %s %d\n", key, what, errnum);
    strcat (out, buf);
}

static const struct kvswalk_ops ops = {
    .load = loader,
    .value = on_value,
    .dir = on_dir,
    .symlink = on_symlink,
    .problem = on_problem,
};

static void test_walk (void **state)
{
    char ref[BLOBREF_MAX], c1[BLOBREF_MAX], c2[BLOBREF_MAX], sub[BLOBREF_MAX];
    char rootref[BLOBREF_MAX], href[BLOBREF_MAX], emptyref[BLOBREF_MAX];
    json_t *root = treeobj_create_dir ();
    json_t *d = treeobj_create_dir ();
    json_t *vr = treeobj_create_valref ();
    json_t *h = treeobj_create_hdir (0);
    json_t *empty = treeobj_create_dir ();
    struct kvswalk_stats st;

    add_blob ("chunk-one,", 10, c1);
    add_blob ("chunk-two", 9, c2);
    treeobj_append_blobref (vr, c1);
    treeobj_append_blobref (vr, c2);
    treeobj_dir_set (d, "l", treeobj_create_symlink ("zz.a"));
    treeobj_dir_set (d, "v", treeobj_create_val ("inner", 5));
    add_obj (d, sub);
    /* an hdir: names spread over buckets */
    const char *names[] = { "n3", "n1", "n2", "n0", "n4" };
    json_t *buckets[TREEOBJ_HDIR_FANOUT] = { NULL };
    for (int i = 0; i < 5; i++) {
        int s = treeobj_hdir_bucket_of (h, names[i]);
        if (!buckets[s])
            buckets[s] = treeobj_create_dir ();
        treeobj_dir_set (buckets[s], names[i], treeobj_create_val (names[i], 2));
    }
    int count = 0;
    for (int s = 0; s < TREEOBJ_HDIR_FANOUT; s++) {
        if (buckets[s]) {
            add_obj (buckets[s], ref);
            treeobj_hdir_set_slot (h, s, json_string (ref));
            json_decref (buckets[s]);
            count++;
        }
    }
    treeobj_hdir_set_count (h, 5);
    add_obj (h, href);
    add_obj (empty, emptyref);
    treeobj_dir_set (root, "zz", treeobj_create_dir ());     /* inline, stored objects never have these */
    treeobj_dir_set (treeobj_dir_get (root, "zz"), "a", treeobj_create_val ("x", 1));
    treeobj_dir_set (root, "big", vr);
    treeobj_dir_set (root, "d", treeobj_create_dirref (sub));
    treeobj_dir_set (root, "h", treeobj_create_dirref (href));
    treeobj_dir_set (root, "e", treeobj_create_dirref (emptyref));
    add_obj (root, rootref);

    out[0] = '\0';
    assert_int_equal (kvswalk (rootref, &ops, NULL, NULL, &st), 0);
    assert_string_equal (out,
        "D  5\n"
        "V big 19 chunk-one,chunk-two\n"
        "D d 2\n"
        "L d.l zz.a\n"
        "V d.v 5 inner\n"
        "D e 0\n"
        "D h 5\n"
        "V h.n0 2 n0\n"
        "V h.n1 2 n1\n"
        "V h.n2 2 n2\n"
        "V h.n3 2 n3\n"
        "V h.n4 2 n4\n"
        "D zz 1\n"
        "V zz.a 1 x\n");
    assert_int_equal (st.problems, 0);
    assert_int_equal (st.values, 8);
    assert_int_equal (st.symlinks, 1);
    assert_int_equal (st.dirs, 5);

    /* a missing chunk and a missing directory */
    drop_blob (c2);
    drop_blob (sub);
    out[0] = '\0';
    assert_int_equal (kvswalk (rootref, &ops, NULL, NULL, &st), 0);
    assert_non_null (strstr (out, "P big missing blob 2\n"));
    assert_non_null (strstr (out, "P d missing blob 2\n"));
    assert_null (strstr (out, "V big"));
    assert_non_null (strstr (out, "V zz.a 1 x\n"));
    assert_int_equal (st.problems, 2);

    /* a missing root */
    drop_blob (rootref);
    out[0] = '\0';
    assert_int_equal (kvswalk (rootref, &ops, NULL, NULL, &st), 0);
    assert_string_equal (out, "P  missing blob 2\n");
    errno = 0;
    assert_int_equal (kvswalk ("junk", &ops, NULL, NULL, &st), -1);
    assert_int_equal (errno, EINVAL);
    json_decref (root);
    json_decref (d);
    json_decref (h);
    json_decref (empty);
    for (int i = 0; i < nblobs; i++)
        free (blobs[i].data);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_walk),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
