/* modopt.c - a module's options from attributes and arguments (modopt.h).
 *
 * The setter's own text (what the value should be, naming the option) is
 * kept, after where the value came from: "bad argument: ...", "bad
 * attribute kvs.NAME: ..."; without one, the name and value are given.
 */
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include "errprintf.h"
#include "modopt.h"

static int fail (canopy_error_t *error, const char *where, const char *name,
                  const char *value, const canopy_error_t *why)
{
    errno = EINVAL;
    if (why->text[0] && !strcmp (where, "argument"))
        return errprintf (error, "bad argument: %s", why->text);
    if (why->text[0])
        return errprintf (error, "bad %s %s: %s", where, name, why->text);
    return errprintf (error, "bad %s %s=%.100s", where, name, value);
}

int modopt_apply (canopy_t *h, modopt_attr_f attr, const char *prefix,
                  const char *const *names, int argc, char **argv,
                  modopt_set_f set, void *arg, canopy_error_t *error)
{
    canopy_error_t why;

    if (!set || !prefix || (argc > 0 && !argv)) {
        errno = EINVAL;
        return errprintf (error, "modopt: bad arguments");
    }
    for (int i = 0; attr && names && names[i]; i++) {
        char name[128];
        const char *v;
        snprintf (name, sizeof (name), "%s.%s", prefix, names[i]);
        if (!(v = attr (h, name)))
            continue;
        why.text[0] = '\0';
        if (set (arg, names[i], v, &why) < 0)
            return fail (error, "attribute", name, v, &why);
    }
    for (int i = 0; i < argc; i++) {
        const char *eq = argv[i] ? strchr (argv[i], '=') : NULL;
        char name[64];
        if (!eq || eq == argv[i] || (size_t)(eq - argv[i]) >= sizeof (name)) {
            errno = EINVAL;
            return errprintf (error, "bad argument %.100s: expected NAME=VALUE",
                              argv[i] ? argv[i] : "(null)");
        }
        memcpy (name, argv[i], eq - argv[i]);
        name[eq - argv[i]] = '\0';
        why.text[0] = '\0';
        if (set (arg, name, eq + 1, &why) < 0)
            return fail (error, "argument", name, eq + 1, &why);
    }
    return 0;
}
