/* rpcflood - send COUNT requests at once and count how they end.
 *
 * Usage: rpcflood [--pad=BYTES] [--timeout=SEC] TOPIC RANK COUNT
 * Sends COUNT requests TOPIC {"pad": "ppp..."} to RANK without waiting,
 * then waits for every answer (at most SEC seconds each, default 60) and
 * prints one line:  ok=N EAGAIN=N EHOSTUNREACH=N EMSGSIZE=N other=N timeout=N
 * Exit 0 unless it could not send or some answer timed out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <getopt.h>
#include <canopy/canopy.h>

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "pad", required_argument, NULL, 'p' },
        { "timeout", required_argument, NULL, 't' },
        { NULL, 0, NULL, 0 },
    };
    long pad = 0;
    double timeout = 60;
    int c;

    while ((c = getopt_long (argc, argv, "p:t:", longopts, NULL)) != -1) {
        if (c == 'p')
            pad = strtol (optarg, NULL, 10);
        else if (c == 't')
            timeout = strtod (optarg, NULL);
        else
            return 1;
    }
    if (argc - optind != 3) {
        fprintf (stderr, "Usage: rpcflood [--pad=BYTES] [--timeout=SEC] TOPIC RANK COUNT\n");
        return 1;
    }
    const char *topic = argv[optind];
    uint32_t rank = strtoul (argv[optind + 1], NULL, 10);
    long count = strtol (argv[optind + 2], NULL, 10);
    char *padding = calloc (1, pad + 1);
    canopy_future_t **fs = calloc (count, sizeof (*fs));
    canopy_t *h = canopy_open (NULL, 0, NULL);
    int ok = 0, eagain = 0, ehost = 0, emsgsize = 0, other = 0, timedout = 0;

    if (!padding || !fs || !h) {
        perror ("rpcflood");
        return 1;
    }
    memset (padding, 'p', pad);
    for (long i = 0; i < count; i++) {
        if (!(fs[i] = canopy_rpc_pack (h, topic, rank, 0, "{s:s}", "pad", padding))) {
            perror ("rpcflood: send");
            return 1;
        }
    }
    for (long i = 0; i < count; i++) {
        if (canopy_future_wait_for (fs[i], timeout) < 0) {
            timedout++;
            continue;
        }
        if (canopy_rpc_get (fs[i], NULL) == 0)
            ok++;
        else if (errno == EAGAIN)
            eagain++;
        else if (errno == EHOSTUNREACH)
            ehost++;
        else if (errno == EMSGSIZE)
            emsgsize++;
        else
            other++;
        canopy_future_destroy (fs[i]);
    }
    printf ("ok=%d EAGAIN=%d EHOSTUNREACH=%d EMSGSIZE=%d other=%d timeout=%d\n",
            ok, eagain, ehost, emsgsize, other, timedout);
    canopy_close (h);
    free (padding);
    free (fs);
    return timedout ? 1 : 0;
}
