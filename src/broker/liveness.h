/* liveness.h - when to send keepalives and when a silent peer is torpid
 * or lost (the arithmetic only; overlay.c does the sending).
 *
 * Every overlay link has a peer_clock on each side: when we last heard
 * anything from the peer and when we last sent it anything.  A periodic
 * tick (liveness_tick_interval) asks, per peer:
 *   liveness_need_keepalive  nothing sent for 'period' seconds
 *   liveness_check           nothing heard for 'torpid' seconds -> TORPID
 *                            (once), for 'lost' seconds -> LOST
 * A zero torpid or lost timeout disables that verdict.
 *
 * A broker that was itself not running (SIGSTOP, a suspended machine, a
 * long stall) must not blame its peers for the silence: liveness_stall()
 * measures how late a tick came, and the caller credits that time to
 * every peer's clock instead of declaring anyone lost.
 *
 * Times are seconds on a monotonic clock, passed in by the caller.
 */
#ifndef CANOPY_BROKER_LIVENESS_H
#define CANOPY_BROKER_LIVENESS_H

#include <stdbool.h>
#include <stddef.h>

struct liveness_config {
    double period;      /* keepalive period (> 0) */
    double torpid;      /* torpid after this much silence (0 = never) */
    double lost;        /* lost after this much silence (0 = never) */
};

struct peer_clock {
    double last_recv;
    double last_send;
    bool torpid;
};

enum liveness_verdict {
    LIVENESS_OK = 0,
    LIVENESS_TORPID,    /* just became torpid (reported once) */
    LIVENESS_LOST,
};

/* Defaults: period 2 s, torpid 10 s, lost 30 s. */
void liveness_config_default (struct liveness_config *cfg);

/* Parse a duration: a non-negative number with an optional unit suffix
 * "ms", "s", "m" or "h" (seconds if none).  -1 with EINVAL if malformed.
 */
int liveness_parse_duration (const char *s, double *seconds);

/* Check that the timeouts make sense together (period > 0; each non-zero
 * timeout longer than the period; lost not shorter than torpid).  Returns
 * -1 with EINVAL and a sentence in errbuf otherwise.
 */
int liveness_config_check (const struct liveness_config *cfg, char *errbuf,
                           size_t errsize);

/* The tick interval for a configuration: half the period, kept within
 * [0.01, 1.0] seconds.
 */
double liveness_tick_interval (const struct liveness_config *cfg);

/* How long this broker did not run before this tick: the lateness of a
 * tick more than one interval late, else 0 (and 0 for the first tick,
 * prev_tick == 0).  The caller adds it to each peer's last_recv, so that
 * silence is only counted while we were able to listen.
 */
double liveness_stall (double prev_tick, double now, double interval);

void peer_clock_reset (struct peer_clock *pc, double now);
/* Something arrived from the peer.  Returns true if it had been torpid. */
bool peer_clock_heard (struct peer_clock *pc, double now);
void peer_clock_sent (struct peer_clock *pc, double now);

bool liveness_need_keepalive (const struct peer_clock *pc, double now,
                              const struct liveness_config *cfg);
enum liveness_verdict liveness_check (struct peer_clock *pc, double now,
                                      const struct liveness_config *cfg);

/* Exponential backoff: 'min' first, then doubling up to 'max'. */
double backoff_next (double current, double min, double max);

#endif
