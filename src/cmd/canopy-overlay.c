/* canopy-overlay.c - the state of the tree.
 *
 * Each broker answers overlay.status with its own subtree count and its
 * children's states.  We walk down from rank 0, asking every reachable
 * broker, and classify every rank:
 *   full     it and its whole subtree are online
 *   partial  it is online, part of its subtree is not
 *   lost     its parent lost it (silent, disconnected, or restarted), or
 *            it sits below a lost rank (unreachable)
 *   offline  it never joined, or it left; or it sits below such a rank
 * A rank whose parent has heard nothing from it for tbon.torpid-timeout
 * is shown with "torpid"; we do not ask it (nor its subtree) anything.
 * A rank that is up but has a module still setting up (its mod_main has
 * not reached its event loop; the instance is not ready until none has)
 * is shown with "starting": each broker reports how many ranks of its
 * subtree are ready, and a subtree with fewer ready than online is asked.
 * With --rank, only the brokers on the way to that rank are asked.
 * Then we draw the tree, print a summary, or print (or wait for) one
 * rank's state.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <getopt.h>
#include <unistd.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/xalloc.h"
#include "src/common/libutil/monotime.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy overlay status [OPTIONS]\n"
"\n"
"Show every broker's state: full (its whole subtree is up), partial,\n"
"lost (its parent stopped hearing from it, or it is below a lost rank),\n"
"offline (never joined, or left).  'torpid' marks a rank its parent has\n"
"not heard from for tbon.torpid-timeout; 'starting' a rank with a\n"
"module still setting up (the initial program waits for every rank).\n"
"\n"
"  -r, --rank=R       print only rank R's state\n"
"  -w, --wait=STATE   poll until the instance (or rank R) is in STATE:\n"
"                     full, partial, lost or offline\n"
"  -t, --timeout=SEC  give up waiting after SEC seconds (exit 1)\n"
"  -s, --summary      print 'STATE ONLINE/SIZE', then the ranks that are\n"
"                     lost or offline\n"
"  -j, --json         with --rank: print that broker's own view (its\n"
"                     overlay.status reply, with requests in flight)\n"
"  -h, --help         show this help\n";

struct rankinfo {
    const char *state;      /* full, partial, lost, offline */
    int online;
    int ready;              /* of online, ranks whose modules all run */
    int size;
    bool torpid;
};

struct tree {
    uint32_t size;
    uint32_t k;
    struct rankinfo *info;
};

/* A broker that does not answer within this time is treated as lost (its
 * parent has not noticed yet).
 */
#define STATUS_TIMEOUT 10.0

static json_t *status_of (canopy_t *h, uint32_t rank)
{
    canopy_future_t *f = canopy_rpc (h, "overlay.status", "{}", rank, 0);
    json_t *o = NULL;
    if (f && canopy_future_wait_for (f, STATUS_TIMEOUT) == 0
        && canopy_rpc_get_unpack (f, "o", &o) == 0)
        json_incref (o);
    canopy_future_destroy (f);
    return o;
}

static uint32_t subtree_size (uint32_t rank, uint32_t size, uint32_t k)
{
    uint32_t n = 0, first = rank, last = rank;
    while (first < size) {
        n += (last < size ? last : size - 1) - first + 1;
        if (first > (UINT32_MAX - 1) / k)
            break;
        first = first * k + 1;
        last = last * k + k;
    }
    return n;
}

/* Give rank and everything below it the same state. */
static void mark_subtree (struct tree *t, uint32_t rank, const char *state)
{
    if (rank >= t->size)
        return;
    t->info[rank].state = state;
    t->info[rank].size = subtree_size (rank, t->size, t->k);
    t->info[rank].online = !strcmp (state, "full") ? t->info[rank].size : 0;
    t->info[rank].ready = t->info[rank].online;
    t->info[rank].torpid = false;
    for (uint32_t i = 1; i <= t->k; i++) {
        uint64_t c = (uint64_t)rank * t->k + i;
        if (c >= t->size)
            break;
        mark_subtree (t, c, state);
    }
}

/* True if 'a' is 'r' or one of its ancestors. */
static bool leads_to (uint32_t a, uint32_t r, uint32_t k)
{
    while (r > a)
        r = (r - 1) / k;
    return r == a;
}

/* Classify rank's children (rank itself is online).  deep: ask full
 * subtrees too (to see torpid ranks), not only partial ones.  target >= 0:
 * ask only the brokers on the way to it (its parent reports it).
 */
