/* kap_crowd_opts.h - the command line of kap-crowd, KAP's non-MPI driver.
 *
 * kap-crowd takes every KAP option (kap_opts.h) plus its own, which are
 * picked out of argv first so that kap_opts_parse sees only KAP's:
 *   -N, --participants=N   size of the simulated job (KAP's "MPI size")
 *   --placement=cyclic|block   how participants map onto brokers
 *   --brokers=N            use only the first N brokers of the instance
 *   --progress             print a line per phase to stderr
 * Pure C, unit-tested without a broker.
 */
#ifndef KAP_CROWD_OPTS_H
#define KAP_CROWD_OPTS_H

#include <stdbool.h>
#include <stddef.h>

enum kap_placement {
    KAP_PLACE_CYCLIC = 0,   /* participant i on broker i mod B (srun -m cyclic) */
    KAP_PLACE_BLOCK = 1,    /* consecutive participants share a broker */
};

struct kap_crowd_config {
    int participants;           /* 0: one per broker of the instance */
    enum kap_placement placement;
    int brokers;                /* 0: all */
    bool progress;
    bool help;
    /* what is left for kap_opts_parse: argv[0] plus KAP's options */
    int kap_argc;
    char **kap_argv;            /* array owned here, strings borrowed */
};

/* Split argv.  Returns 0, or -1 with a sentence in errbuf.  On success
 * call kap_crowd_opts_free() when done.
 */
int kap_crowd_opts_parse (struct kap_crowd_config *cc, int argc, char *argv[],
                          char *errbuf, size_t errlen);
void kap_crowd_opts_free (struct kap_crowd_config *cc);

/* The broker index (0..nbrokers-1) of participant 'rank' of 'nparts'. */
int kap_crowd_broker_of (enum kap_placement placement, int rank, int nparts,
                         int nbrokers);

/* kap-crowd's own lines of --help (KAP's follow them). */
const char *kap_crowd_usage (void);

#endif
