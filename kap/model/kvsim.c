/* kvsim.c - see kvsim.h
 *
 * Design notes:
 * - Servers: every broker has three (broker thread, KVS module, content
 *   module), every client process one.  A server handles one message (a
 *   "job") at a time from its FIFO; the job's cost is computed when it
 *   starts and its effects (messages sent, state changed) happen when it
 *   ends.  Waking an idle thread is not charged separately: the
 *   calibrated per-message costs include it.
 * - CPU: with costs.cores > 0, a server needs a core to run a job; servers
 *   wanting one wait in one FIFO, and a server that finishes a job while
 *   others wait goes to the back (round robin per message, roughly what a
 *   loaded Linux box does with many event loops).  There, the loaded
 *   factors grow with the number of brokers (costs.h: get_grow_*,
 *   sync_grow, byte_grow), computed once per run.
 * - Messages between threads of one broker pass through the broker
 *   thread, as they do in canopy (modules talk through the broker); between
 *   brokers they hop along the tree.
 * - Objects: ids index one table of sizes; caches and pending loads are
 *   hash maps keyed by (broker, object).  Rank 0 holds every object.
 * Ownership: everything lives in one struct sim freed at the end of
 * kvsim_run.  Single-threaded.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include "des.h"
#include "kvsim.h"

enum { TH_BROKER = 0, TH_KVS = 1, TH_CONTENT = 2, TH_CLIENT = 3 };

enum msgtype {
    M_START,        /* client: a participant begins (fence request next) */
    M_FENCE,        /* client -> KVS */
    M_FENCE_RESP,   /* KVS -> client */
    M_FLUSH,        /* KVS internal: build and send a relay */
    M_RELAY,        /* KVS -> parent KVS */
    M_ACK,          /* parent KVS -> KVS */
    M_APPLY,        /* KVS rank 0 internal */
    M_EVENT,        /* setroot, broker threads down the tree, then KVS */
    M_LOOKUP,       /* client -> KVS */
    M_GET_RESP,     /* KVS -> client */
    M_LOAD,         /* KVS -> content, content -> parent content */
    M_LOAD_RESP,    /* content -> KVS or child content */
    M_SHM_GET,      /* client internal: a get read from the shared cache */
    M_LATE_TIMER,   /* KVS internal: acknowledge the kvs.relay-late held */
    M_LATE_ACK,     /* parent KVS -> KVS: a kvs.relay-late's answer */
};

struct msg {
    int type;
    int dst_broker;
    int dst_thread;
    int dst_client;         /* client server index, for TH_CLIENT */
    int src_broker;         /* requester of a load / sender of a relay */
    int src_thread;
    int part;
    int target;             /* producer read by a lookup */
    int obj;
    int count;
    int nops;
    double bytes;
    double blob_bytes;      /* relay: blob bytes carried */
    bool late;              /* relay: a kvs.relay-late (acknowledged
                             * KVSIM_LATE_ACK_DELAY later, in a batch) */
    int *objs;              /* a batched load (owned), or NULL */
    int nobj;
    int next_free;
};

struct server {
    int thread;
    int broker;             /* or client index */
    int *q;
    int qhead, qlen, qcap;
    bool running;
    bool want_cpu;
    int cur;                /* message being handled */
};

/* (key -> value) open addressing map; value -1 means absent */
struct intmap {
    uint64_t *keys;
    int64_t *vals;
    size_t cap, n;
};

struct waiter {
    int broker, thread, part, target, next;
};

/* A content module's loads from its parent (cfg->load_batch): misses wait
 * in 'batch' while KVSIM_LOAD_WINDOW batches are in flight.
 */
struct cstate {
    int inflight;
    int *batch;
    int nbatch, capbatch;
};

/* A batched load a content module answers once every object is here. */
struct batchop {
    int src_broker, src_thread;
    int *objs;
    int n, remaining;
};

struct kvs_state {
    int pend_count, pend_nops;
    double pend_bytes, pend_blob;
    bool dirty, inflight, flush_queued;
    int expect, total;      /* hold: the subtree's actors, those merged */
    bool late_sent;         /* hold: the fence went in a kvs.relay-late */
    int *waiters;           /* participants waiting for the fence */
    int nwaiters, capwaiters;
    int *late_from;         /* children whose kvs.relay-late awaits its
                             * answer (the batch timer runs while any) */
    int nlate, caplate;
};

struct part {
    int broker;
    int client;             /* client server */
    bool producer, consumer;
    double t_sync, t_op, t_cons;
    int access;
};

struct sim {
    const struct kvsim_config *cfg;
    const struct kap_costs *c;
    struct kvsim_result *res;
    des_t *des;
    struct server *servers;     /* 3 per broker, then clients */
    int nservers, nclients;
    struct msg *msgs;
    int nmsgs, capmsgs, free_msg;
    int *ready;                 /* servers waiting for a core (ring) */
    int rhead, rlen, rcap;
    int cores_free;
    double get_module, get_client;  /* the costs' factors, grown (costs.h) */
    double sync_grow;               /* the sync phase's growth factor */
    double sync_grow_client;        /* ... on the client */
    double byte_grow;               /* its byte costs' */
    struct kvs_state *kvs;
    struct cstate *cst;
    struct batchop *bops;
    int nbops, capbops;
    struct part *parts;
    int nactors;
    /* root */
    int root_count, root_nops;
    double root_bytes;
    /* objects */
    double *obj_size;
    bool *obj_isdir;
    int *obj_depth;             /* distance from the root object */
    int nobjs, capobjs;
    int **ppath;                /* per producer: object ids from the root */
    int *ppathlen;
    bool *primed;               /* objects the setroot event carries */
    double prime_bytes;
    struct intmap kcache, ccache, kpend, cpend;
    struct waiter *waiters;
    int nwait, capwait;
    int done;
    int error;
};

/* intmap */

static uint64_t mix (uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static int map_grow (struct intmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 1024;
    uint64_t *keys = malloc (cap * sizeof (*keys));
    int64_t *vals = malloc (cap * sizeof (*vals));
    if (!keys || !vals) {
        free (keys);
        free (vals);
        return -1;
    }
    for (size_t i = 0; i < cap; i++)
        keys[i] = UINT64_MAX;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->keys[i] == UINT64_MAX)
            continue;
        size_t j = mix (m->keys[i]) & (cap - 1);
        while (keys[j] != UINT64_MAX)
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i];
        vals[j] = m->vals[i];
    }
    free (m->keys);
    free (m->vals);
    m->keys = keys;
    m->vals = vals;
    m->cap = cap;
    return 0;
}

static int64_t map_get (const struct intmap *m, uint64_t key)
{
    if (m->cap == 0)
        return -1;
    size_t i = mix (key) & (m->cap - 1);
    while (m->keys[i] != UINT64_MAX) {
        if (m->keys[i] == key)
            return m->vals[i];
        i = (i + 1) & (m->cap - 1);
    }
    return -1;
}

