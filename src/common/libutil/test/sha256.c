/* test/sha256.c - sha256_many, sha256_one and blobref_hash_many against
 * libsodium and the FIPS 180-4 examples, on every path this CPU has
 * (sixteen lanes with AVX-512F, SHA-NI one at a time, libsodium always).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sodium.h>
#include "src/common/libutil/sha256.h"
#include "src/common/libutil/blobref.h"

static uint32_t rng = 12345;

static uint32_t next (void)
{
    rng = rng * 1103515245 + 12345;
    return rng >> 8;
}

static void hex (const uint8_t *d, char *out)
{
    for (int i = 0; i < SHA256_BYTES; i++)
        sprintf (out + 2 * i, "%02x", d[i]);
}

/* FIPS 180-4 / NIST examples, in one batch with enough copies to fill
 * lanes: "abc", the 448-bit message (padding spills into a second block),
 * the empty message, and a million 'a's.
 */
static void known_answers (bool generic)
{
    static const char *msg56 =
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    size_t mlen = 1000000;
    char *million = malloc (mlen);
    const void *data[20];
    size_t len[20];
    uint8_t out[20][SHA256_BYTES];
    char h[2 * SHA256_BYTES + 1];

    assert_non_null (million);
    memset (million, 'a', mlen);
    sha256_set_generic (generic);
    for (int i = 0; i < 20; i++) {
        switch (i % 4) {
            case 0: data[i] = "abc"; len[i] = 3; break;
            case 1: data[i] = msg56; len[i] = 56; break;
            case 2: data[i] = NULL; len[i] = 0; break;
            case 3: data[i] = million; len[i] = mlen; break;
        }
    }
    assert_int_equal (sha256_many (20, data, len, out), 0);
    for (int i = 0; i < 20; i++) {
        hex (out[i], h);
        switch (i % 4) {
            case 0:
                assert_string_equal (h, "ba7816bf8f01cfea414140de5dae2223"
                                        "b00361a396177a9cb410ff61f20015ad");
                break;
            case 1:
                assert_string_equal (h, "248d6a61d20638b8e5c026930c3e6039"
                                        "a33ce45964ff2167f6ecedd419db06c1");
                break;
            case 2:
                assert_string_equal (h, "e3b0c44298fc1c149afbf4c8996fb924"
                                        "27ae41e4649b934ca495991b7852b855");
                break;
            case 3:
                assert_string_equal (h, "cdc76e5c9914fb9281a1c7e284d73e67"
                                        "f1809a48a497200e046d39ccc7112cd0");
                break;
        }
    }
    sha256_set_generic (false);
    free (million);
}

static void test_known (void **state)
{
    known_answers (false);
    known_answers (true);
}

/* Every length around the block and padding edges, in batches of every
 * size from 1 to 40 (groups of 16 plus a partial one), mixed lengths.
 */
static void test_random_batches (void **state)
{
    enum { MAXN = 40 };
    for (int trial = 0; trial < 600; trial++) {
        size_t n = 1 + trial % MAXN;
        const void *data[MAXN];
        size_t len[MAXN];
        uint8_t out[MAXN][SHA256_BYTES];
        for (size_t i = 0; i < n; i++) {
            uint8_t *b;
            len[i] = trial < 200 ? (size_t)((trial + i) % 200)
                                 : next () % 3 ? next () % 300 : next () % 9000;
            b = malloc (len[i] + 1);
            assert_non_null (b);
            for (size_t k = 0; k < len[i]; k++)
                b[k] = (uint8_t)next ();
            data[i] = b;
        }
        assert_int_equal (sha256_many (n, data, len, out), 0);
        for (size_t i = 0; i < n; i++) {
            uint8_t want[SHA256_BYTES];
            crypto_hash_sha256 (want, data[i], len[i]);
            assert_memory_equal (out[i], want, SHA256_BYTES);
            free ((void *)data[i]);
        }
    }
}

/* A batch larger than the index kept on the stack (64), and one message
 * much longer than the rest of its group.
 */
