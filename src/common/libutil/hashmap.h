/* hashmap.h - hash table from NUL-terminated string keys to pointers.
 *
 * Keys are copied.  Values are owned by the map if a destructor was given
 * at creation: delete and destroy call it; take removes without calling it.
 * Chained buckets, doubling at load factor 1.  The hash (hashmap_hash)
 * takes 16 bytes per multiply.  It is not keyed (nor was the FNV-1a it
 * replaced): keys chosen to collide make long chains, which costs time,
 * never correctness.
 *
 * Iteration: hashmap_first/hashmap_next visit every entry once in no
 * particular order.  The entry just returned may be deleted during the
 * iteration; other changes invalidate it.
 *
 * Errors: insert fails with EEXIST (key present) or ENOMEM; delete and take
 * fail with ENOENT.  All functions accept a NULL map where sensible.
 */
#ifndef CANOPY_UTIL_HASHMAP_H
#define CANOPY_UTIL_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct hashmap hashmap_t;
typedef void (*hashmap_free_f)(void *val);

hashmap_t *hashmap_create (hashmap_free_f val_destroy);
void hashmap_destroy (hashmap_t *map);

int hashmap_insert (hashmap_t *map, const char *key, void *val);
/* Insert or replace (the old value is destroyed). */
int hashmap_update (hashmap_t *map, const char *key, void *val);
void *hashmap_lookup (const hashmap_t *map, const char *key);
int hashmap_delete (hashmap_t *map, const char *key);
void *hashmap_take (hashmap_t *map, const char *key);
size_t hashmap_size (const hashmap_t *map);
void hashmap_clear (hashmap_t *map);

/* The hash of the len bytes at key (which need no NUL), as the map
 * computes it for a key of that length.  Never fails.
 */
uint64_t hashmap_hash (const char *key, size_t len);

/* Returns the key (owned by the map) and sets *val, or NULL at the end. */
const char *hashmap_first (hashmap_t *map, void **val);
const char *hashmap_next (hashmap_t *map, void **val);

#endif
