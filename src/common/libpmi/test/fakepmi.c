/* test/fakepmi.c - a stand-in libpmi.so for the dlopen client's tests.
 *
 * Rank 1 of 4 in kvsname "fakekvs", with an in-process key store and a
 * clique of {1, 3}.  fakepmi_set() lets the test make calls fail or hide
 * the clique; fakepmi_count() reports how often a function was called.
 */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#define NKEYS 32

static char *keys[NKEYS], *vals[NKEYS];
static int nkeys;
static int fail_init, fail_barrier, no_clique;
static int n_init, n_finalize, n_abort, n_commit, n_barrier;

void fakepmi_set (const char *what, int val)
{
    if (!strcmp (what, "fail_init"))
        fail_init = val;
    else if (!strcmp (what, "fail_barrier"))
        fail_barrier = val;
    else if (!strcmp (what, "no_clique"))
        no_clique = val;
}

int fakepmi_count (const char *what)
{
    if (!strcmp (what, "init"))
        return n_init;
    if (!strcmp (what, "finalize"))
        return n_finalize;
    if (!strcmp (what, "abort"))
        return n_abort;
    if (!strcmp (what, "commit"))
        return n_commit;
    if (!strcmp (what, "barrier"))
        return n_barrier;
    return -1;
}

int PMI_Init (int *spawned)
{
    n_init++;
    *spawned = 0;
    return fail_init ? -1 : 0;
}

int PMI_Finalize (void)
{
    n_finalize++;
    for (int i = 0; i < nkeys; i++) {
        free (keys[i]);
        free (vals[i]);
    }
    nkeys = 0;
    return 0;
}

int PMI_Abort (int code, const char *msg)
{
    n_abort++;
    return 0;
}

int PMI_Get_size (int *size)
{
    *size = 4;
    return 0;
}

int PMI_Get_rank (int *rank)
{
    *rank = 1;
    return 0;
}

int PMI_Barrier (void)
{
    n_barrier++;
    return fail_barrier ? -1 : 0;
}

int PMI_KVS_Get_my_name (char *name, int len)
{
    snprintf (name, len, "fakekvs");
    return 0;
}

int PMI_KVS_Put (const char *kvsname, const char *key, const char *val)
{
    if (strcmp (kvsname, "fakekvs") != 0 || nkeys == NKEYS)
        return -1;
    keys[nkeys] = strdup (key);
    vals[nkeys++] = strdup (val);
    return 0;
}

int PMI_KVS_Commit (const char *kvsname)
{
    n_commit++;
    return 0;
}

int PMI_KVS_Get (const char *kvsname, const char *key, char *val, int len)
{
    for (int i = 0; i < nkeys; i++) {
        if (!strcmp (keys[i], key)) {
            snprintf (val, len, "%s", vals[i]);
            return 0;
        }
    }
    return -1;
}

int PMI_Get_clique_size (int *size)
{
    if (no_clique)
        return -1;
    *size = 2;
    return 0;
}

/* like MPICH's: returns ranks[0] rather than PMI_SUCCESS */
int PMI_Get_clique_ranks (int ranks[], int length)
{
    if (length >= 1)
        ranks[0] = 1;
    if (length >= 2)
        ranks[1] = 3;
    return ranks[0];
}
