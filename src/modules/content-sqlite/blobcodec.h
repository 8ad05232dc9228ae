/* blobcodec.h - optional LZ4 compression of stored blobs (a thin wrapper
 * over liblz4, house rule 7).
 *
 * A blob is stored compressed only when that pays: it is at least
 * 'threshold' bytes long and the compressed form is smaller.  The reader
 * tells the two forms apart by length (a stored blob shorter than its
 * recorded size is compressed), so no flag is kept.
 *
 * Ownership: output buffers are malloc'd; the caller frees them.
 */
#ifndef CANOPY_CONTENT_SQLITE_BLOBCODEC_H
#define CANOPY_CONTENT_SQLITE_BLOBCODEC_H

#include <stddef.h>

/* Compress 'data' if it pays.  Returns 1 and sets *out and *outlen (caller
 * frees *out) when compressed, 0 when the blob should be stored as is
 * (*out untouched), -1 with errno (ENOMEM, EFBIG for blobs over 2 GiB).
 */
int blobcodec_compress (const void *data, size_t len, size_t threshold,
                        void **out, size_t *outlen);

/* Expand 'clen' bytes into exactly 'size' bytes (malloc'd, size + 1 with a
 * trailing NUL so callers may treat text as a string).  -1 with EIO if the
 * input is not a valid LZ4 block of that size, ENOMEM.
 */
int blobcodec_decompress (const void *cdata, size_t clen, size_t size, void **out);

#endif
