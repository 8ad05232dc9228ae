/* boot_config.h - boot a broker of a permanent cluster instance from a
 * configuration file (canopy-broker --config FILE; format in
 * canopy-broker(8) and doc/internals.md, "5.5 Booting").
 *
 * The file (TOML) lists the hosts in rank order with their addresses and
 * ports, the tree's fan-out, the CURVE certificate shared by the
 * instance, the run directory (the local socket is RUNDIR/local), the
 * state directory (rank 0) and where the log goes.  A broker finds its
 * rank by its host name, unless told (--rank).
 *
 * boot_config_load() reads and checks everything before the broker
 * starts; any problem is one sentence naming the file, line and field:
 *   "/etc/canopy/system.toml:12: hosts[1].port: must be an integer from 1
 *    to 65535"
 * boot_config_wire() then loads the certificate and makes the TCP links
 * (CURVE on every one; the allow-list is the instance's public key).
 *
 * Errors: NULL/-1 with errno (EINVAL for a bad file) and errbuf filled.
 */
#ifndef CANOPY_BROKER_BOOT_CONFIG_H
#define CANOPY_BROKER_BOOT_CONFIG_H

#include <stdint.h>
#include <stddef.h>
#include <jansson.h>

struct overlay;

struct boot_config {
    char *path;
    uint32_t rank;
    uint32_t size;
    uint32_t k;
    char *host;             /* this rank's hosts[] entry */
    char *bind_uri;         /* tcp://BIND:PORT, NULL if no children */
    char *parent_uri;       /* tcp://ADDR:PORT of the parent, NULL on rank 0 */
    char *rundir;
    char *cert_path;        /* NULL if the instance has one broker */
    json_t *attrs;          /* attribute name -> string value */
};

/* hostname: this machine's name (matched against hosts[].host, also
 * without domain); rank: -1 to match by name, else the rank to take.
 */
struct boot_config *boot_config_load (const char *path, const char *hostname,
                                      int64_t rank, char *errbuf, size_t errsize);
void boot_config_destroy (struct boot_config *bc);

/* Load the certificate into the overlay, bind and connect. */
int boot_config_wire (struct boot_config *bc, struct overlay *ov,
                      char *errbuf, size_t errsize);

#endif
