/* options.c - see options.h.
 *
 * Design notes: one table row per option (its kind, bounds and where it
 * lives in the context); values are parsed with strtoll/strtoull/strtod
 * and checked for garbage, range (ERANGE) and the option's bounds before
 * anything is stored.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <limits.h>
#include <ctype.h>
#include <math.h>
#include "options.h"

/* K_BYTES: an int number of bytes; K_SIZE: a size_t one.  Both take a
 * binary suffix: 64k, 512K, 8M, 1G, 2T (x1024^n).
 */
enum kind { K_INT, K_BYTES, K_SIZE, K_SECONDS };

struct option_spec {
    const char *name;
    enum kind kind;
    long long min;          /* K_INT, K_BYTES, K_SIZE lower bound */
    size_t offset;          /* in struct kvs_ctx */
};

#define AT(field) offsetof (struct kvs_ctx, field)

/* One row per option: the table of specs and the list of names are both
 * made from it, so an option cannot be parsed without also being read
 * from its broker attribute (kvs.c), or the other way round.
 */
#define KVS_OPTIONS(X) \
    X ("fence-timeout", K_SECONDS, 0, limits.fence_timeout) \
    X ("relay-hold", K_SECONDS, 0, limits.relay_hold) \
    X ("max-nprocs", K_INT, 1, limits.max_nprocs) \
    X ("max-pending", K_INT, 1, limits.max_pending_per_user) \
    X ("max-ops", K_INT, 1, limits.max_txn_ops) \
    X ("cache-max", K_SIZE, 0, cache_max) \
    X ("cache-age", K_SECONDS, 0, cache_age) \
    X ("hdir-threshold", K_INT, 2, limits.hdir_threshold) \
    X ("hdir-bytes", K_BYTES, 0, limits.hdir_bytes) \
    X ("prime-max", K_BYTES, 0, limits.prime_max) \
    X ("prime-budget", K_BYTES, 0, limits.prime_budget) \
    X ("prime-values", K_SIZE, 0, limits.prime_values) \
    X ("prime-delay", K_SECONDS, 0, limits.prime_delay) \
    X ("checkpoint-period", K_SECONDS, 0, checkpoint_period) \
    X ("shm-size", K_SIZE, 0, shm_size)

#define SPEC(name, kind, min, field) { name, kind, min, AT (field) },
#define NAME(name, kind, min, field) name,

static const struct option_spec specs[] = { KVS_OPTIONS (SPEC) };

const char *const kvs_option_names[] = { KVS_OPTIONS (NAME) NULL };

static int refuse (canopy_error_t *error, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));

static int refuse (canopy_error_t *error, const char *fmt, ...)
{
    if (error) {
        va_list ap;
        va_start (ap, fmt);
        vsnprintf (error->text, sizeof (error->text), fmt, ap);
        va_end (ap);
    }
    errno = EINVAL;
    return -1;
}

/* Plain decimal digits only (strto* would take spaces, signs, hex). */
static bool all_digits (const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++) {
        if (!isdigit ((unsigned char)*s))
            return false;
    }
    return true;
}

/* Decimal digits and an optional binary suffix (k, m, g, t, either
 * case), into *v; false if malformed or past 'max'.
 */
static bool parse_bytes (const char *s, unsigned long long max,
                         unsigned long long *v)
{
    size_t n = strspn (s, "0123456789");
    unsigned long long x, mult = 1;
    const char *units = "kmgt";
    char digits[32];

    if (n == 0 || n >= sizeof (digits))
        return false;
    if (s[n] != '\0') {
        const char *u = strchr (units, tolower ((unsigned char)s[n]));
        if (!u || s[n + 1] != '\0')
            return false;
        for (const char *q = units; q <= u; q++)
            mult *= 1024;
    }
    memcpy (digits, s, n);
    digits[n] = '\0';
    errno = 0;
    x = strtoull (digits, NULL, 10);
    if (errno || x > max / mult)
        return false;
    *v = x * mult;
    return true;
}

int kvs_option_set (struct kvs_ctx *ctx, const char *name, const char *value,
                    canopy_error_t *error)
{
    const struct option_spec *o = NULL;
    char *end;

    if (!ctx || !name || !value)
        return refuse (error, "kvs: missing option name or value");
    for (size_t i = 0; i < sizeof (specs) / sizeof (specs[0]); i++) {
        if (!strcmp (specs[i].name, name))
            o = &specs[i];
    }
    if (!o)
        return refuse (error, "kvs: unknown option '%.64s'", name);
    void *p = (char *)ctx + o->offset;
    switch (o->kind) {
        case K_INT: {
            long long v;
            errno = 0;
            if (!all_digits (value) || ((v = strtoll (value, &end, 10)), errno)
                || v < o->min || v > INT_MAX)
                return refuse (error, "kvs: option %s=%.64s: expected a whole"
                               " number from %lld to %d", name, value, o->min,
                               INT_MAX);
            *(int *)p = (int)v;
            break;
        }
        case K_BYTES: {
            unsigned long long v;
            if (!parse_bytes (value, INT_MAX, &v) || v < (unsigned long long)o->min)
                return refuse (error, "kvs: option %s=%.64s: expected a number"
                               " of bytes from %lld to %d (suffix k, M, G"
                               " allowed)", name, value, o->min, INT_MAX);
            *(int *)p = (int)v;
            break;
        }
        case K_SIZE: {
            unsigned long long v;
            if (!parse_bytes (value, SIZE_MAX, &v))
                return refuse (error, "kvs: option %s=%.64s: expected a number"
                               " of bytes from 0 to %zu (suffix k, M, G, T"
                               " allowed)", name, value, (size_t)SIZE_MAX);
            *(size_t *)p = (size_t)v;
            break;
        }
        case K_SECONDS: {
            double v;
            errno = 0;
            /* digits and one '.', nothing else (no sign, exponent, inf, nan) */
            bool ok = *value != '\0' && strspn (value, "0123456789.") == strlen (value)
                      && strchr (value, '.') == strrchr (value, '.')
                      && strcmp (value, ".") != 0;
            if (!ok || ((v = strtod (value, &end)), errno) || *end || !isfinite (v))
                return refuse (error, "kvs: option %s=%.64s: expected a number"
                               " of seconds (0 or more, e.g. 2.5)", name, value);
            *(double *)p = v;
            break;
        }
    }
    return 0;
}
