/* load.c - see load.h.
 *
 * Design notes: a load's future carries a struct load (type, ref, table)
 * as an aux item.  The continuation copies what it needs before the
 * future is destroyed, and only then runs the waiters (which may start
 * new loads of the same object).  A held load is a pending cache entry
 * with waiters and no future: its ref is in 'heldrefs' until released.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <canopy/canopy.h>
#include "src/common/libutil/hashmap.h"
#include "src/common/libkvs/treeobj.h"
#include "kvs_ctx.h"
#include "load.h"
#include "shmpub.h"

struct load_table {
    struct kvs_ctx *ctx;
    hashmap_t *map;             /* "d:REF" / "r:REF" -> future in flight */
    /* Holding value loads: 0 not, -1 every one, n > 0 those of refs
     * whose digest starts with one of the n (sorted) 'prefixes'
     */
    int nprefixes;
    uint32_t *prefixes;
    char (*heldrefs)[BLOBREF_MAX];  /* those recorded (each pending in the cache) */
    int nheld;
    int capheld;
};

struct load {
    struct load_table *lt;
    enum objtype type;
    char ref[BLOBREF_MAX];
    char key[BLOBREF_MAX + 2];
};

static void future_free (void *arg)
{
    canopy_future_destroy (arg);
}

struct load_table *load_table_create (struct kvs_ctx *ctx)
{
    struct load_table *lt = calloc (1, sizeof (*lt));
    if (!lt) {
        errno = ENOMEM;
        return NULL;
    }
    lt->ctx = ctx;
    if (!(lt->map = hashmap_create (future_free))) {
        free (lt);
        return NULL;
    }
    return lt;
}

void load_table_destroy (struct load_table *lt)
{
    if (lt) {
        int saved_errno = errno;
        hashmap_destroy (lt->map);
        free (lt->heldrefs);
        free (lt->prefixes);
        free (lt);
        errno = saved_errno;
    }
}

int load_table_count (struct load_table *lt)
{
    return lt ? (int)hashmap_size (lt->map) : 0;
}

static void load_continuation (canopy_future_t *f, void *arg)
{
    struct load *ld = canopy_future_aux_get (f, "load");
    struct load_table *lt = ld->lt;
    struct kvs_ctx *ctx = lt->ctx;
    const void *data;
    size_t len;
    int errnum = 0;
    char key[BLOBREF_MAX + 2];
    enum objtype type = ld->type;
    char ref[BLOBREF_MAX];

    snprintf (key, sizeof (key), "%s", ld->key);
    snprintf (ref, sizeof (ref), "%s", ld->ref);
    if (canopy_rpc_get_raw (f, &data, &len) < 0)
        errnum = errno ? errno : EIO;
    else if ((ctx->stats.load_bytes += len), type == OBJ_DIR) {
        json_t *dir = treeobj_decode (data, len);
        if (!dir || (!treeobj_is_dir (dir) && !treeobj_is_hdir (dir))) {
            canopy_log (ctx->h, LOG_ERR, "object %s is not a directory", ref);
            errnum = EPROTO;
        }
        else if (objcache_put_dir (ctx->cache, ref, dir, len) < 0)
            errnum = errno;
        json_decref (dir);
    }
    else if (objcache_put_raw (ctx->cache, ref, data, len) < 0)
        errnum = errno;
    if (errnum == 0)
        shmpub_put (ctx->shm, ref, data, len);
    (void)hashmap_delete (lt->map, key);    /* destroys f (and ld) */
    objcache_load_done (ctx->cache, type, ref, errnum);
}

/* Send content.load for ref and keep its future.  No side effects on
 * failure.
 */
static int start_load (struct load_table *lt, const char *ref, enum objtype type)
{
    struct kvs_ctx *ctx = lt->ctx;
    struct load *ld;
    canopy_future_t *f;

    if (!(ld = calloc (1, sizeof (*ld)))) {
        errno = ENOMEM;
        return -1;
    }
    ld->lt = lt;
    ld->type = type;
    snprintf (ld->ref, sizeof (ld->ref), "%s", ref);
    snprintf (ld->key, sizeof (ld->key), "%c:%s", type == OBJ_DIR ? 'd' : 'r', ref);
    if (!(f = canopy_rpc (ctx->h, "content.load", ref, CANOPY_NODEID_ANY, 0))) {
        free (ld);
        return -1;
    }
    if (canopy_future_aux_set (f, "load", ld, free) < 0) {
        free (ld);
        goto error;
    }
    if (hashmap_insert (lt->map, ld->key, f) < 0)
        goto error;
    if (canopy_future_then (f, -1, load_continuation, NULL) < 0) {
        int e = errno;
        (void)hashmap_delete (lt->map, ld->key);    /* destroys f */
        errno = e;
        return -1;
    }
    return 0;
error:
    canopy_future_destroy (f);
    return -1;
}

/* Record a value load to start at release.  No side effects on failure. */
static int hold_load (struct load_table *lt, const char *ref)
{
    if (lt->nheld == lt->capheld) {
        int cap = lt->capheld ? lt->capheld * 2 : 16;
        void *v = realloc (lt->heldrefs, cap * sizeof (*lt->heldrefs));
        if (!v) {
            errno = ENOMEM;
            return -1;
        }
        lt->heldrefs = v;
        lt->capheld = cap;
    }
    snprintf (lt->heldrefs[lt->nheld++], BLOBREF_MAX, "%s", ref);
    return 0;
}

