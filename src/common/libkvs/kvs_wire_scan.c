/* kvs_wire_scan.c - see kvs_wire_scan.h.
 *
 * Design notes:
 * - Every reader below matches one production at s->p and moves s->p
 *   past it, or returns false; any false declines the whole transaction.
 *   Declining is always safe (the caller takes the general path), so the
 *   grammar here is a strict subset of what kvs_wire_decode and
 *   kvs_wire_check_op accept, and each check mirrors one of theirs:
 *   strings of printable ASCII without escapes are valid JSON strings that
 *   mean their bytes; integers follow JSON's grammar with at most 18
 *   digits (no overflow) and are range-checked as check_fence does;
 *   inline values are checked by decoding their base64 as treeobj_validate
 *   does (into a stack buffer: only short ones are read here); keys as
 *   kvs_path_normalize does, minus what it would rewrite.
 * - The operations are scanned twice: once for their grammar (and the
 *   count), and, if any is a valref, again once the blob table that
 *   follows them is read, for the presence of every ref.
 * - The table borrows the blobs from the caller's buffer: the kvs module
 *   merges them into its fence (a copy) before the request goes.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <canopy/kvs.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libutil/base64.h"
#include "kvs_wire_scan.h"

#define MAX_INLINE_B64 128      /* KVS_INLINE_MAX (64) bytes take 88 */
#define MAX_OPS 10000000

struct scan {
    const char *p;
    const char *end;
};

static bool lit (struct scan *s, const char *t, size_t n)
{
    if ((size_t)(s->end - s->p) < n || memcmp (s->p, t, n) != 0)
        return false;
    s->p += n;
    return true;
}
#define LIT(s, t) lit ((s), (t), sizeof (t) - 1)

/* "chars": printable ASCII, no '"' or '\\' inside */
static bool str (struct scan *s, const char **v, size_t *n)
{
    const char *p = s->p;

    if (p >= s->end || *p++ != '"')
        return false;
    const char *start = p;
    while (p < s->end && *p != '"') {
        unsigned char c = *p;
        if (c < 0x20 || c > 0x7e || c == '\\')
            return false;
        p++;
    }
    if (p >= s->end)
        return false;
    *v = start;
    *n = p - start;
    s->p = p + 1;
    return true;
}

/* -?(0|[1-9][0-9]*), at most 18 digits */
static bool integer (struct scan *s, long long *v)
{
    const char *p = s->p;
    bool neg = false;
    long long x = 0;
    int digits = 0;

    if (p < s->end && *p == '-') {
        neg = true;
        p++;
    }
    if (p >= s->end || *p < '0' || *p > '9')
        return false;
    if (*p == '0') {
        p++;
        digits = 1;
    }
    else {
        while (p < s->end && *p >= '0' && *p <= '9') {
            if (++digits > 18)
                return false;
            x = x * 10 + (*p++ - '0');
        }
    }
    /* a fraction or an exponent makes a real: not read here */
    if (p < s->end && (*p == '.' || *p == 'e' || *p == 'E'))
        return false;
    *v = neg ? -x : x;
    s->p = p;
    return true;
}

/* What kvs_path_normalize accepts and does not make the root: control
 * characters were excluded by str().
 */
static bool key_ok (const char *k, size_t n)
{
    size_t comp = 0;
    bool any = false;

    if (n > KVS_MAX_KEY)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (k[i] == '.') {
            comp = 0;
            continue;
        }
        if (++comp > KVS_MAX_COMPONENT)
            return false;
        any = true;
    }
    return any;
}

static bool base64_ok (const char *b, size_t n)
{
    unsigned char out[MAX_INLINE_B64];
    size_t len;

    if (n > MAX_INLINE_B64)
        return false;
    return base64_decode_to (out, sizeof (out), b, n, &len) == 0;
}

