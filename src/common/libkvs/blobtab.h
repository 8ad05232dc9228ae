/* blobtab.h - a set of blobs keyed by blobref, in insertion order.
 *
 * Used for the blobs that travel with transactions: adding a blob whose
 * ref is already present is a no-op (this is where redundant values are
 * de-duplicated on their way up the tree).  The table owns a copy of every
 * blob's bytes: blobtab_add and blobtab_merge copy, so nothing added
 * depends on the caller's buffer afterwards (decoders of received
 * messages copy too).  The exceptions are blobtab_merge_borrow and
 * blobtab_borrow, for a table that lives shorter than what it borrows
 * from (the relay encoder's; a client request's, kvs_wire_scan.h).
 *
 * Errors: -1 with errno EINVAL (bad argument, or a malformed ref: see
 * blobref_validate), ENOENT (blobtab_get of a missing ref), ENOMEM.
 */
#ifndef CANOPY_KVS_BLOBTAB_H
#define CANOPY_KVS_BLOBTAB_H

#include <stddef.h>
#include <stdbool.h>

typedef struct blobtab blobtab_t;

blobtab_t *blobtab_create (void);
void blobtab_destroy (blobtab_t *bt);
/* Add a copy of data under ref (computed if ref is NULL; a given ref is
 * trusted, only its syntax is checked).  The ref is written to 'out' if
 * non-NULL (outsize >= BLOBREF_MAX).  Returns 1 if added, 0 if it was
 * already there (nothing changes), -1 on error (nothing changes).
 */
int blobtab_add (blobtab_t *bt, const char *ref, const void *data, size_t len,
                 char *out, size_t outsize);
/* Add data, a malloc'd buffer, under ref (syntax checked), taking it
 * over: returns 1 (added: the table owns data) or 0 (already there: data
 * is freed), or -1 (error: data stays the caller's, nothing changes).
 */
int blobtab_adopt (blobtab_t *bt, const char *ref, void *data, size_t len);
/* Merge every blob of 'from' into 'bt' (copies).  On error, the blobs
 * merged so far are removed again (bt is as before).
 */
int blobtab_merge (blobtab_t *bt, const blobtab_t *from);
/* Merge every blob of 'from' into 'bt' without copying: bt borrows the
 * bytes, so 'from' must not change or go before bt is destroyed (used by
 * the relay encoder, which lives only while a relay is built from the
 * fences' tables).  On error, bt is as before.
 */
int blobtab_merge_borrow (blobtab_t *bt, const blobtab_t *from);
/* Add data under ref (syntax checked) without copying it: the table
 * borrows the bytes, which must stay unchanged until it is destroyed
 * (kvs_wire_scan's table over a request it only lives as long as).
 * Returns 1 (added), 0 (already there) or -1, as blobtab_add.
 */
int blobtab_borrow (blobtab_t *bt, const char *ref, const void *data, size_t len);
/* Remove the blobs added last, keeping the first 'count' (a count taken
 * earlier with blobtab_count): undoes the additions since then.
 */
void blobtab_truncate (blobtab_t *bt, int count);
bool blobtab_has (const blobtab_t *bt, const char *ref);
/* Borrowed data of ref (valid until the table changes). */
int blobtab_get (const blobtab_t *bt, const char *ref, const void **data, size_t *len);
int blobtab_count (const blobtab_t *bt);
size_t blobtab_bytes (const blobtab_t *bt);
/* Iterate in insertion order: index 0 .. count-1. */
int blobtab_at (const blobtab_t *bt, int index, const char **ref,
                const void **data, size_t *len);

#endif
