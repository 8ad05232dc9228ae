/* test/heap.c - unit tests for heap.c: argument checks, and, in child
 * processes with heap_share in effect, that memory written for the first
 * time takes page faults while memory heap_prefault touched first does
 * not (glibc's malloc only: skipped under a sanitizer or valgrind).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "src/common/libutil/test/test_skip.h"
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "src/common/libutil/heap.h"

#define MIB (1024 * 1024)

static void test_args (void **state)
{
    errno = 0;
    assert_int_equal (heap_share (0), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (heap_share (HEAP_KEEP_MAX + 1), -1);
    assert_int_equal (errno, EINVAL);
    heap_prefault (0);          /* nothing to do */
    heap_prefault (1);
}

static long minflt (void)
{
    struct rusage ru;
    if (getrusage (RUSAGE_SELF, &ru) < 0)
        return -1;
    return ru.ru_minflt;
}

/* In a child: heap_share, optionally prefault 8 MiB, then the faults of
 * writing a new 4 MiB block (sent back through the pipe).
 */
static long faults_of_new_block (bool prefault)
{
    int fd[2];
    long n = -1;
    pid_t pid;
    int status;

    assert_int_equal (pipe (fd), 0);
    assert_true ((pid = fork ()) >= 0);
    if (pid == 0) {
        long r = -2;            /* heap_share refused (not glibc's malloc) */
        if (heap_share (64 * MIB) == 0) {
            r = -1;
            if (prefault)
                heap_prefault (8 * MIB);
            long f0 = minflt ();
            /* volatile: the compiler may not drop the writes */
            volatile char *p = malloc (4 * MIB);
            if (p) {
                for (size_t i = 0; i < 4 * MIB; i += 512)
                    p[i] = 1;
                r = minflt () - f0;
                free ((void *)p);
            }
        }
        if (write (fd[1], &r, sizeof (r)) != sizeof (r))
            _exit (1);
        _exit (0);
    }
    close (fd[1]);
    assert_int_equal (read (fd[0], &n, sizeof (n)), sizeof (n));
    close (fd[0]);
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
    return n;
}

static void test_prefault (void **state)
{
#ifdef __GLIBC__
    const char *preload = getenv ("LD_PRELOAD");
    if (preload && strstr (preload, "vgpreload")) {
        TEST_SKIP ("under valgrind (its malloc takes no settings)");
    }
    long page = sysconf (_SC_PAGESIZE);
    long pages = 4 * MIB / page;
    long cold = faults_of_new_block (false);
    long warm = faults_of_new_block (true);
    print_message ("# 4 MiB written: %ld faults cold, %ld after heap_prefault\n",
                   cold, warm);
    /* a sanitizer's or valgrind's allocator takes no mallopt settings,
     * and may not fault page by page: nothing to show there
     */
    if (cold == -2 || (cold >= 0 && cold < pages / 2)) {
        TEST_SKIP ("malloc is not glibc's here");
    }
    assert_true (cold >= pages / 2);
    assert_true (warm >= 0 && warm < pages / 16);
#else
    TEST_SKIP ("not glibc");
#endif
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_args),
        cmocka_unit_test (test_prefault),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
