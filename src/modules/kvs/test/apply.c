/* test/apply.c - rank 0's applier (apply.c) over a fake handle, with the
 * fence table (fence.c) feeding it and lookups (lookup.c) reading the
 * result: commits, commit merging into one version, a failing fence
 * dropped without touching the others, symlinks, hashed directories,
 * priming, KVS_SYNC without a backing store, a failed store, a root that
 * must be loaded first, and allocation failures while a round starts
 * (regression: the fences it had taken were freed and their callers
 * never answered).
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
#include <unistd.h>
#include <canopy/kvs.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/base64.h"
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/kvs_txn.h"
#include "src/common/libkvs/blobrecs.h"
#include "src/modules/kvs/fence.h"
#include "src/modules/kvs/apply.h"
#include "src/modules/kvs/lookup.h"
#include "kvsenv.h"
#include "failalloc.h"

/* kvs.c is not linked: the root moves forward as it does there. */
void kvs_root_update (struct kvs_ctx *ctx, int version, const char *rootref)
{
    if (version <= ctx->version && ctx->rootref[0])
        return;
    ctx->version = version;
    snprintf (ctx->rootref, sizeof (ctx->rootref), "%s", rootref);
}

/* Rank 0 with an empty root of version 0 (cached or only stored). */
static struct kvsenv *setup (bool cache_root)
{
    struct kvsenv *env = kvsenv_create (0, 4);
    json_t *root = treeobj_create_dir ();
    char ref[BLOBREF_MAX];

    kvsenv_store_dir (env, root, cache_root, ref);
    json_decref (root);
    kvs_root_update (&env->ctx, 0, ref);
    assert_non_null ((env->ctx.fences = fence_table_create (&env->ctx)));
    assert_non_null ((env->ctx.applier = applier_create (&env->ctx)));
    return env;
}

static void teardown (struct kvsenv *env)
{
    applier_destroy (env->ctx.applier);
    fence_table_destroy (env->ctx.fences);
    kvsenv_destroy (env);
}

/* Send a transaction as client 'tag' (a commit if name is NULL). */
static void submit (struct kvsenv *env, uint32_t tag, const char *name,
                    int nprocs, int flags, kvs_txn_t *txn)
{
    void *buf;
    size_t len;
    char sender[32];

    snprintf (sender, sizeof (sender), "0:c%u", tag);
    assert_int_equal (kvs_txn_encode (txn, name ? name : "x", nprocs, flags,
                                      &buf, &len), 0);
    canopy_msg_t *msg = fakeh_request (name ? "kvs.fence" : "kvs.commit", tag,
                                       sender, buf, len);
    free (buf);
    fence_request (env->ctx.fences, msg, name == NULL);
    canopy_msg_decref (msg);
    applier_kick (env->ctx.applier);
    kvs_txn_destroy (txn);
}

static kvs_txn_t *put (kvs_txn_t *txn, const char *key, const char *val)
{
    if (!txn)
        assert_non_null ((txn = kvs_txn_create ()));
    if (val)
        assert_int_equal (kvs_txn_put_raw (txn, key, val, strlen (val)), 0);
    else
        assert_int_equal (kvs_txn_unlink (txn, key), 0);
    return txn;
}

/* The kvs.setroot and kvs.prime publications waiting in the outbox, in
 * order, as a string of 's' and 'p' in buf (left there); returns how many.
 */
static int kvs_publications (struct kvsenv *env, char *buf, size_t size)
{
    size_t n = 0;
    for (int k = 0; n + 1 < size; k++) {
        const canopy_msg_t *m = fakeh_peek (env->fake, CANOPY_MSGTYPE_REQUEST,
                                            "event.pub", k);
        const void *d;
        size_t dl;
        if (!m)
            break;
        assert_int_equal (canopy_msg_get_payload (m, &d, &dl), 0);
        if (!strcmp (d, "kvs.setroot"))
            buf[n++] = 's';
        else if (!strcmp (d, "kvs.prime"))
            buf[n++] = 'p';
    }
    buf[n] = '\0';
    return (int)n;
}

/* Everything outside the applier: the content service answers loads and
 * stores (store_errnum for stores), and setroot events come back.
 * Returns the last setroot event published (new reference) or NULL.
 */
