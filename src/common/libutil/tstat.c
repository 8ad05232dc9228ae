/* tstat.c - see tstat.h */
#include <math.h>
#include "tstat.h"

void tstat_init (struct tstat *ts)
{
    ts->count = 0;
    ts->min = 0;
    ts->max = 0;
    ts->mean = 0;
    ts->m2 = 0;
}

void tstat_push (struct tstat *ts, double x)
{
    if (ts->count == 0 || x < ts->min)
        ts->min = x;
    if (ts->count == 0 || x > ts->max)
        ts->max = x;
    ts->count += 1;
    double delta = x - ts->mean;
    ts->mean += delta / ts->count;
    ts->m2 += delta * (x - ts->mean);
}

void tstat_merge (struct tstat *into, const struct tstat *from)
{
    if (from->count == 0)
        return;
    if (into->count == 0) {
        *into = *from;
        return;
    }
    double n = into->count + from->count;
    double delta = from->mean - into->mean;
    into->m2 += from->m2 + delta * delta * into->count * from->count / n;
    into->mean += delta * from->count / n;
    into->count = n;
    if (from->min < into->min)
        into->min = from->min;
    if (from->max > into->max)
        into->max = from->max;
}

double tstat_mean (const struct tstat *ts)
{
    return ts->mean;
}

double tstat_stddev (const struct tstat *ts)
{
    if (ts->count < 2)
        return 0;
    return sqrt (ts->m2 / (ts->count - 1));
}
