/* endpoint.c - see endpoint.h */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include "endpoint.h"

#define MAX_SUBS 256

int endpoint_init (struct endpoint *ep, enum endpoint_type type, const char *id,
                   endpoint_send_f send, void *impl)
{
    memset (ep, 0, sizeof (*ep));
    if (strlen (id) > CANOPY_MSG_MAX_ROUTE_LEN) {
        errno = EINVAL;
        return -1;
    }
    strcpy (ep->id, id);
    ep->type = type;
    ep->send = send;
    ep->impl = impl;
    if (!(ep->services = hashmap_create (NULL)))
        return -1;
    return 0;
}

void endpoint_release (struct endpoint *ep)
{
    if (ep) {
        for (int i = 0; i < ep->nsubs; i++)
            free (ep->subs[i]);
        free (ep->subs);
        ep->subs = NULL;
        ep->nsubs = 0;
        hashmap_destroy (ep->services);
        ep->services = NULL;
    }
}

int endpoint_subscribe (struct endpoint *ep, const char *prefix)
{
    char **v;
    char *cpy;

    for (int i = 0; i < ep->nsubs; i++) {
        if (!strcmp (ep->subs[i], prefix))
            return 0;
    }
    if (ep->nsubs >= MAX_SUBS) {
        errno = ENOSPC;
        return -1;
    }
    if (!(cpy = strdup (prefix))
        || !(v = realloc (ep->subs, (ep->nsubs + 1) * sizeof (char *)))) {
        free (cpy);
        errno = ENOMEM;
        return -1;
    }
    ep->subs = v;
    ep->subs[ep->nsubs++] = cpy;
    return 0;
}

int endpoint_unsubscribe (struct endpoint *ep, const char *prefix)
{
    for (int i = 0; i < ep->nsubs; i++) {
        if (!strcmp (ep->subs[i], prefix)) {
            free (ep->subs[i]);
            ep->subs[i] = ep->subs[--ep->nsubs];
            return 0;
        }
    }
    errno = ENOENT;
    return -1;
}

bool endpoint_subscribed (const struct endpoint *ep, const char *topic)
{
    for (int i = 0; i < ep->nsubs; i++) {
        if (!strncmp (topic, ep->subs[i], strlen (ep->subs[i])))
            return true;
    }
    return false;
}

void endpoint_note_service (struct endpoint *ep, const char *topic, uint32_t nodeid)
{
    char name[CANOPY_MSG_MAX_TOPIC_LEN + 16];
    const char *dot;
    size_t len;

    if (!topic || !(dot = strchr (topic, '.')))
        return;
    len = dot - topic;
    if (len == 0 || len >= sizeof (name))
        return;
    memcpy (name, topic, len);
    name[len] = '\0';
    /* the broker's own services need no disconnect notification */
    if (!strcmp (name, "broker") || !strcmp (name, "attr") || !strcmp (name, "log")
        || !strcmp (name, "event") || !strcmp (name, "module")
        || !strcmp (name, "service") || !strcmp (name, "overlay"))
        return;
    if (nodeid != CANOPY_NODEID_ANY && nodeid != CANOPY_NODEID_UPSTREAM)
        snprintf (name + len, sizeof (name) - len, "@%u", nodeid);
    if (!hashmap_lookup (ep->services, name))
        (void)hashmap_insert (ep->services, name, (void *)1);
}
