/* boot_pmi.c - bootstrap the broker tree through a launcher's PMI (boot_pmi.h).
 *
 * Design notes:
 * - The ROUTER must bind before its endpoint is published, and the overlay
 *   does not report the port a "tcp://ADDR:*" bind picked.  So the port is
 *   chosen here: a plain socket with SO_REUSEADDR is bound to ADDR:0 and
 *   kept (bound, not listening) while the ROUTER binds the same port --
 *   Linux allows that when both sockets set SO_REUSEADDR and neither
 *   listens yet (ZeroMQ sets SO_REUSEADDR on its listeners), and holding
 *   the placeholder keeps other processes from grabbing the port in the
 *   meantime.  The placeholder is closed right after.
 * - Key "canopy.<rank>.uri" is put only by ranks that have children; every
 *   rank joins the barrier (it is collective).
 * - Every failure after PMI init calls PMI abort: a broker that cannot
 *   join would otherwise leave the others waiting forever.
 * - Security: every broker makes a fresh CURVE certificate and puts its
 *   public key ("canopy.<rank>.pubkey") beside its endpoint.  After the
 *   barrier a parent admits exactly its children's keys (the ZAP allow
 *   list), and a child connects knowing its parent's server key, so every
 *   TCP link of the tree is encrypted and authenticated both ways and
 *   nobody else can join.  The secret keys never leave their broker.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <syslog.h>
#include <ifaddrs.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include "src/common/libutil/errprintf.h"
#include "src/common/libpmi/pmi_client.h"
#include "broker.h"
#include "overlay.h"
#include "topology.h"
#include "cert.h"
#include "boot_pmi.h"

#define DEFAULT_INTERFACE "127.0.0.1"
#define URI_MAX 256

struct boot_pmi {
    pmi_client_t *pmi;
};

bool boot_pmi_wanted (void)
{
    return pmi_client_available ();
}

void boot_pmi_destroy (struct boot_pmi *bp)
{
    if (bp) {
        int saved_errno = errno;
        pmi_client_destroy (bp->pmi);
        free (bp);
        errno = saved_errno;
    }
}

struct boot_pmi *boot_pmi_create (uint32_t *rank, uint32_t *size,
                                  canopy_error_t *error)
{
    struct boot_pmi *bp;

    if (!(bp = calloc (1, sizeof (*bp)))) {
        errprintf (error, "out of memory");
        errno = ENOMEM;
        return NULL;
    }
    if (!(bp->pmi = pmi_client_create (error)))
        goto error;
    if (pmi_client_size (bp->pmi) < 1 || pmi_client_rank (bp->pmi) < 0) {
        errprintf (error, "PMI gave an invalid rank %d or size %d",
                   pmi_client_rank (bp->pmi), pmi_client_size (bp->pmi));
        errno = EPROTO;
        goto error;
    }
    *rank = pmi_client_rank (bp->pmi);
    *size = pmi_client_size (bp->pmi);
    return bp;
error:
    boot_pmi_destroy (bp);
    return NULL;
}

/* The IPv4 address to bind: the hint is an address, or an interface name. */
static int resolve_hint (const char *hint, char *addr, size_t size,
                         canopy_error_t *error)
{
    struct in_addr in;
    struct ifaddrs *ifs = NULL;
    int rc = -1;

    if (inet_pton (AF_INET, hint, &in) == 1) {
        snprintf (addr, size, "%s", hint);
        return 0;
    }
    if (getifaddrs (&ifs) == 0) {
        for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET
                && !strcmp (i->ifa_name, hint)) {
                struct sockaddr_in *sin = (struct sockaddr_in *)i->ifa_addr;
                if (inet_ntop (AF_INET, &sin->sin_addr, addr, size))
                    rc = 0;
                break;
            }
        }
        freeifaddrs (ifs);
    }
    if (rc < 0) {
        errprintf (error, "tbon.interface-hint '%s' is neither an IPv4 address "
                   "nor a network interface with one", hint);
        errno = EINVAL;
    }
    return rc;
}

