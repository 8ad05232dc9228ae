/* test/log.c - unit tests for log.c: messages carry the program prefix,
 * and the *_exit functions exit 1 after flushing stdio (they use _exit so
 * that leak checkers do not judge a command that gives up; regression for
 * the flaky abort of failing commands under ./quickstart check --sanitize).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/wait.h>
#include "src/common/libutil/log.h"

enum { MSG_EXIT, ERR_EXIT, ERRN_EXIT };

/* Run one *_exit variant in a child with stdout and stderr on pipes;
 * return its wait status and what it wrote.
 */
static int run_child (int which, char *out, size_t outsz, char *err, size_t errsz)
{
    int po[2], pe[2], status;
    pid_t pid;
    ssize_t n;

    assert_int_equal (pipe (po), 0);
    assert_int_equal (pipe (pe), 0);
    pid = fork ();
    assert_true (pid >= 0);
    if (pid == 0) {
        dup2 (po[1], 1);
        dup2 (pe[1], 2);
        close (po[0]);
        close (pe[0]);
        /* stdout is a pipe: fully buffered, lost unless flushed */
        setvbuf (stdout, NULL, _IOFBF, 4096);
        log_init ("/some/dir/testprog");
        printf ("buffered output");
        if (which == MSG_EXIT)
            log_msg_exit ("giving up on %s", "x");
        errno = ENOENT;
        if (which == ERR_EXIT)
            log_err_exit ("open %s", "y");
        log_errn_exit (EPERM, "cannot %d", 42);
    }
    close (po[1]);
    close (pe[1]);
    n = read (po[0], out, outsz - 1);
    out[n > 0 ? n : 0] = '\0';
    n = read (pe[0], err, errsz - 1);
    err[n > 0 ? n : 0] = '\0';
    close (po[0]);
    close (pe[0]);
    assert_int_equal (waitpid (pid, &status, 0), pid);
    return status;
}

static void test_exit_variants (void **state)
{
    char out[256], err[256];
    int status;

    status = run_child (MSG_EXIT, out, sizeof (out), err, sizeof (err));
    assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 1);
    assert_string_equal (out, "buffered output");
    assert_string_equal (err, "testprog: giving up on x\n");

    status = run_child (ERR_EXIT, out, sizeof (out), err, sizeof (err));
    assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 1);
    assert_string_equal (out, "buffered output");
    assert_non_null (strstr (err, "testprog: open y: "));
    assert_non_null (strstr (err, strerror (ENOENT)));

    status = run_child (ERRN_EXIT, out, sizeof (out), err, sizeof (err));
    assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 1);
    assert_string_equal (out, "buffered output");
    assert_non_null (strstr (err, "testprog: cannot 42: "));
    assert_non_null (strstr (err, strerror (EPERM)));
}

/* The exit hook runs once, before the flush, in the process that set it
 * and not in a child forked after (a broker's run directory is not its
 * task's to remove).
 */
static int hook_runs;
static void hook (void)
{
    hook_runs++;
    printf (" hook %d", hook_runs);
}

static void test_exit_hook (void **state)
{
    int po[2], status;
    char out[256];
    ssize_t n;
    pid_t pid;

    assert_int_equal (pipe (po), 0);
    pid = fork ();
    assert_true (pid >= 0);
    if (pid == 0) {
        dup2 (po[1], 1);
        close (po[0]);
        setvbuf (stdout, NULL, _IOFBF, 4096);
        log_set_exit_hook (hook);
        pid_t kid = fork ();
        if (kid == 0) {
            printf ("child");
            log_msg_exit ("the child gives up");
        }
        waitpid (kid, NULL, 0);
        printf (" parent");
        log_msg_exit ("the parent gives up");
    }
    close (po[1]);
    size_t len = 0;     /* to EOF: the two processes write separately */
    while (len < sizeof (out) - 1
           && (n = read (po[0], out + len, sizeof (out) - 1 - len)) > 0)
        len += n;
    out[len] = '\0';
    close (po[0]);
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 1);
    assert_string_equal (out, "child parent hook 1");
}

static void test_msg_keeps_errno (void **state)
{
    log_init ("t");
    errno = EAGAIN;
    /* goes to the test's stderr, which is not TAP */
    log_msg ("a message from test_msg_keeps_errno");
    assert_int_equal (errno, EAGAIN);
    log_err ("an error from test_msg_keeps_errno");
    assert_int_equal (errno, EAGAIN);
    assert_string_equal (log_progname (), "t");
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_exit_variants),
        cmocka_unit_test (test_exit_hook),
        cmocka_unit_test (test_msg_keeps_errno),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