static json_t *drive (struct kvsenv *env, int store_errnum)
{
    json_t *last = NULL;
    json_t *all = json_array ();    /* every setroot of this call */
    int announced = 0, primes = 0;

    assert_non_null (all);
    for (int i = 0; i < 100; i++) {
        bool any = false;
        json_t *ev;
        kvsenv_run (env);
        if (kvsenv_serve_loads (env) > 0)
            any = true;
        if (kvsenv_serve_stores (env, store_errnum) > 0)
            any = true;
        while ((ev = kvsenv_take_event (env, "kvs.setroot"))) {
            fence_setroot (env->ctx.fences, json_object_get (ev, "names"),
                           json_object_get (ev, "errors"), env->ctx.version,
                           env->ctx.rootref);
            if (json_object_get (ev, "prime"))
                announced++;
            assert_int_equal (json_array_append (all, ev), 0);
            json_decref (last);
            last = ev;
            any = true;
        }
        /* the values follow in kvs.prime, announced by the setroot of the
         * same version: shown to the tests as that setroot's "vals"
         */
        while ((ev = kvsenv_take_event (env, "kvs.prime"))) {
            json_int_t v = json_integer_value (json_object_get (ev, "version"));
            json_t *sr = NULL;
            for (size_t k = 0; k < json_array_size (all); k++) {
                json_t *o = json_array_get (all, k);
                if (json_integer_value (json_object_get (o, "version")) == v)
                    sr = o;
            }
            assert_non_null (sr);
            json_t *prime = json_object_get (sr, "prime");
            assert_true (json_is_true (prime) || json_is_string (prime));
            json_t *vals = json_object_get (ev, "vals");
            /* the setroot listed exactly the values that came */
            if (json_is_string (prime)) {
                assert_int_equal (json_string_length (prime),
                                  json_array_size (vals) * KVS_PRIME_PREFIX);
                for (size_t i = 0; i < json_array_size (vals); i++) {
                    const char *ref = json_string_value (json_array_get (
                                                json_array_get (vals, i), 0));
                    assert_memory_equal (json_string_value (prime)
                                         + i * KVS_PRIME_PREFIX, ref + 7,
                                         KVS_PRIME_PREFIX);
                }
            }
            if (vals)
                assert_int_equal (json_object_set (sr, "vals", vals), 0);
            json_decref (ev);
            primes++;
            any = true;
        }
        if (!any && !fakeh_pending (env->fake))
            break;
    }
    /* every announced kvs.prime came, and none unannounced */
    assert_int_equal (announced, primes);
    json_decref (all);
    return last;
}

/* The answer to client 'tag': errnum (0: success, version in *version),
 * -1 if none.
 */
static int answer (struct kvsenv *env, uint32_t tag, int *version, char *text,
                   size_t size)
{
    canopy_msg_t *rsp = fakeh_take_response (env->fake, tag);
    int errnum = -1;
    if (rsp) {
        assert_int_equal (canopy_msg_get_errnum (rsp, &errnum), 0);
        if (!errnum && version) {
            json_t *o = kvsenv_msg_json (rsp);
            assert_non_null (o);
            *version = json_integer_value (json_object_get (o, "version"));
            json_decref (o);
        }
        if (errnum && text) {
            const char *s = canopy_msg_errstr (rsp);
            snprintf (text, size, "%s", s ? s : "");
        }
        canopy_msg_decref (rsp);
    }
    return errnum;
}

/* Commit txn alone as client 'tag' (a fence of one), apply it, and check
 * that the client is answered with success.
 */
static void commit_ok (struct kvsenv *env, uint32_t tag, kvs_txn_t *txn)
{
    submit (env, tag, NULL, 1, 0, txn);
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, tag, NULL, NULL, 0), 0);
}

static char result[4096];
static int result_errnum;

static void done (struct lookup *l, void *arg)
{
    const void *data;
    size_t len;
    result_errnum = lookup_errnum (l);
    result[0] = '\0';
    if (!result_errnum) {
        json_t *o = lookup_get_treeobj (l);
        if (o) {
            char *s = json_dumps (o, JSON_COMPACT | JSON_SORT_KEYS);
            snprintf (result, sizeof (result), "%s", s);
            free (s);
        }
        else if (lookup_get_value (l, &data, &len) == 0)
            snprintf (result, sizeof (result), "%.*s", (int)len, (const char *)data);
    }
    *(bool *)arg = true;
    lookup_destroy (l);
}

/* Read a key from the current root (must not need loads). */
static const char *get (struct kvsenv *env, const char *key, int flags)
{
    bool finished = false;
    struct lookup *l = lookup_create (&env->ctx, key, flags, env->ctx.rootref,
                                      done, &finished);
    assert_non_null (l);
    lookup_run (l);
    if (!finished) {
        drive (env, 0);
        assert_true (finished);
    }
    return result_errnum ? NULL : result;
}

static void test_commit (void **state)
{
    struct kvsenv *env = setup (true);
    int version;

    submit (env, 1, NULL, 1, 0, put (put (NULL, "a.b", "1"), "c", "hello"));
    json_t *ev = drive (env, 0);
    assert_non_null (ev);
    assert_int_equal (answer (env, 1, &version, NULL, 0), 0);
    assert_int_equal (version, 1);
    assert_int_equal (env->ctx.version, 1);
    assert_int_equal (json_integer_value (json_object_get (ev, "version")), 1);
    assert_string_equal (json_string_value (json_object_get (ev, "rootref")),
                         env->ctx.rootref);
    assert_int_equal (json_array_size (json_object_get (ev, "names")), 1);
    /* a single commit does not prime */
    assert_int_equal (json_array_size (json_object_get (ev, "objs")), 0);
    json_decref (ev);
    assert_string_equal (get (env, "a.b", 0), "1");
    assert_string_equal (get (env, "c", 0), "hello");

    /* a large value's chunks are stored with the round */
    char big[3000];
    memset (big, 'z', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    submit (env, 2, NULL, 1, 0, put (put (NULL, "big", big), "a.b", NULL));
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, 2, &version, NULL, 0), 0);
    assert_int_equal (version, 2);
    assert_string_equal (get (env, "big", 0), big);
    assert_null (get (env, "a.b", 0));
    assert_int_equal (result_errnum, ENOENT);
    assert_false (applier_busy (env->ctx.applier));
    teardown (env);
}

/* Fences ready together make one version; one that fails (a symlink
 * loop) is dropped without touching the others.
 */
