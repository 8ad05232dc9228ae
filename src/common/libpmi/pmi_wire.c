/* pmi_wire.c - parse lines of the PMI-1 simple wire protocol (pmi_wire.h).
 *
 * Design notes: the line is first checked byte by byte (length, NUL,
 * control characters), then copied and split in place.  Splitting walks
 * tokens left to right; the moment it meets the key "value" it takes the
 * rest of the line as the value, so nothing after value= is ever treated
 * as a token.  Libc only.
 */
#include <string.h>
#include <errno.h>
#include <stdlib.h>
#include <limits.h>
#include "pmi_wire.h"

static bool is_ctl (unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

static int fail (struct pmi_wire_msg *msg, int errnum)
{
    msg->nfields = 0;
    errno = errnum;
    return -1;
}

int pmi_wire_parse (struct pmi_wire_msg *msg, const char *line, size_t len)
{
    char *p;

    if (!msg || !line) {
        errno = EINVAL;
        return -1;
    }
    msg->nfields = 0;
    if (len > PMI_WIRE_LINE_MAX)
        return fail (msg, EMSGSIZE);
    if (len > 0 && line[len - 1] == '\n')
        len--;
    for (size_t i = 0; i < len; i++) {
        if (is_ctl ((unsigned char)line[i]))
            return fail (msg, EPROTO);
    }
    memcpy (msg->buf, line, len);
    msg->buf[len] = '\0';

    p = msg->buf;
    for (;;) {
        char *key, *eq;

        while (*p == ' ')
            p++;
        if (*p == '\0')
            break;
        if (msg->nfields == PMI_WIRE_FIELDS_MAX)
            return fail (msg, EPROTO);
        key = p;
        while (*p && *p != ' ' && *p != '=')
            p++;
        if (*p != '=' || p == key)
            return fail (msg, EPROTO);
        eq = p;
        *eq = '\0';
        if (pmi_wire_get (msg, key))
            return fail (msg, EPROTO);          /* duplicate key */
        msg->fields[msg->nfields].key = key;
        msg->fields[msg->nfields].val = eq + 1;
        msg->nfields++;
        if (!strcmp (key, "value"))
            break;                              /* runs to end of line */
        p = eq + 1;
        while (*p && *p != ' ')
            p++;
        if (*p == ' ')
            *p++ = '\0';
    }
    if (msg->nfields == 0)
        return fail (msg, EPROTO);
    return 0;
}

const char *pmi_wire_get (const struct pmi_wire_msg *msg, const char *key)
{
    if (!msg || !key)
        return NULL;
    for (int i = 0; i < msg->nfields; i++) {
        if (!strcmp (msg->fields[i].key, key))
            return msg->fields[i].val;
    }
    return NULL;
}

const char *pmi_wire_cmd (const struct pmi_wire_msg *msg)
{
    if (!msg || msg->nfields < 1)
        return NULL;
    if (strcmp (msg->fields[0].key, "cmd") && strcmp (msg->fields[0].key, "mcmd"))
        return NULL;
    return msg->fields[0].val;
}

int pmi_wire_get_int (const struct pmi_wire_msg *msg, const char *key, int *val)
{
    const char *s = pmi_wire_get (msg, key);
    char *end;
    long v;

    if (!s) {
        errno = ENOENT;
        return -1;
    }
    errno = 0;
    v = strtol (s, &end, 10);
    if (errno || end == s || *end || v < INT_MIN || v > INT_MAX) {
        errno = EPROTO;
        return -1;
    }
    if (val)
        *val = (int)v;
    return 0;
}

bool pmi_wire_token_valid (const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++) {
        if (*s == ' ' || *s == '=' || is_ctl ((unsigned char)*s))
            return false;
    }
    return true;
}

bool pmi_wire_value_valid (const char *s)
{
    if (!s)
        return false;
    for (; *s; s++) {
        if (is_ctl ((unsigned char)*s))
            return false;
    }
    return true;
}

char *pmi_wire_sanitize (char *buf, size_t size, const char *s)
{
    size_t i = 0;

    if (!buf || size == 0)
        return buf;
    for (; s && s[i] && i < size - 1; i++) {
        char c = s[i];
        buf[i] = (c == ' ' || c == '=' || is_ctl ((unsigned char)c)) ? '_' : c;
    }
    buf[i] = '\0';
    return buf;
}
