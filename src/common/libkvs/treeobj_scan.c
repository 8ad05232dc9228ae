/* treeobj_scan.c - find one entry in an encoded directory (treeobj_scan.h).
 *
 * Design notes:
 * - One pass over the text, no allocation.  Names are compared as bytes;
 *   every value is skipped by a small recursive-descent grammar check
 *   (depth at most SCAN_MAX_DEPTH), so a text the scan accepts is JSON.
 *   Entries in the canonical forms of a value, valref or dirref are
 *   matched by their fixed parts first (skip_entry): 3x faster on a
 *   directory of small values; the grammar still decides anything else.
 * - What a full decode would reject or read differently is declined
 *   rather than guessed: escapes in names, any byte outside printable
 *   ASCII in a string (jansson would check its UTF-8), \u0000 and
 *   surrogate escapes, numbers with more than 18 digits before the point
 *   or 2 in the exponent (jansson refuses 64-bit integer and double
 *   overflow), deeper nesting, white space (not canonical), and any
 *   shape but {"data":{...},"type":"dir","ver":1}.
 * - Outputs are written only on success (no side effects on failure).
 */
#include <string.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include "treeobj_scan.h"

enum { SCAN_MAX_DEPTH = 64, SCAN_MAX_DIGITS = 18, SCAN_MAX_EXP_DIGITS = 2 };

struct scan {
    const char *p;
    const char *end;
};

static bool lit (struct scan *sc, const char *word, size_t n)
{
    if ((size_t)(sc->end - sc->p) < n || memcmp (sc->p, word, n) != 0)
        return false;
    sc->p += n;
    return true;
}

static bool is_hex (char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The bytes of w (8 bytes in memory order) the scan must look at: '"',
 * '\\', below 0x20, from 0x7f; each as its high bit in the result.  The
 * usual "has a zero byte" tests: a borrow or carry may also flag a byte
 * after a flagged one, never before, so the lowest flagged byte is a
 * real one, and a word with none gives 0.
 */
#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
static inline uint64_t stop_mask (uint64_t w)
{
    uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');
    return (((q - ONES) & ~q) | ((b - ONES) & ~b)
            | ((w - ONES * 0x20) & ~w)      /* below 0x20 */
            | w | (w + ONES)) & HIGHS;      /* 0x80 and up, 0x7f */
}

/* Advance over the plain bytes of a string to the first one the scan
 * must look at, 8 at a time (strings in a directory are mostly blobrefs
 * and base64: finding the last of 32 dirrefs took 2.3-2.5 us instead of
 * 4.2-4.4 byte by byte, of 32 small values 1.8-2.0 instead of 2.9-3.2).
 * The last few bytes are left to the byte loop.
 */
static inline void skip_plain (struct scan *sc)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t w, m;
    while (sc->end - sc->p >= 8) {
        memcpy (&w, sc->p, 8);
        if ((m = stop_mask (w))) {
            sc->p += __builtin_ctzll (m) >> 3;
            return;
        }
        sc->p += 8;
    }
#endif
}

/* At '"': skip the string. */
static bool skip_string (struct scan *sc)
{
    sc->p++;
    while (sc->p < sc->end) {
        skip_plain (sc);
        if (sc->p >= sc->end)
            break;
        unsigned char c = *sc->p;
        if (c == '"') {
            sc->p++;
            return true;
        }
        if (c < 0x20 || c >= 0x7f)
            return false;
        if (c == '\\') {
            if (++sc->p >= sc->end)
                return false;
            c = *sc->p;
            if (c == 'u') {
                if (sc->end - sc->p < 5 || !is_hex (sc->p[1]) || !is_hex (sc->p[2])
                    || !is_hex (sc->p[3]) || !is_hex (sc->p[4]))
                    return false;
                /* a \u escape may stand for a surrogate jansson checks,
                 * or for NUL, which jansson refuses by default */
                if (sc->p[1] == 'd' || sc->p[1] == 'D'
                    || memcmp (sc->p + 1, "0000", 4) == 0)
                    return false;
                sc->p += 4;
            }
            else if (!strchr ("\"\\/bfnrt", c) || c == '\0')
                return false;
        }
        sc->p++;
    }
    return false;
}

static int skip_digits (struct scan *sc)
{
    int n = 0;
    while (sc->p < sc->end && *sc->p >= '0' && *sc->p <= '9') {
        sc->p++;
        n++;
    }
    return n;
}

static bool skip_number (struct scan *sc)
{
    int n;

    if (*sc->p == '-')
        sc->p++;
    if (sc->p < sc->end && *sc->p == '0') {
        sc->p++;
        n = 1;
    }
    else if ((n = skip_digits (sc)) == 0)
        return false;
    if (sc->p < sc->end && *sc->p == '.') {
        sc->p++;
        if (skip_digits (sc) == 0)
            return false;
    }
    if (sc->p < sc->end && (*sc->p == 'e' || *sc->p == 'E')) {
        sc->p++;
        if (sc->p < sc->end && (*sc->p == '+' || *sc->p == '-'))
            sc->p++;
        int ne = skip_digits (sc);
        if (ne == 0 || ne > SCAN_MAX_EXP_DIGITS)
            return false;
    }
    /* at most 10^18 * 10^99: neither an integer nor a real that jansson
     * finds out of range */
    return n <= SCAN_MAX_DIGITS;
}

static bool skip_value (struct scan *sc, int depth);

