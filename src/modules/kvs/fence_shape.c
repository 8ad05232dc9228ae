/* fence_shape.c - see fence_shape.h.
 *
 * A small array searched linearly: a broker sees a handful of distinct
 * (user, size) pairs, and a lookup happens once per fence entry.  Each
 * slot carries the learning clock's value when it was last written; the
 * smallest (an unused slot has 0) is the one replaced.
 */
#include <stdlib.h>
#include <errno.h>
#include <math.h>
#include "fence_shape.h"

struct shape {
    uint64_t stamp;         /* 0: unused */
    uint32_t userid;
    int nprocs;
    int count;
    double span;            /* seconds the count took to arrive */
};

struct fence_shape {
    struct shape slot[FENCE_SHAPE_MAX];
    uint64_t clock;
};

fence_shape_t *fence_shape_create (void)
{
    fence_shape_t *fs = calloc (1, sizeof (*fs));
    if (!fs)
        errno = ENOMEM;
    return fs;
}

void fence_shape_destroy (fence_shape_t *fs)
{
    int saved_errno = errno;
    free (fs);
    errno = saved_errno;
}

static struct shape *find (const fence_shape_t *fs, uint32_t userid, int nprocs)
{
    for (int i = 0; i < FENCE_SHAPE_MAX; i++) {
        const struct shape *s = &fs->slot[i];
        if (s->stamp && s->userid == userid && s->nprocs == nprocs)
            return (struct shape *)s;
    }
    return NULL;
}

void fence_shape_learn (fence_shape_t *fs, uint32_t userid, int nprocs, int count,
                        double span)
{
    struct shape *s;

    if (!fs || nprocs < 2 || count < 1 || count > nprocs
        || !isfinite (span) || span < 0)
        return;
    if (!(s = find (fs, userid, nprocs))) {
        s = &fs->slot[0];
        for (int i = 1; i < FENCE_SHAPE_MAX; i++) {
            if (fs->slot[i].stamp < s->stamp)
                s = &fs->slot[i];
        }
        s->userid = userid;
        s->nprocs = nprocs;
    }
    s->count = count;
    s->span = span;
    s->stamp = ++fs->clock;
}

int fence_shape_expect (const fence_shape_t *fs, uint32_t userid, int nprocs,
                        double *span)
{
    const struct shape *s = fs ? find (fs, userid, nprocs) : NULL;
    if (span)
        *span = s ? s->span : 0;
    return s ? s->count : 0;
}

void fence_shape_foreach (const fence_shape_t *fs, fence_shape_f cb, void *arg)
{
    uint64_t below = UINT64_MAX;    /* the stamps listed so far are all >= */

    if (!fs || !cb)
        return;
    for (;;) {
        const struct shape *next = NULL;
        for (int i = 0; i < FENCE_SHAPE_MAX; i++) {
            const struct shape *s = &fs->slot[i];
            if (s->stamp && s->stamp < below && (!next || s->stamp > next->stamp))
                next = s;
        }
        if (!next)
            break;
        cb (next->userid, next->nprocs, next->count, next->span, arg);
        below = next->stamp;
    }
}
