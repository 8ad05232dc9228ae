/* rpc - send requests and print the responses.
 *
 * Usage: rpc [--rank R] [--raw] [--many] TOPIC [PAYLOAD...]
 *   Without options: one request with the JSON PAYLOAD (default {}), its
 *   JSON response printed on a line.
 *   --raw    the payload is sent as bytes and the response written as
 *            bytes, without a newline (binary answers such as
 *            content.load's); a PAYLOAD of "-" is read from stdin.
 *   --many   one request per PAYLOAD, all sent before any answer is
 *            awaited, the answers printed in order.
 * Exit 1 (and the error on stderr) if any request fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdbool.h>
#include <canopy/canopy.h>

static char *read_stdin (size_t *len)
{
    size_t cap = 4096, n = 0, got;
    char *buf = malloc (cap);

    while (buf && (got = fread (buf + n, 1, cap - n, stdin)) > 0) {
        n += got;
        if (n == cap) {
            char *p = realloc (buf, cap *= 2);
            if (!p) {
                free (buf);
                return NULL;
            }
            buf = p;
        }
    }
    *len = n;
    return buf;
}

int main (int argc, char *argv[])
{
    uint32_t rank = CANOPY_NODEID_ANY;
    bool raw = false, many = false;
    int i = 1, rc = 0;
    canopy_error_t error;
    canopy_t *h;

    for (; i < argc; i++) {
        if (!strcmp (argv[i], "--rank") && i + 1 < argc)
            rank = strtoul (argv[++i], NULL, 10);
        else if (!strcmp (argv[i], "--raw"))
            raw = true;
        else if (!strcmp (argv[i], "--many"))
            many = true;
        else
            break;
    }
    if (i >= argc) {
        fprintf (stderr, "Usage: rpc [--rank R] [--raw] [--many] TOPIC [PAYLOAD...]\n");
        return 1;
    }
    const char *topic = argv[i++];
    int n = i < argc ? (many ? argc - i : 1) : 1;
    canopy_future_t **f = calloc (n, sizeof (*f));
    if (!f || !(h = canopy_open (NULL, 0, &error))) {
        fprintf (stderr, "rpc: %s\n", f ? error.text : strerror (ENOMEM));
        return 1;
    }
    for (int j = 0; j < n; j++) {
        const char *payload = i + j < argc ? argv[i + j] : (raw ? "" : "{}");
        if (raw) {
            size_t len = strlen (payload);
            char *in = NULL;
            if (!strcmp (payload, "-") && !(payload = in = read_stdin (&len))) {
                fprintf (stderr, "rpc: cannot read stdin\n");
                return 1;
            }
            f[j] = canopy_rpc_raw (h, topic, payload, len, rank, 0);
            free (in);
        }
        else
            f[j] = canopy_rpc (h, topic, payload, rank, 0);
        if (!f[j]) {
            fprintf (stderr, "rpc: %s: %s\n", topic, strerror (errno));
            return 1;
        }
    }
    for (int j = 0; j < n; j++) {
        const void *data = NULL;
        const char *s = NULL;
        size_t len = 0;
        int e = raw ? canopy_rpc_get_raw (f[j], &data, &len)
                    : canopy_rpc_get (f[j], &s);
        if (e < 0) {
            const char *es = canopy_future_error_string (f[j]);
            fprintf (stderr, "rpc: %s: %s\n", topic, es ? es : strerror (errno));
            rc = 1;
        }
        else if (raw)
            fwrite (data, 1, len, stdout);
        else
            printf ("%s\n", s ? s : "");
        canopy_future_destroy (f[j]);
    }
    free (f);
    canopy_close (h);
    return rc;
}
