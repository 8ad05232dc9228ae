/* test/watch.c - streaming watches (watch.c) against an object cache and a
 * pretend content service (kvsenv.h): the first report with and without
 * KVS_WATCH_INITIAL, a report only when the key's tree object changes,
 * directories reported as their listing when anything below changes, a
 * key that goes away or changes kind, roots that arrive while a check is
 * loading objects (one more check, the latest root), a watch ended while
 * its check is in flight, load errors, refused requests, kvs.unwatch,
 * disconnects and unloading.
 *
 * Each test builds roots by hand (tree objects stored in the pretend
 * content service), sets ctx.rootref and calls watch_setroot, as
 * kvs_root_update does.
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
#include "src/common/libutil/base64.h"
#include "src/common/libkvs/treeobj.h"
#include "src/modules/kvs/watch.h"
#include "kvsenv.h"

#define SENDER "1:c1"

static json_t *val (const char *s)
{
    return treeobj_create_val (s, strlen (s));
}

/* Store a directory with entries name=value ... (NULL-terminated pairs);
 * a value starting with '@' is a dirref to that ref instead.
 */
static void store_dir (struct kvsenv *env, bool cache, char *ref, ...)
{
    json_t *dir = treeobj_create_dir ();
    const char *name, *v;
    va_list ap;

    assert_non_null (dir);
    va_start (ap, ref);
    while ((name = va_arg (ap, const char *))) {
        v = va_arg (ap, const char *);
        json_t *o = v[0] == '@' ? treeobj_create_dirref (v + 1) : val (v);
        assert_int_equal (treeobj_dir_set (dir, name, o), 0);
    }
    va_end (ap);
    kvsenv_store_dir (env, dir, cache, ref);
    json_decref (dir);
}

static void setroot (struct kvsenv *env, const char *ref)
{
    snprintf (env->ctx.rootref, sizeof (env->ctx.rootref), "%s", ref);
    env->ctx.version++;
    watch_setroot (env->ctx.watches);
    kvsenv_run (env);
}

static struct kvsenv *env_create (void)
{
    struct kvsenv *env = kvsenv_create (1, 4);
    assert_non_null ((env->ctx.watches = watch_table_create (&env->ctx)));
    return env;
}

static void env_destroy (struct kvsenv *env)
{
    watch_table_destroy (env->ctx.watches);
    kvsenv_destroy (env);
}

static void watch (struct kvsenv *env, uint32_t matchtag, const char *key,
                   int flags)
{
    char json[256];
    snprintf (json, sizeof (json), "{\"key\":\"%s\",\"flags\":%d}", key, flags);
    canopy_msg_t *msg = fakeh_request_json ("kvs.watch", matchtag, SENDER, json);
    assert_non_null (msg);
    assert_int_equal (canopy_msg_set_flag (msg, CANOPY_MSGFLAG_STREAMING, true), 0);
    watch_request (env->ctx.watches, msg);
    canopy_msg_decref (msg);
    kvsenv_run (env);
}

/* The next report for 'matchtag': the decoded value in *s (NULL: no such
 * key) or the listing in *dir (either may be NULL if not wanted).
 * Returns false if there is none.
 */
static bool take_report (struct kvsenv *env, uint32_t matchtag, char **s,
                         json_t **dir)
{
    canopy_msg_t *msg = fakeh_take_response (env->fake, matchtag);
    int errnum = -1;
    json_t *o, *v = NULL, *d = NULL;

    if (!msg)
        return false;
    assert_int_equal (canopy_msg_get_errnum (msg, &errnum), 0);
    assert_int_equal (errnum, 0);
    assert_non_null ((o = kvsenv_msg_json (msg)));
    assert_int_equal (json_unpack (o, "{s?o s?o}", "val", &v, "dir", &d), 0);
    assert_true ((v != NULL) != (d != NULL));
    if (s) {
        *s = NULL;
        if (v && json_is_string (v)) {
            size_t len;
            *s = base64_decode (json_string_value (v), json_string_length (v), &len);
            assert_non_null (*s);
        }
        else if (v)
            assert_true (json_is_null (v));
    }
    if (dir)
        *dir = d ? json_incref (d) : NULL;
    json_decref (o);
    canopy_msg_decref (msg);
    return true;
}

