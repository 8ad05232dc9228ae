/* kvs_ctx.h - the KVS module's shared context (kvs.c owns it).
 *
 * Threads: everything runs in the module's one thread.
 */
#ifndef CANOPY_KVS_CTX_H
#define CANOPY_KVS_CTX_H

#include <stdint.h>
#include <stdbool.h>
#include <canopy/canopy.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libutil/list.h"
#include "src/common/libutil/tstat.h"
#include "objcache.h"

struct fence_table;
struct applier;
struct watch_table;
struct checkpointer;
struct load_table;
struct shmpub;

struct kvs_module_limits {
    int max_nprocs;             /* largest fence */
    int max_pending_per_user;   /* open fences per user at rank 0 */
    int max_txn_ops;            /* operations in one contribution */
    double fence_timeout;       /* seconds; 0 = none */
    double relay_hold;          /* rank > 0: longest hold of a collective
                                   fence's relay for the participants its
                                   last fence of that size brought, unless
                                   they took longer than half this to
                                   arrive then (fence.c); 0 = never hold */
    int hdir_threshold;         /* entries before a dir is hashed */
    int hdir_bytes;             /* ... or bytes of its encoding (0: no
                                   limit); at most prime_max, every plain
                                   directory can go in a setroot */
    int prime_max;              /* setroot carries new dirs up to this size */
    int prime_budget;           /* ... this many bytes in all (0: none) */
    size_t prime_values;        /* new values (each <= prime_max) carried in
                                   the setroot of a collective fence: bytes
                                   in all, divided by the instance size
                                   (0: none) */
    double prime_delay;         /* seconds between a collective fence's
                                   setroot and its kvs.prime (apply.c:
                                   publish_prime); 0 = at once */
    int guest_access;           /* enum kvs_guest_access (access.h) */
    size_t relay_max;           /* largest kvs.relay (CANOPY_MSG_SIZE_MAX;
                                   not an option: tests make it small) */
};

/* The setroot of a collective fence names the values its kvs.prime event
 * will bring by the first KVS_PRIME_PREFIX hex digits of their refs, up
 * to KVS_PRIME_LIST_MAX of them (apply.c: prime_announce; load.h).
 */
#define KVS_PRIME_PREFIX 8
#define KVS_PRIME_LIST_MAX 4096

struct kvs_ctx {
    canopy_t *h;
    canopy_reactor_t *r;
    uint32_t rank;
    uint32_t size;
    objcache_t *cache;
    struct load_table *loads;       /* loads in flight (load.c) */
    int prime_version;              /* value loads held for the kvs.prime
                                     * of this version, or -1 */
    canopy_watcher_t *prime_timer;  /* releases a hold whose event is lost */
    canopy_watcher_t *prefault_w;   /* touches memory ahead (heap.h) */
    size_t prefault_size;           /* ... this much */
    size_t heap_keep;               /* broker.heap-keep (0: no prefault) */
    bool unloading;                 /* mod_main is answering what is left */
    char rootref[BLOBREF_MAX];
    int version;
    struct fence_table *fences;
    struct applier *applier;        /* rank 0 only */
    struct checkpointer *checkpt;   /* rank 0 only */
    double checkpoint_period;
    struct watch_table *watches;
    struct direct_server *direct;   /* kvs.* from local clients, or NULL */
    struct shmpub *shm;             /* the shared read cache, or NULL */
    size_t shm_size;                /* its bytes (0: none) */
    struct list_node version_waiters;
    int nversion_waiters;
    int nlookups;                   /* lookups in progress */
    struct kvs_module_limits limits;
    size_t cache_max;
    double cache_age;
    uint64_t commit_seq;
    uint64_t nonce;                 /* random, per module start */
    struct {
        uint64_t lookups;
        uint64_t commits;
        uint64_t fences;
        uint64_t setroots;
        uint64_t loads;
        uint64_t load_bytes;
        uint64_t relays_sent;
        uint64_t relays_late;   /* ... of them kvs.relay-late (fence.c) */
        uint64_t relays_received;
        uint64_t applies;
        uint64_t apply_txns;
        uint64_t drafts_used;   /* rounds that began from a draft (apply.c) */
        uint64_t drafted_ops;   /* ... operations they had applied ahead */
        uint64_t relay_bytes;
        uint64_t relay_holds;   /* fences whose relay was held (fence.c) */
        uint64_t relay_hold_expired;    /* ... released by relay-hold */
        uint64_t primed;        /* objects sent (rank 0) or taken from setroot */
        uint64_t primed_values; /* values sent (rank 0) or taken from kvs.prime */
        uint64_t held_loads;    /* value loads held for a kvs.prime event */
        uint64_t held_hits;     /* ... whose value that event brought */
        uint64_t lost_events;   /* overlay.lost events acted on (rank 0) */
        uint64_t prefaults;     /* heap_prefault calls (prefault_cb) */
    } stats;
    /* Where fence time goes (all in microseconds; see kvs.stats "timing").
     * CPU time of this thread: relay_decode/relay_encode per kvs.relay or
     * kvs.relay-late received or sent (a pass that sends nothing is not
     * timed), apply (rank 0) per round from its start to its setroot
     * publication, prime_handle per kvs.prime event (caching and
     * publishing its values), setroot_handle per event here (answering waiters,
     * watches).  Elapsed time: fence_wait (rank 0) from a fence's first
     * contribution to its last, setroot_lag from rank 0's publication to
     * this broker's handling of the event (one machine: CLOCK_MONOTONIC is
     * shared by all brokers), prime_lag the same for kvs.prime events
     * (their values reach this broker that long after rank 0 published
     * them).  apply_ops (rank 0): operations per round.
     */
    struct {
        struct tstat relay_decode;
        struct tstat relay_encode;
        struct tstat fence_wait;
        struct tstat apply;
        struct tstat apply_ops;
        struct tstat setroot_lag;
        struct tstat prime_lag;
        struct tstat setroot_handle;
        struct tstat prime_handle;
    } timing;
};

/* load.c: fault an object in from the content service.  Returns 0 when
 * waiting: cb runs exactly once, later (never from inside kvs_load), when
 * the object is cached or with an errnum.  Returns -1 with errno if the
 * load cannot be started: cb will not run.
 */
int kvs_load (struct kvs_ctx *ctx, const char *ref, enum objtype type,
              objcache_wait_f cb, void *arg);
/* kvs.c: a new root is known (rank 0 after an apply, others on setroot). */
void kvs_root_update (struct kvs_ctx *ctx, int version, const char *rootref);

#endif
