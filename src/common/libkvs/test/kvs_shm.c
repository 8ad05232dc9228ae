/* test/kvs_shm.c - the KVS read-cache segment (kvs_shm.h), in plain memory:
 * a tree of plain directories, an hdir, inline values, multi-chunk
 * valrefs and an empty value published and read back through every path;
 * what must be a miss is one (directories, the root, symlinks, absent or
 * invalid keys, unpublished objects, versions below the floor); the
 * canonical entry encodings the reader parses are what treeobj_encode
 * writes; resets; objects too big; closing; readers refusing malformed
 * headers; gets on a segment with random bytes written over it never
 * fault; and readers in threads racing a writer that keeps replacing the
 * root and resetting the arena only ever see a whole value of a version
 * no older than one they saw before.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <canopy/kvs.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/kvs_shm.h"

/* A little content store: every object a test tree is made of. */
struct blob {
    char ref[BLOBREF_MAX];
    char *data;
    size_t len;
};

struct store {
    struct blob *v;
    int n, cap;
};

static const char *store_add (struct store *st, const void *data, size_t len)
{
    char ref[BLOBREF_MAX];
    assert_int_equal (blobref_hash (data, len, ref, sizeof (ref)), 0);
    for (int i = 0; i < st->n; i++) {
        if (!strcmp (st->v[i].ref, ref))
            return st->v[i].ref;
    }
    if (st->n == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 64;
        assert_non_null ((st->v = realloc (st->v, st->cap * sizeof (st->v[0]))));
    }
    struct blob *b = &st->v[st->n++];
    memcpy (b->ref, ref, BLOBREF_MAX);
    assert_non_null ((b->data = malloc (len + 1)));
    memcpy (b->data, data, len);
    b->len = len;
    return b->ref;
}

/* Store an object (stolen); its ref. */
static const char *store_obj (struct store *st, json_t *obj)
{
    size_t len;
    char *enc = treeobj_encode (obj, &len);
    assert_non_null (enc);
    const char *ref = store_add (st, enc, len);
    free (enc);
    json_decref (obj);
    return ref;
}

static void store_free (struct store *st)
{
    for (int i = 0; i < st->n; i++)
        free (st->v[i].data);
    free (st->v);
    memset (st, 0, sizeof (*st));
}

static void publish_all (kvs_shm_t *w, struct store *st)
{
    for (int i = 0; i < st->n; i++)
        assert_true (kvs_shm_put (w, st->v[i].ref, st->v[i].data, st->v[i].len) >= 0);
}

static json_t *make_valref (struct store *st, const char *data, size_t len, size_t chunk)
{
    json_t *v = treeobj_create_valref ();
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        assert_int_equal (treeobj_append_blobref (v, store_add (st, data + off, n)), 0);
    }
    return v;
}

static void dir_put (json_t *dir, const char *name, json_t *entry)
{
    assert_int_equal (treeobj_dir_set (dir, name, entry), 0);
}

#define HDIR_N 300
#define LONGVAL_LEN 5000

/* The test tree:
 *   a.b = "1"          a.c = 5000 bytes in 7 chunks   a.link -> a.b
 *   a.sub.x = "deep"   big.k0..k299 = "v0".."v299" (an hdir)
 *   empty = ""         top = "t"
 * Returns the root's ref; *subref: a.sub's.
 */
