/* test/lookup.c - key resolution (lookup.c) and loading (load.c) against
 * an object cache and a pretend content service (kvsenv.h): path walking,
 * symlinks, hashed directories, READDIR/READLINK/TREEOBJ, faulting
 * objects in (one load per object for many lookups, all chunks of a
 * value at once), load errors, a load that cannot even be started
 * (regression: the lookup was freed under its caller), and unloading.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <errno.h>
#include <canopy/kvs.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libkvs/treeobj.h"
#include "src/modules/kvs/lookup.h"
#include "src/modules/kvs/load.h"
#include "kvsenv.h"

/* The result of one lookup, copied out in 'done' (which destroys it, as
 * kvs.c does).
 */
struct result {
    int calls;
    int errnum;
    char errstr[200];
    char *value;
    size_t len;
    json_t *obj;
};

static void result_clear (struct result *r)
{
    free (r->value);
    json_decref (r->obj);
    memset (r, 0, sizeof (*r));
}

static void done (struct lookup *l, void *arg)
{
    struct result *r = arg;
    const void *data;
    size_t len;

    r->calls++;
    r->errnum = lookup_errnum (l);
    snprintf (r->errstr, sizeof (r->errstr), "%s",
              lookup_errstr (l) ? lookup_errstr (l) : "");
    if (!r->errnum) {
        if (lookup_get_treeobj (l))
            r->obj = json_incref (lookup_get_treeobj (l));
        else {
            assert_int_equal (lookup_get_value (l, &data, &len), 0);
            r->value = malloc (len + 1);
            memcpy (r->value, data, len);
            r->value[len] = '\0';
            r->len = len;
        }
    }
    lookup_destroy (l);
}

static struct lookup *start (struct kvsenv *env, const char *rootref,
                             const char *key, int flags, struct result *r)
{
    result_clear (r);
    struct lookup *l = lookup_create (&env->ctx, key, flags, rootref, done, r);
    assert_non_null (l);
    lookup_run (l);
    return l;
}

/* Look up synchronously (everything cached): returns the result. */
static struct result *get (struct kvsenv *env, const char *rootref,
                           const char *key, int flags)
{
    static struct result r;
    start (env, rootref, key, flags, &r);
    assert_int_equal (r.calls, 1);
    return &r;
}

static json_t *val (const char *s)
{
    return treeobj_create_val (s, strlen (s));
}

/* A tree:
 *   a = "1"       d.x = "xx"     d.s2 -> a       s -> d.x
 *   loop -> loop  big = valref of 2 chunks       h: an hdir of 40 entries
 *   e: empty dir
 * 'cached' selects whether d, the chunks and the hdir buckets are in the
 * object cache (the root always is).
 */
struct tree {
    char root[BLOBREF_MAX];
    char d[BLOBREF_MAX];
    char c1[BLOBREF_MAX], c2[BLOBREF_MAX];
    char h[BLOBREF_MAX];
    char *bigval;
    size_t biglen;
    int nbuckets;
};

