/* broker.h - the broker context shared by the broker's source files.
 *
 * One broker process, one thread (plus one thread per module).  Everything
 * here is touched only from the broker's reactor thread.
 *
 * Reading order: broker.c (main, lifecycle), router.c (where messages go),
 * overlay.c (tree links), connector.c (local clients), modhost.c
 * (modules), events.c (publication), runat.c (initial program).
 */
#ifndef CANOPY_BROKER_BROKER_H
#define CANOPY_BROKER_BROKER_H

#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sched.h>
#include <canopy/canopy.h>
#include "src/common/libutil/hashmap.h"
#include "attr.h"
#include "logbuf.h"
#include "endpoint.h"

struct overlay;
struct connector;
struct modhost;
struct runat;

enum broker_state {
    STATE_JOIN,         /* wiring the tree */
    STATE_RUN,          /* serving; initial program may run on rank 0 */
    STATE_SHUTDOWN,     /* waiting for children to leave, then modules */
    STATE_EXIT,
};

/* A request handler for one of the broker's own services. */
struct broker;
typedef void (*internal_handler_f)(struct broker *b, const canopy_msg_t *msg);

/* Continuation for a request the broker itself sent. */
typedef void (*broker_rpc_f)(struct broker *b, const canopy_msg_t *rsp, void *arg);

struct broker {
    void *zctx;
    canopy_reactor_t *r;
    uint32_t rank;
    uint32_t size;
    uint32_t k;
    char rankstr[16];
    char *rundir;
    uid_t owner;
    attr_table_t *attrs;
    logbuf_t *log;
    struct overlay *overlay;
    struct connector *connector;
    struct modhost *modhost;
    struct runat *runat;
    hashmap_t *services;        /* service name -> struct service */
    hashmap_t *endpoints;       /* endpoint id -> struct endpoint (borrowed) */
    hashmap_t *internal;        /* topic -> struct internal_entry */
    hashmap_t *rpcs;            /* matchtag -> struct broker_rpc */
    uint32_t next_tag;
    uint32_t event_seq;         /* last event sequence seen or published */
    enum broker_state state;
    int exit_code;
    bool shutdown_requested;
    double shutdown_start;
    canopy_watcher_t *signal_w;
    canopy_watcher_t *shutdown_timer;
    canopy_watcher_t *shutdown_check;
    int sigfd;
    int heap_cache;             /* malloc cache in effect (heap_cache_exec) */
    int heap_cache_errno;
    uint32_t heap_cache_asked;  /* what start_heap_cache asked for */
    char **initial_argv;        /* rank 0: program to run when ready */
    char *exec_path;            /* our own executable */
    cpu_set_t task_cpus;        /* CPUs we were started with (children's) */
};

#define broker_log(b, level, ...) logbuf_printf ((b)->log, level, "broker", __VA_ARGS__)

/* router.c */
int router_init (struct broker *b);
void router_fini (struct broker *b);
/* A request that entered this broker: 'from' is the local endpoint it came
 * from (NULL if from the parent or a child, whose hop is already pushed).
 */
void router_request (struct broker *b, canopy_msg_t *msg, struct endpoint *from);
void router_response (struct broker *b, canopy_msg_t *msg);
/* Answer a request on behalf of the broker. */
void broker_respond (struct broker *b, const canopy_msg_t *req, const char *json_str);
void broker_respond_pack (struct broker *b, const canopy_msg_t *req, const char *fmt, ...);
void broker_respond_error (struct broker *b, const canopy_msg_t *req, int errnum,
                           const char *fmt, ...) __attribute__ ((format (printf, 4, 5)));
int broker_register (struct broker *b, const char *topic, internal_handler_f fn,
                     uint32_t rolemask);
int service_add_internal (struct broker *b, const char *name);
int service_add_module (struct broker *b, const char *name, struct endpoint *ep);
void service_remove_endpoint (struct broker *b, struct endpoint *ep);
struct endpoint *service_lookup_endpoint (struct broker *b, const char *topic,
                                          bool *internal);
/* Send a request from the broker itself; cb (may be NULL) gets the response. */
int broker_rpc (struct broker *b, canopy_msg_t *req, uint32_t nodeid,
                broker_rpc_f cb, void *arg);
void endpoint_register (struct broker *b, struct endpoint *ep);
void endpoint_unregister (struct broker *b, struct endpoint *ep);
/* Tell every service the endpoint used that it is gone. */
void endpoint_disconnect_notify (struct broker *b, struct endpoint *ep);

/* events.c */
int events_init (struct broker *b);
/* An event to deliver here and pass down (from the parent, or published
 * on rank 0).  Checks the sequence.
 */
void events_deliver (struct broker *b, canopy_msg_t *msg);
/* Rank 0: publish a new event (assigns the next sequence number). */
int events_publish (struct broker *b, const char *topic, bool raw,
                    const void *data, size_t size, uint32_t *seq);

/* broker.c */
void broker_shutdown_begin (struct broker *b, int exit_code, const char *why);
void broker_check_shutdown (struct broker *b);
void broker_instance_ready (struct broker *b);

#endif
