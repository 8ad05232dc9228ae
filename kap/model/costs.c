/* costs.c - see costs.h
 *
 * One table maps each JSON name to its field, so defaults, parsing and
 * printing cannot drift apart.
 */
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <errno.h>
#include "costs.h"

struct field {
    const char *name;
    size_t offset;
    double dflt;
    double min;     /* the least a costs file may give */
};

#define F(n, d) { #n, offsetof (struct kap_costs, n), d, 0.0 }
/* an exponent that may be negative (a cost that shrinks as the instance
 * grows), from -1
 */
#define FS(n, d) { #n, offsetof (struct kap_costs, n), d, -1.0 }
static const struct field fields[] = {
    F (ipc_lat, 8.0),
    F (net_lat, 15.0),
    F (net_bw, 1000.0),
    F (route, 6.0),
    F (event_fwd, 3.0),
    F (lookup, 8.0),
    F (walk, 1.0),
    F (fence_req, 15.0),
    F (op_encode, 1.0),
    F (relay_send, 20.0),
    F (relay_recv, 20.0),
    F (relay_byte, 0.005),
    F (ack, 5.0),
    F (apply, 60.0),
    F (apply_op, 2.0),
    F (store_byte, 0.01),
    F (setroot, 15.0),
    F (respond, 4.0),
    F (load_send, 8.0),
    F (load_serve, 8.0),
    F (load_byte, 0.004),
    F (direct_msg, 2.0),
    F (client_msg, 5.0),
    F (put, 20.0),
    F (put_byte, 0.03),
    F (shm_get, 2.0),
    F (route_byte, 0.0),
    F (kvs_byte, 0.0),
    F (sync_broker, 1.0),
    F (sync_module, 1.0),
    F (sync_client, 1.0),
    F (get_module, 1.0),
    F (get_client, 1.0),
    F (get_grow_module, 0.0),
    F (get_grow_client, 0.0),
    F (sync_grow, 0.0),
    F (sync_grow_client, -1.0),
    FS (byte_grow, 0.0),
    F (grow_brokers, 15.0),
};
#undef F
#define NFIELDS (sizeof (fields) / sizeof (fields[0]))

static double *slot (struct kap_costs *c, const struct field *f)
{
    return (double *)((char *)c + f->offset);
}

void kap_costs_default (struct kap_costs *c)
{
    memset (c, 0, sizeof (*c));
    for (size_t i = 0; i < NFIELDS; i++)
        *slot (c, &fields[i]) = fields[i].dflt;
    c->cores = 0;
}

int kap_costs_from_json (struct kap_costs *c, json_t *o, char *errbuf,
                         size_t errlen)
{
    const char *key;
    json_t *v;

    if (!json_is_object (o)) {
        snprintf (errbuf, errlen, "costs must be a JSON object");
        errno = EINVAL;
        return -1;
    }
    json_object_foreach (o, key, v) {
        size_t i;
        if (!strcmp (key, "cores")) {
            if (!json_is_integer (v) || json_integer_value (v) < 0) {
                snprintf (errbuf, errlen, "cores must be an integer >= 0");
                errno = EINVAL;
                return -1;
            }
            c->cores = (int)json_integer_value (v);
            continue;
        }
        if (key[0] == '_')      /* comments, provenance */
            continue;
        for (i = 0; i < NFIELDS; i++) {
            if (!strcmp (key, fields[i].name))
                break;
        }
        if (i == NFIELDS) {
            snprintf (errbuf, errlen, "unknown cost '%s'", key);
            errno = EINVAL;
            return -1;
        }
        if (!json_is_number (v) || json_number_value (v) < fields[i].min) {
            snprintf (errbuf, errlen, "cost '%s' must be a number >= %g", key,
                      fields[i].min);
            errno = EINVAL;
            return -1;
        }
        *slot (c, &fields[i]) = json_number_value (v);
    }
    if (c->net_bw <= 0) {
        snprintf (errbuf, errlen, "net_bw must be positive");
        errno = EINVAL;
        return -1;
    }
    return 0;
}

json_t *kap_costs_to_json (const struct kap_costs *c)
{
    json_t *o = json_object ();
    if (!o)
        goto nomem;
    for (size_t i = 0; i < NFIELDS; i++) {
        if (*slot ((struct kap_costs *)c, &fields[i]) < fields[i].min)
            continue;   /* unset (sync_grow_client): as a file without it */
        if (json_object_set_new (o, fields[i].name,
                                 json_real (*slot ((struct kap_costs *)c,
                                                   &fields[i]))) < 0)
            goto nomem;
    }
    if (json_object_set_new (o, "cores", json_integer (c->cores)) < 0)
        goto nomem;
    return o;
nomem:
    json_decref (o);
    errno = ENOMEM;
    return NULL;
}
