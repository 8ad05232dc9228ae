/* des.h - a minimal discrete-event engine: a clock and a queue of timed
 * events, earliest first, ties in the order they were scheduled.
 *
 * An event is a callback with two integer arguments and a pointer, so
 * callers need no allocation per event.  Times are in microseconds.
 * Single-threaded.
 */
#ifndef KAP_MODEL_DES_H
#define KAP_MODEL_DES_H

#include <stdint.h>

typedef struct des des_t;
typedef void (*des_f)(des_t *d, void *arg, int64_t a, int64_t b);

des_t *des_create (void);
void des_destroy (des_t *d);

/* Run cb(d, arg, a, b) at time now + delay (delay >= 0).
 * Returns 0, or -1 with errno ENOMEM/EINVAL.
 */
int des_schedule (des_t *d, double delay, des_f cb, void *arg, int64_t a,
                  int64_t b);

/* Current simulated time. */
double des_now (const des_t *d);

/* Run events until none is left or des_stop() is called.  Returns the
 * number of events run.
 */
uint64_t des_run (des_t *d);
void des_stop (des_t *d);

/* Events still queued. */
uint64_t des_pending (const des_t *d);

#endif
