/* kvsenv.c - see kvsenv.h */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "src/common/libutil/base64.h"
#include "src/common/libkvs/kvs_frame.h"
#include "src/common/libkvs/blobrecs.h"
#include "src/common/libutil/blobref.h"
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/kvs_txn.h"
#include "src/modules/kvs/load.h"
#include "kvsenv.h"

struct kvsenv *kvsenv_create (uint32_t rank, uint32_t size)
{
    struct kvsenv *env = calloc (1, sizeof (*env));
    assert_non_null (env);
    struct kvs_ctx *ctx = &env->ctx;
    assert_non_null ((ctx->h = fakeh_create (&env->fake)));
    assert_non_null ((ctx->r = canopy_get_reactor (ctx->h)));
    ctx->rank = rank;
    ctx->size = size;
    ctx->version = -1;
    list_init (&ctx->version_waiters);
    ctx->limits.max_nprocs = 1048576;
    ctx->limits.max_pending_per_user = 1024;
    ctx->limits.max_txn_ops = 1000000;
    ctx->limits.hdir_threshold = 128;
    ctx->limits.prime_max = 2048;
    ctx->limits.prime_budget = 8192;
    ctx->limits.prime_values = 65536;
    ctx->limits.relay_max = CANOPY_MSG_SIZE_MAX;
    ctx->limits.relay_hold = 0;     /* tests of holding set it */
    ctx->cache_max = 1 << 26;
    ctx->cache_age = 60;
    tstat_init (&ctx->timing.relay_decode);
    tstat_init (&ctx->timing.relay_encode);
    tstat_init (&ctx->timing.fence_wait);
    tstat_init (&ctx->timing.apply);
    tstat_init (&ctx->timing.apply_ops);
    tstat_init (&ctx->timing.setroot_lag);
    tstat_init (&ctx->timing.setroot_handle);
    assert_non_null ((ctx->cache = objcache_create (ctx->cache_max, ctx->cache_age)));
    assert_non_null ((ctx->loads = load_table_create (ctx)));
    assert_non_null ((env->content = json_object ()));
    return env;
}

void kvsenv_destroy (struct kvsenv *env)
{
    if (env) {
        load_table_destroy (env->ctx.loads);
        objcache_destroy (env->ctx.cache);
        canopy_close (env->ctx.h);
        json_decref (env->content);
        free (env);
    }
}

static void store (struct kvsenv *env, const void *data, size_t len, char *ref)
{
    char *s = base64_encode (data, len);
    assert_non_null (s);
    assert_int_equal (blobref_hash (data, len, ref, BLOBREF_MAX), 0);
    assert_int_equal (json_object_set_new (env->content, ref, json_string (s)), 0);
    free (s);
}

void kvsenv_store_dir (struct kvsenv *env, json_t *dir, bool cache, char *ref)
{
    size_t len;
    char *enc = treeobj_encode (dir, &len);
    assert_non_null (enc);
    store (env, enc, len, ref);
    if (cache)
        assert_int_equal (objcache_put_dir (env->ctx.cache, ref, dir, len), 0);
    free (enc);
}

void kvsenv_store_raw (struct kvsenv *env, const void *data, size_t len,
                       bool cache, char *ref)
{
    store (env, data, len, ref);
    if (cache)
        assert_int_equal (objcache_put_raw (env->ctx.cache, ref, data, len), 0);
}

static int answer_loads (struct kvsenv *env, int errnum)
{
    canopy_msg_t *req;
    int n = 0;
    while ((req = fakeh_take (env->fake, CANOPY_MSGTYPE_REQUEST, "content.load"))) {
        const char *ref = NULL;
        json_t *v;
        assert_int_equal (canopy_msg_get_string (req, &ref), 0);
        if (!errnum && (v = json_object_get (env->content, ref))) {
            size_t len;
            void *data = base64_decode (json_string_value (v),
                                        json_string_length (v), &len);
            assert_non_null (data);
            fakeh_respond (env->fake, req, 0, data, len);
            free (data);
        }
        else
            fakeh_respond (env->fake, req, errnum ? errnum : ENOENT, NULL, 0);
        canopy_msg_decref (req);
        n++;
    }
    kvsenv_run (env);
    return n;
}

