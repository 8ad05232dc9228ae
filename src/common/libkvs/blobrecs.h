/* blobrecs.h - blobs packed one after another, for bulk transfer of blobs
 * whose refs the sender computed.
 *
 * A record is the blobref's BLOBREF_STRLEN characters (no NUL), the
 * blob's length as a big-endian u32, then its bytes; a buffer is any
 * number of records and nothing else.  No JSON: a receiver walks the
 * buffer and takes the blobs where they lie.  Used by the kvs.prime event
 * (the values of a collective fence, kvs_frame body) and by the KVS's
 * content.store-local requests.
 *
 * Refs are checked for syntax only (blobref_validate), never re-hashed:
 * these formats carry blobs between the KVS and content modules and from
 * rank 0, which computed them.
 */
#ifndef CANOPY_KVS_BLOBRECS_H
#define CANOPY_KVS_BLOBRECS_H

#include <stddef.h>
#include <canopy/types.h>

/* Bytes one record of a blob of 'len' bytes takes. */
size_t blobrecs_size (size_t len);

/* Write one record at p (blobrecs_size (len) bytes of room); 'ref' is a
 * valid blobref (BLOBREF_STRLEN characters are copied) and len at most
 * UINT32_MAX (blobs travel in messages, far smaller).  Returns the end of
 * the record.
 */
void *blobrecs_put (void *p, const char *ref, const void *data, size_t len);

/* Called for each record, in order: ref NUL-terminated (valid during the
 * call), data where it lies in the buffer.  Returns 0, or -1 with errno
 * to stop.
 */
typedef int (*blobrecs_f)(const char *ref, const void *data, size_t len, void *arg);

/* Check every record of buf (len bytes; buf may be NULL if len is 0):
 * refs well formed, lengths within the buffer, nothing left over.  Only
 * then call fn (may be NULL: check only) for each, so a malformed buffer
 * delivers nothing.  Returns the number of records, or -1 with EPROTO and
 * a sentence in error (may be NULL), or with fn's errno (fn stopped).
 */
int blobrecs_foreach (const void *buf, size_t len, blobrecs_f fn, void *arg,
                      canopy_error_t *error);

#endif