static const char *make_tree (struct store *st, char *longval, const char **subref)
{
    json_t *sub = treeobj_create_dir ();
    dir_put (sub, "x", treeobj_create_val ("deep", 4));
    *subref = store_obj (st, sub);

    for (int i = 0; i < LONGVAL_LEN; i++)
        longval[i] = (char)('a' + i % 26);
    json_t *a = treeobj_create_dir ();
    dir_put (a, "b", treeobj_create_val ("1", 1));
    dir_put (a, "c", make_valref (st, longval, LONGVAL_LEN, 777));
    dir_put (a, "link", treeobj_create_symlink ("a.b"));
    dir_put (a, "sub", treeobj_create_dirref (*subref));

    json_t *hdir = treeobj_create_hdir (0);
    json_t *buckets[TREEOBJ_HDIR_FANOUT] = { NULL };
    for (int i = 0; i < HDIR_N; i++) {
        char name[16], val[16];
        snprintf (name, sizeof (name), "k%d", i);
        snprintf (val, sizeof (val), "v%d", i);
        int b = treeobj_hdir_bucket_of (hdir, name);
        if (!buckets[b])
            buckets[b] = treeobj_create_dir ();
        dir_put (buckets[b], name, treeobj_create_val (val, strlen (val)));
    }
    for (int b = 0; b < TREEOBJ_HDIR_FANOUT; b++) {
        if (buckets[b])
            assert_int_equal (treeobj_hdir_set_slot (hdir, b,
                              json_string (store_obj (st, buckets[b]))), 0);
    }
    assert_int_equal (treeobj_hdir_set_count (hdir, HDIR_N), 0);

    json_t *root = treeobj_create_dir ();
    dir_put (root, "a", treeobj_create_dirref (store_obj (st, a)));
    dir_put (root, "big", treeobj_create_dirref (store_obj (st, hdir)));
    dir_put (root, "empty", treeobj_create_val ("", 0));
    dir_put (root, "top", treeobj_create_val ("t", 1));
    return store_obj (st, root);
}

struct seg {
    void *mem;
    size_t size;
    kvs_shm_t *w;
    kvs_shm_reader_t *r;
};

static void seg_init (struct seg *s, size_t size)
{
    s->size = size;
    assert_int_equal (posix_memalign (&s->mem, 64, size), 0);
    memset (s->mem, 0xa5, size);    /* not zeroed: format must not need it */
    assert_non_null ((s->w = kvs_shm_format (s->mem, size, false)));
    assert_non_null ((s->r = kvs_shm_reader_create (s->mem, size)));
}

static void seg_fini (struct seg *s)
{
    kvs_shm_reader_destroy (s->r);
    kvs_shm_destroy (s->w);
    free (s->mem);
}

/* The test tree in a store, and a segment of 'size' bytes for it. */
struct fixture {
    struct store st;
    struct seg s;
    char longval[LONGVAL_LEN];
    const char *subref;
    const char *root;
};

static struct fixture *fixture_create (size_t size)
{
    struct fixture *f = calloc (1, sizeof (*f));
    assert_non_null (f);
    f->root = make_tree (&f->st, f->longval, &f->subref);
    seg_init (&f->s, size);
    return f;
}

static void fixture_destroy (struct fixture *f)
{
    seg_fini (&f->s);
    store_free (&f->st);
    free (f);
}

static void expect_hit (kvs_shm_reader_t *r, const char *key, int floor,
                        const void *want, size_t wlen)
{
    void *data = NULL;
    size_t len = 0;
    assert_int_equal (kvs_shm_get (r, key, floor, &data, &len), KVS_SHM_HIT);
    assert_int_equal (len, wlen);
    assert_memory_equal (data, want, wlen);
    assert_int_equal (((char *)data)[len], '\0');
    free (data);
}

static void expect_rc (kvs_shm_reader_t *r, const char *key, int floor, int want)
{
    void *data = (void *)0x1;
    size_t len = 0;
    assert_int_equal (kvs_shm_get (r, key, floor, &data, &len), want);
}

