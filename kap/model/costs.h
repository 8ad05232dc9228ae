/* costs.h - the per-message costs the tree model charges, and the
 * machine it runs them on.
 *
 * All times are microseconds of CPU (or of wire, for latencies).  They
 * are measured on this machine by kap/model/calibrate.sh, which writes
 * them as a JSON object of the same names; anything missing keeps its
 * default (the figures of a calibration on the 2-core development VM).
 *
 * Threads of a broker, as in canopy: the broker thread routes every
 * message ("route"), the KVS module thread handles KVS requests, relays
 * and setroot events, the content module thread answers loads.
 */
#ifndef KAP_MODEL_COSTS_H
#define KAP_MODEL_COSTS_H

#include <jansson.h>

struct kap_costs {
    /* wire */
    double ipc_lat;         /* client <-> its broker, one way */
    double net_lat;         /* broker <-> broker, one way */
    double net_bw;          /* bytes per microsecond on a tree link */
    /* broker thread */
    double route;           /* per message passing through */
    double event_fwd;       /* per child an event is sent to */
    /* KVS module thread */
    double lookup;          /* per lookup (walk of a cached path) */
    double walk;            /* per path component walked */
    double fence_req;       /* per fence/commit request from a client */
    double op_encode;       /* per operation, on the client's broker */
    double relay_send;      /* per relay message built */
    double relay_recv;      /* per relay message merged */
    double relay_byte;      /* per byte of relay built or merged */
    double ack;             /* per relay acknowledgement */
    double apply;           /* per round applied on rank 0 */
    double apply_op;        /* per operation applied on rank 0 */
    double store_byte;      /* per byte of new objects stored on rank 0 */
    double setroot;         /* per setroot event handled */
    double respond;         /* per response sent to a waiting client */
    double direct_msg;      /* per message taken from or sent to a client
                             * on the direct channel (--direct=1) */
    double load_send;       /* per object load requested */
    /* content module thread */
    double load_serve;      /* per load answered */
    double load_byte;       /* per byte of object sent or received */
    /* clients */
    double client_msg;      /* a client's CPU per message sent or received */
    double put;             /* a client's CPU per kvs_put (write-back) */
    double put_byte;        /* ... and per byte of its value */
    double shm_get;         /* a client's CPU per get read from its broker's
                             * shared read cache (no message) */
    /* per byte of every message, on top of the above: what the loaded
     * fences of 8 B and 1 KiB values differ by, beyond the model's other
     * byte costs (broker: copies and forwarding; KVS: parsing, hashing,
     * storing)
     */
    double route_byte;
    double kvs_byte;
    /* factors (not microseconds): what a message of the sync phase
     * costs under load over what the loops measured, per thread kind
     * (broker, module, client); 1 = no scaling.  Gets are not scaled.
     */
    double sync_broker;
    double sync_module;
    double sync_client;
    /* the same for the consumer phase's messages (lookups, loads and
     * their answers) on the module threads and the client, from a loaded
     * consumer phase: kap-crowd sends its gets in bursts, and a burst
     * costs each thread less per message than a loop of one request at
     * a time.  None for the broker thread, which gets do not cross on
     * the direct channel.
     */
    double get_module;
    double get_client;
    /* how those two grow with the instance on this machine: a get's CPU
     * on the module threads and the client, burst for burst, grows with
     * the number of brokers sharing the cores and caches (measured:
     * 9 -> 15 us on the KVS threads from 16 to 128 brokers at 16
     * participants each, with as many gets per wake-up).  With cores > 0
     * the factors are multiplied by (brokers / grow_brokers)^get_grow_*,
     * grow_brokers being the size they were measured on; exponents (0: no
     * growth), never applied with cores = 0 (a broker per node).
     */
    double get_grow_module;
    double get_grow_client;
    /* the same for the sync phase's per-message costs: a loaded fence's
     * CPU over the model's charge grows too (x1.3-1.5 from 15 to 127
     * brokers); one exponent for the brokers' threads...
     */
    double sync_grow;
    /* ... and one for the client, whose per-participant CPU grows less
     * (one process: x1.14 per participant from 15 to 127 brokers,
     * against x2.1 per broker for the broker threads, 2026-11-29).
     * Negative (the default, and what a costs file without it gives):
     * sync_grow for the client too, as before it was measured apart.
     */
    double sync_grow_client;
    /* and for its byte costs (route_byte, kvs_byte), measured apart on
     * a fence of 1 KiB values (until 2026-11-29 the bytes grew by
     * sync_grow, and the model over-predicted the 1 KiB fences of 64-128
     * brokers by 25-37%).  The one exponent that may be negative (-1 to
     * 1): on 127 brokers the 1 KiB fence's bytes cost 0.3x what the
     * 15-broker byte costs charge for them (2026-11-29, late)
     */
    double byte_grow;
    double grow_brokers;
    /* machine: cores shared by every thread of every broker and the
     * clients (0: every thread has its own core, as on a cluster)
     */
    int cores;
};

/* Defaults (see above). */
void kap_costs_default (struct kap_costs *c);

/* Override from a JSON object {"name": number, ...}.  Unknown names are
 * an error (EINVAL), so a typo does not go unnoticed.  Returns 0 or -1
 * with a sentence in errbuf.
 */
int kap_costs_from_json (struct kap_costs *c, json_t *o, char *errbuf,
                         size_t errlen);

/* The costs as a JSON object (new reference), NULL on ENOMEM. */
json_t *kap_costs_to_json (const struct kap_costs *c);

#endif