static void make_tree (struct kvsenv *env, struct tree *t, bool cached)
{
    json_t *d = treeobj_create_dir ();
    assert_int_equal (treeobj_dir_set (d, "x", val ("xx")), 0);
    assert_int_equal (treeobj_dir_set (d, "s2", treeobj_create_symlink ("a")), 0);
    kvsenv_store_dir (env, d, cached, t->d);
    json_decref (d);

    t->biglen = 2 * 1000;
    t->bigval = malloc (t->biglen);
    memset (t->bigval, 'b', 1000);
    memset (t->bigval + 1000, 'c', 1000);
    kvsenv_store_raw (env, t->bigval, 1000, cached, t->c1);
    kvsenv_store_raw (env, t->bigval + 1000, 1000, cached, t->c2);
    json_t *big = treeobj_create_valref ();
    assert_int_equal (treeobj_append_blobref (big, t->c1), 0);
    assert_int_equal (treeobj_append_blobref (big, t->c2), 0);

    /* an hdir: every bucket stored as a dir */
    json_t *h = treeobj_create_hdir (0);
    json_t *buckets[TREEOBJ_HDIR_FANOUT] = { NULL };
    for (int i = 0; i < 40; i++) {
        char name[16];
        snprintf (name, sizeof (name), "n%d", i);
        int slot = treeobj_hdir_bucket_of (h, name);
        if (!buckets[slot])
            buckets[slot] = treeobj_create_dir ();
        assert_int_equal (treeobj_dir_set (buckets[slot], name, val (name)), 0);
    }
    t->nbuckets = 0;
    for (int i = 0; i < TREEOBJ_HDIR_FANOUT; i++) {
        char ref[BLOBREF_MAX];
        if (!buckets[i])
            continue;
        kvsenv_store_dir (env, buckets[i], cached, ref);
        assert_int_equal (treeobj_hdir_set_slot (h, i, json_string (ref)), 0);
        json_decref (buckets[i]);
        t->nbuckets++;
    }
    assert_int_equal (treeobj_hdir_set_count (h, 40), 0);
    kvsenv_store_dir (env, h, cached, t->h);
    json_decref (h);

    json_t *root = treeobj_create_dir ();
    assert_int_equal (treeobj_dir_set (root, "a", val ("1")), 0);
    assert_int_equal (treeobj_dir_set (root, "d", treeobj_create_dirref (t->d)), 0);
    assert_int_equal (treeobj_dir_set (root, "s", treeobj_create_symlink ("d.x")), 0);
    assert_int_equal (treeobj_dir_set (root, "loop", treeobj_create_symlink ("loop")), 0);
    assert_int_equal (treeobj_dir_set (root, "big", big), 0);
    assert_int_equal (treeobj_dir_set (root, "h", treeobj_create_dirref (t->h)), 0);
    assert_int_equal (treeobj_dir_set (root, "e", treeobj_create_dir ()), 0);
    kvsenv_store_dir (env, root, true, t->root);
    json_decref (root);
}

static void test_walk (void **state)
{
    struct kvsenv *env = kvsenv_create (1, 4);
    struct tree t;
    struct result *r;

    make_tree (env, &t, true);
    r = get (env, t.root, "a", 0);
    assert_int_equal (r->errnum, 0);
    assert_string_equal (r->value, "1");
    r = get (env, t.root, "..d..x.", 0);     /* keys are normalised */
    assert_string_equal (r->value, "xx");
    r = get (env, t.root, "s", 0);           /* final symlink followed */
    assert_string_equal (r->value, "xx");
    r = get (env, t.root, "d.s2", 0);        /* symlink to an absolute key */
    assert_string_equal (r->value, "1");
    r = get (env, t.root, "big", 0);         /* chunks concatenated */
    assert_int_equal (r->len, t.biglen);
    assert_memory_equal (r->value, t.bigval, t.biglen);
    r = get (env, t.root, "h.n17", 0);       /* down an hdir */
    assert_string_equal (r->value, "n17");

    r = get (env, t.root, "nope", 0);
    assert_int_equal (r->errnum, ENOENT);
    assert_non_null (strstr (r->errstr, "nope"));
    r = get (env, t.root, "h.nope", 0);
    assert_int_equal (r->errnum, ENOENT);
    r = get (env, t.root, "d.x.y", 0);
    assert_int_equal (r->errnum, ENOTDIR);
    r = get (env, t.root, "a.b.c", 0);
    assert_int_equal (r->errnum, ENOTDIR);
    r = get (env, t.root, "d", 0);
    assert_int_equal (r->errnum, EISDIR);
    r = get (env, t.root, "loop", 0);
    assert_int_equal (r->errnum, ELOOP);
    r = get (env, t.root, "a", KVS_READLINK);
    assert_int_equal (r->errnum, EINVAL);
    r = get (env, t.root, "a", KVS_READDIR);
    assert_int_equal (r->errnum, ENOTDIR);

    r = get (env, t.root, "s", KVS_READLINK);
    assert_int_equal (r->errnum, 0);
    assert_string_equal (treeobj_symlink_target (r->obj), "d.x");
    r = get (env, t.root, "s", KVS_TREEOBJ | KVS_READLINK);
    assert_true (treeobj_is_symlink (r->obj));
    r = get (env, t.root, "d", KVS_TREEOBJ);
    assert_true (treeobj_is_dirref (r->obj));
    assert_string_equal (treeobj_blobref_at (r->obj, 0), t.d);
    r = get (env, t.root, ".", KVS_TREEOBJ);
    assert_true (treeobj_is_dirref (r->obj));
    assert_string_equal (treeobj_blobref_at (r->obj, 0), t.root);
    r = get (env, t.root, "d", KVS_READDIR);
    assert_true (treeobj_is_dir (r->obj));
    assert_int_equal (treeobj_dir_count (r->obj), 2);
    assert_non_null (treeobj_dir_get (r->obj, "s2"));
    r = get (env, t.root, "h", KVS_READDIR);  /* an hdir, flattened */
    assert_int_equal (treeobj_dir_count (r->obj), 40);
    r = get (env, t.root, "e", KVS_READDIR);
    assert_int_equal (treeobj_dir_count (r->obj), 0);
    r = get (env, t.root, ".", KVS_READDIR);
    assert_int_equal (treeobj_dir_count (r->obj), 7);
    result_clear (r);

    /* nothing was loaded, nothing is left */
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "content.load"), 0);
    assert_int_equal (env->ctx.nlookups, 0);
    free (t.bigval);
    kvsenv_destroy (env);
}

