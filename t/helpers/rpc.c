/* rpc - send one request and print the JSON response.
 * Usage: rpc [--rank R] TOPIC [JSON]   (exit 1 and the error on failure)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <canopy/canopy.h>

int main (int argc, char *argv[])
{
    uint32_t rank = CANOPY_NODEID_ANY;
    int i = 1;
    canopy_error_t error;
    canopy_t *h;
    canopy_future_t *f;
    const char *s;

    if (argc > 2 && !strcmp (argv[1], "--rank")) {
        rank = strtoul (argv[2], NULL, 10);
        i = 3;
    }
    if (i >= argc) {
        fprintf (stderr, "Usage: rpc [--rank R] TOPIC [JSON]\n");
        return 1;
    }
    if (!(h = canopy_open (NULL, 0, &error))) {
        fprintf (stderr, "rpc: %s\n", error.text);
        return 1;
    }
    f = canopy_rpc (h, argv[i], i + 1 < argc ? argv[i + 1] : "{}", rank, 0);
    if (!f || canopy_rpc_get (f, &s) < 0) {
        const char *e = f ? canopy_future_error_string (f) : NULL;
        fprintf (stderr, "rpc: %s: %s\n", argv[i], e ? e : strerror (errno));
        canopy_future_destroy (f);
        canopy_close (h);
        return 1;
    }
    printf ("%s\n", s ? s : "");
    canopy_future_destroy (f);
    canopy_close (h);
    return 0;
}
