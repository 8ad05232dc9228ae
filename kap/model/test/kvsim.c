/* test/kvsim.c - the tree model: exact latencies on a trivial tree,
 * determinism, relay and load counts, coalescing, held relays, priming, shared cores,
 * batched loads, several keys per producer, the sync phase's load factors
 * and byte costs, the consumer factors' growth on shared cores, gets read
 * from the brokers' shared read caches.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <math.h>
#include <cmocka.h>
#include "kvsim.h"

/* round numbers, nothing free except what a test sets */
static void unit_costs (struct kap_costs *c)
{
    memset (c, 0, sizeof (*c));
    c->ipc_lat = 10;
    c->net_lat = 20;
    c->net_bw = 1e12;
    c->route = 1;
    c->fence_req = 3;
    c->op_encode = 1;
    c->apply = 50;
    c->apply_op = 2;
    c->respond = 4;
    c->setroot = 5;
    c->lookup = 6;
    c->walk = 1;
    c->client_msg = 7;
    c->relay_send = 8;
    c->relay_recv = 9;
    c->ack = 2;
    c->load_send = 3;
    c->load_serve = 4;
    c->sync_broker = c->sync_module = c->sync_client = 1;
    c->get_module = c->get_client = 1;
    c->shm_get = 2;
    c->sync_grow_client = -1;   /* as sync_grow (kap_costs_default) */
}

/* The consumer tests' job: unit costs, 'participants' placed in blocks
 * on 'brokers' brokers, each a producer and a consumer.
 */
static void block_job (struct kvsim_config *cfg, struct kap_costs *c,
                       int brokers, int participants)
{
    kvsim_config_default (cfg);
    unit_costs (c);
    cfg->brokers = brokers;
    cfg->block = true;
    cfg->participants = cfg->producers = cfg->consumers = participants;
}

static void test_one_broker (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result r;

    kvsim_config_default (&cfg);
    unit_costs (&c);
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    /* client 7, ipc 10, route 1, fence 3+1, apply 50+2+respond 4,
     * route 1, ipc 10 */
    assert_true (fabs (tstat_mean (&r.sync) - (7 + 10 + 1 + 4 + 56 + 1 + 10)) < 1e-9);
    /* after the response (7): ipc, route, lookup 6 + walk 5 objects,
     * route, ipc */
    assert_true (fabs (tstat_mean (&r.get) - (7 + 10 + 1 + 11 + 1 + 10)) < 1e-9);
    assert_int_equal (r.relays, 0);
    assert_int_equal (r.loads, 0);
    assert_true (r.get.count == 1 && r.sync.count == 1);
}

/* With the direct channel the client's requests and answers skip the
 * broker thread: one route charge less each way, the rest the same.
 */
static void test_direct (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result r, d;

    kvsim_config_default (&cfg);
    assert_false (cfg.direct);
    unit_costs (&c);
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    cfg.direct = true;
    assert_int_equal (kvsim_run (&cfg, &c, &d), 0);
    /* client 7, ipc 10, fence 3+1, apply 50+2+respond 4, ipc 10 */
    assert_true (fabs (tstat_mean (&d.sync) - (7 + 10 + 4 + 56 + 10)) < 1e-9);
    assert_true (fabs (tstat_mean (&d.get) - (7 + 10 + 11 + 10)) < 1e-9);
    assert_true (d.messages < r.messages);

    /* the KVS's socket work per message on the channel: the fence and
     * its answer, the lookup and its answer; nothing without the channel
     */
    c.direct_msg = 2;
    assert_int_equal (kvsim_run (&cfg, &c, &d), 0);
    assert_true (fabs (tstat_mean (&d.sync) - (7 + 10 + 6 + 58 + 10)) < 1e-9);
    assert_true (fabs (tstat_mean (&d.get) - (7 + 10 + 15 + 10)) < 1e-9);
    cfg.direct = false;
    assert_int_equal (kvsim_run (&cfg, &c, &d), 0);
    assert_true (fabs (tstat_mean (&d.sync) - tstat_mean (&r.sync)) < 1e-9);
    c.direct_msg = 0;

    /* on a tree, relays and events still cross the broker threads */
    cfg.brokers = 7;
    cfg.participants = cfg.producers = cfg.consumers = 14;
    cfg.direct = false;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    cfg.direct = true;
    assert_int_equal (kvsim_run (&cfg, &c, &d), 0);
    assert_int_equal (d.relays, r.relays);
    assert_true (d.cpu_thread[0] > 0 && d.cpu_thread[0] < r.cpu_thread[0]);
    assert_true (tstat_mean (&d.sync) < tstat_mean (&r.sync));
}

