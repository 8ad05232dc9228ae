/* kvsim.h - a discrete-event model of one KAP run on a canopy tree.
 *
 * The model follows the messages canopy sends, hop by hop, and charges
 * each the CPU costs of costs.h on the thread that handles it:
 *   - every broker has three threads (broker, KVS module, content module)
 *     and each thread handles one message at a time, in arrival order;
 *   - with costs.cores > 0 every thread of every broker and the clients
 *     share that many cores (the machine the measurements were made on);
 *     with 0 each thread has a core of its own (a cluster);
 *   - sync: each participant's fence request goes to its broker's KVS
 *     module; contributions are merged and relayed up the tree with at
 *     most one unacknowledged relay per broker (as fence.c does), and
 *     with 'hold' a broker relays nothing until every participant of its
 *     subtree is merged (fence.c's relay-hold once it has learned the
 *     job's layout: one relay per broker per fence; canopy's hold ends
 *     after twice the time the subtree took last time, which with an
 *     unchanged layout it never reaches, so no limit is modelled), and
 *     that relay is a kvs.relay-late, acknowledged after the fence (no
 *     acknowledgement is modelled, and it takes no in-flight slot); rank 0
 *     applies the fence when complete and publishes kvs.setroot, which
 *     every broker forwards to its children and hands to its KVS module,
 *     which answers its waiting participants;
 *   - consumer: each lookup walks the key's path; a missing object is
 *     loaded through the broker's content module from the parent's,
 *     recursively, with one load per object per broker however many wait
 *     (the restartable lookup), and cached at every hop; with
 *     'load_batch' a content module's misses go to the parent in batches
 *     (content.load-batch: at most KVSIM_LOAD_WINDOW in flight, up to
 *     KVSIM_LOAD_BATCH_MAX objects each) and a batch is answered once
 *     all its objects are in;
 *   - the directory layout is KAP's: kap.<inst>.<iter>.<dir>.<producer>
 *     (with keys_per_iter K, K keys per producer, all read by a consumer
 *     that reads the producer),
 *     directories over the hdir threshold hashed into 16-slot levels, and
 *     values over 64 bytes stored as separate blobs (one shared blob when
 *     values are redundant).
 * Clients are one process for all participants (kap-crowd) or one per
 * participant (kap under MPI).  With 'shm', a participant of its own
 * process (KAP's kvs_get) whose broker holds every object of its get's
 * path reads it from the broker's shared read cache: the client's CPU
 * (costs.shm_get) and no message; kap-crowd's gets are asynchronous
 * lookups, which always ask the KVS.
 */
#ifndef KAP_MODEL_KVSIM_H
#define KAP_MODEL_KVSIM_H

#include <stdbool.h>
#include <stdint.h>
#include "costs.h"
#include "src/common/libutil/tstat.h"

enum kvsim_clients {
    KVSIM_CROWD = 0,        /* one client process for every participant */
    KVSIM_MPI = 1,          /* one client process per participant */
};

/* fence.c's RELAY_HOLD_BYTES: a held relay this large goes anyway */
#define KVSIM_HOLD_BYTES 65536
/* fence.c's RELAY_LATE_ACK_DELAY (0.1 s): a kvs.relay-late is answered
 * this many microseconds after the first of a batch
 */
#define KVSIM_LATE_ACK_DELAY 100000.0
/* content.c's LOAD_WINDOW and LOAD_BATCH_MAX: batched loads in flight to
 * the parent, and objects per batch
 */
#define KVSIM_LOAD_WINDOW 2
#define KVSIM_LOAD_BATCH_MAX 64

struct kvsim_config {
    int brokers;
    int k;                  /* tree fan-out */
    int participants;       /* KAP's ranks */
    bool block;             /* placement: block (true) or cyclic */
    int producers;
    int consumers;
    int value_size;
    int access_count;
    int access_stride;
    int keys_per_iter;      /* -K: keys per producer; a consumer reads all
                             * of a producer's keys (default 1) */
    int ndirs;
    bool redundant;
    enum kvsim_clients clients;
    int hdir_threshold;
    int hdir_bytes;         /* ... or a plain one over this size (0: off) */
    int prime_max;          /* setroot carries new dirs up to this size (0: off) */
    int prime_budget;       /* ... and up to this many bytes in all */
    bool direct;            /* clients talk to their KVS without the broker
                             * thread (canopy's direct channel); default off */
    bool hold;              /* a broker holds its relay until its subtree's
                             * participants are in, or KVSIM_HOLD_BYTES
                             * have gathered (canopy's relay-hold, layout
                             * learned); default off */
    bool shm;               /* KVSIM_MPI clients read cached paths from the
                             * broker's shared read cache (canopy's
                             * kvs.shm-size); default off */
    bool load_batch;        /* content modules load from their parent in
                             * batches, at most KVSIM_LOAD_WINDOW in
                             * flight (canopy's content.load-batch);
                             * default off: one load per object */
};

struct kvsim_result {
    struct tstat sync;      /* per participant, microseconds */
    struct tstat get;       /* per get, microseconds */
    double sync_wall;       /* longest sync phase of a participant */
    double consumer_wall;   /* longest consumer phase */
    double total_wall;      /* end of the last participant */
    uint64_t relays;
    uint64_t relays_late;   /* ... of them kvs.relay-late (hold) */
    uint64_t late_acks;     /* their answers sent before the run's end */
    uint64_t relay_bytes;
    uint64_t loads;         /* objects loaded from a parent (every hop) */
    uint64_t load_batches;  /* batched loads sent (load_batch) */
    uint64_t load_bytes;
    uint64_t shm_gets;      /* gets read from a shared read cache (shm) */
    uint64_t messages;      /* every message, every hop */
    uint64_t events;        /* simulation events */
    double cpu;             /* CPU microseconds charged, all threads */
    double bytes_thread[4]; /* sync-phase bytes charged a byte cost, by thread */
    double cpu_thread[4];   /* ... by thread: broker, kvs, content, client */
};

void kvsim_config_default (struct kvsim_config *cfg);

/* Run one KAP run.  Returns 0, or -1 with errno (EINVAL for a bad
 * configuration, ENOMEM).
 */
int kvsim_run (const struct kvsim_config *cfg, const struct kap_costs *costs,
               struct kvsim_result *res);

/* Parent of broker r in a k-ary tree (-1 for rank 0), and its depth. */
int kvsim_parent (int r, int k);
int kvsim_depth (int r, int k);

/* Size in bytes of a KAP directory of n entries of entry_bytes each when
 * stored (an hdir beyond the threshold), and of the objects read to reach
 * one entry in it: *path_objs objects totalling *path_bytes.
 */
void kvsim_dir_shape (int n, int entry_bytes, int threshold, int *path_objs,
                      int *path_bytes);

/* The stored size of one directory entry holding a value of value_size. */
int kvsim_entry_bytes (int value_size);

#endif
