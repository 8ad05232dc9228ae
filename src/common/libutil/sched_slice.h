/* sched_slice.h - the scheduler time slice a thread asks for.
 *
 * Linux's fair scheduler (EEVDF, 6.6 on) gives every runnable thread a
 * slice; since 6.12 a thread may ask for its own (sched_setattr's
 * sched_runtime, 100 us to 100 ms, no privilege needed).  A shorter slice
 * does not give a thread more CPU: its share still follows its nice
 * value.  It gives it an earlier deadline, so when it wakes on a busy core
 * it runs ahead of a thread that has been running longer (the kernel's
 * PREEMPT_SHORT).  That suits a broker thread, which wakes for a message,
 * works for tens of microseconds and sleeps again, on cores that
 * application processes keep busy.
 *
 * Both calls act on the calling thread only.  A slice is inherited by the
 * threads and processes the thread creates afterwards (not under
 * SCHED_RESET_ON_FORK, e.g. `chrt -R`, which the call keeps: then each
 * new thread starts with the default): a process that starts other
 * people's programs resets it in the child (sched_slice_set (0)) before
 * exec.
 *
 * sched_slice_set: usec 0 returns the thread to the kernel's default
 * slice; otherwise usec must be within SCHED_SLICE_MIN_US ..
 * SCHED_SLICE_MAX_US.  Returns 0, or -1 with errno EINVAL (out of range,
 * or the thread's policy is not SCHED_OTHER or SCHED_BATCH)
 * or what sched_getattr/sched_setattr set (ENOSYS: no such system call;
 * EPERM, e.g. under a seccomp filter).  A kernel before 6.12 accepts the
 * call and ignores the slice: sched_slice_get tells.  Keeps the thread's
 * policy and nice value; no side effects on failure.  Async-signal-safe.
 *
 * sched_slice_valid: whether usec is a value sched_slice_set takes
 * (0, or SCHED_SLICE_MIN_US .. SCHED_SLICE_MAX_US).
 *
 * sched_slice_get: the calling thread's slice in microseconds (the
 * kernel's default one unless it was set), 0 if the kernel does not say
 * (before 6.12) or the thread's policy is not SCHED_OTHER or SCHED_BATCH,
 * or -1 with errno.
 */
#ifndef CANOPY_UTIL_SCHED_SLICE_H
#define CANOPY_UTIL_SCHED_SLICE_H

#include <stdbool.h>

enum {
    SCHED_SLICE_MIN_US = 100,
    SCHED_SLICE_MAX_US = 100000,
};

int sched_slice_set (unsigned long usec);
bool sched_slice_valid (unsigned long usec);
long sched_slice_get (void);

#endif
