/* heap.c - see heap.h.
 *
 * Design notes:
 * - mallopt's M_ARENA_MAX 1 puts threads created afterwards on the main
 *   arena (glibc takes the arena lock per allocation that misses its
 *   per-thread cache); M_MMAP_THRESHOLD fixes the mmap threshold (which
 *   also stops glibc from adjusting it) and M_TRIM_THRESHOLD the free
 *   space at the top of the heap that is kept.
 * - heap_prefault frees what it touched at once: with the settings above
 *   the block merges into the top of the heap and stays, pages present.
 *   The writes go through a volatile pointer so they are not optimised
 *   away.
 * - heap_cache_exec marks its re-execution with CANOPY_HEAP_CACHE_WAS,
 *   which holds GLIBC_TUNABLES as it was ("-": unset, "=VALUE": set),
 *   so the re-executed program restores it and never executes again
 *   (not even where the loader ignores GLIBC_TUNABLES, e.g. setuid),
 *   and with CANOPY_HEAP_CACHE_NAME, the program's name (comm) before:
 *   executing /proc/self/exe names the program "exe", so the re-executed
 *   one takes its old name back (PR_SET_NAME) before any thread exists.
 *   /proc/self/exe, not the path it links to: it is the running file
 *   even if that path was since replaced or removed.
 * - Not glibc's malloc: a sanitizer's (known when this file is compiled
 *   with it) or valgrind's (its vgpreload libraries are in LD_PRELOAD).
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <stdbool.h>
#include <errno.h>
#include <sys/prctl.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include "heap.h"

#define HEAP_MMAP_THRESHOLD (32 * 1024 * 1024)

int heap_share (size_t keep)
{
    if (keep == 0 || keep > HEAP_KEEP_MAX) {
        errno = EINVAL;
        return -1;
    }
#ifdef __GLIBC__
    if (mallopt (M_ARENA_MAX, 1) == 0
        || mallopt (M_MMAP_THRESHOLD, HEAP_MMAP_THRESHOLD) == 0
        || mallopt (M_TRIM_THRESHOLD, (int)keep) == 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
#else
    errno = ENOSYS;
    return -1;
#endif
}

void heap_prefault (size_t size)
{
    long pagesize = sysconf (_SC_PAGESIZE);
    volatile char *p;

    if (size == 0)
        return;
    if (size > HEAP_KEEP_MAX)
        size = HEAP_KEEP_MAX;
    if (pagesize <= 0)
        pagesize = 4096;
    if (!(p = malloc (size)))
        return;
    for (size_t i = 0; i < size; i += (size_t)pagesize)
        p[i] = 0;
    p[size - 1] = 0;
    free ((void *)p);
}

#define TUNABLE "glibc.malloc.tcache_count="
#define WAS_ENV "CANOPY_HEAP_CACHE_WAS"
#define NAME_ENV "CANOPY_HEAP_CACHE_NAME"

/* The tcache_count a GLIBC_TUNABLES value (NAME=VALUE:NAME=VALUE...)
 * sets, or -1.
 */
static long tunable_count (const char *tunables)
{
    const size_t tlen = strlen (TUNABLE);
    const char *p = tunables;

    while (p && *p) {
        const char *end = strchr (p, ':');
        size_t n = end ? (size_t)(end - p) : strlen (p);
        if (n > tlen && !strncmp (p, TUNABLE, tlen)) {
            char *e;
            unsigned long v;
            errno = 0;
            v = strtoul (p + tlen, &e, 10);
            if (errno == 0 && e == p + n && v <= HEAP_CACHE_MAX)
                return (long)v;
        }
        p = end ? end + 1 : NULL;
    }
    return -1;
}

static bool malloc_is_glibc (void)
{
#if defined __GLIBC__ && !defined __SANITIZE_ADDRESS__ && !defined __SANITIZE_THREAD__
    const char *preload = getenv ("LD_PRELOAD");
    return !preload || !strstr (preload, "vgpreload");
#else
    return false;
#endif
}

/* Put GLIBC_TUNABLES back as 'was' says, and drop the marks. */
static void restore (const char *was)
{
    if (was[0] == '=')
        (void)setenv ("GLIBC_TUNABLES", was + 1, 1);
    else
        (void)unsetenv ("GLIBC_TUNABLES");
    (void)unsetenv (WAS_ENV);
    (void)unsetenv (NAME_ENV);
}

int heap_cache_exec (unsigned int count, char **argv)
{
    const char *was = getenv (WAS_ENV);
    const char *tunables = getenv ("GLIBC_TUNABLES");
    char name[17] = "";
    char *value = NULL;
    char *mark = NULL;
    long have;
    bool marked = false;
    int saved_errno;

    if (was) {                  /* the re-executed program */
        const char *old = getenv (NAME_ENV);
        have = tunable_count (tunables);
        if (old && *old)
            (void)prctl (PR_SET_NAME, old, 0, 0, 0);
        restore (was);          /* setenv copies; old strings stay valid */
        return have >= 0 ? (int)have : 0;
    }
    if (count > HEAP_CACHE_MAX || !argv || !argv[0]) {
        errno = EINVAL;
        return -1;
    }
    if (count == 0)
        return 0;
    if ((have = tunable_count (tunables)) >= 0)
        return (int)have;       /* the environment's choice */
    if (!malloc_is_glibc ()) {
        errno = ENOSYS;
        return -1;
    }
    if (asprintf (&value, "%s%s%s%u", tunables ? tunables : "",
                  tunables && *tunables ? ":" : "", TUNABLE, count) < 0)
        value = NULL;
    if (asprintf (&mark, "%s%s", tunables ? "=" : "-", tunables ? tunables : "") < 0)
        mark = NULL;
    if (!value || !mark) {
        errno = ENOMEM;
        goto error;
    }
    (void)prctl (PR_GET_NAME, name, 0, 0, 0);
    marked = true;
    if (setenv (WAS_ENV, mark, 1) < 0 || setenv (NAME_ENV, name, 1) < 0
        || setenv ("GLIBC_TUNABLES", value, 1) < 0)
        goto error;
    execv ("/proc/self/exe", argv);
error:
    saved_errno = errno;
    if (marked)
        restore (mark);
    free (value);
    free (mark);
    errno = saved_errno;
    return -1;
}