/* The load factors scale the sync phase's messages, thread kind by
 * thread kind, and the byte costs add to them; gets stay as charged.
 */
static void test_sync_scaling (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result r;

    kvsim_config_default (&cfg);
    unit_costs (&c);
    c.sync_broker = 2;
    c.sync_module = 3;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    /* client 7, ipc 10, route 1x2, fence 4x3, apply 56x3, route 1x2, ipc 10 */
    assert_true (fabs (tstat_mean (&r.sync) - (7 + 10 + 2 + 12 + 168 + 2 + 10)) < 1e-9);
    assert_true (fabs (tstat_mean (&r.get) - (7 + 10 + 1 + 11 + 1 + 10)) < 1e-9);
    assert_true (r.bytes_thread[0] > 0 && r.bytes_thread[1] > 0);

    double base = 7 + 10 + 2 + 12 + 168 + 2 + 10;
    double bytes_broker = r.bytes_thread[0], bytes_kvs = r.bytes_thread[1];
    c.route_byte = 0.5;
    c.kvs_byte = 0.25;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    /* at least the answer's 60 bytes are on the way; at most every byte */
    assert_true (tstat_mean (&r.sync) >= base + 0.5 * 60 - 1e-9);
    assert_true (tstat_mean (&r.sync) <= base + 0.5 * bytes_broker + 0.25 * bytes_kvs + 1e-9);
    /* the get's own messages cost no more; it may queue behind the
     * (now dearer) setroot event on the broker thread
     */
    assert_true (tstat_mean (&r.get) >= 7 + 10 + 1 + 11 + 1 + 10 - 1e-9);

    /* the setroot event's primed objects cost the broker threads that
     * forward them per byte, and not the KVS, which keeps them as they
     * arrived: priming adds broker bytes only
     */
    struct kvsim_result np, pr;
    cfg.brokers = 4;
    cfg.participants = cfg.producers = 8;
    cfg.consumers = 0;
    cfg.prime_max = cfg.prime_budget = 0;
    assert_int_equal (kvsim_run (&cfg, &c, &np), 0);
    cfg.prime_max = 4096;
    cfg.prime_budget = 65536;
    assert_int_equal (kvsim_run (&cfg, &c, &pr), 0);
    assert_true (pr.bytes_thread[0] > np.bytes_thread[0]);
    assert_true (fabs (pr.bytes_thread[1] - np.bytes_thread[1]) < 1e-9);
}

/* The consumer phase's factors scale lookups and their answers, thread
 * kind by thread kind, and leave the sync phase alone.
 */
static void test_get_scaling (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result r;

    kvsim_config_default (&cfg);
    unit_costs (&c);
    c.get_module = 3;
    c.get_client = 0.5;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    /* unchanged: client 7, ipc 10, route 1, fence 4, apply 56, route 1,
     * ipc 10
     */
    assert_true (fabs (tstat_mean (&r.sync) - (7 + 10 + 1 + 4 + 56 + 1 + 10)) < 1e-9);
    /* client 7x0.5, ipc 10, route 1 (not scaled), lookup 11x3, route 1,
     * ipc 10
     */
    assert_true (fabs (tstat_mean (&r.get) - (3.5 + 10 + 1 + 33 + 1 + 10)) < 1e-9);
    /* a costs file cannot name a broker factor for gets */
    json_t *o = json_pack ("{s:f}", "get_broker", 2.0);
    char errbuf[128];
    assert_non_null (o);
    assert_int_equal (kap_costs_from_json (&c, o, errbuf, sizeof (errbuf)), -1);
    json_decref (o);
}

