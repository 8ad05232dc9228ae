/* toml.h - a small TOML reader for configuration files, keeping the line
 * of every value so that errors can name it.
 *
 * The subset: comments; [table] and [[array of tables]] headers (one
 * level, no dotted names); key = value with bare or "quoted" keys;
 * values: "basic strings" (with \" \\ \b \t \n \f \r \uXXXX escapes),
 * 'literal strings', integers (decimal, with _ separators), floats,
 * true/false, and arrays of these (which may span lines, with comments
 * and a trailing comma).  Not supported (a clear error): multi-line
 * strings, inline tables, dotted keys, dates.  Duplicate keys and tables
 * are errors.
 *
 * The result is a jansson object.  toml_line() gives the line where the
 * value at a path was written: "key" (top level), "table.key",
 * "hosts[2].port", "list[0]"; a table path ("tbon", "hosts[2]") gives the
 * line of its header.  0 means unknown.
 *
 * Errors: NULL with errno (EINVAL for bad syntax, ENOMEM, or from open/
 * read), and err filled in: line and column (1-based; 0 if not about a
 * place) and a sentence.
 */
#ifndef CANOPY_BROKER_TOML_H
#define CANOPY_BROKER_TOML_H

#include <stddef.h>
#include <jansson.h>

typedef struct toml_doc toml_doc_t;

struct toml_error {
    int line;
    int col;
    char text[200];
};

toml_doc_t *toml_parse (const char *text, size_t len, struct toml_error *err);
toml_doc_t *toml_parse_file (const char *path, struct toml_error *err);
void toml_destroy (toml_doc_t *doc);

/* Borrowed reference, valid until toml_destroy. */
json_t *toml_root (const toml_doc_t *doc);
int toml_line (const toml_doc_t *doc, const char *path);

#endif
