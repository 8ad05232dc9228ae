/* monotime.c - see monotime.h */
#include <time.h>
#include "monotime.h"

double monotime (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void monotime_ts (struct timespec *ts)
{
    clock_gettime (CLOCK_MONOTONIC, ts);
}

double monotime_since_ms (const struct timespec *t0)
{
    struct timespec now;
    clock_gettime (CLOCK_MONOTONIC, &now);
    return (now.tv_sec - t0->tv_sec) * 1e3 + (now.tv_nsec - t0->tv_nsec) * 1e-6;
}

double walltime (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double thread_cputime (void)
{
    struct timespec ts;
    if (clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
        return 0;
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}
