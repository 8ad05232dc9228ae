/* kvs-api - checks of the KVS C API that the command line cannot make:
 * typed round trips, write-back visibility, directory iteration, async
 * lookups in flight, watch streams (flags, directories) and callbacks.  Prints "ok N - what" lines; exits 1 on the first
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

/* kvs_watch callback: record what it was given, stop the reactor. */
struct watched {
    canopy_t *h;
    int calls;
    int errnum;
    json_t *val;
};

static int watch_cb (const char *key, json_t *val, int errnum, void *arg)
{
    struct watched *w = arg;
    w->calls++;
    w->errnum = errnum;
    json_decref (w->val);
    w->val = json_incref (val);
    canopy_reactor_stop (canopy_get_reactor (w->h));
    return 0;
}

/* Is 'o' a "dir" listing that has entry 'name'? */
static bool is_listing_with (json_t *o, const char *name)
{
    const char *type;
    json_t *data;
    return o && json_unpack (o, "{s:s s:o}", "type", &type, "data", &data) == 0
           && !strcmp (type, "dir") && json_object_get (data, name) != NULL;
}

static void watch_checks (canopy_t *h, const char *p)
{
    canopy_future_t *f;
    json_t *o = NULL;
    const void *data;
    size_t len;
    bool exists;

    /* a directory, with its current listing first */
    CHECK (kvs_put_int (h, k (p, "wd.a"), 1) == 0 && kvs_commit (h, 0) == 0,
           "commit a directory");
    CHECK ((f = kvs_watch_start (h, k (p, "wd"), KVS_WATCH_INITIAL)) != NULL,
           "watch_start of a directory");
    CHECK (kvs_watch_get (f, &o) == 0 && is_listing_with (o, "a"),
           "watch_get: the directory's listing first");
    json_decref (o);
    CHECK (kvs_watch_get_raw (f, &data, &len, &exists) == 0 && exists
           && len > 0 && (o = json_loadb (data, len, 0, NULL))
           && is_listing_with (o, "a"),
           "watch_get_raw: the listing as JSON text");
    json_decref (o);
    canopy_future_reset (f);
    CHECK (kvs_put_int (h, k (p, "wd.sub.deep"), 2) == 0 && kvs_commit (h, 0) == 0,
           "commit deep below the directory");
    CHECK (kvs_watch_get (f, &o) == 0 && is_listing_with (o, "sub"),
           "watch_get: a change below reports the listing again");
    json_decref (o);
    CHECK (kvs_watch_cancel (f) == 0, "watch_cancel");
    canopy_future_reset (f);
    while (kvs_watch_get (f, &o) == 0) {   /* reports sent before the cancel */
        json_decref (o);
        canopy_future_reset (f);
    }
    CHECK (errno == ENODATA, "the stream ends with ENODATA");
    canopy_future_destroy (f);

    /* without KVS_WATCH_INITIAL: the first result is the first change */
    CHECK ((f = kvs_watch_start (h, k (p, "wn"), 0)) != NULL, "watch_start, no flags");
    /* the KVS module handles this handle's requests in order: the watch
     * looks at the root before the commit
     */
    CHECK (kvs_put_int (h, k (p, "wn"), 7) == 0 && kvs_commit (h, 0) == 0,
           "commit the watched key");
    CHECK (kvs_watch_get (f, &o) == 0 && json_integer_value (o) == 7,
           "the first result is the change, not the absent key");
    json_decref (o);
    canopy_future_destroy (f);

    /* unknown flags */
    CHECK ((f = kvs_watch_start (h, k (p, "wn"), KVS_READDIR)) != NULL,
           "watch_start with an unknown flag");
    CHECK (kvs_watch_get (f, &o) < 0 && errno == EINVAL,
           "is refused (EINVAL)");
    canopy_future_destroy (f);

    /* the callback API gives the listing of a directory */
    struct watched w = { .h = h };
    CHECK (kvs_watch (h, k (p, "wd"), watch_cb, &w) == 0, "kvs_watch a directory");
    CHECK (kvs_watch (h, k (p, "wd"), watch_cb, &w) < 0 && errno == EEXIST,
           "kvs_watch twice is EEXIST");
    CHECK (canopy_reactor_run (canopy_get_reactor (h), 0) >= 0 && w.calls == 1
           && w.errnum == 0 && is_listing_with (w.val, "sub"),
           "the callback gets the listing");
    CHECK (kvs_unwatch (h, k (p, "wd")) == 0, "kvs_unwatch");
    CHECK (kvs_unwatch (h, k (p, "wd")) < 0 && errno == ENOENT,
           "kvs_unwatch of what is not watched is ENOENT");
    json_decref (w.val);
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

    watch_checks (h, p);
    canopy_close (h);
    printf ("1..%d\n", n);
    return 0;
}
