/* test/endpoint.c - subscriptions and service tracking of endpoints. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include "src/broker/endpoint.h"

static int nosend (struct endpoint *ep, const canopy_msg_t *msg)
{
    return 0;
}

static void test_endpoint (void **state)
{
    struct endpoint ep;
    assert_int_equal (endpoint_init (&ep, EP_CLIENT, "0:c1", nosend, NULL), 0);
    assert_false (endpoint_subscribed (&ep, "kvs.setroot"));
    assert_int_equal (endpoint_subscribe (&ep, "kvs."), 0);
    assert_int_equal (endpoint_subscribe (&ep, "kvs."), 0);   /* idempotent */
    assert_int_equal (ep.nsubs, 1);
    assert_true (endpoint_subscribed (&ep, "kvs.setroot"));
    assert_false (endpoint_subscribed (&ep, "kv"));
    assert_int_equal (endpoint_subscribe (&ep, ""), 0);
    assert_true (endpoint_subscribed (&ep, "anything"));
    assert_int_equal (endpoint_unsubscribe (&ep, ""), 0);
    assert_int_equal (endpoint_unsubscribe (&ep, "nope"), -1);
    assert_int_equal (errno, ENOENT);
    endpoint_note_service (&ep, "kvs.get", CANOPY_NODEID_ANY);
    endpoint_note_service (&ep, "kvs.put", CANOPY_NODEID_ANY);
    endpoint_note_service (&ep, "kvs.put", 7);
    endpoint_note_service (&ep, "attr.get", 3);   /* broker's own: not noted */
    endpoint_note_service (&ep, "nodot", CANOPY_NODEID_ANY);
    assert_int_equal (hashmap_size (ep.services), 2);
    assert_non_null (hashmap_lookup (ep.services, "kvs"));
    assert_non_null (hashmap_lookup (ep.services, "kvs@7"));
    endpoint_release (&ep);
    char longid[100];
    memset (longid, 'x', sizeof (longid) - 1);
    longid[sizeof (longid) - 1] = '\0';
    assert_int_equal (endpoint_init (&ep, EP_CLIENT, longid, nosend, NULL), -1);
}

int main (void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test (test_endpoint) };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