static int map_set (struct intmap *m, uint64_t key, int64_t val)
{
    if ((m->n + 1) * 2 > m->cap && map_grow (m) < 0)
        return -1;
    size_t i = mix (key) & (m->cap - 1);
    while (m->keys[i] != UINT64_MAX && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (m->keys[i] == UINT64_MAX) {
        m->keys[i] = key;
        m->n++;
    }
    m->vals[i] = val;
    return 0;
}

static void map_free (struct intmap *m)
{
    free (m->keys);
    free (m->vals);
}

static uint64_t bkey (int broker, int obj)
{
    return ((uint64_t)(uint32_t)broker << 32) | (uint32_t)obj;
}

/* Tree */

int kvsim_parent (int r, int k)
{
    return r <= 0 || k < 1 ? -1 : (r - 1) / k;
}

int kvsim_depth (int r, int k)
{
    int d = 0;
    while (r > 0) {
        r = (r - 1) / k;
        d++;
    }
    return d;
}

/* next broker from b toward d */
static int next_hop (int b, int d, int k)
{
    int x = d;
    while (x > b) {
        int p = (x - 1) / k;
        if (p == b)
            return x;       /* d is below b, through child x */
        x = p;
    }
    return (b - 1) / k;     /* up */
}

static int nchildren (int b, int n, int k)
{
    long first = (long)b * k + 1;
    if (first >= n)
        return 0;
    long last = first + k - 1;
    if (last >= n)
        last = n - 1;
    return (int)(last - first + 1);
}

/* Sizes */

int kvsim_entry_bytes (int value_size)
{
    /* "name":{"data":"<base64>","type":"val","ver":1} inline up to 64
     * bytes; beyond, a valref naming one 71-character blobref per 64 KiB
     */
    if (value_size <= 64)
        return 44 + 4 * ((value_size + 2) / 3);
    int chunks = (value_size + 65535) / 65536;
    return 48 + 74 * chunks;
}

#define HDIR_FANOUT 16
#define HDIR_HEADER 80
#define HDIR_SLOT 74
#define DIR_OVERHEAD 40
#define DIRREF_ENTRY 110

static double dir_bytes (int n, int entry)
{
    return DIR_OVERHEAD + (double)n * entry;
}

void kvsim_dir_shape (int n, int entry_bytes, int threshold, int *path_objs,
                      int *path_bytes)
{
    int objs = 1;
    double bytes;
    if (n <= threshold) {
        bytes = dir_bytes (n, entry_bytes);
    }
    else {
        bytes = 0;
        double m = n;
        objs = 0;
        while (m > threshold) {
            bytes += HDIR_HEADER + HDIR_FANOUT * HDIR_SLOT;
            objs++;
            m /= HDIR_FANOUT;
        }
        bytes += dir_bytes ((int)ceil (m), entry_bytes);
        objs++;
    }
    if (path_objs)
        *path_objs = objs;
    if (path_bytes)
        *path_bytes = (int)bytes;
}

/* Objects */

static int obj_new (struct sim *s, double size, bool isdir, int depth)
{
    if (s->nobjs == s->capobjs) {
        int cap = s->capobjs ? s->capobjs * 2 : 256;
        double *sz = realloc (s->obj_size, cap * sizeof (*sz));
        if (sz)
            s->obj_size = sz;
        bool *d = realloc (s->obj_isdir, cap * sizeof (*d));
        if (d)
            s->obj_isdir = d;
        int *dp = realloc (s->obj_depth, cap * sizeof (*dp));
        if (dp)
            s->obj_depth = dp;
        if (!sz || !d || !dp)
            return -1;
        s->capobjs = cap;
    }
    s->obj_size[s->nobjs] = size;
    s->obj_isdir[s->nobjs] = isdir;
    s->obj_depth[s->nobjs] = depth;
    return s->nobjs++;
}

/* the name hash that picks a producer's slot at each hdir level */
static int slot_of (int producer, int level)
{
    return (int)(mix (((uint64_t)producer << 8) | (uint64_t)level) % HDIR_FANOUT);
}

/* Build the stored form of a directory holding 'members' (producer ids),
 * appending each member's path objects.  Returns the object id or -1.
 */
static int build_dir (struct sim *s, int *members, int n, int level, int depth,
                      int entry)
{
    int thr = s->cfg->hdir_threshold;
    int hb = s->cfg->hdir_bytes;
    if (n < 2 || level > 7
        || (n <= thr && (hb <= 0 || dir_bytes (n, entry) <= hb))) {
        int id = obj_new (s, dir_bytes (n, entry), true, depth);
        if (id < 0)
            return -1;
        for (int i = 0; i < n; i++) {
            int p = members[i];
            s->ppath[p][s->ppathlen[p]++] = id;
        }
        return id;
    }
    int id = obj_new (s, HDIR_HEADER + HDIR_FANOUT * HDIR_SLOT, true, depth);
    if (id < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        int p = members[i];
        s->ppath[p][s->ppathlen[p]++] = id;
    }
    int *tmp = malloc ((n > 0 ? n : 1) * sizeof (int));
    if (!tmp)
        return -1;
    for (int sl = 0; sl < HDIR_FANOUT; sl++) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (slot_of (members[i], level) == sl)
                tmp[m++] = members[i];
        }
        if (m > 0 && build_dir (s, tmp, m, level + 1, depth + 1, entry) < 0) {
            free (tmp);
            return -1;
        }
    }
    free (tmp);
    return id;
}

#define MAX_PATH 24

/* Keys: producer p's k-th is key p * K + k (K = keys_per_iter), so with
 * K = 1 a key is its producer.  ppath is indexed by key.
 */
static int nkeys (const struct kvsim_config *cfg)
{
    return cfg->producers * cfg->keys_per_iter;
}

static int build_objects (struct sim *s)
{
    const struct kvsim_config *cfg = s->cfg;
    int K = cfg->keys_per_iter;
    int P = nkeys (cfg);
    int entry = kvsim_entry_bytes (cfg->value_size) + 8;
    int root, kap, inst, iter;

    if (!(s->ppath = calloc (P > 0 ? P : 1, sizeof (int *)))
        || !(s->ppathlen = calloc (P > 0 ? P : 1, sizeof (int))))
        return -1;
    for (int p = 0; p < P; p++) {
        if (!(s->ppath[p] = malloc (MAX_PATH * sizeof (int))))
            return -1;
    }
    if ((root = obj_new (s, dir_bytes (2, DIRREF_ENTRY), true, 0)) < 0
        || (kap = obj_new (s, dir_bytes (2, DIRREF_ENTRY), true, 1)) < 0
        || (inst = obj_new (s, dir_bytes (1, DIRREF_ENTRY), true, 2)) < 0
        || (iter = obj_new (s, dir_bytes (cfg->ndirs, DIRREF_ENTRY), true, 3)) < 0)
        return -1;
    for (int p = 0; p < P; p++) {
        s->ppath[p][0] = root;
        s->ppath[p][1] = kap;
        s->ppath[p][2] = inst;
        s->ppath[p][3] = iter;
        s->ppathlen[p] = 4;
    }
    int *members = malloc ((P > 0 ? P : 1) * sizeof (int));
    if (!members)
        return -1;
    for (int d = 0; d < cfg->ndirs; d++) {
        int m = 0;
        for (int p = d; p < cfg->producers; p += cfg->ndirs) {
            for (int k = 0; k < K; k++)
                members[m++] = p * K + k;
        }
        if (m > 0 && build_dir (s, members, m, 0, 4, entry) < 0) {
            free (members);
            return -1;
        }
    }
    free (members);
    /* values over 64 bytes are blobs of up to 64 KiB */
    if (cfg->value_size > 64) {
        int chunks = (cfg->value_size + 65535) / 65536;
        int shared = -1;
        for (int p = 0; p < P; p++) {
            for (int ch = 0; ch < chunks; ch++) {
                double sz = ch < chunks - 1 ? 65536
                          : cfg->value_size - 65536.0 * (chunks - 1);
                int id;
                if (cfg->redundant && p > 0)
                    id = shared + ch;
                else if ((id = obj_new (s, sz, false, 99)) < 0)
                    return -1;
                if (cfg->redundant && p == 0 && ch == 0)
                    shared = id;
                if (s->ppathlen[p] < MAX_PATH)
                    s->ppath[p][s->ppathlen[p]++] = id;
            }
        }
    }
    /* the setroot event carries small new dirs, nearest the root first */
    if (!(s->primed = calloc (s->nobjs, sizeof (bool))))
        return -1;
    if (cfg->prime_max > 0) {
        for (int depth = 0; depth < 16; depth++) {
            for (int o = 0; o < s->nobjs; o++) {
                if (!s->obj_isdir[o] || s->obj_depth[o] != depth
                    || s->obj_size[o] > cfg->prime_max
                    || s->prime_bytes + s->obj_size[o] > cfg->prime_budget)
                    continue;
                s->primed[o] = true;
                s->prime_bytes += s->obj_size[o];
            }
        }
    }
    return 0;
}