static void test_bad_key (void **state)
{
    struct kvsenv *env = kvsenv_create (1, 4);
    struct result r = { 0 };
    errno = 0;
    assert_null (lookup_create (&env->ctx, "a\001b", 0, "sha256-x", done, &r));
    assert_int_equal (errno, EINVAL);
    assert_int_equal (env->ctx.nlookups, 0);
    kvsenv_destroy (env);
}

static void test_faults (void **state)
{
    struct kvsenv *env = kvsenv_create (1, 4);
    struct tree t;
    struct result r1 = { 0 }, r2 = { 0 }, r3 = { 0 }, r4 = { 0 };

    make_tree (env, &t, false);
    /* two lookups below the same missing directory: one load */
    start (env, t.root, "d.x", 0, &r1);
    start (env, t.root, "d.s2", 0, &r2);
    assert_int_equal (r1.calls + r2.calls, 0);
    assert_int_equal (env->ctx.nlookups, 2);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "content.load"), 1);
    assert_int_equal (kvsenv_serve_loads (env), 1);
    assert_int_equal (r1.calls, 1);
    assert_string_equal (r1.value, "xx");
    assert_int_equal (r2.calls, 1);
    assert_string_equal (r2.value, "1");

    /* both chunks of a value are requested at once */
    start (env, t.root, "big", 0, &r3);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "content.load"), 2);
    assert_int_equal (kvsenv_serve_loads (env), 2);
    assert_int_equal (r3.calls, 1);
    assert_memory_equal (r3.value, t.bigval, t.biglen);

    /* READDIR of an hdir: its blob, then every bucket at once */
    start (env, t.root, "h", KVS_READDIR, &r4);
    assert_int_equal (kvsenv_serve_loads (env), 1);
    assert_int_equal (r4.calls, 0);
    assert_int_equal (kvsenv_serve_loads (env), t.nbuckets);
    assert_int_equal (r4.calls, 1);
    assert_int_equal (treeobj_dir_count (r4.obj), 40);

    /* now cached: no loads */
    start (env, t.root, "big", 0, &r3);
    assert_int_equal (r3.calls, 1);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "content.load"), 0);
    assert_int_equal (env->ctx.stats.loads, 3 + t.nbuckets + 1);
    assert_int_equal (env->ctx.nlookups, 0);
    assert_int_equal (load_table_count (env->ctx.loads), 0);
    result_clear (&r1);
    result_clear (&r2);
    result_clear (&r3);
    result_clear (&r4);
    free (t.bigval);
    kvsenv_destroy (env);
}

