/* test/costs.c - cost defaults, JSON round trip, refusing bad input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>
#include "costs.h"

static void test_roundtrip (void **state)
{
    struct kap_costs a, b;
    char err[128];
    kap_costs_default (&a);
    assert_true (a.route > 0 && a.net_bw > 0);
    assert_int_equal (a.cores, 0);
    a.route = 12.5;
    a.cores = 2;
    json_t *o = kap_costs_to_json (&a);
    assert_non_null (o);
    kap_costs_default (&b);
    assert_int_equal (kap_costs_from_json (&b, o, err, sizeof (err)), 0);
    assert_memory_equal (&a, &b, sizeof (a));
    /* the client's growth is unset (negative: sync_grow's) and left out,
     * as in a costs file from before it was measured; once set it goes
     * out and comes back
     */
    assert_true (a.sync_grow_client < 0);
    assert_null (json_object_get (o, "sync_grow_client"));
    json_decref (o);
    a.sync_grow_client = 0.07;
    o = kap_costs_to_json (&a);
    assert_non_null (o);
    kap_costs_default (&b);
    assert_int_equal (kap_costs_from_json (&b, o, err, sizeof (err)), 0);
    assert_true (b.sync_grow_client == 0.07);
    json_decref (o);
}

static void test_partial (void **state)
{
    struct kap_costs c, d;
    char err[128];
    kap_costs_default (&c);
    kap_costs_default (&d);
    json_t *o = json_pack ("{s:f s:s}", "apply_op", 3.5, "_source", "test");
    assert_int_equal (kap_costs_from_json (&c, o, err, sizeof (err)), 0);
    assert_true (c.apply_op == 3.5);
    c.apply_op = d.apply_op;
    assert_memory_equal (&c, &d, sizeof (c));
    json_decref (o);
}

static void test_bad (void **state)
{
    struct kap_costs c;
    char err[128];
    const char *bad[] = {
        "{\"rout\":1}", "{\"route\":-1}", "{\"route\":\"x\"}", "{\"cores\":1.5}",
        "{\"cores\":-2}", "{\"net_bw\":0}", "[]",
        "{\"byte_grow\":-1.5}", "{\"sync_grow\":-0.5}",
        "{\"sync_grow_client\":-1}",
    };
    for (size_t i = 0; i < sizeof (bad) / sizeof (bad[0]); i++) {
        json_t *o = json_loads (bad[i], 0, NULL);
        kap_costs_default (&c);
        err[0] = '\0';
        assert_int_equal (kap_costs_from_json (&c, o, err, sizeof (err)), -1);
        assert_int_equal (errno, EINVAL);
        assert_true (strlen (err) > 0);
        json_decref (o);
    }
    /* byte_grow alone may be negative: bytes that cost less per byte
     * on a larger instance
     */
    json_t *o = json_loads ("{\"byte_grow\":-0.56}", 0, NULL);
    kap_costs_default (&c);
    assert_int_equal (kap_costs_from_json (&c, o, err, sizeof (err)), 0);
    assert_true (c.byte_grow == -0.56);
    json_decref (o);
    o = kap_costs_to_json (&c);
    assert_non_null (o);
    assert_true (json_real_value (json_object_get (o, "byte_grow")) == -0.56);
    json_decref (o);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_roundtrip),
        cmocka_unit_test (test_partial),
        cmocka_unit_test (test_bad),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
