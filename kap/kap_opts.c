/* kap_opts.c - KAP's command line: defaults, getopt_long, validation.
 *
 * Option names follow the original tester (long and short forms); the
 * defaults make every rank a producer and a consumer of one 8-byte value
 * synchronised by one collective fence.  Validation errors are sentences
 * for the user; nothing here talks to MPI or a broker.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include "kap_opts.h"

enum {
    OPT_URI_FILE = 256,
    OPT_JSON,
    OPT_INJECT,
    OPT_STRAGGLER,
};

static const struct option longopts[] = {
    { "total-num-proc",   required_argument, NULL, 'T' },
    { "nproducers",       required_argument, NULL, 'P' },
    { "nconsumers",       required_argument, NULL, 'C' },
    { "value-size",       required_argument, NULL, 'p' },
    { "cons-acc-count",   required_argument, NULL, 'c' },
    { "access-stride",    required_argument, NULL, 'a' },
    { "iter-producer",    required_argument, NULL, 'i' },
    { "keys-per-iter",    required_argument, NULL, 'K' },
    { "iter-commit",      required_argument, NULL, 'f' },
    { "iter-commit-type", required_argument, NULL, 't' },
    { "iter-consumer",    required_argument, NULL, 'j' },
    { "sync-type",        required_argument, NULL, 's' },
    { "ndirs",            required_argument, NULL, 'd' },
    { "redundant-val",    no_argument,       NULL, 'e' },
    { "instance-num",     required_argument, NULL, 'n' },
    { "read-rank",        required_argument, NULL, 'R' },
    { "list-config",      no_argument,       NULL, 'l' },
    { "uri-file",         required_argument, NULL, OPT_URI_FILE },
    { "json",             required_argument, NULL, OPT_JSON },
    { "inject-corruption", no_argument,      NULL, OPT_INJECT },
    { "straggler",        required_argument, NULL, OPT_STRAGGLER },
    { "help",             no_argument,       NULL, 'h' },
    { NULL, 0, NULL, 0 },
};
static const char *shortopts = "+:T:P:C:p:c:a:i:K:f:t:j:s:d:en:R:lh";

static const char *usage_text =
"Usage: kap [OPTIONS]\n"
"\n"
"KVS Access Patterns tester: an MPI program whose ranks put values into\n"
"the canopy KVS (producers), synchronise, and read each other's values\n"
"back (consumers), timing every operation.  Each rank connects to the\n"
"broker named by CANOPY_URI, or to line (rank modulo lines) of --uri-file.\n"
"\n"
"  -T, --total-num-proc=N    ranks taking part (default: all)\n"
"  -P, --nproducers=N        ranks 0..N-1 put values (default: all)\n"
"  -C, --nconsumers=N        the last N ranks get values (default: all)\n"
"  -p, --value-size=BYTES    bytes per value; k/m suffixes (default: 8)\n"
"  -c, --cons-acc-count=N    gets per consumer per iteration (default: 1)\n"
"  -a, --access-stride=N     distance between the producers a consumer\n"
"                            reads (default: 1)\n"
"  -i, --iter-producer=N     producer iterations, each in its own\n"
"                            directory (default: 1)\n"
"  -K, --keys-per-iter=N     puts per producer per iteration; a consumer\n"
"                            reads all N keys of each producer it reads\n"
"                            (default: 1, as in the original tester)\n"
"  -f, --iter-commit=N       commit every N producer iterations\n"
"                            (default: 0, only the sync phase commits)\n"
"  -t, --iter-commit-type=f|s  those commits are fences of all producers\n"
"                            (f, default) or serial kvs_commit calls (s)\n"
"  -j, --iter-consumer=N     iterations each consumer reads (default: 1,\n"
"                            at most --iter-producer)\n"
"  -s, --sync-type=f|c       sync phase: one collective fence of every\n"
"                            rank (f, default), or causal (c): producers\n"
"                            fence, rank 0 publishes the KVS version,\n"
"                            consumers wait for it\n"
"  -d, --ndirs=N             spread the producers' keys over N\n"
"                            directories per iteration (default: 1)\n"
"  -e, --redundant-val       every producer writes the same value\n"
"  -n, --instance-num=N      namespace for keys and fences (default: 0);\n"
"                            use a new one for each run in one instance\n"
"  -R, --read-rank=N         consumers send their gets to broker N (routed\n"
"                            over the tree) instead of their own broker\n"
"      --straggler=MS        the last rank taking part starts MS\n"
"                            milliseconds after the others (default 0):\n"
"                            the sync fence's KVS part (last entry to\n"
"                            first answer) is then the tree's own latency,\n"
"                            with no backlog of the others' contributions\n"
"  -l, --list-config         print the configuration before running\n"
"      --uri-file=FILE       broker URIs, one per line (for mpirun)\n"
"      --json=FILE           write the configuration and every figure\n"
"                            as one JSON document\n"
"  -h, --help                show this help\n"
"\n"
"Exit status: 0 if every value read back was the value written, 1 if any\n"
"was wrong or missing, or on any error.\n";

const char *kap_opts_usage (void)
{
    return usage_text;
}

int kap_parse_size (const char *s, int *val)
{
    char *end;
    long long n;
    long long mult = 1;

    if (!s || !*s)
        return -1;
    errno = 0;
    n = strtoll (s, &end, 10);
    if (errno != 0 || end == s || n < 0)
        return -1;
    if (*end == 'k' || *end == 'K') {
        mult = 1024;
        end++;
    }
    else if (*end == 'm' || *end == 'M') {
        mult = 1024 * 1024;
        end++;
    }
    if (*end != '\0' || n > INT_MAX / mult)
        return -1;
    *val = (int)(n * mult);
    return 0;
}

static int parse_int (const char *s, int *val)
{
    char *end;
    long n;

    errno = 0;
    n = strtol (s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || n < INT_MIN || n > INT_MAX)
        return -1;
    *val = (int)n;
    return 0;
}

void kap_opts_free (struct kap_config *cfg)
{
    if (cfg) {
        int saved_errno = errno;
        free (cfg->uri_file);
        free (cfg->json_file);
        cfg->uri_file = NULL;
        cfg->json_file = NULL;
        errno = saved_errno;
    }
}

static void set_defaults (struct kap_config *cfg, int size)
{
    memset (cfg, 0, sizeof (*cfg));
    cfg->size = size;
    cfg->nprocs = -1;       /* -1: follow nprocs / size */
    cfg->nproducers = -1;
    cfg->nconsumers = -1;
    cfg->value_size = 8;
    cfg->access_count = 1;
    cfg->access_stride = 1;
    cfg->iter_producer = 1;
    cfg->keys_per_iter = 1;
    cfg->iter_commit = 0;
    cfg->commit_type = KAP_COMMIT_FENCE;
    cfg->iter_consumer = 1;
    cfg->sync_type = KAP_SYNC_FENCE;
    cfg->ndirs = 1;
    cfg->instance = 0;
    cfg->read_rank = -1;
}