static void test_load_errors (void **state)
{
    struct kvsenv *env = kvsenv_create (1, 4);
    struct tree t;
    struct result r = { 0 };
    struct objcache_stats st;

    make_tree (env, &t, false);
    /* the content service fails the load */
    start (env, t.root, "d.x", 0, &r);
    assert_int_equal (kvsenv_fail_loads (env, EIO), 1);
    assert_int_equal (r.calls, 1);
    assert_int_equal (r.errnum, EIO);
    assert_string_equal (r.errstr, "cannot load KVS object");
    /* the failed entry was forgotten: the next lookup loads again */
    start (env, t.root, "d.x", 0, &r);
    assert_int_equal (kvsenv_serve_loads (env), 1);
    assert_string_equal (r.value, "xx");

    /* a directory that does not decode as one */
    char bogus[BLOBREF_MAX];
    kvsenv_store_raw (env, "not json", 8, false, bogus);
    json_t *root = treeobj_create_dir ();
    assert_int_equal (treeobj_dir_set (root, "b", treeobj_create_dirref (bogus)), 0);
    char rootref[BLOBREF_MAX];
    kvsenv_store_dir (env, root, true, rootref);
    json_decref (root);
    start (env, rootref, "b.x", 0, &r);
    assert_int_equal (kvsenv_serve_loads (env), 1);
    assert_int_equal (r.calls, 1);
    assert_int_equal (r.errnum, EPROTO);

    /* an uncached root that the content service does not have */
    start (env, "sha256-0000000000000000000000000000000000000000000000000000000000000000",
           "a", 0, &r);
    assert_int_equal (kvsenv_serve_loads (env), 1);
    assert_int_equal (r.errnum, ENOENT);

    objcache_stats (env->ctx.cache, &st);
    assert_int_equal (st.pending, 0);
    assert_int_equal (st.waiters, 0);
    assert_int_equal (env->ctx.nlookups, 0);
    result_clear (&r);
    free (t.bigval);
    kvsenv_destroy (env);
}

/* Regression: when a load could not be started (the send failed), the
 * waiters were called from inside kvs_load, so a lookup with another
 * load pending finished, and was destroyed, while still walking.  Now
 * the failure is returned: the lookup waits for its other load and
 * finishes once.
 */
static void test_load_start_fails (void **state)
{
    struct kvsenv *env = kvsenv_create (1, 4);
    struct tree t;
    struct result r = { 0 };
    struct objcache_stats st;

    make_tree (env, &t, false);
    fakeh_fail_send (env->fake, "content.load", 1, 1, ENOMEM);     /* the second chunk's */
    start (env, t.root, "big", 0, &r);
    assert_int_equal (fakeh_failed_sends (env->fake), 1);
    assert_int_equal (r.calls, 0);              /* waits for the first */
    assert_int_equal (load_table_count (env->ctx.loads), 1);
    objcache_stats (env->ctx.cache, &st);
    assert_int_equal (st.pending, 1);           /* the failed one forgotten */
    assert_int_equal (st.waiters, 1);
    assert_int_equal (kvsenv_serve_loads (env), 1);
    assert_int_equal (r.calls, 1);
    assert_int_equal (r.errnum, ENOMEM);

    /* the only load fails to start: finished at once, from lookup_run */
    fakeh_fail_send (env->fake, "content.load", 0, 1, EHOSTUNREACH);
    start (env, t.root, "d.x", 0, &r);
    assert_int_equal (r.calls, 1);
    assert_int_equal (r.errnum, EHOSTUNREACH);
    objcache_stats (env->ctx.cache, &st);
    assert_int_equal (st.pending, 0);
    assert_int_equal (st.waiters, 0);

    /* a lookup joins a load in flight (started by another), and its
     * other load fails to start: each finishes once, when the load in
     * flight arrives
     */
    struct result r2 = { 0 };
    json_t *root = treeobj_create_dir ();
    char rootref[BLOBREF_MAX], p1[BLOBREF_MAX], p2[BLOBREF_MAX];
    kvsenv_store_raw (env, "first", 5, false, p1);
    kvsenv_store_raw (env, "second", 6, false, p2);
    json_t *one = treeobj_create_valref ();
    assert_int_equal (treeobj_append_blobref (one, p1), 0);
    assert_int_equal (treeobj_dir_set (root, "one", one), 0);
    json_t *big = treeobj_create_valref ();
    assert_int_equal (treeobj_append_blobref (big, p1), 0);
    assert_int_equal (treeobj_append_blobref (big, p2), 0);
    assert_int_equal (treeobj_dir_set (root, "big", big), 0);
    kvsenv_store_dir (env, root, true, rootref);
    json_decref (root);
    start (env, rootref, "one", 0, &r2);        /* loads p1 */
    fakeh_fail_send (env->fake, "content.load", 0, 1, ENOMEM);     /* p2's load */
    start (env, rootref, "big", 0, &r);
    assert_int_equal (r.calls, 0);
    assert_int_equal (kvsenv_serve_loads (env), 1);
    assert_int_equal (r.calls, 1);
    assert_int_equal (r.errnum, ENOMEM);
    assert_int_equal (r2.calls, 1);
    assert_string_equal (r2.value, "first");
    assert_int_equal (env->ctx.nlookups, 0);
    result_clear (&r);
    result_clear (&r2);
    free (t.bigval);
    kvsenv_destroy (env);
}

