/* handle_private.h - the handle structure and connector interface, shared
 * inside libcanopy (handle.c, rpc.c, msg_handler.c, module support) and
 * with the broker, which builds module handles on message queues.
 *
 * A connector moves whole messages between a handle and a broker.  recv
 * with nonblock fails with EAGAIN; a lost broker is ECONNRESET.  pending()
 * tells whether a whole message is already buffered (so the reactor must
 * not block in poll).  poll_first: see below.
 */
#ifndef CANOPY_HANDLE_PRIVATE_H
#define CANOPY_HANDLE_PRIVATE_H

#include <stdbool.h>
#include <canopy/handle.h>
#include <canopy/future.h>
#include "src/common/libutil/list.h"
#include "src/common/libutil/hashmap.h"

struct connector_ops {
    int (*send) (void *impl, const canopy_msg_t *msg, bool nonblock);
    /* optional: send, consuming the caller's reference (see handle_send_owned) */
    int (*send_owned) (void *impl, canopy_msg_t *msg, bool nonblock);
    canopy_msg_t *(*recv) (void *impl, bool nonblock);
    int (*pollfd) (void *impl);         /* -1 if zmq */
    void *(*pollzsock) (void *impl);    /* NULL if fd */
    bool (*pending) (void *impl);
    void (*close) (void *impl);
    /* optional: the path of the broker's UNIX socket (local connectors) */
    const char *(*path) (void *impl);
    /* a blocking recv waits in poll before its first try when nothing
     * is buffered: each try costs a system call per socket, and the
     * answer to a request just sent is seldom there yet
     */
    bool poll_first;
};

struct rq_entry {
    struct list_node node;
    canopy_msg_t *msg;
};

struct canopy_handle {
    const struct connector_ops *ops;
    void *impl;
    int flags;
    struct list_node rq;            /* requeued messages */
    int rq_count;
    canopy_reactor_t *r;
    bool r_owned;
    canopy_watcher_t *io_w;
    canopy_watcher_t *prep_w;
    canopy_watcher_t *idle_w;
    int interest;                   /* reasons to keep the reactor alive */
    bool disconnected;
    hashmap_t *rpcs;                /* matchtag -> struct rpc_entry */
    uint32_t next_tag;
    struct list_node handlers;      /* started message handlers, newest first */
    hashmap_t *aux;
    hashmap_t *attr_cache;          /* immutable attributes */
    char *attr_last;                /* last mutable attribute value */
    char *appname;
    struct canopy_handle_stats stats;
    void (*disconnect_cb) (canopy_t *h, void *arg);
    void *disconnect_arg;
    struct direct_server *direct;   /* a module's direct channel (direct.h) */
};

/* Create a handle over a connector (takes ownership of impl). */
canopy_t *handle_create (const struct connector_ops *ops, void *impl, int flags);
void handle_set_disconnect_cb (canopy_t *h,
                               void (*cb) (canopy_t *h, void *arg),
                               void *arg);

/* Send 'msg' and drop the caller's reference to it, success or not: for
 * messages built to be sent and forgotten (responses).  A connector that
 * can take the message over instead of copying it (connector_queue) does.
 */
int handle_send_owned (canopy_t *h, canopy_msg_t *msg, int flags);

/* The path of the broker's UNIX socket h is connected to, or NULL (not a
 * local connector).  Borrowed: valid while h is open.
 */
const char *handle_local_path (canopy_t *h);

/* rpc.c */
struct rpc_entry;
bool rpc_dispatch_response (canopy_t *h, canopy_msg_t *msg, canopy_future_t *waiting);
bool rpc_response_wanted (canopy_t *h, const canopy_msg_t *msg, canopy_future_t *waiting);
void rpc_fail_all (canopy_t *h, int errnum);
void rpc_fail_all_ex (canopy_t *h, int errnum, bool quiet);
void rpc_table_destroy (canopy_t *h);

/* msg_handler.c */
void msg_handler_dispatch (canopy_t *h, const canopy_msg_t *msg);
void msg_handler_list_destroy (canopy_t *h);

/* connector_local.c */
void *connector_local_create (const char *path, canopy_error_t *error);
extern const struct connector_ops connector_local_ops;
/* connector_queue.c: a module thread's pair of queues to its broker
 * (msg_queue.h); takes over one reference to each
 */
struct msg_queue;
void *connector_queue_create (struct msg_queue *in, struct msg_queue *out);
extern const struct connector_ops connector_queue_ops;

#endif
