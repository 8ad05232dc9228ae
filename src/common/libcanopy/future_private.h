/* future_private.h - hooks between futures and the handle (not public).
 *
 * A future that waits on a handle keeps the handle's reactor alive while a
 * continuation is pending (handle_interest_*), and a synchronous wait pumps
 * the handle (handle_pump) instead of running the reactor.
 */
#ifndef CANOPY_FUTURE_PRIVATE_H
#define CANOPY_FUTURE_PRIVATE_H

#include <stdbool.h>
#include <canopy/future.h>
#include <canopy/handle.h>

/* true if a continuation has been registered (then) */
bool future_has_then (canopy_future_t *f);

/* implemented in handle.c */
void handle_interest_inc (canopy_t *h);
void handle_interest_dec (canopy_t *h);
/* Receive and dispatch for a synchronous wait on 'f': returns 0 when a
 * message was processed, -1 with ETIMEDOUT at 'deadline' (monotime; < 0
 * means none) or another errno if the connection failed.
 */
int handle_pump (canopy_t *h, canopy_future_t *f, double deadline);

#endif
