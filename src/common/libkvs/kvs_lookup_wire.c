/* kvs_lookup_wire.c - see kvs_lookup_wire.h.
 *
 * Design notes:
 * - The fast decoder only runs on text json_check_simple_object accepted,
 *   so it can rely on what "simple" guarantees: valid JSON, one object,
 *   strings without escapes, numbers of at most 15 digits without
 *   exponents.  It walks the top level only, and declines (falls back to
 *   jansson) on anything it does not fully understand: an unknown member,
 *   a repeated one, a non-integer flags, a nested value.
 * - Declining is always safe: jansson is the reference, the fast path is
 *   only ever a shortcut to the answer jansson would give.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <limits.h>
#include <jansson.h>
#include "src/common/libcanopy/json_check.h"
#include "src/common/libcanopy/json_fast.h"
#include "src/common/libcanopy/json_fast_dump.h"
#include "kvs_lookup_wire.h"

static bool plain (const char *s)
{
    for (; *s; s++) {
        unsigned char c = *s;
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\')
            return false;
    }
    return true;
}

char *kvs_lookup_wire_encode (const char *key, int flags, size_t *lenp)
{
    char *s;

    if (!key) {
        errno = EINVAL;
        return NULL;
    }
    if (plain (key)) {
        size_t klen = strlen (key);
        size_t size = klen + 32;
        if (!(s = malloc (size))) {
            errno = ENOMEM;
            return NULL;
        }
        int n = snprintf (s, size, "{\"key\":\"%s\",\"flags\":%d}", key, flags);
        if (lenp)
            *lenp = n;
        return s;
    }
    json_t *o = json_pack ("{s:s s:i}", "key", key, "flags", flags);
    s = o ? json_fast_dumps (o, JSON_COMPACT) : NULL;
    json_decref (o);
    if (!s) {
        errno = o ? ENOMEM : EINVAL;    /* jansson refuses invalid UTF-8 */
        return NULL;
    }
    if (lenp)
        *lenp = strlen (s);
    return s;
}

static size_t skip_ws (const char *s, size_t i, size_t end)
{
    while (i < end && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* Returns 1 (decoded), 0 (declined: ask jansson), -1 (ENAMETOOLONG). */
static int decode_fast (const char *s, size_t len, char *keybuf, size_t keysize,
                        int *flagsp)
{
    size_t close, i;
    bool empty, have_key = false, have_flags = false;
    const char *key = NULL;
    size_t keylen = 0;
    long flags = 0;

    if (!json_check_simple_object (s, len, &close, &empty) || empty)
        return 0;
    i = skip_ws (s, 0, close) + 1;      /* past '{' */
    for (;;) {
        i = skip_ws (s, i, close);
        if (i >= close || s[i] != '"')
            return 0;
        const char *name = s + i + 1;
        const char *q = memchr (name, '"', close - i - 1);
        if (!q)
            return 0;
        size_t nlen = q - name;
        i = skip_ws (s, (q - s) + 1, close);
        if (i >= close || s[i] != ':')
            return 0;
        i = skip_ws (s, i + 1, close);
        if (nlen == 3 && !memcmp (name, "key", 3)) {
            if (have_key || i >= close || s[i] != '"')
                return 0;
            key = s + i + 1;
            if (!(q = memchr (key, '"', close - i - 1)))
                return 0;
            keylen = q - key;
            have_key = true;
            i = (q - s) + 1;
        }
        else if (nlen == 5 && !memcmp (name, "flags", 5)) {
            size_t start = i;
            bool neg = false;
            if (have_flags)
                return 0;
            if (i < close && s[i] == '-') {
                neg = true;
                i++;
            }
            flags = 0;
            while (i < close && s[i] >= '0' && s[i] <= '9')
                flags = flags * 10 + (s[i++] - '0');    /* <= 15 digits */
            if (i == start + neg || (i < close && s[i] == '.'))
                return 0;
            if (neg)
                flags = -flags;
            if (flags < INT_MIN || flags > INT_MAX)
                return 0;
            have_flags = true;
        }
        else
            return 0;
        i = skip_ws (s, i, close);
        if (i == close)
            break;
        if (s[i] != ',')
            return 0;
        i++;
    }
    if (!have_key)
        return 0;
    if (keylen + 1 > keysize)
        return -1;
    memcpy (keybuf, key, keylen);
    keybuf[keylen] = '\0';
    *flagsp = (int)flags;
    return 1;
}

int kvs_lookup_wire_decode (const char *s, size_t len,
                            char *keybuf, size_t keysize, int *flags)
{
    json_t *o;
    json_error_t jerr;
    const char *key;
    int f = 0;
    int rc;

    if (!s || !keybuf || !flags) {
        errno = EPROTO;
        return -1;
    }
    if ((rc = decode_fast (s, len, keybuf, keysize, flags)) != 0) {
        if (rc < 0) {
            errno = ENAMETOOLONG;
            return -1;
        }
        return 0;
    }
    if (!(o = json_fast_loadb (s, len, JSON_DECODE_ANY, &jerr)))
        goto proto;
    if (json_unpack (o, "{s:s s?i}", "key", &key, "flags", &f) < 0) {
        json_decref (o);
        goto proto;
    }
    if (strlen (key) + 1 > keysize) {
        json_decref (o);
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy (keybuf, key);
    *flags = f;
    json_decref (o);
    return 0;
proto:
    errno = EPROTO;
    return -1;
}
