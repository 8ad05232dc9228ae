/* test/options.c - the KVS module's options (options.c): every option
 * takes a good value (byte counts with a binary suffix too); values that
 * are negative, fractional where a whole number is needed, garbage, not
 * finite, or that overflow int or size_t (with their suffix) are refused with EINVAL and a sentence, and change nothing
 * (regression: they were truncated or wrapped); unknown names.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>
#include <stdio.h>
#include <errno.h>
#include <limits.h>
#include "src/modules/kvs/options.h"

static void test_good (void **state)
{
    struct kvs_ctx ctx;
    canopy_error_t error;
    char big[64];

    memset (&ctx, 0, sizeof (ctx));
    assert_int_equal (kvs_option_set (&ctx, "fence-timeout", "2.5", &error), 0);
    assert_true (ctx.limits.fence_timeout == 2.5);
    assert_int_equal (kvs_option_set (&ctx, "fence-timeout", "0", &error), 0);
    assert_true (ctx.limits.fence_timeout == 0);
    assert_int_equal (kvs_option_set (&ctx, "relay-hold", "0.005", &error), 0);
    assert_true (ctx.limits.relay_hold == 0.005);
    assert_int_equal (kvs_option_set (&ctx, "relay-hold", "0", &error), 0);
    assert_true (ctx.limits.relay_hold == 0);
    assert_int_equal (kvs_option_set (&ctx, "max-nprocs", "1", &error), 0);
    assert_int_equal (ctx.limits.max_nprocs, 1);
    snprintf (big, sizeof (big), "%d", INT_MAX);
    assert_int_equal (kvs_option_set (&ctx, "max-nprocs", big, &error), 0);
    assert_int_equal (ctx.limits.max_nprocs, INT_MAX);
    assert_int_equal (kvs_option_set (&ctx, "max-pending", "7", &error), 0);
    assert_int_equal (ctx.limits.max_pending_per_user, 7);
    assert_int_equal (kvs_option_set (&ctx, "max-ops", "100", &error), 0);
    assert_int_equal (ctx.limits.max_txn_ops, 100);
    snprintf (big, sizeof (big), "%zu", (size_t)SIZE_MAX);
    assert_int_equal (kvs_option_set (&ctx, "cache-max", big, &error), 0);
    assert_true (ctx.cache_max == SIZE_MAX);
    assert_int_equal (kvs_option_set (&ctx, "cache-max", "0", &error), 0);
    assert_int_equal (kvs_option_set (&ctx, "cache-age", ".5", &error), 0);
    assert_true (ctx.cache_age == 0.5);
    assert_int_equal (kvs_option_set (&ctx, "hdir-threshold", "2", &error), 0);
    assert_int_equal (ctx.limits.hdir_threshold, 2);
    assert_int_equal (kvs_option_set (&ctx, "prime-max", "0", &error), 0);
    assert_int_equal (ctx.limits.prime_max, 0);
    assert_int_equal (kvs_option_set (&ctx, "prime-budget", "8192", &error), 0);
    assert_int_equal (ctx.limits.prime_budget, 8192);
    /* bytes take a binary suffix */
    assert_int_equal (kvs_option_set (&ctx, "prime-budget", "512k", &error), 0);
    assert_int_equal (ctx.limits.prime_budget, 512 * 1024);
    assert_int_equal (kvs_option_set (&ctx, "prime-max", "8K", &error), 0);
    assert_int_equal (ctx.limits.prime_max, 8192);
    assert_int_equal (kvs_option_set (&ctx, "cache-max", "128M", &error), 0);
    assert_true (ctx.cache_max == 128 * 1024 * 1024);
    assert_int_equal (kvs_option_set (&ctx, "prime-values", "1g", &error), 0);
    assert_true (ctx.limits.prime_values == 1024 * 1024 * 1024);
    assert_int_equal (kvs_option_set (&ctx, "prime-values", "8M", &error), 0);
    assert_true (ctx.limits.prime_values == 8 * 1024 * 1024);
    assert_int_equal (kvs_option_set (&ctx, "checkpoint-period", "10", &error), 0);
    assert_true (ctx.checkpoint_period == 10);
    /* every name in the list is known */
    for (int i = 0; kvs_option_names[i]; i++)
        assert_int_equal (kvs_option_set (&ctx, kvs_option_names[i], "3", &error), 0);
}

static void refused (const char *name, const char *value, const char *want)
{
    struct kvs_ctx ctx, before;
    canopy_error_t error;

    memset (&ctx, 0, sizeof (ctx));
    ctx.limits.max_nprocs = 5;
    ctx.cache_max = 5;
    ctx.limits.fence_timeout = 5;
    before = ctx;
    error.text[0] = '\0';
    errno = 0;
    if (kvs_option_set (&ctx, name, value, &error) == 0)
        fail_msg ("%s=%s was accepted", name, value);
    assert_int_equal (errno, EINVAL);
    if (!strstr (error.text, want))
        fail_msg ("%s=%s: '%s' does not say '%s'", name, value, error.text, want);
    assert_memory_equal (&ctx, &before, sizeof (ctx));     /* nothing changed */
}

static void test_refused (void **state)
{
    char big[64];

    /* int options */
    refused ("max-nprocs", "-1", "expected a whole number from 1 to");
    refused ("max-nprocs", "0", "from 1 to");
    refused ("max-nprocs", "2147483648", "max-nprocs=2147483648");   /* > INT_MAX */
    refused ("max-nprocs", "99999999999999999999999", "whole number"); /* ERANGE */
    refused ("max-nprocs", "1e6", "whole number");
    refused ("max-nprocs", "2.5", "whole number");
    refused ("max-nprocs", "12abc", "whole number");
    refused ("max-nprocs", " 12", "whole number");
    refused ("max-nprocs", "+12", "whole number");
    refused ("max-nprocs", "0x10", "whole number");
    refused ("max-nprocs", "", "whole number");
    refused ("hdir-threshold", "1", "from 2 to");
    refused ("prime-max", "-5", "from 0 to");
    refused ("prime-budget", "4294967296", "number of bytes");
    refused ("prime-budget", "2G", "number of bytes");      /* past INT_MAX */
    refused ("prime-budget", "64 k", "number of bytes");
    /* size options */
    refused ("cache-max", "-1", "number of bytes");
    snprintf (big, sizeof (big), "%zu0", (size_t)SIZE_MAX);           /* x10 */
    refused ("cache-max", big, "number of bytes");
    refused ("cache-max", "128X", "number of bytes");
    refused ("cache-max", "128MB", "number of bytes");
    refused ("cache-max", "1k5", "number of bytes");
    refused ("cache-max", "M", "number of bytes");
    refused ("cache-max", "16777216T", "number of bytes");  /* 2^64: wraps */
    /* seconds */
    refused ("fence-timeout", "-2", "number of seconds");
    refused ("fence-timeout", "inf", "number of seconds");
    refused ("fence-timeout", "nan", "number of seconds");
    refused ("fence-timeout", "1e999", "number of seconds");
    refused ("fence-timeout", "1.2.3", "number of seconds");
    refused ("fence-timeout", ".", "number of seconds");
    refused ("cache-age", "ten", "number of seconds");
    refused ("relay-hold", "-0.01", "number of seconds");
    refused ("checkpoint-period", "", "number of seconds");
    /* names */
    refused ("no-such-option", "1", "unknown option 'no-such-option'");
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_good),
        cmocka_unit_test (test_refused),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
