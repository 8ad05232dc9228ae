/* blobcodec.c - see blobcodec.h.
 *
 * LZ4 block format (LZ4_compress_default / LZ4_decompress_safe): fast in
 * both directions, so compressing in the backing module's thread costs far
 * less than the disk write it saves.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include <lz4.h>
#include "blobcodec.h"

int blobcodec_compress (const void *data, size_t len, size_t threshold,
                        void **out, size_t *outlen)
{
    char *buf;
    int bound, n;

    if (len < threshold || len == 0)
        return 0;
    if (len > LZ4_MAX_INPUT_SIZE) {
        errno = EFBIG;
        return -1;
    }
    bound = LZ4_compressBound ((int)len);
    if (!(buf = malloc (bound))) {
        errno = ENOMEM;
        return -1;
    }
    n = LZ4_compress_default (data, buf, (int)len, bound);
    if (n <= 0 || (size_t)n >= len) {
        free (buf);
        return 0;
    }
    *out = buf;
    *outlen = n;
    return 1;
}

int blobcodec_decompress (const void *cdata, size_t clen, size_t size, void **out)
{
    char *buf;
    int n;

    if (size > LZ4_MAX_INPUT_SIZE || clen > INT_MAX) {
        errno = EIO;
        return -1;
    }
    if (!(buf = malloc (size + 1))) {
        errno = ENOMEM;
        return -1;
    }
    n = LZ4_decompress_safe (cdata, buf, (int)clen, (int)size);
    if (n < 0 || (size_t)n != size) {
        free (buf);
        errno = EIO;
        return -1;
    }
    buf[size] = '\0';
    *out = buf;
    return 0;
}
