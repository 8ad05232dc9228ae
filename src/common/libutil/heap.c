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
 */
#include <stdlib.h>
#include <errno.h>
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
