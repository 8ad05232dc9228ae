/* pmi_wire.h - lines of the PMI-1 "simple" wire protocol: parse and check.
 *
 * A line is a sequence of space-separated key=value tokens ended by '\n'.
 * The first token of a request or response is cmd=NAME (mcmd=NAME for the
 * multi-line spawn request).  Rules, chosen to match what MPICH 4.0.2 and
 * OpenMPI 4.1.4 send (see doc/internals.md, "9.2 The wire protocol as
 * implemented"):
 *   - a token whose key is "value" runs to the END of the line, spaces
 *     included (OpenMPI puts spaces in values); every other value runs to
 *     the next space and may be empty;
 *   - keys are non-empty, contain no '=' and no space;
 *   - runs of spaces between tokens are allowed, and one trailing "\n";
 *   - no control characters (bytes below 0x20, 0x7f) and no NUL anywhere;
 *   - no key appears twice; at most PMI_WIRE_FIELDS_MAX tokens.
 * Anything else is garbage: EPROTO.  A line longer than PMI_WIRE_LINE_MAX
 * bytes (newline included) is refused with EMSGSIZE.
 *
 * pmi_wire_parse() copies the line into the caller's struct pmi_wire_msg
 * and points the fields into that copy: no allocation, nothing to free.
 *
 * This file uses only libc: it is also compiled into libpmi.so.
 */
#ifndef CANOPY_PMI_WIRE_H
#define CANOPY_PMI_WIRE_H

#include <stddef.h>
#include <stdbool.h>

/* Longest line accepted, newline included.  OpenMPI's put lines reach
 * about 1.1 KiB with vallen_max=1024.
 */
#define PMI_WIRE_LINE_MAX 2048
#define PMI_WIRE_FIELDS_MAX 32

struct pmi_wire_field {
    const char *key;
    const char *val;
};

struct pmi_wire_msg {
    char buf[PMI_WIRE_LINE_MAX + 1];
    int nfields;
    struct pmi_wire_field fields[PMI_WIRE_FIELDS_MAX];
};

/* Parse 'len' bytes of 'line' (one trailing '\n' optional) into *msg.
 * Returns 0, or -1 with errno EPROTO (garbage), EMSGSIZE (too long) or
 * EINVAL (NULL argument).  On failure *msg holds no fields.
 */
int pmi_wire_parse (struct pmi_wire_msg *msg, const char *line, size_t len);

/* The value of 'key', or NULL if absent. */
const char *pmi_wire_get (const struct pmi_wire_msg *msg, const char *key);

/* The command name: the value of a first token "cmd" or "mcmd", else NULL. */
const char *pmi_wire_cmd (const struct pmi_wire_msg *msg);

/* The value of 'key' as a decimal int.  Returns 0, or -1 with errno
 * ENOENT (absent) or EPROTO (not an int).
 */
int pmi_wire_get_int (const struct pmi_wire_msg *msg, const char *key, int *val);

/* Whether s may be sent as a key (or any value other than "value="):
 * non-empty, no space, '=', or control character.
 */
bool pmi_wire_token_valid (const char *s);

/* Whether s may be sent as a "value=" (may be empty and contain spaces,
 * but no control character).
 */
bool pmi_wire_value_valid (const char *s);

/* Copy s into buf (of 'size' bytes) replacing what cannot travel in a
 * token (spaces, '=', control characters) with '_', truncating to fit.
 * For human-readable "msg=" fields.  Returns buf.
 */
char *pmi_wire_sanitize (char *buf, size_t size, const char *s);

#endif