static void test_tree (void **state)
{
    struct fixture *f = fixture_create (1024 * 1024);

    expect_rc (f->s.r, "top", 0, KVS_SHM_MISS);        /* no root yet */
    assert_int_equal (kvs_shm_version (f->s.r), -1);
    publish_all (f->s.w, &f->st);
    kvs_shm_set_root (f->s.w, 5, f->root);
    assert_int_equal (kvs_shm_version (f->s.r), 5);

    expect_hit (f->s.r, "top", 0, "t", 1);
    expect_hit (f->s.r, "a.b", 5, "1", 1);
    expect_hit (f->s.r, "..a..b.", 0, "1", 1);         /* normalised */
    expect_hit (f->s.r, "a.c", 0, f->longval, LONGVAL_LEN);
    expect_hit (f->s.r, "a.sub.x", 0, "deep", 4);
    expect_hit (f->s.r, "empty", 0, "", 0);
    for (int i = 0; i < HDIR_N; i++) {
        char key[32], val[16];
        snprintf (key, sizeof (key), "big.k%d", i);
        snprintf (val, sizeof (val), "v%d", i);
        expect_hit (f->s.r, key, 0, val, strlen (val));
    }
    /* the same again: from the readers' directory cache */
    expect_hit (f->s.r, "a.b", 0, "1", 1);
    expect_hit (f->s.r, "big.k7", 0, "v7", 2);

    /* the KVS answers these */
    expect_rc (f->s.r, "a", 0, KVS_SHM_MISS);          /* a directory */
    expect_rc (f->s.r, "big", 0, KVS_SHM_MISS);
    expect_rc (f->s.r, ".", 0, KVS_SHM_MISS);          /* the root */
    expect_rc (f->s.r, "", 0, KVS_SHM_MISS);
    expect_rc (f->s.r, "a.link", 0, KVS_SHM_MISS);     /* a symlink */
    expect_rc (f->s.r, "a.link.x", 0, KVS_SHM_MISS);
    expect_rc (f->s.r, "a.nope", 0, KVS_SHM_MISS);     /* absent */
    expect_rc (f->s.r, "big.nope", 0, KVS_SHM_MISS);
    expect_rc (f->s.r, "nope.x", 0, KVS_SHM_MISS);
    expect_rc (f->s.r, "a.b.c", 0, KVS_SHM_MISS);      /* through a value */
    expect_rc (f->s.r, "a.\001", 0, KVS_SHM_MISS);     /* invalid */
    expect_rc (f->s.r, "top", 6, KVS_SHM_MISS);        /* below the floor */
    char *longkey = malloc (KVS_MAX_KEY + 2);
    assert_non_null (longkey);
    memset (longkey, 'k', KVS_MAX_KEY + 1);
    longkey[KVS_MAX_KEY + 1] = '\0';
    expect_rc (f->s.r, longkey, 0, KVS_SHM_MISS);
    longkey[KVS_MAX_COMPONENT + 1] = '\0';          /* one component too long */
    expect_rc (f->s.r, longkey, 0, KVS_SHM_MISS);
    free (longkey);

    struct kvs_shm_reader_stats rs;
    kvs_shm_reader_stats (f->s.r, &rs);
    assert_int_equal (rs.hits, 6 + HDIR_N + 2);
    assert_true (rs.misses >= 15);

    expect_rc (NULL, "top", 0, -1);
    assert_int_equal (kvs_shm_get (f->s.r, NULL, 0, (void **)&longkey, &rs.hits), -1);
    assert_int_equal (errno, EINVAL);

    kvs_shm_close (f->s.w);
    expect_rc (f->s.r, "top", 0, KVS_SHM_CLOSED);
    fixture_destroy (f);
}

static uint64_t skipped (kvs_shm_reader_t *r)
{
    struct kvs_shm_reader_stats rs;
    kvs_shm_reader_stats (r, &rs);
    return rs.levels_skipped;
}

/* A chain of 'depth' directories d.d...d holding x = "z"; its root ref. */
static const char *make_chain (struct store *st, int depth)
{
    json_t *dir = treeobj_create_dir ();
    dir_put (dir, "x", treeobj_create_val ("z", 1));
    for (int i = 0; i < depth; i++) {
        json_t *up = treeobj_create_dir ();
        dir_put (up, "d", treeobj_create_dirref (store_obj (st, dir)));
        dir = up;
    }
    return store_obj (st, dir);
}

/* A get starts where the last get's path and its own part (the same
 * root): right values, misses still missed, and a new root walks again.
 */
