/* pmi_mapping.h - the PMI_process_mapping value: which node each rank is on.
 *
 * Format (MPICH's "vector" mapping):
 *     (vector,(START,NNODES,PPN),(START,NNODES,PPN),...)
 * Blocks are read in order and hand out consecutive ranks: a block puts
 * PPN ranks on node START, the next PPN on START+1, ... for NNODES nodes.
 * So (vector,(0,2,4)) is node 0 with ranks 0-3 and node 1 with ranks 4-7,
 * and a cyclic layout of 4 ranks on 2 nodes is (vector,(0,2,1),(0,2,1)).
 * Spaces between items are tolerated when parsing; none are written.
 *
 * MPICH reads this key during MPI_Init (it falls back to exchanging host
 * names without it); libpmi.so derives PMI_Get_clique_size/ranks, which
 * OpenMPI needs, from it.
 *
 * Libc only: this file is also compiled into libpmi.so.
 */
#ifndef CANOPY_PMI_MAPPING_H
#define CANOPY_PMI_MAPPING_H

#include <stddef.h>

/* Write the mapping of a block layout given as the number of tasks on
 * each node (node i runs tasks_per_node[i] consecutive ranks; nodes with
 * no tasks are skipped but keep their number).  Neighbouring nodes with
 * the same count share one block.  Returns the length written, or -1 with
 * errno EINVAL (nnodes < 1, negative count, no tasks at all) or EOVERFLOW
 * (buf too small; buf then holds "").
 */
int pmi_mapping_encode (const int *tasks_per_node, int nnodes,
                        char *buf, size_t size);

/* The node of 'rank'.  Returns it, or -1 with errno EINVAL (malformed
 * mapping or negative rank) or ENOENT (the mapping does not cover rank).
 */
int pmi_mapping_node (const char *mapping, int rank);

/* The ranks sharing rank's node, in increasing order: fills up to 'max'
 * entries of ranks[] (ranks may be NULL if max is 0) and returns how many
 * there are in total (which may exceed max).  -1 with errno as for
 * pmi_mapping_node.
 */
int pmi_mapping_clique (const char *mapping, int rank, int *ranks, int max);

#endif
