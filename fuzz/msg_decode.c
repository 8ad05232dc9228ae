/* msg_decode.c - fuzz canopy_msg_decode(), the flat record of a message
 * (the body of every frame on a client's UNIX socket).
 *
 * Invariants: a record that decodes re-encodes to the same bytes (the
 * encoding is canonical: one record per message), its accessors agree
 * with its flags, and a copy encodes identically.  Nothing leaks.
 */
#include <string.h>
#include <errno.h>
#include <canopy/message.h>
#include "fuzz.h"

static void exercise (const canopy_msg_t *msg)
{
    int type = canopy_msg_get_type (msg);
    uint32_t u;
    int i, j;
    const void *payload;
    size_t psize;
    const char *s;

    (void)canopy_msg_typestr (type);
    FUZZ_CHECK (canopy_msg_get_userid (msg, &u) == 0);
    FUZZ_CHECK (canopy_msg_get_rolemask (msg, &u) == 0);
    switch (type) {
        case CANOPY_MSGTYPE_REQUEST:
            FUZZ_CHECK (canopy_msg_get_nodeid (msg, &u) == 0);
            FUZZ_CHECK (canopy_msg_get_matchtag (msg, &u) == 0);
            break;
        case CANOPY_MSGTYPE_RESPONSE:
            FUZZ_CHECK (canopy_msg_get_errnum (msg, &i) == 0);
            (void)canopy_msg_errstr (msg);
            break;
        case CANOPY_MSGTYPE_EVENT:
            FUZZ_CHECK (canopy_msg_get_seq (msg, &u) == 0);
            break;
        case CANOPY_MSGTYPE_CONTROL:
            FUZZ_CHECK (canopy_msg_get_control (msg, &i, &j) == 0);
            break;
    }
    if (canopy_msg_has_flag (msg, CANOPY_MSGFLAG_TOPIC))
        FUZZ_CHECK (canopy_msg_get_topic (msg) != NULL);
    else
        FUZZ_CHECK (canopy_msg_get_topic (msg) == NULL);
    FUZZ_CHECK (canopy_msg_get_payload (msg, &payload, &psize) == 0);
    if (!canopy_msg_has_flag (msg, CANOPY_MSGFLAG_PAYLOAD))
        FUZZ_CHECK (psize == 0 && payload == NULL);
    else {
        FUZZ_CHECK (psize > 0 && payload != NULL);
        /* JSON parsing of untrusted payloads (cached in the message) */
        json_t *o;
        if (!canopy_msg_has_flag (msg, CANOPY_MSGFLAG_RAW))
            (void)canopy_msg_get_json (msg, &o);
        (void)canopy_msg_get_string (msg, &s);
    }
    int n = canopy_msg_route_count (msg);
    if (canopy_msg_has_flag (msg, CANOPY_MSGFLAG_ROUTE)) {
        FUZZ_CHECK (n >= 0 && n <= CANOPY_MSG_MAX_ROUTES);
        for (i = 0; i < n; i++)
            FUZZ_CHECK (canopy_msg_route_at (msg, i) != NULL);
        char *rs = canopy_msg_route_string (msg);
        free (rs);
        if (n > 0) {
            FUZZ_CHECK (canopy_msg_route_first (msg) != NULL);
            FUZZ_CHECK (canopy_msg_route_last (msg) != NULL);
        }
    }
    else
        FUZZ_CHECK (n < 0);
    (void)canopy_msg_cmp (msg, CANOPY_MATCH_ANY);
    struct canopy_match m = { CANOPY_MSGTYPE_REQUEST, 0, "kvs.*" };
    (void)canopy_msg_cmp (msg, m);
}

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    canopy_msg_t *msg, *copy;
    void *buf = NULL, *buf2 = NULL;
    size_t len, len2;

    if (!(msg = canopy_msg_decode (data, size))) {
        FUZZ_CHECK (errno == EPROTO || errno == EMSGSIZE || errno == ENOMEM);
        return 0;
    }
    exercise (msg);
    FUZZ_CHECK (canopy_msg_encode_size (msg) == size);
    FUZZ_CHECK (canopy_msg_encode (msg, &buf, &len) == 0);
    FUZZ_CHECK (len == size && memcmp (buf, data, size) == 0);
    FUZZ_CHECK ((copy = canopy_msg_copy (msg, true)) != NULL);
    FUZZ_CHECK (canopy_msg_encode (copy, &buf2, &len2) == 0);
    FUZZ_CHECK (len2 == len && memcmp (buf, buf2, len) == 0);
    /* a response derived from a request keeps its route stack */
    if (canopy_msg_get_type (msg) == CANOPY_MSGTYPE_REQUEST) {
        canopy_msg_t *rsp = canopy_response_derive (msg, EPERM);
        if (rsp) {
            FUZZ_CHECK (canopy_msg_route_count (rsp) == canopy_msg_route_count (msg));
            canopy_msg_decref (rsp);
        }
    }
    /* route manipulation on a decoded stack */
    if (canopy_msg_route_count (copy) > 0) {
        char *id = NULL;
        FUZZ_CHECK (canopy_msg_route_pop (copy, &id) == 0);
        FUZZ_CHECK (canopy_msg_route_push (copy, id) == 0);
        free (id);
        free (buf2);
        buf2 = NULL;
        FUZZ_CHECK (canopy_msg_encode (copy, &buf2, &len2) == 0);
        FUZZ_CHECK (len2 == len && memcmp (buf, buf2, len) == 0);
    }
    free (buf);
    free (buf2);
    canopy_msg_decref (copy);
    canopy_msg_decref (msg);
    return 0;
}