/* Bind a placeholder socket on addr:0; returns it and the port. */
static int reserve_port (const char *addr, int *port, canopy_error_t *error)
{
    struct sockaddr_in sin = { .sin_family = AF_INET };
    socklen_t len = sizeof (sin);
    int one = 1;
    int fd;

    if (inet_pton (AF_INET, addr, &sin.sin_addr) != 1) {
        errno = EINVAL;
        return errprintf (error, "bad address %s", addr);
    }
    if ((fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return errprintf (error, "socket: %s", strerror (errno));
    if (setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof (one)) < 0
        || bind (fd, (struct sockaddr *)&sin, sizeof (sin)) < 0
        || getsockname (fd, (struct sockaddr *)&sin, &len) < 0) {
        int saved_errno = errno;
        close (fd);
        errno = saved_errno;
        return errprintf (error, "cannot bind a TCP port on %s: %s", addr,
                          strerror (errno));
    }
    *port = ntohs (sin.sin_port);
    return fd;
}

static void clear_environment (void)
{
    const char *vars[] = { "PMI_FD", "PMI_PORT", "PMI_ID", "PMI_RANK", "PMI_SIZE",
                           "PMI_SPAWNED", "CANOPY_PMI_LIBRARY", NULL };
    for (int i = 0; vars[i]; i++)
        unsetenv (vars[i]);
}

static int bind_and_publish (struct boot_pmi *bp, struct broker *b,
                             canopy_error_t *error)
{
    const char *hint = attr_get (b->attrs, "tbon.interface-hint", NULL);
    char addr[INET_ADDRSTRLEN];
    char uri[URI_MAX], key[64];
    int fd, port = 0, rc;

    if (resolve_hint (hint ? hint : DEFAULT_INTERFACE, addr, sizeof (addr), error) < 0)
        return -1;
    if ((fd = reserve_port (addr, &port, error)) < 0)
        return -1;
    snprintf (uri, sizeof (uri), "tcp://%s:%d", addr, port);
    rc = overlay_bind (b->overlay, uri);
    if (rc < 0)
        errprintf (error, "cannot bind %s: %s", uri, strerror (errno));
    close (fd);
    if (rc < 0)
        return -1;
    (void)attr_set (b->attrs, "tbon.endpoint", uri, ATTR_IMMUTABLE, true);
    snprintf (key, sizeof (key), "canopy.%u.uri", b->rank);
    if (pmi_client_put (bp->pmi, key, uri) < 0)
        return errprintf (error, "PMI put %s: %s", key, strerror (errno));
    return 0;
}

/* A fresh certificate for this broker; its public key goes to PMI. */
static int make_cert (struct boot_pmi *bp, struct broker *b,
                      canopy_error_t *error)
{
    cert_t *cert = cert_create ();
    char key[64], pub[64];

    if (!cert)
        return errprintf (error, "cannot make a CURVE certificate: %s",
                          strerror (errno));
    snprintf (pub, sizeof (pub), "%s", cert_public (cert));
    if (overlay_set_cert (b->overlay, cert) < 0)     /* takes the cert */
        return errprintf (error, "cannot set up CURVE security: %s",
                          strerror (errno));
    (void)attr_set (b->attrs, "tbon.pubkey", pub, ATTR_IMMUTABLE, true);
    snprintf (key, sizeof (key), "canopy.%u.pubkey", b->rank);
    if (pmi_client_put (bp->pmi, key, pub) < 0)
        return errprintf (error, "PMI put %s: %s", key, strerror (errno));
    return 0;
}

static int get_pubkey (struct boot_pmi *bp, uint32_t rank, char *buf,
                       size_t len, canopy_error_t *error)
{
    char key[64];

    snprintf (key, sizeof (key), "canopy.%u.pubkey", rank);
    if (pmi_client_get (bp->pmi, key, buf, len) < 0)
        return errprintf (error, "PMI get %s (the public key of rank %u): %s",
                          key, rank, strerror (errno));
    if (!cert_key_valid (buf)) {
        errno = EPROTO;
        return errprintf (error, "PMI %s is not a CURVE public key", key);
    }
    return 0;
}

/* A parent admits its children's keys, and only theirs. */
static int authorize_children (struct boot_pmi *bp, struct broker *b,
                               canopy_error_t *error)
{
    int n = topology_child_count (b->rank, b->size, b->k);
    uint32_t *children;
    char pub[64];
    int rc = -1;

    if (n <= 0)
        return 0;
    if (!(children = calloc (n, sizeof (*children)))) {
        errno = ENOMEM;
        return errprintf (error, "out of memory");
    }
    topology_children (b->rank, b->size, b->k, children, n);
    for (int i = 0; i < n; i++) {
        if (get_pubkey (bp, children[i], pub, sizeof (pub), error) < 0)
            goto done;
        if (overlay_authorize (b->overlay, pub) < 0) {
            errprintf (error, "cannot admit the key of rank %u: %s", children[i],
                       strerror (errno));
            goto done;
        }
    }
    rc = 0;
done:
    free (children);
    return rc;
}

static int connect_parent (struct boot_pmi *bp, struct broker *b,
                           canopy_error_t *error)
{
    char uri[URI_MAX], key[64], pub[64];
    int parent = topology_parent (b->rank, b->k);

    snprintf (key, sizeof (key), "canopy.%d.uri", parent);
    if (pmi_client_get (bp->pmi, key, uri, sizeof (uri)) < 0)
        return errprintf (error, "PMI get %s (the endpoint of rank %d): %s", key,
                          parent, strerror (errno));
    if (get_pubkey (bp, parent, pub, sizeof (pub), error) < 0)
        return -1;
    if (overlay_connect (b->overlay, uri, pub) < 0)
        return errprintf (error, "cannot connect to %s: %s", uri, strerror (errno));
    (void)attr_set (b->attrs, "tbon.parent-endpoint", uri, ATTR_IMMUTABLE, true);
    return 0;
}

int boot_pmi_wire (struct boot_pmi *bp, struct broker *b, canopy_error_t *error)
{
    if (!bp || !b || !b->overlay) {
        errno = EINVAL;
        return errprintf (error, "PMI bootstrap: bad arguments");
    }
    if (make_cert (bp, b, error) < 0)
        goto abort;
    if (topology_child_count (b->rank, b->size, b->k) > 0
        && bind_and_publish (bp, b, error) < 0)
        goto abort;
    if (pmi_client_commit (bp->pmi) < 0) {
        errprintf (error, "PMI commit: %s", strerror (errno));
        goto abort;
    }
    if (pmi_client_barrier (bp->pmi) < 0) {
        errprintf (error, "PMI barrier: %s", strerror (errno));
        goto abort;
    }
    if (authorize_children (bp, b, error) < 0
        || (b->rank > 0 && connect_parent (bp, b, error) < 0))
        goto abort;
    (void)attr_set (b->attrs, "tbon.security", "curve", ATTR_IMMUTABLE, true);
    (void)attr_set (b->attrs, "broker.boot-method", "pmi", ATTR_IMMUTABLE, true);
    broker_log (b, LOG_INFO, "PMI bootstrap (%s): rank %u of %u",
                pmi_client_method (bp->pmi), b->rank, b->size);
    if (pmi_client_finalize (bp->pmi) < 0)
        broker_log (b, LOG_WARNING, "PMI finalize: %s", strerror (errno));
    clear_environment ();
    return 0;
abort:
    {
        int saved_errno = errno;
        char msg[CANOPY_ERROR_TEXT_MAX + 32];
        snprintf (msg, sizeof (msg), "canopy-broker rank %u: %s", b->rank,
                  error ? error->text : "PMI bootstrap failed");
        (void)pmi_client_abort (bp->pmi, 1, msg);
        errno = saved_errno;
    }
    return -1;
}
