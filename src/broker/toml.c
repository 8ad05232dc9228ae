/* toml.c - a small TOML reader (toml.h).
 *
 * Design notes:
 * - A hand-written recursive descent over the whole text held in memory;
 *   the position (line, column) is tracked as we go, so every error and
 *   every value knows where it is.
 * - Lines of values are kept in a hashmap keyed by their path; the
 *   document's tree is plain jansson, so callers validate it with
 *   json_unpack and the like.
 * - Input is untrusted: nothing here asserts on it, strings are checked
 *   for embedded NULs and invalid escapes, nesting depth is bounded.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdbool.h>
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include "src/common/libutil/hashmap.h"
#include "toml.h"

#define MAX_FILE_SIZE (16 * 1024 * 1024)
#define MAX_ARRAY_DEPTH 16
#define MAX_PATH 512

struct toml_doc {
    json_t *root;
    hashmap_t *lines;       /* path -> (void *)(intptr_t)line */
};

struct parser {
    const char *p;
    const char *end;
    int line;
    const char *line_start;
    struct toml_error *err;
    toml_doc_t *doc;
    json_t *table;          /* current table */
    char path[MAX_PATH];    /* its path ("" for the root) */
};

static int fail (struct parser *ps, const char *fmt, ...)
    __attribute__ ((format (printf, 2, 3)));
static int fail (struct parser *ps, const char *fmt, ...)
{
    va_list ap;
    if (ps->err) {
        ps->err->line = ps->line;
        ps->err->col = (int)(ps->p - ps->line_start) + 1;
        va_start (ap, fmt);
        vsnprintf (ps->err->text, sizeof (ps->err->text), fmt, ap);
        va_end (ap);
    }
    errno = EINVAL;
    return -1;
}

static bool at_end (struct parser *ps)
{
    return ps->p >= ps->end;
}

static int peek (struct parser *ps)
{
    return at_end (ps) ? -1 : (unsigned char)*ps->p;
}

static void advance (struct parser *ps)
{
    if (at_end (ps))
        return;
    if (*ps->p == '\n') {
        ps->line++;
        ps->line_start = ps->p + 1;
    }
    ps->p++;
}

static void skip_ws (struct parser *ps)
{
    while (peek (ps) == ' ' || peek (ps) == '\t')
        advance (ps);
}

static void skip_comment (struct parser *ps)
{
    if (peek (ps) == '#') {
        while (!at_end (ps) && peek (ps) != '\n')
            advance (ps);
    }
}

/* After a statement: spaces, an optional comment, then end of line. */
static int end_of_line (struct parser *ps)
{
    skip_ws (ps);
    skip_comment (ps);
    if (peek (ps) == '\r')
        advance (ps);
    if (at_end (ps))
        return 0;
    if (peek (ps) != '\n')
        return fail (ps, "unexpected '%c' after the value (one statement per line)",
                     peek (ps));
    advance (ps);
    return 0;
}

/* Whitespace, newlines and comments (inside arrays). */
static void skip_blank (struct parser *ps)
{
    for (;;) {
        skip_ws (ps);
        skip_comment (ps);
        if (peek (ps) == '\n' || peek (ps) == '\r')
            advance (ps);
        else
            break;
    }
}

