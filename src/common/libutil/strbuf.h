/* strbuf.h - a growable text buffer for the hand-written encoders
 * (treeobj.c's canonical tree objects, json_fast_dump.c's compact JSON).
 *
 * Header only: the encoders call these once per token, so they are
 * inline.  The fields are public because an encoder may reserve room and
 * then write into s + len itself (it must then advance len and write the
 * NUL): s holds len bytes and, once anything was written, a NUL after
 * them; cap is what is allocated.  Start from struct strbuf b = { 0 };
 * the caller owns b.s and frees it with free().
 *
 * Each function returns 0, or -1 with errno ENOMEM and the buffer as it
 * was.  Capacity doubles (256 bytes first), so n puts cost O(total).
 *
 * limit, when not 0, is the longest text the buffer may hold: a put that
 * would pass it fails with E2BIG and writes nothing, so an encoder can
 * give up as soon as its output is too long (treeobj_encode_max) instead
 * of finishing it first.  An encoder writing into s + len itself checks
 * it with strbuf_over.
 */
#ifndef CANOPY_UTIL_STRBUF_H
#define CANOPY_UTIL_STRBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

struct strbuf {
    char *s;
    size_t len;
    size_t cap;
    size_t limit;       /* 0: none */
};

/* Whether len bytes of text would pass b's limit (errno E2BIG then). */
static inline int strbuf_over (const struct strbuf *b, size_t len)
{
    if (b->limit && len > b->limit) {
        errno = E2BIG;
        return 1;
    }
    return 0;
}

/* Room for n more bytes and the NUL after them. */
static inline int strbuf_reserve (struct strbuf *b, size_t n)
{
    if (n < b->cap - b->len)
        return 0;
    if (n > SIZE_MAX / 4 - b->len) {
        errno = ENOMEM;
        return -1;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len <= n)
        cap *= 2;
    char *p = realloc (b->s, cap);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    b->s = p;
    b->cap = cap;
    return 0;
}

static inline int strbuf_put (struct strbuf *b, const char *s, size_t n)
{
    if (strbuf_over (b, b->len + n) || strbuf_reserve (b, n) < 0)
        return -1;
    memcpy (b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
    return 0;
}

static inline int strbuf_putc (struct strbuf *b, char c)
{
    if (strbuf_over (b, b->len + 1) || strbuf_reserve (b, 1) < 0)
        return -1;
    b->s[b->len++] = c;
    b->s[b->len] = '\0';
    return 0;
}

static inline int strbuf_str (struct strbuf *b, const char *s)
{
    return strbuf_put (b, s, strlen (s));
}

/* Back to the first len bytes (len <= b->len): undoes the puts since
 * b->len was len (a writer's rollback after a failed put).
 */
static inline void strbuf_truncate (struct strbuf *b, size_t len)
{
    if (len < b->len) {
        b->len = len;
        b->s[len] = '\0';
    }
}

#endif
