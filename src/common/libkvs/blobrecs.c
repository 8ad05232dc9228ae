/* blobrecs.c - see blobrecs.h.
 *
 * Design notes: blobrecs_foreach walks the buffer twice, once to check
 * every record and once to deliver them, so a receiver never acts on
 * part of a malformed buffer.  The second walk reads the records the
 * first checked (the buffer is the caller's and does not change during
 * the call): refs are not validated again.  The walk needs no allocation: each ref is
 * copied to a stack buffer to be NUL-terminated for blobref_validate and
 * the callback.
 */
#include <string.h>
#include <stdbool.h>
#include <errno.h>
#include <stdint.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libutil/errprintf.h"
#include "blobrecs.h"

#define RECHDR (BLOBREF_STRLEN + 4)

size_t blobrecs_size (size_t len)
{
    return RECHDR + len;
}

void *blobrecs_put (void *p, const char *ref, const void *data, size_t len)
{
    uint8_t *q = p;

    memcpy (q, ref, BLOBREF_STRLEN);
    q += BLOBREF_STRLEN;
    q[0] = (uint8_t)(len >> 24);
    q[1] = (uint8_t)(len >> 16);
    q[2] = (uint8_t)(len >> 8);
    q[3] = (uint8_t)len;
    if (len > 0)
        memcpy (q + 4, data, len);
    return q + 4 + len;
}

/* The record at off: its ref (NUL-terminated into ref), data and length;
 * returns the offset past it, or 0 (malformed; errors says why).
 */
static size_t record (const uint8_t *p, size_t len, size_t off, char *ref,
                      const void **data, size_t *blen, const char **why,
                      bool checked)
{
    uint32_t n;

    if (len - off < RECHDR) {
        *why = "a record is cut short";
        return 0;
    }
    memcpy (ref, p + off, BLOBREF_STRLEN);
    ref[BLOBREF_STRLEN] = '\0';
    if (!checked && blobref_validate (ref) < 0) {
        *why = "a record's blobref is malformed";
        return 0;
    }
    off += BLOBREF_STRLEN;
    n = ((uint32_t)p[off] << 24) | ((uint32_t)p[off + 1] << 16)
        | ((uint32_t)p[off + 2] << 8) | p[off + 3];
    off += 4;
    if (n > len - off) {
        *why = "a record's length runs past the end";
        return 0;
    }
    *data = p + off;
    *blen = n;
    return off + n;
}

int blobrecs_foreach (const void *buf, size_t len, blobrecs_f fn, void *arg,
                      canopy_error_t *error)
{
    const uint8_t *p = buf;
    char ref[BLOBREF_MAX];
    const void *data;
    size_t blen, off;
    const char *why = NULL;
    int count = 0;

    if (!buf && len > 0) {
        errno = EPROTO;
        return errprintf (error, "no blob records");
    }
    for (off = 0; off < len; count++) {
        if (!(off = record (p, len, off, ref, &data, &blen, &why, false))) {
            errno = EPROTO;
            return errprintf (error, "blob record %d: %s", count + 1, why);
        }
    }
    if (!fn)
        return count;
    for (off = 0; off < len; ) {
        off = record (p, len, off, ref, &data, &blen, &why, true);
        errno = 0;
        if (fn (ref, data, blen, arg) < 0) {
            if (errno == 0)
                errno = EIO;
            return errprintf (error, "blob %s: %s", ref, strerror (errno));
        }
    }
    return count;
}
