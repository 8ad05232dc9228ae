/* overlay.c - tree links (overlay.h; doc/internals.md, "5.3 The overlay").
 *
 * Design notes:
 * - Sockets come from ovsock.c: ROUTER_MANDATORY (sending to a vanished
 *   child fails with EHOSTUNREACH, which is how a dead child is noticed
 *   within one keepalive period), ROUTER_HANDOVER (a restarted child
 *   takes over its identity), IMMEDIATE on the DEALER, size limits and
 *   high-water marks.  Every send is nonblocking: a full queue is an
 *   error for that message, never a stalled reactor.
 * - A child's messages are accepted only while it is online (after its
 *   HELLO); anything else from it gets DISCONNECT, which makes it say
 *   HELLO again.  A HELLO carries the child's session: the number of
 *   times it has lost its parent.  Another HELLO from an online child
 *   with the same uuid and session is a retry that crossed our WELCOME
 *   (a child says hello again every 0.1 s and more until welcomed) and is
 *   ignored; with a new session the child lost us for a while and its
 *   answers to what we sent may be gone, so those requests fail.  Failing
 *   them on a mere retry made a busy machine fail requests sent right
 *   after a broker joined with "rank N reconnected".
 * - Requests from children get the child's rank pushed on their route
 *   stack and lose the LOCAL role.  Events never travel up.
 * - Liveness: a tick (liveness.c) sends KEEPALIVE on idle links and
 *   judges silent peers torpid, then lost.  A tick that comes late means
 *   this broker was not running: that time is credited to the peers'
 *   clocks rather than blamed on them.
 * - Requests in flight are tracked per link (rpctrack.c).  A lost link's
 *   requests are answered EHOSTUNREACH; responses that arrive for
 *   requests no longer tracked are dropped (the client already has its
 *   answer).  When the parent is lost, the requests it had sent down
 *   through us are forgotten (it has answered them with an error), and
 *   requests still arriving from it before its next WELCOME are answered
 *   EHOSTUNREACH, not forwarded: they are stale.
 * - Before the first WELCOME, requests going up wait in a queue (modules
 *   may start talking before the tree is wired); after a loss they fail
 *   at once until the parent welcomes us again.
 * - The parent's DEALER is monitored: a closed connection means the
 *   parent is lost now; a finished handshake triggers an immediate HELLO.
 *   A parent lost to silence is reconnected afresh before we say hello.
 * - Subtree accounting: online(self) = 1 + sum of online(child) over
 *   online children; each change is reported to the parent, and rank 0
 *   declares the instance ready when its subtree is first full.
 * - A lost child is reported to rank 0 (request "overlay.lost"), which
 *   publishes the event "overlay.lost" for modules such as the KVS.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <stdarg.h>
#include <unistd.h>
#include <syslog.h>
#include <sys/random.h>
#include <zmq.h>
#include "src/common/libutil/monotime.h"
#include "broker.h"
#include "overlay.h"
#include "topology.h"
#include "rpctrack.h"
#include "liveness.h"
#include "modhost.h"
#include "ovsock.h"
#include "zap.h"

#define UUID_LEN 32
#define JOIN_QUEUE_MAX 65536
#define HELLO_RETRY_MIN 0.1
#define HELLO_RETRY_MAX 5.0
#define DEFAULT_TCP_USER_TIMEOUT 20.0

enum child_state {
    CHILD_OFFLINE,      /* never joined */
    CHILD_ONLINE,
    CHILD_LOST,
    CHILD_GONE,         /* said goodbye */
};

static const char *child_state_str[] = { "offline", "online", "lost", "offline" };

enum parent_state {
    PARENT_JOINING,     /* not welcomed yet since start */
    PARENT_ONLINE,
    PARENT_LOST,
    PARENT_GONE,        /* we said goodbye */
};

static const char *parent_state_str[] = { "joining", "online", "lost", "gone" };

struct child {
    uint32_t rank;
    char id[16];
    enum child_state state;
    uint32_t online;    /* ranks online in its subtree */
    uint32_t ready;     /* of those, ranks whose modules all run */
    uint32_t size;      /* ranks in its subtree */
    char uuid[UUID_LEN + 1];
    char hostname[64];
    struct peer_clock clock;
    rpctrack_t *track;  /* requests sent down to it */
    double disconnect_sent;
    bool hello_pending; /* said hello while we had no parent */
    int session;        /* of its last accepted HELLO */
};

struct overlay {
    struct broker *b;
    void *router;
    void *dealer;
    void *monitor;
    canopy_watcher_t *router_w;
    canopy_watcher_t *dealer_w;
    canopy_watcher_t *monitor_w;
    canopy_watcher_t *zap_w;
    canopy_watcher_t *tick_w;
    struct child *children;
    int nchildren;

    enum parent_state pstate;
    bool connected;             /* the DEALER has a finished handshake */
    struct peer_clock pclock;
    rpctrack_t *ptrack;         /* requests sent up */
    canopy_msg_t **joinq;       /* requests waiting for the first WELCOME */
    int joinq_len;
    int joinq_cap;
    double hello_next;
    double hello_backoff;
    char parent_uuid[UUID_LEN + 1];
    char *parent_uri;
    char refusal[128];          /* last refusal logged */
    uint32_t reported_online;
    uint32_t reported_ready;
    bool ready_declared;

    char uuid[UUID_LEN + 1];
    char hostname[64];
    int session;                /* times the parent was lost (in HELLO) */
    struct liveness_config live;
    double tick_interval;
    double last_tick;
    struct ovsock_opts sockopts;
    cert_t *cert;
    zap_t *zap;
    uint64_t unknown_msgs;
    uint64_t handshake_failures;
};

static void child_lost (struct overlay *ov, struct child *c, const char *why);
static void parent_lost (struct overlay *ov, const char *why);
static void report_status (struct overlay *ov);

/* Log the 1st..10th occurrence, then only powers of two. */
static bool worth_logging (uint64_t count)
{
    return count <= 10 || (count & (count - 1)) == 0;
}

static void make_uuid (char *buf)
{
    unsigned char r[UUID_LEN / 2];
    if (getrandom (r, sizeof (r), 0) != sizeof (r)) {
        double t = monotime ();
        memcpy (r, &t, sizeof (t));
        pid_t pid = getpid ();
        memcpy (r + sizeof (t), &pid, sizeof (pid));
    }
    for (size_t i = 0; i < sizeof (r); i++)
        sprintf (buf + 2 * i, "%02x", r[i]);
    buf[UUID_LEN] = '\0';
}

/* Attributes */

static int attr_duration (struct broker *b, const char *name, double def,
                          double *out, int flags)
{
    const char *s = attr_get (b->attrs, name, NULL);
    char buf[64];

    if (!s) {
        snprintf (buf, sizeof (buf), "%g", def);
        *out = def;
        return attr_set (b->attrs, name, buf, flags, true);
    }
    if (liveness_parse_duration (s, out) < 0) {
        broker_log (b, LOG_ERR, "invalid %s '%s': expected a duration such as "
                    "2, 0.5s or 100ms", name, s);
        errno = EINVAL;
        return -1;
    }
    return flags ? attr_set (b->attrs, name, s, flags, true) : 0;
}

