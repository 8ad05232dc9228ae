/* kap_gate.h - a start gate for the ranks of one node.
 *
 * KAP's ranks must start the timed phases together.  An MPI barrier
 * releases them one scheduler slice at a time on a node with more ranks
 * than cores (every waiting rank busy-polls), and so did a canopy event:
 * each broker's first wake-up of a rank lets that rank run before the
 * broker wakes the next.  Here the ranks of a node wait in the kernel on
 * one word of shared memory (a futex) and the node's leader opens the gate
 * with a single wake-up of all of them.
 *
 * The gate lives in memory shared by the node's processes (kap puts it in
 * an MPI-3 shared window; the unit test in a MAP_SHARED mapping).  It is
 * used once: kap_gate_init by the leader before anyone else touches it,
 * then kap_gate_wait by every other rank, kap_gate_ready and kap_gate_open
 * by the leader.  Linux only (futex(2)).
 */
#ifndef KAP_GATE_H
#define KAP_GATE_H

#include <stdint.h>

struct kap_gate {
    uint32_t waiting;       /* ranks that announced they wait */
    uint32_t open;          /* 0 closed, 1 open: the futex word */
};

void kap_gate_init (struct kap_gate *g);

/* Announce, then sleep until the gate opens (at once if it is open). */
void kap_gate_wait (struct kap_gate *g);

/* Leader: wait (sleeping 50 us at a time) until n ranks announced they
 * wait, or timeout seconds passed.  Returns 0, or -1 with errno ETIMEDOUT.
 * A rank that announced may not be asleep yet; it then finds the gate open
 * and does not sleep.
 */
int kap_gate_ready (struct kap_gate *g, uint32_t n, double timeout);

/* Leader: open the gate and wake every waiter with one system call. */
void kap_gate_open (struct kap_gate *g);

#endif