static void test_merge_and_isolation (void **state)
{
    struct kvsenv *env = setup (true);
    int v1, v3, v4;
    char text[200];
    kvs_txn_t *txn = kvs_txn_create ();

    assert_int_equal (kvs_txn_symlink (txn, "loop", "loop"), 0);
    assert_int_equal (kvs_txn_symlink (txn, "s", "t.u"), 0);
    submit (env, 1, NULL, 1, 0, put (txn, "t.u.v", "0"));
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, 1, &v1, NULL, 0), 0);

    submit (env, 2, NULL, 1, 0, put (put (NULL, "x", "2"), "loop.y", "2"));
    submit (env, 3, NULL, 1, 0, put (NULL, "s.w", "3"));    /* through "s" */
    submit (env, 4, NULL, 1, 0, put (NULL, "z", "4"));
    json_t *ev = drive (env, 0);
    assert_int_equal (answer (env, 2, NULL, text, sizeof (text)), ELOOP);
    assert_non_null (strstr (text, "loop.y"));
    assert_int_equal (answer (env, 3, &v3, NULL, 0), 0);
    assert_int_equal (answer (env, 4, &v4, NULL, 0), 0);
    assert_int_equal (v3, v1 + 1);
    assert_int_equal (v4, v1 + 1);
    assert_int_equal (env->ctx.stats.applies, 2);
    assert_int_equal (env->ctx.stats.apply_txns, 4);
    json_decref (ev);
    assert_null (get (env, "x", 0));                /* the failed fence's */
    assert_string_equal (get (env, "t.u.w", 0), "3");
    assert_string_equal (get (env, "z", 0), "4");
    assert_string_equal (get (env, "t.u.v", 0), "0");
    /* a key below a value replaces it by a directory */
    commit_ok (env, 5, put (NULL, "z.sub", "5"));
    assert_string_equal (get (env, "z.sub", 0), "5");
    teardown (env);
}

/* The walk cache (directories found at a path, reused by the next
 * operation with the same parent): a directory replaced or removed by a
 * later operation of the same fence is never written through again, and
 * nothing cached by one fence is changed in place by the next.
 */
static void test_walk_cache (void **state)
{
    struct kvsenv *env = setup (true);
    char text[200];
    kvs_txn_t *txn = put (NULL, "a.b.c", "1");

    put (txn, "a.b", "v");              /* a cached dir becomes a value */
    put (txn, "a.b.d", "2");            /* ... and a dir again */
    put (txn, "a.b.e", "3");
    put (txn, "x.y.k", "1");
    put (txn, "x.y", NULL);             /* a cached dir removed */
    put (txn, "x.y.z", "4");
    put (txn, "p.q.r", "1");
    put (txn, "p", "flat");             /* a cached dir's parent replaced */
    put (txn, "p.q.s", "5");
    assert_int_equal (kvs_txn_symlink (txn, "l", "m.n"), 0);
    put (txn, "l.k", "6");              /* walked through a symlink */
    put (txn, "m.n.j", "7");
    put (txn, "g.h.i", "1");
    assert_int_equal (kvs_txn_symlink (txn, "g.h", "w"), 0);   /* dir -> link */
    put (txn, "g.h.k", "8");            /* lands in w */
    commit_ok (env, 1, txn);
    assert_null (get (env, "a.b.c", 0));
    assert_int_equal (result_errnum, ENOENT);
    assert_string_equal (get (env, "a.b.d", 0), "2");
    assert_string_equal (get (env, "a.b.e", 0), "3");
    assert_null (get (env, "x.y.k", 0));
    assert_string_equal (get (env, "x.y.z", 0), "4");
    assert_null (get (env, "p.q.r", 0));
    assert_string_equal (get (env, "p.q.s", 0), "5");
    assert_string_equal (get (env, "m.n.k", 0), "6");
    assert_string_equal (get (env, "m.n.j", 0), "7");
    assert_string_equal (get (env, "w.k", 0), "8");
    assert_null (get (env, "w.i", 0));
    assert_null (get (env, "g.h.i", 0));
    assert_string_equal (get (env, "g.h.k", 0), "8");   /* through the link */

    /* two fences of one round: the second walks the first's directories,
     * then fails; the first's keys stay as they were
     */
    submit (env, 2, NULL, 1, 0, put (put (NULL, "f.g.h", "1"), "f.g.j", "1"));
    txn = put (put (NULL, "f.g.i", "2"), "f.g.h", "2");
    assert_int_equal (kvs_txn_symlink (txn, "loop", "loop"), 0);
    submit (env, 3, NULL, 1, 0, put (txn, "loop.y", "2"));
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, 2, NULL, NULL, 0), 0);
    assert_int_equal (answer (env, 3, NULL, text, sizeof (text)), ELOOP);
    assert_string_equal (get (env, "f.g.h", 0), "1");
    assert_string_equal (get (env, "f.g.j", 0), "1");
    assert_null (get (env, "f.g.i", 0));
    teardown (env);
}

/* No stored directory may hold an inline dir or hdir: every new directory
 * is unrolled into a dirref.  Checked over every blob the applier stored.
 */
