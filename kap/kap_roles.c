/* kap_roles.c - roles, key names and checkable values (see kap_roles.h).
 *
 * Values come from a splitmix64 stream: cheap, deterministic, and any
 * change to a byte, the length or the (iteration, producer) it belongs to
 * is detected by kap_value_check.
 */
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include "kap_roles.h"

bool kap_is_producer (const struct kap_config *cfg, int rank)
{
    return rank >= 0 && rank < cfg->nproducers;
}

bool kap_is_consumer (const struct kap_config *cfg, int rank)
{
    return rank < cfg->nprocs && rank >= cfg->nprocs - cfg->nconsumers;
}

/* Producers are ranks [0, P), consumers [T-C, T): the union of the two
 * ranges, in O(1) (kap-crowd asks once per participant).
 */
int kap_nactors (const struct kap_config *cfg)
{
    int t = cfg->nprocs;
    int p = cfg->nproducers < t ? cfg->nproducers : t;
    int c = cfg->nconsumers < t ? cfg->nconsumers : t;

    if (t <= 0)
        return 0;
    if (p < 0)
        p = 0;
    if (c < 0)
        c = 0;
    return p + c < t ? p + c : t;
}

int kap_last_actor (const struct kap_config *cfg)
{
    for (int r = cfg->nprocs - 1; r >= 0; r--) {
        if (kap_is_producer (cfg, r) || kap_is_consumer (cfg, r))
            return r;
    }
    return -1;
}

int kap_target (const struct kap_config *cfg, int rank, int i)
{
    if (!kap_is_consumer (cfg, rank) || i < 1 || i > cfg->access_count)
        return -1;
    long k = rank - (cfg->nprocs - cfg->nconsumers);
    long mapped = k % cfg->nproducers;
    return (int)((mapped + (long)cfg->access_stride * i) % cfg->nproducers);
}

int kap_dir_of (const struct kap_config *cfg, int producer)
{
    return producer % cfg->ndirs;
}

/* Decimal text of v at p; returns the end.  kap_key is called for every
 * put and get while they are timed: snprintf's format parsing was ~3% of
 * the ranks' CPU in an 8 B fence window, on cores the brokers need.
 */
static char *put_int (char *p, int v)
{
    char tmp[12];
    int n = 0;
    unsigned int u = v < 0 ? -(unsigned int)v : (unsigned int)v;

    if (v < 0)
        *p++ = '-';
    do {
        tmp[n++] = '0' + u % 10;
        u /= 10;
    } while (u > 0);
    while (n > 0)
        *p++ = tmp[--n];
    return p;
}

/* "kap." then the n numbers joined by seps[i] (each one character). */
static int put_key (char *buf, const int *v, const char *seps, int n)
{
    char *p = buf;

    memcpy (p, "kap.", 4);
    p += 4;
    for (int i = 0; i < n; i++) {
        if (i > 0)
            *p++ = seps[i - 1];
        p = put_int (p, v[i]);
    }
    *p = '\0';
    return p - buf;
}

int kap_key (const struct kap_config *cfg, int iter, int producer, int k,
             char *buf, size_t len)
{
    if (iter < 0 || producer < 0 || producer >= cfg->nproducers
        || k < 0 || k >= cfg->keys_per_iter)
        return -1;
    /* kap.I.T.D.P or kap.I.T.D.P-K; returned and truncated as snprintf */
    char key[72];       /* 4 + 5 numbers of <= 11 + 4 separators + NUL */
    int v[5] = { cfg->instance, iter, kap_dir_of (cfg, producer), producer, k };
    int n = put_key (key, v, "...-", cfg->keys_per_iter == 1 ? 4 : 5);
    if (len > 0) {
        size_t c = (size_t)n < len ? (size_t)n : len - 1;
        memcpy (buf, key, c);
        buf[c] = '\0';
    }
    return n;
}

int kap_dir_key (const struct kap_config *cfg, int iter, int dir,
                 char *buf, size_t len)
{
    if (iter < 0 || dir < 0 || dir >= cfg->ndirs)
        return -1;
    return snprintf (buf, len, "kap.%d.%d.%d", cfg->instance, iter, dir);
}

int kap_name (const struct kap_config *cfg, const char *what,
              char *buf, size_t len)
{
    if (!what)
        return -1;
    return snprintf (buf, len, "kap.%d.%s", cfg->instance, what);
}

static uint64_t splitmix64 (uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t value_seed (const struct kap_config *cfg, int iter,
                            int producer, int k)
{
    uint64_t s = (uint64_t)(uint32_t)cfg->instance;
    s = s * 0x100000001b3ULL ^ (uint64_t)(uint32_t)iter;
    s = s * 0x100000001b3ULL ^ (uint64_t)(uint32_t)k;
    s = s * 0x100000001b3ULL ^ (cfg->redundant ? 0xffffffffULL
                                               : (uint64_t)(uint32_t)producer);
    return s;
}

void kap_value_fill (const struct kap_config *cfg, int iter, int producer,
                     int k, void *buf)
{
    uint64_t state = value_seed (cfg, iter, producer, k);
    unsigned char *p = buf;
    size_t left = cfg->value_size;

    while (left > 0) {
        uint64_t x = splitmix64 (&state);
        size_t n = left < sizeof (x) ? left : sizeof (x);
        memcpy (p, &x, n);
        p += n;
        left -= n;
    }
}

bool kap_value_check (const struct kap_config *cfg, int iter, int producer,
                      int k, const void *data, size_t len)
{
    uint64_t state = value_seed (cfg, iter, producer, k);
    const unsigned char *p = data;
    size_t left = len;

    if (!data || len != (size_t)cfg->value_size)
        return false;
    while (left > 0) {
        uint64_t x = splitmix64 (&state);
        size_t n = left < sizeof (x) ? left : sizeof (x);
        if (memcmp (p, &x, n) != 0)
            return false;
        p += n;
        left -= n;
    }
    return true;
}
