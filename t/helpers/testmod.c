/* testmod - a module for tests: answers testmod.echo with its payload
 * plus its arguments, testmod.info with its rank, and testmod.creds (open
 * to guests) with the userid and rolemask the request arrived with, i.e.
 * what the broker stamped (t/t0801-abuse-credentials.t).  testmod.hold
 * is never answered; testmod.quit is answered, then mod_main returns
 * (t/t0004-module.t: the broker answers what a module left unanswered).
 * testmod.forward {topic, hex} sends the bytes 'hex' encodes as a raw
 * request from this module to 'topic' on this broker ({topic, string}: a
 * string payload) and answers with
 * its outcome, {errnum, errstr} or {size}: how services that only
 * local modules may use (content.store-local) take malformed input.
 * Arguments: setup-delay=SECONDS (or the environment's
 * TESTMOD_SETUP_DELAY) makes mod_main sleep before it runs its reactor,
 * then create the file $TESTMOD_SETUP_MARK.RANK if that is set (a module slow to set up: its load is answered, and its broker
 * counted ready, only after that); fail=ERRNO makes mod_main return -1
 * with that errno at once.
 */
#include <string.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdio.h>
#include <stdint.h>
#include <canopy/canopy.h>

CANOPY_MOD_NAME ("testmod");

static int argcount;

static void echo_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    const char *s = NULL;
    (void)canopy_msg_get_string (msg, &s);
    canopy_respond (h, msg, s ? s : "{}");
}

static void info_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    uint32_t rank;
    if (canopy_get_rank (h, &rank) < 0) {
        canopy_respond_error (h, msg, errno, NULL);
        return;
    }
    canopy_respond_pack (h, msg, "{s:i s:i}", "rank", (int)rank, "argc", argcount);
}

static void creds_cb (canopy_t *h, canopy_msg_handler_t *mh,
                      const canopy_msg_t *msg, void *arg)
{
    uint32_t userid = 0, rolemask = 0;
    (void)canopy_msg_get_userid (msg, &userid);
    (void)canopy_msg_get_rolemask (msg, &rolemask);
    canopy_respond_pack (h, msg, "{s:I s:I}", "userid", (json_int_t)userid,
                         "rolemask", (json_int_t)rolemask);
}

static void hold_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    /* deliberately never answered */
}

static void quit_cb (canopy_t *h, canopy_msg_handler_t *mh,
                     const canopy_msg_t *msg, void *arg)
{
    canopy_respond (h, msg, NULL);
    canopy_reactor_stop (canopy_get_reactor (h));
}

static void forward_cb (canopy_future_t *f, void *arg)
{
    canopy_t *h = canopy_future_get_handle (f);
    canopy_msg_t *req = arg;
    const void *data;
    size_t size;

    if (canopy_rpc_get_raw (f, &data, &size) < 0) {
        const char *s = canopy_future_error_string (f);
        canopy_respond_pack (h, req, "{s:i s:s}", "errnum", errno,
                             "errstr", s ? s : "");
    }
    else
        canopy_respond_pack (h, req, "{s:I}", "size", (json_int_t)size);
    canopy_msg_decref (req);
    canopy_future_destroy (f);
}

static int unhex (const char *s, unsigned char **out, size_t *len)
{
    size_t n = strlen (s);
    unsigned char *b;
    if (n % 2 || !(b = malloc (n / 2 + 1)))
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        unsigned int v;
        if (sscanf (s + 2 * i, "%2x", &v) != 1) {
            free (b);
            return -1;
        }
        b[i] = (unsigned char)v;
    }
    *out = b;
    *len = n / 2;
    return 0;
}

static void forward_req_cb (canopy_t *h, canopy_msg_handler_t *mh,
                            const canopy_msg_t *msg, void *arg)
{
    const char *topic, *hex = NULL, *str = NULL;
    unsigned char *buf = NULL;
    size_t len = 0;
    canopy_future_t *f = NULL;

    if (canopy_msg_unpack (msg, "{s:s s?s s?s}", "topic", &topic, "hex", &hex,
                           "string", &str) < 0
        || (!hex == !str) || (hex && unhex (hex, &buf, &len) < 0)) {
        canopy_respond_error (h, msg, EPROTO,
                              "testmod.forward: {topic, hex} or {topic, string}");
        return;
    }
    if (!(f = str ? canopy_rpc (h, topic, str, CANOPY_NODEID_ANY, 0)
                  : canopy_rpc_raw (h, topic, buf, len, CANOPY_NODEID_ANY, 0))
        || canopy_future_then (f, -1, forward_cb, (void *)msg) < 0) {
        canopy_respond_error (h, msg, errno, "testmod.forward: cannot send");
        canopy_future_destroy (f);
    }
    else
        canopy_msg_incref ((canopy_msg_t *)msg);    /* forward_cb drops it */
    free (buf);
}

static const struct canopy_msg_handler_spec htab[] = {
    { CANOPY_MSGTYPE_REQUEST, "testmod.hold", hold_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "testmod.quit", quit_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "testmod.echo", echo_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "testmod.info", info_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "testmod.forward", forward_req_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "testmod.creds", creds_cb, CANOPY_ROLE_USER },
    CANOPY_MSGHANDLER_TABLE_END,
};

int mod_main (canopy_t *h, int argc, char **argv)
{
    canopy_msg_handler_t **handlers;
    int rc;

    argcount = argc;
    if (getenv ("TESTMOD_SETUP_DELAY")) {
        const char *mark = getenv ("TESTMOD_SETUP_MARK");
        uint32_t rank = 0;
        usleep ((useconds_t)(strtod (getenv ("TESTMOD_SETUP_DELAY"), NULL) * 1e6));
        if (mark && canopy_get_rank (h, &rank) == 0) {
            char path[4096];
            FILE *f;
            snprintf (path, sizeof (path), "%s.%u", mark, rank);
            if ((f = fopen (path, "w")))
                fclose (f);
        }
    }
    for (int i = 0; i < argc; i++) {
        if (!strncmp (argv[i], "setup-delay=", 12))
            usleep ((useconds_t)(strtod (argv[i] + 12, NULL) * 1e6));
        else if (!strncmp (argv[i], "fail=", 5)) {
            canopy_log (h, LOG_ERR, "testmod: failing to start as asked");
            errno = atoi (argv[i] + 5);
            return -1;
        }
    }
    if (canopy_msg_handler_addvec (h, htab, NULL, &handlers) < 0)
        return -1;
    canopy_log (h, LOG_INFO, "testmod started with %d arguments", argc);
    rc = canopy_reactor_run (canopy_get_reactor (h), 0);
    canopy_msg_handler_delvec (handlers);
    return rc;
}
