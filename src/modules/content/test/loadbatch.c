/* test/loadbatch.c - content.load-batch's request format (every line a
 * blobref, 1 to LOAD_BATCH_MAX of them, malformed input refused before
 * any ref is handed out) and the queue of loads upstream (oldest first,
 * at most LOAD_BATCH_MAX per request, at most LOAD_WINDOW in flight).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <errno.h>
#include "src/common/libutil/blobref.h"
#include "src/modules/content/loadbatch.h"

static void make_ref (int i, char *ref)
{
    char data[32];
    snprintf (data, sizeof (data), "blob %d", i);
    assert_int_equal (blobref_hash (data, strlen (data), ref, BLOBREF_MAX), 0);
}

/* n refs, one per line, in buf (room for 100) */
static size_t make_req (int first, int n, char *buf)
{
    char ref[BLOBREF_MAX];
    char *p = buf;
    for (int i = 0; i < n; i++) {
        make_ref (first + i, ref);
        p += sprintf (p, "%s\n", ref);
    }
    return p - buf;
}

struct seen {
    int n;
    int first;
    int stop_at;
};

static int check_ref (const char *ref, void *arg)
{
    struct seen *s = arg;
    char want[BLOBREF_MAX];
    make_ref (s->first + s->n, want);
    assert_string_equal (ref, want);
    if (s->n == s->stop_at) {
        errno = ENOMEM;
        return -1;
    }
    s->n++;
    return 0;
}

static void test_foreach (void **state)
{
    static char buf[100 * (BLOBREF_STRLEN + 1) + 1];
    canopy_error_t error;
    struct seen s = { .stop_at = -1 };
    size_t len;

    len = make_req (0, 1, buf);
    assert_int_equal (loadbatch_foreach (buf, len, check_ref, &s, &error), 1);
    assert_int_equal (s.n, 1);
    len = make_req (0, LOAD_BATCH_MAX, buf);
    s.n = 0;
    assert_int_equal (loadbatch_foreach (buf, len, check_ref, &s, &error),
                      LOAD_BATCH_MAX);
    assert_int_equal (s.n, LOAD_BATCH_MAX);
    assert_int_equal (loadbatch_foreach (buf, len, NULL, NULL, NULL), LOAD_BATCH_MAX);

    /* too many, none, torn, a bad line: refused, fn never called */
    len = make_req (0, LOAD_BATCH_MAX + 1, buf);
    s.n = 0;
    errno = 0;
    assert_int_equal (loadbatch_foreach (buf, len, check_ref, &s, &error), -1);
    assert_int_equal (errno, EPROTO);
    assert_non_null (strstr (error.text, "one per line"));
    assert_int_equal (loadbatch_foreach (buf, 0, check_ref, &s, NULL), -1);
    assert_int_equal (loadbatch_foreach (NULL, 72, check_ref, &s, NULL), -1);
    len = make_req (0, 3, buf);
    assert_int_equal (loadbatch_foreach (buf, len - 1, check_ref, &s, NULL), -1);
    buf[BLOBREF_STRLEN + 1 + 10] = 'x';         /* line 2 */
    errno = 0;
    assert_int_equal (loadbatch_foreach (buf, len, check_ref, &s, &error), -1);
    assert_int_equal (errno, EPROTO);
    assert_non_null (strstr (error.text, "line 2"));
    len = make_req (0, 3, buf);
    buf[2 * (BLOBREF_STRLEN + 1) - 1] = ' ';    /* line 2 has no '\n' */
    assert_int_equal (loadbatch_foreach (buf, len, check_ref, &s, NULL), -1);
    assert_int_equal (s.n, 0);

    /* fn stops the walk with its errno */
    len = make_req (0, 5, buf);
    s.stop_at = 2;
    errno = 0;
    assert_int_equal (loadbatch_foreach (buf, len, check_ref, &s, NULL), -1);
    assert_int_equal (errno, ENOMEM);
    assert_int_equal (s.n, 2);
}