/* Messages */

static int msg_new (struct sim *s)
{
    int i;
    if (s->free_msg >= 0) {
        i = s->free_msg;
        s->free_msg = s->msgs[i].next_free;
    }
    else {
        if (s->nmsgs == s->capmsgs) {
            int cap = s->capmsgs ? s->capmsgs * 2 : 4096;
            struct msg *m = realloc (s->msgs, cap * sizeof (*m));
            if (!m) {
                s->error = ENOMEM;
                return -1;
            }
            s->msgs = m;
            s->capmsgs = cap;
        }
        i = s->nmsgs++;
    }
    memset (&s->msgs[i], 0, sizeof (s->msgs[i]));
    s->msgs[i].next_free = -1;
    return i;
}

static void msg_free (struct sim *s, int i)
{
    free (s->msgs[i].objs);
    s->msgs[i].objs = NULL;
    s->msgs[i].next_free = s->free_msg;
    s->free_msg = i;
}

static int server_of (struct sim *s, int broker, int thread, int client)
{
    if (thread == TH_CLIENT)
        return 3 * s->cfg->brokers + client;
    return 3 * broker + thread;
}

static void server_kick (struct sim *s, int si);

static void arrive_cb (des_t *d, void *arg, int64_t si, int64_t mi)
{
    struct sim *s = arg;
    struct server *sv = &s->servers[si];
    if (sv->qlen == sv->qcap) {
        int cap = sv->qcap ? sv->qcap * 2 : 16;
        int *q = malloc (cap * sizeof (int));
        if (!q) {
            s->error = ENOMEM;
            des_stop (d);
            return;
        }
        for (int i = 0; i < sv->qlen; i++)
            q[i] = sv->q[(sv->qhead + i) % sv->qcap];
        free (sv->q);
        sv->q = q;
        sv->qhead = 0;
        sv->qcap = cap;
    }
    sv->q[(sv->qhead + sv->qlen) % sv->qcap] = (int)mi;
    sv->qlen++;
    server_kick (s, (int)si);
}

/* Deliver message mi to server si after 'delay'. */
static void deliver (struct sim *s, int si, int mi, double delay)
{
    if (des_schedule (s->des, delay, arrive_cb, s, si, mi) < 0) {
        s->error = errno;
        des_stop (s->des);
    }
    s->res->messages++;
}

/* Send from a thread of broker b (or a client) toward the message's
 * destination: through the local broker thread first, except between a
 * client and its broker's KVS with the direct channel (cfg->direct).
 */
static void send_from (struct sim *s, int mi, int from_broker, bool from_client)
{
    struct msg *m = &s->msgs[mi];
    double delay = from_client ? s->c->ipc_lat : 0;

    if (s->cfg->direct && m->dst_broker == from_broker
        && ((from_client && m->dst_thread == TH_KVS)
            || m->dst_thread == TH_CLIENT)) {
        deliver (s, server_of (s, from_broker, m->dst_thread, m->dst_client),
                 mi, s->c->ipc_lat);
        return;
    }
    deliver (s, server_of (s, from_broker, TH_BROKER, 0), mi, delay);
}

/* CPU */

static void job_done_cb (des_t *d, void *arg, int64_t si, int64_t unused);
static double job_cost (struct sim *s, struct server *sv, struct msg *m);

static void start_job (struct sim *s, int si)
{
    struct server *sv = &s->servers[si];
    int mi = sv->q[sv->qhead];
    sv->qhead = (sv->qhead + 1) % sv->qcap;
    sv->qlen--;
    sv->running = true;
    sv->cur = mi;
    double cost = job_cost (s, sv, &s->msgs[mi]);
    s->res->cpu += cost;
    s->res->cpu_thread[sv->thread] += cost;
    if (des_schedule (s->des, cost, job_done_cb, s, si, 0) < 0) {
        s->error = errno;
        des_stop (s->des);
    }
}

static void ready_push (struct sim *s, int si)
{
    if (s->rlen == s->rcap) {
        int cap = s->rcap ? s->rcap * 2 : 256;
        int *r = malloc (cap * sizeof (int));
        if (!r) {
            s->error = ENOMEM;
            des_stop (s->des);
            return;
        }
        for (int i = 0; i < s->rlen; i++)
            r[i] = s->ready[(s->rhead + i) % s->rcap];
        free (s->ready);
        s->ready = r;
        s->rhead = 0;
        s->rcap = cap;
    }
    s->ready[(s->rhead + s->rlen) % s->rcap] = si;
    s->rlen++;
    s->servers[si].want_cpu = true;
}

static void server_kick (struct sim *s, int si)
{
    struct server *sv = &s->servers[si];
    if (sv->running || sv->want_cpu || sv->qlen == 0)
        return;
    if (s->c->cores == 0) {
        start_job (s, si);
        return;
    }
    if (s->cores_free > 0) {
        s->cores_free--;
        start_job (s, si);
    }
    else
        ready_push (s, si);
}

static void job_effects (struct sim *s, struct server *sv, int mi);

static void job_done_cb (des_t *d, void *arg, int64_t si, int64_t unused)
{
    struct sim *s = arg;
    struct server *sv = &s->servers[si];
    int mi = sv->cur;

    sv->running = false;
    job_effects (s, sv, mi);
    if (s->c->cores == 0) {
        if (sv->qlen > 0)
            start_job (s, (int)si);
        return;
    }
    /* give the core to the longest waiter; queue ourselves behind */
    if (sv->qlen > 0) {
        if (s->rlen == 0) {
            start_job (s, (int)si);
            return;
        }
        ready_push (s, (int)si);
    }
    if (s->rlen > 0) {
        int next = s->ready[s->rhead];
        s->rhead = (s->rhead + 1) % s->rcap;
        s->rlen--;
        s->servers[next].want_cpu = false;
        start_job (s, next);
    }
    else
        s->cores_free++;
}

/* KAP roles, as kap_roles.c */

static bool is_producer (const struct kvsim_config *cfg, int r)
{
    return r < cfg->producers;
}

static bool is_consumer (const struct kvsim_config *cfg, int r)
{
    return r >= cfg->participants - cfg->consumers && r < cfg->participants;
}

static int target_of (const struct kvsim_config *cfg, int r, int i)
{
    int k = r - (cfg->participants - cfg->consumers);
    int mapped = k % cfg->producers;
    return (mapped + cfg->access_stride * i) % cfg->producers;
}

