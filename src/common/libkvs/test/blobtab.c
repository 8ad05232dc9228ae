/* test/blobtab.c - blob sets: de-duplication by ref, insertion order,
 * copies owned by the table, merge, truncate (the undo used by callers
 * that must leave no side effects), and refusing bad arguments.
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
#include "src/common/libutil/blobref.h"
#include "src/common/libkvs/blobtab.h"

static void test_add_get (void **state)
{
    blobtab_t *bt = blobtab_create ();
    char ref[BLOBREF_MAX], ref2[BLOBREF_MAX], expect[BLOBREF_MAX];
    char buf[8] = "hello";
    const void *data;
    size_t len;

    assert_non_null (bt);
    assert_int_equal (blobtab_count (bt), 0);
    assert_int_equal (blobtab_add (bt, NULL, buf, 5, ref, sizeof (ref)), 1);
    assert_int_equal (blobref_hash ("hello", 5, expect, sizeof (expect)), 0);
    assert_string_equal (ref, expect);
    /* the table keeps its own copy */
    memcpy (buf, "HELLO", 5);
    assert_int_equal (blobtab_get (bt, ref, &data, &len), 0);
    assert_int_equal (len, 5);
    assert_memory_equal (data, "hello", 5);
    /* the same bytes again: a no-op, reported as 0, ref still written */
    memset (ref2, 0, sizeof (ref2));
    assert_int_equal (blobtab_add (bt, NULL, "hello", 5, ref2, sizeof (ref2)), 0);
    assert_string_equal (ref2, ref);
    assert_int_equal (blobtab_count (bt), 1);
    assert_int_equal (blobtab_bytes (bt), 5);
    /* an empty blob is a blob */
    assert_int_equal (blobtab_add (bt, NULL, NULL, 0, ref2, sizeof (ref2)), 1);
    assert_true (blobtab_has (bt, ref2));
    assert_int_equal (blobtab_get (bt, ref2, &data, &len), 0);
    assert_int_equal (len, 0);
    assert_int_equal (blobtab_count (bt), 2);
    /* a missing ref */
    assert_int_equal (blobref_hash ("other", 5, expect, sizeof (expect)), 0);
    assert_false (blobtab_has (bt, expect));
    errno = 0;
    assert_int_equal (blobtab_get (bt, expect, &data, &len), -1);
    assert_int_equal (errno, ENOENT);
    blobtab_destroy (bt);
}

