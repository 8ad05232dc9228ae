/* pmi_mapping.c - build and read PMI_process_mapping (pmi_mapping.h).
 *
 * Design notes: reading walks the string block by block and never
 * allocates; a rank's node is found by counting ranks through the blocks
 * (cost: the number of blocks; the clique costs its own size on top).
 * Ranks are handed out in increasing order, so the clique comes out
 * sorted.  All arithmetic is checked against INT_MAX.  Libc only.
 */
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include "pmi_mapping.h"

struct block {
    long start;
    long nnodes;
    long ppn;
};

static void skip_spaces (const char **p)
{
    while (**p == ' ')
        (*p)++;
}

static bool expect (const char **p, char c)
{
    skip_spaces (p);
    if (**p != c)
        return false;
    (*p)++;
    return true;
}

static bool parse_num (const char **p, long *val)
{
    long v = 0;
    skip_spaces (p);
    if (**p < '0' || **p > '9')
        return false;
    while (**p >= '0' && **p <= '9') {
        v = v * 10 + (**p - '0');
        if (v > INT_MAX)
            return false;
        (*p)++;
    }
    *val = v;
    return true;
}

/* Position *p after "(vector". */
static bool parse_head (const char **p)
{
    if (!expect (p, '('))
        return false;
    skip_spaces (p);
    if (strncmp (*p, "vector", 6) != 0)
        return false;
    *p += 6;
    return true;
}

/* Read ",(a,b,c)" into *b and return 1, or read the closing ")" and
 * return 0, or return -1 on a syntax error.
 */
static int next_block (const char **p, struct block *b)
{
    skip_spaces (p);
    if (**p == ')') {
        (*p)++;
        skip_spaces (p);
        return **p == '\0' ? 0 : -1;
    }
    if (!expect (p, ',') || !expect (p, '(')
        || !parse_num (p, &b->start) || !expect (p, ',')
        || !parse_num (p, &b->nnodes) || !expect (p, ',')
        || !parse_num (p, &b->ppn) || !expect (p, ')'))
        return -1;
    if (b->nnodes < 1 || b->ppn < 1 || b->start + b->nnodes - 1 > INT_MAX)
        return -1;
    return 1;
}

int pmi_mapping_encode (const int *tasks_per_node, int nnodes,
                        char *buf, size_t size)
{
    size_t len;
    int n;
    long total = 0;

    if (!tasks_per_node || nnodes < 1 || !buf) {
        errno = EINVAL;
        return -1;
    }
    for (int i = 0; i < nnodes; i++) {
        if (tasks_per_node[i] < 0) {
            errno = EINVAL;
            return -1;
        }
        total += tasks_per_node[i];
        if (total > INT_MAX) {
            errno = EINVAL;
            return -1;
        }
    }
    if (total == 0) {
        errno = EINVAL;
        return -1;
    }
    n = snprintf (buf, size, "(vector");
    if (n < 0 || (size_t)n >= size)
        goto overflow;
    len = n;
    for (int i = 0; i < nnodes; ) {
        int j = i + 1;
        if (tasks_per_node[i] == 0) {
            i++;
            continue;
        }
        while (j < nnodes && tasks_per_node[j] == tasks_per_node[i])
            j++;
        n = snprintf (buf + len, size - len, ",(%d,%d,%d)", i, j - i,
                      tasks_per_node[i]);
        if (n < 0 || (size_t)n >= size - len)
            goto overflow;
        len += n;
        i = j;
    }
    n = snprintf (buf + len, size - len, ")");
    if (n < 0 || (size_t)n >= size - len)
        goto overflow;
    return len + n;
overflow:
    if (size > 0)
        buf[0] = '\0';
    errno = EOVERFLOW;
    return -1;
}

/* Visit every block of the mapping in rank order, with the first rank it
 * hands out.  Returns 0 when the visitor returns nonzero (found), 1 at the
 * end, -1 on a syntax error or more than INT_MAX ranks.
 */
typedef int (*block_f)(const struct block *b, long first, void *arg);

static int walk (const char *mapping, block_f fn, void *arg)
{
    const char *p = mapping;
    struct block b;
    long long rank = 0;
    int rc;

    if (!mapping || !parse_head (&p))
        return -1;
    while ((rc = next_block (&p, &b)) == 1) {
        long long n = (long long)b.nnodes * b.ppn;
        if (rank + n > INT_MAX)
            return -1;
        if (fn && fn (&b, (long)rank, arg))
            return 0;
        rank += n;
    }
    return rc < 0 ? -1 : 1;
}

struct find_node {
    long rank;
    long node;
};

static int find_node_cb (const struct block *b, long first, void *arg)
{
    struct find_node *f = arg;
    if (f->rank >= first && f->rank < first + b->nnodes * b->ppn) {
        f->node = b->start + (f->rank - first) / b->ppn;
        return 1;
    }
    return 0;
}

int pmi_mapping_node (const char *mapping, int rank)
{
    struct find_node f = { .rank = rank, .node = -1 };
    int rc;

    if (rank < 0) {
        errno = EINVAL;
        return -1;
    }
    /* check the whole string first: a syntax error anywhere is an error */
    if (walk (mapping, NULL, NULL) < 0) {
        errno = EINVAL;
        return -1;
    }
    rc = walk (mapping, find_node_cb, &f);
    if (rc != 0) {
        errno = ENOENT;
        return -1;
    }
    return (int)f.node;
}

struct clique {
    long node;
    int *ranks;
    int max;
    int count;
};

static int clique_cb (const struct block *b, long first, void *arg)
{
    struct clique *c = arg;
    if (c->node < b->start || c->node >= b->start + b->nnodes)
        return 0;
    first += (c->node - b->start) * b->ppn;
    for (long r = first; r < first + b->ppn; r++) {
        if (c->count < c->max)
            c->ranks[c->count] = (int)r;
        c->count++;
    }
    return 0;
}

int pmi_mapping_clique (const char *mapping, int rank, int *ranks, int max)
{
    struct clique c = { .ranks = ranks, .max = max };
    int node;

    if (max < 0 || (max > 0 && !ranks)) {
        errno = EINVAL;
        return -1;
    }
    if ((node = pmi_mapping_node (mapping, rank)) < 0)
        return -1;
    c.node = node;
    if (walk (mapping, clique_cb, &c) < 0) {
        errno = EINVAL;
        return -1;
    }
    return c.count;
}