static double op_bytes (const struct kvsim_config *cfg)
{
    return 40 + kvsim_entry_bytes (cfg->value_size);
}

static double blob_bytes (const struct kvsim_config *cfg)
{
    return cfg->value_size > 64 ? cfg->value_size : 0;
}

/* Costs of a job, charged when it starts. */

static int lookup_walk (struct sim *s, int b, int target, int *missing)
{
    int walked = 0;
    *missing = -1;
    for (int i = 0; i < s->ppathlen[target]; i++) {
        int o = s->ppath[target][i];
        walked++;
        if (b != 0 && map_get (&s->kcache, bkey (b, o)) < 0) {
            *missing = o;
            break;
        }
    }
    return walked;
}

static int waiters_count (struct sim *s, int64_t head)
{
    int n = 0;
    while (head >= 0) {
        n++;
        head = s->waiters[head].next;
    }
    return n;
}

static double job_cost_base (struct sim *s, struct server *sv, struct msg *m);

/* Messages of the sync phase: a participant's start (its puts) and fence,
 * the relays and their acknowledgements, the apply, the setroot event and
 * the fence's answers.
 */
static bool sync_msg (int type)
{
    switch (type) {
        case M_START: case M_FENCE: case M_FENCE_RESP: case M_FLUSH:
        case M_RELAY: case M_ACK: case M_APPLY: case M_EVENT:
        case M_LATE_TIMER: case M_LATE_ACK:
            return true;
    }
    return false;
}

/* Under load a message costs each thread other than what the loops of
 * calibrate.sh measure (a hundred threads waking one another on two
 * cores; requests arriving in bursts, read and answered together), and a
 * fence's values cost more per byte than a copy: the factors per thread
 * kind and phase and the byte costs come from loaded runs (calibrate.sh).
 */
static double job_cost (struct sim *s, struct server *sv, struct msg *m)
{
    double cost = job_cost_base (s, sv, m);
    double bytes = m->bytes + m->blob_bytes;

    /* the consumer phase: no broker factor (on the direct channel gets
     * do not cross the broker thread; loads that do are charged as the
     * loops measured them)
     */
    if (m->type == M_SHM_GET)
        return cost;    /* measured as it is, a loop of them */
    if (!sync_msg (m->type)) {
        switch (sv->thread) {
            case TH_BROKER:
                return cost;
            case TH_KVS:
            case TH_CONTENT:
                return cost * s->get_module;
            default:
                return cost * s->get_client;
        }
    }
    switch (sv->thread) {
        case TH_BROKER:
            cost *= s->c->sync_broker;
            break;
        case TH_KVS:
        case TH_CONTENT:
            cost *= s->c->sync_module;
            break;
        default:
            cost *= s->c->sync_client;
    }
    /* and the bytes of the sync phase's messages: copied and forwarded by
     * the broker, parsed, hashed and stored by the KVS (calibrated, like
     * the factors, on loaded fences).  Not the setroot event's bytes on
     * the KVS: it keeps the primed objects as they arrived and scans them
     * only when read (load_byte), so the 1 KiB fence's extra cost there
     * is its values' (requests, relays, the apply's stores).
     */
    double bytecost;
    if (sv->thread == TH_BROKER)
        bytecost = s->c->route_byte * bytes;
    else if (sv->thread == TH_KVS && m->type != M_EVENT)
        bytecost = s->c->kvs_byte * bytes;
    else if (sv->thread == TH_CLIENT)
        return cost * s->sync_grow_client;
    else
        return cost * s->sync_grow;
    s->res->bytes_thread[sv->thread] += bytes;
    /* and both grow with the instance on shared cores, each at its own
     * measured rate (costs.h)
     */
    return cost * s->sync_grow + bytecost * s->byte_grow;
}

/* What broker b's content module pays for an object the parent sent:
 * keeping its bytes, and passing them to each waiter.
 */
static double kept_cost (struct sim *s, int b, int obj)
{
    return s->c->load_byte * s->obj_size[obj]
           * (1 + waiters_count (s, map_get (&s->cpend, bkey (b, obj))));
}

static double job_cost_base (struct sim *s, struct server *sv, struct msg *m)
{
    const struct kap_costs *c = s->c;
    int b = sv->broker;
    /* the KVS's own socket work for each message it takes from or gives
     * to a client on the direct channel (the broker thread's route, when
     * the message goes through it, is charged there)
     */
    double dmsg = s->cfg->direct ? c->direct_msg : 0;

    switch (sv->thread) {
        case TH_CLIENT:
            /* a producer's put (write-back: only the client's CPU) comes
             * before its fence; in one crowd process the puts of every
             * participant take turns, delaying the later fences
             */
            if (m->type == M_START && s->parts[m->part].producer)
                return c->client_msg + c->put + c->put_byte * s->cfg->value_size;
            if (m->type == M_SHM_GET)
                return c->shm_get;
            return c->client_msg;
        case TH_BROKER:
            if (m->type == M_EVENT)
                return c->route + c->event_fwd * nchildren (b, s->cfg->brokers,
                                                            s->cfg->k);
            return c->route;
        case TH_CONTENT:
            if (m->type == M_LOAD)
                return c->load_serve * (m->objs ? m->nobj : 1);
            /* a load answered from upstream: keep it, pass it on */
            if (m->objs) {
                double cost = 0;
                for (int i = 0; i < m->nobj; i++)
                    cost += kept_cost (s, b, m->objs[i]);
                return cost;
            }
            return kept_cost (s, b, m->obj);
        case TH_KVS:
            switch (m->type) {
                case M_FENCE:
                    return c->fence_req + c->op_encode * m->nops + dmsg;
                case M_FLUSH:
                    return c->relay_send
                           + c->relay_byte * (s->kvs[b].pend_bytes + s->kvs[b].pend_blob);
                case M_RELAY:
                    return c->relay_recv + c->relay_byte * (m->bytes + m->blob_bytes);
                case M_ACK:
                case M_LATE_ACK:
                    return c->ack;
                case M_LATE_TIMER:
                    /* after the run's end nothing is measured (late_timer) */
                    if (s->done == s->nactors)
                        return 0;
                    return c->respond * s->kvs[b].nlate;
                case M_APPLY: {
                    double store = s->prime_bytes;
                    for (int o = 0; o < s->nobjs; o++)
                        store += s->obj_size[o];
                    return c->apply + c->apply_op * s->root_nops
                           + c->store_byte * store
                           + (c->respond + dmsg) * s->kvs[0].nwaiters;
                }
                case M_EVENT:
                    return c->setroot + c->load_byte * s->prime_bytes
                           + (b == 0 ? 0 : (c->respond + dmsg) * s->kvs[b].nwaiters);
                case M_LOOKUP: {
                    int missing;
                    int walked = lookup_walk (s, b, m->target, &missing);
                    /* answered now, or a load sent and the answer later */
                    return c->lookup + c->walk * walked + dmsg
                           + (missing >= 0 ? c->load_send : dmsg);
                }
                case M_LOAD_RESP: {
                    int64_t head = map_get (&s->kpend, bkey (b, m->obj));
                    int n = waiters_count (s, head);
                    return c->load_byte * s->obj_size[m->obj]
                           + n * (c->lookup + c->walk * 4 + dmsg);
                }
            }
    }
    return 0;
}

/* Effects */

static void participant_next (struct sim *s, int p);