#define FAIL(...) do { snprintf (errbuf, errlen, __VA_ARGS__); goto error; } while (0)

static int validate (struct kap_config *cfg, char *errbuf, size_t errlen)
{
    if (cfg->nprocs < 0)
        cfg->nprocs = cfg->size;
    if (cfg->nprocs < 1 || cfg->nprocs > cfg->size)
        FAIL ("--total-num-proc must be between 1 and the number of ranks"
              " (participants) (%d).", cfg->size);
    if (cfg->nproducers < 0)
        cfg->nproducers = cfg->nprocs;
    if (cfg->nconsumers < 0)
        cfg->nconsumers = cfg->nprocs;
    if (cfg->nproducers < 1 || cfg->nproducers > cfg->nprocs)
        FAIL ("--nproducers must be between 1 and --total-num-proc (%d).",
              cfg->nprocs);
    if (cfg->nconsumers > cfg->nprocs)
        FAIL ("--nconsumers must be between 0 and --total-num-proc (%d).",
              cfg->nprocs);
    if (cfg->value_size < 1 || cfg->value_size > KAP_MAX_VALUE_SIZE)
        FAIL ("--value-size must be between 1 byte and %d MiB.",
              KAP_MAX_VALUE_SIZE / (1024 * 1024));
    if (cfg->access_count < 1)
        FAIL ("--cons-acc-count must be at least 1.");
    if (cfg->access_stride < 1)
        FAIL ("--access-stride must be at least 1.");
    if (cfg->iter_producer < 1)
        FAIL ("--iter-producer must be at least 1.");
    if (cfg->keys_per_iter < 1)
        FAIL ("--keys-per-iter must be at least 1.");
    if (cfg->iter_commit < 0)
        FAIL ("--iter-commit must be 0 (no intermediate commits) or more.");
    if (cfg->iter_consumer < 1)
        FAIL ("--iter-consumer must be at least 1.");
    if (cfg->iter_consumer > cfg->iter_producer)
        cfg->iter_consumer = cfg->iter_producer;
    if (cfg->ndirs < 1 || cfg->ndirs > cfg->nproducers)
        FAIL ("--ndirs must be between 1 and --nproducers (%d).",
              cfg->nproducers);
    if (cfg->instance < 0)
        FAIL ("--instance-num must not be negative.");
    if (cfg->read_rank < -1)
        FAIL ("--read-rank must be a broker rank.");
    if (cfg->straggler_ms < 0 || cfg->straggler_ms > 60000)
        FAIL ("--straggler must be from 0 to 60000 milliseconds.");
    return 0;
error:
    return -1;
}

