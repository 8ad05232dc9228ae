/* treeobj_index.h - find entries of an encoded directory in constant time.
 *
 * A primed directory stays encoded in the KVS's object cache until a
 * lookup needs it (treeobj_scan.h): one lookup scans its text.  A
 * directory read again is indexed: one more pass records where each
 * entry's name and value lie, by a hash of the name, so every later
 * lookup costs a hash and one comparison instead of a pass over the text,
 * and the directory is never decoded for lookups (a decode costs 4-10
 * scans and builds a jansson object per entry).
 *
 * The index holds offsets only: it is used with the very bytes it was
 * built from, which the caller keeps.  Only what treeobj_dir_scan reads
 * is indexed (a canonical plain directory, names without escapes); any
 * other text is declined, to be decoded the ordinary way.
 */
#ifndef CANOPY_TREEOBJ_INDEX_H
#define CANOPY_TREEOBJ_INDEX_H

#include <stddef.h>

typedef struct treeobj_index treeobj_index_t;

/* Index the encoded directory s[0..len-1].  NULL with errno EINVAL (bad
 * arguments, or longer than 4 GiB), EPROTO (declined, as treeobj_dir_scan
 * declines) or ENOMEM.
 */
treeobj_index_t *treeobj_index_create (const char *s, size_t len);
void treeobj_index_destroy (treeobj_index_t *ix);

/* Look 'name' up in the directory s that ix indexes.  Returns 1 with
 * s[*off .. *off + *vlen - 1] the entry's encoded value (the last one if
 * the name appears twice, as a decoder keeps), 0 if there is no such
 * entry (outputs untouched), -1 with EINVAL on bad arguments.
 */
int treeobj_index_find (const treeobj_index_t *ix, const char *s, const char *name,
                        size_t *off, size_t *vlen);

/* Number of distinct names, and the bytes of memory the index holds. */
size_t treeobj_index_count (const treeobj_index_t *ix);
size_t treeobj_index_bytes (const treeobj_index_t *ix);

#endif
