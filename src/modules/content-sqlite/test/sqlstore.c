/* test/sqlstore.c - the SQLite blob store: create and reopen (1 and 16
 * shards), put/get/delete with and without compression, checkpoints kept
 * newest first and trimmed, sync, a second opener refused, a file from
 * another store refused, a missing shard, a garbage file, a damaged blob
 * found by the full check, a shard size cap giving ENOSPC.
 *
 * Corruption is injected with SQLite directly (test code only).
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
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include <sodium.h>
#include "src/modules/content-sqlite/sqlstore.h"


static void make_dir (char *buf, size_t size)
{
    const char *t = getenv ("TMPDIR");
    snprintf (buf, size, "%s/sqlstore-XXXXXX", t && *t ? t : "/tmp");
    assert_non_null (mkdtemp (buf));
}

static void remove_dir (const char *dir)
{
    sqlstore_remove_files (dir);
    assert_int_equal (rmdir (dir), 0);
}

static struct sqlstore_config config (const char *dir, int shards)
{
    struct sqlstore_config cfg = {
        .dir = dir,
        .shards = shards,
        .compress_threshold = 256,
        .keep_checkpoints = 3,
        .durability = SQLSTORE_DURABLE,
    };
    return cfg;
}

struct blob {
    uint8_t digest[32];
    char *data;
    size_t len;
};

static void blob_make (struct blob *b, int i, size_t len, bool compressible)
{
    b->len = len;
    b->data = malloc (len + 1);
    assert_non_null (b->data);
    if (compressible) {
        for (size_t k = 0; k < len; k++)
            b->data[k] = 'a' + (k % 3);
    }
    else {
        unsigned char seed[randombytes_SEEDBYTES] = { 0 };
        memcpy (seed, &i, sizeof (i));
        randombytes_buf_deterministic (b->data, len, seed);
    }
    if (len >= 4)
        memcpy (b->data, &i, sizeof (i));
    crypto_hash_sha256 (b->digest, (unsigned char *)b->data, len);
}

static void put_blobs (sqlstore_t *st, struct blob *v, int n, int expect_added)
{
    struct sqlstore_blob *sb = calloc (n, sizeof (*sb));
    canopy_error_t error;
    int added = -1;
    assert_non_null (sb);
    for (int i = 0; i < n; i++) {
        sb[i].digest = v[i].digest;
        sb[i].data = v[i].data;
        sb[i].len = v[i].len;
    }
    assert_int_equal (sqlstore_put (st, sb, n, &added, &error), 0);
    assert_int_equal (added, expect_added);
    free (sb);
}

static void check_blob (sqlstore_t *st, struct blob *b)
{
    void *data;
    size_t len;
    canopy_error_t error;
    assert_int_equal (sqlstore_get (st, b->digest, &data, &len, &error), 0);
    assert_int_equal (len, b->len);
    assert_memory_equal (data, b->data, len);
    free (data);
}

static void round_trip (int shards)
{
    char dir[256];
    canopy_error_t error;
    struct sqlstore_config cfg;
    sqlstore_t *st;
    struct blob v[40];
    struct sqlstore_stats stats;
    void *data;
    size_t len;

    make_dir (dir, sizeof (dir));
    cfg = config (dir, shards);
    st = sqlstore_open (&cfg, &error);
    assert_non_null (st);
    assert_true (sqlstore_is_new (st));
    assert_int_equal (sqlstore_shards (st), shards);
    for (int i = 0; i < 40; i++)
        blob_make (&v[i], i, i == 0 ? 0 : i * 997 % 70000, i % 2 == 0);
    put_blobs (st, v, 40, 40);
    put_blobs (st, v, 10, 0);       /* again: nothing new */
    for (int i = 0; i < 40; i++)
        check_blob (st, &v[i]);
    assert_int_equal (sqlstore_stats (st, &stats, &error), 0);
    assert_int_equal (stats.blobs, 40);
    assert_true (stats.compressed > 0);
    assert_true (stats.stored_bytes < stats.raw_bytes);
    assert_int_equal (sqlstore_sync (st, &error), 0);
    assert_int_equal (sqlstore_checkpoint_put (st, "sha256-x", 1, 10.0, &error), 0);
    sqlstore_close (st);

    /* reopen: a different shard count asked for is ignored */
    cfg.shards = shards == 1 ? 16 : 1;
    cfg.must_exist = true;
    st = sqlstore_open (&cfg, &error);
    assert_non_null (st);
    assert_false (sqlstore_is_new (st));
    assert_int_equal (sqlstore_shards (st), shards);
    for (int i = 0; i < 40; i++)
        check_blob (st, &v[i]);
    struct sqlstore_check_result res;
    assert_int_equal (sqlstore_check (st, SQLSTORE_CHECK_FULL, &res, &error), 0);
    assert_int_equal (res.blobs, 40);
    uint8_t two[2 * 32];
    int deleted = -1;
    memcpy (two, v[3].digest, 32);
    memcpy (two + 32, v[5].digest, 32);
    assert_int_equal (sqlstore_delete (st, two, 1, &deleted, &error), 0);
    assert_int_equal (deleted, 1);
    assert_int_equal (sqlstore_delete (st, two, 2, &deleted, &error), 0);
    assert_int_equal (deleted, 1);
    errno = 0;
    assert_int_equal (sqlstore_get (st, v[3].digest, &data, &len, &error), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (sqlstore_stats (st, &stats, &error), 0);
    assert_int_equal (stats.blobs, 38);
    assert_true (stats.file_bytes > 0);
    sqlstore_close (st);
    for (int i = 0; i < 40; i++)
        free (v[i].data);
    remove_dir (dir);
}