static void check_no_inline_dirs (struct kvsenv *env)
{
    const char *ref;
    json_t *v;
    int dirs = 0;
    json_object_foreach (env->content, ref, v) {
        size_t len;
        const char *b64 = json_string_value (v);
        void *data = base64_decode (b64, strlen (b64), &len);
        assert_non_null (data);
        json_t *o = treeobj_decode (data, len);
        free (data);
        if (!o || !treeobj_is_dir (o)) {
            json_decref (o);
            continue;
        }
        const char *name;
        json_t *e;
        json_object_foreach (treeobj_data (o), name, e) {
            if (treeobj_is_dir (e) || treeobj_is_hdir (e))
                fail_msg ("stored dir %s holds an inline directory '%s'", ref, name);
        }
        dirs++;
        json_decref (o);
    }
    assert_true (dirs > 0);
}

/* Several fences in one round: the second and third copy a directory the
 * first created (with a new directory inside) and add values to it; the
 * third also makes an empty directory.  Only directories that were given a new
 * directory are scanned when unrolling; the copies must keep that mark.
 */
static void test_inline_dirs_across_fences (void **state)
{
    struct kvsenv *env = setup (true);
    kvs_txn_t *txn;

    submit (env, 1, NULL, 1, 0, put (NULL, "a.b.c", "1"));
    submit (env, 2, NULL, 1, 0, put (NULL, "a.d", "2"));
    txn = put (NULL, "a.f", "3");      /* a copy of 'a' still holding new 'b' */
    assert_int_equal (kvs_txn_mkdir (txn, "m.n"), 0);
    submit (env, 3, NULL, 1, 0, txn);
    json_decref (drive (env, 0));
    for (uint32_t tag = 1; tag <= 3; tag++)
        assert_int_equal (answer (env, tag, NULL, NULL, 0), 0);
    assert_int_equal (env->ctx.stats.applies, 1);   /* one round */
    assert_string_equal (get (env, "a.b.c", 0), "1");
    assert_string_equal (get (env, "a.d", 0), "2");
    assert_string_equal (get (env, "a.f", 0), "3");
    assert_non_null (get (env, "m.n", KVS_READDIR));
    check_no_inline_dirs (env);

    /* and into a big (hashed) directory, one key at a time */
    txn = NULL;
    for (int i = 0; i < 300; i++) {
        char key[32];
        snprintf (key, sizeof (key), "big.k%d", i);
        txn = put (txn, key, "v");
    }
    commit_ok (env, 4, txn);
    submit (env, 5, NULL, 1, 0, put (NULL, "big.k7.sub.x", "deep"));
    submit (env, 6, NULL, 1, 0, put (NULL, "big.k8", "w"));
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, 5, NULL, NULL, 0), 0);
    assert_int_equal (answer (env, 6, NULL, NULL, 0), 0);
    assert_string_equal (get (env, "big.k7.sub.x", 0), "deep");
    assert_string_equal (get (env, "big.k8", 0), "w");
    assert_string_equal (get (env, "big.k299", 0), "v");
    check_no_inline_dirs (env);
    teardown (env);
}

/* A directory past hdir-threshold entries is hashed; it keeps working
 * as entries come and go.
 */
static void test_hdir (void **state)
{
    struct kvsenv *env = setup (true);
    kvs_txn_t *txn = NULL;
    char key[32], val[32];

    env->ctx.limits.hdir_threshold = 4;
    for (int i = 0; i < 40; i++) {
        snprintf (key, sizeof (key), "d.k%d", i);
        snprintf (val, sizeof (val), "v%d", i);
        txn = put (txn, key, val);
    }
    commit_ok (env, 1, txn);
    json_t *o = json_loads (get (env, "d", KVS_TREEOBJ), 0, NULL);
    assert_true (treeobj_is_dirref (o));
    json_decref (o);
    for (int i = 0; i < 40; i++) {
        snprintf (key, sizeof (key), "d.k%d", i);
        snprintf (val, sizeof (val), "v%d", i);
        assert_string_equal (get (env, key, 0), val);
    }
    txn = put (NULL, "d.k3", NULL);
    txn = put (txn, "d.new", "n");
    commit_ok (env, 2, put (txn, "d.k5", "changed"));
    assert_null (get (env, "d.k3", 0));
    assert_string_equal (get (env, "d.new", 0), "n");
    assert_string_equal (get (env, "d.k5", 0), "changed");
    o = json_loads (get (env, "d", KVS_READDIR), 0, NULL);
    assert_int_equal (treeobj_dir_count (o), 40);
    json_decref (o);
    teardown (env);
}

/* The stored object a dirref names (decoded; the caller decrefs). */
static json_t *stored_dir (struct kvsenv *env, const char *key)
{
    json_t *o = json_loads (get (env, key, KVS_TREEOBJ), 0, NULL);
    assert_non_null (o);
    assert_true (treeobj_is_dirref (o));
    const char *ref = treeobj_blobref_at (o, 0);
    assert_non_null (ref);
    const char *b64 = json_string_value (json_object_get (env->content, ref));
    assert_non_null (b64);
    size_t len;
    void *data = base64_decode (b64, strlen (b64), &len);
    assert_non_null (data);
    json_t *d = treeobj_decode (data, len);
    assert_non_null (d);
    free (data);
    json_decref (o);
    return d;
}

/* A directory under hdir-threshold entries whose encoding is over
 * hdir-bytes is hashed too (regression: KAP's namespace directory of
 * directory references went over prime-max at 72 entries, and no
 * setroot carried it any more); under both it stays plain, and with
 * hdir-bytes 0 only the entries count.
 */