static int attr_long (struct broker *b, const char *name, long long def,
                      long long min, long long max, long long *out)
{
    const char *s = attr_get (b->attrs, name, NULL);
    char buf[64];
    char *end;
    long long v;

    if (!s) {
        snprintf (buf, sizeof (buf), "%lld", def);
        *out = def;
        return attr_set (b->attrs, name, buf, ATTR_IMMUTABLE, true);
    }
    errno = 0;
    v = strtoll (s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) {
        broker_log (b, LOG_ERR, "invalid %s '%s': expected an integer from %lld to %lld",
                    name, s, min, max);
        errno = EINVAL;
        return -1;
    }
    *out = v;
    return attr_set (b->attrs, name, s, ATTR_IMMUTABLE, true);
}

static int read_attrs (struct overlay *ov)
{
    struct broker *b = ov->b;
    struct liveness_config def;
    char err[256];
    long long maxmsg, sndhwm, rcvhwm;
    double tcp_timeout;

    liveness_config_default (&def);
    if (attr_duration (b, "tbon.keepalive-period", def.period, &ov->live.period, 0) < 0
        || attr_duration (b, "tbon.torpid-timeout", def.torpid, &ov->live.torpid, 0) < 0
        || attr_duration (b, "tbon.lost-timeout", def.lost, &ov->live.lost, 0) < 0
        || attr_duration (b, "tbon.tcp-user-timeout", DEFAULT_TCP_USER_TIMEOUT,
                          &tcp_timeout, ATTR_IMMUTABLE) < 0
        || attr_long (b, "tbon.maxmsgsize", CANOPY_MSG_SIZE_MAX, 1024,
                      CANOPY_MSG_SIZE_MAX, &maxmsg) < 0
        || attr_long (b, "tbon.sndhwm", 0, 0, 1000000000, &sndhwm) < 0
        || attr_long (b, "tbon.rcvhwm", 0, 0, 1000000000, &rcvhwm) < 0)
        return -1;
    if (liveness_config_check (&ov->live, err, sizeof (err)) < 0) {
        broker_log (b, LOG_ERR, "%s", err);
        errno = EINVAL;
        return -1;
    }
    ovsock_opts_default (&ov->sockopts);
    ov->sockopts.maxmsgsize = maxmsg;
    ov->sockopts.sndhwm = sndhwm;
    ov->sockopts.rcvhwm = rcvhwm;
    ov->sockopts.tcp_maxrt_ms = tcp_timeout * 1000;
    ov->tick_interval = liveness_tick_interval (&ov->live);
    return 0;
}

int overlay_attr_check (struct overlay *ov, const char *name, const char *value,
                        char *errbuf, size_t errsize)
{
    struct liveness_config cfg = ov->live;
    double v, *field = NULL;

    if (!strcmp (name, "tbon.keepalive-period"))
        field = &cfg.period;
    else if (!strcmp (name, "tbon.torpid-timeout"))
        field = &cfg.torpid;
    else if (!strcmp (name, "tbon.lost-timeout"))
        field = &cfg.lost;
    else
        return 0;
    if (liveness_parse_duration (value, &v) < 0) {
        snprintf (errbuf, errsize, "%s must be a duration such as 2, 0.5s or 100ms",
                  name);
        errno = EINVAL;
        return -1;
    }
    *field = v;
    if (liveness_config_check (&cfg, errbuf, errsize) < 0)
        return -1;
    ov->live = cfg;
    double interval = liveness_tick_interval (&cfg);
    if (interval != ov->tick_interval) {
        ov->tick_interval = interval;
        if (ov->tick_w) {
            canopy_watcher_stop (ov->tick_w);
            canopy_timer_watcher_reset (ov->tick_w, interval, interval);
            canopy_watcher_start (ov->tick_w);
        }
    }
    return 0;
}

/* Creation */

static void lost_request_cb (struct broker *b, const canopy_msg_t *msg);

struct overlay *overlay_create (struct broker *b)
{
    struct overlay *ov = calloc (1, sizeof (*ov));
    int n;

    if (!ov) {
        errno = ENOMEM;
        return NULL;
    }
    ov->b = b;
    ov->pstate = PARENT_JOINING;
    make_uuid (ov->uuid);
    if (gethostname (ov->hostname, sizeof (ov->hostname) - 1) < 0)
        snprintf (ov->hostname, sizeof (ov->hostname), "unknown");
    n = topology_child_count (b->rank, b->size, b->k);
    if (n > 0) {
        uint32_t *v = calloc (n, sizeof (uint32_t));
        if (!v || !(ov->children = calloc (n, sizeof (struct child)))) {
            free (v);
            goto nomem;
        }
        ov->nchildren = n;
        topology_children (b->rank, b->size, b->k, v, n);
        for (int i = 0; i < n; i++) {
            struct child *c = &ov->children[i];
            c->rank = v[i];
            snprintf (c->id, sizeof (c->id), "%u", v[i]);
            c->size = topology_subtree_size (v[i], b->size, b->k);
            if (!(c->track = rpctrack_create ())) {
                free (v);
                goto nomem;
            }
        }
        free (v);
    }
    if (b->rank > 0 && !(ov->ptrack = rpctrack_create ()))
        goto nomem;
    if (read_attrs (ov) < 0)
        goto error;
    if (broker_register (b, "overlay.lost", lost_request_cb, 0) < 0)
        goto error;
    return ov;
nomem:
    errno = ENOMEM;
error:
    overlay_destroy (ov);
    return NULL;
}

void overlay_destroy (struct overlay *ov)
{
    if (ov) {
        int saved_errno = errno;
        canopy_watcher_destroy (ov->router_w);
        canopy_watcher_destroy (ov->dealer_w);
        canopy_watcher_destroy (ov->monitor_w);
        canopy_watcher_destroy (ov->zap_w);
        canopy_watcher_destroy (ov->tick_w);
        if (ov->monitor) {
            (void)zmq_socket_monitor (ov->dealer, NULL, 0);
            zmq_close (ov->monitor);
        }
        if (ov->router)
            zmq_close (ov->router);
        if (ov->dealer)
            zmq_close (ov->dealer);
        zap_destroy (ov->zap);
        cert_destroy (ov->cert);
        for (int i = 0; i < ov->nchildren; i++)
            rpctrack_destroy (ov->children[i].track);
        rpctrack_destroy (ov->ptrack);
        for (int i = 0; i < ov->joinq_len; i++)
            canopy_msg_decref (ov->joinq[i]);
        free (ov->joinq);
        free (ov->parent_uri);
        free (ov->children);
        free (ov);
        errno = saved_errno;
    }
}

/* Security */

static void zap_log_cb (int allowed, const char *mech, const char *pubkey,
                        const char *address, void *arg)
{
    struct overlay *ov = arg;
    uint64_t denied = zap_denied_count (ov->zap);
    if (!allowed && worth_logging (denied))
        broker_log (ov->b, LOG_WARNING, "overlay auth: denied %s peer %s (key %s); "
                    "%ju denied so far", mech, address, pubkey, (uintmax_t)denied);
    else if (allowed)
        broker_log (ov->b, LOG_DEBUG, "overlay auth: admitted %s", address);
}

