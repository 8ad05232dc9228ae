/* test/blobcache.c - the content cache: insert, pending/fill, dirty
 * entries never expire, LRU purge of clean ones, waiters, parked ops.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "src/common/libutil/blobref.h"
#include "src/modules/content/blobcache.h"

static void test_basic (void **state)
{
    blobcache_t *bc = blobcache_create (100);
    bool added;
    struct blobentry *e = blobcache_insert (bc, "hello", 5, false, &added);
    struct blobcache_stats st;
    assert_non_null (e);
    assert_true (added);
    assert_true (e->valid);
    assert_int_equal (blobcache_insert (bc, "hello", 5, false, &added) == e, 1);
    assert_false (added);
    char ref[BLOBREF_MAX];
    blobref_hash ("hello", 5, ref, sizeof (ref));
    assert_ptr_equal (blobcache_lookup (bc, ref), e);
    blobcache_stats (bc, &st);
    assert_int_equal (st.count, 1);
    assert_int_equal (st.bytes, 5);
    blobcache_destroy (bc);
}

static void test_pending (void **state)
{
    blobcache_t *bc = blobcache_create (100);
    char ref[BLOBREF_MAX];
    blobref_hash ("data", 4, ref, sizeof (ref));
    struct blobentry *e = blobcache_add_pending (bc, ref);
    assert_non_null (e);
    assert_null (blobcache_add_pending (bc, ref));
    assert_int_equal (errno, EEXIST);
    assert_null (blobcache_add_pending (bc, "junk"));
    canopy_msg_t *m = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    assert_int_equal (blobcache_park (e, m), 0);
    assert_int_equal (blobcache_park (e, m), 0);
    assert_int_equal (blobcache_fill (bc, e, "data", 4, false), 0);
    int n;
    canopy_msg_t **v = blobcache_take_waiters (e, &n);
    assert_int_equal (n, 2);
    for (int i = 0; i < n; i++)
        canopy_msg_decref (v[i]);
    free (v);
    canopy_msg_decref (m);
    blobcache_destroy (bc);
}

static void test_purge (void **state)
{
    blobcache_t *bc = blobcache_create (25);
    char buf[16];
    struct blobentry *dirty = blobcache_insert (bc, "dirty-entry", 11, true, NULL);
    for (int i = 0; i < 10; i++) {
        snprintf (buf, sizeof (buf), "clean-%04d", i);
        assert_non_null (blobcache_insert (bc, buf, strlen (buf), false, NULL));
    }
    blobcache_purge (bc, false);
    struct blobcache_stats st;
    blobcache_stats (bc, &st);
    assert_true (st.bytes <= 25);
    assert_int_equal (st.dirty, 1);
    assert_true (dirty->valid);     /* dirty entries never expire */
    /* most recent clean entry survives */
    char ref[BLOBREF_MAX];
    blobref_hash ("clean-0009", 10, ref, sizeof (ref));
    assert_non_null (blobcache_lookup (bc, ref));
    blobcache_purge (bc, true);
    blobcache_stats (bc, &st);
    assert_int_equal (st.count, 1);
    blobcache_mark_clean (bc, dirty);
    blobcache_purge (bc, true);
    blobcache_stats (bc, &st);
    assert_int_equal (st.count, 0);
    blobcache_destroy (bc);
}