/* At '{' or '[': skip the container. */
static bool skip_container (struct scan *sc, int depth)
{
    char close = *sc->p == '{' ? '}' : ']';
    bool object = close == '}';

    if (depth >= SCAN_MAX_DEPTH)
        return false;
    sc->p++;
    if (sc->p < sc->end && *sc->p == close) {
        sc->p++;
        return true;
    }
    for (;;) {
        if (object) {
            if (sc->p >= sc->end || *sc->p != '"' || !skip_string (sc)
                || !lit (sc, ":", 1))
                return false;
        }
        if (!skip_value (sc, depth + 1) || sc->p >= sc->end)
            return false;
        if (*sc->p == ',')
            sc->p++;
        else if (*sc->p == close) {
            sc->p++;
            return true;
        }
        else
            return false;
    }
}

static bool skip_value (struct scan *sc, int depth)
{
    if (sc->p >= sc->end)
        return false;
    switch (*sc->p) {
        case '"':
            return skip_string (sc);
        case '{':
        case '[':
            return skip_container (sc, depth);
        case 't':
            return lit (sc, "true", 4);
        case 'f':
            return lit (sc, "false", 5);
        case 'n':
            return lit (sc, "null", 4);
        default:
            if (*sc->p == '-' || (*sc->p >= '0' && *sc->p <= '9'))
                return skip_number (sc);
            return false;
    }
}

/* At an entry's value: skip it.  Most entries are in one of the
 * canonical forms {"data":STRING,"type":"val","ver":1} and
 * {"data":[STRING,...],"type":"valref"|"dirref","ver":1}: their fixed
 * parts are compared as a whole and only the data is checked piece by
 * piece, which halves the cost of a pass over a directory of small
 * values.  Anything else (or a form broken part way) is skipped again
 * from its start by the general grammar, which decides.
 */
static bool skip_entry (struct scan *sc)
{
    static const char pre[] = "{\"data\":";
    static const char val[] = ",\"type\":\"val\",\"ver\":1}";
    static const char valref[] = ",\"type\":\"valref\",\"ver\":1}";
    static const char dirref[] = ",\"type\":\"dirref\",\"ver\":1}";
    const char *start = sc->p;

    if (lit (sc, pre, sizeof (pre) - 1) && sc->p < sc->end) {
        if (*sc->p == '"') {
            if (skip_string (sc) && lit (sc, val, sizeof (val) - 1))
                return true;
        }
        else if (*sc->p == '[') {
            if (skip_container (sc, 2)
                && (lit (sc, valref, sizeof (valref) - 1)
                    || lit (sc, dirref, sizeof (dirref) - 1)))
                return true;
        }
    }
    sc->p = start;
    return skip_value (sc, 1);
}

int treeobj_dir_walk (const char *s, size_t len, treeobj_entry_f cb, void *arg)
{
    static const char head[] = "{\"data\":{";
    static const char tail[] = ",\"type\":\"dir\",\"ver\":1}";
    struct scan sc;

    if (!s || !cb) {
        errno = EINVAL;
        return -1;
    }
    sc.p = s;
    sc.end = s + len;
    if (!lit (&sc, head, sizeof (head) - 1))
        goto decline;
    if (sc.p < sc.end && *sc.p == '}')
        sc.p++;
    else {
        for (;;) {
            if (sc.p >= sc.end || *sc.p != '"')
                goto decline;
            const char *k = ++sc.p;
            skip_plain (&sc);
            while (sc.p < sc.end && *sc.p != '"') {
                unsigned char c = *sc.p;
                if (c == '\\' || c < 0x20 || c >= 0x7f)
                    goto decline;
                sc.p++;
            }
            if (sc.p >= sc.end)
                goto decline;
            size_t klen = sc.p - k;
            sc.p++;
            if (!lit (&sc, ":", 1))
                goto decline;
            const char *v = sc.p;
            if (!skip_entry (&sc))
                goto decline;
            if (cb (k, klen, v - s, sc.p - v, arg) < 0)
                return -1;
            if (sc.p < sc.end && *sc.p == ',')
                sc.p++;
            else if (sc.p < sc.end && *sc.p == '}') {
                sc.p++;
                break;
            }
            else
                goto decline;
        }
    }
    if (!lit (&sc, tail, sizeof (tail) - 1) || sc.p != sc.end)
        goto decline;
    return 0;
decline:
    errno = EPROTO;
    return -1;
}

struct find {
    const char *name;
    size_t nlen;
    bool found;
    size_t off, vlen;
};

static int find_cb (const char *name, size_t nlen, size_t voff, size_t vlen, void *arg)
{
    struct find *fd = arg;
    if (nlen == fd->nlen && memcmp (name, fd->name, nlen) == 0) {
        fd->found = true;       /* the last one wins, as in a decode */
        fd->off = voff;
        fd->vlen = vlen;
    }
    return 0;
}

int treeobj_dir_scan (const char *s, size_t len, const char *name,
                      size_t *off, size_t *vlen)
{
    struct find fd = { .name = name };

    if (!s || !name || !off || !vlen) {
        errno = EINVAL;
        return -1;
    }
    fd.nlen = strlen (name);
    if (treeobj_dir_walk (s, len, find_cb, &fd) < 0)
        return -1;
    if (!fd.found)
        return 0;
    *off = fd.off;
    *vlen = fd.vlen;
    return 1;
}
