/* kvs_relay.c - see kvs_relay.h
 *
 * Ownership: a decoded kvs_relay_t holds the parsed header and a blob
 * table with copies of the blobs (blobtab copies); only the ops text of
 * each fence points into the caller's buffer, so the relay must not
 * outlive that buffer.  The encoder copies everything it is given.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <canopy/message.h>
#include "src/common/libcanopy/json_fast.h"
#include "src/common/libcanopy/json_fast_dump.h"
#include "src/common/libutil/errprintf.h"
#include "src/common/libutil/blobref.h"
#include "src/common/libutil/strbuf.h"
#include "kvs_frame.h"
#include "kvs_relay.h"

/* Ops text */

void kvs_opsbuf_init (struct kvs_opsbuf *ob)
{
    memset (ob, 0, sizeof (*ob));
}

void kvs_opsbuf_clear (struct kvs_opsbuf *ob)
{
    if (ob) {
        int saved_errno = errno;
        free (ob->data);
        kvs_opsbuf_init (ob);
        errno = saved_errno;
    }
}

/* Room for 'more' bytes and a NUL (the growth is strbuf's). */
static int reserve (struct kvs_opsbuf *ob, size_t more)
{
    struct strbuf b = { .s = ob->data, .len = ob->len, .cap = ob->cap };

    if (strbuf_reserve (&b, more) < 0)
        return -1;
    ob->data = b.s;
    ob->cap = b.cap;
    return 0;
}

int kvs_opsbuf_append_text (struct kvs_opsbuf *ob, const char *text,
                            size_t len, int nops)
{
    if (!ob || nops < 0 || (len > 0 && !text) || (nops == 0) != (len == 0)) {
        errno = EINVAL;
        return -1;
    }
    if (nops == 0)
        return 0;
    if (reserve (ob, len + 1) < 0)
        return -1;
    if (ob->len > 0)
        ob->data[ob->len++] = ',';
    memcpy (ob->data + ob->len, text, len);
    ob->len += len;
    ob->data[ob->len] = '\0';
    ob->nops += nops;
    return 0;
}

int kvs_opsbuf_append_json (struct kvs_opsbuf *ob, json_t *ops)
{
    char *s;
    size_t n;
    int rc;

    if (!ob || !json_is_array (ops)) {
        errno = EINVAL;
        return -1;
    }
    if (json_array_size (ops) == 0)
        return 0;
    if (!(s = json_fast_dumps (ops, JSON_COMPACT))) {
        errno = ENOMEM;
        return -1;
    }
    /* "[a,b,...]" -> "a,b,..." */
    n = strlen (s);
    rc = kvs_opsbuf_append_text (ob, s + 1, n - 2, (int)json_array_size (ops));
    free (s);
    return rc;
}

json_t *kvs_opsbuf_parse (const struct kvs_opsbuf *ob)
{
    json_t *ops;
    char *s;

    if (!ob) {
        errno = EINVAL;
        return NULL;
    }
    if (ob->nops == 0)
        return json_array ();
    if (!(s = malloc (ob->len + 3))) {
        errno = ENOMEM;
        return NULL;
    }
    s[0] = '[';
    memcpy (s + 1, ob->data, ob->len);
    s[ob->len + 1] = ']';
    s[ob->len + 2] = '\0';
    ops = json_fast_loadb (s, ob->len + 2, 0, NULL);
    free (s);
    if (!ops || !json_is_array (ops)
        || json_array_size (ops) != (size_t)ob->nops) {
        json_decref (ops);
        errno = EPROTO;
        return NULL;
    }
    return ops;
}

/* Decoding */

struct kvs_relay {
    json_t *hdr;
    struct kvs_relay_fence *fences;
    int nfences;
    blobtab_t *blobs;
};

void kvs_relay_destroy (kvs_relay_t *r)
{
    if (r) {
        int saved_errno = errno;
        json_decref (r->hdr);
        free (r->fences);
        blobtab_destroy (r->blobs);
        free (r);
        errno = saved_errno;
    }
}