static void send_to_client (struct sim *s, int b, int p, int type, double bytes)
{
    int mi = msg_new (s);
    if (mi < 0)
        return;
    struct msg *m = &s->msgs[mi];
    m->type = type;
    m->dst_broker = b;
    m->dst_thread = TH_CLIENT;
    m->dst_client = s->parts[p].client;
    m->part = p;
    m->bytes = bytes;
    send_from (s, mi, b, false);
}

/* With 'hold', the relay that completes the subtree is a kvs.relay-late
 * (fence.c): sent even while a relay is in flight, and acknowledged
 * KVSIM_LATE_ACK_DELAY after the first of a batch (late_ack_later): off
 * the fence's path, but on a fence longer than the delay the answers
 * take the shared cores' time as canopy's do.
 */
static bool completes (struct sim *s, const struct kvs_state *k)
{
    return s->cfg->hold && !k->late_sent && k->total >= k->expect;
}

/* Append x to a growing array (*v, *n used of *cap).  On ENOMEM the run
 * stops with the error, and nothing is appended.
 */
static int push_int (struct sim *s, int **v, int *n, int *cap, int x)
{
    if (*n == *cap) {
        int ncap = *cap ? *cap * 2 : 8;
        int *nv = realloc (*v, ncap * sizeof (int));
        if (!nv) {
            s->error = ENOMEM;
            des_stop (s->des);
            return -1;
        }
        *v = nv;
        *cap = ncap;
    }
    (*v)[(*n)++] = x;
    return 0;
}

static void late_ack_later (struct sim *s, int b, int child)
{
    struct kvs_state *k = &s->kvs[b];
    if (push_int (s, &k->late_from, &k->nlate, &k->caplate, child) < 0)
        return;
    if (k->nlate == 1) {
        int mi = msg_new (s);
        if (mi < 0)
            return;
        s->msgs[mi].type = M_LATE_TIMER;
        deliver (s, server_of (s, b, TH_KVS, 0), mi, KVSIM_LATE_ACK_DELAY);
        s->res->messages--;     /* internal, not a message */
    }
}

/* The batch timer: answer every kvs.relay-late held.  Once every
 * participant has finished, the run is over (what is measured ends
 * there), so the answers are dropped rather than charged.
 */
static void late_timer (struct sim *s, int b)
{
    struct kvs_state *k = &s->kvs[b];
    int n = k->nlate;
    k->nlate = 0;
    if (s->done == s->nactors)
        return;
    for (int i = 0; i < n; i++) {
        int ai = msg_new (s);
        if (ai < 0)
            return;
        s->msgs[ai].type = M_LATE_ACK;
        s->msgs[ai].dst_broker = s->kvs[b].late_from[i];
        s->msgs[ai].dst_thread = TH_KVS;
        s->msgs[ai].bytes = 60;
        s->res->late_acks++;
        send_from (s, ai, b, false);
    }
}

static void queue_flush (struct sim *s, int b)
{
    struct kvs_state *k = &s->kvs[b];
    if (!k->dirty || k->flush_queued || (k->inflight && !completes (s, k)))
        return;
    if (s->cfg->hold && k->total < k->expect
        && k->pend_bytes + k->pend_blob < KVSIM_HOLD_BYTES)
        return;     /* held: the rest of the subtree is on its way */
    int mi = msg_new (s);
    if (mi < 0)
        return;
    s->msgs[mi].type = M_FLUSH;
    k->flush_queued = true;
    deliver (s, server_of (s, b, TH_KVS, 0), mi, 0);
    s->res->messages--;     /* internal, not a message */
}

static void contribute (struct sim *s, int b, int count, int nops, double bytes,
                        double blob)
{
    struct kvs_state *k = &s->kvs[b];
    if (b == 0) {
        s->root_count += count;
        s->root_nops += nops;
        s->root_bytes += bytes;
        if (s->root_count == s->nactors) {
            int mi = msg_new (s);
            if (mi < 0)
                return;
            s->msgs[mi].type = M_APPLY;
            deliver (s, server_of (s, 0, TH_KVS, 0), mi, 0);
            s->res->messages--;
        }
        return;
    }
    k->pend_count += count;
    k->total += count;
    k->pend_nops += nops;
    k->pend_bytes += bytes;
    if (s->cfg->redundant)
        k->pend_blob = blob > 0 ? blob : k->pend_blob;
    else
        k->pend_blob += blob;
    k->dirty = true;
    queue_flush (s, b);
}

static void add_waiter (struct sim *s, int b, int p)
{
    struct kvs_state *k = &s->kvs[b];
    (void)push_int (s, &k->waiters, &k->nwaiters, &k->capwaiters, p);
}

static int64_t push_waiter (struct sim *s, int64_t head, int broker, int thread,
                            int part, int target)
{
    if (s->nwait == s->capwait) {
        int cap = s->capwait ? s->capwait * 2 : 1024;
        struct waiter *w = realloc (s->waiters, cap * sizeof (*w));
        if (!w) {
            s->error = ENOMEM;
            return head;
        }
        s->waiters = w;
        s->capwait = cap;
    }
    int i = s->nwait++;
    s->waiters[i] = (struct waiter){ broker, thread, part, target, (int)head };
    return i;
}

static void send_load (struct sim *s, int b, int thread_from, int to_broker, int obj)
{
    int mi = msg_new (s);
    if (mi < 0)
        return;
    struct msg *m = &s->msgs[mi];
    m->type = M_LOAD;
    m->dst_broker = to_broker;
    m->dst_thread = TH_CONTENT;
    m->src_broker = b;
    m->src_thread = thread_from;
    m->obj = obj;
    m->bytes = 100;
    send_from (s, mi, b, false);
}

static void send_load_resp (struct sim *s, int b, int to_broker, int to_thread,
                            int obj)
{
    int mi = msg_new (s);
    if (mi < 0)
        return;
    struct msg *m = &s->msgs[mi];
    m->type = M_LOAD_RESP;
    m->dst_broker = to_broker;
    m->dst_thread = to_thread;
    m->obj = obj;
    m->bytes = s->obj_size[obj];
    if (to_broker != b) {
        s->res->loads++;
        s->res->load_bytes += (uint64_t)m->bytes;
    }
    send_from (s, mi, b, false);
}

/* KVS: walk a lookup; respond, or wait for a load. */
static void do_lookup (struct sim *s, int b, int p, int target)
{
    int missing;
    (void)lookup_walk (s, b, target, &missing);
    if (missing < 0) {
        double bytes = kvsim_entry_bytes (s->cfg->value_size) + blob_bytes (s->cfg);
        send_to_client (s, b, p, M_GET_RESP, bytes);
        return;
    }
    uint64_t key = bkey (b, missing);
    int64_t head = map_get (&s->kpend, key);
    bool first = head < 0;
    head = push_waiter (s, head, b, TH_KVS, p, target);
    if (map_set (&s->kpend, key, head) < 0) {
        s->error = ENOMEM;
        return;
    }
    if (first)
        send_load (s, b, TH_KVS, b, missing);
}