int kap_opts_parse (struct kap_config *cfg, int argc, char *argv[], int size,
                    char *errbuf, size_t errlen)
{
    int c;
    int *target;
    const char *name;

    if (!cfg || !argv || size < 1 || !errbuf || errlen == 0) {
        errno = EINVAL;
        return -1;
    }
    set_defaults (cfg, size);
    optind = 0;     /* glibc: start over (parse may run more than once) */
    opterr = 0;
    while ((c = getopt_long (argc, argv, shortopts, longopts, NULL)) != -1) {
        target = NULL;
        name = NULL;
        switch (c) {
            case 'T': target = &cfg->nprocs; name = "--total-num-proc"; break;
            case 'P': target = &cfg->nproducers; name = "--nproducers"; break;
            case 'C': target = &cfg->nconsumers; name = "--nconsumers"; break;
            case 'c': target = &cfg->access_count; name = "--cons-acc-count"; break;
            case 'a': target = &cfg->access_stride; name = "--access-stride"; break;
            case 'i': target = &cfg->iter_producer; name = "--iter-producer"; break;
            case 'K': target = &cfg->keys_per_iter; name = "--keys-per-iter"; break;
            case 'f': target = &cfg->iter_commit; name = "--iter-commit"; break;
            case 'j': target = &cfg->iter_consumer; name = "--iter-consumer"; break;
            case 'd': target = &cfg->ndirs; name = "--ndirs"; break;
            case 'n': target = &cfg->instance; name = "--instance-num"; break;
            case 'R': target = &cfg->read_rank; name = "--read-rank"; break;
            case OPT_STRAGGLER: target = &cfg->straggler_ms; name = "--straggler"; break;
            case 'p':
                if (kap_parse_size (optarg, &cfg->value_size) < 0)
                    FAIL ("--value-size '%s' is not a size in bytes (k and m suffixes allowed).",
                          optarg);
                break;
            case 't':
                if (!strcmp (optarg, "f") || !strcmp (optarg, "fence"))
                    cfg->commit_type = KAP_COMMIT_FENCE;
                else if (!strcmp (optarg, "s") || !strcmp (optarg, "serial"))
                    cfg->commit_type = KAP_COMMIT_SERIAL;
                else
                    FAIL ("--iter-commit-type must be f (fence) or s (serial), not '%s'.",
                          optarg);
                break;
            case 's':
                if (!strcmp (optarg, "f") || !strcmp (optarg, "fence"))
                    cfg->sync_type = KAP_SYNC_FENCE;
                else if (!strcmp (optarg, "c") || !strcmp (optarg, "causal"))
                    cfg->sync_type = KAP_SYNC_CAUSAL;
                else
                    FAIL ("--sync-type must be f (fence) or c (causal), not '%s'.",
                          optarg);
                break;
            case 'e': cfg->redundant = true; break;
            case 'l': cfg->list_config = true; break;
            case 'h': cfg->help = true; break;
            case OPT_INJECT: cfg->inject_corruption = true; break;
            case OPT_URI_FILE:
                free (cfg->uri_file);
                if (!(cfg->uri_file = strdup (optarg)))
                    FAIL ("out of memory");
                break;
            case OPT_JSON:
                free (cfg->json_file);
                if (!(cfg->json_file = strdup (optarg)))
                    FAIL ("out of memory");
                break;
            case ':':
                FAIL ("option '%s' needs an argument.", argv[optind - 1]);
            default:
                if (optopt && optopt < 256)
                    FAIL ("unknown option '-%c' (see --help).", optopt);
                FAIL ("unknown option '%s' (see --help).", argv[optind - 1]);
        }
        if (target && parse_int (optarg, target) < 0)
            FAIL ("%s '%s' is not an integer.", name, optarg);
    }
    if (optind < argc)
        FAIL ("unexpected argument '%s' (see --help).", argv[optind]);
    if (cfg->help)
        return 0;
    if (validate (cfg, errbuf, errlen) < 0)
        goto error;
    return 0;
error:
    kap_opts_free (cfg);
    errno = EINVAL;
    return -1;
}

json_t *kap_config_json (const struct kap_config *cfg)
{
    if (!cfg) {
        errno = EINVAL;
        return NULL;
    }
    json_t *o = json_pack ("{s:i s:i s:i s:i s:i s:i s:i s:i s:i s:i s:s s:i"
                           " s:s s:i s:b s:i s:i s:i}",
                           "mpi_size", cfg->size,
                           "total_num_proc", cfg->nprocs,
                           "nproducers", cfg->nproducers,
                           "nconsumers", cfg->nconsumers,
                           "value_size", cfg->value_size,
                           "cons_acc_count", cfg->access_count,
                           "access_stride", cfg->access_stride,
                           "iter_producer", cfg->iter_producer,
                           "keys_per_iter", cfg->keys_per_iter,
                           "iter_commit", cfg->iter_commit,
                           "iter_commit_type",
                           cfg->commit_type == KAP_COMMIT_FENCE ? "fence" : "serial",
                           "iter_consumer", cfg->iter_consumer,
                           "sync_type",
                           cfg->sync_type == KAP_SYNC_FENCE ? "fence" : "causal",
                           "ndirs", cfg->ndirs,
                           "redundant_val", cfg->redundant,
                           "instance_num", cfg->instance,
                           "read_rank", cfg->read_rank,
                           "straggler_ms", cfg->straggler_ms);
    if (!o)
        errno = ENOMEM;
    return o;
}
