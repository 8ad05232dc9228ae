/* topology.h - the k-ary tree over broker ranks.
 *
 * Rank 0 is the root; the parent of rank r > 0 is (r - 1) / k and its
 * children are k*r + 1 ... k*r + k (those below size).  k >= 1.
 * All functions are pure arithmetic; invalid arguments give -1 (or false).
 */
#ifndef CANOPY_BROKER_TOPOLOGY_H
#define CANOPY_BROKER_TOPOLOGY_H

#include <stdbool.h>
#include <stdint.h>

int topology_parent (uint32_t rank, uint32_t k);
/* Fills children[] (up to max) and returns their count. */
int topology_children (uint32_t rank, uint32_t size, uint32_t k,
                       uint32_t *children, int max);
int topology_child_count (uint32_t rank, uint32_t size, uint32_t k);
bool topology_in_subtree (uint32_t root, uint32_t rank, uint32_t k);
/* The child of 'rank' whose subtree holds 'target' (target below rank). */
int topology_child_toward (uint32_t rank, uint32_t target, uint32_t k);
/* Number of ranks in the subtree rooted at 'rank' (itself included). */
uint32_t topology_subtree_size (uint32_t rank, uint32_t size, uint32_t k);
/* Distance from the root. */
int topology_depth (uint32_t rank, uint32_t k);
/* Hops between two ranks through their common ancestor. */
int topology_distance (uint32_t a, uint32_t b, uint32_t k);
/* Position of 'rank' in a depth-first walk of the tree (parent before
 * children, children in rank order): 0 for the root, size - 1 for the
 * last.  A subtree's ranks hold consecutive positions, so cutting the
 * walk into n equal runs splits the tree into n parts of whole or nearly
 * whole subtrees (broker.cpu-affinity=subtree).
 */
int64_t topology_preorder (uint32_t rank, uint32_t size, uint32_t k);

#endif