static void walk (canopy_t *h, struct tree *t, uint32_t rank, bool deep, long target)
{
    json_t *o = status_of (h, rank);
    json_t *children, *c;
    size_t i;

    if (!o || json_unpack (o, "{s:o}", "children", &children) < 0) {
        /* it answered its parent a moment ago; now it does not */
        json_decref (o);
        mark_subtree (t, rank, "lost");
        return;
    }
    json_array_foreach (children, i, c) {
        int crank, conline, csize, torpid = 0, cready = -1;
        const char *cstate;
        if (json_unpack (c, "{s:i s:s s:i s:i s?b s?i}", "rank", &crank, "state", &cstate,
                         "online", &conline, "size", &csize, "torpid", &torpid,
                         "ready", &cready) < 0
            || crank < 0 || (uint32_t)crank >= t->size)
            continue;
        if (cready < 0)
            cready = conline;
        if (!strcmp (cstate, "online")) {
            bool full = conline == csize;
            mark_subtree (t, crank, full ? "full" : "partial");
            /* a torpid rank would not answer: take its parent's word; a
             * subtree still starting is asked which rank it is
             */
            bool wanted = target < 0 ? !full || deep || cready < conline
                                     : crank != target
                                       && leads_to (crank, target, t->k);
            if (wanted && !torpid)
                walk (h, t, crank, deep, target);
            t->info[crank].online = conline;
            t->info[crank].ready = cready;
            t->info[crank].size = csize;
            t->info[crank].torpid = torpid;
        }
        else
            mark_subtree (t, crank, !strcmp (cstate, "lost") ? "lost" : "offline");
    }
    json_decref (o);
}

/* Rank 0's own entry, then the rest by walking. */
static void survey (canopy_t *h, struct tree *t, bool deep, long target)
{
    json_t *o = status_of (h, 0);
    const char *state;
    int online, size, ready = -1;

    if (!o || json_unpack (o, "{s:s s:i s:i s?i}", "state", &state, "online", &online,
                           "size", &size, "ready", &ready) < 0)
        log_msg_exit ("rank 0 did not answer overlay.status");
    if (ready < 0)
        ready = online;
    for (uint32_t r = 0; r < t->size; r++)
        t->info[r] = (struct rankinfo){ .state = "offline" };
    t->info[0] = (struct rankinfo){ .state = !strcmp (state, "full") ? "full" : "partial",
                                    .online = online, .size = size };
    json_decref (o);
    mark_subtree (t, 0, online == size ? "full" : "partial");
    if (target == 0)
        ;   /* rank 0's own answer is all we need */
    else if (online != size || ready != online || deep || target > 0)
        walk (h, t, 0, deep, target);
    t->info[0].online = online;
    t->info[0].ready = ready;
    t->info[0].size = size;
}

/* A rank that is up but whose own modules are still setting up: its
 * subtree's ready count, less its online children's.
 */
static bool starting (struct tree *t, uint32_t rank)
{
    struct rankinfo *ri = &t->info[rank];
    int ready = ri->ready;

    if (strcmp (ri->state, "full") != 0 && strcmp (ri->state, "partial") != 0)
        return false;
    for (uint32_t i = 1; i <= t->k; i++) {
        uint64_t c = (uint64_t)rank * t->k + i;
        if (c >= t->size)
            break;
        ready -= t->info[c].ready;
    }
    return ready < 1;
}

static void draw (struct tree *t, uint32_t rank, const char *prefix, bool last, bool root)
{
    struct rankinfo *ri = &t->info[rank];
    printf ("%s%s%u: %s%s%s (%d/%d)\n", prefix, root ? "" : last ? "`- " : "|- ",
            rank, ri->state, ri->torpid ? " torpid" : "",
            starting (t, rank) ? " starting" : "", ri->online, ri->size);
    if (strcmp (ri->state, "full") != 0 && strcmp (ri->state, "partial") != 0)
        return;
    char *sub = xasprintf ("%s%s", prefix, root ? "" : last ? "   " : "|  ");
    for (uint32_t i = 1; i <= t->k; i++) {
        uint64_t c = (uint64_t)rank * t->k + i;
        if (c >= t->size)
            break;
        bool clast = i == t->k || c + 1 >= t->size;
        draw (t, c, sub, clast, false);
    }
    free (sub);
}