static void test_hdir_bytes (void **state)
{
    struct kvsenv *env = setup (true);
    kvs_txn_t *txn = NULL;
    char key[64], val[32];

    env->ctx.limits.hdir_threshold = 128;
    env->ctx.limits.hdir_bytes = 2048;
    /* 40 directories in "ns": 40 dirrefs, ~4 KiB */
    for (int i = 0; i < 40; i++) {
        snprintf (key, sizeof (key), "ns.run%d.k", i);
        txn = put (txn, key, "v");
    }
    /* 10 small values in "small": well under 2 KiB */
    for (int i = 0; i < 10; i++) {
        snprintf (key, sizeof (key), "small.k%d", i);
        txn = put (txn, key, "v");
    }
    commit_ok (env, 1, txn);
    json_t *d = stored_dir (env, "ns");
    assert_true (treeobj_is_hdir (d));
    json_decref (d);
    d = stored_dir (env, "small");
    assert_true (treeobj_is_dir (d));
    json_decref (d);
    for (int i = 0; i < 40; i++) {
        snprintf (key, sizeof (key), "ns.run%d.k", i);
        assert_string_equal (get (env, key, 0), "v");
    }
    /* every stored plain directory of more than one entry fits */
    const char *ref;
    json_t *v;
    json_object_foreach (env->content, ref, v) {
        size_t len;
        const char *b64 = json_string_value (v);
        void *data = base64_decode (b64, strlen (b64), &len);
        json_t *o = treeobj_decode (data, len);
        if (o && treeobj_is_dir (o) && treeobj_dir_count (o) > 1)
            assert_true (len <= 2048);
        json_decref (o);
        free (data);
    }
    check_no_inline_dirs (env);
    /* off: a new directory of the same shape stays plain */
    env->ctx.limits.hdir_bytes = 0;
    txn = NULL;
    for (int i = 0; i < 40; i++) {
        snprintf (key, sizeof (key), "ns2.run%d.k", i);
        snprintf (val, sizeof (val), "w%d", i);
        txn = put (txn, key, val);
    }
    commit_ok (env, 2, txn);
    d = stored_dir (env, "ns2");
    assert_true (treeobj_is_dir (d));
    assert_int_equal (treeobj_dir_count (d), 40);
    json_decref (d);
    assert_string_equal (get (env, "ns2.run39.k", 0), "w39");
    teardown (env);
}

/* A collective fence: every participant answered with one version, and
 * the event carries the small new directories.
 */
