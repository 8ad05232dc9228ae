/* test/random_json.h - random jansson documents for the JSON codec tests
 * (test/json_fast.c, test/json_fast_dump.c).
 *
 * random_json (depth, odds) builds nested arrays and objects (keys k0..k7,
 * so some repeat), integers small and large, true, false, null, reals and
 * strings of printable ASCII.  'odds' sets how often the rarer things
 * appear, each as one chance in N: a real among numbers, an escape-needing
 * character ('"', '\\' or a newline) among string characters, and a
 * non-ASCII string among strings.  Deterministic for a given srand() seed.
 * Returns a new reference (NULL only if jansson runs out of memory).
 */
#ifndef CANOPY_TEST_RANDOM_JSON_H
#define CANOPY_TEST_RANDOM_JSON_H

#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>

struct random_json_odds {
    int real;       /* 1 in N numbers of kind 1 is a real (1: always) */
    int escape;     /* 1 in N string characters needs an escape (about) */
    int utf8;       /* 1 in N strings is non-ASCII */
};

static json_t *random_json (int depth, const struct random_json_odds *odds)
{
    int kind = rand () % (depth > 4 ? 6 : 8);
    char buf[32];
    switch (kind) {
        case 0: return json_integer ((json_int_t)rand () * (rand () % 2 ? 1 : -1)
                                     * (rand () % 3 ? 1 : 1000000007LL));
        case 1:
            if (rand () % odds->real == 0)
                return json_real ((double)rand () / (rand () + 1)
                                  * (rand () % 2 ? 1e-9 : 1e9));
            return json_integer (rand () % 7);
        case 2: {
            size_t n = rand () % 12;
            for (size_t i = 0; i < n; i++) {
                int r = rand () % (odds->escape * 3);
                buf[i] = r == 0 ? '"' : r == 1 ? '\\' : r == 2 ? '\n'
                       : (char)(' ' + rand () % 95);
            }
            buf[n] = '\0';
            return rand () % odds->utf8 ? json_string (buf) : json_string ("caf\xc3\xa9");
        }
        case 3: return rand () % 2 ? json_true () : json_false ();
        case 4: return json_null ();
        case 5: return json_integer (rand () % 100);
        case 6: {
            json_t *a = json_array ();
            int n = rand () % 6;
            for (int i = 0; i < n; i++)
                json_array_append_new (a, random_json (depth + 1, odds));
            return a;
        }
        default: {
            json_t *o = json_object ();
            int n = rand () % 6;
            for (int i = 0; i < n; i++) {
                snprintf (buf, sizeof (buf), "k%d", rand () % 8);
                json_object_set_new (o, buf, random_json (depth + 1, odds));
            }
            return o;
        }
    }
}

#endif