/* On shared cores the factors grow with the instance:
 * (brokers / grow_brokers)^get_grow_* and ^sync_grow.  With a core per thread they do
 * not.  One broker, one participant: the get's charge is exact.
 */
static void test_get_grow (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result r;

    kvsim_config_default (&cfg);
    unit_costs (&c);
    c.cores = 4;
    c.grow_brokers = 0.25;       /* one broker: 4x the calibration's size */
    c.get_grow_module = 0.5;    /* x2 */
    c.get_grow_client = 1;      /* x4 */
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    /* client 7x4, ipc 10, route 1, lookup 11x2, route 1, ipc 10 */
    assert_true (fabs (tstat_mean (&r.get) - (28 + 10 + 1 + 22 + 1 + 10)) < 1e-9);
    /* the sync phase is not grown by those */
    assert_true (fabs (tstat_mean (&r.sync) - (7 + 10 + 1 + 4 + 56 + 1 + 10)) < 1e-9);
    /* but by its own: x2 on every thread of the sync phase, CPU only
     * (client 7, ipc 10, route 1, fence 4, apply 56, route 1, ipc 10)
     */
    c.sync_grow = 0.5;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    assert_true (fabs (tstat_mean (&r.sync) - (14 + 10 + 2 + 8 + 112 + 2 + 10)) < 1e-9);
    assert_true (fabs (tstat_mean (&r.get) - (28 + 10 + 1 + 22 + 1 + 10)) < 1e-9);
    /* the client by an exponent of its own when the costs give one:
     * x1 (client 7) and the brokers' threads x2 as above
     */
    c.sync_grow_client = 0;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    assert_true (fabs (tstat_mean (&r.sync) - (7 + 10 + 2 + 8 + 112 + 2 + 10)) < 1e-9);
    c.sync_grow_client = -1;
    c.sync_grow = 0;
    /* a core per thread (a cluster): no growth */
    c.cores = 0;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    assert_true (fabs (tstat_mean (&r.get) - (7 + 10 + 1 + 11 + 1 + 10)) < 1e-9);
    /* no calibration size: no growth */
    c.cores = 4;
    c.grow_brokers = 0;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    assert_true (fabs (tstat_mean (&r.get) - (7 + 10 + 1 + 11 + 1 + 10)) < 1e-9);
}

/* The sync phase's byte costs grow by their own exponent, byte_grow, and
 * not by sync_grow.  One participant on two brokers with 1 KiB values
 * (bytes in the request, the apply and the event), a core for every
 * thread (no waiting), the growth factors x2: what the bytes add
 * doubles exactly.
 */
static void test_byte_grow (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result r;
    double s0, s1, g0;

    kvsim_config_default (&cfg);
    cfg.brokers = 2;
    cfg.participants = 1;
    cfg.value_size = 1024;
    unit_costs (&c);
    c.cores = 64;
    c.grow_brokers = 0.5;       /* two brokers: 4x the calibration's size */
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    s0 = tstat_mean (&r.sync);
    c.route_byte = 0.01;
    c.kvs_byte = 0.02;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    s1 = tstat_mean (&r.sync);
    assert_true (s1 > s0 + 1);
    c.byte_grow = 0.5;          /* x2 */
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    assert_true (fabs ((tstat_mean (&r.sync) - s0) - 2 * (s1 - s0)) < 1e-6);
    /* sync_grow alone: the messages grow, the bytes do not */
    c.byte_grow = 0;
    c.sync_grow = 0.5;
    c.route_byte = c.kvs_byte = 0;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    g0 = tstat_mean (&r.sync);
    assert_true (g0 > s0 + 1);
    c.route_byte = 0.01;
    c.kvs_byte = 0.02;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    assert_true (fabs ((tstat_mean (&r.sync) - g0) - (s1 - s0)) < 1e-6);
    /* a core per thread, or no calibration size: no growth of either */
    c.sync_grow = 0;
    c.cores = 0;
    c.byte_grow = 0.5;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    double n1 = tstat_mean (&r.sync);
    c.byte_grow = 0;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    assert_true (fabs (tstat_mean (&r.sync) - n1) < 1e-9);
    c.cores = 64;
    c.grow_brokers = 0;
    c.byte_grow = 0.5;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    assert_true (fabs (tstat_mean (&r.sync) - s1) < 1e-9);
}

