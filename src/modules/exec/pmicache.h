/* pmicache.h - the PMI values one broker has looked up for a job since
 * its last barrier, so that its tasks asking for the same key share one
 * KVS lookup.
 *
 * Under PMI-1 a put becomes visible only at the next barrier, so between
 * two barriers the answer for a key cannot change: the first get of a
 * key starts the lookup, gets of it meanwhile wait for that lookup, and
 * later ones are answered from memory.  An MPI start-up has every task
 * read every other task's business card: with 16 tasks on a broker that
 * is 16 gets per key, now one lookup.
 *
 * Results kept: values and ENOENT (a key absent in this epoch stays
 * absent until the barrier).  Other errors are delivered to the waiters
 * and forgotten, so the next get tries again.  pmicache_clear starts a new
 * epoch (call it when a barrier completes): older results are not used
 * again; a lookup still in flight then answers its waiters but is not
 * kept.
 */
#ifndef CANOPY_EXEC_PMICACHE_H
#define CANOPY_EXEC_PMICACHE_H

typedef struct pmicache pmicache_t;

enum {
    PMICACHE_HIT = 0,       /* *errnum and *value are the answer */
    PMICACHE_WAIT = 1,      /* a lookup is in flight: 'rank' waits for it */
    PMICACHE_MISS = 2,      /* 'rank' waits; the caller starts the lookup */
};

/* Deliver a result to one waiting rank (value NULL if errnum != 0). */
typedef void (*pmicache_deliver_f)(int rank, int errnum, const char *value, void *arg);

pmicache_t *pmicache_create (void);
void pmicache_destroy (pmicache_t *c);

/* Ask for 'key' on behalf of 'rank'.  Returns PMICACHE_HIT (with *errnum
 * and *value: the value is borrowed until the next call that changes the
 * cache), PMICACHE_WAIT, PMICACHE_MISS, or -1 with errno ENOMEM (nothing
 * was recorded).
 */
int pmicache_get (pmicache_t *c, const char *key, int rank, int *errnum,
                  const char **value);

/* The lookup of 'key' finished: deliver to every waiting rank (in the
 * order they asked), and keep the result if it is a value or ENOENT and
 * the epoch has not changed.  Returns the number of ranks delivered to,
 * or -1 with errno ENOENT (no lookup of that key was pending).
 */
int pmicache_fill (pmicache_t *c, const char *key, int errnum, const char *value,
                   pmicache_deliver_f cb, void *arg);

/* A new epoch: forget every result (lookups in flight stay pending). */
void pmicache_clear (pmicache_t *c);

/* Counters: lookups started (misses) and gets answered without one. */
void pmicache_stats (const pmicache_t *c, unsigned long *lookups, unsigned long *saved);

#endif