static int unpack_fence (json_t *o, struct kvs_relay_fence *f)
{
    json_int_t opslen = 0, userid = 0;

    memset (f, 0, sizeof (*f));
    f->errstr = "";
    if (json_unpack (o, "{s:s s:i s:i s:i s:I s:i s:I s:o s?i s?s}",
                     "name", &f->name, "nprocs", &f->nprocs, "flags", &f->flags,
                     "count", &f->count, "userid", &userid,
                     "nops", &f->nops, "opslen", &opslen, "refs", &f->refs,
                     "errnum", &f->errnum, "errstr", &f->errstr) < 0
        || !*f->name || strlen (f->name) > 255
        || f->nprocs < 1 || f->count < 0 || f->count > f->nprocs
        || f->nops < 0 || opslen < 0 || (f->nops == 0) != (opslen == 0)
        || f->errnum < 0 || (f->errnum > 0 && f->nops > 0)
        || !json_is_array (f->refs)
        || userid < -1 || userid > (json_int_t)UINT32_MAX)
        return -1;
    f->opslen = (size_t)opslen;
    f->userid = userid;
    return 0;
}

/* The table borrows each blob from the relay's buffer, as the fences'
 * ops text does: a hop copies a blob once, into its fence (merge).
 */
static int borrow_blob (const char *ref, const void *data, size_t len, void *arg)
{
    return blobtab_borrow (arg, ref, data, len) < 0 ? -1 : 0;
}

kvs_relay_t *kvs_relay_decode (const void *buf, size_t len,
                               canopy_error_t *error)
{
    const uint8_t *p = buf;
    kvs_relay_t *r;
    json_t *fences, *table, *v;
    size_t off, i;

    if (!(r = calloc (1, sizeof (*r))) || !(r->blobs = blobtab_create ())) {
        kvs_relay_destroy (r);
        errno = ENOMEM;
        errprintf (error, "out of memory");
        return NULL;
    }
    if (kvs_frame_header (buf, len, "relay", &r->hdr, &fences, &table, &off,
                          error) < 0)
        goto error;
    if (json_array_size (fences) > 0
        && !(r->fences = calloc (json_array_size (fences), sizeof (*r->fences)))) {
        errno = ENOMEM;
        errprintf (error, "out of memory");
        goto error;
    }
    json_array_foreach (fences, i, v) {
        struct kvs_relay_fence *f = &r->fences[i];
        if (unpack_fence (v, f) < 0) {
            errprintf (error, "malformed relay entry %zu", i);
            goto proto;
        }
        if (f->opslen > len - off) {
            errprintf (error, "relay entry %zu: operations overrun the message", i);
            goto proto;
        }
        f->ops = (const char *)p + off;
        off += f->opslen;
        r->nfences++;
    }
    if (kvs_frame_foreach_blob (buf, len, off, table, false, "relay", borrow_blob,
                                r->blobs, error) < 0)
        goto error;
    for (int k = 0; k < r->nfences; k++) {
        json_array_foreach (r->fences[k].refs, i, v) {
            if (!json_is_string (v) || !blobtab_has (r->blobs, json_string_value (v))) {
                errprintf (error, "relay entry %d references a missing blob", k);
                goto proto;
            }
        }
    }
    return r;
proto:
    errno = EPROTO;
error:
    kvs_relay_destroy (r);
    return NULL;
}

int kvs_relay_count (const kvs_relay_t *r)
{
    return r ? r->nfences : 0;
}

const struct kvs_relay_fence *kvs_relay_fence (const kvs_relay_t *r, int i)
{
    if (!r || i < 0 || i >= r->nfences) {
        errno = EINVAL;
        return NULL;
    }
    return &r->fences[i];
}

const blobtab_t *kvs_relay_blobs (const kvs_relay_t *r)
{
    return r ? r->blobs : NULL;
}

/* Encoding */

struct kvs_relay_enc {
    json_t *fences;
    struct kvs_opsbuf text;     /* every fence's ops, back to back */
    blobtab_t *blobs;
    size_t max;                 /* size limit of the message */
    size_t bound;               /* upper bound of the message's size */
};

/* Bounds.  JSON escapes a byte as at most 6 ("\u00XX"); an integer is at
 * most 20 characters.  The fixed text of a header entry (keys, quotes,
 * separators) is under 128 bytes, that of the header itself under 32.
 */
#define ENTRY_FIXED 128
#define INT_MAX_CHARS 20
#define HDR_FIXED (4 + 32)

static size_t escaped_bound (const char *s)
{
    return 2 + 6 * (s ? strlen (s) : 0);
}

