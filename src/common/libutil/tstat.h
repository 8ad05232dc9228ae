/* tstat.h - running statistics (count, min, max, mean, standard deviation)
 * by Welford's method, mergeable across workers (Chan et al.).
 */
#ifndef CANOPY_UTIL_TSTAT_H
#define CANOPY_UTIL_TSTAT_H

struct tstat {
    double count;
    double min;
    double max;
    double mean;
    double m2;      /* sum of squared differences from the mean */
};

void tstat_init (struct tstat *ts);
void tstat_push (struct tstat *ts, double x);
void tstat_merge (struct tstat *into, const struct tstat *from);
double tstat_mean (const struct tstat *ts);
double tstat_stddev (const struct tstat *ts);   /* sample stddev, 0 if n<2 */

#endif
