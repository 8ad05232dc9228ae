/* cert.h - CURVE certificates for overlay links (a thin wrapper over
 * czmq's zcert, so nothing else in canopy includes czmq).
 *
 * A certificate is a CURVE key pair; keys are handled as 40-character
 * Z85 text.  On disk it is czmq's ZPL certificate format with the secret
 * key, readable by its owner only (mode 0600).  A system instance shares
 * one certificate among all its brokers (canopy keygen writes it); the
 * overlay admits a peer only if its public key is on the allow-list.
 *
 * Errors: functions return -1 or NULL with errno set and, where they take
 * an error buffer, a sentence in it (naming the file).
 */
#ifndef CANOPY_BROKER_CERT_H
#define CANOPY_BROKER_CERT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cert cert_t;

/* A fresh key pair. */
cert_t *cert_create (void);
void cert_destroy (cert_t *c);

/* Load a certificate that includes its secret key.  Errors: ENOENT,
 * EACCES (unreadable), EINVAL (not a certificate, or no secret key).
 */
cert_t *cert_load (const char *path, char *errbuf, size_t errsize);

/* Write the certificate with its secret key to 'path' (mode 0600).
 * EEXIST if the file exists and !force.
 */
int cert_save (cert_t *c, const char *path, bool force, char *errbuf, size_t errsize);

/* Z85 text of the keys (40 characters; owned by the certificate). */
const char *cert_public (const cert_t *c);
const char *cert_secret (const cert_t *c);

/* Store a metadata item (e.g. "hostname") written with the certificate. */
int cert_set_meta (cert_t *c, const char *name, const char *value);

/* True if s is a well-formed Z85 CURVE key (40 characters). */
bool cert_key_valid (const char *s);

#endif
