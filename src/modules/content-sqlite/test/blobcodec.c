/* test/blobcodec.c - LZ4 only when it pays; exact round trips; damaged
 * input is refused with EIO.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include "src/modules/content-sqlite/blobcodec.h"

static void test_small_not_compressed (void **state)
{
    void *out = NULL;
    size_t len = 0;
    char buf[100];
    memset (buf, 'a', sizeof (buf));
    assert_int_equal (blobcodec_compress (buf, sizeof (buf), 256, &out, &len), 0);
    assert_null (out);
    assert_int_equal (blobcodec_compress (buf, 0, 0, &out, &len), 0);
}

static void test_round_trip (void **state)
{
    size_t n = 65536;
    char *buf = malloc (n);
    void *z, *back;
    size_t zlen;
    assert_non_null (buf);
    for (size_t i = 0; i < n; i++)
        buf[i] = "canopy"[i % 6];
    assert_int_equal (blobcodec_compress (buf, n, 256, &z, &zlen), 1);
    assert_true (zlen < n);
    assert_int_equal (blobcodec_decompress (z, zlen, n, &back), 0);
    assert_memory_equal (back, buf, n);
    assert_int_equal (((char *)back)[n], '\0');
    free (back);
    /* a wrong size or a damaged block is EIO, never a crash */
    errno = 0;
    assert_int_equal (blobcodec_decompress (z, zlen, n - 1, &back), -1);
    assert_int_equal (errno, EIO);
    memset (z, 0xff, zlen / 2);
    errno = 0;
    assert_int_equal (blobcodec_decompress (z, zlen, n, &back), -1);
    assert_int_equal (errno, EIO);
    free (z);
    free (buf);
}

static void test_random_not_compressed (void **state)
{
    size_t n = 4096;
    unsigned char *buf = malloc (n);
    void *z = NULL;
    size_t zlen;
    unsigned x = 12345;
    assert_non_null (buf);
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245 + 12345;
        buf[i] = x >> 16;
    }
    assert_int_equal (blobcodec_compress (buf, n, 256, &z, &zlen), 0);
    assert_null (z);
    free (buf);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_small_not_compressed),
        cmocka_unit_test (test_round_trip),
        cmocka_unit_test (test_random_not_compressed),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