static void route_done (struct sim *s, int b, int mi)
{
    struct msg *m = &s->msgs[mi];
    const struct kvsim_config *cfg = s->cfg;

    if (m->type == M_EVENT) {
        long first = (long)b * cfg->k + 1;
        for (long ch = first; ch < first + cfg->k && ch < cfg->brokers; ch++) {
            int ci = msg_new (s);
            if (ci < 0)
                return;
            m = &s->msgs[mi];   /* msgs may have moved */
            s->msgs[ci] = *m;
            s->msgs[ci].next_free = -1;
            s->msgs[ci].dst_broker = (int)ch;
            deliver (s, server_of (s, (int)ch, TH_BROKER, 0), ci,
                     s->c->net_lat + m->bytes / s->c->net_bw);
        }
        deliver (s, server_of (s, b, TH_KVS, 0), mi, 0);
        return;
    }
    if (m->dst_broker == b) {
        double delay = m->dst_thread == TH_CLIENT ? s->c->ipc_lat : 0;
        deliver (s, server_of (s, b, m->dst_thread, m->dst_client), mi, delay);
        return;
    }
    int nb = next_hop (b, m->dst_broker, cfg->k);
    deliver (s, server_of (s, nb, TH_BROKER, 0), mi,
             s->c->net_lat + (m->bytes + m->blob_bytes) / s->c->net_bw);
}

static void kvs_done (struct sim *s, int b, int mi)
{
    struct msg *m = &s->msgs[mi];
    struct kvs_state *k = &s->kvs[b];
    const struct kvsim_config *cfg = s->cfg;

    switch (m->type) {
        case M_FENCE:
            add_waiter (s, b, m->part);
            contribute (s, b, 1, m->nops, m->bytes, m->blob_bytes);
            break;
        case M_FLUSH: {
            k->flush_queued = false;
            bool late = completes (s, k);
            if (!k->dirty || (k->inflight && !late))
                break;
            int ri = msg_new (s);
            if (ri < 0)
                break;
            struct msg *r = &s->msgs[ri];
            r->type = M_RELAY;
            r->dst_broker = kvsim_parent (b, cfg->k);
            r->dst_thread = TH_KVS;
            r->src_broker = b;
            r->count = k->pend_count;
            r->nops = k->pend_nops;
            r->bytes = k->pend_bytes + 200;
            r->blob_bytes = k->pend_blob;
            s->res->relays++;
            s->res->relay_bytes += (uint64_t)(r->bytes + r->blob_bytes);
            k->pend_count = k->pend_nops = 0;
            k->pend_bytes = k->pend_blob = 0;
            k->dirty = false;
            r->late = late;
            if (late) {
                k->late_sent = true;
                s->res->relays_late++;
            }
            else
                k->inflight = true;
            send_from (s, ri, b, false);
            break;
        }
        case M_RELAY: {
            if (m->late) {
                int from = m->src_broker;
                contribute (s, b, m->count, m->nops, m->bytes - 200, m->blob_bytes);
                late_ack_later (s, b, from);
                break;
            }
            int ai = msg_new (s);
            if (ai < 0)
                break;
            m = &s->msgs[mi];
            s->msgs[ai].type = M_ACK;
            s->msgs[ai].dst_broker = m->src_broker;
            s->msgs[ai].dst_thread = TH_KVS;
            s->msgs[ai].bytes = 60;
            send_from (s, ai, b, false);
            contribute (s, b, m->count, m->nops, m->bytes - 200, m->blob_bytes);
            break;
        }
        case M_ACK:
            k->inflight = false;
            queue_flush (s, b);
            break;
        case M_LATE_TIMER:
            late_timer (s, b);
            break;
        case M_LATE_ACK:
            break;      /* the child forgets the relay (late_ack_cb) */
        case M_APPLY: {
            /* rank 0 answers its own participants at once */
            for (int i = 0; i < k->nwaiters; i++)
                send_to_client (s, 0, k->waiters[i], M_FENCE_RESP, 60);
            k->nwaiters = 0;
            int ei = msg_new (s);
            if (ei < 0)
                break;
            s->msgs[ei].type = M_EVENT;
            s->msgs[ei].bytes = 300 + s->prime_bytes;
            deliver (s, server_of (s, 0, TH_BROKER, 0), ei, 0);
            break;
        }
        case M_EVENT:
            if (b != 0) {
                for (int o = 0; o < s->nobjs; o++) {
                    if (s->primed[o] && map_set (&s->kcache, bkey (b, o), 1) < 0)
                        s->error = ENOMEM;
                }
            }
            for (int i = 0; i < k->nwaiters; i++)
                send_to_client (s, b, k->waiters[i], M_FENCE_RESP, 60);
            k->nwaiters = 0;
            break;
        case M_LOOKUP:
            do_lookup (s, b, m->part, m->target);
            break;
        case M_LOAD_RESP: {
            uint64_t key = bkey (b, m->obj);
            int64_t head = map_get (&s->kpend, key);
            if (map_set (&s->kcache, key, 1) < 0 || map_set (&s->kpend, key, -1) < 0) {
                s->error = ENOMEM;
                break;
            }
            /* restart the waiting lookups (oldest first) */
            int n = waiters_count (s, head);
            int *order = malloc ((n > 0 ? n : 1) * 2 * sizeof (int));
            if (!order) {
                s->error = ENOMEM;
                break;
            }
            for (int i = n - 1; i >= 0; i--) {
                order[2 * i] = s->waiters[head].part;
                order[2 * i + 1] = s->waiters[head].target;
                head = s->waiters[head].next;
            }
            for (int i = 0; i < n; i++)
                do_lookup (s, b, order[2 * i], order[2 * i + 1]);
            free (order);
            break;
        }
    }
}

/* Batched loads (cfg->load_batch, canopy's content.load-batch): a content
 * module sends a miss upstream at once while fewer than
 * KVSIM_LOAD_WINDOW batches are in flight, else it joins the next batch,
 * which goes when one comes back (at most KVSIM_LOAD_BATCH_MAX objects).
 */
static int *objs_dup (const int *objs, int n)
{
    int *v = malloc ((n > 0 ? n : 1) * sizeof (int));
    if (v)
        memcpy (v, objs, n * sizeof (int));
    return v;
}

static void content_flush (struct sim *s, int b)
{
    struct cstate *cs = &s->cst[b];
    while (cs->inflight < KVSIM_LOAD_WINDOW && cs->nbatch > 0) {
        int n = cs->nbatch < KVSIM_LOAD_BATCH_MAX ? cs->nbatch : KVSIM_LOAD_BATCH_MAX;
        int mi = msg_new (s);
        if (mi < 0)
            return;
        struct msg *m = &s->msgs[mi];
        if (!(m->objs = objs_dup (cs->batch, n))) {
            s->error = ENOMEM;
            return;
        }
        m->nobj = n;
        m->type = M_LOAD;
        m->dst_broker = kvsim_parent (b, s->cfg->k);
        m->dst_thread = TH_CONTENT;
        m->src_broker = b;
        m->src_thread = TH_CONTENT;
        m->bytes = 100 + 72.0 * n;
        memmove (cs->batch, cs->batch + n, (cs->nbatch - n) * sizeof (int));
        cs->nbatch -= n;
        cs->inflight++;
        s->res->load_batches++;
        send_from (s, mi, b, false);
    }
}

/* A content module's miss goes to its parent: at once, or (load_batch)
 * into the queue, sent by content_flush unless 'hold' (a child's batch
 * is queued whole, then flushed once).
 */
static void upstream_load (struct sim *s, int b, int obj, bool hold)
{
    if (!s->cfg->load_batch) {
        send_load (s, b, TH_CONTENT, kvsim_parent (b, s->cfg->k), obj);
        return;
    }
    struct cstate *cs = &s->cst[b];
    if (cs->nbatch == cs->capbatch) {
        int cap = cs->capbatch ? cs->capbatch * 2 : 16;
        int *v = realloc (cs->batch, cap * sizeof (int));
        if (!v) {
            s->error = ENOMEM;
            return;
        }
        cs->batch = v;
        cs->capbatch = cap;
    }
    cs->batch[cs->nbatch++] = obj;
    if (!hold)
        content_flush (s, b);
}