/* The next report is the value 'expect' (NULL: no such key). */
static void want_value (struct kvsenv *env, uint32_t matchtag, const char *expect)
{
    char *s;
    json_t *dir;
    assert_true (take_report (env, matchtag, &s, &dir));
    assert_null (dir);
    if (expect) {
        assert_non_null (s);
        assert_string_equal (s, expect);
    }
    else
        assert_null (s);
    free (s);
}

/* The next report is a listing with exactly 'n' entries, among them 'name'. */
static json_t *want_listing (struct kvsenv *env, uint32_t matchtag, int n,
                               const char *name)
{
    json_t *dir;
    assert_true (take_report (env, matchtag, NULL, &dir));
    assert_non_null (dir);
    assert_true (treeobj_is_dir (dir));
    assert_int_equal (treeobj_dir_count (dir), n);
    assert_non_null (treeobj_dir_get (dir, name));
    return dir;
}

/* The stream of 'matchtag' ended with errnum. */
static void want_end (struct kvsenv *env, uint32_t matchtag, int errnum,
                        const char *errstr)
{
    canopy_msg_t *msg = fakeh_take_response (env->fake, matchtag);
    int e = 0;
    assert_non_null (msg);
    assert_int_equal (canopy_msg_get_errnum (msg, &e), 0);
    assert_int_equal (e, errnum);
    if (errstr)
        assert_string_equal (canopy_msg_errstr (msg), errstr);
    canopy_msg_decref (msg);
}

/* Values: the first report, reports only on change, absent keys. */
static void test_values (void **state)
{
    struct kvsenv *env = env_create ();
    char r1[BLOBREF_MAX], r2[BLOBREF_MAX], r3[BLOBREF_MAX], r4[BLOBREF_MAX];

    store_dir (env, true, r1, "a", "1", "b", "x", NULL);
    store_dir (env, true, r2, "a", "1", "b", "y", NULL);    /* b changed */
    store_dir (env, true, r3, "a", "2", "b", "y", NULL);    /* a changed */
    store_dir (env, true, r4, "b", "y", NULL);              /* a gone */
    setroot (env, r1);

    watch (env, 1, "a", KVS_WATCH_INITIAL);
    watch (env, 2, "a", 0);
    watch (env, 3, "nope", KVS_WATCH_INITIAL);
    assert_int_equal (watch_count (env->ctx.watches), 3);
    want_value (env, 1, "1");             /* the current value */
    assert_false (take_report (env, 2, NULL, NULL));   /* not without the flag */
    want_value (env, 3, NULL);            /* absent, reported as such */

    setroot (env, r2);                      /* a did not change */
    assert_false (take_report (env, 1, NULL, NULL));
    assert_false (take_report (env, 2, NULL, NULL));
    assert_false (take_report (env, 3, NULL, NULL));

    setroot (env, r3);
    want_value (env, 1, "2");
    want_value (env, 2, "2");             /* the first change */
    assert_false (take_report (env, 3, NULL, NULL));

    setroot (env, r4);
    want_value (env, 1, NULL);
    want_value (env, 2, NULL);
    setroot (env, r4);                      /* still absent: no report */
    assert_false (take_report (env, 1, NULL, NULL));

    setroot (env, r1);                      /* back */
    want_value (env, 1, "1");
    want_value (env, 2, "1");
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_RESPONSE, NULL), 0);
    assert_int_equal (watch_count (env->ctx.watches), 3);
    env_destroy (env);
}