static void test_last_path (void **state)
{
    struct fixture *f = fixture_create (1024 * 1024);

    publish_all (f->s.w, &f->st);
    kvs_shm_set_root (f->s.w, 5, f->root);
    expect_hit (f->s.r, "a.b", 0, "1", 1);
    assert_int_equal (skipped (f->s.r), 0);
    expect_hit (f->s.r, "a.c", 0, f->longval, LONGVAL_LEN);
    assert_int_equal (skipped (f->s.r), 1);                 /* a */
    expect_hit (f->s.r, "a.sub.x", 0, "deep", 4);
    assert_int_equal (skipped (f->s.r), 2);                 /* a */
    expect_hit (f->s.r, "a.sub.x", 0, "deep", 4);
    assert_int_equal (skipped (f->s.r), 4);                 /* a, a.sub */
    expect_hit (f->s.r, "top", 0, "t", 1);                  /* nothing shared */
    assert_int_equal (skipped (f->s.r), 4);
    expect_hit (f->s.r, "big.k7", 0, "v7", 2);
    expect_hit (f->s.r, "big.k8", 0, "v8", 2);              /* big (an hdir) */
    assert_int_equal (skipped (f->s.r), 5);
    expect_rc (f->s.r, "big.nope", 0, KVS_SHM_MISS);        /* from big: absent */
    expect_rc (f->s.r, "big.k8.x", 0, KVS_SHM_MISS);        /* through a value */
    expect_hit (f->s.r, "a.sub.x", 0, "deep", 4);
    expect_rc (f->s.r, "a.sub.nope", 0, KVS_SHM_MISS);
    expect_rc (f->s.r, "a.sub", 0, KVS_SHM_MISS);           /* a directory */
    expect_rc (f->s.r, "a.sub.x", 6, KVS_SHM_MISS);         /* below the floor */
    expect_rc (f->s.r, "a.link", 0, KVS_SHM_MISS);          /* a symlink */
    uint64_t before = skipped (f->s.r);

    /* a new root where a.b is "2": the old path is not used */
    json_t *a2 = treeobj_create_dir ();
    dir_put (a2, "b", treeobj_create_val ("2", 1));
    dir_put (a2, "sub", treeobj_create_dirref (f->subref));
    json_t *root2 = treeobj_create_dir ();
    dir_put (root2, "a", treeobj_create_dirref (store_obj (&f->st, a2)));
    const char *r2 = store_obj (&f->st, root2);
    publish_all (f->s.w, &f->st);
    kvs_shm_set_root (f->s.w, 6, r2);
    expect_hit (f->s.r, "a.b", 0, "2", 1);
    assert_int_equal (skipped (f->s.r), before);
    expect_hit (f->s.r, "a.sub.x", 0, "deep", 4);
    assert_int_equal (skipped (f->s.r), before + 1);
    expect_rc (f->s.r, "top", 0, KVS_SHM_MISS);             /* not in root2 */

    /* deeper than the path kept: 20 levels, then x */
    const char *r3 = make_chain (&f->st, 20);
    char key[64] = "";
    for (int i = 0; i < 20; i++)
        strcat (key, "d.");
    strcat (key, "x");
    publish_all (f->s.w, &f->st);
    kvs_shm_set_root (f->s.w, 7, r3);
    before = skipped (f->s.r);
    expect_hit (f->s.r, key, 0, "z", 1);
    assert_int_equal (skipped (f->s.r), before);
    expect_hit (f->s.r, key, 0, "z", 1);
    assert_int_equal (skipped (f->s.r), before + 15);      /* 16 levels kept */
    fixture_destroy (f);
}

/* A published tree without a.sub: its keys miss, the rest is found. */
static void test_unpublished (void **state)
{
    struct fixture *f = fixture_create (1024 * 1024);

    for (int i = 0; i < f->st.n; i++) {
        if (strcmp (f->st.v[i].ref, f->subref) != 0)
            assert_int_equal (kvs_shm_put (f->s.w, f->st.v[i].ref, f->st.v[i].data,
                                           f->st.v[i].len), 1);
    }
    assert_false (kvs_shm_has (f->s.w, f->subref));
    assert_true (kvs_shm_has (f->s.w, f->root));
    assert_int_equal (kvs_shm_put (f->s.w, f->root, "x", 1), 0);     /* there already */
    kvs_shm_set_root (f->s.w, 1, f->root);
    expect_rc (f->s.r, "a.sub.x", 0, KVS_SHM_MISS);
    expect_hit (f->s.r, "a.b", 0, "1", 1);
    /* then it comes */
    for (int i = 0; i < f->st.n; i++) {
        if (!strcmp (f->st.v[i].ref, f->subref))
            assert_int_equal (kvs_shm_put (f->s.w, f->subref, f->st.v[i].data, f->st.v[i].len), 1);
    }
    expect_hit (f->s.r, "a.sub.x", 0, "deep", 4);
    fixture_destroy (f);
}

