/* canopy-content.c - inspect and flush the content store.
 *
 *   flush        every blob stored so far is on disk in rank 0's backing
 *                store (answered by rank 0 once it is durable)
 *   stats        counters of one broker's cache (rank 0: also its
 *                write-back and the backing store), as JSON
 *   checkpoints  the KVS checkpoints rank 0 keeps, newest first
 *   dropcache    drop clean cached blobs on one broker
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <getopt.h>
#include "src/common/libutil/log.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy content [--rank=R] COMMAND\n"
"\n"
"  flush          return once every blob stored so far is on disk\n"
"                 (fails with the store's error, e.g. a full disk)\n"
"  stats          print the content service's counters (JSON); on rank 0\n"
"                 they include the write-back and the backing store\n"
"  checkpoints    list the KVS checkpoints kept on disk, newest first\n"
"  dropcache      drop the clean blobs cached by a broker\n"
"\n"
"  -r, --rank=R   the broker for stats and dropcache (default: the local one)\n"
"  -h, --help     show this help\n";

static void fail (canopy_future_t *f, const char *what)
{
    log_msg_exit ("%s: %s", what, f ? canopy_future_error_string (f) : strerror (errno));
}

static void print_json (json_t *o)
{
    char *s = json_dumps (o, JSON_INDENT (2) | JSON_SORT_KEYS);
    if (!s)
        log_msg_exit ("out of memory");
    printf ("%s\n", s);
    free (s);
}

static void cmd_stats (canopy_t *h, uint32_t rank)
{
    canopy_future_t *f, *g = NULL;
    json_t *o, *store;
    int r;

    if (!(f = canopy_rpc (h, "content.stats", "{}", rank, 0))
        || canopy_rpc_get_unpack (f, "o", &o) < 0)
        fail (f, "stats");
    if (json_unpack (o, "{s:i}", "rank", &r) == 0 && r == 0
        && json_is_object (json_object_get (o, "backing"))) {
        const char *name = "content-sqlite";
        (void)json_unpack (o, "{s:{s:s}}", "backing", "name", &name);
        char topic[96];
        snprintf (topic, sizeof (topic), "%s.stats", name);
        if ((g = canopy_rpc (h, topic, "{}", 0, 0))
            && canopy_rpc_get_unpack (g, "o", &store) == 0)
            json_object_set (o, "store", store);
    }
    print_json (o);
    canopy_future_destroy (g);
    canopy_future_destroy (f);
}

static void cmd_checkpoints (canopy_t *h)
{
    canopy_future_t *f;
    json_t *list, *o;
    size_t i;

    if (!(f = canopy_rpc (h, "content.checkpoint-get", "{}", 0, 0))
        || canopy_rpc_get_unpack (f, "{s:o}", "checkpoints", &list) < 0)
        fail (f, "checkpoints");
    json_array_foreach (list, i, o) {
        const char *rootref = "?";
        int version = -1;
        double ts = 0;
        char when[64] = "?";
        (void)json_unpack (o, "{s:s s:i s:F}", "rootref", &rootref, "version", &version,
                           "timestamp", &ts);
        time_t t = (time_t)ts;
        struct tm tm;
        if (localtime_r (&t, &tm))
            strftime (when, sizeof (when), "%Y-%m-%dT%H:%M:%S", &tm);
        printf ("%d %s %s\n", version, when, rootref);
    }
    canopy_future_destroy (f);
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint32_t rank = CANOPY_NODEID_ANY;
    canopy_future_t *f;
    int c;

    log_init ("canopy-content");
    while ((c = getopt_long (argc, argv, "+r:h", longopts, NULL)) != -1) {
        switch (c) {
            case 'r': rank = cmd_parse_rank (optarg); break;
            case 'h': cmd_usage (usage_text, 0);
            default: cmd_usage (usage_text, 1);
        }
    }
    if (optind != argc - 1)
        cmd_usage (usage_text, 1);
    const char *cmd = argv[optind];
    canopy_t *h = cmd_open ();
    if (!strcmp (cmd, "flush")) {
        /* ranks > 0 write through: what they acknowledged is on rank 0 */
        if (!(f = canopy_rpc (h, "content.flush", "{}", 0, 0))
            || canopy_future_get (f, NULL) < 0)
            fail (f, "flush");
        canopy_future_destroy (f);
    }
    else if (!strcmp (cmd, "stats"))
        cmd_stats (h, rank);
    else if (!strcmp (cmd, "checkpoints"))
        cmd_checkpoints (h);
    else if (!strcmp (cmd, "dropcache")) {
        if (!(f = canopy_rpc (h, "content.dropcache", "{}", rank, 0))
            || canopy_future_get (f, NULL) < 0)
            fail (f, "dropcache");
        canopy_future_destroy (f);
    }
    else
        cmd_usage (usage_text, 1);
    canopy_close (h);
    return 0;
}