static void send_batch_resp (struct sim *s, int b, struct batchop *op)
{
    int mi = msg_new (s);
    if (mi < 0)
        return;
    struct msg *m = &s->msgs[mi];
    m->type = M_LOAD_RESP;
    m->dst_broker = op->src_broker;
    m->dst_thread = op->src_thread;
    m->objs = op->objs;         /* the message takes them */
    m->nobj = op->n;
    op->objs = NULL;
    m->bytes = 0;
    for (int i = 0; i < m->nobj; i++)
        m->bytes += s->obj_size[m->objs[i]];
    s->res->loads += m->nobj;
    s->res->load_bytes += (uint64_t)m->bytes;
    send_from (s, mi, b, false);
}

/* Waiters parked on a content module's pending object: a KVS module or a
 * child's single load (thread >= 0), or a batched load (thread -2, the
 * batch op's index in 'part').
 */
static int park (struct sim *s, int b, int obj, int broker, int thread, int part,
                 bool hold)
{
    uint64_t key = bkey (b, obj);
    int64_t head = map_get (&s->cpend, key);
    bool first = head < 0;
    head = push_waiter (s, head, broker, thread, part, -1);
    if (map_set (&s->cpend, key, head) < 0) {
        s->error = ENOMEM;
        return -1;
    }
    if (first)
        upstream_load (s, b, obj, hold);
    return 0;
}

static void batch_load (struct sim *s, int b, struct msg *m)
{
    if (s->nbops == s->capbops) {
        int cap = s->capbops ? s->capbops * 2 : 256;
        struct batchop *v = realloc (s->bops, cap * sizeof (*v));
        if (!v) {
            s->error = ENOMEM;
            return;
        }
        s->bops = v;
        s->capbops = cap;
    }
    int oi = s->nbops++;
    struct batchop *op = &s->bops[oi];
    op->src_broker = m->src_broker;
    op->src_thread = m->src_thread;
    op->objs = m->objs;         /* the op takes them */
    op->n = m->nobj;
    op->remaining = 1;          /* until every object is looked at */
    m->objs = NULL;
    for (int i = 0; i < op->n; i++) {
        int obj = s->bops[oi].objs[i];
        if (b == 0 || map_get (&s->ccache, bkey (b, obj)) >= 0)
            continue;
        s->bops[oi].remaining++;
        if (park (s, b, obj, b, -2, oi, true) < 0)
            return;
    }
    content_flush (s, b);
    if (--s->bops[oi].remaining == 0)
        send_batch_resp (s, b, &s->bops[oi]);
}

/* An object came from the parent: cache it and answer its waiters. */
static void content_arrived (struct sim *s, int b, int obj)
{
    uint64_t key = bkey (b, obj);
    int64_t head = map_get (&s->cpend, key);
    if (map_set (&s->ccache, key, 1) < 0 || map_set (&s->cpend, key, -1) < 0) {
        s->error = ENOMEM;
        return;
    }
    while (head >= 0) {
        struct waiter w = s->waiters[head];
        if (w.thread == -2) {
            struct batchop *op = &s->bops[w.part];
            if (--op->remaining == 0)
                send_batch_resp (s, b, op);
        }
        else
            send_load_resp (s, b, w.broker, w.thread, obj);
        head = w.next;
    }
}

static void content_done (struct sim *s, int b, int mi)
{
    struct msg *m = &s->msgs[mi];

    if (m->type == M_LOAD) {
        if (m->objs) {
            batch_load (s, b, m);
            return;
        }
        if (b == 0 || map_get (&s->ccache, bkey (b, m->obj)) >= 0) {
            send_load_resp (s, b, m->src_broker, m->src_thread, m->obj);
            return;
        }
        (void)park (s, b, m->obj, m->src_broker, m->src_thread, -1, false);
        return;
    }
    /* M_LOAD_RESP from the parent */
    if (m->objs) {
        for (int i = 0; i < m->nobj; i++)
            content_arrived (s, b, m->objs[i]);
        s->cst[b].inflight--;
        content_flush (s, b);
        return;
    }
    content_arrived (s, b, m->obj);
}

static void client_done (struct sim *s, int mi)
{
    struct msg *m = &s->msgs[mi];
    struct part *pp = &s->parts[m->part];
    const struct kvsim_config *cfg = s->cfg;
    double start = des_now (s->des) - s->c->client_msg;

    switch (m->type) {
        case M_START: {
            pp->t_sync = start;
            int fi = msg_new (s);
            if (fi < 0)
                return;
            struct msg *f = &s->msgs[fi];
            f->type = M_FENCE;
            f->dst_broker = pp->broker;
            f->dst_thread = TH_KVS;
            f->part = s->msgs[mi].part;
            f->nops = pp->producer ? cfg->keys_per_iter : 0;
            f->bytes = pp->producer ? op_bytes (cfg) * cfg->keys_per_iter : 0;
            f->blob_bytes = pp->producer ? blob_bytes (cfg)
                                           * (cfg->redundant ? 1 : cfg->keys_per_iter)
                                         : 0;
            send_from (s, fi, pp->broker, true);
            return;
        }
        case M_FENCE_RESP: {
            double lat = start - pp->t_sync;
            tstat_push (&s->res->sync, lat);
            if (lat > s->res->sync_wall)
                s->res->sync_wall = lat;
            pp->t_cons = pp->t_op = start;
            pp->access = 0;
            participant_next (s, m->part);
            return;
        }
        case M_GET_RESP:
            tstat_push (&s->res->get, start - pp->t_op);
            pp->t_op = start;
            participant_next (s, m->part);
            return;
        case M_SHM_GET: {
            double end = des_now (s->des);
            tstat_push (&s->res->get, end - pp->t_op);
            pp->t_op = end;
            participant_next (s, m->part);
            return;
        }
    }
}

/* A participant's next get, or its end. */
static void participant_next (struct sim *s, int p)
{
    struct part *pp = &s->parts[p];
    const struct kvsim_config *cfg = s->cfg;

    if (!pp->consumer || pp->access >= cfg->access_count * cfg->keys_per_iter) {
        double now = des_now (s->des);
        if (pp->consumer && now - pp->t_cons > s->res->consumer_wall)
            s->res->consumer_wall = now - pp->t_cons;
        if (now > s->res->total_wall)
            s->res->total_wall = now;
        s->done++;
        return;
    }
    pp->access++;
    int li = msg_new (s);
    if (li < 0)
        return;
    struct msg *l = &s->msgs[li];
    l->part = p;
    /* access i (1..access_count) reads every key of its producer */
    int i = (pp->access - 1) / cfg->keys_per_iter + 1;
    int k = (pp->access - 1) % cfg->keys_per_iter;
    l->target = target_of (cfg, p, i) * cfg->keys_per_iter + k;
    if (cfg->shm && cfg->clients == KVSIM_MPI) {
        int missing;
        (void)lookup_walk (s, pp->broker, l->target, &missing);
        if (missing < 0) {
            /* every object is in the broker's cache, so in its segment */
            l->type = M_SHM_GET;
            l->dst_broker = pp->broker;
            l->dst_thread = TH_CLIENT;
            l->dst_client = pp->client;
            s->res->shm_gets++;
            deliver (s, server_of (s, pp->broker, TH_CLIENT, pp->client), li, 0);
            s->res->messages--;     /* internal, not a message */
            return;
        }
    }
    l->type = M_LOOKUP;
    l->dst_broker = pp->broker;
    l->dst_thread = TH_KVS;
    l->bytes = 80;
    send_from (s, li, pp->broker, true);
}

