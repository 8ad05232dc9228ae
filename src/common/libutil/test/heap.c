/* test/heap.c - unit tests for heap.c: argument checks, and, in child
 * processes with heap_share in effect, that memory written for the first
 * time takes page faults while memory heap_prefault touched first does
 * not (glibc's malloc only: skipped under a sanitizer or valgrind).
 * heap_cache_exec re-executes this program (main's --cache-child), which
 * checks that the environment came back and that freed small blocks now
 * stay in the thread's cache instead of glibc's fast bins.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "src/common/libutil/test/test_skip.h"
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <fcntl.h>
#include "src/common/libutil/heap.h"
#ifdef __GLIBC__
#include <malloc.h>
#endif

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

static void test_cache_args (void **state)
{
    char *argv[] = { "prog", NULL };
    char *none[] = { NULL };

    errno = 0;
    assert_int_equal (heap_cache_exec (HEAP_CACHE_MAX + 1, argv), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (heap_cache_exec (16, NULL), -1);
    assert_int_equal (errno, EINVAL);
    errno = 0;
    assert_int_equal (heap_cache_exec (16, none), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (heap_cache_exec (0, argv), 0);   /* nothing to do */
}

/* A count GLIBC_TUNABLES already sets is kept: no re-execution (which
 * would end the child with status 9, main's --not-executed).
 */
static void test_cache_env (void **state)
{
    char *argv[] = { "test_heap", "--not-executed", NULL };
    pid_t pid;
    int status;

    assert_true ((pid = fork ()) >= 0);
    if (pid == 0) {
        setenv ("GLIBC_TUNABLES", "glibc.malloc.perturb=0:glibc.malloc.tcache_count=77", 1);
        _exit (heap_cache_exec (16, argv) == 77 ? 0 : 1);
    }
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFEXITED (status) && WEXITSTATUS (status) == 0);
}

#define CACHE_BLOCKS 100
#define CACHE_COUNT 256

/* Bytes that freeing CACHE_BLOCKS blocks of 48 bytes adds to glibc's
 * fast bins (with the default cache of 7, all but 7 of them).
 */
static long fastbin_growth (void)
{
#if defined __GLIBC__ && __GLIBC_PREREQ(2, 33)
    void *p[CACHE_BLOCKS];
    size_t before = mallinfo2 ().fsmblks;
    for (int i = 0; i < CACHE_BLOCKS; i++)
        p[i] = malloc (48);
    for (int i = 0; i < CACHE_BLOCKS; i++)
        free (p[i]);
    return (long)(mallinfo2 ().fsmblks - before);
#else
    return -1;
#endif
}

/* Re-executed by test_cache_exec: argv[2] is the parent's fast bin
 * growth, argv[3] its name.  Exit status: 0 right, 1 wrong count, 2
 * environment not restored, 3 blocks not cached, 4 the parent's measure
 * showed nothing, 5 the name not restored.
 */
static int cache_child (int argc, char **argv)
{
    long before = argc > 2 ? strtol (argv[2], NULL, 10) : -1;
    const char *t;

    if (heap_cache_exec (CACHE_COUNT, argv) != CACHE_COUNT)
        return 1;
    char name[17] = "";
    if (!(t = getenv ("GLIBC_TUNABLES")) || strcmp (t, "glibc.malloc.perturb=0") != 0
        || getenv ("CANOPY_HEAP_CACHE_WAS") || getenv ("CANOPY_HEAP_CACHE_NAME"))
        return 2;
    /* the name it had, not "exe" */
    if (prctl (PR_GET_NAME, name, 0, 0, 0) < 0 || argc < 4 || strcmp (name, argv[3]) != 0)
        return 5;
    if (fastbin_growth () != 0)
        return 3;
    if (before <= 0)
        return 4;
    return 0;
}

static void test_cache_exec (void **state)
{
    pid_t pid;
    int status;

    assert_true ((pid = fork ()) >= 0);
    if (pid == 0) {
        char growth[32];
        char name[17] = "";
        char *argv[] = { "test_heap", "--cache-child", growth, name, NULL };
        snprintf (growth, sizeof (growth), "%ld", fastbin_growth ());
        (void)prctl (PR_GET_NAME, name, 0, 0, 0);
        setenv ("GLIBC_TUNABLES", "glibc.malloc.perturb=0", 1);
        (void)heap_cache_exec (CACHE_COUNT, argv);
        _exit (errno == ENOSYS ? 77 : 6);
    }
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFEXITED (status));
    if (WEXITSTATUS (status) == 77) {
        TEST_SKIP ("malloc is not glibc's here");
    }
    assert_int_equal (WEXITSTATUS (status), 0);
}

/* Run by test_cache_deleted from a copy of this program: remove the copy,
 * then re-execute for the cache (--cache-child checks the result).
 */
static int unlink_then_cache (int argc, char **argv)
{
    char growth[32];
    char name[17] = "";
    char *args[] = { "test_heap", "--cache-child", growth, name, NULL };

    if (argc < 3 || unlink (argv[2]) < 0)
        return 7;
    snprintf (growth, sizeof (growth), "%ld", fastbin_growth ());
    (void)prctl (PR_GET_NAME, name, 0, 0, 0);
    setenv ("GLIBC_TUNABLES", "glibc.malloc.perturb=0", 1);
    (void)heap_cache_exec (CACHE_COUNT, args);
    return errno == ENOSYS ? 77 : 6;
}

/* The program's file removed while it runs (an upgrade): it is still
 * re-executed (/proc/self/exe names the running file, not a path).
 */
static void test_cache_deleted (void **state)
{
    char copy[] = "/tmp/test_heap-XXXXXX";
    char buf[65536];
    ssize_t n;
    int in, out, status;
    pid_t pid;

    assert_true ((in = open ("/proc/self/exe", O_RDONLY)) >= 0);
    assert_true ((out = mkstemp (copy)) >= 0);
    while ((n = read (in, buf, sizeof (buf))) > 0)
        assert_int_equal (write (out, buf, (size_t)n), n);
    assert_int_equal (n, 0);
    close (in);
    assert_int_equal (fchmod (out, 0700), 0);
    close (out);
    assert_true ((pid = fork ()) >= 0);
    if (pid == 0) {
        char *argv[] = { copy, "--unlink-then-cache", copy, NULL };
        execv (copy, argv);
        _exit (8);
    }
    assert_int_equal (waitpid (pid, &status, 0), pid);
    (void)unlink (copy);
    assert_true (WIFEXITED (status));
    if (WEXITSTATUS (status) == 77) {
        TEST_SKIP ("malloc is not glibc's here");
    }
    assert_int_equal (WEXITSTATUS (status), 0);
}

int main (int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_args),
        cmocka_unit_test (test_prefault),
        cmocka_unit_test (test_cache_args),
        cmocka_unit_test (test_cache_env),
        cmocka_unit_test (test_cache_exec),
        cmocka_unit_test (test_cache_deleted),
    };
    if (argc > 1 && !strcmp (argv[1], "--cache-child"))
        return cache_child (argc, argv);
    if (argc > 1 && !strcmp (argv[1], "--not-executed"))
        return 9;
    if (argc > 1 && !strcmp (argv[1], "--unlink-then-cache"))
        return unlink_then_cache (argc, argv);
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
