/* test/hashmap.c - unit tests for hashmap.c */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include "src/common/libutil/hashmap.h"

static int destroyed;
static void count_destroy (void *arg)
{
    destroyed++;
    free (arg);
}

static void test_invalid (void **state)
{
    hashmap_destroy (NULL);
    errno = 0;
    assert_int_equal (hashmap_insert (NULL, "a", NULL), -1);
    assert_int_equal (errno, EINVAL);
    assert_null (hashmap_lookup (NULL, "a"));
    assert_int_equal (hashmap_size (NULL), 0);
    assert_null (hashmap_first (NULL, NULL));
}

static void test_basic (void **state)
{
    hashmap_t *map = hashmap_create (count_destroy);
    assert_non_null (map);
    destroyed = 0;
    assert_int_equal (hashmap_insert (map, "a", strdup ("1")), 0);
    assert_int_equal (hashmap_insert (map, "b", strdup ("2")), 0);
    char *dup = strdup ("x");
    assert_int_equal (hashmap_insert (map, "a", dup), -1);
    assert_int_equal (errno, EEXIST);
    free (dup);
    assert_string_equal (hashmap_lookup (map, "a"), "1");
    assert_null (hashmap_lookup (map, "zz"));
    assert_int_equal (errno, ENOENT);
    assert_int_equal (hashmap_update (map, "a", strdup ("3")), 0);
    assert_int_equal (destroyed, 1);
    assert_string_equal (hashmap_lookup (map, "a"), "3");
    char *v = hashmap_take (map, "b");
    assert_string_equal (v, "2");
    free (v);
    assert_int_equal (hashmap_delete (map, "b"), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (hashmap_size (map), 1);
    hashmap_destroy (map);
    assert_int_equal (destroyed, 2);
}

static void test_many_and_iterate (void **state)
{
    hashmap_t *map = hashmap_create (NULL);
    char key[32];
    const int n = 10000;
    for (intptr_t i = 0; i < n; i++) {
        snprintf (key, sizeof (key), "key-%ld", (long)i);
        assert_int_equal (hashmap_insert (map, key, (void *)(i + 1)), 0);
    }
    assert_int_equal (hashmap_size (map), n);
    for (intptr_t i = 0; i < n; i++) {
        snprintf (key, sizeof (key), "key-%ld", (long)i);
        assert_ptr_equal (hashmap_lookup (map, key), (void *)(i + 1));
    }
    /* iterate, deleting every other entry as we go */
    int seen = 0;
    void *val;
    for (const char *k = hashmap_first (map, &val); k; k = hashmap_next (map, &val)) {
        seen++;
        if (((intptr_t)val) % 2 == 0) {
            char cpy[32];
            snprintf (cpy, sizeof (cpy), "%s", k);
            assert_int_equal (hashmap_delete (map, cpy), 0);
        }
    }
    assert_int_equal (seen, n);
    assert_int_equal (hashmap_size (map), n / 2);
    hashmap_clear (map);
    assert_int_equal (hashmap_size (map), 0);
    assert_null (hashmap_first (map, NULL));
    hashmap_destroy (map);
}

/* The buckets are chosen by the hash's low bits: with as many buckets as
 * keys, a good hash leaves about 1/e of them empty and no chain long,
 * for keys that differ only in a few characters (decimal counters, hex
 * refs) as for keys of every length.
 */
static void check_spread (const char *what, char keys[][80], int n)
{
    enum { BITS = 16 };
    static unsigned char load[1 << BITS];
    int empty = 0, longest = 0;

    memset (load, 0, sizeof (load));
    for (int i = 0; i < n; i++) {
        uint64_t h = hashmap_hash (keys[i], strlen (keys[i]));
        unsigned b = h & ((1u << BITS) - 1);
        if (load[b] < 255)
            load[b]++;
    }
    for (int b = 0; b < (1 << BITS); b++) {
        if (load[b] == 0)
            empty++;
        if (load[b] > longest)
            longest = load[b];
    }
    double frac = (double)empty / (1 << BITS);
    print_message ("# %s: %.4f of buckets empty (1/e = 0.3679), longest chain %d\n",
                   what, frac, longest);
    assert_true (frac > 0.35 && frac < 0.39);
    assert_true (longest <= 12);
}

static void test_hash_spread (void **state)
{
    enum { N = 1 << 16 };
    static char keys[N][80];

    for (int i = 0; i < N; i++)
        snprintf (keys[i], sizeof (keys[i]), "key-%d", i);
    check_spread ("decimal", keys, N);
    for (int i = 0; i < N; i++)
        snprintf (keys[i], sizeof (keys[i]), "r:sha256-%056x%08x", 0, (unsigned)i * 16);
    check_spread ("hex refs", keys, N);
    for (int i = 0; i < N; i++) {
        int len = i % 64;
        memset (keys[i], 'a', len);
        snprintf (keys[i] + len, sizeof (keys[i]) - len, "%d", i / 64);
    }
    check_spread ("every length", keys, N);
}

/* The hash reads whole words: a key and the bytes after its end must not
 * matter (only len bytes are read), and every byte of a key must.
 */
static void test_hash_bytes (void **state)
{
    char a[80], b[80];

    memset (a, 'x', sizeof (a));
    memset (b, 'y', sizeof (b));
    for (size_t len = 0; len <= 64; len++) {
        memcpy (b, a, len);
        assert_true (hashmap_hash (a, len) == hashmap_hash (b, len));
        if (len > 0)
            assert_true (hashmap_hash (a, len) != hashmap_hash (a, len - 1));
        for (size_t i = 0; i < len; i++) {
            b[i] ^= 1;
            assert_true (hashmap_hash (a, len) != hashmap_hash (b, len));
            b[i] ^= 1;
        }
    }
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_invalid),
        cmocka_unit_test (test_basic),
        cmocka_unit_test (test_many_and_iterate),
        cmocka_unit_test (test_hash_spread),
        cmocka_unit_test (test_hash_bytes),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