/* Print "LABEL: a,b-c" for ranks in 'state' (nothing if none). */
static void print_ranks (struct tree *t, const char *state)
{
    bool any = false;
    uint32_t r = 0;
    while (r < t->size) {
        if (strcmp (t->info[r].state, state) != 0) {
            r++;
            continue;
        }
        uint32_t end = r;
        while (end + 1 < t->size && !strcmp (t->info[end + 1].state, state))
            end++;
        if (any)
            putchar (',');
        else
            printf ("%s: ", state);
        if (end == r)
            printf ("%u", r);
        else
            printf ("%u-%u", r, end);
        any = true;
        r = end + 1;
    }
    if (any)
        printf ("\n");
}

static bool valid_state (const char *s)
{
    return !strcmp (s, "full") || !strcmp (s, "partial") || !strcmp (s, "lost")
           || !strcmp (s, "offline");
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "rank", required_argument, NULL, 'r' },
        { "wait", required_argument, NULL, 'w' },
        { "timeout", required_argument, NULL, 't' },
        { "summary", no_argument, NULL, 's' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *wait_state = NULL;
    bool summary = false, json = false;
    long rank = -1;
    double timeout = -1;
    int c;

    log_init ("canopy-overlay");
    if (argc >= 2 && (!strcmp (argv[1], "-h") || !strcmp (argv[1], "--help")))
        cmd_usage (usage_text, 0);
    if (argc < 2 || strcmp (argv[1], "status") != 0)
        cmd_usage (usage_text, 1);
    optind = 2;
    while ((c = getopt_long (argc, argv, "r:w:t:sjh", longopts, NULL)) != -1) {
        switch (c) {
            case 'r':
                rank = cmd_parse_long (optarg, "rank", 0, UINT32_MAX - 1);
                break;
            case 'w':
                if (!valid_state (optarg))
                    log_msg_exit ("--wait takes full, partial, lost or offline");
                wait_state = optarg;
                break;
            case 't':
                timeout = cmd_parse_double (optarg, "timeout");
                break;
            case 's':
                summary = true;
                break;
            case 'j':
                json = true;
                break;
            case 'h':
                cmd_usage (usage_text, 0);
            default:
                cmd_usage (usage_text, 1);
        }
    }
    if (optind != argc)
        cmd_usage (usage_text, 1);
    if (timeout >= 0 && !wait_state)
        log_msg_exit ("--timeout goes with --wait");
    if (summary && rank >= 0)
        log_msg_exit ("--summary goes without --rank");
    canopy_t *h = cmd_open ();
    struct tree t;
    const char *k = canopy_attr_get (h, "tbon.k");
    t.size = cmd_get_size (h);
    t.k = k ? strtoul (k, NULL, 10) : 2;
    if (t.k == 0)
        t.k = 2;
    if (rank >= 0 && (uint32_t)rank >= t.size)
        log_msg_exit ("rank %ld is not in this instance (size %u)", rank, t.size);
    if (json) {
        if (rank < 0 || wait_state || summary)
            log_msg_exit ("--json goes with --rank, alone");
        json_t *o = status_of (h, rank);
        char *s;
        if (!o || !(s = json_dumps (o, JSON_COMPACT)))
            log_msg_exit ("rank %ld did not answer overlay.status", rank);
        printf ("%s\n", s);
        free (s);
        json_decref (o);
        canopy_close (h);
        return 0;
    }
    t.info = xzmalloc (sizeof (*t.info) * t.size);

    double t0 = monotime ();
    int rc = 0;
    for (;;) {
        survey (h, &t, !summary && !wait_state && rank < 0, rank);
        const char *now = t.info[rank >= 0 ? rank : 0].state;
        if (!wait_state || !strcmp (now, wait_state))
            break;
        if (timeout >= 0 && monotime () - t0 > timeout) {
            if (rank >= 0)
                log_msg ("timed out: rank %ld is %s, not %s", rank, now, wait_state);
            else
                log_msg ("timed out: %d of %u brokers online", t.info[0].online, t.size);
            rc = 1;
            if (rank < 0)
                summary = true;
            break;
        }
        usleep (100000);
    }
    if (rank >= 0)
        printf ("%s%s\n", t.info[rank].state, t.info[rank].torpid ? " torpid" : "");
    else if (summary) {
        printf ("%s %d/%u\n", t.info[0].state, t.info[0].online, t.size);
        print_ranks (&t, "lost");
        print_ranks (&t, "offline");
    }
    else
        draw (&t, 0, "", true, true);
    free (t.info);
    canopy_close (h);
    return rc;
}
