/* testmod - a module for tests: answers testmod.echo with its payload
 * plus its arguments, testmod.info with its rank, and testmod.creds (open
 * to guests) with the userid and rolemask the request arrived with, i.e.
 * what the broker stamped (t/t0801-abuse-credentials.t).  testmod.hold
 * is never answered; testmod.quit is answered, then mod_main returns
 * (t/t0004-module.t: the broker answers what a module left unanswered).
 */
#include <string.h>
#include <errno.h>
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

static const struct canopy_msg_handler_spec htab[] = {
    { CANOPY_MSGTYPE_REQUEST, "testmod.hold", hold_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "testmod.quit", quit_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "testmod.echo", echo_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "testmod.info", info_cb, 0 },
    { CANOPY_MSGTYPE_REQUEST, "testmod.creds", creds_cb, CANOPY_ROLE_USER },
    CANOPY_MSGHANDLER_TABLE_END,
};

int mod_main (canopy_t *h, int argc, char **argv)
{
    canopy_msg_handler_t **handlers;
    int rc;

    argcount = argc;
    if (canopy_msg_handler_addvec (h, htab, NULL, &handlers) < 0)
        return -1;
    canopy_log (h, LOG_INFO, "testmod started with %d arguments", argc);
    rc = canopy_reactor_run (canopy_get_reactor (h), 0);
    canopy_msg_handler_delvec (handlers);
    return rc;
}
