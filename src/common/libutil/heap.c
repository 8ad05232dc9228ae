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
 *   (not even where the loader ignores GLIBC_TUNABLES, e.g. setuid).
 *   Whether malloc is glibc's is asked of mallopt with a setting that
 *   changes nothing (M_MXFAST to its default): a sanitizer's refuses it.
 *   valgrind's says yes to everything, but runs its program with
 *   vgpreload libraries in LD_PRELOAD.
 */
#include <stdlib.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <stdbool.h>
#include <errno.h>
#include <limits.h>
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
#ifdef __GLIBC__
    const char *preload = getenv ("LD_PRELOAD");
    if (preload && strstr (preload, "vgpreload"))
        return false;
    return mallopt (M_MXFAST, 64 * sizeof (size_t) / 4) == 1;
#else
    return false;
#endif
}

/* A new string, or NULL. */
static char *printed (const char *fmt, ...)
{
    va_list ap;
    int n;
    char *s;

    va_start (ap, fmt);
    n = vsnprintf (NULL, 0, fmt, ap);
    va_end (ap);
    if (n < 0 || !(s = malloc ((size_t)n + 1)))
        return NULL;
    va_start (ap, fmt);
    (void)vsnprintf (s, (size_t)n + 1, fmt, ap);
    va_end (ap);
    return s;
}

/* Put GLIBC_TUNABLES back as 'was' says, and drop the mark. */
static void restore (const char *was)
{
    if (was[0] == '=')
        (void)setenv ("GLIBC_TUNABLES", was + 1, 1);
    else
        (void)unsetenv ("GLIBC_TUNABLES");
    (void)unsetenv (WAS_ENV);
}

int heap_cache_exec (unsigned int count, char **argv)
{
    const char *was = getenv (WAS_ENV);
    const char *tunables = getenv ("GLIBC_TUNABLES");
    char *value = NULL;
    char *mark = NULL;
    long have;
    bool marked = false;
    char path[PATH_MAX];
    ssize_t n;
    int saved_errno;

    if (count > HEAP_CACHE_MAX || !argv || !argv[0]) {
        errno = EINVAL;
        return -1;
    }
    if (was) {                  /* the re-executed program */
        char *copy = strdup (was);
        have = tunable_count (tunables);
        restore (copy ? copy : "-");
        free (copy);
        return have >= 0 ? (int)have : 0;
    }
    if (count == 0)
        return 0;
    if ((have = tunable_count (tunables)) >= 0)
        return (int)have;       /* the environment's choice */
    if (!malloc_is_glibc ()) {
        errno = ENOSYS;
        return -1;
    }
    value = printed ("%s%s%s%u", tunables ? tunables : "",
                     tunables && *tunables ? ":" : "", TUNABLE, count);
    mark = printed ("%s%s", tunables ? "=" : "-", tunables ? tunables : "");
    if (!value || !mark) {
        errno = ENOMEM;
        goto error;
    }
    marked = true;
    if (setenv (WAS_ENV, mark, 1) < 0 || setenv ("GLIBC_TUNABLES", value, 1) < 0)
        goto error;
    /* by its path, not /proc/self/exe: the name is what ps, pgrep and
     * the thread names show
     */
    if ((n = readlink ("/proc/self/exe", path, sizeof (path) - 1)) < 0)
        goto error;
    path[n] = '\0';
    execv (path, argv);
error:
    saved_errno = errno;
    if (marked)
        restore (mark);
    free (value);
    free (mark);
    errno = saved_errno;
    return -1;
}
