/* kap_gate.h - a sleeping, reusable barrier for the ranks of one node.
 *
 * KAP separates its phases with barriers while some ranks may still be
 * timing, and must start the timed phases together.  An MPI barrier does
 * neither well on a node with more ranks than cores: the waiting ranks
 * busy-poll (OpenMPI calls sched_yield(2) on every idle progress pass when
 * the node is oversubscribed), stealing the CPU that the ranks still being
 * measured and their brokers need; and its release reaches the ranks one
 * scheduler slice at a time.  A canopy event released them no better:
 * each broker's first wake-up of a rank let that rank run before the next
 * was woken.  Here the ranks of a node sleep in the kernel on words of
 * shared memory (futexes) and cost nothing while they wait:
 *
 *   the others    kap_gate_wait: announce, then sleep on `generation`
 *                 until the leader opens the round;
 *   the leader    kap_gate_ready: sleep on `arrived` until every other
 *                 rank announced itself (the last one wakes it); then
 *                 whatever must happen between nodes (kap meets the other
 *                 nodes' leaders); then kap_gate_open: one wake-up of all.
 *
 * Rounds may follow each other at once: a rank released from round r can
 * announce itself for round r + 1 before the others have left round r,
 * because the leader clears `arrived` before it advances `generation`.
 *
 * The gate lives in memory shared by the node's processes (kap puts it in
 * an MPI-3 shared window; the unit test in a MAP_SHARED mapping).
 * kap_gate_init is called by the leader before anyone else touches it;
 * each round, every other rank calls kap_gate_wait once and the leader
 * kap_gate_ready then kap_gate_open.  Linux only (futex(2)).
 */
#ifndef KAP_GATE_H
#define KAP_GATE_H

#include <stdint.h>

struct kap_gate {
    uint32_t others;        /* ranks other than the leader */
    uint32_t arrived;       /* others announced this round: the leader's futex */
    uint32_t generation;    /* rounds opened: the others' futex */
};

/* others: the number of ranks that call kap_gate_wait each round. */
void kap_gate_init (struct kap_gate *g, uint32_t others);

/* Announce, then sleep until the leader opens this round. */
void kap_gate_wait (struct kap_gate *g);

/* Leader: sleep until every other rank announced itself this round, or
 * timeout seconds passed.  Returns 0, or -1 with errno ETIMEDOUT (the
 * round stays as it was: call again to go on waiting).  A rank that
 * announced may not be asleep yet; it then finds the round open and does
 * not sleep.
 */
int kap_gate_ready (struct kap_gate *g, double timeout);

/* Leader: open the round and wake every waiter with one system call. */
void kap_gate_open (struct kap_gate *g);

#endif
