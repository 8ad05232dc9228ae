/* kap_crowd_opts.c - kap-crowd's own options (kap_crowd_opts.h).
 *
 * argv is scanned once: kap-crowd's options (long form with '=' or a
 * separate argument, or the short -N) are consumed, everything else is
 * copied in order into kap_argv, so KAP's own parser and its error
 * messages apply unchanged to the rest.  A "--" ends the scan: what
 * follows goes to KAP untouched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <limits.h>
#include "kap_crowd_opts.h"

static const char *usage_text =
"Usage: kap-crowd [-N PARTICIPANTS] [--placement=cyclic|block] [--brokers=N]\n"
"                 [--progress] [KAP OPTIONS]\n"
"\n"
"KAP without MPI: one process runs every participant as its own client\n"
"handle, all on one reactor, so thousands of participants need no MPI\n"
"job.  Participants are spread over the brokers of the instance named by\n"
"CANOPY_URI (or the lines of --uri-file).  Results are KAP's table and\n"
"JSON document.\n"
"\n"
"  -N, --participants=N      simulated job size, KAP's ranks (default: one\n"
"                            per broker)\n"
"      --placement=cyclic|block  participant i on broker i mod B (cyclic,\n"
"                            default) or in consecutive blocks\n"
"      --brokers=N           use only brokers 0..N-1\n"
"      --progress            report each phase on stderr\n"
"\n"
"KAP options:\n";

const char *kap_crowd_usage (void)
{
    return usage_text;
}

static int parse_count (const char *s, int *val)
{
    char *end;
    long v;

    errno = 0;
    v = strtol (s, &end, 10);
    if (errno || end == s || *end || v < 1 || v > INT_MAX)
        return -1;
    *val = (int)v;
    return 0;
}

/* If argv[*i] is option 'name' (long, "--name=V" or "--name V") or the
 * short 'shortopt' ("-N V" or "-NV"), set *value and advance *i past its
 * argument.  Returns 1 if matched, 0 if not, -1 if the argument is missing.
 */
static int match_arg (int argc, char *argv[], int *i, const char *name,
                      char shortopt, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen (name);

    if (!strncmp (a, "--", 2) && !strncmp (a + 2, name, n)) {
        if (a[2 + n] == '=') {
            *value = a + 3 + n;
            return 1;
        }
        if (a[2 + n] == '\0') {
            if (*i + 1 >= argc)
                return -1;
            *value = argv[++(*i)];
            return 1;
        }
        return 0;
    }
    if (shortopt && a[0] == '-' && a[1] == shortopt) {
        if (a[2]) {
            *value = a + 2;
            return 1;
        }
        if (*i + 1 >= argc)
            return -1;
        *value = argv[++(*i)];
        return 1;
    }
    return 0;
}

int kap_crowd_opts_parse (struct kap_crowd_config *cc, int argc, char *argv[],
                          char *errbuf, size_t errlen)
{
    const char *v;
    int rc;

    memset (cc, 0, sizeof (*cc));
    if (argc < 1) {
        snprintf (errbuf, errlen, "no program name");
        errno = EINVAL;
        return -1;
    }
    if (!(cc->kap_argv = calloc (argc + 1, sizeof (char *)))) {
        snprintf (errbuf, errlen, "out of memory");
        return -1;
    }
    cc->kap_argv[cc->kap_argc++] = argv[0];
    for (int i = 1; i < argc; i++) {
        if (!strcmp (argv[i], "--")) {
            while (++i < argc)
                cc->kap_argv[cc->kap_argc++] = argv[i];
            break;
        }
        if ((rc = match_arg (argc, argv, &i, "participants", 'N', &v)) != 0) {
            if (rc < 0 || parse_count (v, &cc->participants) < 0) {
                snprintf (errbuf, errlen, "--participants needs a count of"
                          " at least 1");
                goto error;
            }
        }
        else if ((rc = match_arg (argc, argv, &i, "brokers", 0, &v)) != 0) {
            if (rc < 0 || parse_count (v, &cc->brokers) < 0) {
                snprintf (errbuf, errlen, "--brokers needs a count of at"
                          " least 1");
                goto error;
            }
        }
        else if ((rc = match_arg (argc, argv, &i, "placement", 0, &v)) != 0) {
            if (rc > 0 && !strcmp (v, "cyclic"))
                cc->placement = KAP_PLACE_CYCLIC;
            else if (rc > 0 && !strcmp (v, "block"))
                cc->placement = KAP_PLACE_BLOCK;
            else {
                snprintf (errbuf, errlen, "--placement is cyclic or block");
                goto error;
            }
        }
        else if (!strcmp (argv[i], "--progress"))
            cc->progress = true;
        else {
            if (!strcmp (argv[i], "--help") || !strcmp (argv[i], "-h"))
                cc->help = true;
            cc->kap_argv[cc->kap_argc++] = argv[i];
        }
    }
    return 0;
error:
    kap_crowd_opts_free (cc);
    errno = EINVAL;
    return -1;
}

void kap_crowd_opts_free (struct kap_crowd_config *cc)
{
    if (cc) {
        int saved_errno = errno;
        free (cc->kap_argv);
        cc->kap_argv = NULL;
        cc->kap_argc = 0;
        errno = saved_errno;
    }
}

int kap_crowd_broker_of (enum kap_placement placement, int rank, int nparts,
                         int nbrokers)
{
    if (rank < 0 || nparts < 1 || nbrokers < 1 || rank >= nparts)
        return -1;
    if (placement == KAP_PLACE_BLOCK) {
        /* the first (nparts mod B) brokers take one extra participant */
        int base = nparts / nbrokers;
        int extra = nparts % nbrokers;
        int cut = extra * (base + 1);
        if (rank < cut)
            return rank / (base + 1);
        return extra + (rank - cut) / (base > 0 ? base : 1);
    }
    return rank % nbrokers;
}