int overlay_set_cert (struct overlay *ov, cert_t *cert)
{
    if (!ov || !cert) {
        cert_destroy (cert);
        errno = EINVAL;
        return -1;
    }
    if (!ov->zap) {
        if (!(ov->zap = zap_create (ov->b->zctx))) {
            cert_destroy (cert);
            return -1;
        }
        zap_set_log (ov->zap, zap_log_cb, ov);
    }
    if (zap_authorize (ov->zap, cert_public (cert)) < 0) {
        cert_destroy (cert);
        return -1;
    }
    cert_destroy (ov->cert);
    ov->cert = cert;
    return 0;
}

int overlay_authorize (struct overlay *ov, const char *pubkey)
{
    if (!ov || !ov->zap) {
        errno = EINVAL;
        return -1;
    }
    return zap_authorize (ov->zap, pubkey);
}

/* Lookup and accounting */

static struct child *child_lookup (struct overlay *ov, uint32_t rank)
{
    /* children are consecutive ranks */
    if (ov->nchildren == 0 || rank < ov->children[0].rank
        || rank >= ov->children[0].rank + ov->nchildren)
        return NULL;
    return &ov->children[rank - ov->children[0].rank];
}

static struct child *child_lookup_id (struct overlay *ov, const char *id)
{
    char *end;
    unsigned long rank;
    if (!id || !*id)
        return NULL;
    errno = 0;
    rank = strtoul (id, &end, 10);
    if (errno || *end || rank > UINT32_MAX)
        return NULL;
    struct child *c = child_lookup (ov, rank);
    return c && !strcmp (c->id, id) ? c : NULL;
}

uint32_t overlay_subtree_online (struct overlay *ov)
{
    uint32_t n = 1;
    for (int i = 0; i < ov->nchildren; i++) {
        if (ov->children[i].state == CHILD_ONLINE)
            n += ov->children[i].online;
    }
    return n;
}

/* This broker counts as ready when none of its modules is still setting up. */
uint32_t overlay_subtree_ready (struct overlay *ov)
{
    uint32_t n = modhost_loading (ov->b->modhost) == 0 ? 1 : 0;
    for (int i = 0; i < ov->nchildren; i++) {
        if (ov->children[i].state == CHILD_ONLINE)
            n += ov->children[i].ready;
    }
    return n;
}

void overlay_modules_changed (struct overlay *ov)
{
    if (ov && ov->tick_w)   /* started */
        report_status (ov);
}

bool overlay_subtree_full (struct overlay *ov)
{
    struct broker *b = ov->b;
    return overlay_subtree_online (ov) == topology_subtree_size (b->rank, b->size, b->k);
}

/* Sending */

static bool too_big (struct overlay *ov, const canopy_msg_t *msg)
{
    return ov->sockopts.maxmsgsize >= 0
           && (int64_t)canopy_msg_encode_size (msg) > ov->sockopts.maxmsgsize;
}

static canopy_msg_t *control_create (int ctype, int status, const char *json)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_CONTROL);
    if (!msg)
        return NULL;
    if (canopy_msg_set_control (msg, ctype, status) < 0
        || (json && canopy_msg_set_string (msg, json) < 0)) {
        canopy_msg_decref (msg);
        return NULL;
    }
    return msg;
}

static int send_to_child (struct overlay *ov, struct child *c, const canopy_msg_t *msg)
{
    if (canopy_msg_sendzsock_to (ov->router, c->id, msg, true) < 0)
        return -1;
    peer_clock_sent (&c->clock, monotime ());
    return 0;
}

static int send_to_parent (struct overlay *ov, const canopy_msg_t *msg)
{
    if (canopy_msg_sendzsock_to (ov->dealer, NULL, msg, true) < 0) {
        if (errno == EAGAIN && !ov->connected)
            errno = EHOSTUNREACH;
        return -1;
    }
    peer_clock_sent (&ov->pclock, monotime ());
    return 0;
}

/* A control message to a child; a vanished child is lost. */
static int child_control_send (struct overlay *ov, struct child *c, int ctype,
                               int status, const char *json)
{
    canopy_msg_t *msg = control_create (ctype, status, json);
    int rc = -1;
    if (msg) {
        rc = send_to_child (ov, c, msg);
        if (rc < 0 && errno == EHOSTUNREACH)
            child_lost (ov, c, "disconnected");
        canopy_msg_decref (msg);
    }
    return rc;
}

static int parent_control_send (struct overlay *ov, int ctype, const char *json)
{
    canopy_msg_t *msg = control_create (ctype, 0, json);
    int rc = -1;
    if (msg) {
        rc = send_to_parent (ov, msg);
        canopy_msg_decref (msg);
    }
    return rc;
}

static void send_hello (struct overlay *ov)
{
    struct broker *b = ov->b;
    double now = monotime ();
    json_t *o = json_pack ("{s:i s:i s:s s:s s:i}", "rank", (int)b->rank,
                           "version", OVERLAY_PROTOCOL_VERSION,
                           "uuid", ov->uuid, "hostname", ov->hostname,
                           "session", ov->session);
    char *s = o ? json_dumps (o, JSON_COMPACT) : NULL;
    if (s && parent_control_send (ov, CTL_HELLO, s) < 0 && errno != EHOSTUNREACH)
        broker_log (b, LOG_DEBUG, "hello to parent: %s", strerror (errno));
    free (s);
    json_decref (o);
    ov->hello_backoff = backoff_next (ov->hello_backoff, HELLO_RETRY_MIN,
                                      HELLO_RETRY_MAX);
    ov->hello_next = now + ov->hello_backoff;
}

/* Answer a request the overlay will never deliver (or never see answered). */
struct purge_ctx {
    struct broker *b;
    char text[160];
};

static void purge_respond (const canopy_msg_t *req, void *arg)
{
    struct purge_ctx *p = arg;
    canopy_msg_t *rsp = canopy_response_derive (req, EHOSTUNREACH);
    if (rsp && canopy_msg_set_string (rsp, p->text) == 0)
        router_response (p->b, rsp);
    canopy_msg_decref (rsp);
}