/* Directories: the listing, again whenever anything below changes,
 * however deep, and not when something elsewhere does.
 */
static void test_directories (void **state)
{
    struct kvsenv *env = env_create ();
    char deep1[BLOBREF_MAX], deep2[BLOBREF_MAX], sub1[BLOBREF_MAX],
         sub2[BLOBREF_MAX], d1[BLOBREF_MAX], d2[BLOBREF_MAX],
         r1[BLOBREF_MAX], r2[BLOBREF_MAX], r3[BLOBREF_MAX], r4[BLOBREF_MAX],
         r5[BLOBREF_MAX], at[4][BLOBREF_MAX + 1];
    json_t *l1, *l2;

    store_dir (env, true, deep1, "x", "1", NULL);
    store_dir (env, true, deep2, "x", "2", NULL);
    snprintf (at[0], sizeof (at[0]), "@%s", deep1);
    snprintf (at[1], sizeof (at[1]), "@%s", deep2);
    store_dir (env, true, sub1, "deep", at[0], NULL);
    store_dir (env, true, sub2, "deep", at[1], NULL);
    snprintf (at[0], sizeof (at[0]), "@%s", sub1);
    snprintf (at[1], sizeof (at[1]), "@%s", sub2);
    store_dir (env, true, d1, "a", "1", "sub", at[0], NULL);
    store_dir (env, true, d2, "a", "1", "sub", at[1], NULL);
    snprintf (at[2], sizeof (at[2]), "@%s", d1);
    snprintf (at[3], sizeof (at[3]), "@%s", d2);
    store_dir (env, true, r1, "d", at[2], "other", "1", NULL);
    store_dir (env, true, r2, "d", at[2], "other", "2", NULL); /* elsewhere */
    store_dir (env, true, r3, "d", at[3], "other", "2", NULL); /* d.sub.deep.x */
    store_dir (env, true, r4, "d", "now a value", NULL);       /* changed kind */
    setroot (env, r1);

    watch (env, 1, "d", KVS_WATCH_INITIAL);
    watch (env, 2, ".", KVS_WATCH_INITIAL);     /* the root directory */
    l1 = want_listing (env, 1, 2, "sub");
    assert_true (treeobj_is_dirref (treeobj_dir_get (l1, "sub")));
    json_decref (want_listing (env, 2, 2, "d"));

    setroot (env, r2);
    assert_false (take_report (env, 1, NULL, NULL));
    json_decref (want_listing (env, 2, 2, "other"));

    setroot (env, r3);
    l2 = want_listing (env, 1, 2, "sub");
    assert_false (json_equal (l1, l2));         /* sub's dirref changed */
    json_decref (l1);
    json_decref (l2);
    json_decref (want_listing (env, 2, 2, "d"));

    setroot (env, r4);
    want_value (env, 1, "now a value");
    json_decref (want_listing (env, 2, 1, "d"));

    /* a value that becomes a directory (and back) */
    watch (env, 3, "d", 0);
    store_dir (env, true, r5, "d", at[2], NULL);
    setroot (env, r5);
    json_decref (want_listing (env, 1, 2, "a"));
    json_decref (want_listing (env, 3, 2, "a"));
    setroot (env, r4);
    want_value (env, 1, "now a value");
    want_value (env, 3, "now a value");
    env_destroy (env);
}

/* Objects that must be loaded: roots that arrive while a check waits for
 * them cost one more check, of the latest root; a watch ended meanwhile is
 * freed when its lookup returns; a load error ends the watch.
 */
