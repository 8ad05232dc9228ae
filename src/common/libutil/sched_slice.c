/* sched_slice.c - see sched_slice.h.
 *
 * Design notes: glibc before 2.41 (Debian 12 has 2.36) has no wrapper
 * for sched_getattr/sched_setattr and no struct sched_attr, so this file
 * declares the structure as the kernel's UAPI defines its first version
 * (48 bytes; the kernel accepts a structure of any known size) and calls
 * the system calls directly.
 * The attributes are read first and written back with only the slice
 * changed, so the policy and the nice value stay as they are.
 */
#include <sched.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "sched_slice.h"

#define SCHED_FLAG_RESET_ON_FORK 0x01

struct slice_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;     /* ns: the slice, for a fair policy */
    uint64_t sched_deadline;
    uint64_t sched_period;
};

/* Whether sched_runtime is this policy's slice (for SCHED_DEADLINE the
 * same field is its runtime budget).
 */
static bool fair (uint32_t policy)
{
    return policy == SCHED_OTHER || policy == SCHED_BATCH;
}

bool sched_slice_valid (unsigned long usec)
{
    return usec == 0 || (usec >= SCHED_SLICE_MIN_US && usec <= SCHED_SLICE_MAX_US);
}

static int get_attr (struct slice_attr *a)
{
#ifdef SYS_sched_getattr
    memset (a, 0, sizeof (*a));
    return (int)syscall (SYS_sched_getattr, 0, a, sizeof (*a), 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int sched_slice_set (unsigned long usec)
{
    struct slice_attr a;

    if (!sched_slice_valid (usec)) {
        errno = EINVAL;
        return -1;
    }
    if (get_attr (&a) < 0)
        return -1;
    if (!fair (a.sched_policy)) {
        errno = EINVAL;
        return -1;
    }
#ifdef SYS_sched_setattr
    a.size = sizeof (a);
    a.sched_flags &= SCHED_FLAG_RESET_ON_FORK;  /* an unprivileged thread
                                                 * may not clear it */
    a.sched_runtime = (uint64_t)usec * 1000;
    return (int)syscall (SYS_sched_setattr, 0, &a, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

long sched_slice_get (void)
{
    struct slice_attr a;

    if (get_attr (&a) < 0)
        return -1;
    if (!fair (a.sched_policy))
        return 0;
    return (long)(a.sched_runtime / 1000);
}