/* "REF"(,"REF")*: each a valid blobref, and in 'blobs' if given. */
static bool refs (struct scan *s, const blobtab_t *blobs)
{
    do {
        const char *r;
        size_t n;
        char ref[BLOBREF_MAX];
        if (!str (s, &r, &n) || n != BLOBREF_STRLEN)
            return false;
        memcpy (ref, r, n);
        ref[n] = '\0';
        if (blobref_validate (ref) < 0 || (blobs && !blobtab_has (blobs, ref)))
            return false;
    } while (LIT (s, ","));
    return true;
}

/* The value of one operation. */
static bool value (struct scan *s, const blobtab_t *blobs, bool *valref)
{
    const char *b;
    size_t n;

    if (LIT (s, "null"))
        return true;
    if (LIT (s, "{\"data\":\"")) {
        s->p--;     /* back to the string's opening quote */
        return str (s, &b, &n) && base64_ok (b, n)
               && LIT (s, ",\"type\":\"val\",\"ver\":1}");
    }
    *valref = true;
    if (LIT (s, "{\"ver\":1,\"type\":\"valref\",\"data\":["))
        return refs (s, blobs) && LIT (s, "]}");
    if (LIT (s, "{\"data\":["))
        return refs (s, blobs) && LIT (s, "],\"type\":\"valref\",\"ver\":1}");
    return false;
}

/* OP(,OP)* or nothing, up to (not past) the closing ']'. */
static bool ops (struct scan *s, const blobtab_t *blobs, int *nops, bool *valref)
{
    int count = 0;

    if (s->p < s->end && *s->p == ']') {
        *nops = 0;
        return true;
    }
    do {
        const char *k;
        size_t n;
        if (++count > MAX_OPS
            || !LIT (s, "[") || !str (s, &k, &n) || !key_ok (k, n)
            || !LIT (s, ",") || !value (s, blobs, valref) || !LIT (s, "]"))
            return false;
    } while (LIT (s, ","));
    *nops = count;
    return true;
}

/* The four members before "ops", each once, in any order. */
static bool members (struct scan *s, struct kvs_wire_txn *txn)
{
    bool count = false, flags = false, name = false, nprocs = false;

    for (int i = 0; i < 4; i++) {
        const char *m, *v;
        size_t mn, vn;
        long long x;
        if (!str (s, &m, &mn) || !LIT (s, ":"))
            return false;
        if (mn == 5 && !memcmp (m, "count", 5) && !count) {
            if (!integer (s, &x) || x != 1)
                return false;
            count = true;
        }
        else if (mn == 5 && !memcmp (m, "flags", 5) && !flags) {
            if (!integer (s, &x) || x < INT_MIN || x > INT_MAX)
                return false;
            txn->flags = (int)x;
            flags = true;
        }
        else if (mn == 4 && !memcmp (m, "name", 4) && !name) {
            if (!str (s, &v, &vn) || vn == 0 || vn >= sizeof (txn->name))
                return false;
            memcpy (txn->name, v, vn);
            txn->name[vn] = '\0';
            name = true;
        }
        else if (mn == 6 && !memcmp (m, "nprocs", 6) && !nprocs) {
            if (!integer (s, &x) || x < 1 || x > INT_MAX)
                return false;
            txn->nprocs = (int)x;
            nprocs = true;
        }
        else
            return false;
        if (!LIT (s, ","))
            return false;
    }
    return true;
}

/* The blob table, ["REF",LEN](,["REF",LEN])* or nothing: where each blob
 * lies in buf (from 'off' on; the lengths must use buf up exactly), and
 * its ref (BLOBREF_STRLEN characters in the header text, checked).
 */
struct table {
    const void **data;
    size_t *len;
    const char **ref;
    int n;
    int cap;
};

static void table_free (struct table *t)
{
    free (t->data);
    free (t->len);
    free (t->ref);
}

static int table_grow (struct table *t)
{
    int cap = t->cap ? t->cap * 2 : 16;
    const void **d;
    size_t *l;
    const char **r;

    if (!(d = realloc (t->data, cap * sizeof (*d))))
        return -1;
    t->data = d;
    if (!(l = realloc (t->len, cap * sizeof (*l))))
        return -1;
    t->len = l;
    if (!(r = realloc (t->ref, cap * sizeof (*r))))
        return -1;
    t->ref = r;
    t->cap = cap;
    return 0;
}

