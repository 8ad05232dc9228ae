/* json_fast.c - see json_fast.h
 *
 * Design notes:
 * - Each parse_* function reads one production starting at jp->p and
 *   returns a new json_t with jp->p just past it, or NULL to decline.
 *   Declining is always safe: the caller then asks jansson, the
 *   reference, so this file may only ever be a shortcut to jansson's
 *   answer, never a second opinion.
 * - Strings: only bytes 0x20..0x7f other than '"' and '\\' are taken
 *   (all valid UTF-8, no escapes to undo), so json_stringn_nocheck and
 *   json_object_setn_new_nocheck are exact.
 * - Numbers follow the JSON grammar exactly; integers are read with
 *   strtoll and reals with strtod as jansson does, and an overflow or a
 *   real the C library stops short of (a locale whose radix is not '.')
 *   declines.
 * - Recursion is bounded by JSON_FAST_MAX_DEPTH, below jansson's own
 *   limit, so deeper text gets jansson's verdict.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include "json_fast.h"

struct jparse {
    const char *p;
    const char *end;
    int depth;
};

static json_t *parse_value (struct jparse *jp);

static void skip_ws (struct jparse *jp)
{
    while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\n'
                               || *jp->p == '\r' || *jp->p == '\t'))
        jp->p++;
}

/* At the opening quote: the string's bytes (*len of them, not
 * NUL-terminated) start at the returned pointer; jp->p ends past the
 * closing quote.  NULL declines.
 */
static const char *parse_chars (struct jparse *jp, size_t *len)
{
    const char *start = ++jp->p;

    for (; jp->p < jp->end; jp->p++) {
        unsigned char c = *jp->p;
        if (c == '"') {
            *len = jp->p - start;
            jp->p++;
            return start;
        }
        if (c < 0x20 || c > 0x7f || c == '\\')
            return NULL;
    }
    return NULL;
}

static bool is_digit (const struct jparse *jp)
{
    return jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9';
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static json_t *parse_number (struct jparse *jp)
{
    const char *start = jp->p;
    bool real = false;
    char buf[64];
    size_t n;
    char *endp;

    if (*jp->p == '-')
        jp->p++;
    if (!is_digit (jp))
        return NULL;
    if (*jp->p++ != '0') {
        while (is_digit (jp))
            jp->p++;
    }
    if (jp->p < jp->end && *jp->p == '.') {
        jp->p++;
        if (!is_digit (jp))
            return NULL;
        while (is_digit (jp))
            jp->p++;
        real = true;
    }
    if (jp->p < jp->end && (*jp->p == 'e' || *jp->p == 'E')) {
        jp->p++;
        if (jp->p < jp->end && (*jp->p == '+' || *jp->p == '-'))
            jp->p++;
        if (!is_digit (jp))
            return NULL;
        while (is_digit (jp))
            jp->p++;
        real = true;
    }
    n = jp->p - start;
    if (n >= sizeof (buf))
        return NULL;
    memcpy (buf, start, n);
    buf[n] = '\0';
    errno = 0;
    if (!real) {
        long long i = strtoll (buf, &endp, 10);
        if (errno == ERANGE || endp != buf + n)
            return NULL;
        return json_integer (i);
    }
    double d = strtod (buf, &endp);
    if (endp != buf + n || ((d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE))
        return NULL;
    return json_real (d);
}

/* At a container's opening character: step over it; true if the
 * closing character follows at once (an empty container).
 */
static bool open_container (struct jparse *jp, char close)
{
    jp->p++;
    skip_ws (jp);
    if (jp->p < jp->end && *jp->p == close) {
        jp->p++;
        return true;
    }
    return false;
}

/* After a member or element: 1 at the closing character (stepped over),
 * 0 at a comma (another one follows), -1 at anything else (decline).
 */
static int after_item (struct jparse *jp, char close)
{
    skip_ws (jp);
    if (jp->p >= jp->end)
        return -1;
    if (*jp->p == close) {
        jp->p++;
        return 1;
    }
    if (*jp->p != ',')
        return -1;
    jp->p++;
    skip_ws (jp);
    return 0;
}

static json_t *parse_object (struct jparse *jp)
{
    json_t *o = json_object ();
    int rc;

    if (!o)
        return NULL;
    if (open_container (jp, '}'))
        return o;
    do {
        const char *key;
        size_t klen;
        json_t *v;

        if (jp->p >= jp->end || *jp->p != '"'
            || !(key = parse_chars (jp, &klen)))
            goto decline;
        skip_ws (jp);
        if (jp->p >= jp->end || *jp->p != ':')
            goto decline;
        jp->p++;
        skip_ws (jp);
        if (!(v = parse_value (jp)))
            goto decline;
        if (json_object_setn_new_nocheck (o, key, klen, v) < 0)
            goto decline;   /* v was stolen */
    } while ((rc = after_item (jp, '}')) == 0);
    if (rc == 1)
        return o;
decline:
    json_decref (o);
    return NULL;
}

static json_t *parse_array (struct jparse *jp)
{
    json_t *a = json_array ();
    int rc;

    if (!a)
        return NULL;
    if (open_container (jp, ']'))
        return a;
    do {
        json_t *v;
        if (!(v = parse_value (jp)) || json_array_append_new (a, v) < 0)
            goto decline;
    } while ((rc = after_item (jp, ']')) == 0);
    if (rc == 1)
        return a;
decline:
    json_decref (a);
    return NULL;
}

static json_t *parse_literal (struct jparse *jp, const char *word, json_t *v)
{
    size_t n = strlen (word);

    if ((size_t)(jp->end - jp->p) < n || memcmp (jp->p, word, n) != 0)
        return NULL;
    jp->p += n;
    return v;
}

static json_t *parse_value (struct jparse *jp)
{
    json_t *v = NULL;
    const char *s;
    size_t len;

    if (jp->p >= jp->end)
        return NULL;
    switch (*jp->p) {
        case '{':
        case '[':
            if (++jp->depth > JSON_FAST_MAX_DEPTH)
                return NULL;
            v = *jp->p == '{' ? parse_object (jp) : parse_array (jp);
            jp->depth--;
            return v;
        case '"':
            if (!(s = parse_chars (jp, &len)))
                return NULL;
            return json_stringn_nocheck (s, len);
        case 't':
            return parse_literal (jp, "true", json_true ());
        case 'f':
            return parse_literal (jp, "false", json_false ());
        case 'n':
            return parse_literal (jp, "null", json_null ());
        default:
            if (*jp->p == '-' || (*jp->p >= '0' && *jp->p <= '9'))
                return parse_number (jp);
            return NULL;
    }
}

json_t *json_fast_loadb (const char *s, size_t len, size_t flags,
                         json_error_t *error)
{
    struct jparse jp = { .p = s, .end = s ? s + len : NULL, .depth = 0 };
    json_t *v = NULL;

    if (!s || (flags & ~(size_t)JSON_DECODE_ANY))
        goto fallback;
    skip_ws (&jp);
    if (jp.p >= jp.end)
        goto fallback;
    if (!(flags & JSON_DECODE_ANY) && *jp.p != '{' && *jp.p != '[')
        goto fallback;
    if (!(v = parse_value (&jp)))
        goto fallback;
    skip_ws (&jp);
    if (jp.p != jp.end)
        goto fallback;
    if (error) {
        memset (error, 0, sizeof (*error));
        error->line = error->column = -1;
        strcpy (error->source, "<buffer>");
    }
    return v;
fallback:
    json_decref (v);
    return json_loadb (s, len, flags, error);
}

/*
 * vi:tabstop=4 shiftwidth=4 expandtab
 */
