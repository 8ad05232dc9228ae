/* canopy-keygen.c - write the CURVE certificate of a cluster instance.
 *
 * Every broker of a permanent instance loads the same certificate
 * (security.curve-cert in the configuration file) and admits only peers
 * that prove they hold it.  Copy the file to every host, readable only by
 * the user the brokers run as.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <getopt.h>
#include <time.h>
#include "src/common/libutil/log.h"
#include "src/broker/cert.h"
#include "cmdutil.h"

static const char *usage_text =
"Usage: canopy keygen [--force] [--name=NAME] PATH\n"
"\n"
"Write a new CURVE certificate (public and secret key) to PATH, mode\n"
"0600, for the brokers of a cluster instance (see canopy-broker(8)).\n"
"Prints the public key.\n"
"\n"
"  -f, --force      replace PATH if it exists\n"
"  -n, --name=NAME  a name stored in the certificate (default: the host)\n"
"  -h, --help       show this help\n";

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "force", no_argument, NULL, 'f' },
        { "name", required_argument, NULL, 'n' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool force = false;
    const char *name = NULL;
    char host[256] = "";
    char stamp[64];
    char err[512];
    time_t now = time (NULL);
    struct tm tm;
    cert_t *cert;
    int c;

    log_init ("canopy-keygen");
    while ((c = getopt_long (argc, argv, "fn:h", longopts, NULL)) != -1) {
        switch (c) {
            case 'f':
                force = true;
                break;
            case 'n':
                name = optarg;
                break;
            case 'h':
                cmd_usage (usage_text, 0);
            default:
                cmd_usage (usage_text, 1);
        }
    }
    if (argc - optind != 1)
        cmd_usage (usage_text, 1);
    if (!name) {
        (void)gethostname (host, sizeof (host) - 1);
        name = host;
    }
    if (!(cert = cert_create ()))
        log_err_exit ("cannot make a key pair");
    strftime (stamp, sizeof (stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime_r (&now, &tm));
    if (cert_set_meta (cert, "name", name) < 0
        || cert_set_meta (cert, "keygen.time", stamp) < 0
        || cert_set_meta (cert, "keygen.by", "canopy keygen " PACKAGE_VERSION) < 0)
        log_err_exit ("certificate metadata");
    if (cert_save (cert, argv[optind], force, err, sizeof (err)) < 0)
        log_msg_exit ("%s", err);
    printf ("%s\n", cert_public (cert));
    cert_destroy (cert);
    return 0;
}