static void fail_pending (struct overlay *ov, rpctrack_t *t, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
static void fail_pending (struct overlay *ov, rpctrack_t *t, const char *fmt, ...)
{
    struct purge_ctx p = { .b = ov->b };
    va_list ap;
    size_t n = rpctrack_count (t);

    if (n == 0)
        return;
    va_start (ap, fmt);
    vsnprintf (p.text, sizeof (p.text), fmt, ap);
    va_end (ap);
    broker_log (ov->b, LOG_INFO, "%zu pending requests failed: %s", n, p.text);
    rpctrack_purge (t, purge_respond, &p);
}

/* Loss reporting */

static json_t *subtree_ranks (struct overlay *ov, uint32_t root)
{
    struct broker *b = ov->b;
    uint32_t n = topology_subtree_size (root, b->size, b->k);
    uint32_t *q = calloc (n ? n : 1, sizeof (uint32_t));
    json_t *a = json_array ();
    uint32_t head = 0, tail = 0;

    if (!q || !a)
        goto error;
    q[tail++] = root;
    while (head < tail) {
        uint32_t r = q[head++];
        if (json_array_append_new (a, json_integer (r)) < 0)
            goto error;
        int nk = topology_child_count (r, b->size, b->k);
        if (nk > 0 && tail + nk <= n)
            tail += topology_children (r, b->size, b->k, q + tail, nk);
    }
    free (q);
    return a;
error:
    free (q);
    json_decref (a);
    return NULL;
}

static void report_lost (struct overlay *ov, struct child *c, const char *why)
{
    struct broker *b = ov->b;
    json_t *ranks = subtree_ranks (ov, c->rank);
    json_t *o = NULL;
    char *s = NULL;

    if (!ranks || !(o = json_pack ("{s:i s:i s:o s:s}", "rank", (int)c->rank,
                                   "parent", (int)b->rank, "ranks", ranks,
                                   "reason", why)))
        goto done;
    ranks = NULL;
    if (!(s = json_dumps (o, JSON_COMPACT)))
        goto done;
    if (b->rank == 0) {
        if (events_publish (b, "overlay.lost", false, s, strlen (s), NULL) < 0)
            broker_log (b, LOG_ERR, "cannot publish overlay.lost: %s", strerror (errno));
    }
    else {
        canopy_msg_t *req = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
        if (req && canopy_msg_set_topic (req, "overlay.lost") == 0
            && canopy_msg_set_string (req, s) == 0)
            (void)broker_rpc (b, req, 0, NULL, NULL);
        canopy_msg_decref (req);
    }
done:
    if (!s)
        broker_log (b, LOG_ERR, "cannot report the loss of rank %u", c->rank);
    free (s);
    json_decref (o);
    json_decref (ranks);
}

/* overlay.lost request (rank 0): publish what a broker below reported. */
static void lost_request_cb (struct broker *b, const canopy_msg_t *msg)
{
    json_t *ranks;
    const char *s;
    int rank, parent;

    if (b->rank != 0) {
        broker_respond_error (b, msg, EINVAL, "losses are reported to rank 0");
        return;
    }
    if (canopy_msg_unpack (msg, "{s:i s:i s:o}", "rank", &rank, "parent", &parent,
                           "ranks", &ranks) < 0
        || !json_is_array (ranks) || rank <= 0 || (uint32_t)rank >= b->size
        || canopy_msg_get_string (msg, &s) < 0 || !s) {
        broker_respond_error (b, msg, EPROTO, "malformed overlay.lost request");
        return;
    }
    if (events_publish (b, "overlay.lost", false, s, strlen (s), NULL) < 0) {
        broker_respond_error (b, msg, errno, "cannot publish overlay.lost");
        return;
    }
    broker_respond (b, msg, NULL);
}

/* State changes */

static void child_lost (struct overlay *ov, struct child *c, const char *why)
{
    struct broker *b = ov->b;

    if (c->state != CHILD_ONLINE)
        return;
    c->state = CHILD_LOST;
    c->online = 0;
    c->ready = 0;
    c->clock.torpid = false;
    broker_log (b, LOG_ERR, "rank %u lost (%s); its subtree has %u ranks",
                c->rank, why, c->size);
    fail_pending (ov, c->track, "rank %u lost (%s)", c->rank, why);
    report_status (ov);
    report_lost (ov, c, why);
    broker_check_shutdown (b);
}

/* True if req, tracked on a child's link, came to us from our parent: the
 * hop under ours on its route stack is the parent's rank.
 */
static bool from_parent (const canopy_msg_t *req, void *arg)
{
    struct overlay *ov = arg;
    char parent[16];
    int n = canopy_msg_route_count (req);
    const char *below;

    /* depth 0 is the top of the stack: the last hop pushed (ours) */
    if (n < 2 || strcmp (canopy_msg_route_at (req, 0), ov->b->rankstr) != 0)
        return false;
    below = canopy_msg_route_at (req, 1);
    snprintf (parent, sizeof (parent), "%d", topology_parent (ov->b->rank, ov->b->k));
    return below && !strcmp (below, parent);
}

/* The parent has forgotten us (or we it): it answered what it sent us
 * with an error already, so requests of its that we passed down are
 * orphans.  Forget them (their answers would be dropped as late), or they
 * would stay tracked for ever if the child never answers: a request read
 * from our queue after a stall may be forwarded over a connection the
 * child has just replaced.
 */
static void forget_parents_requests (struct overlay *ov)
{
    size_t n = 0;
    for (int i = 0; i < ov->nchildren; i++)
        n += rpctrack_purge_if (ov->children[i].track, from_parent, ov, NULL, NULL);
    if (n > 0)
        broker_log (ov->b, LOG_INFO, "forgot %zu requests the lost parent had sent down", n);
}

static void parent_lost (struct overlay *ov, const char *why)
{
    struct broker *b = ov->b;

    if (ov->pstate != PARENT_ONLINE)
        return;
    ov->pstate = PARENT_LOST;
    ov->session++;
    ov->pclock.torpid = false;
    ov->reported_online = 0;
    ov->reported_ready = 0;
    broker_log (b, LOG_ERR, "parent (rank %d) lost (%s); saying hello again",
                topology_parent (b->rank, b->k), why);
    fail_pending (ov, ov->ptrack, "parent of rank %u lost (%s)", b->rank, why);
    forget_parents_requests (ov);
    ov->hello_backoff = 0;
    send_hello (ov);
}

/* Tell the parent (or, on rank 0, the broker) how much of our subtree is up. */
static void report_status (struct overlay *ov)
{
    struct broker *b = ov->b;
    uint32_t online = overlay_subtree_online (ov);
    uint32_t ready = overlay_subtree_ready (ov);

    if (b->rank == 0) {
        if (!ov->ready_declared && overlay_subtree_full (ov) && ready == b->size) {
            ov->ready_declared = true;
            broker_instance_ready (b);
        }
        return;
    }
    if (ov->pstate != PARENT_ONLINE
        || (online == ov->reported_online && ready == ov->reported_ready))
        return;
    char buf[64];
    snprintf (buf, sizeof (buf), "{\"online\":%u,\"ready\":%u}", online, ready);
    if (parent_control_send (ov, CTL_STATUS, buf) == 0) {
        ov->reported_online = online;
        ov->reported_ready = ready;
    }
}

/* Messages from children */

static void refuse (struct overlay *ov, const char *id, int errnum, const char *fmt, ...)
    __attribute__ ((format (printf, 4, 5)));
static void refuse (struct overlay *ov, const char *id, int errnum, const char *fmt, ...)
{
    char text[160];
    va_list ap;
    json_t *o;
    char *s = NULL;
    canopy_msg_t *msg;

    va_start (ap, fmt);
    vsnprintf (text, sizeof (text), fmt, ap);
    va_end (ap);
    if (worth_logging (++ov->unknown_msgs))
        broker_log (ov->b, LOG_WARNING, "refused hello from '%s': %s", id, text);
    if (!(o = json_pack ("{s:s}", "error", text)) || !(s = json_dumps (o, JSON_COMPACT))
        || !(msg = control_create (CTL_WELCOME, errnum, s))) {
        json_decref (o);
        free (s);
        return;
    }
    (void)canopy_msg_sendzsock_to (ov->router, id, msg, true);
    canopy_msg_decref (msg);
    json_decref (o);
    free (s);
}

static void send_disconnect (struct overlay *ov, struct child *c)
{
    double now = monotime ();
    if (now - c->disconnect_sent < ov->tick_interval)
        return;
    c->disconnect_sent = now;
    canopy_msg_t *msg = control_create (CTL_DISCONNECT, 0, NULL);
    if (msg)
        (void)send_to_child (ov, c, msg);
    canopy_msg_decref (msg);
}

static void child_accept (struct overlay *ov, struct child *c);

static void child_hello (struct overlay *ov, struct child *c, const canopy_msg_t *msg)
{
    struct broker *b = ov->b;
    const char *uuid, *host = "";
    int rank, version, session = 0;

    if (canopy_msg_unpack (msg, "{s:i s:i s:s s?s s?i}", "rank", &rank, "version",
                           &version, "uuid", &uuid, "hostname", &host,
                           "session", &session) < 0) {
        refuse (ov, c->id, EPROTO, "malformed hello");
        return;
    }
    if (rank < 0 || (uint32_t)rank != c->rank) {
        refuse (ov, c->id, EINVAL, "hello says rank %d on the link of rank %u",
                rank, c->rank);
        return;
    }
    if (version != OVERLAY_PROTOCOL_VERSION) {
        refuse (ov, c->id, EPROTO, "overlay protocol version %d, rank %u speaks %d",
                version, b->rank, OVERLAY_PROTOCOL_VERSION);
        return;
    }
    if (!*uuid || strlen (uuid) > UUID_LEN) {
        refuse (ov, c->id, EPROTO, "malformed broker uuid");
        return;
    }
    if (c->state == CHILD_ONLINE && strcmp (c->uuid, uuid) != 0)
        child_lost (ov, c, "restarted");
    else if (c->state == CHILD_ONLINE && session == c->session) {
        /* a retry that crossed our welcome, or one whose welcome was lost
         * (a full queue, a link that dropped while the child joined):
         * nothing it was sent is lost, so fail nothing; welcome it again
         */
        broker_log (b, LOG_DEBUG, "duplicate hello from rank %u (session %d):"
                    " welcomed again", c->rank, session);
    }
    else if (c->state == CHILD_ONLINE) {
        /* it lost us for a while: its answers to what we sent may be gone */
        fail_pending (ov, c->track, "rank %u reconnected", c->rank);
    }
    c->session = session;
    snprintf (c->uuid, sizeof (c->uuid), "%s", uuid);
    snprintf (c->hostname, sizeof (c->hostname), "%s", host);
    /* A child joins only a broker that is itself connected to rank 0, so
     * that the event sequence in our welcome is current.
     */
    if (b->rank > 0 && ov->pstate != PARENT_ONLINE && c->state != CHILD_ONLINE) {
        c->hello_pending = true;
        return;
    }
    child_accept (ov, c);
}

/* Welcome a child whose hello was accepted (c->uuid, c->hostname set). */
static void child_accept (struct overlay *ov, struct child *c)
{
    struct broker *b = ov->b;
    char buf[128];

    c->hello_pending = false;
    if (c->state != CHILD_ONLINE) {
        broker_log (b, c->state == CHILD_LOST ? LOG_WARNING : LOG_INFO,
                    "rank %u %s (host %s)", c->rank,
                    c->state == CHILD_LOST ? "rejoined" : "joined", c->hostname);
        c->state = CHILD_ONLINE;
        c->online = 1;
        c->ready = 0;   /* until it says so */
    }
    peer_clock_reset (&c->clock, monotime ());
    snprintf (buf, sizeof (buf), "{\"seq\":%u,\"uuid\":\"%s\"}", b->event_seq, ov->uuid);
    if (child_control_send (ov, c, CTL_WELCOME, 0, buf) < 0)
        broker_log (b, LOG_ERR, "welcome to rank %u: %s", c->rank, strerror (errno));
    report_status (ov);
}

static void child_control (struct overlay *ov, struct child *c, const canopy_msg_t *msg)
{
    struct broker *b = ov->b;
    int ctype = 0;
    int online, ready;

    (void)canopy_msg_get_control (msg, &ctype, NULL);
    switch (ctype) {
        case CTL_HELLO:
            child_hello (ov, c, msg);
            break;
        case CTL_STATUS:
            if (c->state != CHILD_ONLINE) {
                send_disconnect (ov, c);
                break;
            }
            ready = -1;     /* absent: an older broker, counted ready */
            if (canopy_msg_unpack (msg, "{s:i s?i}", "online", &online,
                                   "ready", &ready) == 0
                && online >= 1 && (uint32_t)online <= c->size
                && (ready == -1 || (ready >= 0 && ready <= online))) {
                c->online = online;
                c->ready = ready >= 0 ? ready : online;
                report_status (ov);
            }
            break;
        case CTL_GOODBYE:
            c->hello_pending = false;
            if (c->state == CHILD_ONLINE || c->state == CHILD_LOST) {
                broker_log (b, LOG_INFO, "rank %u left", c->rank);
                c->state = CHILD_GONE;
                c->online = 0;
                c->ready = 0;
                fail_pending (ov, c->track, "rank %u left", c->rank);
                report_status (ov);
            }
            broker_check_shutdown (b);
            break;
        case CTL_KEEPALIVE:
            if (c->state != CHILD_ONLINE)
                send_disconnect (ov, c);
            break;
        default:
            broker_log (b, LOG_DEBUG, "unknown control %d from rank %u", ctype, c->rank);
    }
}

static void child_message (struct overlay *ov, struct child *c, const char *sender,
                           canopy_msg_t *msg)
{
    struct broker *b = ov->b;
    int type = canopy_msg_get_type (msg);

    if (peer_clock_heard (&c->clock, monotime ()) && c->state == CHILD_ONLINE)
        broker_log (b, LOG_WARNING, "rank %u is responsive again", c->rank);
    if (type == CANOPY_MSGTYPE_CONTROL) {
        child_control (ov, c, msg);
        return;
    }
    if (c->state != CHILD_ONLINE) {
        broker_log (b, LOG_DEBUG, "dropped %s from rank %u (%s)",
                    canopy_msg_typestr (type), c->rank, child_state_str[c->state]);
        send_disconnect (ov, c);
        return;
    }
    if (type == CANOPY_MSGTYPE_REQUEST) {
        uint32_t rolemask = 0;
        (void)canopy_msg_get_rolemask (msg, &rolemask);
        (void)canopy_msg_set_rolemask (msg, rolemask & ~CANOPY_ROLE_LOCAL);
        if (canopy_msg_route_enable (msg) == 0
            && canopy_msg_route_push (msg, sender) == 0)
            router_request (b, msg, NULL);
    }
    else if (type == CANOPY_MSGTYPE_RESPONSE) {
        if (rpctrack_match (c->track, msg))
            router_response (b, msg);
        else
            broker_log (b, LOG_DEBUG, "dropped late response from rank %u", c->rank);
    }
    else
        broker_log (b, LOG_DEBUG, "dropped event from rank %u", c->rank);
}

static void router_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct overlay *ov = arg;
    struct broker *b = ov->b;

    for (int i = 0; i < 64; i++) {
        char *sender = NULL;
        canopy_msg_t *msg = canopy_msg_recvzsock_from (ov->router, &sender, true);
        if (!msg) {
            if (errno == EAGAIN || errno == ETERM)
                break;
            if (errno == ENOTCONN)  /* a replaced connection's leftovers */
                broker_log (b, LOG_DEBUG, "dropped a message from a child's old connection");
            else
                broker_log (b, LOG_WARNING, "dropped malformed message from a child: %s",
                            strerror (errno));
            free (sender);
            continue;
        }
        struct child *c = child_lookup_id (ov, sender);
        if (c)
            child_message (ov, c, sender, msg);
        else {
            int ctype = 0;
            if (canopy_msg_get_type (msg) == CANOPY_MSGTYPE_CONTROL
                && canopy_msg_get_control (msg, &ctype, NULL) == 0
                && ctype == CTL_HELLO)
                refuse (ov, sender, EINVAL, "'%s' is not a child of rank %u",
                        sender, b->rank);
            else if (worth_logging (++ov->unknown_msgs))
                broker_log (b, LOG_WARNING, "dropped message from unknown peer '%s'",
                            sender);
        }
        canopy_msg_decref (msg);
        free (sender);
    }
}

