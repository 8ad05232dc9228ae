/* modopt.h - a module's options, from broker attributes and its arguments.
 *
 * Every module with settings takes them two ways: a broker attribute
 * "PREFIX.NAME" (set for the whole instance with canopy start -S or the
 * configuration file) and a module argument "NAME=VALUE" (canopy module
 * load M NAME=VALUE), the argument winning.  modopt_apply walks both and
 * hands each NAME, VALUE to the module's own setter, which parses and
 * range-checks it.  Pure: the attribute lookup is a callback, so this
 * needs no broker (and is unit-tested without one).
 */
#ifndef CANOPY_MODOPT_H
#define CANOPY_MODOPT_H

#include <canopy/types.h>

typedef struct canopy_handle canopy_t;

/* Look up an attribute (canopy_attr_get has this shape); NULL if unset. */
typedef const char *(*modopt_attr_f)(canopy_t *h, const char *name);

/* Set option 'name' to 'value'.  Returns 0, or -1 with a sentence in
 * *error (which may be left empty: modopt then says "bad value").
 */
typedef int (*modopt_set_f)(void *arg, const char *name, const char *value,
                            canopy_error_t *error);

/* For each of 'names' (NULL-terminated), the attribute PREFIX.NAME if
 * 'attr' finds it; then each argv[i] of the form NAME=VALUE.  Stops at
 * the first failure.  Returns 0, or -1 with EINVAL and a sentence naming
 * the attribute or argument in *error.
 */
int modopt_apply (canopy_t *h, modopt_attr_f attr, const char *prefix,
                  const char *const *names, int argc, char **argv,
                  modopt_set_f set, void *arg, canopy_error_t *error);

#endif