static void job_effects (struct sim *s, struct server *sv, int mi)
{
    switch (sv->thread) {
        case TH_BROKER:
            route_done (s, sv->broker, mi);
            return;     /* the message travels on */
        case TH_KVS:
            kvs_done (s, sv->broker, mi);
            break;
        case TH_CONTENT:
            content_done (s, sv->broker, mi);
            break;
        case TH_CLIENT:
            client_done (s, mi);
            break;
    }
    msg_free (s, mi);
}

/* Set-up and run */

void kvsim_config_default (struct kvsim_config *cfg)
{
    memset (cfg, 0, sizeof (*cfg));
    cfg->brokers = 1;
    cfg->k = 2;
    cfg->participants = 1;
    cfg->producers = 1;
    cfg->consumers = 1;
    cfg->value_size = 8;
    cfg->access_count = 1;
    cfg->access_stride = 1;
    cfg->keys_per_iter = 1;
    cfg->ndirs = 1;
    cfg->clients = KVSIM_CROWD;
    cfg->hdir_threshold = 128;
    cfg->hdir_bytes = 16384;    /* canopy's kvs.hdir-bytes */
    cfg->prime_max = 0;
    cfg->prime_budget = 0;
    cfg->direct = false;
}

static int check_config (const struct kvsim_config *cfg)
{
    if (cfg->brokers < 1 || cfg->k < 1 || cfg->participants < 1
        || cfg->producers < 1 || cfg->producers > cfg->participants
        || cfg->consumers < 0 || cfg->consumers > cfg->participants
        || cfg->value_size < 0 || cfg->access_count < 0
        || cfg->access_stride < 1 || cfg->ndirs < 1 || cfg->keys_per_iter < 1
        || cfg->hdir_threshold < 2 || cfg->hdir_bytes < 0 || cfg->prime_max < 0
        || cfg->prime_budget < 0) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static int part_broker (const struct kvsim_config *cfg, int r)
{
    int n = cfg->participants, b = cfg->brokers;
    if (!cfg->block)
        return r % b;
    int base = n / b, extra = n % b, cut = extra * (base + 1);
    if (r < cut)
        return r / (base + 1);
    return extra + (r - cut) / (base > 0 ? base : 1);
}

static void sim_free (struct sim *s)
{
    for (int i = 0; i < s->nservers; i++)
        free (s->servers[i].q);
    free (s->servers);
    for (int i = 0; s->msgs && i < s->nmsgs; i++)
        free (s->msgs[i].objs);
    free (s->msgs);
    free (s->ready);
    for (int i = 0; i < s->nbops; i++)
        free (s->bops[i].objs);
    free (s->bops);
    if (s->cst) {
        for (int b = 0; b < s->cfg->brokers; b++)
            free (s->cst[b].batch);
    }
    free (s->cst);
    if (s->kvs) {
        for (int b = 0; b < s->cfg->brokers; b++) {
            free (s->kvs[b].waiters);
            free (s->kvs[b].late_from);
        }
    }
    free (s->kvs);
    free (s->parts);
    free (s->obj_size);
    free (s->obj_isdir);
    free (s->obj_depth);
    if (s->ppath) {
        for (int p = 0; p < nkeys (s->cfg); p++)
            free (s->ppath[p]);
    }
    free (s->ppath);
    free (s->ppathlen);
    free (s->primed);
    map_free (&s->kcache);
    map_free (&s->ccache);
    map_free (&s->kpend);
    map_free (&s->cpend);
    free (s->waiters);
    des_destroy (s->des);
}

int kvsim_run (const struct kvsim_config *cfg, const struct kap_costs *costs,
               struct kvsim_result *res)
{
    struct sim s;
    int rc = -1;

    if (!cfg || !costs || !res || check_config (cfg) < 0) {
        errno = EINVAL;
        return -1;
    }
    memset (&s, 0, sizeof (s));
    memset (res, 0, sizeof (*res));
    tstat_init (&res->sync);
    tstat_init (&res->get);
    s.cfg = cfg;
    s.c = costs;
    s.res = res;
    s.free_msg = -1;
    s.cores_free = costs->cores;
    s.get_module = costs->get_module;
    s.get_client = costs->get_client;
    s.sync_grow = 1;
    s.sync_grow_client = 1;
    s.byte_grow = 1;
    if (costs->cores > 0 && costs->grow_brokers > 0) {
        double ratio = cfg->brokers / costs->grow_brokers;
        s.get_module *= pow (ratio, costs->get_grow_module);
        s.get_client *= pow (ratio, costs->get_grow_client);
        s.sync_grow = pow (ratio, costs->sync_grow);
        s.sync_grow_client = costs->sync_grow_client >= 0
                             ? pow (ratio, costs->sync_grow_client)
                             : s.sync_grow;
        s.byte_grow = pow (ratio, costs->byte_grow);
    }
    s.nclients = cfg->clients == KVSIM_CROWD ? 1 : cfg->participants;
    s.nservers = 3 * cfg->brokers + s.nclients;
    if (!(s.des = des_create ())
        || !(s.servers = calloc (s.nservers, sizeof (*s.servers)))
        || !(s.kvs = calloc (cfg->brokers, sizeof (*s.kvs)))
        || !(s.cst = calloc (cfg->brokers, sizeof (*s.cst)))
        || !(s.parts = calloc (cfg->participants, sizeof (*s.parts))))
        goto nomem;
    for (int i = 0; i < s.nservers; i++) {
        if (i < 3 * cfg->brokers) {
            s.servers[i].broker = i / 3;
            s.servers[i].thread = i % 3;
        }
        else {
            s.servers[i].broker = i - 3 * cfg->brokers;
            s.servers[i].thread = TH_CLIENT;
        }
    }
    if (build_objects (&s) < 0)
        goto nomem;
    for (int p = 0; p < cfg->participants; p++) {
        struct part *pp = &s.parts[p];
        pp->broker = part_broker (cfg, p);
        pp->client = cfg->clients == KVSIM_CROWD ? 0 : p;
        pp->producer = is_producer (cfg, p);
        pp->consumer = is_consumer (cfg, p);
        if (pp->producer || pp->consumer) {
            s.nactors++;
            for (int b = pp->broker; b > 0; b = kvsim_parent (b, cfg->k))
                s.kvs[b].expect++;
        }
    }
    /* every actor starts: a crowd client one after the other */
    for (int p = 0; p < cfg->participants; p++) {
        if (!s.parts[p].producer && !s.parts[p].consumer)
            continue;
        int mi = msg_new (&s);
        if (mi < 0)
            goto nomem;
        s.msgs[mi].type = M_START;
        s.msgs[mi].part = p;
        deliver (&s, server_of (&s, 0, TH_CLIENT, s.parts[p].client), mi, 0);
        res->messages--;
    }
    res->events = des_run (s.des);
    if (s.error) {
        errno = s.error;
        goto done;
    }
    if (s.done != s.nactors) {
        errno = EDEADLK;    /* a model bug: something never finished */
        goto done;
    }
    rc = 0;
    goto done;
nomem:
    errno = ENOMEM;
done:
    {
        int saved_errno = errno;
        sim_free (&s);
        errno = saved_errno;
    }
    return rc;
}
