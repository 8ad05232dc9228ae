/* treeobj_scan.h - find one entry in an encoded directory without
 * decoding the rest of it.
 *
 * A setroot event primes every broker's cache with the new small
 * directories, still encoded; a broker that then reads one key of a
 * directory bucket used to decode the whole bucket into jansson values
 * (a third of a KVS thread's CPU in KAP's get phase).  Scanning the text
 * for the one name and decoding only that entry's value costs a fraction
 * of that.  The cache decodes a directory fully once its scans have cost
 * about as much as a decode (objcache.c).
 *
 * Only the canonical encoding of a plain directory is understood
 * (treeobj_encode: {"data":{NAME:ENTRY,...},"type":"dir","ver":1}, no
 * white space) and only names without escapes; anything else is declined,
 * and the caller decodes the text the ordinary way, which also reports
 * any error.  The scan checks the grammar of everything it skips (strings,
 * numbers, literals, nesting), but not the tree object rules of the
 * entries it does not return: the caller decodes and validates the entry
 * it gets.
 */
#ifndef CANOPY_TREEOBJ_SCAN_H
#define CANOPY_TREEOBJ_SCAN_H

#include <stddef.h>

/* Look for 'name' in the encoded directory s[0..len-1].
 * Returns 1 with s[*off .. *off + *vlen - 1] the entry's encoded value (the
 * last one if the name appears twice, as a decoder would keep), 0 if the
 * directory has no such entry, or -1 with errno EINVAL (bad arguments) or
 * EPROTO (not a canonical plain directory this scan reads: decode it).
 */
int treeobj_dir_scan (const char *s, size_t len, const char *name,
                      size_t *off, size_t *vlen);

/* Call cb for every entry of the encoded directory s[0..len-1], in the
 * text's order: its name (nlen bytes at name, not NUL-terminated) and its
 * encoded value s[voff .. voff + vlen - 1].  The whole text is checked as
 * treeobj_dir_scan checks it, and the check ends after the last entry:
 * if it fails, entries already reported must be discarded.  Returns 0, or
 * -1 with errno EINVAL, EPROTO (declined, as treeobj_dir_scan) or what cb
 * set when it returned -1 (which stops the walk).
 */
typedef int (*treeobj_entry_f)(const char *name, size_t nlen, size_t voff,
                               size_t vlen, void *arg);
int treeobj_dir_walk (const char *s, size_t len, treeobj_entry_f cb, void *arg);

#endif