/* The reader parses entries in the encoding treeobj_encode gives them. */
static void test_encodings (void **state)
{
    struct {
        json_t *obj;
        const char *text;
    } t[] = {
        { treeobj_create_val ("ab", 2), "{\"data\":\"YWI=\",\"type\":\"val\",\"ver\":1}" },
        { treeobj_create_val ("", 0), "{\"data\":\"\",\"type\":\"val\",\"ver\":1}" },
        { treeobj_create_dirref ("sha256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
          "{\"data\":[\"sha256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"],"
          "\"type\":\"dirref\",\"ver\":1}" },
        { treeobj_create_hdir (0), "{\"data\":{\"count\":0,\"level\":0,\"refs\":"
          "[null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null]},"
          "\"type\":\"hdir\",\"ver\":1}" },
    };
    for (size_t i = 0; i < sizeof (t) / sizeof (t[0]); i++) {
        size_t len;
        char *enc = treeobj_encode (t[i].obj, &len);
        assert_non_null (enc);
        assert_string_equal (enc, t[i].text);
        free (enc);
        json_decref (t[i].obj);
    }
}

/* A small segment fills and starts over; what was published before a
 * reset is gone, the root stays.
 */
static void test_reset (void **state)
{
    struct seg s;
    struct kvs_shm_stats ss;
    char big[8000], ref[BLOBREF_MAX], first[BLOBREF_MAX];
    json_t *root = treeobj_create_dir ();
    char rootref[BLOBREF_MAX];
    size_t rlen;

    seg_init (&s, KVS_SHM_MIN_SIZE);
    dir_put (root, "v", treeobj_create_val ("x", 1));
    char *renc = treeobj_encode_ref (root, &rlen, rootref, sizeof (rootref));
    assert_non_null (renc);
    assert_int_equal (kvs_shm_put (s.w, rootref, renc, rlen), 1);
    kvs_shm_set_root (s.w, 3, rootref);
    expect_hit (s.r, "v", 0, "x", 1);
    for (int i = 0; i < 40; i++) {
        memset (big, 'A' + i, sizeof (big));
        assert_int_equal (blobref_hash (big, sizeof (big), ref, sizeof (ref)), 0);
        if (i == 0)
            memcpy (first, ref, BLOBREF_MAX);
        assert_int_equal (kvs_shm_put (s.w, ref, big, sizeof (big)), 1);
    }
    kvs_shm_stats (s.w, &ss);
    assert_true (ss.resets >= 4);
    assert_int_equal (ss.puts, 41);
    assert_true (ss.used <= ss.arena);
    assert_int_equal (ss.size, KVS_SHM_MIN_SIZE);
    assert_false (kvs_shm_has (s.w, first));
    assert_false (kvs_shm_has (s.w, rootref));
    expect_rc (s.r, "v", 0, KVS_SHM_MISS);          /* the root's dir is gone */
    assert_int_equal (kvs_shm_version (s.r), 3);
    assert_int_equal (kvs_shm_put (s.w, rootref, renc, rlen), 1);
    expect_hit (s.r, "v", 0, "x", 1);

    /* the table fills before the arena: tiny objects */
    uint64_t resets = ss.resets;
    for (int i = 0; i < 5000; i++) {
        char val[16];
        int n = snprintf (val, sizeof (val), "%d", i);
        assert_int_equal (blobref_hash (val, n, ref, sizeof (ref)), 0);
        assert_int_equal (kvs_shm_put (s.w, ref, val, n), 1);
    }
    kvs_shm_stats (s.w, &ss);
    assert_true (ss.resets > resets);

    /* too big: more than a quarter of the arena */
    static char huge[KVS_SHM_MIN_SIZE / 3];
    assert_int_equal (blobref_hash (huge, sizeof (huge), ref, sizeof (ref)), 0);
    assert_int_equal (kvs_shm_put (s.w, ref, huge, sizeof (huge)), -1);
    assert_int_equal (errno, EFBIG);
    kvs_shm_stats (s.w, &ss);
    assert_int_equal (ss.too_big, 1);
    assert_int_equal (kvs_shm_put (s.w, "sha256-nothex", "x", 1), -1);
    assert_int_equal (errno, EINVAL);

    free (renc);
    json_decref (root);
    seg_fini (&s);
}

