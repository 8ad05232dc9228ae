/* test/logbuf.c - log ring buffer wraps and keeps order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <stdio.h>
#include <unistd.h>
#include "src/broker/logbuf.h"

static void test_logbuf (void **state)
{
    logbuf_t *lb = logbuf_create (4, 2);
    assert_null (logbuf_create (0, 0));
    logbuf_set_stderr_level (lb, -1);   /* quiet */
    for (int i = 0; i < 10; i++)
        logbuf_printf (lb, LOG_INFO, "test", "message %d", i);
    assert_int_equal (logbuf_seq (lb), 10);
    json_t *a = logbuf_dump (lb);
    assert_int_equal (json_array_size (a), 4);
    const char *text;
    int seq, rank;
    assert_int_equal (json_unpack (json_array_get (a, 0), "{s:s s:i s:i}",
                                   "text", &text, "seq", &seq, "rank", &rank), 0);
    assert_string_equal (text, "message 6");
    assert_int_equal (seq, 7);
    assert_int_equal (rank, 2);
    json_decref (a);
    logbuf_clear (lb);
    a = logbuf_dump (lb);
    assert_int_equal (json_array_size (a), 0);
    json_decref (a);
    logbuf_destroy (lb);
}

static void test_output (void **state)
{
    char path[256];
    char line[512];
    const char *tmp = getenv ("TMPDIR");
    logbuf_t *lb = logbuf_create (4, 3);
    FILE *f;

    snprintf (path, sizeof (path), "%s/logbuf-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp (path);
    assert_true (fd >= 0);
    close (fd);
    assert_int_equal (logbuf_set_output (lb, "nowhere"), -1);
    assert_int_equal (logbuf_set_output (lb, "/no/such/dir/log"), -1);
    assert_int_equal (logbuf_set_output (lb, path), 0);
    logbuf_set_stderr_level (lb, LOG_WARNING);
    logbuf_printf (lb, LOG_ERR, "test", "into the file");
    logbuf_printf (lb, LOG_INFO, "test", "below the level");
    assert_non_null ((f = fopen (path, "r")));
    assert_non_null (fgets (line, sizeof (line), f));
    assert_non_null (strstr (line, "canopy-broker[3]: test.err: into the file"));
    assert_true (line[4] == '-' && strchr (line, 'Z'));
    assert_null (fgets (line, sizeof (line), f));
    fclose (f);
    assert_int_equal (logbuf_set_output (lb, "syslog"), 0);
    assert_int_equal (logbuf_set_output (lb, "stderr"), 0);
    logbuf_destroy (lb);
    unlink (path);
}

int main (void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test (test_logbuf),
                                        cmocka_unit_test (test_output) };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
