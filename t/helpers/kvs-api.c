/* kvs-api - checks of the KVS C API that the command line cannot make:
 * typed round trips, write-back visibility, directory iteration, async
 * lookups in flight.  Prints "ok N - what" lines; exits 1 on the first
 * failure.  Usage: kvs-api PREFIX
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <canopy/canopy.h>

static int n;
#define CHECK(cond, what) do { \
    if (!(cond)) { \
        printf ("not ok %d - %s (errno %d %s)\n", ++n, what, errno, strerror (errno)); \
        exit (1); \
    } \
    printf ("ok %d - %s\n", ++n, what); \
} while (0)

static char *k (const char *prefix, const char *name)
{
    static char buf[8][256];
    static int i;
    char *b = buf[i++ % 8];
    snprintf (b, 256, "%s.%s", prefix, name);
    return b;
}

int main (int argc, char *argv[])
{
    canopy_error_t error;
    canopy_t *h;
    const char *p = argc > 1 ? argv[1] : "api";

    if (!(h = canopy_open (NULL, 0, &error))) {
        fprintf (stderr, "%s\n", error.text);
        return 1;
    }
    /* write-back: nothing is visible before commit */
    CHECK (kvs_put_int (h, k (p, "int"), -42) == 0, "put_int");
    CHECK (kvs_pending (h) == 1, "one pending operation");
    int iv;
    CHECK (kvs_get_int (h, k (p, "int"), &iv) < 0 && errno == ENOENT,
           "a put is invisible before commit");
    CHECK (kvs_put_int64 (h, k (p, "i64"), 1LL << 40) == 0, "put_int64");
    CHECK (kvs_put_double (h, k (p, "dbl"), 3.25) == 0, "put_double");
    CHECK (kvs_put_boolean (h, k (p, "bool"), true) == 0, "put_boolean");
    CHECK (kvs_put_string (h, k (p, "str"), "hello world") == 0, "put_string");
    json_t *o = json_pack ("{s:i s:[i,i]}", "a", 1, "b", 2, 3);
    CHECK (kvs_put (h, k (p, "json"), o) == 0, "put json");
    unsigned char bin[256];
    for (int i = 0; i < 256; i++)
        bin[i] = i;
    CHECK (kvs_put_raw (h, k (p, "bin"), bin, 256) == 0, "put_raw binary");
    CHECK (kvs_put_raw (h, k (p, "empty"), NULL, 0) == 0, "put_raw empty");
    CHECK (kvs_put_string (h, "", "x") < 0 && errno == EINVAL, "the root is not a value");
    CHECK (kvs_commit (h, 0) == 0, "commit");
    CHECK (kvs_pending (h) == 0, "nothing pending after commit");
    CHECK (kvs_get_int (h, k (p, "int"), &iv) == 0 && iv == -42, "get_int");
    int64_t i64;
    CHECK (kvs_get_int64 (h, k (p, "i64"), &i64) == 0 && i64 == 1LL << 40, "get_int64");
    double d;
    CHECK (kvs_get_double (h, k (p, "dbl"), &d) == 0 && d == 3.25, "get_double");
    bool b;
    CHECK (kvs_get_boolean (h, k (p, "bool"), &b) == 0 && b, "get_boolean");
    char *s;
    CHECK (kvs_get_string (h, k (p, "str"), &s) == 0 && !strcmp (s, "hello world"),
           "get_string");
    free (s);
    json_t *got;
    CHECK (kvs_get (h, k (p, "json"), &got) == 0 && json_equal (got, o), "get json");
    json_decref (got);
    json_decref (o);
    void *data;
    size_t len;
    CHECK (kvs_get_raw (h, k (p, "bin"), &data, &len) == 0 && len == 256
           && !memcmp (data, bin, 256), "get_raw binary");
    free (data);
    CHECK (kvs_get_raw (h, k (p, "empty"), &data, &len) == 0 && len == 0, "get_raw empty");
    free (data);
    CHECK (kvs_get_int (h, k (p, "str"), &iv) < 0 && errno == EPROTO,
           "get_int of a string is EPROTO");
    CHECK (kvs_get_boolean (h, k (p, "int"), &b) < 0 && errno == EPROTO,
           "get_boolean of an int is EPROTO");
    CHECK (kvs_get_int (h, p, &iv) < 0 && errno == EISDIR, "a directory is EISDIR");
    CHECK (kvs_get_int (h, k (p, "int.x"), &iv) < 0 && errno == ENOTDIR,
           "through a value is ENOTDIR");
    CHECK (kvs_put_double (h, "x", NAN) < 0 && errno == EINVAL, "NaN refused");

    /* directories */
    kvsdir_t *dir;
    CHECK (kvs_get_dir (h, p, &dir) == 0, "get_dir");
    CHECK (kvsdir_count (dir) == 8, "dir has 8 entries");
    kvsitr_t *itr = kvsitr_create (dir);
    const char *name, *prev = "";
    int count = 0;
    while ((name = kvsitr_next (itr))) {
        CHECK (strcmp (prev, name) < 0, "iteration is sorted");
        prev = name;
        count++;
    }
    CHECK (count == 8, "iterated every entry");
    kvsitr_destroy (itr);
    CHECK (!kvsdir_isdir (dir, "int") && kvsdir_exists (dir, "int"), "entry types");
    kvsdir_destroy (dir);
    CHECK (kvs_get_dir (h, k (p, "int"), &dir) < 0 && errno == ENOTDIR,
           "get_dir of a value is ENOTDIR");

    /* symlinks */
    CHECK (kvs_symlink (h, k (p, "link"), k (p, "str")) == 0, "symlink");
    CHECK (kvs_symlink (h, k (p, "dangling"), "no.such.key") == 0, "dangling symlink");
    CHECK (kvs_symlink (h, k (p, "c1"), k (p, "c2")) == 0
           && kvs_symlink (h, k (p, "c2"), k (p, "c1")) == 0, "symlink cycle");
    CHECK (kvs_commit (h, 0) == 0, "commit symlinks");
    CHECK (kvs_get_string (h, k (p, "link"), &s) == 0 && !strcmp (s, "hello world"),
           "a symlink is followed");
    free (s);
    CHECK (kvs_readlink (h, k (p, "link"), &s) == 0 && !strcmp (s, k (p, "str")),
           "readlink");
    free (s);
    CHECK (kvs_get_string (h, k (p, "dangling"), &s) < 0 && errno == ENOENT,
           "a dangling symlink is ENOENT");
    CHECK (kvs_get_string (h, k (p, "c1"), &s) < 0 && errno == ELOOP, "a cycle is ELOOP");
    CHECK (kvs_readlink (h, k (p, "str"), &s) < 0 && errno == EINVAL,
           "readlink of a value is EINVAL");

    /* many lookups in flight on one handle */
    canopy_future_t *fs[200];
    for (int i = 0; i < 200; i++)
        fs[i] = kvs_lookup (h, k (p, "int"), 0);
    int good = 0;
    for (int i = 199; i >= 0; i--) {
        const void *v;
        size_t l;
        if (fs[i] && kvs_lookup_get_raw (fs[i], &v, &l) == 0 && l == 3
            && !memcmp (v, "-42", 3))
            good++;
        canopy_future_destroy (fs[i]);
    }
    CHECK (good == 200, "200 lookups in flight");

    /* versions */
    int v1, v2;
    CHECK (kvs_get_version (h, &v1) == 0, "get_version");
    CHECK (kvs_put_int (h, k (p, "ver"), 1) == 0 && kvs_commit (h, 0) == 0, "commit");
    CHECK (kvs_get_version (h, &v2) == 0 && v2 == v1 + 1, "the version moves forward");
    CHECK (kvs_wait_version (h, v2) == 0, "wait_version of the current version");

    /* unlink and discard */
    CHECK (kvs_unlink (h, k (p, "int")) == 0 && kvs_commit (h, 0) == 0, "unlink");
    CHECK (kvs_get_int (h, k (p, "int"), &iv) < 0 && errno == ENOENT, "unlinked is gone");
    CHECK (kvs_put_int (h, k (p, "never"), 1) == 0, "put");
    kvs_discard (h);
    CHECK (kvs_commit (h, 0) == 0, "empty commit");
    CHECK (kvs_get_int (h, k (p, "never"), &iv) < 0 && errno == ENOENT,
           "discarded puts are not committed");
    canopy_close (h);
    printf ("1..%d\n", n);
    return 0;
}
