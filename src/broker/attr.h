/* attr.h - the broker's attribute table (name -> string value).
 *
 * Immutable attributes (rank, size, ...) cannot be changed once the
 * broker is running; clients cache them.  Errors: ENOENT (no such
 * attribute), EPERM (immutable), EINVAL.
 */
#ifndef CANOPY_BROKER_ATTR_H
#define CANOPY_BROKER_ATTR_H

#include <stdbool.h>
#include <jansson.h>

typedef struct attr_table attr_table_t;

enum attr_flags {
    ATTR_IMMUTABLE = 1,
    ATTR_READONLY = 2,      /* only the broker may change it */
};

attr_table_t *attr_create (void);
void attr_destroy (attr_table_t *attrs);
/* Add or replace (replacing an immutable attribute fails with EPERM
 * unless 'force').
 */
int attr_set (attr_table_t *attrs, const char *name, const char *value,
              int flags, bool force);
int attr_set_uint (attr_table_t *attrs, const char *name, unsigned long value, int flags);
const char *attr_get (attr_table_t *attrs, const char *name, int *flags);
/* {name: value, ...} sorted by name (new reference). */
json_t *attr_list (attr_table_t *attrs);

#endif
