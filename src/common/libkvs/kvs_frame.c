/* kvs_frame.c - the shared frame of transactions and relays (kvs_frame.h).
 *
 * Lengths are checked before every read: hlen against the buffer, each
 * blob against what is left, and the end against len.  Errors name the
 * format ('what') so a client sees "malformed transaction header" and a
 * broker's log "malformed relay header".
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include "src/common/libcanopy/json_fast.h"
#include "src/common/libcanopy/json_fast_dump.h"
#include "src/common/libutil/errprintf.h"
#include "src/common/libutil/blobref.h"
#include "kvs_frame.h"

static uint32_t get32 (const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16)
         | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* The header text {"fences":F,"blobs":[[ref,len],...]}: only the fences
 * go through jansson; the table is written directly (a blobtab's refs are
 * valid blobrefs, plain ASCII with nothing to escape), which cost a
 * fifth of a 512-value setroot's publication through json_pack and
 * json_dumps.  Returns a malloc'd string (*hlenp bytes), or NULL.
 */
static char *header_text (json_t *fences, const char *ftext, size_t flen,
                          const blobtab_t *blobs, size_t *hlenp)
{
    static const char pre[] = "{\"fences\":";
    static const char mid[] = ",\"blobs\":[";
    int n = blobtab_count (blobs);
    char *dumped = NULL, *s, *p;
    size_t size;

    if (fences) {       /* else the caller's text is copied in as it is */
        if (!(dumped = json_fast_dumps (fences, JSON_COMPACT)))
            return NULL;
        ftext = dumped;
        flen = strlen (dumped);
    }
    /* each entry: ["ref",len], at most BLOBREF_STRLEN + 26 bytes */
    size = sizeof (pre) + flen + sizeof (mid) + (size_t)n * (BLOBREF_STRLEN + 26) + 3;
    if (!(s = malloc (size))) {
        free (dumped);
        return NULL;
    }
    p = s;
    memcpy (p, pre, sizeof (pre) - 1);
    p += sizeof (pre) - 1;
    memcpy (p, ftext, flen);
    p += flen;
    free (dumped);
    memcpy (p, mid, sizeof (mid) - 1);
    p += sizeof (mid) - 1;
    for (int i = 0; i < n; i++) {
        const char *ref;
        size_t len;
        (void)blobtab_at (blobs, i, &ref, NULL, &len);
        p += snprintf (p, size - (p - s), "%s[\"%s\",%zu]", i > 0 ? "," : "", ref, len);
    }
    memcpy (p, "]}", 3);
    *hlenp = p + 2 - s;
    return s;
}

/* Where the frame is written: a malloc'd buffer, or a message's payload. */
typedef void *(*frame_alloc_f)(size_t total, void *arg);

static void *alloc_malloc (size_t total, void *arg)
{
    (void)arg;
    return malloc (total + 1);
}

static void *alloc_payload (size_t total, void *arg)
{
    return canopy_msg_payload_reserve (arg, total);
}

static int frame_write (json_t *fences, const char *ftext, size_t flen,
                        const blobtab_t *blobs,
                        const void *body, size_t bodylen, size_t max,
                        frame_alloc_f alloc, void *arg,
                        void **bufp, size_t *lenp)
{
    char *s = NULL;
    uint8_t *buf, *p;
    size_t hlen, total;
    int n = blobtab_count (blobs);

    if (!(s = header_text (fences, ftext, flen, blobs, &hlen))) {
        errno = ENOMEM;
        return -1;
    }
    total = 4 + hlen + bodylen + blobtab_bytes (blobs);
    if (total > max || hlen > UINT32_MAX) {
        free (s);
        errno = EFBIG;
        return -1;
    }
    if (!(buf = alloc (total, arg))) {
        int e = errno == EMSGSIZE ? EFBIG : ENOMEM;
        free (s);
        errno = e;
        return -1;
    }
    buf[0] = hlen >> 24;
    buf[1] = hlen >> 16;
    buf[2] = hlen >> 8;
    buf[3] = hlen;
    memcpy (buf + 4, s, hlen);
    free (s);
    p = buf + 4 + hlen;
    if (bodylen > 0)
        memcpy (p, body, bodylen);
    p += bodylen;
    for (int i = 0; i < n; i++) {
        const void *data;
        size_t len;
        (void)blobtab_at (blobs, i, NULL, &data, &len);
        memcpy (p, data, len);
        p += len;
    }
    buf[total] = '\0';
    *bufp = buf;
    *lenp = total;
    return 0;
}

int kvs_frame_encode (json_t *fences, const blobtab_t *blobs,
                      const void *body, size_t bodylen, size_t max,
                      void **bufp, size_t *lenp)
{
    if (!json_is_array (fences) || !bufp || !lenp || (bodylen > 0 && !body)) {
        errno = EINVAL;
        return -1;
    }
    return frame_write (fences, NULL, 0, blobs, body, bodylen, max, alloc_malloc,
                        NULL, bufp, lenp);
}

int kvs_frame_encode_text (const char *fences, size_t flen, const blobtab_t *blobs,
                           const void *body, size_t bodylen, size_t max,
                           void **bufp, size_t *lenp)
{
    if (!fences || flen == 0 || !bufp || !lenp || (bodylen > 0 && !body)) {
        errno = EINVAL;
        return -1;
    }
    return frame_write (NULL, fences, flen, blobs, body, bodylen, max, alloc_malloc,
                        NULL, bufp, lenp);
}