static void test_writeback (void **state)
{
    blobcache_t *bc = blobcache_create (1000);
    struct blobentry *v[8];
    struct blobentry *e[5];
    char buf[16];

    assert_int_equal (blobcache_seq (bc), 0);
    assert_int_equal (blobcache_clean_through (bc), 0);
    assert_non_null (blobcache_insert (bc, "clean", 5, false, NULL));
    for (int i = 0; i < 5; i++) {
        snprintf (buf, sizeof (buf), "dirty-%d", i);
        assert_non_null ((e[i] = blobcache_insert (bc, buf, 7, true, NULL)));
        assert_int_equal (e[i]->seq, i + 1);
    }
    assert_int_equal (blobcache_seq (bc), 5);
    assert_int_equal (blobcache_clean_through (bc), 0);
    assert_int_equal (blobcache_backlog (bc), 5);
    /* a batch limited by bytes (at least one entry) */
    assert_int_equal (blobcache_take_dirty (bc, v, 8, 1), 1);
    assert_ptr_equal (v[0], e[0]);
    assert_true (e[0]->flushing);
    assert_int_equal (blobcache_take_dirty (bc, v, 2, 1000), 2);
    assert_ptr_equal (v[0], e[1]);
    assert_ptr_equal (v[1], e[2]);
    assert_int_equal (blobcache_backlog (bc), 2);
    /* the first batch lands; the second fails and is given back */
    blobcache_mark_clean (bc, e[0]);
    assert_int_equal (blobcache_clean_through (bc), 1);
    blobcache_unflush (bc, e[1]);
    blobcache_unflush (bc, e[2]);
    assert_int_equal (blobcache_backlog (bc), 4);
    assert_int_equal (blobcache_take_dirty (bc, v, 8, 1000), 4);
    assert_ptr_equal (v[0], e[1]);
    assert_ptr_equal (v[3], e[4]);
    for (int i = 4; i >= 1; i--)
        blobcache_mark_clean (bc, e[i]);
    assert_int_equal (blobcache_clean_through (bc), 5);
    assert_int_equal (blobcache_take_dirty (bc, v, 8, 1000), 0);
    /* a dirty entry that is removed leaves the queue */
    struct blobentry *x = blobcache_insert (bc, "gone", 4, true, NULL);
    assert_int_equal (blobcache_clean_through (bc), 5);
    blobcache_remove (bc, x);
    assert_int_equal (blobcache_clean_through (bc), 6);
    struct blobcache_stats st;
    blobcache_stats (bc, &st);
    assert_int_equal (st.dirty, 0);
    blobcache_destroy (bc);
}

static int drained;

static void count_op (void *op, void *arg)
{
    assert_ptr_equal (arg, &drained);
    drained += *(int *)op;
}

/* Opaque waiters (batched loads): parked on pending or valid entries,
 * taken back in order; an entry with ops is not purged; draining calls
 * fn once per parking and leaves none behind.
 */
static void test_ops (void **state)
{
    blobcache_t *bc = blobcache_create (0);     /* purge all it can */
    char ref[BLOBREF_MAX];
    int one = 1, ten = 10;
    bool added;
    int n;

    blobref_hash ("a", 1, ref, sizeof (ref));
    struct blobentry *p = blobcache_add_pending (bc, ref);
    assert_non_null (p);
    assert_int_equal (blobcache_park_op (p, &one), 0);
    assert_int_equal (blobcache_park_op (p, &ten), 0);
    void **v = blobcache_take_ops (p, &n);
    assert_int_equal (n, 2);
    assert_ptr_equal (v[0], &one);
    assert_ptr_equal (v[1], &ten);
    free (v);
    assert_null (blobcache_take_ops (p, &n));
    assert_int_equal (n, 0);

    /* parked on a clean valid entry: kept by purge until taken */
    struct blobentry *e = blobcache_insert (bc, "bb", 2, false, &added);
    assert_non_null (e);
    assert_int_equal (blobcache_park_op (e, &one), 0);
    assert_int_equal (blobcache_purge (bc, false), 0);
    assert_ptr_equal (blobcache_lookup (bc, e->ref), e);
    v = blobcache_take_ops (e, &n);
    free (v);
    assert_int_equal (blobcache_purge (bc, false), 1);

    /* drain: once per parking; an entry removed with ops is freed whole */
    assert_int_equal (blobcache_park_op (p, &one), 0);
    assert_int_equal (blobcache_park_op (p, &ten), 0);
    drained = 0;
    blobcache_drain_ops (bc, count_op, &drained);
    assert_int_equal (drained, 11);
    assert_null (blobcache_take_ops (p, &n));
    assert_int_equal (blobcache_park_op (p, &one), 0);
    blobcache_remove (bc, p);
    blobcache_destroy (bc);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_basic),
        cmocka_unit_test (test_pending),
        cmocka_unit_test (test_purge),
        cmocka_unit_test (test_writeback),
        cmocka_unit_test (test_ops),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