static int note_line (struct parser *ps, const char *path, int line)
{
    if (hashmap_update (ps->doc->lines, path, (void *)(intptr_t)line) < 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

static bool bare_char (int c)
{
    return c >= 0 && (isalnum (c) || c == '_' || c == '-');
}

static int utf8_put (char *out, size_t *n, unsigned long cp)
{
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || cp == 0)
        return -1;
    if (cp < 0x80)
        out[(*n)++] = cp;
    else if (cp < 0x800) {
        out[(*n)++] = 0xC0 | (cp >> 6);
        out[(*n)++] = 0x80 | (cp & 0x3F);
    }
    else if (cp < 0x10000) {
        out[(*n)++] = 0xE0 | (cp >> 12);
        out[(*n)++] = 0x80 | ((cp >> 6) & 0x3F);
        out[(*n)++] = 0x80 | (cp & 0x3F);
    }
    else {
        out[(*n)++] = 0xF0 | (cp >> 18);
        out[(*n)++] = 0x80 | ((cp >> 12) & 0x3F);
        out[(*n)++] = 0x80 | ((cp >> 6) & 0x3F);
        out[(*n)++] = 0x80 | (cp & 0x3F);
    }
    return 0;
}

/* A quoted string ("basic" or 'literal') on one line; *out is malloc'd. */
static int parse_string (struct parser *ps, char **out)
{
    int quote = peek (ps);
    const char *start = ps->p;
    char *buf;
    size_t n = 0;

    if (ps->end - ps->p >= 3 && ps->p[1] == quote && ps->p[2] == quote)
        return fail (ps, "multi-line strings are not supported");
    advance (ps);
    /* worst case: every byte is copied, \u escapes shrink */
    if (!(buf = malloc (ps->end - start + 1))) {
        errno = ENOMEM;
        return -1;
    }
    for (;;) {
        int c = peek (ps);
        if (c < 0 || c == '\n' || c == '\r') {
            free (buf);
            return fail (ps, "the string is not closed on this line");
        }
        if (c == quote) {
            advance (ps);
            break;
        }
        if (c == 0 || (c < 0x20 && c != '\t') || c == 0x7f) {
            free (buf);
            return fail (ps, "control character in a string");
        }
        if (c == '\\' && quote == '"') {
            advance (ps);
            int e = peek (ps);
            unsigned long cp = 0;
            int digits = 0;
            switch (e) {
                case 'b': buf[n++] = '\b'; break;
                case 't': buf[n++] = '\t'; break;
                case 'n': buf[n++] = '\n'; break;
                case 'f': buf[n++] = '\f'; break;
                case 'r': buf[n++] = '\r'; break;
                case '"': buf[n++] = '"'; break;
                case '\\': buf[n++] = '\\'; break;
                case 'u': digits = 4; break;
                case 'U': digits = 8; break;
                default:
                    free (buf);
                    return fail (ps, "invalid escape '\\%c' in a string",
                                 e >= 0x20 && e < 0x7f ? e : '?');
            }
            advance (ps);
            for (int i = 0; i < digits; i++) {
                int h = peek (ps);
                if (h < 0 || !isxdigit (h)) {
                    free (buf);
                    return fail (ps, "\\%c needs %d hex digits", e, digits);
                }
                cp = cp * 16 + (isdigit (h) ? h - '0' : (tolower (h) - 'a' + 10));
                advance (ps);
            }
            if (digits && utf8_put (buf, &n, cp) < 0) {
                free (buf);
                return fail (ps, "invalid unicode escape");
            }
            continue;
        }
        buf[n++] = c;
        advance (ps);
    }
    buf[n] = '\0';
    *out = buf;
    return 0;
}

/* A key: bare or quoted.  Writes into key (size KEYMAX). */
#define KEYMAX 128
static int parse_key (struct parser *ps, char *key)
{
    if (peek (ps) == '"' || peek (ps) == '\'') {
        char *s;
        if (parse_string (ps, &s) < 0)
            return -1;
        if (!*s || strlen (s) >= KEYMAX) {
            free (s);
            return fail (ps, "a key must have 1 to %d characters", KEYMAX - 1);
        }
        strcpy (key, s);
        free (s);
    }
    else {
        size_t n = 0;
        while (bare_char (peek (ps))) {
            if (n + 1 >= KEYMAX)
                return fail (ps, "key too long");
            key[n++] = *ps->p;
            advance (ps);
        }
        key[n] = '\0';
        if (n == 0)
            return fail (ps, "expected a key (letters, digits, '_' or '-')");
    }
    skip_ws (ps);
    if (peek (ps) == '.')
        return fail (ps, "dotted keys are not supported");
    return 0;
}

static json_t *parse_number (struct parser *ps)
{
    char buf[64];
    size_t n = 0;
    bool is_float = false;

    while (!at_end (ps) && (isalnum (peek (ps)) || strchr ("+-._", peek (ps)))) {
        int c = peek (ps);
        if (n + 1 >= sizeof (buf)) {
            fail (ps, "number too long");
            return NULL;
        }
        if (c == '.' || c == 'e' || c == 'E')
            is_float = true;
        if (c != '_')
            buf[n++] = c;
        advance (ps);
    }
    buf[n] = '\0';
    char *end;
    errno = 0;
    if (n == 0) {
        fail (ps, "expected a value");
        return NULL;
    }
    if (is_float) {
        double v = strtod (buf, &end);
        if (errno || *end || !isfinite (v) || !isdigit ((unsigned char)buf[n - 1])) {
            fail (ps, "invalid number '%s'", buf);
            return NULL;
        }
        return json_real (v);
    }
    long long v = strtoll (buf, &end, 10);
    if (*end || errno) {
        if (strchr (buf, '-') && isdigit ((unsigned char)buf[0]))
            fail (ps, "dates are not supported ('%s')", buf);
        else
            fail (ps, errno == ERANGE ? "number out of range '%s'" : "invalid value '%s'",
                  buf);
        return NULL;
    }
    if ((buf[0] == '0' && n > 1) || ((buf[0] == '+' || buf[0] == '-') && buf[1] == '0'
                                     && n > 2)) {
        fail (ps, "leading zeros are not allowed ('%s')", buf);
        return NULL;
    }
    return json_integer (v);
}

static json_t *parse_value (struct parser *ps, const char *path, int depth);

static json_t *parse_array (struct parser *ps, const char *path, int depth)
{
    json_t *a;
    char elem[MAX_PATH];

    if (depth > MAX_ARRAY_DEPTH) {
        fail (ps, "arrays nested too deeply");
        return NULL;
    }
    advance (ps);   /* [ */
    if (!(a = json_array ())) {
        errno = ENOMEM;
        return NULL;
    }
    for (;;) {
        skip_blank (ps);
        if (peek (ps) == ']') {
            advance (ps);
            return a;
        }
        if (at_end (ps)) {
            fail (ps, "the array is not closed");
            goto error;
        }
        snprintf (elem, sizeof (elem), "%s[%zu]", path, json_array_size (a));
        if (note_line (ps, elem, ps->line) < 0)
            goto error;
        json_t *v = parse_value (ps, elem, depth + 1);
        if (!v || json_array_append_new (a, v) < 0)
            goto error;
        skip_blank (ps);
        if (peek (ps) == ',') {
            advance (ps);
            continue;
        }
        if (peek (ps) == ']') {
            advance (ps);
            return a;
        }
        fail (ps, at_end (ps) ? "the array is not closed"
                              : "expected ',' or ']' in the array");
        goto error;
    }
error:
    json_decref (a);
    return NULL;
}

static json_t *parse_value (struct parser *ps, const char *path, int depth)
{
    int c = peek (ps);
    char *s;

    if (c == '"' || c == '\'') {
        json_t *v;
        if (parse_string (ps, &s) < 0)
            return NULL;
        v = json_string (s);
        free (s);
        if (!v)
            fail (ps, "invalid UTF-8 in a string");
        return v;
    }
    if (c == '[')
        return parse_array (ps, path, depth);
    if (c == '{') {
        fail (ps, "inline tables are not supported");
        return NULL;
    }
    if (ps->end - ps->p >= 4 && !strncmp (ps->p, "true", 4) && !bare_char (ps->p[4])) {
        for (int i = 0; i < 4; i++)
            advance (ps);
        return json_true ();
    }
    if (ps->end - ps->p >= 5 && !strncmp (ps->p, "false", 5) && !bare_char (ps->p[5])) {
        for (int i = 0; i < 5; i++)
            advance (ps);
        return json_false ();
    }
    if (c >= 0 && (isdigit (c) || c == '+' || c == '-'))
        return parse_number (ps);
    fail (ps, c < 0 || c == '\n' ? "expected a value" : "invalid value (strings need quotes)");
    return NULL;
}

static int join_path (char *out, size_t size, const char *a, const char *b)
{
    int n = *a ? snprintf (out, size, "%s.%s", a, b) : snprintf (out, size, "%s", b);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

static int parse_keyval (struct parser *ps)
{
    char key[KEYMAX];
    char path[MAX_PATH];
    int line = ps->line;
    json_t *v;

    if (parse_key (ps, key) < 0)
        return -1;
    if (peek (ps) != '=')
        return fail (ps, "expected '=' after the key '%s'", key);
    advance (ps);
    skip_ws (ps);
    if (json_object_get (ps->table, key))
        return fail (ps, "'%s' is set twice", key);
    if (join_path (path, sizeof (path), ps->path, key) < 0)
        return fail (ps, "key path too long");
    if (!(v = parse_value (ps, path, 0)))
        return -1;
    if (json_object_set_new (ps->table, key, v) < 0) {
        errno = ENOMEM;
        return -1;
    }
    if (note_line (ps, path, line) < 0)
        return -1;
    return end_of_line (ps);
}

static int parse_header (struct parser *ps)
{
    char name[KEYMAX];
    bool array = false;
    json_t *root = ps->doc->root;
    json_t *t, *existing;

    advance (ps);   /* [ */
    if (peek (ps) == '[') {
        array = true;
        advance (ps);
    }
    skip_ws (ps);
    if (parse_key (ps, name) < 0)
        return -1;
    if (peek (ps) != ']' || (array && (ps->end - ps->p < 2 || ps->p[1] != ']')))
        return fail (ps, "expected '%s' to close the table name", array ? "]]" : "]");
    advance (ps);
    if (array)
        advance (ps);
    existing = json_object_get (root, name);
    if (!(t = json_object ())) {
        errno = ENOMEM;
        return -1;
    }
    if (array) {
        if (existing && !json_is_array (existing)) {
            json_decref (t);
            return fail (ps, "'%s' is already defined and is not an array of tables", name);
        }
        if (!existing) {
            if (!(existing = json_array ()) || json_object_set_new (root, name, existing) < 0) {
                json_decref (t);
                errno = ENOMEM;
                return -1;
            }
        }
        size_t idx = json_array_size (existing);
        if (json_array_append_new (existing, t) < 0) {
            errno = ENOMEM;
            return -1;
        }
        snprintf (ps->path, sizeof (ps->path), "%s[%zu]", name, idx);
    }
    else {
        if (existing) {
            json_decref (t);
            return fail (ps, "the table [%s] is defined twice", name);
        }
        if (json_object_set_new (root, name, t) < 0) {
            errno = ENOMEM;
            return -1;
        }
        snprintf (ps->path, sizeof (ps->path), "%s", name);
    }
    ps->table = t;
    if (note_line (ps, ps->path, ps->line) < 0)
        return -1;
    return end_of_line (ps);
}

void toml_destroy (toml_doc_t *doc)
{
    if (doc) {
        int saved_errno = errno;
        json_decref (doc->root);
        hashmap_destroy (doc->lines);
        free (doc);
        errno = saved_errno;
    }
}

toml_doc_t *toml_parse (const char *text, size_t len, struct toml_error *err)
{
    struct parser ps = { 0 };
    toml_doc_t *doc;

    if (err)
        memset (err, 0, sizeof (*err));
    if (!text) {
        errno = EINVAL;
        return NULL;
    }
    if (!(doc = calloc (1, sizeof (*doc)))
        || !(doc->root = json_object ())
        || !(doc->lines = hashmap_create (NULL))) {
        toml_destroy (doc);
        errno = ENOMEM;
        return NULL;
    }
    ps.p = ps.line_start = text;
    ps.end = text + len;
    ps.line = 1;
    ps.err = err;
    ps.doc = doc;
    ps.table = doc->root;
    if (memchr (text, '\0', len)) {
        const char *nul = memchr (text, '\0', len);
        for (const char *q = text; q < nul; q++) {
            if (*q == '\n') {
                ps.line++;
                ps.line_start = q + 1;
            }
        }
        ps.p = nul;
        fail (&ps, "NUL byte in the file");
        goto error;
    }
    /* a UTF-8 byte order mark is allowed */
    if (len >= 3 && !memcmp (text, "\xef\xbb\xbf", 3))
        ps.p += 3;
    while (!at_end (&ps)) {
        skip_ws (&ps);
        int c = peek (&ps);
        if (c == '#' || c == '\n' || c == '\r' || c < 0) {
            if (end_of_line (&ps) < 0)
                goto error;
            continue;
        }
        if (c == '[') {
            if (parse_header (&ps) < 0)
                goto error;
        }
        else if (parse_keyval (&ps) < 0)
            goto error;
    }
    return doc;
error:
    toml_destroy (doc);
    return NULL;
}

toml_doc_t *toml_parse_file (const char *path, struct toml_error *err)
{
    struct stat st;
    char *buf = NULL;
    ssize_t n;
    size_t total = 0;
    int fd;
    toml_doc_t *doc;

    if (err)
        memset (err, 0, sizeof (*err));
    if ((fd = open (path, O_RDONLY | O_CLOEXEC)) < 0)
        goto syserr;
    if (fstat (fd, &st) < 0)
        goto syserr_close;
    if (!S_ISREG (st.st_mode)) {
        errno = EINVAL;
        if (err)
            snprintf (err->text, sizeof (err->text), "not a regular file");
        close (fd);
        return NULL;
    }
    if (st.st_size > MAX_FILE_SIZE) {
        errno = EFBIG;
        if (err)
            snprintf (err->text, sizeof (err->text), "larger than %d bytes", MAX_FILE_SIZE);
        close (fd);
        return NULL;
    }
    if (!(buf = malloc (st.st_size + 1))) {
        errno = ENOMEM;
        goto syserr_close;
    }
    while ((n = read (fd, buf + total, st.st_size - total)) > 0)
        total += n;
    if (n < 0)
        goto syserr_close;
    close (fd);
    buf[total] = '\0';
    doc = toml_parse (buf, total, err);
    free (buf);
    return doc;
syserr_close:
    {
        int e = errno;
        close (fd);
        free (buf);
        errno = e;
    }
syserr:
    if (err)
        snprintf (err->text, sizeof (err->text), "%s", strerror (errno));
    return NULL;
}

json_t *toml_root (const toml_doc_t *doc)
{
    return doc ? doc->root : NULL;
}

int toml_line (const toml_doc_t *doc, const char *path)
{
    if (!doc || !path)
        return 0;
    return (int)(intptr_t)hashmap_lookup (doc->lines, path);
}