/* Messages from the parent */

static void joinq_flush (struct overlay *ov)
{
    struct broker *b = ov->b;
    int n = ov->joinq_len;
    canopy_msg_t **q = ov->joinq;

    ov->joinq = NULL;
    ov->joinq_len = ov->joinq_cap = 0;
    for (int i = 0; i < n; i++) {
        if (overlay_send_parent (ov, q[i]) < 0)
            broker_respond_error (b, q[i], errno, "cannot send to the parent of rank %u",
                                  b->rank);
        canopy_msg_decref (q[i]);
    }
    free (q);
}

static void events_resync (struct overlay *ov, uint32_t seq, bool rejoin)
{
    struct broker *b = ov->b;
    if (seq <= b->event_seq)
        return;
    if (rejoin)
        broker_log (b, LOG_WARNING, "missed events %u-%u while disconnected",
                    b->event_seq + 1, seq);
    b->event_seq = seq;
}

static void parent_welcome (struct overlay *ov, const canopy_msg_t *msg, int status)
{
    struct broker *b = ov->b;
    int seq = 0;
    const char *uuid = "", *error = "";

    if (status != 0) {
        (void)canopy_msg_unpack (msg, "{s?s}", "error", &error);
        if (strcmp (error, ov->refusal) != 0) {
            broker_log (b, LOG_ERR, "parent refused our hello: %s (%s)", error,
                        strerror (status));
            snprintf (ov->refusal, sizeof (ov->refusal), "%s", error);
        }
        ov->hello_backoff = HELLO_RETRY_MAX;
        ov->hello_next = monotime () + HELLO_RETRY_MAX;
        return;
    }
    if (canopy_msg_unpack (msg, "{s:i s?s}", "seq", &seq, "uuid", &uuid) < 0 || seq < 0) {
        broker_log (b, LOG_WARNING, "dropped malformed welcome from parent");
        return;
    }
    if (ov->pstate == PARENT_ONLINE && *ov->parent_uuid
        && strcmp (uuid, ov->parent_uuid) != 0)
        parent_lost (ov, "parent restarted");
    snprintf (ov->parent_uuid, sizeof (ov->parent_uuid), "%s", uuid);
    ov->refusal[0] = '\0';
    events_resync (ov, seq, ov->pstate != PARENT_JOINING);
    if (ov->pstate != PARENT_ONLINE) {
        bool rejoin = ov->pstate == PARENT_LOST;
        ov->pstate = PARENT_ONLINE;
        peer_clock_reset (&ov->pclock, monotime ());
        ov->hello_backoff = 0;
        ov->reported_online = 0;
        ov->reported_ready = 0;
        broker_log (b, rejoin ? LOG_WARNING : LOG_INFO, "%s parent rank %d",
                    rejoin ? "rejoined" : "joined", topology_parent (b->rank, b->k));
        joinq_flush (ov);
        /* children that waited for us join now; those online already
         * hear the current event sequence (they missed what we missed)
         */
        for (int i = 0; i < ov->nchildren; i++) {
            struct child *c = &ov->children[i];
            if (c->hello_pending || c->state == CHILD_ONLINE)
                child_accept (ov, c);
        }
    }
    report_status (ov);
}

