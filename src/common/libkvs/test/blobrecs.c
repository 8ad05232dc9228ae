/* test/blobrecs.c - packed blob records: round trip in order, empty
 * buffers and empty blobs, and every kind of malformed buffer refused
 * before any record is delivered; a callback's error stops the walk.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libkvs/blobrecs.h"

struct seen {
    int n;
    char refs[8][BLOBREF_MAX];
    size_t lens[8];
    const void *data[8];
    int fail_at;        /* return -1 (ENOSPC) at this call, 0: never */
};

static int collect (const char *ref, const void *data, size_t len, void *arg)
{
    struct seen *s = arg;
    if (s->fail_at && s->n + 1 == s->fail_at) {
        errno = ENOSPC;
        return -1;
    }
    snprintf (s->refs[s->n], BLOBREF_MAX, "%s", ref);
    s->lens[s->n] = len;
    s->data[s->n] = data;
    s->n++;
    return 0;
}

/* Records for "a", "" and 1000 bytes of 'x'; *lenp bytes, caller frees. */
static uint8_t *three (char refs[3][BLOBREF_MAX], size_t *lenp)
{
    static char big[1000];
    const void *d[3] = { "a", "", big };
    size_t l[3] = { 1, 0, sizeof (big) };
    size_t total = 0;
    memset (big, 'x', sizeof (big));
    for (int i = 0; i < 3; i++) {
        assert_int_equal (blobref_hash (d[i], l[i], refs[i], BLOBREF_MAX), 0);
        total += blobrecs_size (l[i]);
    }
    uint8_t *buf = malloc (total), *p = buf;
    assert_non_null (buf);
    for (int i = 0; i < 3; i++)
        p = blobrecs_put (p, refs[i], d[i], l[i]);
    assert_ptr_equal (p, buf + total);
    *lenp = total;
    return buf;
}

static void test_round_trip (void **state)
{
    char refs[3][BLOBREF_MAX];
    size_t len;
    uint8_t *buf = three (refs, &len);
    struct seen s = { 0 };
    canopy_error_t error;

    assert_int_equal (blobrecs_size (10), BLOBREF_STRLEN + 4 + 10);
    assert_int_equal (blobrecs_foreach (buf, len, NULL, NULL, &error), 3);
    assert_int_equal (blobrecs_foreach (buf, len, collect, &s, &error), 3);
    assert_int_equal (s.n, 3);
    for (int i = 0; i < 3; i++)
        assert_string_equal (s.refs[i], refs[i]);
    assert_int_equal (s.lens[0], 1);
    assert_memory_equal (s.data[0], "a", 1);
    assert_int_equal (s.lens[1], 0);
    assert_int_equal (s.lens[2], 1000);
    /* the data is where it lies in the buffer: no copies */
    assert_true ((const uint8_t *)s.data[2] > buf
                 && (const uint8_t *)s.data[2] + 1000 == buf + len);
    /* nothing at all is zero records */
    assert_int_equal (blobrecs_foreach (NULL, 0, collect, &s, &error), 0);
    assert_int_equal (blobrecs_foreach (buf, 0, collect, &s, &error), 0);
    assert_int_equal (s.n, 3);
    free (buf);
}

static void expect_proto (const void *buf, size_t len, const char *what)
{
    struct seen s = { 0 };
    canopy_error_t error = { .text = "" };
    errno = 0;
    assert_int_equal (blobrecs_foreach (buf, len, collect, &s, &error), -1);
    assert_int_equal (errno, EPROTO);
    assert_int_equal (s.n, 0);      /* nothing delivered */
    if (!strstr (error.text, what))
        fail_msg ("'%s' does not say '%s'", error.text, what);
}

static void test_malformed (void **state)
{
    char refs[3][BLOBREF_MAX];
    size_t len;
    uint8_t *buf = three (refs, &len);
    uint8_t *bad = malloc (len + 8);

    assert_non_null (bad);
    /* cut anywhere inside the last record, or inside a header */
    expect_proto (buf, len - 1, "runs past the end");
    expect_proto (buf, blobrecs_size (1) + 3, "cut short");
    expect_proto (buf, BLOBREF_STRLEN + 3, "cut short");
    /* trailing bytes that are not a record */
    memcpy (bad, buf, len);
    memset (bad + len, 0, 8);
    expect_proto (bad, len + 8, "record 4: a record is cut short");
    /* a bad ref in the second record: the first is not delivered either */
    memcpy (bad, buf, len);
    bad[blobrecs_size (1) + 10] = 'Z';
    expect_proto (bad, len, "record 2: a record's blobref is malformed");
    /* a length of 2^32-1 */
    memcpy (bad, buf, len);
    memset (bad + BLOBREF_STRLEN, 0xff, 4);
    expect_proto (bad, len, "runs past the end");
    /* a buffer claimed but missing */
    expect_proto (NULL, 10, "no blob records");
    free (bad);
    free (buf);
}

static void test_callback_stops (void **state)
{
    char refs[3][BLOBREF_MAX];
    size_t len;
    uint8_t *buf = three (refs, &len);
    struct seen s = { .fail_at = 2 };
    canopy_error_t error;

    errno = 0;
    assert_int_equal (blobrecs_foreach (buf, len, collect, &s, &error), -1);
    assert_int_equal (errno, ENOSPC);
    assert_int_equal (s.n, 1);
    assert_non_null (strstr (error.text, refs[1]));
    free (buf);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_round_trip),
        cmocka_unit_test (test_malformed),
        cmocka_unit_test (test_callback_stops),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
