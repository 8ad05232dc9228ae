/* access.h - what users other than the instance owner may do in the KVS.
 *
 * The broker stamps every request with its sender's uid and roles (from
 * SO_PEERCRED, unforgeable); the owner may do everything.  Others, "guests",
 * get what the attribute kvs.guest-access allows:
 *   none   nothing but the statistics (the default)
 *   read   lookups, versions, watches: the whole namespace, read-only
 *   own    read, and commits and fences whose every key, and whose fence
 *          name, lie under the guest's own namespace "u.<uid>."
 * Pure functions; the module (kvs.c) applies them to its handlers.
 */
#ifndef CANOPY_KVS_ACCESS_H
#define CANOPY_KVS_ACCESS_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include <canopy/types.h>

enum kvs_guest_access {
    KVS_GUEST_NONE = 0,
    KVS_GUEST_READ = 1,
    KVS_GUEST_OWN = 2,
};

/* "none", "read" or "own".  Returns 0, or -1 with EINVAL. */
int kvs_guest_access_parse (const char *s, enum kvs_guest_access *out);

/* The namespace guest 'uid' may write under: "u.<uid>" (snprintf
 * semantics).
 */
int kvs_guest_namespace (uint32_t uid, char *buf, size_t len);

/* Check a decoded transaction (the "fences" array of kvs_wire_decode) from
 * guest 'uid': every op's key, and (if check_name: a fence, not a commit,
 * whose name the service makes up) the fence name must lie under its
 * namespace.  Returns 0, or -1 with EPERM and a sentence in *error.
 */
int kvs_guest_check (uint32_t uid, json_t *fences, bool check_name,
                     canopy_error_t *error);

#endif