static void parent_control (struct overlay *ov, const canopy_msg_t *msg)
{
    int ctype = 0, status = 0;

    (void)canopy_msg_get_control (msg, &ctype, &status);
    switch (ctype) {
        case CTL_WELCOME:
            parent_welcome (ov, msg, status);
            break;
        case CTL_DISCONNECT:
            if (ov->pstate == PARENT_ONLINE)
                parent_lost (ov, "the parent does not know us");
            else if (ov->pstate != PARENT_GONE) {
                ov->hello_backoff = 0;
                send_hello (ov);
            }
            break;
        case CTL_KEEPALIVE:
            break;
        default:
            broker_log (ov->b, LOG_DEBUG, "unknown control %d from parent", ctype);
    }
}

static void dealer_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct overlay *ov = arg;
    struct broker *b = ov->b;

    for (int i = 0; i < 64; i++) {
        canopy_msg_t *msg = canopy_msg_recvzsock_from (ov->dealer, NULL, true);
        if (!msg) {
            if (errno == EAGAIN || errno == ETERM)
                break;
            broker_log (b, LOG_WARNING, "dropped malformed message from parent: %s",
                        strerror (errno));
            continue;
        }
        if (peer_clock_heard (&ov->pclock, monotime ()) && ov->pstate == PARENT_ONLINE)
            broker_log (b, LOG_WARNING, "parent is responsive again");
        switch (canopy_msg_get_type (msg)) {
            case CANOPY_MSGTYPE_REQUEST:
                /* sent before the parent lost us: it has failed it already */
                if (ov->pstate == PARENT_LOST)
                    broker_respond_error (b, msg, EHOSTUNREACH,
                                          "rank %u is rejoining its parent", b->rank);
                else
                    router_request (b, msg, NULL);
                break;
            case CANOPY_MSGTYPE_RESPONSE:
                if (rpctrack_match (ov->ptrack, msg))
                    router_response (b, msg);
                else
                    broker_log (b, LOG_DEBUG, "dropped late response from parent");
                break;
            case CANOPY_MSGTYPE_EVENT:
                canopy_msg_route_disable (msg);
                events_deliver (b, msg);
                break;
            case CANOPY_MSGTYPE_CONTROL:
                parent_control (ov, msg);
                break;
        }
        canopy_msg_decref (msg);
    }
}

