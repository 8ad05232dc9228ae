/* monotime.h - monotonic clock helpers (seconds as double, and timespecs). */
#ifndef CANOPY_UTIL_MONOTIME_H
#define CANOPY_UTIL_MONOTIME_H

#include <time.h>

/* Seconds since an arbitrary fixed point (CLOCK_MONOTONIC). */
double monotime (void);
void monotime_ts (struct timespec *ts);
/* Elapsed milliseconds since *t0. */
double monotime_since_ms (const struct timespec *t0);
/* Wall-clock seconds since the epoch (CLOCK_REALTIME; as a double, to
 * about 0.2 us today). */
double walltime (void);
/* CPU seconds the calling thread has used (CLOCK_THREAD_CPUTIME_ID): what
 * a piece of work cost, unaffected by time spent preempted.
 */
double thread_cputime (void);

#endif
