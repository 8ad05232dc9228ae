/* test/pmicache.c - shared PMI lookups: the first get of a key is a miss,
 * gets meanwhile wait and are all answered by one fill (in order), later
 * gets hit; ENOENT is kept, other errors are not; a new epoch makes old
 * answers stale, and a lookup that straddles it answers but is not kept.
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
#include "src/modules/exec/pmicache.h"

static int got_rank[16];
static int got_errnum[16];
static char got_value[16][32];
static int ngot;

static void deliver (int rank, int errnum, const char *value, void *arg)
{
    assert_true (ngot < 16);
    got_rank[ngot] = rank;
    got_errnum[ngot] = errnum;
    snprintf (got_value[ngot], sizeof (got_value[0]), "%s", value ? value : "(null)");
    ngot++;
}

static void test_share (void **state)
{
    pmicache_t *c = pmicache_create ();
    int errnum;
    const char *value;
    unsigned long lookups, saved;

    assert_non_null (c);
    assert_int_equal (pmicache_get (c, "k", 3, &errnum, &value), PMICACHE_MISS);
    assert_int_equal (pmicache_get (c, "k", 1, &errnum, &value), PMICACHE_WAIT);
    assert_int_equal (pmicache_get (c, "k", 7, &errnum, &value), PMICACHE_WAIT);
    ngot = 0;
    assert_int_equal (pmicache_fill (c, "k", 0, "card", deliver, NULL), 3);
    assert_int_equal (ngot, 3);
    assert_int_equal (got_rank[0], 3);
    assert_int_equal (got_rank[1], 1);
    assert_int_equal (got_rank[2], 7);
    for (int i = 0; i < 3; i++) {
        assert_int_equal (got_errnum[i], 0);
        assert_string_equal (got_value[i], "card");
    }
    assert_int_equal (pmicache_get (c, "k", 9, &errnum, &value), PMICACHE_HIT);
    assert_int_equal (errnum, 0);
    assert_string_equal (value, "card");
    /* a fill with nothing pending */
    errno = 0;
    assert_int_equal (pmicache_fill (c, "k", 0, "x", deliver, NULL), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (pmicache_fill (c, "other", 0, "x", deliver, NULL), -1);
    assert_int_equal (errno, ENOENT);
    pmicache_stats (c, &lookups, &saved);
    assert_int_equal (lookups, 1);
    assert_int_equal (saved, 3);
    pmicache_destroy (c);
}

static void test_errors (void **state)
{
    pmicache_t *c = pmicache_create ();
    int errnum;
    const char *value;

    /* ENOENT is an answer for the whole epoch */
    assert_int_equal (pmicache_get (c, "missing", 0, &errnum, &value), PMICACHE_MISS);
    ngot = 0;
    assert_int_equal (pmicache_fill (c, "missing", ENOENT, NULL, deliver, NULL), 1);
    assert_int_equal (got_errnum[0], ENOENT);
    assert_string_equal (got_value[0], "(null)");
    assert_int_equal (pmicache_get (c, "missing", 1, &errnum, &value), PMICACHE_HIT);
    assert_int_equal (errnum, ENOENT);
    assert_null (value);

    /* anything else is delivered and forgotten */
    assert_int_equal (pmicache_get (c, "flaky", 0, &errnum, &value), PMICACHE_MISS);
    assert_int_equal (pmicache_get (c, "flaky", 2, &errnum, &value), PMICACHE_WAIT);
    ngot = 0;
    assert_int_equal (pmicache_fill (c, "flaky", EHOSTUNREACH, NULL, deliver, NULL), 2);
    assert_int_equal (got_errnum[1], EHOSTUNREACH);
    assert_int_equal (pmicache_get (c, "flaky", 0, &errnum, &value), PMICACHE_MISS);
    assert_int_equal (pmicache_fill (c, "flaky", 0, "ok", NULL, NULL), 1);
    assert_int_equal (pmicache_get (c, "flaky", 0, &errnum, &value), PMICACHE_HIT);
    assert_string_equal (value, "ok");

    errno = 0;
    assert_int_equal (pmicache_get (NULL, "k", 0, &errnum, &value), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (pmicache_fill (c, "k", 0, NULL, NULL, NULL), -1);
    assert_int_equal (errno, EINVAL);
    pmicache_destroy (NULL);
    pmicache_clear (NULL);
    pmicache_destroy (c);
}

static void test_epochs (void **state)
{
    pmicache_t *c = pmicache_create ();
    int errnum;
    const char *value;

    assert_int_equal (pmicache_get (c, "a", 0, &errnum, &value), PMICACHE_MISS);
    assert_int_equal (pmicache_fill (c, "a", ENOENT, NULL, NULL, NULL), 1);
    assert_int_equal (pmicache_get (c, "a", 0, &errnum, &value), PMICACHE_HIT);
    pmicache_clear (c);     /* a barrier: 'a' may exist now */
    assert_int_equal (pmicache_get (c, "a", 0, &errnum, &value), PMICACHE_MISS);
    assert_int_equal (pmicache_fill (c, "a", 0, "now", NULL, NULL), 1);
    assert_int_equal (pmicache_get (c, "a", 0, &errnum, &value), PMICACHE_HIT);
    assert_string_equal (value, "now");

    /* a lookup in flight across a barrier answers but is not kept */
    assert_int_equal (pmicache_get (c, "b", 4, &errnum, &value), PMICACHE_MISS);
    pmicache_clear (c);
    ngot = 0;
    assert_int_equal (pmicache_fill (c, "b", ENOENT, NULL, deliver, NULL), 1);
    assert_int_equal (got_rank[0], 4);
    assert_int_equal (pmicache_get (c, "b", 4, &errnum, &value), PMICACHE_MISS);
    assert_int_equal (pmicache_fill (c, "b", 0, "v", NULL, NULL), 1);
    pmicache_destroy (c);   /* frees what is left, pending or not */
}

/* A callback asking for the same key again (a task that gets twice in a
 * row) sees the new state, not a half-filled entry.
 */
static pmicache_t *reenter_cache;
static int reenter_rc;

static void reenter (int rank, int errnum, const char *value, void *arg)
{
    int e;
    const char *v;
    reenter_rc = pmicache_get (reenter_cache, "r", rank, &e, &v);
}

static void test_reentry (void **state)
{
    int errnum;
    const char *value;
    reenter_cache = pmicache_create ();
    assert_int_equal (pmicache_get (reenter_cache, "r", 0, &errnum, &value), PMICACHE_MISS);
    assert_int_equal (pmicache_fill (reenter_cache, "r", 0, "x", reenter, NULL), 1);
    assert_int_equal (reenter_rc, PMICACHE_HIT);
    assert_int_equal (pmicache_get (reenter_cache, "s", 0, &errnum, &value), PMICACHE_MISS);
    assert_int_equal (pmicache_fill (reenter_cache, "s", EIO, NULL, reenter, NULL), 1);
    pmicache_destroy (reenter_cache);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_share),
        cmocka_unit_test (test_errors),
        cmocka_unit_test (test_epochs),
        cmocka_unit_test (test_reentry),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
