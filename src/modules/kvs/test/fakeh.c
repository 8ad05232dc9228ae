/* fakeh.c - see fakeh.h.
 *
 * The connector's poll descriptor is the read end of a pipe nobody writes
 * to: it never wakes the reactor.  Instead 'pending' reports a non-empty
 * inbox, which makes the handle start its idle watcher and dispatch.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fnmatch.h>
#include <unistd.h>
#include <stdio.h>
#include <canopy/canopy.h>
#include "src/common/libutil/list.h"
#include "src/common/libcanopy/handle_private.h"
#include "fakeh.h"

struct qent {
    struct list_node node;
    canopy_msg_t *msg;
};

struct fakeh {
    struct list_node outbox;
    struct list_node inbox;
    int ninbox;
    int pipefd[2];
    char fail_glob[64];     /* which sends may fail ("" all) */
    int fail_skip;          /* sends to let through before failing */
    int fail_count;         /* sends to fail then */
    int fail_errnum;
    int failed;
};

static int q_push (struct list_node *q, canopy_msg_t *msg)
{
    struct qent *e = calloc (1, sizeof (*e));
    if (!e)
        return -1;
    e->msg = msg;
    list_add_tail (q, &e->node);
    return 0;
}

static canopy_msg_t *q_remove (struct qent *e)
{
    canopy_msg_t *msg = e->msg;
    list_del (&e->node);
    free (e);
    return msg;
}

static void q_clear (struct list_node *q)
{
    while (!list_empty (q))
        canopy_msg_decref (q_remove (list_entry (q->next, struct qent, node)));
}

static bool matches (const canopy_msg_t *msg, int typemask, const char *glob);