static void test_loads (void **state)
{
    struct kvsenv *env = env_create ();
    char d1[BLOBREF_MAX], d2[BLOBREF_MAX], d3[BLOBREF_MAX],
         r1[BLOBREF_MAX], r2[BLOBREF_MAX], r3[BLOBREF_MAX], r4[BLOBREF_MAX],
         at[BLOBREF_MAX + 1];

    store_dir (env, false, d1, "x", "1", NULL);     /* not cached */
    store_dir (env, false, d2, "x", "2", NULL);
    store_dir (env, false, d3, "x", "3", NULL);
    snprintf (at, sizeof (at), "@%s", d1);
    store_dir (env, true, r1, "d", at, NULL);
    snprintf (at, sizeof (at), "@%s", d2);
    store_dir (env, true, r2, "d", at, NULL);
    snprintf (at, sizeof (at), "@%s", d3);
    store_dir (env, true, r3, "d", at, NULL);
    setroot (env, r1);

    watch (env, 1, "d.x", KVS_WATCH_INITIAL);
    assert_false (take_report (env, 1, NULL, NULL));    /* loading d1 */
    setroot (env, r2);
    setroot (env, r3);
    assert_int_equal (kvsenv_serve_loads (env), 1);     /* d1 */
    kvsenv_run (env);
    want_value (env, 1, "1");     /* the check it started with */
    assert_int_equal (kvsenv_serve_loads (env), 1);     /* d3; d2 skipped */
    kvsenv_run (env);
    want_value (env, 1, "3");     /* then the latest root */
    assert_int_equal (kvsenv_serve_loads (env), 0);
    assert_false (take_report (env, 1, NULL, NULL));

    /* ended (kvs.unwatch) while its check waits for a load */
    setroot (env, r2);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_REQUEST, "content.load"), 1);
    canopy_msg_t *msg = fakeh_request_json ("kvs.unwatch", 9, SENDER,
                                            "{\"matchtag\":1}");
    watch_unwatch (env->ctx.watches, msg);
    canopy_msg_decref (msg);
    want_end (env, 1, ENODATA, NULL);
    assert_non_null ((msg = fakeh_take_response (env->fake, 9)));
    canopy_msg_decref (msg);
    assert_int_equal (watch_count (env->ctx.watches), 0);
    assert_int_equal (kvsenv_serve_loads (env), 1);     /* freed now (ASan) */
    kvsenv_run (env);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_RESPONSE, NULL), 0);

    /* a load that fails ends the watch with its error */
    objcache_destroy (env->ctx.cache);                  /* forget d2 */
    assert_non_null ((env->ctx.cache = objcache_create (env->ctx.cache_max,
                                                        env->ctx.cache_age)));
    store_dir (env, true, r4, "d", at, NULL);           /* r4 == r3, cached */
    setroot (env, r4);
    watch (env, 2, "d.x", KVS_WATCH_INITIAL);
    assert_int_equal (kvsenv_fail_loads (env, EIO), 1);
    kvsenv_run (env);
    canopy_msg_t *end = fakeh_take_response (env->fake, 2);
    int e = 0;
    assert_non_null (end);
    assert_int_equal (canopy_msg_get_errnum (end, &e), 0);
    assert_int_equal (e, EIO);
    canopy_msg_decref (end);
    assert_int_equal (watch_count (env->ctx.watches), 0);
    assert_int_equal (env->ctx.nlookups, 0);
    env_destroy (env);
}

