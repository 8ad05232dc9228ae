/* decimal.h - unsigned integers in decimal, without printf.
 *
 * For hot paths that build hash keys from numbers (a matchtag per RPC,
 * per request crossing a link), where snprintf's format parsing costs
 * more than the rest of the work.
 */
#ifndef CANOPY_DECIMAL_H
#define CANOPY_DECIMAL_H

#include <stddef.h>
#include <stdint.h>

enum { DECIMAL_U32_MAX = 11 };  /* "4294967295" and its NUL */

/* Write v's digits and a NUL to buf (at least DECIMAL_U32_MAX bytes).
 * Returns the number of digits.
 */
size_t decimal_u32 (char *buf, uint32_t v);

/* The number of digits decimal_u32 would write for v (1 to 10), for
 * callers that size a buffer before writing into it.
 */
size_t decimal_u32_len (uint32_t v);

#endif
