/* kap_opts.h - KAP's configuration and its command line.
 *
 * Every MPI rank parses the same argv into the same struct kap_config, so
 * the roles and key names derived from it agree without communication.
 * Parsing is pure C (getopt_long, no MPI, no broker) so it is unit-tested
 * on its own.
 */
#ifndef KAP_OPTS_H
#define KAP_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

enum kap_sync_type {
    KAP_SYNC_FENCE = 0,     /* every actor joins one collective fence */
    KAP_SYNC_CAUSAL = 1,    /* producers fence, consumers wait for the version */
};

enum kap_commit_type {
    KAP_COMMIT_FENCE = 0,   /* intermediate commits are fences of the producers */
    KAP_COMMIT_SERIAL = 1,  /* intermediate commits are independent kvs_commit */
};

enum {
    KAP_MAX_VALUE_SIZE = 16 * 1024 * 1024,
};

struct kap_config {
    int size;               /* MPI world size (not an option) */
    int nprocs;             /* -T: ranks taking part (ranks >= nprocs idle) */
    int nproducers;         /* -P: ranks 0..P-1 produce */
    int nconsumers;         /* -C: ranks T-C..T-1 consume */
    int value_size;         /* -p: bytes per value */
    int access_count;       /* -c: gets per consumer per iteration */
    int access_stride;      /* -a: distance between producers read */
    int iter_producer;      /* -i: producer iterations */
    int keys_per_iter;      /* -K: puts per producer per iteration */
    int iter_commit;        /* -f: commit every N iterations (0: never) */
    enum kap_commit_type commit_type;   /* -t f|s */
    int iter_consumer;      /* -j: iterations read (<= iter_producer) */
    enum kap_sync_type sync_type;       /* -s f|c */
    int ndirs;              /* -d: directories the producers are spread over */
    bool redundant;         /* -e: every producer writes the same value */
    int instance;           /* -n: namespaces keys and fence names */
    int read_rank;          /* -R: consumers read through this broker (-1: own) */
    int straggler_ms;       /* --straggler: the last rank starts this late */
    bool list_config;       /* -l: print the configuration first */
    bool help;              /* -h */
    bool inject_corruption; /* hidden: overwrite a key before the gets */
    char *uri_file;         /* --uri-file: broker URIs, one per line */
    char *json_file;        /* --json: write the results here */
};

/* Parse argv (argv[0] is the program name) for a job of 'size' ranks.
 * Fills 'cfg' with defaults, then options, then validates.  Returns 0, or
 * -1 with a one-sentence explanation in errbuf (cfg is then freed).
 * Call kap_opts_free() after a successful parse.
 */
int kap_opts_parse (struct kap_config *cfg, int argc, char *argv[], int size,
                    char *errbuf, size_t errlen);
void kap_opts_free (struct kap_config *cfg);

/* The --help text. */
const char *kap_opts_usage (void);

/* The configuration as a JSON object (new reference), or NULL on ENOMEM. */
json_t *kap_config_json (const struct kap_config *cfg);

/* Parse a size "N", "Nk"/"NK" (KiB) or "Nm"/"NM" (MiB).  Returns -1 on
 * a malformed or negative value or overflow of int.
 */
int kap_parse_size (const char *s, int *val);

#endif