static void test_queue (void **state)
{
    loadq_t *q = loadq_create ();
    char ref[BLOBREF_MAX];
    size_t len;
    int count;
    char *buf;

    assert_non_null (q);
    assert_null (loadq_next (q, &len, &count));     /* nothing queued */
    assert_int_equal (errno, 0);

    /* a lone miss goes at once */
    make_ref (0, ref);
    assert_int_equal (loadq_push (q, ref), 0);
    assert_non_null ((buf = loadq_next (q, &len, &count)));
    assert_int_equal (count, 1);
    assert_int_equal (len, BLOBREF_STRLEN + 1);
    assert_int_equal (buf[len], '\0');
    assert_int_equal (strlen (buf), len);
    struct seen s = { .first = 0, .stop_at = -1 };
    assert_int_equal (loadbatch_foreach (buf, len, check_ref, &s, NULL), 1);
    free (buf);
    assert_int_equal (loadq_inflight (q), 1);
    loadq_done (q);
    assert_int_equal (loadq_inflight (q), 0);

    /* many: LOAD_BATCH_MAX per request, oldest first, LOAD_WINDOW in flight */
    int total = LOAD_BATCH_MAX * (LOAD_WINDOW + 1) + 7;
    for (int i = 0; i < total; i++) {
        make_ref (100 + i, ref);
        assert_int_equal (loadq_push (q, ref), 0);
    }
    assert_int_equal (loadq_waiting (q), total);
    int next = 100;
    for (int r = 0; r < LOAD_WINDOW; r++) {
        assert_non_null ((buf = loadq_next (q, &len, &count)));
        assert_int_equal (count, LOAD_BATCH_MAX);
        s = (struct seen){ .first = next, .stop_at = -1 };
        assert_int_equal (loadbatch_foreach (buf, len, check_ref, &s, NULL),
                          LOAD_BATCH_MAX);
        next += LOAD_BATCH_MAX;
        free (buf);
    }
    assert_int_equal (loadq_inflight (q), LOAD_WINDOW);
    assert_null (loadq_next (q, &len, &count));     /* window full */
    assert_int_equal (errno, 0);
    loadq_done (q);
    assert_non_null ((buf = loadq_next (q, &len, &count)));
    assert_int_equal (count, LOAD_BATCH_MAX);
    free (buf);
    loadq_done (q);
    assert_non_null ((buf = loadq_next (q, &len, &count)));
    assert_int_equal (count, 7);
    s = (struct seen){ .first = 100 + total - 7, .stop_at = -1 };
    assert_int_equal (loadbatch_foreach (buf, len, check_ref, &s, NULL), 7);
    free (buf);
    assert_int_equal (loadq_waiting (q), 0);

    /* pop: the oldest, one at a time, not in flight */
    int inflight = loadq_inflight (q);
    for (int i = 0; i < 3; i++) {
        make_ref (500 + i, ref);
        assert_int_equal (loadq_push (q, ref), 0);
    }
    char got[BLOBREF_MAX];
    for (int i = 0; i < 3; i++) {
        assert_int_equal (loadq_pop (q, got), 0);
        make_ref (500 + i, ref);
        assert_string_equal (got, ref);
    }
    errno = 0;
    assert_int_equal (loadq_pop (q, got), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (loadq_inflight (q), inflight);

    /* done never goes below zero; bad refs are refused */
    for (int i = 0; i < 10; i++)
        loadq_done (q);
    assert_int_equal (loadq_inflight (q), 0);
    errno = 0;
    assert_int_equal (loadq_push (q, "sha256-nothex"), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (loadq_push (NULL, ref), -1);
    assert_int_equal (loadq_waiting (q), 0);

    errno = 42;
    loadq_destroy (q);
    loadq_destroy (NULL);
    assert_int_equal (errno, 42);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_foreach),
        cmocka_unit_test (test_queue),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
