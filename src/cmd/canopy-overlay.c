/* canopy-overlay.c - the state of the tree: each broker reports its
 * children; we walk down from rank 0 and draw the tree.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include <unistd.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/monotime.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy overlay status [--wait=full] [--timeout=SEC] [--summary]\n"
"\n"
"Show every broker's state: full (its whole subtree is up), partial,\n"
"offline (never joined), gone (left), lost (stopped answering).\n"
"\n"
"  -w, --wait=full    poll until the whole tree is full\n"
"  -t, --timeout=SEC  give up waiting after SEC seconds (exit 1)\n"
"  -s, --summary      print one line: state, and ranks online/size\n"
"  -h, --help         show this help\n";

static json_t *status_of (canopy_t *h, uint32_t rank)
{
    canopy_future_t *f = canopy_rpc (h, "overlay.status", "{}", rank, 0);
    json_t *o = NULL;
    if (f && canopy_rpc_get_unpack (f, "o", &o) == 0)
        json_incref (o);
    canopy_future_destroy (f);
    return o;
}

static void draw (canopy_t *h, int rank, const char *state, int online, int size,
                  const char *prefix, bool last, bool root)
{
    printf ("%s%s%d: %s (%d/%d)\n", prefix, root ? "" : last ? "`- " : "|- ",
            rank, state, online, size);
    if (strcmp (state, "full") != 0 && strcmp (state, "partial") != 0)
        return;
    json_t *o = status_of (h, rank);
    json_t *children, *c;
    size_t i;
    if (!o || json_unpack (o, "{s:o}", "children", &children) < 0) {
        json_decref (o);
        return;
    }
    char sub[1024];
    snprintf (sub, sizeof (sub), "%s%s", prefix, root ? "" : last ? "   " : "|  ");
    json_array_foreach (children, i, c) {
        int crank, conline, csize;
        const char *cstate;
        if (json_unpack (c, "{s:i s:s s:i s:i}", "rank", &crank, "state", &cstate,
                         "online", &conline, "size", &csize) < 0)
            continue;
        const char *shown = cstate;
        if (!strcmp (cstate, "online"))
            shown = conline == csize ? "full" : "partial";
        draw (h, crank, shown, conline, csize, sub,
              i == json_array_size (children) - 1, false);
    }
    json_decref (o);
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "wait", required_argument, NULL, 'w' },
        { "timeout", required_argument, NULL, 't' },
        { "summary", no_argument, NULL, 's' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool wait_full = false, summary = false;
    double timeout = -1;
    int c;

    log_init ("canopy-overlay");
    if (argc >= 2 && (!strcmp (argv[1], "-h") || !strcmp (argv[1], "--help")))
        cmd_usage (usage_text, 0);
    if (argc < 2 || strcmp (argv[1], "status") != 0)
        cmd_usage (usage_text, 1);
    optind = 2;
    while ((c = getopt_long (argc, argv, "w:t:sh", longopts, NULL)) != -1) {
        switch (c) {
            case 'w':
                if (strcmp (optarg, "full") != 0)
                    log_msg_exit ("--wait only understands 'full'");
                wait_full = true;
                break;
            case 't':
                timeout = cmd_parse_double (optarg, "timeout");
                break;
            case 's':
                summary = true;
                break;
            case 'h':
                cmd_usage (usage_text, 0);
            default:
                cmd_usage (usage_text, 1);
        }
    }
    canopy_t *h = cmd_open ();
    double t0 = monotime ();
    json_t *o;
    const char *state;
    int online, size;
    for (;;) {
        if (!(o = status_of (h, 0)))
            log_msg_exit ("rank 0 did not answer overlay.status");
        if (json_unpack (o, "{s:s s:i s:i}", "state", &state, "online", &online,
                         "size", &size) < 0)
            log_msg_exit ("malformed overlay.status reply");
        if (!wait_full || !strcmp (state, "full"))
            break;
        if (timeout >= 0 && monotime () - t0 > timeout) {
            log_msg ("timed out: %d of %d brokers online", online, size);
            summary = true;
            break;
        }
        json_decref (o);
        usleep (100000);
    }
    if (summary)
        printf ("%s %d/%d\n", state, online, size);
    else
        draw (h, 0, state, online, size, "", true, true);
    int rc = wait_full && strcmp (state, "full") != 0 ? 1 : 0;
    json_decref (o);
    canopy_close (h);
    return rc;
}
