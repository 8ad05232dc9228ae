/* overlay.h - the broker's links in the tree (DESIGN.md section 3;
 * protocol and states in doc/internals.md, "5.3 The overlay").
 *
 * A broker with children binds a ROUTER; a broker with a parent connects a
 * DEALER whose identity is its rank.  Control messages on these links:
 *   HELLO      child -> parent  {rank, version, uuid, hostname}
 *   WELCOME    parent -> child  {seq, uuid}; control status = errno if the
 *                               hello was refused (text in "error")
 *   STATUS     child -> parent  {online}   ranks online in its subtree
 *   GOODBYE    child -> parent             leaving (shutdown)
 *   KEEPALIVE  both ways                   sent on a link idle for
 *                                          tbon.keepalive-period
 *   DISCONNECT parent -> child             "I do not know you: say HELLO"
 * A child is offline (never joined or left), online (maybe torpid), or
 * lost (silent for tbon.lost-timeout, disconnected, or restarted).  When a
 * child is lost every request sent down to it is answered EHOSTUNREACH
 * and rank 0 publishes the event "overlay.lost" {rank, parent, ranks,
 * reason}.  A child that loses its parent answers every request it sent
 * up EHOSTUNREACH and says HELLO again (with backoff) until welcomed.
 *
 * Attributes read by overlay_create (defaults in parentheses):
 *   tbon.keepalive-period (5s) tbon.torpid-timeout (10s)
 *   tbon.lost-timeout (30s)    -- durations, changeable at run time
 *   tbon.maxmsgsize (CANOPY_MSG_SIZE_MAX) tbon.sndhwm (0) tbon.rcvhwm (0)
 *   tbon.tcp-user-timeout (20s)          -- fixed once the broker runs
 * Security: overlay_set_cert() before bind/connect turns on CURVE for
 * that link (a ZAP handler admitting only overlay_authorize()d keys is
 * created with the first certificate).
 *
 * Errors: send functions return -1 with EHOSTUNREACH when the peer is not
 * online, EMSGSIZE when the message exceeds tbon.maxmsgsize, EAGAIN when
 * the link's queue is full (tbon.sndhwm).
 */
#ifndef CANOPY_BROKER_OVERLAY_H
#define CANOPY_BROKER_OVERLAY_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <canopy/message.h>
#include "cert.h"

struct broker;
struct overlay;

enum overlay_ctl {
    CTL_HELLO = 1,
    CTL_WELCOME = 2,
    CTL_STATUS = 3,
    CTL_GOODBYE = 4,
    CTL_KEEPALIVE = 5,
    CTL_DISCONNECT = 6,
};

#define OVERLAY_PROTOCOL_VERSION 2

/* Reads and checks the tbon.* attributes; logs and fails with EINVAL if
 * one is malformed.  Registers the overlay's services.
 */
struct overlay *overlay_create (struct broker *b);
void overlay_destroy (struct overlay *ov);

/* CURVE for the links made after this call.  The overlay takes ownership
 * of 'cert' (also on failure).  The certificate's own public key is
 * authorized.
 */
int overlay_set_cert (struct overlay *ov, cert_t *cert);
/* Admit another broker's public key (Z85).  EINVAL if malformed or if no
 * certificate is set.
 */
int overlay_authorize (struct overlay *ov, const char *pubkey);

int overlay_bind (struct overlay *ov, const char *uri);
/* server_pubkey: the parent's public key (NULL: no CURVE on this link). */
int overlay_connect (struct overlay *ov, const char *uri, const char *server_pubkey);
/* Start watching sockets and timers; a child says HELLO to its parent. */
int overlay_start (struct overlay *ov);

int overlay_send_parent (struct overlay *ov, const canopy_msg_t *msg);
int overlay_send_child (struct overlay *ov, uint32_t rank, const canopy_msg_t *msg);
void overlay_send_event_children (struct overlay *ov, const canopy_msg_t *msg);

/* Shutdown: children still connected, and saying goodbye to the parent. */
int overlay_children_connected (struct overlay *ov);
void overlay_goodbye (struct overlay *ov);

bool overlay_parent_online (struct overlay *ov);
uint32_t overlay_subtree_online (struct overlay *ov);
bool overlay_subtree_full (struct overlay *ov);
/* Ranks of the subtree whose modules have all finished setting up (a
 * child reports its subtree's count with its online count).  Rank 0
 * declares the instance ready when the whole tree is online and ready.
 */
uint32_t overlay_subtree_ready (struct overlay *ov);
/* A module of this broker started running or exited: report again. */
void overlay_modules_changed (struct overlay *ov);
/* {rank, state (full|partial), online, ready, size, parent (none|joining|online|
 * lost|gone), pending (requests in flight to the parent), hostname,
 * children: [{rank, state (offline|online|lost), torpid, online, ready, size,
 * silent (seconds), hostname, pending}]} (new reference).
 */
json_t *overlay_status (struct overlay *ov);
/* Comma-separated ranks not yet online below this broker (caller frees). */
char *overlay_missing (struct overlay *ov);

/* A change to a tbon.* attribute requested at run time: validate it and
 * apply it.  Returns 0 if accepted (or not the overlay's attribute), -1
 * with errno (EINVAL, EPERM) and a sentence in errbuf otherwise.
 */
int overlay_attr_check (struct overlay *ov, const char *name, const char *value,
                        char *errbuf, size_t errsize);

#endif
