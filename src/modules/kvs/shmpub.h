/* shmpub.h - the KVS module's side of the shared read cache (kvs_shm.h):
 * it owns the segment, hands it to local clients (kvs_shm_share.h), and
 * publishes into it what the module takes in.
 *
 * What is published, and when (kvs.c, load.c, apply.c call in):
 * - the root, first thing in kvs_root_update, before any answer or
 *   watch of that version goes out (read-your-writes, kvs_shm_client.h);
 * - the directories a setroot event primes and the values a kvs.prime
 *   event carries, as they arrive (before the root they belong to);
 * - every object loaded from the content service;
 * - on rank 0, the directories each applied transaction makes, and the
 *   value chunks a lookup reads.
 * Publishing copies the bytes; the module's own cache is not changed.
 * A failure to publish (an object too big for the segment) is counted
 * and is only a miss for the clients.
 *
 * Threads: the module's.
 */
#ifndef CANOPY_KVS_SHMPUB_H
#define CANOPY_KVS_SHMPUB_H

#include <stddef.h>
#include <stdbool.h>
#include <jansson.h>
#include <canopy/canopy.h>

struct shmpub;

/* A segment of 'size' bytes for the broker whose local socket is
 * 'local_path', and its socket.  It is handed to the instance owner's
 * clients, and with 'guests' to anyone's (kvs.guest-access=read or own:
 * guests may read the whole namespace anyway).  NULL with errno and a
 * sentence in error: EINVAL (size out of bounds), ENAMETOOLONG, or the
 * memfd's, socket's or reactor's errors.
 */
struct shmpub *shmpub_create (canopy_t *h, const char *local_path, size_t size,
                              bool guests, canopy_error_t *error);
/* Close the segment for its readers, stop listening, unmap.  Accepts
 * NULL; keeps errno.
 */
void shmpub_destroy (struct shmpub *p);

/* Publish blob ref (trusted).  p may be NULL (no segment): nothing. */
void shmpub_put (struct shmpub *p, const char *ref, const void *data, size_t len);
/* Whether ref is published. */
bool shmpub_has (struct shmpub *p, const char *ref);
void shmpub_root (struct shmpub *p, int version, const char *rootref);

/* Its counters for kvs.stats, or JSON null for p NULL (new reference). */
json_t *shmpub_stats (struct shmpub *p);

#endif