static void test_deterministic (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result a, b;

    kvsim_config_default (&cfg);
    kap_costs_default (&c);
    cfg.brokers = 37;
    cfg.k = 3;
    cfg.participants = cfg.producers = cfg.consumers = 300;
    cfg.access_count = 3;
    cfg.value_size = 2048;
    c.cores = 2;
    assert_int_equal (kvsim_run (&cfg, &c, &a), 0);
    assert_int_equal (kvsim_run (&cfg, &c, &b), 0);
    assert_true (tstat_mean (&a.sync) == tstat_mean (&b.sync));
    assert_true (tstat_mean (&a.get) == tstat_mean (&b.get));
    assert_int_equal (a.messages, b.messages);
    assert_true (a.sync.count == 300 && a.get.count == 900);
}

static void test_relays (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result r;

    /* one participant per broker, all starting together: every broker
     * but the root relays at least once, and the count contributions
     * reach the root exactly (else the run would not finish)
     */
    kvsim_config_default (&cfg);
    kap_costs_default (&c);
    cfg.brokers = 63;
    cfg.participants = cfg.producers = cfg.consumers = 63;
    cfg.clients = KVSIM_MPI;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    assert_true (r.relays >= 62);
    /* ... but with one relay in flight per broker, not many more */
    assert_true (r.relays <= 3 * 62);
    /* nobody is answered before the deepest contribution has climbed the
     * tree (depth 5 for 63 brokers, k=2)
     */
    assert_int_equal (kvsim_depth (62, 2), 5);
    assert_true (r.sync.min >= 5 * c.net_lat);
    /* a flat tree makes the root do everything: more CPU on one thread */
    struct kvsim_result flat;
    cfg.k = 62;
    assert_int_equal (kvsim_run (&cfg, &c, &flat), 0);
    assert_true (flat.relays == 62);
}

/* With hold, a broker relays once per fence, when its subtree is in:
 * exactly brokers - 1 relays however the participants are spread, the
 * same answers, and never more relays than self-clocked.
 */
static void test_hold (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result self, held;

    kvsim_config_default (&cfg);
    kap_costs_default (&c);
    c.cores = 2;
    cfg.brokers = 31;
    cfg.participants = cfg.producers = 31 * 8;
    cfg.consumers = 0;
    cfg.clients = KVSIM_CROWD;
    assert_int_equal (kvsim_run (&cfg, &c, &self), 0);
    cfg.hold = true;
    assert_int_equal (kvsim_run (&cfg, &c, &held), 0);
    assert_int_equal (held.relays, 30);
    assert_true (self.relays > held.relays);
    /* each of them completes its subtree: a kvs.relay-late, answered
     * KVSIM_LATE_ACK_DELAY later, after this short fence: not charged
     */
    assert_int_equal (held.relays_late, 30);
    assert_int_equal (self.relays_late, 0);
    assert_int_equal (held.late_acks, 0);
    assert_true (held.total_wall < KVSIM_LATE_ACK_DELAY);
    assert_int_equal (held.sync.count, self.sync.count);
    /* a fence longer than the delay: participants placed in blocks and
     * slow puts (1 ms each, one after the other in the crowd), so the
     * first brokers' subtrees are in long before the last: their
     * relays are answered during the fence, and the answers' messages
     * and CPU are charged like any others
     */
    struct kvsim_result slow, slow_block;
    c.put = 1000;
    assert_int_equal (kvsim_run (&cfg, &c, &slow), 0);
    cfg.block = true;
    assert_int_equal (kvsim_run (&cfg, &c, &slow_block), 0);
    assert_true (slow_block.total_wall > 2 * KVSIM_LATE_ACK_DELAY);
    assert_true (slow_block.late_acks > 0);
    assert_true (slow_block.late_acks <= slow_block.relays_late);
    /* interleaved, every subtree completes at the end: none in the run */
    assert_int_equal (slow.late_acks, 0);
    assert_true (slow_block.messages > slow.messages);
    cfg.block = false;
    kap_costs_default (&c);
    c.cores = 2;
    /* participants on brokers 0-9 only: brokers 10-30 have nobody in
     * their subtrees and relay nothing; 1-9 relay once each
     */
    cfg.participants = cfg.producers = 10;
    assert_int_equal (kvsim_run (&cfg, &c, &held), 0);
    assert_int_equal (held.relays, 9);
    assert_int_equal (held.sync.count, 10);
}