static void test_one_shard (void **state)
{
    round_trip (1);
}

static void test_sixteen_shards (void **state)
{
    round_trip (16);
    char dir[256];
    canopy_error_t error;
    struct sqlstore_config cfg;
    make_dir (dir, sizeof (dir));
    cfg = config (dir, 3);
    errno = 0;
    assert_null (sqlstore_open (&cfg, &error));
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (error.text, "power of 2"));
    remove_dir (dir);
}

static void test_checkpoints (void **state)
{
    char dir[256];
    canopy_error_t error;
    struct sqlstore_config cfg;
    sqlstore_t *st;
    struct sqlstore_checkpoint *v;
    int n;

    make_dir (dir, sizeof (dir));
    cfg = config (dir, 4);
    assert_non_null ((st = sqlstore_open (&cfg, &error)));
    assert_int_equal (sqlstore_checkpoint_list (st, &v, &n, &error), 0);
    assert_int_equal (n, 0);
    free (v);
    for (int i = 1; i <= 5; i++) {
        char ref[32];
        snprintf (ref, sizeof (ref), "sha256-%d", i);
        assert_int_equal (sqlstore_checkpoint_put (st, ref, i * 10, 100.0 + i, &error), 0);
    }
    sqlstore_close (st);
    cfg.must_exist = true;
    assert_non_null ((st = sqlstore_open (&cfg, &error)));
    assert_int_equal (sqlstore_checkpoint_list (st, &v, &n, &error), 0);
    assert_int_equal (n, 3);
    assert_string_equal (v[0].rootref, "sha256-5");
    assert_int_equal (v[0].version, 50);
    assert_true (v[0].timestamp == 105.0);
    assert_string_equal (v[2].rootref, "sha256-3");
    assert_true (v[0].seq > v[1].seq);
    free (v);
    /* a later, lower version is still the newest */
    assert_int_equal (sqlstore_checkpoint_put (st, "sha256-low", 7, 200.0, &error), 0);
    assert_int_equal (sqlstore_checkpoint_list (st, &v, &n, &error), 0);
    assert_string_equal (v[0].rootref, "sha256-low");
    free (v);
    sqlstore_close (st);
    remove_dir (dir);
}

static void test_refusals (void **state)
{
    char dir[256], dir2[256], p[600], p2[600];
    canopy_error_t error;
    struct sqlstore_config cfg, cfg2;
    sqlstore_t *st, *st2;

    make_dir (dir, sizeof (dir));
    make_dir (dir2, sizeof (dir2));
    cfg = config (dir, 2);
    cfg2 = config (dir2, 2);
    assert_non_null ((st = sqlstore_open (&cfg, &error)));
    /* a second opener */
    errno = 0;
    assert_null (sqlstore_open (&cfg, &error));
    assert_int_equal (errno, EBUSY);
    assert_non_null (strstr (error.text, "in use"));
    sqlstore_close (st);
    assert_non_null ((st2 = sqlstore_open (&cfg2, &error)));
    sqlstore_close (st2);

    /* a shard of another store */
    snprintf (p, sizeof (p), "%s/content-01.sqlite", dir);
    snprintf (p2, sizeof (p2), "%s/content-01.sqlite", dir2);
    assert_int_equal (rename (p2, p), 0);
    errno = 0;
    assert_null (sqlstore_open (&cfg, &error));
    assert_int_equal (errno, EINVAL);
    assert_non_null (strstr (error.text, "another store"));

    /* a missing shard */
    assert_int_equal (unlink (p), 0);
    errno = 0;
    assert_null (sqlstore_open (&cfg, &error));
    assert_int_equal (errno, ENOENT);
    assert_non_null (strstr (error.text, "missing"));

    /* no store at all, when one must exist */
    cfg2.must_exist = true;
    sqlstore_remove_files (dir2);
    errno = 0;
    assert_null (sqlstore_open (&cfg2, &error));
    assert_int_equal (errno, ENOENT);

    /* a garbage main file */
    snprintf (p, sizeof (p), "%s/content.sqlite", dir2);
    int fd = open (p, O_CREAT | O_WRONLY, 0600);
    assert_true (fd >= 0);
    char junk[8192];
    memset (junk, 'x', sizeof (junk));
    assert_int_equal (write (fd, junk, sizeof (junk)), sizeof (junk));
    close (fd);
    errno = 0;
    assert_null (sqlstore_open (&cfg2, &error));
    assert_int_equal (errno, EIO);
    assert_true (strlen (error.text) > 0);
    remove_dir (dir);
    remove_dir (dir2);
}

