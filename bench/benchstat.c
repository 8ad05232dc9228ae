/* benchstat.c - see benchstat.h
 *
 * Samples are kept (not just running moments) because medians and tail
 * percentiles are what the benchmarks report: on a shared, noisy machine
 * the mean is dragged around by a few scheduling hiccups.
 */
#include <stdlib.h>
#include <errno.h>
#include <math.h>
#include "benchstat.h"

struct benchstat {
    double *v;
    size_t n;
    size_t cap;
};

struct benchstat *benchstat_create (void)
{
    struct benchstat *bs = calloc (1, sizeof (*bs));
    if (!bs)
        errno = ENOMEM;
    return bs;
}

void benchstat_destroy (struct benchstat *bs)
{
    if (bs) {
        int saved_errno = errno;
        free (bs->v);
        free (bs);
        errno = saved_errno;
    }
}

int benchstat_push (struct benchstat *bs, double usec)
{
    if (bs->n == bs->cap) {
        size_t cap = bs->cap ? bs->cap * 2 : 1024;
        double *v = realloc (bs->v, cap * sizeof (*v));
        if (!v) {
            errno = ENOMEM;
            return -1;
        }
        bs->v = v;
        bs->cap = cap;
    }
    bs->v[bs->n++] = usec;
    return 0;
}

size_t benchstat_count (const struct benchstat *bs)
{
    return bs->n;
}

static int cmp_double (const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double benchstat_percentile (const double *sorted, size_t n, double p)
{
    size_t rank;

    if (n == 0)
        return 0;
    if (p <= 0)
        return sorted[0];
    rank = (size_t)ceil (p / 100. * n);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

void benchstat_summary (struct benchstat *bs, struct benchstat_summary *sum)
{
    double total = 0;
    size_t n = bs->n;

    sum->count = n;
    sum->mean = sum->median = sum->p99 = sum->min = sum->max = 0;
    if (n == 0)
        return;
    qsort (bs->v, n, sizeof (double), cmp_double);
    for (size_t i = 0; i < n; i++)
        total += bs->v[i];
    sum->mean = total / n;
    sum->median = n % 2 ? bs->v[n / 2] : (bs->v[n / 2 - 1] + bs->v[n / 2]) / 2;
    sum->p99 = benchstat_percentile (bs->v, n, 99);
    sum->min = bs->v[0];
    sum->max = bs->v[n - 1];
}

void benchstat_print (FILE *fp, const char *label, size_t size,
                      const struct benchstat_summary *sum)
{
    fprintf (fp, "%s: n=%zu size=%zu mean=%.1f median=%.1f p99=%.1f "
             "min=%.1f max=%.1f us\n",
             label, sum->count, size, sum->mean, sum->median, sum->p99,
             sum->min, sum->max);
}