static void test_loads (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result r, p;

    /* 8 participants on 2 brokers (block: 0-3 on rank 0, 4-7 on rank 1);
     * every consumer reads one key; rank 1 loads each object of the
     * paths once from rank 0, however many of its consumers want it
     */
    block_job (&cfg, &c, 2, 8);
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    /* root, kap, inst, iter, dir: 5 objects, one hop each */
    assert_int_equal (r.loads, 5);
    assert_true (r.get.count == 8);

    /* with priming, the setroot event carried them all */
    cfg.prime_max = 4096;
    cfg.prime_budget = 65536;
    assert_int_equal (kvsim_run (&cfg, &c, &p), 0);
    assert_int_equal (p.loads, 0);
    assert_true (tstat_mean (&p.get) < tstat_mean (&r.get));

    /* values over 64 bytes are blobs: one more object per key read */
    cfg.prime_max = cfg.prime_budget = 0;
    cfg.value_size = 1000;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    assert_int_equal (r.loads, 5 + 4);      /* rank 1 reads 4 distinct values */
    /* ... or one shared blob when they are redundant */
    cfg.redundant = true;
    assert_int_equal (kvsim_run (&cfg, &c, &r), 0);
    assert_int_equal (r.loads, 5 + 1);
}

/* Batched loads: the same objects cross the same hops, in fewer
 * messages, and every get completes; a lone miss still goes at once.
 */
static void test_load_batch (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result one, batch;

    /* 64 participants on 8 brokers (depth 3), one directory hashed into
     * many small buckets, nothing primed: every broker faults in many
     * objects from its parent
     */
    block_job (&cfg, &c, 8, 64);
    cfg.access_count = 4;
    cfg.hdir_threshold = 2;
    assert_int_equal (kvsim_run (&cfg, &c, &one), 0);
    assert_int_equal (one.load_batches, 0);
    cfg.load_batch = true;
    assert_int_equal (kvsim_run (&cfg, &c, &batch), 0);
    assert_int_equal (batch.get.count, 64 * 4);
    assert_int_equal (batch.loads, one.loads);
    assert_true (batch.load_batches > 0);
    assert_true (batch.load_batches < batch.loads);
    assert_true (batch.messages < one.messages);

    /* one consumer on a leaf: nothing to batch with, one object per batch */
    cfg.participants = cfg.producers = 8;
    cfg.consumers = 1;
    cfg.access_count = 1;
    cfg.hdir_threshold = 128;
    assert_int_equal (kvsim_run (&cfg, &c, &batch), 0);
    cfg.load_batch = false;
    assert_int_equal (kvsim_run (&cfg, &c, &one), 0);
    assert_int_equal (batch.loads, one.loads);
    assert_int_equal (batch.load_batches, batch.loads);
    assert_true (fabs (tstat_mean (&batch.get) - tstat_mean (&one.get)) < 1e-6);
}

/* The shared read cache: with MPI clients a get whose path the broker
 * holds costs the client shm_get and nothing else (a core per thread:
 * that long after the one before); kap-crowd's gets and --shm off always ask; a path
 * not held (nothing primed) is loaded by the first get, and read from
 * the cache by the gets after it on that broker.
 */
