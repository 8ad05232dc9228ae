/* base64.c - see base64.h */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sodium.h>
#include "base64.h"

size_t base64_encoded_len (size_t len)
{
    return sodium_base64_ENCODED_LEN (len, sodium_base64_VARIANT_ORIGINAL);
}

char *base64_encode (const void *data, size_t len)
{
    size_t n = base64_encoded_len (len);
    char *s;

    if (!data && len > 0) {
        errno = EINVAL;
        return NULL;
    }
    if (!(s = malloc (n))) {
        errno = ENOMEM;
        return NULL;
    }
    sodium_bin2base64 (s, n, data ? data : (const void *)"", len,
                       sodium_base64_VARIANT_ORIGINAL);
    return s;
}

void *base64_decode (const char *s, size_t slen, size_t *lenp)
{
    size_t max = slen / 4 * 3 + 3;
    unsigned char *buf;
    size_t len = 0;

    if (!s || !lenp) {
        errno = EINVAL;
        return NULL;
    }
    if (!(buf = malloc (max + 1))) {
        errno = ENOMEM;
        return NULL;
    }
    if (sodium_base642bin (buf, max, s, slen, NULL, &len, NULL,
                           sodium_base64_VARIANT_ORIGINAL) != 0) {
        free (buf);
        errno = EINVAL;
        return NULL;
    }
    buf[len] = '\0';
    *lenp = len;
    return buf;
}