/* The first KVS_PRIME_PREFIX hex digits of s as a number; -1 if not hex. */
static int64_t hex_prefix (const char *s)
{
    uint32_t v = 0;
    for (int i = 0; i < KVS_PRIME_PREFIX; i++) {
        int d = blobref_hexval (s[i]);
        if (d < 0)
            return -1;
        v = (v << 4) | (uint32_t)d;
    }
    return v;
}

static int cmp_u32 (const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int load_table_hold (struct load_table *lt, const char *list, size_t len)
{
    size_t n = len / KVS_PRIME_PREFIX;
    uint32_t *v = NULL;

    if (!lt || (list && (len % KVS_PRIME_PREFIX != 0 || n == 0
                         || n > KVS_PRIME_LIST_MAX))) {
        errno = EINVAL;
        return -1;
    }
    /* without memory for the list, hold every value load (correct, only
     * slower for values the event does not bring)
     */
    if (list && (v = malloc (n * sizeof (*v)))) {
        for (size_t i = 0; i < n; i++) {
            int64_t x = hex_prefix (list + i * KVS_PRIME_PREFIX);
            if (x < 0) {
                free (v);
                errno = EINVAL;
                return -1;
            }
            v[i] = (uint32_t)x;
        }
        qsort (v, n, sizeof (*v), cmp_u32);
    }
    free (lt->prefixes);
    lt->prefixes = v;
    lt->nprefixes = v ? (int)n : -1;
    return 0;
}

/* Stop holding (the held refs stay recorded for the caller). */
static void unhold (struct load_table *lt)
{
    free (lt->prefixes);
    lt->prefixes = NULL;
    lt->nprefixes = 0;
}

/* Whether a load of value 'ref' is held now. */
static bool holds (struct load_table *lt, const char *ref)
{
    if (lt->nprefixes <= 0)
        return lt->nprefixes < 0;
    int64_t x = strlen (ref) > BLOBREF_PREFIX_LEN + KVS_PRIME_PREFIX
                ? hex_prefix (ref + BLOBREF_PREFIX_LEN) : -1;
    if (x < 0)
        return false;
    uint32_t key = (uint32_t)x;
    return bsearch (&key, lt->prefixes, lt->nprefixes, sizeof (key), cmp_u32) != NULL;
}

bool load_table_held (struct load_table *lt)
{
    return lt && lt->nprefixes != 0;
}

int load_table_nheld (struct load_table *lt)
{
    return lt ? lt->nheld : 0;
}

/* Take the held refs out of the table (the waiters they complete may
 * hold or load again).
 */
static char (*take_held (struct load_table *lt, int *n))[BLOBREF_MAX]
{
    char (*v)[BLOBREF_MAX] = lt->heldrefs;
    *n = lt->nheld;
    lt->heldrefs = NULL;
    lt->nheld = lt->capheld = 0;
    return v;
}

int load_table_release (struct load_table *lt)
{
    int n, hits = 0;
    char (*v)[BLOBREF_MAX];

    if (!lt)
        return 0;
    unhold (lt);
    v = take_held (lt, &n);
    for (int i = 0; i < n; i++) {
        objcache_t *cache = lt->ctx->cache;
        if (objcache_has (cache, OBJ_RAW, v[i])) {
            hits++;
            objcache_load_done (cache, OBJ_RAW, v[i], 0);
        }
        else if (start_load (lt, v[i], OBJ_RAW) == 0)
            lt->ctx->stats.loads++;
        else
            objcache_load_done (cache, OBJ_RAW, v[i], errno ? errno : ENOMEM);
    }
    free (v);
    return hits;
}

int kvs_load (struct kvs_ctx *ctx, const char *ref, enum objtype type,
              objcache_wait_f cb, void *arg)
{
    int rc = objcache_wait (ctx->cache, ref, type, cb, arg);

    if (rc < 0)
        return -1;
    if (rc == 0)
        return 0;       /* already loading: cb runs when it is done */
    if (type == OBJ_RAW && holds (ctx->loads, ref)) {
        if ((rc = hold_load (ctx->loads, ref)) == 0)
            ctx->stats.held_loads++;
    }
    else if ((rc = start_load (ctx->loads, ref, type)) == 0)
        ctx->stats.loads++;
    if (rc < 0) {
        int e = errno ? errno : ENOMEM;
        /* nobody else waits yet: withdraw, and report by return value */
        objcache_wait_cancel (ctx->cache, ref, type, cb, arg);
        errno = e;
        return -1;
    }
    return 0;
}

void load_table_fail_all (struct load_table *lt, int errnum)
{
    size_t n;
    int nh = 0;
    char (*v)[BLOBREF_MAX] = lt ? take_held (lt, &nh) : NULL;

    if (lt)
        unhold (lt);
    for (int i = 0; i < nh; i++)
        objcache_load_done (lt->ctx->cache, OBJ_RAW, v[i], errnum);
    free (v);
    n = lt ? hashmap_size (lt->map) : 0;

    /* at most the loads in flight now (no allocation needed) */
    for (size_t i = 0; i < n; i++) {
        void *val;
        const char *k = hashmap_first (lt->map, &val);
        if (!k)
            break;
        canopy_future_t *f = hashmap_take (lt->map, k);
        struct load *ld = canopy_future_aux_get (f, "load");
        enum objtype type = ld->type;
        char ref[BLOBREF_MAX];
        snprintf (ref, sizeof (ref), "%s", ld->ref);
        canopy_future_destroy (f);
        objcache_load_done (lt->ctx->cache, type, ref, errnum);
    }
}
