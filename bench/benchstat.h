/* benchstat.h - latency samples and their summary, for the benchmarks.
 *
 * A benchstat collects samples (microseconds) in a growing array and
 * summarises them: count, mean, median, 99th percentile (nearest rank),
 * min and max.  The summary line printed by benchstat_print is the one
 * format every benchmark program in bench/ emits, so that the scripts
 * can parse them alike:
 *
 *   LABEL: n=COUNT size=BYTES mean=M median=MED p99=P min=A max=B us
 *
 * Ownership: benchstat_create returns a new object; benchstat_destroy
 * accepts NULL and keeps errno.  benchstat_push returns -1 with ENOMEM if
 * the sample cannot be stored.  benchstat_summary sorts the samples in
 * place; an empty benchstat yields a summary of zeros.
 */
#ifndef CANOPY_BENCH_BENCHSTAT_H
#define CANOPY_BENCH_BENCHSTAT_H

#include <stddef.h>
#include <stdio.h>

struct benchstat_summary {
    size_t count;
    double mean;
    double median;
    double p99;
    double min;
    double max;
};

struct benchstat;

struct benchstat *benchstat_create (void);
void benchstat_destroy (struct benchstat *bs);
int benchstat_push (struct benchstat *bs, double usec);
size_t benchstat_count (const struct benchstat *bs);
/* Nearest-rank percentile p (0 < p <= 100) of sorted[0..n-1]. */
double benchstat_percentile (const double *sorted, size_t n, double p);
void benchstat_summary (struct benchstat *bs, struct benchstat_summary *sum);
void benchstat_print (FILE *fp, const char *label, size_t size,
                      const struct benchstat_summary *sum);

#endif