static void test_fence_priming (void **state)
{
    struct kvsenv *env = setup (true);
    int v1, v2;

    submit (env, 1, "f", 2, 0, put (NULL, "kap.a", "1"));
    json_t *ev = drive (env, 0);
    assert_null (ev);
    assert_int_equal (answer (env, 1, NULL, NULL, 0), -1);
    submit (env, 2, "f", 2, 0, put (NULL, "kap.b", "2"));
    ev = drive (env, 0);
    assert_non_null (ev);
    assert_int_equal (answer (env, 1, &v1, NULL, 0), 0);
    assert_int_equal (answer (env, 2, &v2, NULL, 0), 0);
    assert_int_equal (v1, 1);
    assert_int_equal (v2, 1);
    json_t *objs = json_object_get (ev, "objs");
    assert_int_equal (json_array_size (objs), 2);      /* root and kap */
    json_t *first = json_array_get (objs, 0);
    assert_string_equal (json_string_value (json_array_get (first, 0)),
                         env->ctx.rootref);             /* nearest the root first */
    json_decref (ev);
    assert_string_equal (get (env, "kap.b", 0), "2");
    /* nothing to prime when it is off */
    env->ctx.limits.prime_max = 0;
    submit (env, 3, "g", 2, 0, put (NULL, "kap.c", "3"));
    submit (env, 4, "g", 2, 0, put (NULL, "kap.d", "4"));
    ev = drive (env, 0);
    assert_int_equal (json_array_size (json_object_get (ev, "objs")), 0);
    assert_null (json_object_get (ev, "vals"));
    assert_null (json_object_get (ev, "prime"));
    json_decref (ev);

    /* values (blobs: over KVS_INLINE_MAX) follow in kvs.prime, up to
     * prime-max each and prime-values in all
     */
    char big[200], huge[5000];
    memset (big, 'b', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    memset (huge, 'h', sizeof (huge) - 1);
    huge[sizeof (huge) - 1] = '\0';
    env->ctx.limits.prime_max = 4096;
    submit (env, 5, "h", 2, 0, put (put (NULL, "kap.e", big), "kap.x", huge));
    submit (env, 6, "h", 2, 0, put (NULL, "kap.f", big));     /* the same blob */
    ev = drive (env, 0);
    json_t *vals = json_object_get (ev, "vals");
    assert_int_equal (json_array_size (vals), 1);   /* once; not the 5000-byte one */
    assert_int_equal (json_integer_value (json_array_get (json_array_get (vals, 0), 1)),
                      sizeof (big) - 1);
    assert_int_equal (answer (env, 5, NULL, NULL, 0), 0);
    assert_int_equal (answer (env, 6, NULL, NULL, 0), 0);
    json_decref (ev);
    assert_string_equal (get (env, "kap.f", 0), big);
    /* two fences of one round with the same value, and a value of its
     * own each: every blob goes to the content service once (the
     * harness fails on a blob stored twice in one request)
     */
    char other[300];
    memset (other, 'o', sizeof (other) - 1);
    other[sizeof (other) - 1] = '\0';
    int before = env->stored_blobs;
    submit (env, 10, "j", 1, 0, put (put (NULL, "kap.j1", huge), "kap.j2", big));
    submit (env, 11, "k", 1, 0, put (put (NULL, "kap.k1", huge), "kap.k2", other));
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, 10, NULL, NULL, 0), 0);
    assert_int_equal (answer (env, 11, NULL, NULL, 0), 0);
    assert_true (env->stored_blobs > before);
    assert_memory_equal (get (env, "kap.k1", 0), huge, sizeof (result) - 1);  /* get keeps that much */
    assert_string_equal (get (env, "kap.k2", 0), other);
    /* every new value of a collective round in its kvs.prime: the event
     * is built first and the store of the values shares its bytes (two
     * stores: the values, then the new directories)
     */
    char w1[150], w2[160];
    memset (w1, '1', sizeof (w1) - 1);
    w1[sizeof (w1) - 1] = '\0';
    memset (w2, '2', sizeof (w2) - 1);
    w2[sizeof (w2) - 1] = '\0';
    submit (env, 12, "s", 2, 0, put (NULL, "kap.s1", w1));
    submit (env, 13, "s", 2, 0, put (NULL, "kap.s2", w2));
    kvsenv_run (env);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST,
                                   "content.store-local"), 2);
    const canopy_msg_t *vstore = fakeh_peek (env->fake, CANOPY_MSGTYPE_REQUEST,
                                             "content.store-local", 0);
    const canopy_msg_t *dstore = fakeh_peek (env->fake, CANOPY_MSGTYPE_REQUEST,
                                             "content.store-local", 1);
    const canopy_msg_t *pub = fakeh_peek_publication (env->fake, "kvs.prime");
    const void *sp, *pp, *dp;
    size_t slen, plen, dlen;
    assert_non_null (vstore);
    assert_non_null (dstore);
    assert_non_null (pub);
    assert_int_equal (canopy_msg_get_payload (vstore, &sp, &slen), 0);
    assert_int_equal (canopy_msg_get_payload (dstore, &dp, &dlen), 0);
    assert_int_equal (canopy_msg_get_payload (pub, &pp, &plen), 0);
    assert_int_equal (slen, blobrecs_size (sizeof (w1) - 1) + blobrecs_size (sizeof (w2) - 1));
    assert_ptr_equal ((const char *)sp + slen, (const char *)pp + plen);  /* shared */
    assert_memory_equal ((const char *)sp + blobrecs_size (0), w1, sizeof (w1) - 1);
    assert_true (dlen > 0 && memchr (dp, '{', dlen));   /* the directories */
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, 12, NULL, NULL, 0), 0);
    assert_int_equal (answer (env, 13, NULL, NULL, 0), 0);
    assert_string_equal (get (env, "kap.s1", 0), w1);
    assert_string_equal (get (env, "kap.s2", 0), w2);
    /* prime-delay: the kvs.prime waits after its setroot; the setroot of
     * the next version never overtakes it; the timer sends the last
     */
    env->ctx.limits.prime_delay = 0.3;
    submit (env, 14, "p1", 2, 0, put (NULL, "kap.p1a", w1));
    submit (env, 15, "p1", 2, 0, put (NULL, "kap.p1b", w2));
    kvsenv_run (env);
    assert_non_null (fakeh_peek_publication (env->fake, "kvs.setroot"));
    assert_null (fakeh_peek_publication (env->fake, "kvs.prime"));
    assert_int_equal (answer (env, 14, NULL, NULL, 0), 0);     /* answered meanwhile */
    submit (env, 16, "p2", 2, 0, put (NULL, "kap.p2a", big));
    submit (env, 17, "p2", 2, 0, put (NULL, "kap.p2b", other));
    kvsenv_run (env);
    char order[8];
    assert_int_equal (kvs_publications (env, order, sizeof (order)), 3);
    assert_string_equal (order, "sps");     /* p1's prime before p2's setroot */
    usleep (400000);
    kvsenv_run (env);                       /* the timer sends p2's */
    assert_int_equal (kvs_publications (env, order, sizeof (order)), 4);
    assert_string_equal (order, "spsp");
    json_decref (drive (env, 0));
    for (uint32_t t = 15; t <= 17; t++)
        assert_int_equal (answer (env, t, NULL, NULL, 0), 0);
    assert_string_equal (get (env, "kap.p2b", 0), other);
    env->ctx.limits.prime_delay = 0;
    /* a commit (one participant) carries none, nor does prime-values=0 */
    submit (env, 7, NULL, 1, 0, put (NULL, "kap.g", big));
    ev = drive (env, 0);
    assert_null (json_object_get (ev, "vals"));
    assert_null (json_object_get (ev, "prime"));
    json_decref (ev);
    env->ctx.limits.prime_values = 0;
    submit (env, 8, "i", 2, 0, put (NULL, "kap.h", big));
    submit (env, 9, "i", 2, 0, put (NULL, "kap.i", big));
    ev = drive (env, 0);
    assert_null (json_object_get (ev, "vals"));
    assert_null (json_object_get (ev, "prime"));
    json_decref (ev);
    teardown (env);
}