static void test_large_batch (void **state)
{
    enum { N = 150 };
    const void *data[N];
    size_t len[N];
    uint8_t out[N][SHA256_BYTES];
    char refs[N][BLOBREF_MAX];
    char one[BLOBREF_MAX];

    for (int i = 0; i < N; i++) {
        uint8_t *b;
        len[i] = i == 77 ? 70000 : 1024 + (size_t)i;
        assert_non_null ((b = malloc (len[i])));
        for (size_t k = 0; k < len[i]; k++)
            b[k] = (uint8_t)(k * 7 + (size_t)i);
        data[i] = b;
    }
    assert_int_equal (sha256_many (N, data, len, out), 0);
    assert_int_equal (blobref_hash_many (N, data, len, refs), 0);
    for (int i = 0; i < N; i++) {
        uint8_t want[SHA256_BYTES];
        crypto_hash_sha256 (want, data[i], len[i]);
        assert_memory_equal (out[i], want, SHA256_BYTES);
        assert_int_equal (blobref_hash (data[i], len[i], one, sizeof (one)), 0);
        assert_string_equal (refs[i], one);
        free ((void *)data[i]);
    }
}

/* sha256_one at every length around the block and padding edges, from
 * every alignment, against libsodium; then the FIPS examples.
 */
static void test_one (void **state)
{
    size_t max = 1100;
    uint8_t *buf = malloc (max + 16);
    uint8_t got[SHA256_BYTES], want[SHA256_BYTES];
    char h[2 * SHA256_BYTES + 1];

    assert_non_null (buf);
    for (size_t i = 0; i < max + 16; i++)
        buf[i] = (uint8_t)next ();
    for (size_t len = 0; len <= max; len++) {
        const uint8_t *p = buf + len % 16;     /* unaligned too */
        crypto_hash_sha256 (want, p, len);
        assert_int_equal (sha256_one (p, len, got), 0);
        assert_memory_equal (got, want, SHA256_BYTES);
    }
    assert_int_equal (sha256_one ("abc", 3, got), 0);
    hex (got, h);
    assert_string_equal (h, "ba7816bf8f01cfea414140de5dae2223"
                            "b00361a396177a9cb410ff61f20015ad");
    assert_int_equal (sha256_one (NULL, 0, got), 0);
    hex (got, h);
    assert_string_equal (h, "e3b0c44298fc1c149afbf4c8996fb924"
                            "27ae41e4649b934ca495991b7852b855");
    errno = 0;
    assert_int_equal (sha256_one (NULL, 1, got), -1);
    assert_int_equal (errno, EINVAL);
    /* the implementation is named, and forcing generic names libsodium */
    assert_non_null (sha256_impl ());
    sha256_set_generic (true);
    assert_string_equal (sha256_impl (), "libsodium");
    assert_int_equal (sha256_one ("abc", 3, got), 0);
    hex (got, h);
    assert_string_equal (h, "ba7816bf8f01cfea414140de5dae2223"
                            "b00361a396177a9cb410ff61f20015ad");
    sha256_set_generic (false);
    free (buf);
}

static void test_errors (void **state)
{
    const void *data[1] = { NULL };
    size_t len[1] = { 5 };
    uint8_t out[1][SHA256_BYTES];
    char refs[1][BLOBREF_MAX];

    assert_int_equal (sha256_many (0, NULL, NULL, NULL), 0);
    errno = 0;
    assert_int_equal (sha256_many (1, data, len, out), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (sha256_many (1, NULL, len, out), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (blobref_hash_many (1, data, len, refs), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (blobref_hash_many (1, data, len, NULL), -1);
    assert_int_equal (errno, EINVAL);
    /* the lane count is 16 or 1, and 1 when forced generic */
    int lanes = sha256_lanes ();
    assert_true (lanes == 16 || lanes == 1);
    sha256_set_generic (true);
    assert_int_equal (sha256_lanes (), 1);
    sha256_set_generic (false);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_known),
        cmocka_unit_test (test_random_batches),
        cmocka_unit_test (test_large_batch),
        cmocka_unit_test (test_one),
        cmocka_unit_test (test_errors),
    };
    if (sodium_init () < 0)
        return 1;
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
