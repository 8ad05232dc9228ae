/* json_fast.h - decode JSON text into jansson values, faster than
 * json_loadb for the text canopy sends (internal to canopy's libraries).
 *
 * Purpose: every request, response and event payload, every directory a
 * KVS module faults in and every directory a setroot event carries is
 * JSON.  jansson's decoder reads about 20 MB/s on this kind of text (a
 * directory of small values: 2.7 us per entry), and it was a quarter of
 * all broker CPU in a KAP fence.  Building the same json_t tree directly
 * costs a fraction of that.
 *
 * Contract: json_fast_loadb (s, len, flags, error) returns what
 * json_loadb (s, len, flags, error) returns, for every input:
 * - a fast recursive-descent pass handles the common case: objects,
 *   arrays, strings of ASCII without escapes, integers, reals, true,
 *   false, null and whitespace, nested at most JSON_FAST_MAX_DEPTH deep;
 * - on anything else (an escape, a byte outside printable ASCII in a
 *   string, a syntax error, an integer that overflows, a real that the
 *   C library does not read exactly as jansson would, deeper nesting,
 *   out of memory) it declines, drops what it built and calls json_loadb
 *   on the whole text, so the result and the error are jansson's.
 * Flags other than JSON_DECODE_ANY go straight to json_loadb.
 * Equal results: the same values, types and member order (duplicate
 * keys: the last value wins, at the first one's place, as in jansson).
 *
 * Returns a new reference, or NULL with 'error' (may be NULL) filled in
 * by jansson.  Thread-safe (no state).
 */
#ifndef CANOPY_JSON_FAST_H
#define CANOPY_JSON_FAST_H

#include <stddef.h>
#include <jansson.h>

enum { JSON_FAST_MAX_DEPTH = 512 };

json_t *json_fast_loadb (const char *s, size_t len, size_t flags,
                         json_error_t *error);

#endif
