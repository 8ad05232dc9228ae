/* blobref.c - see blobref.h.  One blob is hashed by sha256_one (the
 * CPU's SHA instructions where it has them, else libsodium, initialised
 * on first use); a batch goes to sha256_many (sixteen at a time where
 * the CPU has AVX-512F).
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "sha256.h"
#include "blobref.h"

static const char hexdigits[] = "0123456789abcdef";

int blobref_from_digest (const uint8_t digest[BLOBREF_HASHLEN], char *ref, size_t refsize)
{
    if (!digest || !ref || refsize < BLOBREF_MAX) {
        errno = EINVAL;
        return -1;
    }
    memcpy (ref, BLOBREF_PREFIX, BLOBREF_PREFIX_LEN);
    for (int i = 0; i < BLOBREF_HASHLEN; i++) {
        ref[BLOBREF_PREFIX_LEN + 2 * i] = hexdigits[digest[i] >> 4];
        ref[BLOBREF_PREFIX_LEN + 2 * i + 1] = hexdigits[digest[i] & 0xf];
    }
    ref[BLOBREF_STRLEN] = '\0';
    return 0;
}

int blobref_hash (const void *data, size_t len, char *ref, size_t refsize)
{
    uint8_t digest[SHA256_BYTES];

    if ((!data && len > 0) || !ref || refsize < BLOBREF_MAX) {
        errno = EINVAL;
        return -1;
    }
    if (sha256_one (data, len, digest) < 0)
        return -1;
    return blobref_from_digest (digest, ref, refsize);
}

int blobref_hash_many (size_t n, const void *const data[], const size_t len[],
                       char (*refs)[BLOBREF_MAX])
{
    uint8_t stackdig[16][SHA256_BYTES];
    uint8_t (*dig)[SHA256_BYTES] = stackdig;

    if (n > 0 && !refs) {
        errno = EINVAL;
        return -1;
    }
    if (n > 16 && !(dig = malloc (n * sizeof (*dig)))) {
        errno = ENOMEM;
        return -1;
    }
    if (sha256_many (n, data, len, dig) < 0) {
        if (dig != stackdig)
            free (dig);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        (void)blobref_from_digest (dig[i], refs[i], BLOBREF_MAX);
    if (dig != stackdig)
        free (dig);
    return 0;
}

int blobref_verify_many (size_t n, const void *const data[], const size_t len[],
                         const char *const refs[], size_t *bad)
{
    char stackrefs[16][BLOBREF_MAX];
    char (*computed)[BLOBREF_MAX] = stackrefs;
    int rc = -1;

    if (n > 0 && (!data || !len || !refs)) {
        errno = EINVAL;
        return -1;
    }
    if (n > 16 && !(computed = malloc (n * sizeof (*computed)))) {
        errno = ENOMEM;
        return -1;
    }
    if (blobref_hash_many (n, data, len, computed) < 0)
        goto done;
    for (size_t i = 0; i < n; i++) {
        if (memcmp (computed[i], refs[i], BLOBREF_STRLEN) != 0) {
            if (bad)
                *bad = i;
            errno = EPROTO;
            goto done;
        }
    }
    rc = 0;
done:
    if (computed != stackrefs) {
        int e = errno;
        free (computed);
        errno = e;
    }
    return rc;
}

int blobref_hexval (char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* 1 for the digits a blobref's hex part may hold (lower case only) */
static const unsigned char ishex[256] = {
    ['0' ... '9'] = 1, ['a' ... 'f'] = 1,
};

/* Called for every blob of every frame a broker receives: one table
 * lookup per digit, and no strlen (a NUL stops the digit loop).
 */
int blobref_validate (const char *ref)
{
    if (!ref || strncmp (ref, BLOBREF_PREFIX, BLOBREF_PREFIX_LEN) != 0)
        goto error;
    for (size_t i = BLOBREF_PREFIX_LEN; i < BLOBREF_STRLEN; i++) {
        if (!ishex[(unsigned char)ref[i]])
            goto error;
    }
    if (ref[BLOBREF_STRLEN] != '\0')
        goto error;
    return 0;
error:
    errno = EINVAL;
    return -1;
}

int blobref_to_digest (const char *ref, uint8_t digest[BLOBREF_HASHLEN])
{
    if (blobref_validate (ref) < 0 || !digest) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < BLOBREF_HASHLEN; i++)
        digest[i] = (blobref_hexval (ref[BLOBREF_PREFIX_LEN + 2 * i]) << 4)
                    | blobref_hexval (ref[BLOBREF_PREFIX_LEN + 2 * i + 1]);
    return 0;
}