static void test_format_args (void **state)
{
    static uint64_t mem[KVS_SHM_MIN_SIZE / 8];
    kvs_shm_t *w;

    errno = 0;
    assert_null (kvs_shm_format (mem, KVS_SHM_MIN_SIZE - 1, false));
    assert_int_equal (errno, EINVAL);
    assert_null (kvs_shm_format (NULL, KVS_SHM_MIN_SIZE, false));
    assert_null (kvs_shm_format ((char *)mem + 1, KVS_SHM_MIN_SIZE - 8, false));
    assert_non_null ((w = kvs_shm_format (mem, sizeof (mem), true)));  /* static */

    /* readers refuse what is not a segment of this size */
    assert_null (kvs_shm_reader_create (mem, sizeof (mem) - 8));
    assert_int_equal (errno, EPROTO);
    assert_null (kvs_shm_reader_create (mem, 16));
    assert_int_equal (errno, EPROTO);
    uint64_t magic = mem[0];
    mem[0] = 0;
    assert_null (kvs_shm_reader_create (mem, sizeof (mem)));
    mem[0] = magic;
    uint64_t nslots = mem[4];
    mem[4] = 3;             /* not a power of two */
    assert_null (kvs_shm_reader_create (mem, sizeof (mem)));
    mem[4] = nslots;
    kvs_shm_reader_t *r = kvs_shm_reader_create (mem, sizeof (mem));
    assert_non_null (r);
    kvs_shm_reader_destroy (r);
    kvs_shm_reader_destroy (NULL);
    kvs_shm_destroy (w);
    kvs_shm_destroy (NULL);
}

/* Random bytes over the table and the arena: no get faults. */
static void test_garbage (void **state)
{
    struct fixture *f = fixture_create (256 * 1024);
    unsigned seed = 11;
    const char *keys[] = { "top", "a.b", "a.c", "a.sub.x", "big.k1", "big.k299",
                           "empty", "a.link" };
    char *copy = malloc (f->s.size);
    assert_non_null (copy);
    publish_all (f->s.w, &f->st);
    kvs_shm_set_root (f->s.w, 1, f->root);
    memcpy (copy, f->s.mem, f->s.size);
    for (int round = 0; round < 300; round++) {
        memcpy (f->s.mem, copy, f->s.size);
        kvs_shm_reader_t *r = kvs_shm_reader_create (f->s.mem, f->s.size);
        assert_non_null (r);
        /* spoil bytes past the header: few, or many */
        int n = round % 3 == 0 ? 2000 : 1 + rand_r (&seed) % 20;
        for (int i = 0; i < n; i++) {
            size_t off = 512 + (size_t)rand_r (&seed) % (f->s.size - 512);
            ((unsigned char *)f->s.mem)[off] = (unsigned char)rand_r (&seed);
        }
        for (size_t k = 0; k < sizeof (keys) / sizeof (keys[0]); k++) {
            void *data = NULL;
            size_t len;
            int rc = kvs_shm_get (r, keys[k], 0, &data, &len);
            assert_true (rc == KVS_SHM_HIT || rc == KVS_SHM_MISS);
            if (rc == KVS_SHM_HIT)
                free (data);
        }
        kvs_shm_reader_destroy (r);
    }
    free (copy);
    fixture_destroy (f);
}

/* Concurrency: a writer publishes version after version of a tree whose
 * value "m" spells its version, in a segment small enough to reset every
 * few versions; readers must only see whole values of a version no older
 * than the last they saw.
 */
