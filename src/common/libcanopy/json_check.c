/* json_check.c - see json_check.h
 *
 * A recursive-descent recogniser over a bounded buffer: each scan_*
 * function takes the position of the first byte of its production and
 * returns the position just after it, or -1 if the text is not simple.
 * Depth is bounded, so recursion is too.  Nothing is allocated.
 */
#include <string.h>
#include <sys/types.h>
#include "json_check.h"

struct scan {
    const char *s;
    size_t len;
};

static ssize_t scan_value (const struct scan *sc, size_t i, int depth);

static size_t skip_ws (const struct scan *sc, size_t i)
{
    while (i < sc->len && (sc->s[i] == ' ' || sc->s[i] == '\t'
                           || sc->s[i] == '\n' || sc->s[i] == '\r'))
        i++;
    return i;
}

/* A string of printable ASCII without escapes: '"' [\x20-\x7e minus '"' '\\']* '"' */
static ssize_t scan_string (const struct scan *sc, size_t i)
{
    if (i >= sc->len || sc->s[i] != '"')
        return -1;
    for (i++; i < sc->len; i++) {
        unsigned char c = sc->s[i];
        if (c == '"')
            return i + 1;
        if (c < 0x20 || c > 0x7e || c == '\\')
            return -1;
    }
    return -1;
}

static size_t scan_digits (const struct scan *sc, size_t i)
{
    while (i < sc->len && sc->s[i] >= '0' && sc->s[i] <= '9')
        i++;
    return i;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)? with at most 15 digits in all: such numbers
 * neither overflow jansson's integers nor lose anything as doubles.
 * Exponents are "not simple".
 */
static ssize_t scan_number (const struct scan *sc, size_t i)
{
    size_t start, end;
    size_t ndigits;

    if (i < sc->len && sc->s[i] == '-')
        i++;
    start = i;
    end = scan_digits (sc, i);
    if (end == start || (sc->s[start] == '0' && end - start > 1))
        return -1;
    ndigits = end - start;
    i = end;
    if (i < sc->len && sc->s[i] == '.') {
        start = i + 1;
        end = scan_digits (sc, start);
        if (end == start)
            return -1;
        ndigits += end - start;
        i = end;
    }
    if (ndigits > 15)
        return -1;
    if (i < sc->len && (sc->s[i] == 'e' || sc->s[i] == 'E'))
        return -1;
    return i;
}

static ssize_t scan_literal (const struct scan *sc, size_t i, const char *word)
{
    size_t n = strlen (word);
    if (sc->len - i < n || memcmp (sc->s + i, word, n) != 0)
        return -1;
    return i + n;
}

/* '{' ws [ string ws ':' value ( ws ',' ws string ws ':' value )* ] ws '}' */
static ssize_t scan_object (const struct scan *sc, size_t i, int depth, bool *empty)
{
    ssize_t r;

    if (depth > JSON_CHECK_MAX_DEPTH || i >= sc->len || sc->s[i] != '{')
        return -1;
    i = skip_ws (sc, i + 1);
    if (i < sc->len && sc->s[i] == '}') {
        if (empty)
            *empty = true;
        return i + 1;
    }
    for (;;) {
        if ((r = scan_string (sc, i)) < 0)
            return -1;
        i = skip_ws (sc, r);
        if (i >= sc->len || sc->s[i] != ':')
            return -1;
        if ((r = scan_value (sc, skip_ws (sc, i + 1), depth)) < 0)
            return -1;
        i = skip_ws (sc, r);
        if (i >= sc->len)
            return -1;
        if (sc->s[i] == '}')
            break;
        if (sc->s[i] != ',')
            return -1;
        i = skip_ws (sc, i + 1);
    }
    if (empty)
        *empty = false;
    return i + 1;
}

/* '[' ws [ value ( ws ',' ws value )* ] ws ']' */
static ssize_t scan_array (const struct scan *sc, size_t i, int depth)
{
    ssize_t r;

    if (depth > JSON_CHECK_MAX_DEPTH || i >= sc->len || sc->s[i] != '[')
        return -1;
    i = skip_ws (sc, i + 1);
    if (i < sc->len && sc->s[i] == ']')
        return i + 1;
    for (;;) {
        if ((r = scan_value (sc, i, depth)) < 0)
            return -1;
        i = skip_ws (sc, r);
        if (i >= sc->len)
            return -1;
        if (sc->s[i] == ']')
            return i + 1;
        if (sc->s[i] != ',')
            return -1;
        i = skip_ws (sc, i + 1);
    }
}

static ssize_t scan_value (const struct scan *sc, size_t i, int depth)
{
    if (i >= sc->len)
        return -1;
    switch (sc->s[i]) {
        case '{':
            return scan_object (sc, i, depth + 1, NULL);
        case '[':
            return scan_array (sc, i, depth + 1);
        case '"':
            return scan_string (sc, i);
        case 't':
            return scan_literal (sc, i, "true");
        case 'f':
            return scan_literal (sc, i, "false");
        case 'n':
            return scan_literal (sc, i, "null");
        default:
            return scan_number (sc, i);
    }
}

bool json_check_simple_object (const char *s, size_t len, size_t *close, bool *empty)
{
    struct scan sc = { .s = s, .len = len };
    bool is_empty;
    ssize_t end;
    size_t i;

    if (!s)
        return false;
    i = skip_ws (&sc, 0);
    if ((end = scan_object (&sc, i, 1, &is_empty)) < 0)
        return false;
    if (skip_ws (&sc, end) != len)
        return false;       /* trailing garbage */
    if (close)
        *close = end - 1;
    if (empty)
        *empty = is_empty;
    return true;
}