/* Returns 0, or -1 to decline, -2 out of memory (t freed either way). */
static int table (struct scan *s, const uint8_t *buf, size_t off, size_t len,
                  struct table *t)
{
    memset (t, 0, sizeof (*t));
    if (s->p < s->end && *s->p == ']')
        return off == len ? 0 : -1;
    do {
        const char *r;
        size_t rn;
        long long blen;
        char ref[BLOBREF_MAX];
        if (!LIT (s, "[") || !str (s, &r, &rn) || rn != BLOBREF_STRLEN
            || !LIT (s, ",") || !integer (s, &blen) || !LIT (s, "]")
            || blen < 0 || (unsigned long long)blen > len - off)
            goto decline;
        memcpy (ref, r, rn);
        ref[rn] = '\0';
        if (blobref_validate (ref) < 0)
            goto decline;
        if (t->n == t->cap && table_grow (t) < 0) {
            table_free (t);
            return -2;
        }
        t->data[t->n] = buf + off;
        t->len[t->n] = (size_t)blen;
        t->ref[t->n] = r;
        t->n++;
        off += (size_t)blen;
    } while (LIT (s, ","));
    if (off == len)
        return 0;
decline:
    table_free (t);
    return -1;
}

int kvs_wire_scan (const void *buf, size_t len, bool verify,
                   struct kvs_wire_txn *txn, blobtab_t **blobsp)
{
    const uint8_t *p = buf;
    struct scan s;
    struct kvs_wire_txn t;
    struct table tab = { 0 };
    blobtab_t *blobs = NULL;
    const char *ops_start;
    bool valref = false;
    uint32_t hlen;
    int rc;

    if (!txn || !blobsp) {
        errno = EINVAL;
        return -1;
    }
    if (!buf || len < 4)
        return 0;
    hlen = ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16)
         | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
    if (hlen > len - 4)
        return 0;
    s.p = (const char *)p + 4;
    s.end = s.p + hlen;
    memset (&t, 0, sizeof (t));
    if (!LIT (&s, "{\"fences\":[{") || !members (&s, &t)
        || !LIT (&s, "\"ops\":["))
        return 0;
    ops_start = s.p;
    if (!ops (&s, NULL, &t.nops, &valref))
        return 0;
    t.ops = ops_start;
    t.opslen = s.p - ops_start;
    if (!LIT (&s, "]}],\"blobs\":["))
        return 0;
    if ((rc = table (&s, p, 4 + (size_t)hlen, len, &tab)) < 0) {
        if (rc == -2)
            goto nomem;
        return 0;
    }
    if (!LIT (&s, "]}") || s.p != s.end)
        goto decline;
    if (verify && blobref_verify_many (tab.n, tab.data, tab.len, tab.ref, NULL) < 0) {
        if (errno == ENOMEM)
            goto nomem;
        goto decline;
    }
    if (!(blobs = blobtab_create ()))
        goto nomem;
    for (int i = 0; i < tab.n; i++) {
        char ref[BLOBREF_MAX];
        memcpy (ref, tab.ref[i], BLOBREF_STRLEN);
        ref[BLOBREF_STRLEN] = '\0';
        if (blobtab_borrow (blobs, ref, tab.data[i], tab.len[i]) < 0) {
            if (errno == ENOMEM)
                goto nomem;
            goto decline;
        }
    }
    if (valref) {
        struct scan again = { .p = t.ops, .end = t.ops + t.opslen };
        bool dummy = false;
        int count;
        if (!ops (&again, blobs, &count, &dummy) || again.p != again.end)
            goto decline;
    }
    table_free (&tab);
    *txn = t;
    *blobsp = blobs;
    return 1;
decline:
    table_free (&tab);
    blobtab_destroy (blobs);
    return 0;
nomem:
    table_free (&tab);
    blobtab_destroy (blobs);
    errno = ENOMEM;
    return -1;
}