#define RACE_VERSIONS 3000
#define RACE_READERS 3
#define MLEN 3000

/* "%08d" of v, then digits that depend on v */
static void mvalue (int v, char *buf)
{
    char n[16];
    snprintf (n, sizeof (n), "%08d", v);
    memcpy (buf, n, 8);
    for (int i = 8; i < MLEN; i++)
        buf[i] = (char)('0' + (v + i) % 10);
}

struct race {
    struct seg s;
    volatile int done;
    int hits[RACE_READERS];
    int bad[RACE_READERS];
};

struct reader_arg {
    struct race *race;
    int id;
};

static void *reader_thread (void *arg)
{
    struct reader_arg *ra = arg;
    struct race *race = ra->race;
    kvs_shm_reader_t *r = kvs_shm_reader_create (race->s.mem, race->s.size);
    char want[MLEN];
    int last = 0;

    if (!r) {
        race->bad[ra->id]++;
        return NULL;
    }
    while (!__atomic_load_n (&race->done, __ATOMIC_ACQUIRE)) {
        void *data, *ndata;
        size_t len, nlen;
        if (kvs_shm_get (r, "d.n", 0, &ndata, &nlen) != KVS_SHM_HIT)
            continue;
        int v = atoi (ndata);
        free (ndata);
        if (v < last)
            race->bad[ra->id]++;
        last = v;
        /* read-your-writes of what was seen: nothing older from now on */
        if (kvs_shm_get (r, "d.m", v, &data, &len) != KVS_SHM_HIT)
            continue;
        race->hits[ra->id]++;
        /* whole, of some version >= v */
        int w = -1;
        if (len == MLEN) {
            char n[9];
            memcpy (n, data, 8);
            n[8] = '\0';
            w = atoi (n);
            mvalue (w, want);
        }
        if (w < v || memcmp (data, want, MLEN) != 0)
            race->bad[ra->id]++;
        free (data);
    }
    kvs_shm_reader_destroy (r);
    return NULL;
}

static void test_race (void **state)
{
    struct race race;
    pthread_t t[RACE_READERS];
    struct reader_arg ra[RACE_READERS];
    char m[MLEN];

    memset (&race, 0, sizeof (race));
    seg_init (&race.s, KVS_SHM_MIN_SIZE);
    for (int i = 0; i < RACE_READERS; i++) {
        ra[i].race = &race;
        ra[i].id = i;
        assert_int_equal (pthread_create (&t[i], NULL, reader_thread, &ra[i]), 0);
    }
    for (int v = 1; v <= RACE_VERSIONS; v++) {
        struct store st = { 0 };
        char n[16];
        json_t *d = treeobj_create_dir ();
        mvalue (v, m);
        snprintf (n, sizeof (n), "%d", v);
        dir_put (d, "n", treeobj_create_val (n, strlen (n)));
        dir_put (d, "m", make_valref (&st, m, MLEN, 1000));
        json_t *root = treeobj_create_dir ();
        dir_put (root, "d", treeobj_create_dirref (store_obj (&st, d)));
        const char *rootref = store_obj (&st, root);
        publish_all (race.s.w, &st);
        kvs_shm_set_root (race.s.w, v, rootref);
        store_free (&st);
    }
    __atomic_store_n (&race.done, 1, __ATOMIC_RELEASE);
    int hits = 0;
    for (int i = 0; i < RACE_READERS; i++) {
        assert_int_equal (pthread_join (t[i], NULL), 0);
        assert_int_equal (race.bad[i], 0);
        hits += race.hits[i];
    }
    struct kvs_shm_stats ss;
    kvs_shm_stats (race.s.w, &ss);
    assert_true (ss.resets > 50);
    assert_true (hits > 0);     /* how many depends on the scheduler */
    seg_fini (&race.s);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_tree),
        cmocka_unit_test (test_last_path),
        cmocka_unit_test (test_unpublished),
        cmocka_unit_test (test_encodings),
        cmocka_unit_test (test_reset),
        cmocka_unit_test (test_format_args),
        cmocka_unit_test (test_garbage),
        cmocka_unit_test (test_race),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