int kvs_frame_encode_text_msg (const char *fences, size_t flen, const blobtab_t *blobs,
                               const void *body, size_t bodylen, size_t max,
                               canopy_msg_t *msg)
{
    void *buf;
    size_t len;

    if (!fences || flen == 0 || !msg || (bodylen > 0 && !body)) {
        errno = EINVAL;
        return -1;
    }
    return frame_write (NULL, fences, flen, blobs, body, bodylen, max, alloc_payload,
                        msg, &buf, &len);
}

int kvs_frame_encode_msg (json_t *fences, const blobtab_t *blobs,
                          const void *body, size_t bodylen, size_t max,
                          canopy_msg_t *msg)
{
    void *buf;
    size_t len;

    if (!json_is_array (fences) || !msg || (bodylen > 0 && !body)) {
        errno = EINVAL;
        return -1;
    }
    return frame_write (fences, NULL, 0, blobs, body, bodylen, max, alloc_payload,
                        msg, &buf, &len);
}

int kvs_frame_header (const void *buf, size_t len, const char *what,
                      json_t **hdrp, json_t **fencesp, json_t **tablep,
                      size_t *offp, canopy_error_t *error)
{
    const uint8_t *p = buf;
    json_t *hdr, *fences, *table;
    uint32_t hlen;

    if (!buf || len < 4) {
        errno = EPROTO;
        return errprintf (error, "%s too short", what);
    }
    hlen = get32 (p);
    if (hlen > len - 4) {
        errno = EPROTO;
        return errprintf (error, "%s header length is wrong", what);
    }
    if (!(hdr = json_fast_loadb ((const char *)p + 4, hlen, 0, NULL))
        || json_unpack (hdr, "{s:o s:o}", "fences", &fences, "blobs", &table) < 0
        || !json_is_array (fences) || !json_is_array (table)) {
        json_decref (hdr);
        errno = EPROTO;
        return errprintf (error, "malformed %s header", what);
    }
    *hdrp = hdr;
    *fencesp = fences;
    *tablep = table;
    *offp = 4 + (size_t)hlen;
    return 0;
}

/* One [ref, len] entry of a blob table, as json_unpack "[s,I]" reads it
 * (without its format parsing, twice per blob of every frame).
 */
static int table_entry (const json_t *v, const char **ref, json_int_t *blen)
{
    const json_t *r = json_array_get (v, 0);
    const json_t *n = json_array_get (v, 1);

    if (!json_is_string (r) || !json_is_integer (n))
        return -1;
    *ref = json_string_value (r);
    *blen = json_integer_value (n);
    return 0;
}

/* Hash the n blobs of a checked table in one batch and compare each with
 * its ref.
 */
static int verify_blobs (const uint8_t *p, size_t off, json_t *table, size_t n,
                         const char *what, canopy_error_t *error)
{
    const void **datav = malloc (n * sizeof (*datav));
    size_t *lenv = malloc (n * sizeof (*lenv));
    const char **refv = malloc (n * sizeof (*refv));
    json_int_t blen;
    size_t bad;
    int rc = -1;

    if (!datav || !lenv || !refv) {
        errno = ENOMEM;
        (void)errprintf (error, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        (void)table_entry (json_array_get (table, i), &refv[i], &blen);
        datav[i] = p + off;
        lenv[i] = (size_t)blen;
        off += (size_t)blen;
    }
    if (blobref_verify_many (n, datav, lenv, refv, &bad) < 0) {
        if (errno == EPROTO)
            (void)errprintf (error, "blob %s does not match its data", refv[bad]);
        else
            (void)errprintf (error, "cannot hash the %s blobs", what);
        goto done;
    }
    rc = 0;
done:
    free (datav);
    free (lenv);
    free (refv);
    return rc;
}

int kvs_frame_foreach_blob (const void *buf, size_t len, size_t off, json_t *table,
                            bool verify, const char *what, kvs_frame_blob_f fn,
                            void *arg, canopy_error_t *error)
{
    const uint8_t *p = buf;
    size_t i, start = off, n = json_array_size (table);
    json_t *v;
    const char *ref;
    json_int_t blen;

    /* check everything first */
    json_array_foreach (table, i, v) {
        if (table_entry (v, &ref, &blen) < 0 || blen < 0 || off > len
            || (size_t)blen > len - off || blobref_validate (ref) < 0) {
            errno = EPROTO;
            return errprintf (error, "malformed %s blob table", what);
        }
        off += blen;
    }
    if (off != len) {
        errno = EPROTO;
        return errprintf (error, "%s has trailing bytes", what);
    }
    if (verify && n > 0 && verify_blobs (p, start, table, n, what, error) < 0)
        return -1;
    /* then deliver */
    off = start;
    json_array_foreach (table, i, v) {
        (void)table_entry (v, &ref, &blen);
        if (fn (ref, p + off, blen, arg) < 0) {
            if (errno == ENOMEM)
                return errprintf (error, "out of memory");
            return errprintf (error, "%s blob %s: %s", what, ref, strerror (errno));
        }
        off += blen;
    }
    return 0;
}

static int add_blob (const char *ref, const void *data, size_t len, void *arg)
{
    return blobtab_add (arg, ref, data, len, NULL, 0) < 0 ? -1 : 0;
}

int kvs_frame_blobs (const void *buf, size_t len, size_t off, json_t *table,
                     bool verify, const char *what, blobtab_t *blobs,
                     canopy_error_t *error)
{
    return kvs_frame_foreach_blob (buf, len, off, table, verify, what, add_blob,
                                   blobs, error);
}