static void test_shm (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result on, off;

    /* 16 participants on 4 brokers, one directory primed with the setroot */
    block_job (&cfg, &c, 4, 16);
    cfg.access_count = 3;
    cfg.prime_max = 8192;
    cfg.prime_budget = 524288;
    cfg.clients = KVSIM_MPI;
    assert_int_equal (kvsim_run (&cfg, &c, &off), 0);
    assert_int_equal (off.shm_gets, 0);
    cfg.shm = true;
    assert_int_equal (kvsim_run (&cfg, &c, &on), 0);
    assert_int_equal (on.get.count, 16 * 3);
    assert_int_equal (on.shm_gets, 16 * 3);
    /* the first get of each also waits for the fence's answer to be
     * handled (client_msg), as a get sent to the KVS would
     */
    assert_true (fabs (on.get.min - 2) < 1e-9);
    assert_true (fabs (on.get.max - (2 + 7)) < 1e-9);
    assert_true (on.messages < off.messages);
    assert_true (on.consumer_wall < off.consumer_wall);
    assert_true (fabs (on.sync_wall - off.sync_wall) < 1e-9);   /* fences alike */

    /* kap-crowd: asynchronous lookups, never the cache */
    cfg.clients = KVSIM_CROWD;
    assert_int_equal (kvsim_run (&cfg, &c, &on), 0);
    assert_int_equal (on.shm_gets, 0);

    /* nothing primed: each broker's first get loads, later ones hit */
    cfg.clients = KVSIM_MPI;
    cfg.prime_max = cfg.prime_budget = 0;
    assert_int_equal (kvsim_run (&cfg, &c, &on), 0);
    assert_true (on.loads > 0);
    assert_true (on.shm_gets > 0);
    assert_true (on.shm_gets < 16 * 3);
}

/* Several keys per producer (KAP's -K): a consumer reads every key of the
 * producer it reads, the directory holds them all, and with K = 1 the
 * run is the same as without.
 */
static void test_keys (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result one, four, same;

    block_job (&cfg, &c, 4, 16);
    cfg.hdir_threshold = 8;
    assert_int_equal (kvsim_run (&cfg, &c, &one), 0);
    cfg.keys_per_iter = 1;
    assert_int_equal (kvsim_run (&cfg, &c, &same), 0);
    assert_int_equal (same.loads, one.loads);
    assert_true (tstat_mean (&same.sync) == tstat_mean (&one.sync));
    cfg.keys_per_iter = 4;
    assert_int_equal (kvsim_run (&cfg, &c, &four), 0);
    assert_int_equal (four.get.count, 16 * 4);
    assert_true (four.loads > one.loads);   /* 64 entries: more buckets */
    assert_true (tstat_mean (&four.sync) > tstat_mean (&one.sync));
    cfg.keys_per_iter = 0;
    errno = 0;
    assert_int_equal (kvsim_run (&cfg, &c, &four), -1);
    assert_int_equal (errno, EINVAL);
}

static void test_cores (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result free_, one;

    kvsim_config_default (&cfg);
    kap_costs_default (&c);
    cfg.brokers = 16;
    cfg.participants = cfg.producers = cfg.consumers = 128;
    cfg.access_count = 2;
    assert_int_equal (kvsim_run (&cfg, &c, &free_), 0);
    c.cores = 1;
    assert_int_equal (kvsim_run (&cfg, &c, &one), 0);
    /* the same work, done on one core, takes longer */
    /* about the same work on one core: not exactly, since brokers merge
     * whatever contributions have arrived when they relay, and that
     * depends on timing (fewer, larger relays when slower)
     */
    assert_true (fabs (one.cpu - free_.cpu) / free_.cpu < 0.25);
    assert_true (one.relays <= free_.relays);
    assert_true (one.total_wall > free_.total_wall);
    /* one core cannot do more than its CPU time in less wall time */
    assert_true (one.total_wall >= one.cpu * 0.999);
}

