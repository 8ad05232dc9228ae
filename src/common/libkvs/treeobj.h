/* treeobj.h - KVS tree objects (JSON, {"ver":1,"type":T,"data":D}).
 *
 *   val      data: base64 string (the value's bytes, small values)
 *   valref   data: [blobref, ...] (the value is the concatenation)
 *   dir      data: {name: treeobj, ...}
 *   dirref   data: [blobref] (a dir stored as a blob)
 *   symlink  data: {"target": key}
 *   hdir     data: {"count": n, "level": L, "refs": [16 x blobref|null]}
 *            a hashed directory of n entries: an entry lives in slot
 *            (hash(name) >> 4L) & 15, whose blob is a "dir" (a bucket) or
 *            another "hdir" of level L+1 (a HAMT).  A dirref may refer to
 *            a dir or an hdir blob.
 *
 * While the KVS applies a transaction, hdir slots may also hold inline
 * dir/hdir objects (the working form); stored objects never do.
 *
 * Objects are jansson json_t; functions that return json_t give a new
 * reference unless documented as borrowed.  treeobj_validate checks the
 * shape of one object (and of the entries of a dir, one level deep).
 * treeobj_encode is canonical (sorted keys, compact), so equal objects
 * hash to equal blobrefs.
 */
#ifndef CANOPY_KVS_TREEOBJ_H
#define CANOPY_KVS_TREEOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

json_t *treeobj_create_val (const void *data, size_t len);
json_t *treeobj_create_valref (void);
json_t *treeobj_create_dir (void);
json_t *treeobj_create_dirref (const char *blobref);
json_t *treeobj_create_symlink (const char *target);
enum { TREEOBJ_HDIR_FANOUT = 16, TREEOBJ_HDIR_MAXLEVEL = 15 };
json_t *treeobj_create_hdir (int level);

int treeobj_validate (const json_t *obj);
const char *treeobj_type (const json_t *obj);
/* The kind of an object by its "type" member, TREEOBJ_NONE when it is not
 * a JSON object or its type is missing or unknown (no validation beyond
 * that).  The treeobj_is_* functions are treeobj_kind comparisons.
 */
typedef enum {
    TREEOBJ_NONE = 0,
    TREEOBJ_VAL,
    TREEOBJ_VALREF,
    TREEOBJ_DIR,
    TREEOBJ_DIRREF,
    TREEOBJ_SYMLINK,
    TREEOBJ_HDIR,
} treeobj_kind_t;
treeobj_kind_t treeobj_kind (const json_t *obj);
bool treeobj_is_val (const json_t *obj);
bool treeobj_is_valref (const json_t *obj);
bool treeobj_is_dir (const json_t *obj);
bool treeobj_is_dirref (const json_t *obj);
bool treeobj_is_symlink (const json_t *obj);
bool treeobj_is_hdir (const json_t *obj);
/* a dir or an hdir (not a dirref): one lookup */
bool treeobj_is_dirlike (const json_t *obj);
/* a directory in any form: a dir, an hdir or a dirref */
bool treeobj_is_directory (const json_t *obj);
/* borrowed */
json_t *treeobj_data (const json_t *obj);

/* val: decode the bytes (malloc'd, NUL-terminated, *len excludes the NUL) */
int treeobj_decode_val (const json_t *obj, void **data, size_t *len);
/* valref / dirref */
int treeobj_blobref_count (const json_t *obj);
const char *treeobj_blobref_at (const json_t *obj, int index);
int treeobj_append_blobref (json_t *obj, const char *blobref);
/* Replace the blobref at index of a valref (EINVAL: not a valref, no such
 * index, or a malformed ref; ENOMEM).
 */
int treeobj_set_blobref (json_t *obj, int index, const char *blobref);
/* dir (entries borrowed) */
int treeobj_dir_count (const json_t *dir);
json_t *treeobj_dir_get (const json_t *dir, const char *name);
int treeobj_dir_set (json_t *dir, const char *name, json_t *entry); /* steals entry */
int treeobj_dir_remove (json_t *dir, const char *name);
/* A new dir object sharing the entries (a shallow copy). */
json_t *treeobj_dir_copy (const json_t *dir);
/* symlink */
const char *treeobj_symlink_target (const json_t *obj);
/* hdir */
int treeobj_hdir_level (const json_t *obj);
int treeobj_hdir_count (const json_t *obj);
int treeobj_hdir_set_count (json_t *obj, int count);
int treeobj_hdir_bucket_of (const json_t *obj, const char *name);
/* The stored ref in slot i, or NULL (ENOENT if empty, EINVAL if inline). */
const char *treeobj_hdir_ref (const json_t *obj, int slot);
/* Any slot content (null, string or inline object), borrowed. */
json_t *treeobj_hdir_slot (const json_t *obj, int slot);
int treeobj_hdir_set_slot (json_t *obj, int slot, json_t *val);   /* steals */
/* A new hdir sharing the slots (a shallow copy). */
json_t *treeobj_hdir_copy (const json_t *obj);
/* A new hdir of 'level' holding a dir's entries (shared) in inline bucket
 * dirs, as treeobj_hdir_bucket_of places them; empty slots stay null.
 * NULL with EINVAL (not a dir, bad level) or ENOMEM.
 */
json_t *treeobj_hdir_from_dir (const json_t *dir, int level);
/* 64-bit name hash used to place entries (FNV-1a: never to change). */
uint64_t treeobj_name_hash (const char *name);

char *treeobj_encode (const json_t *obj, size_t *len);
/* treeobj_encode, giving up as soon as the text would be longer than
 * max bytes (0: no limit): NULL with errno E2BIG then, having written
 * at most max bytes.  Lets a caller that would throw a too long encoding
 * away skip most of it (apply.c: a directory over hdir-bytes becomes an
 * hdir).  Other errors as treeobj_encode: EINVAL, ENOMEM.
 */
char *treeobj_encode_max (const json_t *obj, size_t max, size_t *len);
json_t *treeobj_decode (const void *buf, size_t len);
/* Encode canonically and compute the blobref; returns the encoding. */
char *treeobj_encode_ref (const json_t *obj, size_t *len, char *ref, size_t refsize);

#endif
