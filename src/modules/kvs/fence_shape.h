/* fence_shape.h - how many participants this broker's subtree brought to
 * recent collective fences, by user and fence size.
 *
 * When a setroot event names a fence, a broker (rank > 0) knows exactly
 * how many of its participants came through it: every contribution from
 * its subtree had to, or rank 0 could not have completed the fence.  Jobs
 * repeat their fences with the same participants on the same brokers
 * (PMI barriers, KAP runs, an application's iterations), so the next
 * collective fence of the same user and size is expected to bring as
 * many, and fence.c holds its relay until they are in (relay-hold).
 * With the count goes how long they took to arrive here (the span from
 * the fence's first contribution at this broker to its last), which
 * bounds how long the next hold may wait.
 *
 * A fixed number of shapes is kept (FENCE_SHAPE_MAX); learning a new one
 * replaces the least recently learned.  Pure: no handle, no I/O, no
 * allocation after create.
 */
#ifndef CANOPY_KVS_FENCE_SHAPE_H
#define CANOPY_KVS_FENCE_SHAPE_H

#include <stdint.h>

#define FENCE_SHAPE_MAX 16

typedef struct fence_shape fence_shape_t;

/* Returns an empty table, or NULL with errno ENOMEM. */
fence_shape_t *fence_shape_create (void);
/* Accepts NULL; keeps errno. */
void fence_shape_destroy (fence_shape_t *fs);

/* A fence of 'nprocs' by 'userid' brought 'count' participants through
 * this broker over 'span' seconds.  Ignored unless nprocs > 1,
 * 0 < count <= nprocs and span is finite and >= 0.
 */
void fence_shape_learn (fence_shape_t *fs, uint32_t userid, int nprocs, int count,
                        double span);

/* The count learned last for (userid, nprocs), or 0 if none is known.
 * If 'span' is not NULL it is set to the span learned with that count
 * (0 if none is known).
 */
int fence_shape_expect (const fence_shape_t *fs, uint32_t userid, int nprocs,
                        double *span);

/* Called by fence_shape_foreach for each learned shape. */
typedef void (*fence_shape_f)(uint32_t userid, int nprocs, int count, double span,
                              void *arg);

/* Call 'cb' for each learned shape, the most recently learned first
 * (kvs stats shows them).  Accepts NULL (no call).
 */
void fence_shape_foreach (const fence_shape_t *fs, fence_shape_f cb, void *arg);

#endif
