/* test/blobref.c - blobrefs and base64 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libutil/base64.h"

static void test_hash (void **state)
{
    char ref[BLOBREF_MAX];
    uint8_t digest[BLOBREF_HASHLEN];
    char back[BLOBREF_MAX];

    assert_int_equal (blobref_hash ("abc", 3, ref, sizeof (ref)), 0);
    /* SHA-256("abc") */
    assert_string_equal (ref, "sha256-ba7816bf8f01cfea414140de5dae2223"
                              "b00361a396177a9cb410ff61f20015ad");
    assert_int_equal (blobref_validate (ref), 0);
    assert_int_equal (blobref_to_digest (ref, digest), 0);
    assert_int_equal (blobref_from_digest (digest, back, sizeof (back)), 0);
    assert_string_equal (ref, back);
    assert_int_equal (blobref_hash (NULL, 0, ref, sizeof (ref)), 0);
    assert_int_equal (blobref_hash ("x", 1, ref, 10), -1);
    assert_int_equal (errno, EINVAL);
}

static void test_validate (void **state)
{
    const char *bad[] = {
        "", "sha256-", "sha1-0000", "sha256-BA7816BF8F01CFEA414140DE5DAE2223"
        "B00361A396177A9CB410FF61F20015AD",
        "sha256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a",
        "sha256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015adx",
        "sha256-za7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "sha256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015\xe9",
        "SHA256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "sha25", "sha256-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a-",
        NULL,
    };
    for (int i = 0; bad[i]; i++) {
        errno = 0;
        assert_int_equal (blobref_validate (bad[i]), -1);
        assert_int_equal (errno, EINVAL);
    }
    assert_int_equal (blobref_validate (NULL), -1);
}

static void test_hexval (void **state)
{
    const char *digits = "0123456789abcdef";
    for (int i = 0; i < 16; i++)
        assert_int_equal (blobref_hexval (digits[i]), i);
    const char *bad = "AFgz/:`G \xe9";
    for (const char *p = bad; *p; p++)
        assert_int_equal (blobref_hexval (*p), -1);
    assert_int_equal (blobref_hexval ('\0'), -1);
}

static void test_base64 (void **state)
{
    unsigned char data[300];
    for (int i = 0; i < 300; i++)
        data[i] = i * 7;
    for (size_t len = 0; len < 300; len += 13) {
        char *s = base64_encode (data, len);
        size_t n;
        void *out = base64_decode (s, strlen (s), &n);
        assert_non_null (out);
        assert_int_equal (n, len);
        assert_memory_equal (out, data, len);
        free (out);
        free (s);
    }
    size_t n;
    assert_null (base64_decode ("not base64!", 11, &n));
    assert_int_equal (errno, EINVAL);
    assert_null (base64_decode ("QUJD=", 5, &n));
}

/* blobref_verify_many: every ref matches, or the first that does not is
 * named (batches of up to 16 on the stack, more allocated).
 */
static void test_verify_many (void **state)
{
    char bufs[20][8], refs[20][BLOBREF_MAX];
    const void *data[20];
    size_t len[20], bad = 99;
    const char *refv[20];
    (void)state;

    for (int i = 0; i < 20; i++) {
        snprintf (bufs[i], sizeof (bufs[i]), "blob%d", i);
        data[i] = bufs[i];
        len[i] = strlen (bufs[i]);
        assert_int_equal (blobref_hash (data[i], len[i], refs[i], sizeof (refs[i])), 0);
        refv[i] = refs[i];
    }
    assert_int_equal (blobref_verify_many (20, data, len, refv, &bad), 0);
    assert_int_equal (bad, 99);
    assert_int_equal (blobref_verify_many (3, data, len, refv, NULL), 0);
    assert_int_equal (blobref_verify_many (0, NULL, NULL, NULL, NULL), 0);
    refv[17] = refs[2];
    assert_int_equal (blobref_verify_many (20, data, len, refv, &bad), -1);
    assert_int_equal (errno, EPROTO);
    assert_int_equal (bad, 17);
    len[1] = 2;                 /* the data changed, not the ref */
    assert_int_equal (blobref_verify_many (5, data, len, refv, &bad), -1);
    assert_int_equal (errno, EPROTO);
    assert_int_equal (bad, 1);
    assert_int_equal (blobref_verify_many (2, NULL, len, refv, &bad), -1);
    assert_int_equal (errno, EINVAL);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_hash),
        cmocka_unit_test (test_verify_many),
        cmocka_unit_test (test_validate),
        cmocka_unit_test (test_hexval),
        cmocka_unit_test (test_base64),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
