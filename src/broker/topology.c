/* topology.c - k-ary tree arithmetic (topology.h). */
#include <stddef.h>
#include <stdint.h>
#include "topology.h"

int topology_parent (uint32_t rank, uint32_t k)
{
    if (rank == 0 || k == 0)
        return -1;
    return (rank - 1) / k;
}

int topology_children (uint32_t rank, uint32_t size, uint32_t k,
                       uint32_t *children, int max)
{
    int n = 0;
    if (k == 0 || rank >= size)
        return -1;
    for (uint64_t c = (uint64_t)k * rank + 1;
         c <= (uint64_t)k * rank + k && c < size; c++) {
        if (children && n < max)
            children[n] = c;
        n++;
    }
    return n;
}

int topology_child_count (uint32_t rank, uint32_t size, uint32_t k)
{
    return topology_children (rank, size, k, NULL, 0);
}

bool topology_in_subtree (uint32_t root, uint32_t rank, uint32_t k)
{
    if (k == 0)
        return false;
    while (rank > root)
        rank = (rank - 1) / k;
    return rank == root;
}

int topology_child_toward (uint32_t rank, uint32_t target, uint32_t k)
{
    if (k == 0 || target <= rank)
        return -1;
    while (target > rank) {
        uint32_t parent = (target - 1) / k;
        if (parent == rank)
            return target;
        target = parent;
    }
    return -1;
}

uint32_t topology_subtree_size (uint32_t rank, uint32_t size, uint32_t k)
{
    uint64_t lo = rank, hi = rank;
    uint32_t count = 0;

    if (k == 0 || rank >= size)
        return 0;
    while (lo < size) {
        uint64_t top = hi < size ? hi : size - 1;
        count += top - lo + 1;
        lo = lo * k + 1;
        hi = hi * k + k;
    }
    return count;
}

int topology_depth (uint32_t rank, uint32_t k)
{
    int depth = 0;
    if (k == 0)
        return -1;
    while (rank > 0) {
        rank = (rank - 1) / k;
        depth++;
    }
    return depth;
}

int topology_distance (uint32_t a, uint32_t b, uint32_t k)
{
    int d = 0;
    if (k == 0)
        return -1;
    while (a != b) {
        if (a > b)
            a = (a - 1) / k;
        else
            b = (b - 1) / k;
        d++;
    }
    return d;
}

int64_t topology_preorder (uint32_t rank, uint32_t size, uint32_t k)
{
    uint32_t path[32];          /* k >= 2: at most 32 levels below 2^32 */
    int depth = 0;
    int64_t pos = 0;

    if (k == 0 || rank >= size)
        return -1;
    if (k == 1)
        return rank;            /* a chain */
    for (uint32_t r = rank; r > 0; r = (r - 1) / k)
        path[depth++] = r;
    /* from the root down: one for the parent, then the whole subtrees of
     * the children before the one on the path
     */
    while (depth-- > 0) {
        uint32_t child = path[depth];
        uint32_t first = child - (child - 1) % k;
        pos += 1;
        for (uint32_t c = first; c < child; c++)
            pos += topology_subtree_size (c, size, k);
    }
    return pos;
}
