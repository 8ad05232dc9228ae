/* decimal.c - see decimal.h.  Digits are produced least significant
 * first into a scratch array, then copied out in order.
 */
#include "decimal.h"

size_t decimal_u32_len (uint32_t v)
{
    size_t n = 1;
    while (v >= 10) {
        v /= 10;
        n++;
    }
    return n;
}

size_t decimal_u32 (char *buf, uint32_t v)
{
    char tmp[10];
    size_t n = 0;

    do {
        tmp[n++] = '0' + v % 10;
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
    return n;
}
