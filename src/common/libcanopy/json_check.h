/* json_check.h - a fast, allocation-free syntax check for "simple" JSON
 * object texts (internal to libcanopy).
 *
 * Purpose: let a service that only needs to echo or extend a JSON object
 * (the ping responder, module.c) avoid a full parse and re-encode of the
 * payload, which costs about 200 instructions per byte in jansson.
 *
 * A text is "simple" when it is one JSON object (optionally surrounded by
 * whitespace) made only of printable ASCII and whitespace, with no
 * backslash anywhere (so no escapes), no number longer than 15 digits and
 * no exponent, and nesting no deeper than JSON_CHECK_MAX_DEPTH.  Every
 * simple text is valid JSON that jansson decodes to the object it reads
 * as; the converse does not hold: a valid but non-simple text is just
 * "not simple", and callers fall back to the full parser.  That one-sided
 * contract is what makes the check safe to use as a fast path.
 */
#ifndef CANOPY_JSON_CHECK_H
#define CANOPY_JSON_CHECK_H

#include <stdbool.h>
#include <stddef.h>

enum { JSON_CHECK_MAX_DEPTH = 64 };

/* True if s[0..len-1] is a simple JSON object.  On success *close is set
 * to the index of the object's closing '}' and *empty to whether the
 * object has no members.  Never reads beyond s[len-1].
 */
bool json_check_simple_object (const char *s, size_t len, size_t *close, bool *empty);

#endif