size_t kvs_relay_fence_bound (const struct kvs_relay_fence *f, const blobtab_t *blobs)
{
    size_t n = blobtab_count (blobs);
    return ENTRY_FIXED + 8 * INT_MAX_CHARS
           + escaped_bound (f->name) + escaped_bound (f->errstr)
           + n * (BLOBREF_STRLEN + 3)                       /* refs */
           + f->opslen
           + n * (BLOBREF_STRLEN + 8 + INT_MAX_CHARS)       /* blob table */
           + blobtab_bytes (blobs);
}

size_t kvs_relay_enc_bound (const kvs_relay_enc_t *e)
{
    return e ? e->bound : 0;
}

void kvs_relay_enc_set_max (kvs_relay_enc_t *e, size_t max)
{
    if (e)
        e->max = max > 0 && max < CANOPY_MSG_SIZE_MAX ? max : CANOPY_MSG_SIZE_MAX;
}

kvs_relay_enc_t *kvs_relay_enc_create (void)
{
    kvs_relay_enc_t *e = calloc (1, sizeof (*e));
    if (!e || !(e->fences = json_array ()) || !(e->blobs = blobtab_create ())) {
        kvs_relay_enc_destroy (e);
        errno = ENOMEM;
        return NULL;
    }
    kvs_opsbuf_init (&e->text);
    e->max = CANOPY_MSG_SIZE_MAX;
    e->bound = HDR_FIXED;
    return e;
}

void kvs_relay_enc_destroy (kvs_relay_enc_t *e)
{
    if (e) {
        int saved_errno = errno;
        json_decref (e->fences);
        kvs_opsbuf_clear (&e->text);
        blobtab_destroy (e->blobs);
        free (e);
        errno = saved_errno;
    }
}

int kvs_relay_enc_add (kvs_relay_enc_t *e, const struct kvs_relay_fence *f,
                       const blobtab_t *blobs)
{
    json_t *o = NULL, *refs = NULL;
    size_t mark;
    int nblobs;

    if (!e || !f || !f->name || f->nops < 0 || (f->opslen > 0 && !f->ops)) {
        errno = EINVAL;
        return -1;
    }
    if (!(refs = json_array ()))
        goto nomem;
    for (int i = 0; i < blobtab_count (blobs); i++) {
        const char *ref;
        (void)blobtab_at (blobs, i, &ref, NULL, NULL);
        if (json_array_append_new (refs, json_string (ref)) < 0)
            goto nomem;
    }
    if (!(o = json_pack ("{s:s s:i s:i s:i s:I s:i s:I s:O}", "name", f->name,
                         "nprocs", f->nprocs, "flags", f->flags,
                         "count", f->count, "userid", (json_int_t)f->userid,
                         "nops", f->nops, "opslen", (json_int_t)f->opslen,
                         "refs", refs)))
        goto nomem;
    if (f->errnum
        && (json_object_set_new (o, "errnum", json_integer (f->errnum)) < 0
            || json_object_set_new (o, "errstr",
                                    json_string (f->errstr ? f->errstr : "")) < 0))
        goto nomem;
    /* the text is stored raw (no separator between fences) */
    mark = e->text.len;
    nblobs = blobtab_count (e->blobs);
    if (f->opslen > 0) {
        if (reserve (&e->text, f->opslen) < 0)
            goto nomem;
        memcpy (e->text.data + e->text.len, f->ops, f->opslen);
        e->text.len += f->opslen;
    }
    if (blobs && blobtab_merge_borrow (e->blobs, blobs) < 0) {
        e->text.len = mark;
        goto nomem;
    }
    if (json_array_append_new (e->fences, o) < 0) {   /* o is consumed */
        e->text.len = mark;
        blobtab_truncate (e->blobs, nblobs);
        o = NULL;
        goto nomem;
    }
    json_decref (refs);
    e->bound += kvs_relay_fence_bound (f, blobs);
    return 0;
nomem:
    json_decref (o);
    json_decref (refs);
    errno = ENOMEM;
    return -1;
}

int kvs_relay_enc_finish_msg (kvs_relay_enc_t *e, canopy_msg_t *msg)
{
    if (!e || !msg) {
        errno = EINVAL;
        return -1;
    }
    return kvs_frame_encode_msg (e->fences, e->blobs, e->text.data, e->text.len,
                                 e->max, msg);
}
