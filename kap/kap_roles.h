/* kap_roles.h - who does what in a KAP run, and what they read and write.
 *
 * Everything here is a pure function of the configuration and a rank, so
 * every rank derives the same roles, key names and values on its own:
 *   producers  ranks 0 .. P-1
 *   consumers  ranks T-C .. T-1 (a rank may be both; ranks >= T idle)
 *   consumer k (k = rank - (T-C)) is mapped onto producer k mod P and on
 *   access i (1..c) reads producer (mapped + stride*i) mod P
 *   key        kap.<instance>.<iteration>.<directory>.<producer>, the
 *              directory being producer mod ndirs; with --keys-per-iter
 *              K > 1 the producer's K keys end in <producer>-<k>
 *   value      value_size pseudo-random bytes seeded by (instance,
 *              iteration, producer, k), or by (instance, iteration, k)
 *              with --redundant-val, so a consumer can check every byte.
 */
#ifndef KAP_ROLES_H
#define KAP_ROLES_H

#include <stdbool.h>
#include <stddef.h>
#include "kap_opts.h"

bool kap_is_producer (const struct kap_config *cfg, int rank);
bool kap_is_consumer (const struct kap_config *cfg, int rank);

/* Number of ranks that produce or consume (the sync fence's nprocs). */
int kap_nactors (const struct kap_config *cfg);

/* The highest rank that produces or consumes (--straggler delays it), or
 * -1 if none does.
 */
int kap_last_actor (const struct kap_config *cfg);

/* The producer consumer 'rank' reads on access 'i' (1-based), or -1 if
 * rank is not a consumer or i is out of range.
 */
int kap_target (const struct kap_config *cfg, int rank, int i);

/* The directory (0..ndirs-1) holding a producer's keys. */
int kap_dir_of (const struct kap_config *cfg, int producer);

/* Names, written into buf (snprintf semantics: returns the length that
 * was needed, -1 on a bad argument).
 */
int kap_key (const struct kap_config *cfg, int iter, int producer, int k,
             char *buf, size_t len);
int kap_dir_key (const struct kap_config *cfg, int iter, int dir,
                 char *buf, size_t len);
/* Fence and event names: kap.<instance>.<what> */
int kap_name (const struct kap_config *cfg, const char *what,
              char *buf, size_t len);

/* Fill buf with the value_size bytes of key k that 'producer' writes in
 * 'iter'.
 */
void kap_value_fill (const struct kap_config *cfg, int iter, int producer,
                     int k, void *buf);
/* True if (data, len) is exactly that value. */
bool kap_value_check (const struct kap_config *cfg, int iter, int producer,
                      int k, const void *data, size_t len);

#endif