static void test_damage_found (void **state)
{
    char dir[256], p[600];
    canopy_error_t error;
    struct sqlstore_config cfg;
    sqlstore_t *st;
    struct blob v[4];
    sqlite3 *db;

    make_dir (dir, sizeof (dir));
    cfg = config (dir, 1);
    assert_non_null ((st = sqlstore_open (&cfg, &error)));
    for (int i = 0; i < 4; i++)
        blob_make (&v[i], i, 1000, false);
    put_blobs (st, v, 4, 4);
    sqlstore_close (st);
    snprintf (p, sizeof (p), "%s/content.sqlite", dir);
    assert_int_equal (sqlite3_open (p, &db), SQLITE_OK);
    assert_int_equal (sqlite3_exec (db, "UPDATE objects SET data = zeroblob(1000)"
                                        " WHERE rowid = 2", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close (db);
    assert_non_null ((st = sqlstore_open (&cfg, &error)));
    assert_int_equal (sqlstore_check (st, SQLSTORE_CHECK_QUICK, NULL, &error), 0);
    errno = 0;
    assert_int_equal (sqlstore_check (st, SQLSTORE_CHECK_FULL, NULL, &error), -1);
    assert_int_equal (errno, EIO);
    assert_non_null (strstr (error.text, "hash check"));
    sqlstore_close (st);
    for (int i = 0; i < 4; i++)
        free (v[i].data);
    remove_dir (dir);
}

static void test_cap (void **state)
{
    char dir[256];
    canopy_error_t error;
    struct sqlstore_config cfg;
    sqlstore_t *st;
    struct blob b;
    int rc = 0;

    make_dir (dir, sizeof (dir));
    cfg = config (dir, 2);
    cfg.shard_max_bytes = 256 * 1024;
    assert_non_null ((st = sqlstore_open (&cfg, &error)));
    for (int i = 0; i < 100 && rc == 0; i++) {
        struct sqlstore_blob sb;
        blob_make (&b, i, 20000, false);
        sb.digest = b.digest;
        sb.data = b.data;
        sb.len = b.len;
        errno = 0;
        rc = sqlstore_put (st, &sb, 1, NULL, &error);
        free (b.data);
    }
    assert_int_equal (rc, -1);
    assert_int_equal (errno, ENOSPC);
    assert_non_null (strstr (error.text, "size cap"));
    /* still usable: reads and checkpoints work */
    assert_int_equal (sqlstore_checkpoint_put (st, "sha256-y", 1, 1.0, &error), 0);
    sqlstore_close (st);
    remove_dir (dir);
}

static void test_volatile (void **state)
{
    char dir[256];
    canopy_error_t error;
    struct sqlstore_config cfg;
    sqlstore_t *st;
    struct blob b;

    make_dir (dir, sizeof (dir));
    cfg = config (dir, 1);
    cfg.durability = SQLSTORE_VOLATILE;
    assert_non_null ((st = sqlstore_open (&cfg, &error)));
    blob_make (&b, 1, 300, true);
    put_blobs (st, &b, 1, 1);
    assert_int_equal (sqlstore_sync (st, &error), 0);
    assert_int_equal (sqlstore_checkpoint_put (st, "sha256-z", 1, 1.0, &error), 0);
    check_blob (st, &b);
    free (b.data);
    sqlstore_close (st);
    remove_dir (dir);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_one_shard),
        cmocka_unit_test (test_sixteen_shards),
        cmocka_unit_test (test_checkpoints),
        cmocka_unit_test (test_refusals),
        cmocka_unit_test (test_damage_found),
        cmocka_unit_test (test_cap),
        cmocka_unit_test (test_volatile),
    };
    if (sodium_init () < 0)
        return 1;
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