static void test_given_ref (void **state)
{
    blobtab_t *bt = blobtab_create ();
    char ref[BLOBREF_MAX];
    const void *data;
    size_t len;

    /* a given ref is trusted (callers verify where needed) */
    assert_int_equal (blobref_hash ("abc", 3, ref, sizeof (ref)), 0);
    assert_int_equal (blobtab_add (bt, ref, "not abc", 7, NULL, 0), 1);
    assert_int_equal (blobtab_get (bt, ref, &data, &len), 0);
    assert_int_equal (len, 7);
    /* but a malformed one is refused, with nothing changed */
    errno = 0;
    assert_int_equal (blobtab_add (bt, "sha256-xyz", "x", 1, NULL, 0), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (blobtab_add (bt, "md5-0123", "x", 1, NULL, 0), -1);
    assert_int_equal (blobtab_count (bt), 1);
    assert_int_equal (blobtab_bytes (bt), 7);
    blobtab_destroy (bt);
}

static void test_bad_args (void **state)
{
    blobtab_t *bt = blobtab_create ();
    char small[8];

    errno = 0;
    assert_int_equal (blobtab_add (NULL, NULL, "x", 1, NULL, 0), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (blobtab_add (bt, NULL, NULL, 3, NULL, 0), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (blobtab_add (bt, NULL, "x", 1, small, sizeof (small)), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (blobtab_count (bt), 0);
    errno = 0;
    assert_int_equal (blobtab_merge (bt, NULL), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (blobtab_at (bt, 0, NULL, NULL, NULL), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (blobtab_at (bt, -1, NULL, NULL, NULL), -1);
    assert_false (blobtab_has (NULL, "x"));
    assert_false (blobtab_has (bt, NULL));
    assert_int_equal (blobtab_count (NULL), 0);
    assert_int_equal (blobtab_bytes (NULL), 0);
    blobtab_truncate (NULL, 0);
    /* destroy accepts NULL and keeps errno */
    errno = EPERM;
    blobtab_destroy (NULL);
    blobtab_destroy (bt);
    assert_int_equal (errno, EPERM);
}

static void test_order_and_growth (void **state)
{
    blobtab_t *bt = blobtab_create ();
    char refs[100][BLOBREF_MAX];
    size_t total = 0;

    /* past the initial allocation several times */
    for (int i = 0; i < 100; i++) {
        char buf[32];
        int n = snprintf (buf, sizeof (buf), "blob number %d", i);
        assert_int_equal (blobtab_add (bt, NULL, buf, n, refs[i], BLOBREF_MAX), 1);
        total += n;
    }
    assert_int_equal (blobtab_count (bt), 100);
    assert_int_equal (blobtab_bytes (bt), total);
    for (int i = 0; i < 100; i++) {
        const char *ref;
        const void *data;
        size_t len;
        char buf[32];
        int n = snprintf (buf, sizeof (buf), "blob number %d", i);
        assert_int_equal (blobtab_at (bt, i, &ref, &data, &len), 0);
        assert_string_equal (ref, refs[i]);
        assert_int_equal (len, n);
        assert_memory_equal (data, buf, n);
        assert_true (blobtab_has (bt, refs[i]));
    }
    blobtab_destroy (bt);
}

static void test_merge_truncate (void **state)
{
    blobtab_t *a = blobtab_create ();
    blobtab_t *b = blobtab_create ();
    char r1[BLOBREF_MAX], r2[BLOBREF_MAX], r3[BLOBREF_MAX];

    assert_int_equal (blobtab_add (a, NULL, "one", 3, r1, sizeof (r1)), 1);
    assert_int_equal (blobtab_add (b, NULL, "one", 3, NULL, 0), 1);
    assert_int_equal (blobtab_add (b, NULL, "two", 3, r2, sizeof (r2)), 1);
    assert_int_equal (blobtab_add (b, NULL, "three", 5, r3, sizeof (r3)), 1);
    assert_int_equal (blobtab_merge (a, b), 0);
    /* "one" is not duplicated; the others follow in b's order */
    assert_int_equal (blobtab_count (a), 3);
    assert_int_equal (blobtab_bytes (a), 11);
    const char *ref;
    assert_int_equal (blobtab_at (a, 1, &ref, NULL, NULL), 0);
    assert_string_equal (ref, r2);
    /* b is unchanged, and a's copies do not depend on it */
    assert_int_equal (blobtab_count (b), 3);
    blobtab_destroy (b);
    const void *data;
    size_t len;
    assert_int_equal (blobtab_get (a, r3, &data, &len), 0);
    assert_memory_equal (data, "three", 5);

    /* truncate undoes the newest additions exactly */
    blobtab_truncate (a, 1);
    assert_int_equal (blobtab_count (a), 1);
    assert_int_equal (blobtab_bytes (a), 3);
    assert_true (blobtab_has (a, r1));
    assert_false (blobtab_has (a, r2));
    assert_false (blobtab_has (a, r3));
    /* and they can be added again */
    assert_int_equal (blobtab_add (a, NULL, "two", 3, NULL, 0), 1);
    assert_int_equal (blobtab_at (a, 1, &ref, NULL, NULL), 0);
    assert_string_equal (ref, r2);
    /* truncating to more than the count changes nothing */
    blobtab_truncate (a, 10);
    assert_int_equal (blobtab_count (a), 2);
    blobtab_truncate (a, 0);
    assert_int_equal (blobtab_count (a), 0);
    assert_int_equal (blobtab_bytes (a), 0);
    blobtab_destroy (a);
}

/* blobtab_adopt takes a malloc'd buffer over: kept when new, freed when
 * the ref is already there, left to the caller on error (no leak under
 * valgrind or ASan either way).
 */
/* A borrowing merge shares the other table's bytes (no copy), skips
 * refs it has, undoes itself on truncate without freeing what it borrowed
 * (the sanitizer build would see a double free), and a table with
 * borrowed and owned blobs is destroyed cleanly before its lender.
 */
/* blobtab_borrow: the table points at the caller's bytes; a second add
 * of the same ref changes nothing; a bad ref or argument is refused.
 */
static void test_borrow (void **state)
{
    blobtab_t *bt = blobtab_create ();
    char ref[BLOBREF_MAX];
    static const char data[] = "borrowed bytes";
    const void *d;
    size_t len;
    (void)state;

    assert_int_equal (blobref_hash (data, 14, ref, sizeof (ref)), 0);
    assert_int_equal (blobtab_borrow (bt, ref, data, 14), 1);
    assert_int_equal (blobtab_borrow (bt, ref, "other", 5), 0);
    assert_int_equal (blobtab_count (bt), 1);
    assert_int_equal (blobtab_bytes (bt), 14);
    assert_int_equal (blobtab_get (bt, ref, &d, &len), 0);
    assert_ptr_equal (d, data);
    assert_int_equal (len, 14);
    assert_int_equal (blobtab_borrow (bt, "sha256-xyz", data, 14), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (blobtab_borrow (NULL, ref, data, 14), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (blobtab_borrow (bt, ref, NULL, 14), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (blobtab_count (bt), 1);
    blobtab_destroy (bt);   /* frees nothing it borrowed (ASan/valgrind) */
}

static void test_merge_borrow (void **state)
{
    blobtab_t *lender = blobtab_create ();
    blobtab_t *bt = blobtab_create ();
    char r1[BLOBREF_MAX], r2[BLOBREF_MAX];
    const void *d, *dl;
    size_t len;
    (void)state;

    assert_int_equal (blobtab_add (lender, NULL, "one", 3, r1, sizeof (r1)), 1);
    assert_int_equal (blobtab_add (lender, NULL, "two", 3, r2, sizeof (r2)), 1);
    assert_int_equal (blobtab_add (bt, NULL, "one", 3, NULL, 0), 1);   /* owned */
    assert_int_equal (blobtab_merge_borrow (bt, lender), 0);
    assert_int_equal (blobtab_count (bt), 2);
    assert_int_equal (blobtab_bytes (bt), 6);
    assert_int_equal (blobtab_get (bt, r2, &d, &len), 0);
    assert_int_equal (blobtab_get (lender, r2, &dl, NULL), 0);
    assert_ptr_equal (d, dl);                   /* borrowed, not copied */
    assert_int_equal (blobtab_get (bt, r1, &d, &len), 0);
    assert_int_equal (blobtab_get (lender, r1, &dl, NULL), 0);
    assert_ptr_not_equal (d, dl);               /* it had its own */
    blobtab_truncate (bt, 1);
    assert_false (blobtab_has (bt, r2));
    assert_true (blobtab_has (lender, r2));
    assert_int_equal (blobtab_merge_borrow (bt, lender), 0);
    assert_int_equal (blobtab_merge_borrow (NULL, lender), -1);
    assert_int_equal (errno, EINVAL);
    blobtab_destroy (bt);
    assert_int_equal (blobtab_get (lender, r2, &dl, &len), 0);
    assert_memory_equal (dl, "two", 3);
    blobtab_destroy (lender);
}

static void test_adopt (void **state)
{
    blobtab_t *bt = blobtab_create ();
    char ref[BLOBREF_MAX];
    const void *data;
    size_t len;
    char *a = strdup ("adopted");
    char *b = strdup ("adopted");
    char *c = strdup ("kept by the caller");

    assert_int_equal (blobref_hash (a, 7, ref, sizeof (ref)), 0);
    assert_int_equal (blobtab_adopt (bt, ref, a, 7), 1);
    assert_int_equal (blobtab_get (bt, ref, &data, &len), 0);
    assert_ptr_equal (data, a);         /* not copied */
    assert_int_equal (len, 7);
    assert_int_equal (blobtab_adopt (bt, ref, b, 7), 0);     /* b freed */
    assert_int_equal (blobtab_count (bt), 1);
    assert_int_equal (blobtab_bytes (bt), 7);
    errno = 0;
    assert_int_equal (blobtab_adopt (bt, "junk", c, 5), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (blobtab_adopt (NULL, ref, c, 5), -1);
    assert_int_equal (blobtab_adopt (bt, ref, NULL, 5), -1);
    assert_int_equal (blobtab_count (bt), 1);
    free (c);
    /* an empty blob */
    assert_int_equal (blobref_hash (NULL, 0, ref, sizeof (ref)), 0);
    assert_int_equal (blobtab_adopt (bt, ref, NULL, 0), 1);
    assert_int_equal (blobtab_get (bt, ref, &data, &len), 0);
    assert_int_equal (len, 0);
    blobtab_destroy (bt);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_add_get),
        cmocka_unit_test (test_given_ref),
        cmocka_unit_test (test_bad_args),
        cmocka_unit_test (test_order_and_growth),
        cmocka_unit_test (test_merge_borrow),
        cmocka_unit_test (test_borrow),
        cmocka_unit_test (test_merge_truncate),
        cmocka_unit_test (test_adopt),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
