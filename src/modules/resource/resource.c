/* resource.c - each broker's hardware, from hwloc, published in the KVS.
 *
 * At start the module commits {hostname, sockets, cores, pus, memory,
 * cpuset} under "resource.rank.<R>", so 'canopy resource list' (and job
 * launchers) can read every broker's summary from any broker.
 *   resource.get   this broker's summary (no KVS involved)
 * The commit is asynchronous (a continuation logs its failure): the
 * module serves resource.get and stops on request whatever the KVS does.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <canopy/canopy.h>
#include "src/common/libhw/hwinfo.h"

CANOPY_MOD_NAME ("resource");

struct resource_ctx {
    canopy_t *h;
    uint32_t rank;
    json_t *info;
    canopy_future_t *publish;   /* the commit of our summary */
    char key[64];
};

static void publish_cb (canopy_future_t *f, void *arg)
{
    struct resource_ctx *ctx = arg;
    if (kvs_commit_get (f, NULL) < 0) {
        const char *s = canopy_future_error_string (f);
        canopy_log (ctx->h, LOG_ERR, "cannot publish %s: %s", ctx->key,
                    s ? s : strerror (errno));
    }
}

static void get_cb (canopy_t *h, canopy_msg_handler_t *mh,
                    const canopy_msg_t *msg, void *arg)
{
    struct resource_ctx *ctx = arg;
    char *s = json_dumps (ctx->info, JSON_COMPACT);
    if (!s)
        canopy_respond_error (h, msg, ENOMEM, NULL);
    else
        canopy_respond (h, msg, s);
    free (s);
}

static const struct canopy_msg_handler_spec htab[] = {
    { CANOPY_MSGTYPE_REQUEST, "resource.get", get_cb, CANOPY_ROLE_USER },
    CANOPY_MSGHANDLER_TABLE_END,
};

static json_t *summary (uint32_t rank)
{
    struct hwinfo hw;
    char host[256] = "";
    (void)gethostname (host, sizeof (host) - 1);
    if (hwinfo_get (&hw) < 0)
        return json_pack ("{s:i s:s s:s}", "rank", (int)rank, "hostname", host,
                          "error", "hwloc could not read this machine");
    return json_pack ("{s:i s:s s:i s:i s:i s:I s:s}", "rank", (int)rank,
                      "hostname", host, "sockets", hw.sockets, "cores", hw.cores,
                      "pus", hw.pus, "memory", (json_int_t)hw.memory,
                      "cpuset", hw.cpuset);
}

int mod_main (canopy_t *h, int argc, char **argv)
{
    struct resource_ctx ctx = { .h = h };
    canopy_msg_handler_t **handlers = NULL;
    int rc = -1;

    if (canopy_get_rank (h, &ctx.rank) < 0 || !(ctx.info = summary (ctx.rank)))
        goto done;
    snprintf (ctx.key, sizeof (ctx.key), "resource.rank.%u", ctx.rank);
    if (kvs_put (h, ctx.key, ctx.info) < 0
        || !(ctx.publish = kvs_commit_async (h, 0))
        || canopy_future_then (ctx.publish, -1, publish_cb, &ctx) < 0) {
        canopy_log_error (h, "cannot publish %s", ctx.key);
        goto done;
    }
    if (canopy_msg_handler_addvec (h, htab, &ctx, &handlers) < 0)
        goto done;
    rc = canopy_reactor_run (canopy_get_reactor (h), 0);
done:
    canopy_msg_handler_delvec (handlers);
    canopy_future_destroy (ctx.publish);
    json_decref (ctx.info);
    return rc;
}