/* At unload, lookups waiting for a load are answered (ENOSYS). */
static void test_unload (void **state)
{
    struct kvsenv *env = kvsenv_create (1, 4);
    struct tree t;
    struct result r1 = { 0 }, r2 = { 0 };

    make_tree (env, &t, false);
    start (env, t.root, "d.x", 0, &r1);
    start (env, t.root, "big", 0, &r2);
    assert_int_equal (load_table_count (env->ctx.loads), 3);
    env->ctx.unloading = true;
    load_table_fail_all (env->ctx.loads, ENOSYS);
    assert_int_equal (r1.calls, 1);
    assert_int_equal (r1.errnum, ENOSYS);
    assert_string_equal (r1.errstr, "KVS module unloading");
    assert_int_equal (r2.calls, 1);
    assert_int_equal (r2.errnum, ENOSYS);
    assert_int_equal (load_table_count (env->ctx.loads), 0);
    assert_int_equal (env->ctx.nlookups, 0);
    /* the answers to the loads, if they came, would find nothing */
    assert_int_equal (kvsenv_serve_loads (env), 3);
    assert_int_equal (r1.calls, 1);
    result_clear (&r1);
    result_clear (&r2);
    free (t.bigval);
    kvsenv_destroy (env);
}

/* Held value loads (load.h): a lookup that misses a value while the
 * table is held sends nothing; the release completes those the kvs.prime
 * event cached and loads the rest.  Directory loads are not held.
 */
static void test_held_loads (void **state)
{
    struct kvsenv *env = kvsenv_create (1, 4);
    struct tree t;
    struct result r1 = { 0 }, r2 = { 0 }, r3 = { 0 };

    make_tree (env, &t, false);
    assert_int_equal (load_table_hold (env->ctx.loads, NULL, 0), 0);
    assert_true (load_table_held (env->ctx.loads));
    start (env, t.root, "big", 0, &r1);
    start (env, t.root, "big", 0, &r2);     /* waits on the same held loads */
    start (env, t.root, "d.x", 0, &r3);     /* a directory: loaded now */
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "content.load"), 1);
    assert_int_equal (load_table_nheld (env->ctx.loads), 2);
    assert_int_equal (env->ctx.stats.held_loads, 2);
    assert_int_equal (kvsenv_serve_loads (env), 1);
    assert_int_equal (r3.calls, 1);
    assert_string_equal (r3.value, "xx");
    assert_int_equal (r1.calls + r2.calls, 0);

    /* the event brings the first chunk only */
    assert_int_equal (objcache_put_raw (env->ctx.cache, t.c1, t.bigval, 1000), 0);
    assert_int_equal (load_table_release (env->ctx.loads), 1);
    assert_false (load_table_held (env->ctx.loads));
    assert_int_equal (load_table_nheld (env->ctx.loads), 0);
    assert_int_equal (r1.calls + r2.calls, 0);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "content.load"), 1);
    assert_int_equal (kvsenv_serve_loads (env), 1);
    assert_int_equal (r1.calls, 1);
    assert_int_equal (r1.errnum, 0);
    assert_memory_equal (r1.value, t.bigval, t.biglen);
    assert_int_equal (r2.calls, 1);
    assert_memory_equal (r2.value, t.bigval, t.biglen);

    /* released: loads start at once again (the root, then both chunks) */
    assert_int_equal (objcache_clear (env->ctx.cache) >= 0, 1);
    result_clear (&r1);
    start (env, t.root, "big", 0, &r1);
    assert_int_equal (kvsenv_serve_loads (env), 1);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "content.load"), 2);
    assert_int_equal (kvsenv_serve_loads (env), 2);
    assert_int_equal (r1.calls, 1);
    assert_int_equal (env->ctx.stats.held_loads, 2);
    assert_int_equal (env->ctx.nlookups, 0);
    result_clear (&r1);
    result_clear (&r2);
    result_clear (&r3);
    free (t.bigval);
    kvsenv_destroy (env);
}

