/* kvs_shm_client.h - a handle's use of its broker's KVS read cache
 * (kvs_shm.h, kvs_shm_share.h): the plain value gets of the KVS client API
 * try the segment first and ask the KVS only when it misses.
 *
 * A handle attaches on its first get, if it is connected to a local
 * broker, reads from it (no kvs_set_rank), and CANOPY_KVS_SHM is not "0"
 * or "off".  It detaches when the module closes the segment (unloaded)
 * and attaches again at a later get.  An attempt that finds no segment
 * (no module listening, kvs.shm-size=0) is retried at most every few
 * seconds; one refused (a guest without read access) is not retried.
 *
 * Read-your-writes: the KVS publishes a root before it answers anything
 * in it, so a commit's or fence's answer means the segment has that
 * version; the handle still keeps the highest version it was answered
 * (kvs_shm_client_floor) and takes nothing older from the segment.
 *
 * The state is the handle's (aux "kvs::shm"), used from its thread only.
 */
#ifndef CANOPY_KVS_SHM_CLIENT_H
#define CANOPY_KVS_SHM_CLIENT_H

#include <stddef.h>
#include <canopy/canopy.h>

/* The value at key, from the segment: 1 with *data (malloc'd, a NUL
 * byte after the *len bytes), 0 if the caller must ask the KVS, -1 with
 * errno ENOMEM.
 */
int kvs_shm_client_get (canopy_t *h, const char *key, void **data, size_t *len);

/* The KVS answered h with 'version': nothing older is read from the
 * segment from now on.
 */
void kvs_shm_client_floor (canopy_t *h, int version);

/* A get went to the KVS (counted in kvs_read_stats). */
void kvs_shm_client_count_rpc (canopy_t *h);

#endif