int kvsenv_serve_stores (struct kvsenv *env, int errnum)
{
    canopy_msg_t *req;
    int n = 0;
    while ((req = fakeh_take (env->fake, CANOPY_MSGTYPE_REQUEST,
                              "content.store-local"))) {
        const uint8_t *p;
        size_t len, off = 0;
        json_t *seen = json_object ();
        assert_non_null (seen);
        assert_int_equal (canopy_msg_get_payload (req, (const void **)&p, &len), 0);
        /* blobref (BLOBREF_STRLEN bytes), u32 length, data; repeated,
         * each blob once per request
         */
        while (!errnum && off < len) {
            char ref[BLOBREF_MAX], computed[BLOBREF_MAX];
            assert_true (len - off >= BLOBREF_STRLEN + 4);
            memcpy (ref, p + off, BLOBREF_STRLEN);
            ref[BLOBREF_STRLEN] = '\0';
            off += BLOBREF_STRLEN;
            size_t blen = ((size_t)p[off] << 24) | ((size_t)p[off + 1] << 16)
                          | ((size_t)p[off + 2] << 8) | p[off + 3];
            off += 4;
            assert_true (len - off >= blen);
            store (env, p + off, blen, computed);
            assert_string_equal (ref, computed);    /* the applier's refs are right */
            if (json_object_get (seen, ref))
                fail_msg ("blob %s stored twice in one request", ref);
            assert_int_equal (json_object_set_new (seen, ref, json_true ()), 0);
            env->stored_blobs++;
            off += blen;
        }
        json_decref (seen);
        fakeh_respond (env->fake, req, errnum, NULL, 0);
        canopy_msg_decref (req);
        n++;
    }
    kvsenv_run (env);
    return n;
}

int kvsenv_serve_loads (struct kvsenv *env)
{
    return answer_loads (env, 0);
}

int kvsenv_fail_loads (struct kvsenv *env, int errnum)
{
    return answer_loads (env, errnum);
}

void kvsenv_run (struct kvsenv *env)
{
    fakeh_run (env->ctx.h, env->fake);
}

json_t *kvsenv_msg_json (const canopy_msg_t *msg)
{
    const char *s;
    if (canopy_msg_get_string (msg, &s) < 0 || !s)
        return NULL;
    return json_loads (s, JSON_DECODE_ANY, NULL);
}

static int add_rec (const char *ref, const void *data, size_t len, void *arg)
{
    return json_array_append_new (arg, json_pack ("[s I]", ref, (json_int_t)len));
}

json_t *kvsenv_take_event (struct kvsenv *env, const char *topic)
{
    canopy_msg_t *req = fakeh_take_publication (env->fake, topic);
    const void *data;
    size_t len;
    json_t *o;

    if (!req)
        return NULL;
    assert_int_equal (canopy_msg_get_payload (req, &data, &len), 0);
    size_t tlen = strlen (topic) + 1;
    if (canopy_msg_has_flag (req, CANOPY_MSGFLAG_RAW)) {
        /* a kvs_frame: the event is fences[0]; its blob table (a
         * setroot's directories) is added as "objs", and the blob
         * records of its body (a kvs.prime's values) as "vals" (absent
         * if none), for the tests to look at
         */
        json_t *hdr, *fences, *table, *objs, *vals;
        size_t off;
        assert_int_equal (kvs_frame_header ((const char *)data + tlen, len - tlen,
                                            "setroot", &hdr, &fences, &table, &off,
                                            NULL), 0);
        o = json_copy (json_array_get (fences, 0));
        assert_non_null (o);
        assert_non_null ((objs = json_copy (table)));
        assert_non_null ((vals = json_array ()));
        /* a body of blob records (kvs.prime): values too */
        size_t plen = len - tlen;
        if (json_array_size (table) == 0 && off < plen)
            assert_true (blobrecs_foreach ((const char *)data + tlen + off,
                                           plen - off, add_rec, vals, NULL) > 0);
        assert_int_equal (json_object_set_new (o, "objs", objs), 0);
        if (json_array_size (vals) > 0)
            assert_int_equal (json_object_set_new (o, "vals", vals), 0);
        else
            json_decref (vals);
        json_decref (hdr);
    }
    else
        o = json_loadb ((const char *)data + tlen, len - tlen, 0, NULL);
    assert_non_null (o);
    fakeh_respond (env->fake, req, 0, NULL, 0);
    canopy_msg_decref (req);
    return o;
}

canopy_msg_t *kvsenv_txn_request (const char *topic, uint32_t matchtag,
                                  const char *sender, const char *name,
                                  int nprocs, int flags, const char *key,
                                  const void *val, size_t len)
{
    kvs_txn_t *txn = kvs_txn_create ();
    void *buf;
    size_t buflen;
    assert_non_null (txn);
    if (key)
        assert_int_equal (kvs_txn_put_raw (txn, key, val, len), 0);
    assert_int_equal (kvs_txn_encode (txn, name, nprocs, flags, &buf, &buflen), 0);
    canopy_msg_t *msg = fakeh_request (topic, matchtag, sender, buf, buflen);
    assert_non_null (msg);
    free (buf);
    kvs_txn_destroy (txn);
    return msg;
}