/* hdir_bytes: a directory of 100 references to 1 KiB values (~12 KiB
 * plain) is hashed, as canopy's kvs.hdir-bytes does; nothing primed, a
 * consumer on a leaf loads the header and one bucket instead of all of it
 */
static void test_hdir_bytes (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result hashed, plain;

    block_job (&cfg, &c, 8, 100);
    cfg.value_size = 1024;
    cfg.consumers = 1;
    cfg.prime_max = 0;
    assert_int_equal (cfg.hdir_bytes, 16384);    /* canopy's default */
    /* 100 references (~11 KiB) fit in 16 KiB, not in 8 */
    assert_int_equal (kvsim_run (&cfg, &c, &plain), 0);
    cfg.hdir_bytes = 8192;
    assert_int_equal (kvsim_run (&cfg, &c, &hashed), 0);
    assert_true (hashed.loads > plain.loads);
    assert_true (hashed.load_bytes < plain.load_bytes);
    /* a directory under the limit is the same either way */
    cfg.participants = cfg.producers = 40;
    cfg.hdir_bytes = 8192;
    assert_int_equal (kvsim_run (&cfg, &c, &hashed), 0);
    cfg.hdir_bytes = 0;
    assert_int_equal (kvsim_run (&cfg, &c, &plain), 0);
    assert_int_equal (hashed.loads, plain.loads);
    assert_int_equal (hashed.load_bytes, plain.load_bytes);
    cfg.hdir_bytes = -1;
    assert_int_equal (kvsim_run (&cfg, &c, &plain), -1);
}

static void test_shapes (void **state)
{
    int objs, bytes;
    kvsim_dir_shape (100, 60, 128, &objs, &bytes);
    assert_int_equal (objs, 1);
    kvsim_dir_shape (1000, 60, 128, &objs, &bytes);
    assert_int_equal (objs, 2);
    assert_true (bytes < 8192);
    kvsim_dir_shape (100000, 60, 128, &objs, &bytes);
    assert_int_equal (objs, 4);
    assert_true (bytes < 16384);    /* a few KiB, as t1005 checks on canopy */
    assert_true (kvsim_entry_bytes (8) < kvsim_entry_bytes (64));
    assert_true (kvsim_entry_bytes (65) < kvsim_entry_bytes (64));  /* a ref */
    assert_int_equal (kvsim_parent (0, 2), -1);
    assert_int_equal (kvsim_parent (6, 2), 2);
    assert_int_equal (kvsim_depth (6, 2), 2);
    assert_int_equal (kvsim_depth (0, 2), 0);
}

static void test_bad_config (void **state)
{
    struct kvsim_config cfg;
    struct kap_costs c;
    struct kvsim_result r;

    kap_costs_default (&c);
    kvsim_config_default (&cfg);
    cfg.producers = 2;      /* more than participants */
    assert_int_equal (kvsim_run (&cfg, &c, &r), -1);
    assert_int_equal (errno, EINVAL);
    kvsim_config_default (&cfg);
    cfg.brokers = 0;
    assert_int_equal (kvsim_run (&cfg, &c, &r), -1);
    assert_int_equal (kvsim_run (NULL, &c, &r), -1);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_one_broker),
        cmocka_unit_test (test_direct),
        cmocka_unit_test (test_sync_scaling),
        cmocka_unit_test (test_get_scaling),
        cmocka_unit_test (test_get_grow),
        cmocka_unit_test (test_byte_grow),
        cmocka_unit_test (test_deterministic),
        cmocka_unit_test (test_relays),
        cmocka_unit_test (test_hold),
        cmocka_unit_test (test_loads),
        cmocka_unit_test (test_load_batch),
        cmocka_unit_test (test_keys),
        cmocka_unit_test (test_shm),
        cmocka_unit_test (test_cores),
        cmocka_unit_test (test_hdir_bytes),
        cmocka_unit_test (test_shapes),
        cmocka_unit_test (test_bad_config),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