/* KVS_SYNC with no backing store (no checkpointer) fails clearly; a
 * failed store fails a SYNC round; the root does not move.
 */
/* Past KVS_PRIME_LIST_MAX values the setroot does not list them: it
 * announces them all ("prime": true), and they all still come.
 */
static void test_prime_announce_all (void **state)
{
    struct kvsenv *env = setup (true);
    kvs_txn_t *txn = NULL;
    int n = KVS_PRIME_LIST_MAX + 4;

    env->ctx.limits.prime_max = 4096;
    env->ctx.limits.prime_values = 64 * 1024 * 1024;
    for (int i = 0; i < n; i++) {
        char key[32], val[80];
        snprintf (key, sizeof (key), "many.k%d", i);
        snprintf (val, sizeof (val), "%070d", i);     /* a blob: over 64 B */
        txn = put (txn, key, val);
    }
    submit (env, 1, "m", 2, 0, txn);
    submit (env, 2, "m", 2, 0, put (NULL, "many.last", "1"));
    json_t *ev = drive (env, 0);
    assert_non_null (ev);
    assert_true (json_is_true (json_object_get (ev, "prime")));
    assert_int_equal (json_array_size (json_object_get (ev, "vals")), n);
    assert_int_equal (answer (env, 1, NULL, NULL, 0), 0);
    assert_int_equal (answer (env, 2, NULL, NULL, 0), 0);
    json_decref (ev);
    teardown (env);
}

static void test_sync (void **state)
{
    struct kvsenv *env = setup (true);
    char text[200];

    submit (env, 1, NULL, 1, KVS_SYNC, put (NULL, "a", "1"));
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, 1, NULL, text, sizeof (text)), ENOSYS);
    assert_string_equal (text, "no backing store: the commit cannot be made durable");
    assert_int_equal (env->ctx.version, 0);
    submit (env, 2, NULL, 1, KVS_SYNC, put (NULL, "a", "1"));
    json_decref (drive (env, EIO));
    assert_int_equal (answer (env, 2, NULL, text, sizeof (text)), EIO);
    assert_string_equal (text, "storing the new version failed");
    assert_int_equal (env->ctx.version, 0);
    assert_null (get (env, "a", 0));
    teardown (env);
}

/* A root that is not cached is loaded first; one that cannot be loaded
 * fails the round.
 */
static void test_load_root (void **state)
{
    struct kvsenv *env = setup (false);
    int version;
    char text[200];

    submit (env, 1, NULL, 1, 0, put (NULL, "a", "1"));
    kvsenv_run (env);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "content.load"), 1);
    assert_true (applier_busy (env->ctx.applier));
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, 1, &version, NULL, 0), 0);
    assert_int_equal (version, 1);

    /* a root the content service does not have */
    kvs_root_update (&env->ctx, 5, "sha256-0000000000000000000000000000000000000000000000000000000000000000");
    submit (env, 2, NULL, 1, 0, put (NULL, "b", "1"));
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, 2, NULL, text, sizeof (text)), ENOENT);
    assert_string_equal (text, "cannot load a directory");
    assert_false (applier_busy (env->ctx.applier));
    teardown (env);
}

/* Regression: an allocation failure in start_round after the fences were
 * taken freed them, and their callers were never answered.  Fail each
 * calloc of the pass that starts a round in turn: every caller is
 * answered exactly once (success, or ENOMEM from a failed load).
 */
static void test_round_alloc_failures (void **state)
{
    bool fired = true;
    int k;

    for (k = 0; fired && k < 200; k++) {
        struct kvsenv *env = setup (false);     /* the round must load */
        submit (env, 1, NULL, 1, 0, put (NULL, "a", "1"));
        submit (env, 2, "f", 1, 0, put (NULL, "b", "2"));
        failalloc_arm (k);
        (void)canopy_reactor_run (env->ctx.r, CANOPY_REACTOR_NOWAIT);
        failalloc_disarm ();
        fired = failalloc_fired ();
        json_decref (drive (env, 0));
        for (uint32_t tag = 1; tag <= 2; tag++) {
            int e = answer (env, tag, NULL, NULL, 0);
            if (e != 0 && e != ENOMEM)
                fail_msg ("calloc %d failed: client %u got %d", k, tag, e);
            assert_int_equal (answer (env, tag, NULL, NULL, 0), -1);
        }
        assert_false (applier_busy (env->ctx.applier));
        assert_false (fence_have_ready (env->ctx.fences));
        teardown (env);
    }
    assert_false (fired);   /* the sweep went past the last calloc */
    assert_true (k > 3);
}

/* The setroot event of a successful round cannot be sent: the version is
 * applied, and its callers are answered when fence_timer publishes it
 * again, once.
 */
static void test_publish_fails (void **state)
{
    struct kvsenv *env = setup (true);
    int version = -1;
    json_t *ev;

    fakeh_fail_send (env->fake, "event.pub", 0, 1, ENOMEM);
    submit (env, 1, NULL, 1, 0, put (NULL, "a", "1"));
    json_decref (drive (env, 0));
    assert_int_equal (fakeh_failed_sends (env->fake), 1);
    assert_int_equal (answer (env, 1, NULL, NULL, 0), -1);     /* not yet */
    assert_int_equal (env->ctx.version, 1);
    assert_string_equal (get (env, "a", 0), "1");
    fence_timer (env->ctx.fences, monotime ());
    assert_non_null ((ev = drive (env, 0)));
    json_decref (ev);
    assert_int_equal (answer (env, 1, &version, NULL, 0), 0);
    assert_int_equal (version, 1);
    assert_int_equal (answer (env, 1, NULL, NULL, 0), -1);
    fence_timer (env->ctx.fences, monotime ());
    assert_null (drive (env, 0));                               /* once */
    teardown (env);
}