/* Malformed or refused requests are answered once, and watch nothing. */
static void test_refused (void **state)
{
    struct kvsenv *env = env_create ();
    char r1[BLOBREF_MAX];
    canopy_msg_t *msg;
    int e;

    store_dir (env, true, r1, "a", "1", NULL);
    setroot (env, r1);

    watch (env, 1, "a", KVS_READDIR);                   /* unknown flag */
    want_end (env, 1, EINVAL, "kvs.watch: unknown flags"
                " (only KVS_WATCH_INITIAL applies)");

    msg = fakeh_request_json ("kvs.watch", 2, SENDER, "{\"key\":\"a\"}");
    watch_request (env->ctx.watches, msg);              /* not streaming */
    canopy_msg_decref (msg);
    want_end (env, 2, EPROTO, "kvs.watch must be streaming");

    msg = fakeh_request_json ("kvs.watch", 3, SENDER, "{\"flags\":32}");
    assert_int_equal (canopy_msg_set_flag (msg, CANOPY_MSGFLAG_STREAMING, true), 0);
    watch_request (env->ctx.watches, msg);              /* no key */
    canopy_msg_decref (msg);
    want_end (env, 3, EPROTO, "malformed kvs.watch");

    msg = fakeh_request_json ("kvs.unwatch", 4, SENDER, "{}");
    watch_unwatch (env->ctx.watches, msg);
    canopy_msg_decref (msg);
    assert_non_null ((msg = fakeh_take_response (env->fake, 4)));
    assert_int_equal (canopy_msg_get_errnum (msg, &e), 0);
    assert_int_equal (e, EPROTO);
    canopy_msg_decref (msg);

    assert_int_equal (watch_count (env->ctx.watches), 0);
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_RESPONSE, NULL), 0);
    env_destroy (env);
}

/* kvs.unwatch ends only its sender's watch of that matchtag; a disconnect
 * ends all of the sender's; unloading ends the rest with ENODATA.
 */
static void test_ending (void **state)
{
    struct kvsenv *env = env_create ();
    char r1[BLOBREF_MAX];
    canopy_msg_t *msg;

    store_dir (env, true, r1, "a", "1", NULL);
    setroot (env, r1);
    watch (env, 1, "a", 0);
    watch (env, 2, "a", 0);
    msg = fakeh_request_json ("kvs.watch", 1, "2:c7", "{\"key\":\"a\",\"flags\":0}");
    assert_int_equal (canopy_msg_set_flag (msg, CANOPY_MSGFLAG_STREAMING, true), 0);
    watch_request (env->ctx.watches, msg);              /* same matchtag, */
    canopy_msg_decref (msg);                            /* another sender */
    assert_int_equal (watch_count (env->ctx.watches), 3);

    msg = fakeh_request_json ("kvs.unwatch", 5, SENDER, "{\"matchtag\":1}");
    watch_unwatch (env->ctx.watches, msg);
    canopy_msg_decref (msg);
    want_end (env, 1, ENODATA, NULL);
    assert_non_null ((msg = fakeh_take_response (env->fake, 5)));
    canopy_msg_decref (msg);
    assert_int_equal (watch_count (env->ctx.watches), 2);

    watch_disconnect (env->ctx.watches, SENDER);
    want_end (env, 2, ENODATA, NULL);
    assert_int_equal (watch_count (env->ctx.watches), 1);

    watch_table_destroy (env->ctx.watches);             /* unloading */
    env->ctx.watches = NULL;
    want_end (env, 1, ENODATA, "KVS module unloading");
    assert_int_equal (fakeh_count (env->fake, CANOPY_MSGTYPE_RESPONSE, NULL), 0);
    kvsenv_destroy (env);
}

/* A report that cannot be sent ends the watch (one error response). */
static void test_send_fails (void **state)
{
    struct kvsenv *env = env_create ();
    char r1[BLOBREF_MAX], r2[BLOBREF_MAX];

    store_dir (env, true, r1, "a", "1", NULL);
    store_dir (env, true, r2, "a", "2", NULL);
    setroot (env, r1);
    watch (env, 1, "a", 0);
    fakeh_fail_send (env->fake, "kvs.watch", 0, 1, ENOMEM);
    setroot (env, r2);
    assert_int_equal (fakeh_failed_sends (env->fake), 1);
    want_end (env, 1, ENOMEM, "kvs.watch: cannot send the report");
    assert_int_equal (watch_count (env->ctx.watches), 0);
    env_destroy (env);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_values),
        cmocka_unit_test (test_directories),
        cmocka_unit_test (test_loads),
        cmocka_unit_test (test_refused),
        cmocka_unit_test (test_ending),
        cmocka_unit_test (test_send_fails),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
