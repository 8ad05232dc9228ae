/* json_fast_dump.c - see json_fast_dump.h
 *
 * Design notes:
 * - One pass writes the text into a strbuf (libutil/strbuf.h).
 *   Each emit_* function returns 0, or -1 to decline; declining is always
 *   safe, because the caller then asks jansson, the reference, so this
 *   file may only ever be a shortcut to jansson's answer.
 * - What jansson writes with JSON_COMPACT, and so what this writes: ','
 *   and ':' with no spaces; object members in the object's own order
 *   (jansson keeps insertion order); integers in decimal
 *   (JSON_INTEGER_FORMAT); strings between quotes, the bytes unchanged
 *   when none needs an escape ('/' is only escaped on request).  Strings
 *   that need an escape, non-ASCII bytes (jansson checks their UTF-8) and
 *   reals (jansson's precision and exponent rules) decline.
 * - Recursion is bounded by JSON_FAST_DUMP_MAX_DEPTH.
 */
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <stdint.h>
#include "src/common/libutil/strbuf.h"
#include "json_fast_dump.h"

/* 1: a byte a string may hold as it is (printable ASCII, no '"' or '\\') */
static const unsigned char plain[256] = {
    ['\x20'] = 1, ['\x21'] = 1, ['\x23' ... '\x5b'] = 1, ['\x5d' ... '\x7f'] = 1,
};

static int emit_string (struct strbuf *jb, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;

    for (size_t i = 0; i < n; i++) {
        if (!plain[u[i]])
            return -1;
    }
    if (strbuf_reserve (jb, n + 2) < 0)
        return -1;
    char *p = jb->s + jb->len;
    *p++ = '"';
    memcpy (p, s, n);
    p[n] = '"';
    p[n + 1] = '\0';
    jb->len += n + 2;
    return 0;
}

static int emit_integer (struct strbuf *jb, json_int_t v)
{
    char tmp[24];
    char *p = tmp + sizeof (tmp);
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v
                                 : (unsigned long long)v;
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u > 0);
    if (v < 0)
        *--p = '-';
    return strbuf_put (jb, p, tmp + sizeof (tmp) - p);
}

static int emit_value (struct strbuf *jb, const json_t *o, int depth);

static int emit_object (struct strbuf *jb, const json_t *o, int depth)
{
    void *it = json_object_iter ((json_t *)o);
    bool first = true;

    if (strbuf_putc (jb, '{') < 0)
        return -1;
    for (; it; it = json_object_iter_next ((json_t *)o, it)) {
        const char *key = json_object_iter_key (it);
#if JANSSON_VERSION_HEX >= 0x020e00
        size_t keylen = json_object_iter_key_len (it);
#else
        size_t keylen = strlen (key);
#endif
        if ((!first && strbuf_putc (jb, ',') < 0)
            || emit_string (jb, key, keylen) < 0
            || strbuf_putc (jb, ':') < 0
            || emit_value (jb, json_object_iter_value (it), depth + 1) < 0)
            return -1;
        first = false;
    }
    return strbuf_putc (jb, '}');
}

static int emit_array (struct strbuf *jb, const json_t *o, int depth)
{
    size_t n = json_array_size (o);

    if (strbuf_putc (jb, '[') < 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if ((i > 0 && strbuf_putc (jb, ',') < 0)
            || emit_value (jb, json_array_get (o, i), depth + 1) < 0)
            return -1;
    }
    return strbuf_putc (jb, ']');
}

static int emit_value (struct strbuf *jb, const json_t *o, int depth)
{
    if (!o || depth > JSON_FAST_DUMP_MAX_DEPTH)
        return -1;
    switch (json_typeof (o)) {
        case JSON_OBJECT:
            return emit_object (jb, o, depth);
        case JSON_ARRAY:
            return emit_array (jb, o, depth);
        case JSON_STRING:
            return emit_string (jb, json_string_value (o), json_string_length (o));
        case JSON_INTEGER:
            return emit_integer (jb, json_integer_value (o));
        case JSON_TRUE:
            return strbuf_put (jb, "true", 4);
        case JSON_FALSE:
            return strbuf_put (jb, "false", 5);
        case JSON_NULL:
            return strbuf_put (jb, "null", 4);
        default:        /* JSON_REAL: jansson's own formatting */
            return -1;
    }
}

char *json_fast_dumps (const json_t *o, size_t flags)
{
    struct strbuf jb = { 0 };

    if ((flags != JSON_COMPACT && flags != (JSON_COMPACT | JSON_ENCODE_ANY))
        || !o || (!(flags & JSON_ENCODE_ANY) && !json_is_object (o)
                  && !json_is_array (o)))
        return json_dumps (o, flags);
    if (emit_value (&jb, o, 0) < 0) {
        free (jb.s);
        return json_dumps (o, flags);
    }
    return jb.s;
}
