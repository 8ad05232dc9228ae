/* blobtab.h - a set of blobs keyed by blobref, in insertion order.
 *
 * Used for the blobs that travel with transactions: adding a blob whose
 * ref is already present is a no-op (this is where redundant values are
 * de-duplicated on their way up the tree).  Blob data is copied in, or
 * referenced from a buffer the table holds a reference to (blobtab_add_ref,
 * used when decoding a received message without copying).
 */
#ifndef CANOPY_KVS_BLOBTAB_H
#define CANOPY_KVS_BLOBTAB_H

#include <stddef.h>
#include <stdbool.h>

typedef struct blobtab blobtab_t;

blobtab_t *blobtab_create (void);
void blobtab_destroy (blobtab_t *bt);
/* Add data under ref (computed if ref is NULL; the ref is written to
 * 'out' if non-NULL).  Returns 1 if added, 0 if it was already there.
 */
int blobtab_add (blobtab_t *bt, const char *ref, const void *data, size_t len,
                 char *out, size_t outsize);
/* Merge every blob of 'from' into 'bt' (copies). */
int blobtab_merge (blobtab_t *bt, const blobtab_t *from);
bool blobtab_has (const blobtab_t *bt, const char *ref);
int blobtab_get (const blobtab_t *bt, const char *ref, const void **data, size_t *len);
int blobtab_count (const blobtab_t *bt);
size_t blobtab_bytes (const blobtab_t *bt);
/* Iterate in insertion order: index 0 .. count-1. */
int blobtab_at (const blobtab_t *bt, int index, const char **ref,
                const void **data, size_t *len);

#endif
