/* json_fast_dump.h - encode jansson values as compact JSON text, faster
 * than json_dumps for the values canopy sends (internal to canopy's
 * libraries).
 *
 * Purpose: every request, response and event payload canopy packs, every
 * transaction a client sends to a fence and every batch of operations a
 * relay forwards is encoded with json_dumps (JSON_COMPACT).  jansson's
 * encoder writes about 25 MB/s (it formats every token through a
 * callback): encoding one 16-put transaction took 40 us, half of a KAP
 * rank's CPU time for a fence.  Writing the text directly costs a
 * fraction of that.
 *
 * Contract: json_fast_dumps (o, flags) returns text equal, byte for byte,
 * to what json_dumps (o, flags) returns, for every value and flags:
 * - a fast pass handles JSON_COMPACT (optionally with JSON_ENCODE_ANY):
 *   objects (in jansson's member order), arrays, strings of printable
 *   ASCII without '"' or '\\', integers, true, false and null, nested at
 *   most JSON_FAST_DUMP_MAX_DEPTH deep;
 * - on anything else (a string that needs an escape or holds a byte over
 *   0x7f, a real, deeper nesting, other flags, out of memory) it drops
 *   what it wrote and returns json_dumps (o, flags), so the answer is
 *   jansson's own, failures included.
 *
 * Returns a malloc'd NUL-terminated string (free() it), or NULL when
 * json_dumps would (o NULL, a scalar without JSON_ENCODE_ANY, invalid
 * UTF-8, out of memory).  Thread-safe (no state); o is only read.
 */
#ifndef CANOPY_JSON_FAST_DUMP_H
#define CANOPY_JSON_FAST_DUMP_H

#include <stddef.h>
#include <jansson.h>

enum { JSON_FAST_DUMP_MAX_DEPTH = 512 };

char *json_fast_dumps (const json_t *o, size_t flags);

#endif
