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

/* Step over [0-9]+; false if no digit is there. */
static bool digits (struct jparse *jp)
{
    const char *start = jp->p;

    while (jp->p < jp->end && *jp->p >= '0' && *jp->p <= '9')
        jp->p++;
    return jp->p > start;
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
    if (jp->p < jp->end && *jp->p == '0')
        jp->p++;                /* no leading zeros: "01" declines below */
    else if (!digits (jp))
        return NULL;
    if (jp->p < jp->end && *jp->p == '.') {
        jp->p++;
        if (!digits (jp))
            return NULL;
        real = true;
    }
    if (jp->p < jp->end && (*jp->p == 'e' || *jp->p == 'E')) {
        jp->p++;
        if (jp->p < jp->end && (*jp->p == '+' || *jp->p == '-'))
            jp->p++;
        if (!digits (jp))
            return NULL;
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

/* "key" : value, into object o.  Returns 0, or -1 to decline. */
static int add_member (struct jparse *jp, json_t *o)
{
    const char *key;
    size_t klen;
    json_t *v;

    if (jp->p >= jp->end || *jp->p != '"' || !(key = parse_chars (jp, &klen)))
        return -1;
    skip_ws (jp);
    if (jp->p >= jp->end || *jp->p != ':')
        return -1;
    jp->p++;
    skip_ws (jp);
    if (!(v = parse_value (jp)))
        return -1;
    return json_object_setn_new_nocheck (o, key, klen, v);  /* steals v */
}

/* value, appended to array a.  Returns 0, or -1 to decline. */
static int add_element (struct jparse *jp, json_t *a)
{
    json_t *v = parse_value (jp);

    return v ? json_array_append_new (a, v) : -1;          /* steals v */
}

/* At '{' or '[': the object or array, with jp->p past its end. */
static json_t *parse_container (struct jparse *jp)
{
    bool object = *jp->p == '{';
    char close = object ? '}' : ']';
    json_t *c = object ? json_object () : json_array ();
    int rc;

    if (!c)
        return NULL;
    jp->p++;
    skip_ws (jp);
    if (jp->p < jp->end && *jp->p == close) {
        jp->p++;
        return c;
    }
    do {
        if ((object ? add_member (jp, c) : add_element (jp, c)) < 0)
            goto decline;
    } while ((rc = after_item (jp, close)) == 0);
    if (rc == 1)
        return c;
decline:
    json_decref (c);
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
            v = parse_container (jp);
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
