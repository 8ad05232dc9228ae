/* canopy/types.h - small types shared by the whole public API.
 *
 * canopy_error_t carries human-readable error text beside errno.  Functions
 * that take a "canopy_error_t *error" fill it on failure when it is non-NULL;
 * the text never replaces errno, it explains it.
 */
#ifndef CANOPY_TYPES_H
#define CANOPY_TYPES_H

#ifdef __cplusplus
extern "C" {
#endif

#define CANOPY_ERROR_TEXT_MAX 160

typedef struct {
    char text[CANOPY_ERROR_TEXT_MAX];
} canopy_error_t;

typedef void (*canopy_free_f)(void *arg);

/* Ranks.  CANOPY_NODEID_ANY routes a request to the nearest broker offering
 * the service; CANOPY_NODEID_UPSTREAM routes it to the nearest one above the
 * sender's broker.
 */
enum {
    CANOPY_NODEID_ANY = 0xFFFFFFFF,
    CANOPY_NODEID_UPSTREAM = 0xFFFFFFFE,
};

/* Credentials stamped on every message by the broker. */
enum {
    CANOPY_USERID_UNKNOWN = 0xFFFFFFFF,
};
enum canopy_role_b {
    CANOPY_ROLE_NONE = 0,
    CANOPY_ROLE_OWNER = 1,   /* instance owner: full access */
    CANOPY_ROLE_USER = 2,    /* another user, admitted by configuration */
    CANOPY_ROLE_LOCAL = 4,   /* message entered on this broker */
    CANOPY_ROLE_ALL = 0xFFFFFFFF,
};

#ifdef __cplusplus
}
#endif
#endif