static int op_send (void *impl, const canopy_msg_t *msg, bool nonblock)
{
    struct fakeh *f = impl;
    canopy_msg_t *cpy;

    if (f->fail_count > 0 && matches (msg, ~0, f->fail_glob[0] ? f->fail_glob : NULL)) {
        if (f->fail_skip == 0) {
            f->fail_count--;
            f->failed++;
            errno = f->fail_errnum;
            return -1;
        }
        f->fail_skip--;
    }
    if (!(cpy = canopy_msg_copy (msg, true)))
        return -1;
    if (q_push (&f->outbox, cpy) < 0) {
        canopy_msg_decref (cpy);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

static canopy_msg_t *op_recv (void *impl, bool nonblock)
{
    struct fakeh *f = impl;
    if (list_empty (&f->inbox)) {
        errno = EAGAIN;
        return NULL;
    }
    f->ninbox--;
    return q_remove (list_entry (f->inbox.next, struct qent, node));
}

static int op_pollfd (void *impl)
{
    struct fakeh *f = impl;
    return f->pipefd[0];
}

static void *op_pollzsock (void *impl)
{
    return NULL;
}

static bool op_pending (void *impl)
{
    struct fakeh *f = impl;
    return !list_empty (&f->inbox);
}

static void op_close (void *impl)
{
    struct fakeh *f = impl;
    if (f) {
        q_clear (&f->outbox);
        q_clear (&f->inbox);
        close (f->pipefd[0]);
        close (f->pipefd[1]);
        free (f);
    }
}

static const struct connector_ops fake_ops = {
    .send = op_send,
    .recv = op_recv,
    .pollfd = op_pollfd,
    .pollzsock = op_pollzsock,
    .pending = op_pending,
    .close = op_close,
};

canopy_t *fakeh_create (struct fakeh **fp)
{
    struct fakeh *f = calloc (1, sizeof (*f));
    canopy_t *h;

    if (!f)
        return NULL;
    list_init (&f->outbox);
    list_init (&f->inbox);
    if (pipe (f->pipefd) < 0) {
        free (f);
        return NULL;
    }
    if (!(h = handle_create (&fake_ops, f, 0)))
        return NULL;
    if (!canopy_get_reactor (h)) {
        canopy_close (h);
        return NULL;
    }
    *fp = f;
    return h;
}

static bool matches (const canopy_msg_t *msg, int typemask, const char *glob)
{
    const char *topic = canopy_msg_get_topic (msg);
    if (!(canopy_msg_get_type (msg) & typemask))
        return false;
    return !glob || (topic && fnmatch (glob, topic, 0) == 0);
}

canopy_msg_t *fakeh_take (struct fakeh *f, int typemask, const char *glob)
{
    struct list_node *pos;
    list_for_each (pos, &f->outbox) {
        struct qent *e = list_entry (pos, struct qent, node);
        if (matches (e->msg, typemask, glob))
            return q_remove (e);
    }
    return NULL;
}

static struct qent *find_publication (struct fakeh *f, const char *topic, int nth)
{
    struct list_node *pos;
    size_t tlen = strlen (topic);
    list_for_each (pos, &f->outbox) {
        struct qent *e = list_entry (pos, struct qent, node);
        const void *data;
        size_t len;
        if (matches (e->msg, CANOPY_MSGTYPE_REQUEST, "event.pub")
            && canopy_msg_get_payload (e->msg, &data, &len) == 0
            && len > tlen && memcmp (data, topic, tlen + 1) == 0 && nth-- == 0)
            return e;
    }
    return NULL;
}

canopy_msg_t *fakeh_take_publication (struct fakeh *f, const char *topic)
{
    struct qent *e = find_publication (f, topic, 0);
    return e ? q_remove (e) : NULL;
}

const canopy_msg_t *fakeh_peek (struct fakeh *f, int typemask, const char *glob,
                                int nth)
{
    struct list_node *pos;
    list_for_each (pos, &f->outbox) {
        struct qent *e = list_entry (pos, struct qent, node);
        if (matches (e->msg, typemask, glob) && nth-- == 0)
            return e->msg;
    }
    return NULL;
}

const canopy_msg_t *fakeh_peek_publication (struct fakeh *f, const char *topic)
{
    struct qent *e = find_publication (f, topic, 0);
    return e ? e->msg : NULL;
}

canopy_msg_t *fakeh_take_response (struct fakeh *f, uint32_t matchtag)
{
    struct list_node *pos;
    list_for_each (pos, &f->outbox) {
        struct qent *e = list_entry (pos, struct qent, node);
        uint32_t tag;
        if (canopy_msg_get_type (e->msg) == CANOPY_MSGTYPE_RESPONSE
            && canopy_msg_get_matchtag (e->msg, &tag) == 0 && tag == matchtag)
            return q_remove (e);
    }
    return NULL;
}

int fakeh_count (struct fakeh *f, int typemask, const char *glob)
{
    struct list_node *pos;
    int n = 0;
    list_for_each (pos, &f->outbox) {
        struct qent *e = list_entry (pos, struct qent, node);
        if (matches (e->msg, typemask, glob))
            n++;
    }
    return n;
}

void fakeh_clear (struct fakeh *f)
{
    q_clear (&f->outbox);
}

void fakeh_inject (struct fakeh *f, const canopy_msg_t *msg)
{
    if (q_push (&f->inbox, canopy_msg_incref ((canopy_msg_t *)msg)) == 0)
        f->ninbox++;
}

void fakeh_respond (struct fakeh *f, const canopy_msg_t *req, int errnum,
                    const void *data, size_t len)
{
    canopy_msg_t *rsp = canopy_response_derive (req, errnum);
    if (!rsp)
        return;
    if (data)
        (void)canopy_msg_set_payload (rsp, data, len);
    fakeh_inject (f, rsp);
    canopy_msg_decref (rsp);
}

int fakeh_pending (struct fakeh *f)
{
    return f->ninbox;
}

void fakeh_fail_send (struct fakeh *f, const char *glob, int skip, int count,
                      int errnum)
{
    snprintf (f->fail_glob, sizeof (f->fail_glob), "%s", glob ? glob : "");
    f->fail_skip = skip < 0 ? 0 : skip;
    f->fail_count = count < 0 ? 0 : count;
    f->fail_errnum = errnum;
}

int fakeh_failed_sends (struct fakeh *f)
{
    return f->failed;
}

void fakeh_run (canopy_t *h, struct fakeh *f)
{
    canopy_reactor_t *r = canopy_get_reactor (h);
    int quiet = 0;
    for (int i = 0; i < 10000 && quiet < 2; i++) {
        (void)canopy_reactor_run (r, CANOPY_REACTOR_NOWAIT);
        quiet = list_empty (&f->inbox) ? quiet + 1 : 0;
    }
}

canopy_msg_t *fakeh_request (const char *topic, uint32_t matchtag,
                             const char *sender, const void *data, size_t len)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    if (!msg)
        return NULL;
    if (canopy_msg_set_topic (msg, topic) < 0
        || canopy_msg_set_matchtag (msg, matchtag) < 0
        || canopy_msg_route_enable (msg) < 0
        || (sender && canopy_msg_route_push (msg, sender) < 0)
        || (data && canopy_msg_set_payload (msg, data, len) < 0)) {
        canopy_msg_decref (msg);
        return NULL;
    }
    return msg;
}

canopy_msg_t *fakeh_request_json (const char *topic, uint32_t matchtag,
                                  const char *sender, const char *json)
{
    canopy_msg_t *msg = fakeh_request (topic, matchtag, sender, NULL, 0);
    if (msg && json && canopy_msg_set_string (msg, json) < 0) {
        canopy_msg_decref (msg);
        return NULL;
    }
    return msg;
}
