/* overlay.h - the broker's links in the tree (DESIGN.md section 3).
 *
 * A broker with children binds a ROUTER; a broker with a parent connects a
 * DEALER whose identity is its rank.  Control messages on these links:
 *   HELLO    child -> parent  {rank}         first message on a link
 *   WELCOME  parent -> child  {seq}          last event sequence number
 *   STATUS   child -> parent  {online}       ranks online in its subtree
 *   GOODBYE  child -> parent                 leaving (shutdown)
 * A broker's subtree is "full" when every rank below it is online; rank 0
 * starts the initial program when its subtree is full.
 *
 * Errors: send functions return -1 with EHOSTUNREACH when the peer is not
 * online.
 */
#ifndef CANOPY_BROKER_OVERLAY_H
#define CANOPY_BROKER_OVERLAY_H

#include <stdint.h>
#include <stdbool.h>
#include <jansson.h>
#include <canopy/message.h>

struct broker;
struct overlay;

enum overlay_ctl {
    CTL_HELLO = 1,
    CTL_WELCOME = 2,
    CTL_STATUS = 3,
    CTL_GOODBYE = 4,
    CTL_KEEPALIVE = 5,
};

struct overlay *overlay_create (struct broker *b);
void overlay_destroy (struct overlay *ov);

int overlay_bind (struct overlay *ov, const char *uri);
int overlay_connect (struct overlay *ov, const char *uri);
/* Start watching sockets; a child sends HELLO to its parent. */
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
/* {rank, state, online, size, children:[{rank,state,online,size}]} */
json_t *overlay_status (struct overlay *ov);
/* Comma-separated ranks not yet online below this broker (caller frees). */
char *overlay_missing (struct overlay *ov);

#endif
