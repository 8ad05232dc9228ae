/* pmicache.c - see pmicache.h.
 *
 * Design notes:
 * - One hashmap from key to entry.  An entry is pending (waiters, no
 *   result yet) or ready (a value or ENOENT).  A pending entry keeps its
 *   epoch; pmicache_fill keeps the result only if the epoch is still the
 *   current one, so a lookup that straddles a barrier cannot leave an old
 *   answer behind.
 * - pmicache_clear only starts a new epoch (no iteration, no allocation,
 *   so it cannot fail): a ready entry of an older epoch is stale and is
 *   replaced by a new lookup when next asked for.  A pending entry keeps
 *   its waiters whatever the epoch (under PMI no get is in flight when a
 *   barrier completes, since every local task is in the barrier).
 * - Waiters are ranks in an array that grows by doubling.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdbool.h>
#include "src/common/libutil/hashmap.h"
#include "pmicache.h"

struct entry {
    bool ready;
    int errnum;
    char *value;
    unsigned long epoch;
    int *waiters;
    int nwaiters;
    int maxwaiters;
};

struct pmicache {
    hashmap_t *map;
    unsigned long epoch;
    unsigned long lookups;
    unsigned long saved;
};

static void entry_free (void *arg)
{
    struct entry *e = arg;
    if (e) {
        free (e->value);
        free (e->waiters);
        free (e);
    }
}

pmicache_t *pmicache_create (void)
{
    pmicache_t *c = calloc (1, sizeof (*c));
    if (!c) {
        errno = ENOMEM;
        return NULL;
    }
    if (!(c->map = hashmap_create (entry_free))) {
        free (c);
        errno = ENOMEM;
        return NULL;
    }
    return c;
}

void pmicache_destroy (pmicache_t *c)
{
    if (c) {
        int saved_errno = errno;
        hashmap_destroy (c->map);
        free (c);
        errno = saved_errno;
    }
}

static int add_waiter (struct entry *e, int rank)
{
    if (e->nwaiters == e->maxwaiters) {
        int n = e->maxwaiters ? e->maxwaiters * 2 : 4;
        int *w = realloc (e->waiters, n * sizeof (*w));
        if (!w) {
            errno = ENOMEM;
            return -1;
        }
        e->waiters = w;
        e->maxwaiters = n;
    }
    e->waiters[e->nwaiters++] = rank;
    return 0;
}

int pmicache_get (pmicache_t *c, const char *key, int rank, int *errnum,
                  const char **value)
{
    struct entry *e;

    if (!c || !key || !errnum || !value) {
        errno = EINVAL;
        return -1;
    }
    if ((e = hashmap_lookup (c->map, key)) && e->ready && e->epoch != c->epoch) {
        (void)hashmap_delete (c->map, key);     /* stale: ask again */
        e = NULL;
    }
    if (e) {
        if (e->ready) {
            c->saved++;
            *errnum = e->errnum;
            *value = e->value;
            return PMICACHE_HIT;
        }
        if (add_waiter (e, rank) < 0)
            return -1;
        c->saved++;
        return PMICACHE_WAIT;
    }
    if (!(e = calloc (1, sizeof (*e))))
        goto nomem;
    e->epoch = c->epoch;
    if (add_waiter (e, rank) < 0 || hashmap_insert (c->map, key, e) < 0) {
        entry_free (e);
        goto nomem;
    }
    c->lookups++;
    return PMICACHE_MISS;
nomem:
    errno = ENOMEM;
    return -1;
}

int pmicache_fill (pmicache_t *c, const char *key, int errnum, const char *value,
                   pmicache_deliver_f cb, void *arg)
{
    struct entry *e;
    int n;

    if (!c || !key || (!errnum && !value)) {
        errno = EINVAL;
        return -1;
    }
    if (!(e = hashmap_lookup (c->map, key)) || e->ready) {
        errno = ENOENT;
        return -1;
    }
    /* Detach the waiters first: a callback may ask for this key again. */
    int *waiters = e->waiters;
    n = e->nwaiters;
    e->waiters = NULL;
    e->nwaiters = e->maxwaiters = 0;
    bool keep = e->epoch == c->epoch && (errnum == 0 || errnum == ENOENT);
    if (keep && errnum == 0 && !(e->value = strdup (value)))
        keep = false;
    if (keep) {
        e->ready = true;
        e->errnum = errnum;
    }
    else
        (void)hashmap_delete (c->map, key);
    if (cb) {
        for (int i = 0; i < n; i++)
            cb (waiters[i], errnum, errnum ? NULL : value, arg);
    }
    free (waiters);
    return n;
}

void pmicache_clear (pmicache_t *c)
{
    if (c)
        c->epoch++;
}

void pmicache_stats (const pmicache_t *c, unsigned long *lookups, unsigned long *saved)
{
    if (lookups)
        *lookups = c ? c->lookups : 0;
    if (saved)
        *saved = c ? c->saved : 0;
}