static void monitor_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct overlay *ov = arg;
    struct broker *b = ov->b;
    int event, value;

    while (ovsock_monitor_recv (ov->monitor, &event, &value) == 0) {
        switch (event) {
            case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
                ov->connected = true;
                broker_log (b, LOG_DEBUG, "connected to parent");
                if (ov->pstate == PARENT_JOINING || ov->pstate == PARENT_LOST) {
                    ov->hello_backoff = 0;
                    send_hello (ov);
                }
                break;
            case ZMQ_EVENT_DISCONNECTED:
                ov->connected = false;
                broker_log (b, LOG_DEBUG, "disconnected from parent (%d)", value);
                parent_lost (ov, "connection closed");
                break;
            case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
            case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
            case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
                if (worth_logging (++ov->handshake_failures))
                    broker_log (b, LOG_ERR, "handshake with parent failed (%s, code 0x%x); "
                                "%ju failures so far",
                                event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH
                                ? "authentication refused: check the certificate"
                                : event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                                ? "protocol error" : "no detail",
                                value, (uintmax_t)ov->handshake_failures);
                break;
            default:
                broker_log (b, LOG_DEBUG, "parent link event 0x%x (%d)", event, value);
                break;
        }
    }
}

static void zap_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct overlay *ov = arg;
    if (zap_handle (ov->zap) < 0)
        broker_log (ov->b, LOG_ERR, "ZAP handler: %s", strerror (errno));
}

/* Liveness */

/* A parent that went silent may sit behind a dead connection that TCP has
 * not given up on yet: drop it and connect afresh, so that our hello
 * travels on a connection that works (and the old one, when it finally
 * dies, does not take the new session with it).
 */
static void parent_reconnect (struct overlay *ov)
{
    if (!ov->parent_uri)
        return;
    if (zmq_disconnect (ov->dealer, ov->parent_uri) < 0
        || zmq_connect (ov->dealer, ov->parent_uri) < 0)
        broker_log (ov->b, LOG_ERR, "reconnecting to %s: %s", ov->parent_uri,
                    zmq_strerror (errno));
    ov->connected = false;
}

static void credit (struct peer_clock *pc, double stall, double now)
{
    pc->last_recv += stall;
    if (pc->last_recv > now)
        pc->last_recv = now;
}

static void tick_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct overlay *ov = arg;
    struct broker *b = ov->b;
    double now = monotime ();
    char why[64];

    double stall = liveness_stall (ov->last_tick, now, ov->tick_interval);
    if (stall > 0) {
        /* we were not listening: the peers' silence does not count */
        if (stall >= 1.0)
            broker_log (b, LOG_WARNING, "this broker did not run for %.1f s", stall);
        for (int i = 0; i < ov->nchildren; i++)
            credit (&ov->children[i].clock, stall, now);
        credit (&ov->pclock, stall, now);
    }
    ov->last_tick = now;
    for (int i = 0; i < ov->nchildren; i++) {
        struct child *c = &ov->children[i];
        if (c->state != CHILD_ONLINE)
            continue;
        switch (liveness_check (&c->clock, now, &ov->live)) {
            case LIVENESS_LOST:
                snprintf (why, sizeof (why), "silent for %.1f s", now - c->clock.last_recv);
                child_lost (ov, c, why);
                continue;
            case LIVENESS_TORPID:
                broker_log (b, LOG_WARNING, "rank %u is torpid (silent for %.1f s)",
                            c->rank, now - c->clock.last_recv);
                break;
            case LIVENESS_OK:
                break;
        }
        if (liveness_need_keepalive (&c->clock, now, &ov->live))
            (void)child_control_send (ov, c, CTL_KEEPALIVE, 0, NULL);
    }
    if (!ov->dealer || ov->pstate == PARENT_GONE)
        return;
    if (ov->pstate == PARENT_ONLINE) {
        switch (liveness_check (&ov->pclock, now, &ov->live)) {
            case LIVENESS_LOST:
                snprintf (why, sizeof (why), "silent for %.1f s", now - ov->pclock.last_recv);
                parent_reconnect (ov);
                parent_lost (ov, why);
                return;
            case LIVENESS_TORPID:
                broker_log (b, LOG_WARNING, "parent is torpid (silent for %.1f s)",
                            now - ov->pclock.last_recv);
                break;
            case LIVENESS_OK:
                break;
        }
        if (liveness_need_keepalive (&ov->pclock, now, &ov->live))
            (void)parent_control_send (ov, CTL_KEEPALIVE, NULL);
    }
    else if (now >= ov->hello_next)
        send_hello (ov);
}

/* Setup */

int overlay_bind (struct overlay *ov, const char *uri)
{
    if (ov->router) {
        errno = EEXIST;
        return -1;
    }
    if (!(ov->router = ovsock_router (ov->b->zctx, &ov->sockopts, ov->cert, uri)))
        return -1;
    return 0;
}

