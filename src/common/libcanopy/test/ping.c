/* test/ping.c - unit tests for the ping responder in module.c
 * (ping_response_create, route_hop_count): the spliced fast path and the
 * jansson path must give the same JSON value - the request's object plus
 * "route", "hops" and "rank" - and malformed payloads get EPROTO.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <jansson.h>
#include <canopy/message.h>
#include "src/common/libcanopy/module_private.h"

/* A request as it reaches a responder: from client "0:c1" via ranks. */
static canopy_msg_t *request (const char *payload, bool raw)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    assert_non_null (msg);
    assert_int_equal (canopy_msg_set_topic (msg, "broker.ping"), 0);
    assert_int_equal (canopy_msg_set_matchtag (msg, 42), 0);
    if (payload) {
        assert_int_equal (canopy_msg_set_payload (msg, payload, strlen (payload)), 0);
        if (raw)
            assert_int_equal (canopy_msg_set_flag (msg, CANOPY_MSGFLAG_RAW, true), 0);
    }
    assert_int_equal (canopy_msg_route_enable (msg), 0);
    assert_int_equal (canopy_msg_route_push (msg, "0:c1"), 0);
    assert_int_equal (canopy_msg_route_push (msg, "0"), 0);
    assert_int_equal (canopy_msg_route_push (msg, "1"), 0);
    return msg;
}

/* What the response must decode to, built with jansson. */
static json_t *expected (const char *payload)
{
    json_t *o = json_loads (payload, 0, NULL);
    assert_non_null (o);
    json_object_set_new (o, "route", json_string ("0:c1!0!1"));
    json_object_set_new (o, "hops", json_integer (2));
    json_object_set_new (o, "rank", json_string ("3"));
    return o;
}

static void check_ok (const char *payload)
{
    canopy_msg_t *req = request (payload, false);
    canopy_msg_t *rsp = ping_response_create (req, "3");
    const char *s;
    int errnum = -1;
    uint32_t tag = 0;

    assert_non_null (rsp);
    assert_int_equal (canopy_msg_get_type (rsp), CANOPY_MSGTYPE_RESPONSE);
    assert_int_equal (canopy_msg_get_errnum (rsp, &errnum), 0);
    assert_int_equal (errnum, 0);
    assert_int_equal (canopy_msg_get_matchtag (rsp, &tag), 0);
    assert_int_equal (tag, 42);
    assert_int_equal (canopy_msg_route_count (rsp), 3);
    assert_false (canopy_msg_has_flag (rsp, CANOPY_MSGFLAG_RAW));
    assert_int_equal (canopy_msg_get_string (rsp, &s), 0);
    json_t *got = json_loads (s, 0, NULL);
    json_t *want = expected (payload);
    if (!got || !json_equal (got, want))
        fail_msg ("payload %s gave %s", payload, s);
    json_decref (got);
    json_decref (want);
    canopy_msg_decref (rsp);
    canopy_msg_decref (req);
}

static void check_eproto (const char *payload, bool raw)
{
    canopy_msg_t *req = request (payload, raw);
    canopy_msg_t *rsp = ping_response_create (req, "3");
    int errnum = 0;

    assert_non_null (rsp);
    assert_int_equal (canopy_msg_get_errnum (rsp, &errnum), 0);
    assert_int_equal (errnum, EPROTO);
    assert_non_null (canopy_msg_errstr (rsp));
    canopy_msg_decref (rsp);
    canopy_msg_decref (req);
}

static void test_hop_count (void **state)
{
    canopy_msg_t *req = request ("{}", false);
    assert_int_equal (route_hop_count (req), 2);
    assert_int_equal (canopy_msg_route_push (req, "1:mkvs"), 0);
    assert_int_equal (route_hop_count (req), 2);
    canopy_msg_decref (req);
}

static void test_simple (void **state)
{
    /* spliced */
    check_ok ("{}");
    check_ok ("  { }\n");
    check_ok ("{\"pad\":\"\"}");
    check_ok ("{\"seq\":7,\"pad\":\"pppppppppppppppppppppppppppppppp\"}");
    check_ok ("{ \"a\" : [1, {\"b\": null}] }  ");
}

static void test_fallback (void **state)
{
    /* not simple: the jansson path answers, with the same result */
    check_ok ("{\"a\":\"line\\nbreak\"}");
    check_ok ("{\"a\":\"caf\xc3\xa9\"}");
    check_ok ("{\"a\":1e3}");
    check_ok ("{\"a\":12345678901234567}");
    /* the added keys replace the request's own */
    check_ok ("{\"route\":\"forged\",\"x\":1}");
    check_ok ("{\"hops\":99}");
    check_ok ("{\"rank\":\"r\",\"pad\":\"\"}");
    check_ok ("{\"pad\":\"rank\"}");
}

static void test_malformed (void **state)
{
    check_eproto ("[1,2]", false);
    check_eproto ("{\"a\":}", false);
    check_eproto ("{} trailing", false);
    check_eproto ("{\"a\":1}", true);   /* raw payload */
    canopy_msg_t *req = request (NULL, false);   /* no payload */
    canopy_msg_t *rsp = ping_response_create (req, "3");
    int errnum = 0;
    assert_non_null (rsp);
    assert_int_equal (canopy_msg_get_errnum (rsp, &errnum), 0);
    assert_int_equal (errnum, EPROTO);
    canopy_msg_decref (rsp);
    canopy_msg_decref (req);
}

static void test_large (void **state)
{
    size_t n = 100000;
    char *payload = malloc (n + 16);
    assert_non_null (payload);
    strcpy (payload, "{\"pad\":\"");
    memset (payload + 8, 'p', n);
    strcpy (payload + 8 + n, "\"}");
    check_ok (payload);
    free (payload);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_hop_count),
        cmocka_unit_test (test_simple),
        cmocka_unit_test (test_fallback),
        cmocka_unit_test (test_malformed),
        cmocka_unit_test (test_large),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
