/* builtins.c - the broker's own small services.
 *
 *   attr.get {name}            -> {value, immutable}
 *   attr.set {name, value}     (owner; immutable attributes refused: EPERM)
 *   attr.list                  -> {name: value, ...}
 *   log.append {level,name,text,time}   (NORESPONSE from canopy_log)
 *   log.dmesg                  -> {rank, entries: [...]}
 *   log.clear
 *   broker.info                -> {rank, size, k, pid, uptime, clients, modules}
 *   broker.shutdown            (rank 0: shut the instance down)
 *   overlay.status             -> this broker's view of its subtree
 *   service.add {service}      (modules only: extra service names)
 * Every service also answers "<service>.ping" (router.c).
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <syslog.h>
#include <canopy/canopy.h>
#include "src/common/libutil/monotime.h"
#include "broker.h"
#include "overlay.h"
#include "connector.h"
#include "modhost.h"

static double start_time;

static void attr_get_cb (struct broker *b, const canopy_msg_t *msg)
{
    const char *name, *value;
    int flags = 0;

    if (canopy_msg_unpack (msg, "{s:s}", "name", &name) < 0) {
        broker_respond_error (b, msg, EPROTO, "malformed attr.get request");
        return;
    }
    if (!(value = attr_get (b->attrs, name, &flags))) {
        broker_respond_error (b, msg, ENOENT, "no attribute '%s'", name);
        return;
    }
    broker_respond_pack (b, msg, "{s:s s:b}", "value", value,
                         "immutable", (flags & ATTR_IMMUTABLE) ? 1 : 0);
}

static void attr_set_cb (struct broker *b, const canopy_msg_t *msg)
{
    const char *name, *value;

    if (canopy_msg_unpack (msg, "{s:s s:s}", "name", &name, "value", &value) < 0) {
        broker_respond_error (b, msg, EPROTO, "malformed attr.set request");
        return;
    }
    char err[256];
    if (overlay_attr_check (b->overlay, name, value, err, sizeof (err)) < 0) {
        broker_respond_error (b, msg, errno, "%s", err);
        return;
    }
    if (attr_set (b->attrs, name, value, 0, false) < 0) {
        broker_respond_error (b, msg, errno, errno == EPERM
                              ? "attribute '%s' cannot be changed"
                              : "cannot set attribute '%s'", name);
        return;
    }
    if (!strcmp (name, "log-stderr-level"))
        logbuf_set_stderr_level (b->log, atoi (value));
    broker_respond (b, msg, NULL);
}

static void attr_list_cb (struct broker *b, const canopy_msg_t *msg)
{
    json_t *o = attr_list (b->attrs);
    if (!o) {
        broker_respond_error (b, msg, ENOMEM, NULL);
        return;
    }
    broker_respond_pack (b, msg, "{s:o}", "attrs", o);
}

static void log_append_cb (struct broker *b, const canopy_msg_t *msg)
{
    int level = LOG_INFO;
    const char *name = "client", *text;
    double t = 0;

    if (canopy_msg_unpack (msg, "{s?i s?s s:s s?F}", "level", &level, "name", &name,
                           "text", &text, "time", &t) < 0) {
        broker_respond_error (b, msg, EPROTO, "malformed log.append request");
        return;
    }
    if (level < LOG_EMERG || level > LOG_DEBUG)
        level = LOG_INFO;
    logbuf_append (b->log, level, name, t > 0 ? t : walltime (), text);
    broker_respond (b, msg, NULL);
}

static void log_dmesg_cb (struct broker *b, const canopy_msg_t *msg)
{
    json_t *a = logbuf_dump (b->log);
    if (!a) {
        broker_respond_error (b, msg, ENOMEM, NULL);
        return;
    }
    broker_respond_pack (b, msg, "{s:i s:o}", "rank", (int)b->rank, "entries", a);
}

static void log_clear_cb (struct broker *b, const canopy_msg_t *msg)
{
    logbuf_clear (b->log);
    broker_respond (b, msg, NULL);
}

static void info_cb (struct broker *b, const canopy_msg_t *msg)
{
    broker_respond_pack (b, msg, "{s:i s:i s:i s:i s:f s:i s:i s:s}",
                         "rank", (int)b->rank,
                         "size", (int)b->size,
                         "k", (int)b->k,
                         "pid", (int)getpid (),
                         "uptime", monotime () - start_time,
                         "clients", connector_client_count (b->connector),
                         "modules", modhost_count (b->modhost),
                         "state", b->state == STATE_JOIN ? "join"
                                  : b->state == STATE_RUN ? "run" : "shutdown");
}

static void shutdown_cb (struct broker *b, const canopy_msg_t *msg)
{
    int code = 0;
    (void)canopy_msg_unpack (msg, "{s?i}", "exitcode", &code);
    if (b->rank != 0) {
        broker_respond_error (b, msg, EINVAL, "shutdown is requested on rank 0");
        return;
    }
    broker_respond (b, msg, NULL);
    /* a failure reported while already shutting down is not lost */
    if (b->state >= STATE_SHUTDOWN && code != 0 && b->exit_code == 0)
        b->exit_code = code;
    broker_shutdown_begin (b, code, "requested by canopy shutdown");
}

static void overlay_status_cb (struct broker *b, const canopy_msg_t *msg)
{
    json_t *o = overlay_status (b->overlay);
    if (!o) {
        broker_respond_error (b, msg, ENOMEM, NULL);
        return;
    }
    broker_respond_pack (b, msg, "o", o);
}

static void service_add_cb (struct broker *b, const canopy_msg_t *msg)
{
    const char *name;
    const char *id = canopy_msg_route_last (msg);
    struct endpoint *ep = id ? hashmap_lookup (b->endpoints, id) : NULL;
    bool internal;
    char topic[64];

    if (canopy_msg_unpack (msg, "{s:s}", "service", &name) < 0
        || !*name || strchr (name, '.') || strlen (name) > 32) {
        broker_respond_error (b, msg, EPROTO, "malformed service.add request");
        return;
    }
    if (!ep || ep->type != EP_MODULE || canopy_msg_route_count (msg) != 1) {
        broker_respond_error (b, msg, EPERM, "only modules may register services");
        return;
    }
    snprintf (topic, sizeof (topic), "%s.x", name);
    if (service_lookup_endpoint (b, topic, &internal) || internal) {
        broker_respond_error (b, msg, EEXIST, "service '%s' already exists", name);
        return;
    }
    if (service_add_module (b, name, ep) < 0) {
        broker_respond_error (b, msg, errno, NULL);
        return;
    }
    broker_respond (b, msg, NULL);
}

int builtins_init (struct broker *b)
{
    start_time = monotime ();
    if (broker_register (b, "attr.get", attr_get_cb, CANOPY_ROLE_USER) < 0
        || broker_register (b, "attr.set", attr_set_cb, 0) < 0
        || broker_register (b, "attr.list", attr_list_cb, CANOPY_ROLE_USER) < 0
        || broker_register (b, "log.append", log_append_cb, 0) < 0
        || broker_register (b, "log.dmesg", log_dmesg_cb, 0) < 0
        || broker_register (b, "log.clear", log_clear_cb, 0) < 0
        || broker_register (b, "broker.info", info_cb, CANOPY_ROLE_USER) < 0
        || broker_register (b, "broker.shutdown", shutdown_cb, 0) < 0
        || broker_register (b, "overlay.status", overlay_status_cb, CANOPY_ROLE_USER) < 0
        || broker_register (b, "service.add", service_add_cb, 0) < 0)
        return -1;
    return 0;
}
