/* hashmap.c - string-keyed chained hash table (see hashmap.h).
 *
 * Design: an array of bucket heads, each a singly linked list of entries
 * holding the key copy and its full hash (so resizing never rehashes
 * strings and lookups compare hashes before keys).  The iterator keeps the
 * next entry, so deleting the current one is safe.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdint.h>
#include "hashmap.h"

struct entry {
    struct entry *next;
    uint64_t hash;
    void *val;
    char key[];
};

struct hashmap {
    struct entry **buckets;
    size_t nbuckets;        /* power of two */
    size_t count;
    hashmap_free_f destroy;
    size_t iter_bucket;
    struct entry *iter_next;
};

/* Eight bytes at p as one word, in the machine's byte order. */
static inline uint64_t word (const unsigned char *p)
{
    uint64_t w;
    memcpy (&w, p, sizeof (w));
    return w;
}

/* Multiply to 128 bits and fold the halves together: every bit of the
 * result depends on every bit of both factors, low bits included (the
 * buckets are chosen by the low bits).
 */
static inline uint64_t fold_mul (uint64_t a, uint64_t b)
{
    unsigned __int128 r = (unsigned __int128)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* Keys are mostly blobrefs and routes (40-80 bytes): taken 16 bytes per
 * step, one multiply each, rather than a byte at a time.  The two
 * constants are arbitrary odd numbers with mixed bits.
 */
#define HASH_K0 0x9e3779b97f4a7c15ULL
#define HASH_K1 0xd1b54a32d192ed03ULL

uint64_t hashmap_hash (const char *key, size_t len)
{
    const unsigned char *p = (const unsigned char *)key;
    uint64_t h = fold_mul (len ^ HASH_K0, HASH_K1);

    while (len >= 16) {
        h = fold_mul (word (p) ^ h ^ HASH_K0, word (p + 8) ^ HASH_K1);
        p += 16;
        len -= 16;
    }
    if (len >= 8) {
        h = fold_mul (word (p) ^ h ^ HASH_K0, HASH_K1);
        p += 8;
        len -= 8;
    }
    if (len > 0) {
        uint64_t t = 0;
        memcpy (&t, p, len);
        h = fold_mul (t ^ h ^ HASH_K1, HASH_K0);
    }
    return fold_mul (h ^ (h >> 29), HASH_K1);
}

static uint64_t hash_string (const char *s)
{
    return hashmap_hash (s, strlen (s));
}

hashmap_t *hashmap_create (hashmap_free_f val_destroy)
{
    hashmap_t *map;

    if (!(map = calloc (1, sizeof (*map))))
        return NULL;
    map->nbuckets = 16;
    if (!(map->buckets = calloc (map->nbuckets, sizeof (map->buckets[0])))) {
        free (map);
        errno = ENOMEM;
        return NULL;
    }
    map->destroy = val_destroy;
    return map;
}

void hashmap_clear (hashmap_t *map)
{
    if (!map)
        return;
    int saved_errno = errno;
    for (size_t i = 0; i < map->nbuckets; i++) {
        struct entry *e = map->buckets[i];
        while (e) {
            struct entry *next = e->next;
            if (map->destroy && e->val)
                map->destroy (e->val);
            free (e);
            e = next;
        }
        map->buckets[i] = NULL;
    }
    map->count = 0;
    map->iter_next = NULL;
    map->iter_bucket = map->nbuckets;
    errno = saved_errno;
}

void hashmap_destroy (hashmap_t *map)
{
    if (map) {
        int saved_errno = errno;
        hashmap_clear (map);
        free (map->buckets);
        free (map);
        errno = saved_errno;
    }
}

static struct entry **find (const hashmap_t *map, const char *key, uint64_t hash)
{
    struct entry **ep = &map->buckets[hash & (map->nbuckets - 1)];
    while (*ep) {
        if ((*ep)->hash == hash && !strcmp ((*ep)->key, key))
            return ep;
        ep = &(*ep)->next;
    }
    return ep;
}

static void grow (hashmap_t *map)
{
    size_t n = map->nbuckets * 2;
    struct entry **b;

    if (!(b = calloc (n, sizeof (b[0]))))
        return; /* keep working with longer chains */
    for (size_t i = 0; i < map->nbuckets; i++) {
        struct entry *e = map->buckets[i];
        while (e) {
            struct entry *next = e->next;
            size_t j = e->hash & (n - 1);
            e->next = b[j];
            b[j] = e;
            e = next;
        }
    }
    free (map->buckets);
    map->buckets = b;
    map->nbuckets = n;
    map->iter_next = NULL;
    map->iter_bucket = n;
}

int hashmap_insert (hashmap_t *map, const char *key, void *val)
{
    uint64_t hash;
    struct entry **ep;
    struct entry *e;
    size_t len;

    if (!map || !key) {
        errno = EINVAL;
        return -1;
    }
    hash = hash_string (key);
    ep = find (map, key, hash);
    if (*ep) {
        errno = EEXIST;
        return -1;
    }
    len = strlen (key);
    if (!(e = malloc (sizeof (*e) + len + 1))) {
        errno = ENOMEM;
        return -1;
    }
    memcpy (e->key, key, len + 1);
    e->hash = hash;
    e->val = val;
    e->next = NULL;
    *ep = e;
    if (++map->count > map->nbuckets)
        grow (map);
    return 0;
}

int hashmap_update (hashmap_t *map, const char *key, void *val)
{
    struct entry **ep;

    if (!map || !key) {
        errno = EINVAL;
        return -1;
    }
    ep = find (map, key, hash_string (key));
    if (*ep) {
        if (map->destroy && (*ep)->val && (*ep)->val != val)
            map->destroy ((*ep)->val);
        (*ep)->val = val;
        return 0;
    }
    return hashmap_insert (map, key, val);
}

void *hashmap_lookup (const hashmap_t *map, const char *key)
{
    struct entry **ep;

    if (!map || !key) {
        errno = EINVAL;
        return NULL;
    }
    ep = find (map, key, hash_string (key));
    if (!*ep) {
        errno = ENOENT;
        return NULL;
    }
    return (*ep)->val;
}

void *hashmap_take (hashmap_t *map, const char *key)
{
    struct entry **ep;
    struct entry *e;
    void *val;

    if (!map || !key) {
        errno = EINVAL;
        return NULL;
    }
    ep = find (map, key, hash_string (key));
    if (!(e = *ep)) {
        errno = ENOENT;
        return NULL;
    }
    if (map->iter_next == e)
        map->iter_next = e->next;
    *ep = e->next;
    val = e->val;
    free (e);
    map->count--;
    return val;
}

int hashmap_delete (hashmap_t *map, const char *key)
{
    struct entry **ep;
    void *val;

    if (!map || !key) {
        errno = EINVAL;
        return -1;
    }
    ep = find (map, key, hash_string (key));
    if (!*ep) {
        errno = ENOENT;
        return -1;
    }
    val = hashmap_take (map, key);
    if (map->destroy && val)
        map->destroy (val);
    return 0;
}

size_t hashmap_size (const hashmap_t *map)
{
    return map ? map->count : 0;
}

static const char *advance (hashmap_t *map, void **val)
{
    while (!map->iter_next) {
        if (++map->iter_bucket >= map->nbuckets)
            return NULL;
        map->iter_next = map->buckets[map->iter_bucket];
    }
    struct entry *e = map->iter_next;
    map->iter_next = e->next;
    if (val)
        *val = e->val;
    return e->key;
}

const char *hashmap_first (hashmap_t *map, void **val)
{
    if (!map)
        return NULL;
    map->iter_bucket = 0;
    map->iter_next = map->buckets[0];
    return advance (map, val);
}

const char *hashmap_next (hashmap_t *map, void **val)
{
    if (!map || map->iter_bucket >= map->nbuckets)
        return NULL;
    return advance (map, val);
}
