/* load.h - faulting tree objects and value blobs in from the content
 * service (content.load), one load per object however many wait.
 *
 * kvs_load (declared in kvs_ctx.h) registers a waiter on the object cache
 * entry; the first waiter of an entry starts the load, and when the answer
 * arrives the object is decoded (a directory must be a dir or hdir),
 * cached, and every waiter called.  The table keeps the future of each
 * load in flight, keyed like the cache ("d:REF" or "r:REF").
 *
 * Contract of kvs_load: 0 means the callback will run exactly once, later
 * (never before kvs_load returns); -1 (errno set) means the load could not
 * be started and the callback will never run.  So a caller may fail a
 * lookup or a round from its own stack without being destroyed under it.
 *
 * Holding value loads: after a setroot event that announces a kvs.prime
 * event (the new values of a collective fence, sent separately so that
 * the fence's answers do not wait for them), a value a lookup misses may
 * be in that event, already on its way down the tree; the setroot lists
 * the first hex digits of the refs of those it brings.  While the table
 * is held, a load of a listed value that would start is recorded instead
 * (its waiters wait as for any load), and any other value loads at once;
 * load_table_release then completes those the event put in the cache and
 * starts real loads for the rest.  Directory loads are never held.
 *
 * Threads: the module's thread only.
 */
#ifndef CANOPY_KVS_LOAD_H
#define CANOPY_KVS_LOAD_H

#include "kvs_ctx.h"

struct load_table *load_table_create (struct kvs_ctx *ctx);
/* Drops the futures of loads in flight without calling their waiters
 * (call load_table_fail_all first to answer them).  Accepts NULL.
 */
void load_table_destroy (struct load_table *lt);
/* Fail every load in flight: each one's waiters are called with errnum
 * now (the module is unloading).  Loads started by those callbacks are
 * left alone.
 */
void load_table_fail_all (struct load_table *lt, int errnum);
/* Loads in flight (not counting held ones). */
int load_table_count (struct load_table *lt);

/* Hold value loads (see above): every one if 'list' is NULL, else only
 * those of refs whose digest starts with one of the prefixes in 'list'
 * (len characters: KVS_PRIME_PREFIX hex digits per ref, 1 to
 * KVS_PRIME_LIST_MAX refs: what the setroot listed); any other value
 * loads at once.  Holding again replaces the set.  Without memory for the
 * list, every value load is held.  Returns 0, or -1 with EINVAL (a
 * malformed list: nothing changes).
 */
int load_table_hold (struct load_table *lt, const char *list, size_t len);
bool load_table_held (struct load_table *lt);
/* Stop holding: every held load is completed now if its value is cached,
 * or started (a load that cannot be started fails its waiters with that
 * errno).  Waiters run from here.  Returns how many held loads found
 * their value cached.
 */
int load_table_release (struct load_table *lt);
/* Held loads (waiting for a release). */
int load_table_nheld (struct load_table *lt);

#endif