/* Drafts: a collective fence applied ahead while incomplete.  Its round
 * starts from the draft and gives what a round without one gives; a
 * commit between two contributions, a fence that fails in the draft, and
 * a root that is not cached all fall back to a plain round.
 */
static void test_drafts (void **state)
{
    struct kvsenv *env = setup (true);
    int v1 = -1, v2 = -1, v3 = -1;
    char text[160];

    /* three participants, one reactor pass between them */
    submit (env, 1, "d", 3, 0, put (put (NULL, "d.a", "1"), "d.dir.x", "x"));
    kvsenv_run (env);
    assert_non_null (env->ctx.applier);
    submit (env, 2, "d", 3, 0, put (NULL, "d.b", "2"));
    kvsenv_run (env);
    submit (env, 3, "d", 3, 0, put (put (NULL, "d.c", "3"), "d.a", "one"));
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, 1, &v1, NULL, 0), 0);
    assert_int_equal (answer (env, 2, &v2, NULL, 0), 0);
    assert_int_equal (answer (env, 3, &v3, NULL, 0), 0);
    assert_int_equal (v1, v2);
    assert_int_equal (v2, v3);
    assert_int_equal (env->ctx.stats.drafts_used, 1);
    assert_int_equal (env->ctx.stats.drafted_ops, 3);
    assert_string_equal (get (env, "d.a", 0), "one");  /* the later op wins */
    assert_string_equal (get (env, "d.b", 0), "2");
    assert_string_equal (get (env, "d.c", 0), "3");
    assert_string_equal (get (env, "d.dir.x", 0), "x");

    /* a commit between two contributions: the draft is not used */
    submit (env, 4, "e", 2, 0, put (put (NULL, "e.a", "1"), "e.s", "fence"));
    kvsenv_run (env);
    submit (env, 5, NULL, 1, 0, put (put (NULL, "e.c", "3"), "e.s", "commit"));
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, 5, NULL, NULL, 0), 0);
    submit (env, 6, "e", 2, 0, put (NULL, "e.b", "2"));
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, 4, NULL, NULL, 0), 0);
    assert_int_equal (answer (env, 6, NULL, NULL, 0), 0);
    assert_string_equal (get (env, "e.a", 0), "1");
    assert_string_equal (get (env, "e.b", 0), "2");
    assert_string_equal (get (env, "e.c", 0), "3");
    assert_string_equal (get (env, "e.s", 0), "fence");

    /* an operation that fails in the draft (a symlink loop): the fence
     * fails as it would without one, and is not drafted again
     */
    kvs_txn_t *t = kvs_txn_create ();
    assert_non_null (t);
    assert_int_equal (kvs_txn_symlink (t, "loop.a", "loop.b"), 0);
    assert_int_equal (kvs_txn_symlink (t, "loop.b", "loop.a"), 0);
    commit_ok (env, 7, t);
    uint64_t used = env->ctx.stats.drafts_used;
    submit (env, 8, "g", 3, 0, put (NULL, "loop.a.x", "1"));
    kvsenv_run (env);
    submit (env, 9, "g", 3, 0, put (NULL, "g.y", "2"));
    kvsenv_run (env);
    submit (env, 10, "g", 3, 0, put (NULL, "g.z", "3"));
    json_decref (drive (env, 0));
    for (uint32_t tag = 8; tag <= 10; tag++) {
        assert_int_equal (answer (env, tag, NULL, text, sizeof (text)), ELOOP);
        assert_non_null (strstr (text, "loop.a.x"));
    }
    assert_int_equal (env->ctx.stats.drafts_used, used);
    assert_null (get (env, "g.y", 0));
    teardown (env);

    /* a root that is only stored: no draft, the round loads it */
    env = setup (false);
    submit (env, 1, "h", 2, 0, put (NULL, "h.a", "1"));
    kvsenv_run (env);
    submit (env, 2, "h", 2, 0, put (NULL, "h.b", "2"));
    json_decref (drive (env, 0));
    assert_int_equal (answer (env, 1, NULL, NULL, 0), 0);
    assert_int_equal (answer (env, 2, NULL, NULL, 0), 0);
    assert_int_equal (env->ctx.stats.drafts_used, 0);
    assert_string_equal (get (env, "h.b", 0), "2");
    teardown (env);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_commit),
        cmocka_unit_test (test_drafts),
        cmocka_unit_test (test_merge_and_isolation),
        cmocka_unit_test (test_walk_cache),
        cmocka_unit_test (test_inline_dirs_across_fences),
        cmocka_unit_test (test_hdir),
        cmocka_unit_test (test_hdir_bytes),
        cmocka_unit_test (test_fence_priming),
        cmocka_unit_test (test_prime_announce_all),
        cmocka_unit_test (test_sync),
        cmocka_unit_test (test_load_root),
        cmocka_unit_test (test_round_alloc_failures),
        cmocka_unit_test (test_publish_fails),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
