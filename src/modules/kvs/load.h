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
/* Loads in flight. */
int load_table_count (struct load_table *lt);

#endif