int overlay_connect (struct overlay *ov, const char *uri, const char *server_pubkey)
{
    struct ovsock_opts o = ov->sockopts;
    int events = ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED
                 | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                 | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_CONNECTED
                 | ZMQ_EVENT_CONNECT_RETRIED | ZMQ_EVENT_CLOSED;

    if (ov->dealer || (server_pubkey && !ov->cert)) {
        errno = ov->dealer ? EEXIST : EINVAL;
        return -1;
    }
    if (!strncmp (uri, "tcp://", 6)) {
        o.reconnect_ivl_ms = 100;
        o.reconnect_max_ms = 5000;
        o.connect_timeout_ms = o.tcp_maxrt_ms > 0 && o.tcp_maxrt_ms < 5000
                               ? o.tcp_maxrt_ms : 5000;
    }
    if (!(ov->dealer = ovsock_dealer (ov->b->zctx, &o, ov->b->rankstr,
                                      server_pubkey ? ov->cert : NULL,
                                      server_pubkey, uri)))
        return -1;
    if (!(ov->monitor = ovsock_monitor (ov->b->zctx, ov->dealer, events)))
        return -1;
    if (!(ov->parent_uri = strdup (uri))) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

int overlay_start (struct overlay *ov)
{
    struct broker *b = ov->b;
    double now = monotime ();

    if (ov->zap) {
        if (!(ov->zap_w = canopy_zmq_watcher_create (b->r, zap_socket (ov->zap),
                                                     CANOPY_POLLIN, zap_cb, ov)))
            return -1;
        canopy_watcher_start (ov->zap_w);
    }
    for (int i = 0; i < ov->nchildren; i++)
        peer_clock_reset (&ov->children[i].clock, now);
    if (ov->router) {
        if (!(ov->router_w = canopy_zmq_watcher_create (b->r, ov->router,
                                                        CANOPY_POLLIN, router_cb, ov)))
            return -1;
        canopy_watcher_start (ov->router_w);
    }
    if (ov->dealer) {
        if (!(ov->dealer_w = canopy_zmq_watcher_create (b->r, ov->dealer,
                                                        CANOPY_POLLIN, dealer_cb, ov))
            || !(ov->monitor_w = canopy_zmq_watcher_create (b->r, ov->monitor,
                                                            CANOPY_POLLIN, monitor_cb,
                                                            ov)))
            return -1;
        canopy_watcher_start (ov->dealer_w);
        canopy_watcher_start (ov->monitor_w);
        peer_clock_reset (&ov->pclock, now);
        send_hello (ov);
    }
    if (!(ov->tick_w = canopy_timer_watcher_create (b->r, ov->tick_interval,
                                                    ov->tick_interval, tick_cb, ov)))
        return -1;
    canopy_watcher_start (ov->tick_w);
    ov->last_tick = now;
    report_status (ov);
    return 0;
}

/* Routing entry points */

static int joinq_push (struct overlay *ov, const canopy_msg_t *msg)
{
    if (ov->joinq_len >= JOIN_QUEUE_MAX) {
        errno = EAGAIN;
        return -1;
    }
    if (ov->joinq_len == ov->joinq_cap) {
        int cap = ov->joinq_cap ? ov->joinq_cap * 2 : 16;
        canopy_msg_t **q = realloc (ov->joinq, cap * sizeof (*q));
        if (!q) {
            errno = ENOMEM;
            return -1;
        }
        ov->joinq = q;
        ov->joinq_cap = cap;
    }
    ov->joinq[ov->joinq_len++] = canopy_msg_incref ((canopy_msg_t *)msg);
    return 0;
}

int overlay_send_parent (struct overlay *ov, const canopy_msg_t *msg)
{
    if (!ov->dealer || ov->pstate == PARENT_GONE) {
        errno = EHOSTUNREACH;
        return -1;
    }
    if (too_big (ov, msg)) {
        errno = EMSGSIZE;
        return -1;
    }
    if (canopy_msg_get_type (msg) != CANOPY_MSGTYPE_REQUEST)
        return send_to_parent (ov, msg);    /* responses: best effort */
    if (ov->pstate == PARENT_JOINING)
        return joinq_push (ov, msg);
    if (ov->pstate != PARENT_ONLINE) {
        errno = EHOSTUNREACH;
        return -1;
    }
    if (rpctrack_add (ov->ptrack, msg) < 0)
        return -1;
    if (send_to_parent (ov, msg) < 0) {
        int e = errno;
        rpctrack_remove (ov->ptrack, msg);
        errno = e;
        return -1;
    }
    return 0;
}

int overlay_send_child (struct overlay *ov, uint32_t rank, const canopy_msg_t *msg)
{
    struct child *c = child_lookup (ov, rank);

    if (!c || c->state != CHILD_ONLINE || !ov->router) {
        errno = EHOSTUNREACH;
        return -1;
    }
    if (too_big (ov, msg)) {
        errno = EMSGSIZE;
        return -1;
    }
    if (rpctrack_add (c->track, msg) < 0)
        return -1;
    if (send_to_child (ov, c, msg) < 0) {
        int e = errno;
        rpctrack_remove (c->track, msg);
        /* A response owed to a child that has just left (a kvs.relay-late
         * is answered 0.1 s after it came) finds its link closed while
         * its goodbye may still wait in our queue: not a loss by itself.
         * If the child died instead, the next keepalive finds that out,
         * within one keepalive period (nothing was sent to it now).
         */
        if (e == EHOSTUNREACH && canopy_msg_get_type (msg) == CANOPY_MSGTYPE_REQUEST)
            child_lost (ov, c, "disconnected");
        else if (e == EHOSTUNREACH)
            broker_log (ov->b, LOG_DEBUG, "response to rank %u dropped: its link is"
                        " closed", c->rank);
        errno = e;
        return -1;
    }
    return 0;
}

void overlay_send_event_children (struct overlay *ov, const canopy_msg_t *msg)
{
    uint32_t seq = 0;

    if (ov->nchildren == 0)
        return;
    (void)canopy_msg_get_seq (msg, &seq);
    if (too_big (ov, msg)) {
        broker_log (ov->b, LOG_ERR, "event %u too large for the overlay", seq);
        return;
    }
    for (int i = 0; i < ov->nchildren; i++) {
        struct child *c = &ov->children[i];
        if (c->state != CHILD_ONLINE)
            continue;
        if (send_to_child (ov, c, msg) < 0) {
            if (errno == EHOSTUNREACH)
                child_lost (ov, c, "disconnected");
            else
                broker_log (ov->b, LOG_ERR, "event %u not sent to rank %u: %s",
                            seq, c->rank, strerror (errno));
        }
    }
}

int overlay_children_connected (struct overlay *ov)
{
    int n = 0;
    for (int i = 0; i < ov->nchildren; i++) {
        if (ov->children[i].state == CHILD_ONLINE)
            n++;
    }
    return n;
}

void overlay_goodbye (struct overlay *ov)
{
    if (ov->dealer && ov->pstate == PARENT_ONLINE)
        (void)parent_control_send (ov, CTL_GOODBYE, NULL);
    if (ov->dealer) {
        ov->pstate = PARENT_GONE;
        fail_pending (ov, ov->ptrack, "rank %u is shutting down", ov->b->rank);
    }
}

bool overlay_parent_online (struct overlay *ov)
{
    return ov->pstate == PARENT_ONLINE;
}

/* Status */

json_t *overlay_status (struct overlay *ov)
{
    struct broker *b = ov->b;
    json_t *children = json_array ();
    double now = monotime ();
    json_t *o;

    if (!children)
        return NULL;
    for (int i = 0; i < ov->nchildren; i++) {
        struct child *c = &ov->children[i];
        json_t *entry = json_pack ("{s:i s:s s:b s:i s:i s:i s:f s:s s:I}",
                                   "rank", (int)c->rank,
                                   "state", child_state_str[c->state],
                                   "torpid", c->state == CHILD_ONLINE && c->clock.torpid,
                                   "online", (int)c->online,
                                   "ready", (int)c->ready,
                                   "size", (int)c->size,
                                   "silent", c->state == CHILD_ONLINE
                                             ? now - c->clock.last_recv : 0.,
                                   "hostname", c->hostname,
                                   "pending", (json_int_t)rpctrack_count (c->track));
        if (!entry || json_array_append_new (children, entry) < 0) {
            json_decref (entry);
            json_decref (children);
            return NULL;
        }
    }
    o = json_pack ("{s:i s:s s:i s:i s:i s:s s:I s:s s:o}",
                   "rank", (int)b->rank,
                   "state", overlay_subtree_full (ov) ? "full" : "partial",
                   "online", (int)overlay_subtree_online (ov),
                   "ready", (int)overlay_subtree_ready (ov),
                   "size", (int)topology_subtree_size (b->rank, b->size, b->k),
                   "parent", ov->dealer ? parent_state_str[ov->pstate] : "none",
                   "pending", (json_int_t)rpctrack_count (ov->ptrack),
                   "hostname", ov->hostname,
                   "children", children);
    return o;
}

char *overlay_missing (struct overlay *ov)
{
    size_t len = 0, cap = 256;
    char *s = calloc (1, cap);
    if (!s)
        return NULL;
    for (int i = 0; i < ov->nchildren; i++) {
        struct child *c = &ov->children[i];
        if (c->state == CHILD_ONLINE && c->online == c->size)
            continue;
        char buf[48];
        if (c->state == CHILD_ONLINE)
            snprintf (buf, sizeof (buf), "%s%u(partial)", len ? "," : "", c->rank);
        else
            snprintf (buf, sizeof (buf), "%s%u(%s)", len ? "," : "", c->rank,
                      child_state_str[c->state]);
        size_t n = strlen (buf);
        if (len + n + 1 > cap) {
            char *p = realloc (s, cap * 2 + n);
            if (!p)
                break;
            s = p;
            cap = cap * 2 + n;
        }
        memcpy (s + len, buf, n + 1);
        len += n;
    }
    return s;
}