/* A release whose loads cannot be started fails their lookups; an unload
 * fails held loads like loads in flight.
 */
static void test_held_fail (void **state)
{
    struct kvsenv *env = kvsenv_create (1, 4);
    struct tree t;
    struct result r1 = { 0 }, r2 = { 0 };

    make_tree (env, &t, false);
    assert_int_equal (load_table_hold (env->ctx.loads, NULL, 0), 0);
    start (env, t.root, "big", 0, &r1);
    assert_int_equal (load_table_nheld (env->ctx.loads), 2);
    fakeh_fail_send (env->fake, "content.load", 0, 2, EHOSTUNREACH);
    assert_int_equal (load_table_release (env->ctx.loads), 0);
    assert_int_equal (r1.calls, 1);
    assert_int_equal (r1.errnum, EHOSTUNREACH);
    assert_int_equal (load_table_count (env->ctx.loads), 0);

    assert_int_equal (load_table_hold (env->ctx.loads, NULL, 0), 0);
    start (env, t.root, "big", 0, &r2);
    assert_int_equal (load_table_nheld (env->ctx.loads), 2);
    env->ctx.unloading = true;
    load_table_fail_all (env->ctx.loads, ENOSYS);
    assert_int_equal (r2.calls, 1);
    assert_int_equal (r2.errnum, ENOSYS);
    assert_int_equal (load_table_nheld (env->ctx.loads), 0);
    assert_false (load_table_held (env->ctx.loads));
    assert_int_equal (env->ctx.nlookups, 0);
    result_clear (&r1);
    result_clear (&r2);
    free (t.bigval);
    kvsenv_destroy (env);
}

/* A hold names the values to wait for (the setroot's prime list): the
 * others load at once.  A malformed list holds nothing.
 */
static void test_held_listed (void **state)
{
    struct kvsenv *env = kvsenv_create (1, 4);
    struct tree t;
    struct result r1 = { 0 };
    char list[2 * KVS_PRIME_PREFIX + 1];

    make_tree (env, &t, false);
    errno = 0;
    assert_int_equal (load_table_hold (env->ctx.loads, "nothex!!", 8), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (load_table_hold (env->ctx.loads, "0123", 0), -1);
    assert_int_equal (load_table_hold (env->ctx.loads, "0123", 4), -1);
    assert_false (load_table_held (env->ctx.loads));

    /* chunk 1 and an unrelated ref are listed; chunk 2 is not.  A hold
     * of everything replaced by the list: the list applies.
     */
    assert_int_equal (load_table_hold (env->ctx.loads, NULL, 0), 0);
    snprintf (list, sizeof (list), "%.8s%.8s", t.c1 + 7, "00000000");
    assert_int_equal (load_table_hold (env->ctx.loads, list, strlen (list)), 0);
    start (env, t.root, "big", 0, &r1);
    assert_int_equal (load_table_nheld (env->ctx.loads), 1);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "content.load"), 1);
    assert_int_equal (kvsenv_serve_loads (env), 1);
    assert_int_equal (r1.calls, 0);
    assert_int_equal (objcache_put_raw (env->ctx.cache, t.c1, t.bigval, 1000), 0);
    assert_int_equal (load_table_release (env->ctx.loads), 1);
    assert_int_equal (r1.calls, 1);
    assert_memory_equal (r1.value, t.bigval, t.biglen);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "content.load"), 0);
    assert_int_equal (env->ctx.nlookups, 0);
    result_clear (&r1);
    free (t.bigval);
    kvsenv_destroy (env);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_walk),
        cmocka_unit_test (test_bad_key),
        cmocka_unit_test (test_faults),
        cmocka_unit_test (test_load_errors),
        cmocka_unit_test (test_load_start_fails),
        cmocka_unit_test (test_unload),
        cmocka_unit_test (test_held_loads),
        cmocka_unit_test (test_held_fail),
        cmocka_unit_test (test_held_listed),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
