/* test/boot_pmi.c - broker bootstrap through PMI, against a scripted PMI
 * server on a socketpair (no network: the cases here never bind).
 *
 * The server's answers are written into the socket before the broker
 * asks; afterwards the test reads what the broker sent.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <zmq.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>
#include "src/broker/broker.h"
#include "src/broker/overlay.h"
#include "src/broker/boot_pmi.h"

/* broker.c is not part of libbroker: the overlay's calls into it */
void broker_instance_ready (struct broker *b) {}
void broker_check_shutdown (struct broker *b) {}
void broker_shutdown_begin (struct broker *b, int exit_code, const char *why) {}

static const char *handshake =
    "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
    "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"
    "cmd=my_kvsname kvsname=kvs_7\n";

static void clear_env (void)
{
    const char *vars[] = { "PMI_FD", "PMI_PORT", "PMI_ID", "PMI_RANK", "PMI_SIZE",
                           "CANOPY_PMI_LIBRARY", NULL };
    for (int i = 0; vars[i]; i++)
        unsetenv (vars[i]);
}

/* A PMI_FD environment for rank/size; returns the server's end. */
static int setup_env (int rank, int size)
{
    int sv[2];
    char buf[16];

    clear_env ();
    assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, sv), 0);
    snprintf (buf, sizeof (buf), "%d", sv[0]);
    setenv ("PMI_FD", buf, 1);
    snprintf (buf, sizeof (buf), "%d", rank);
    setenv ("PMI_RANK", buf, 1);
    snprintf (buf, sizeof (buf), "%d", size);
    setenv ("PMI_SIZE", buf, 1);
    return sv[1];
}

static void script (int peer, const char *s)
{
    assert_int_equal (write (peer, s, strlen (s)), strlen (s));
}

static const char *sent (int peer)
{
    static char buf[4096];
    ssize_t n = read (peer, buf, sizeof (buf) - 1);
    assert_true (n >= 0);
    buf[n] = '\0';
    return buf;
}

static void broker_init (struct broker *b, uint32_t rank, uint32_t size)
{
    memset (b, 0, sizeof (*b));
    b->rank = rank;
    b->size = size;
    b->k = 2;
    assert_non_null ((b->attrs = attr_create ()));
    assert_non_null ((b->log = logbuf_create (16, rank)));
    logbuf_set_stderr_level (b->log, 0);
    assert_non_null ((b->zctx = zmq_ctx_new ()));   /* the ZAP handler's */
    assert_int_equal (router_init (b), 0);     /* overlay registers services */
    assert_non_null ((b->overlay = overlay_create (b)));
}

static void broker_fini (struct broker *b)
{
    overlay_destroy (b->overlay);
    router_fini (b);
    zmq_ctx_term (b->zctx);
    logbuf_destroy (b->log);
    attr_destroy (b->attrs);
}

static void test_wanted (void **state)
{
    clear_env ();
    assert_false (boot_pmi_wanted ());
    setenv ("PMI_PORT", "127.0.0.1:1", 1);
    assert_true (boot_pmi_wanted ());
    clear_env ();
    setenv ("CANOPY_PMI_LIBRARY", "/x.so", 1);
    assert_true (boot_pmi_wanted ());
    clear_env ();
}

static void test_create_errors (void **state)
{
    canopy_error_t error;
    uint32_t rank, size;

    clear_env ();
    setenv ("PMI_FD", "999", 1);
    assert_null (boot_pmi_create (&rank, &size, &error));
    assert_non_null (strstr (error.text, "cannot reach the PMI server"));
    clear_env ();
    setenv ("CANOPY_PMI_LIBRARY", "/nonexistent.so", 1);
    assert_null (boot_pmi_create (&rank, &size, &error));
    assert_non_null (strstr (error.text, "cannot load PMI library /nonexistent.so"));
    clear_env ();
    boot_pmi_destroy (NULL);
}

/* One broker: no bind, no parent; init, barrier, finalize. */
static void test_single (void **state)
{
    struct broker b;
    canopy_error_t error;
    struct boot_pmi *bp;
    uint32_t rank = 99, size = 99;
    int peer = setup_env (0, 1);

    script (peer, handshake);
    assert_non_null ((bp = boot_pmi_create (&rank, &size, &error)));
    assert_int_equal (rank, 0);
    assert_int_equal (size, 1);
    broker_init (&b, rank, size);
    script (peer, "cmd=put_result rc=0\ncmd=barrier_out\ncmd=finalize_ack\n");
    assert_int_equal (boot_pmi_wire (bp, &b, &error), 0);
    /* the CURVE public key is fresh each time: check around it */
    const char *out = sent (peer);
    assert_non_null (strstr (out, "cmd=init pmi_version=1 pmi_subversion=1\n"
                                  "cmd=get_maxes\ncmd=get_my_kvsname\n"
                                  "cmd=put kvsname=kvs_7 key=canopy.0.pubkey value="));
    assert_non_null (strstr (out, "\ncmd=barrier_in\ncmd=finalize\n"));
    assert_string_equal (attr_get (b.attrs, "tbon.security", NULL), "curve");
    assert_string_equal (attr_get (b.attrs, "broker.boot-method", NULL), "pmi");
    /* the initial program must not inherit the PMI environment */
    assert_null (getenv ("PMI_FD"));
    assert_null (getenv ("PMI_RANK"));
    boot_pmi_destroy (bp);
    broker_fini (&b);
    close (peer);
}

/* A leaf whose parent never published: the job is aborted. */
static void test_missing_parent (void **state)
{
    struct broker b;
    canopy_error_t error;
    struct boot_pmi *bp;
    uint32_t rank, size;
    int peer = setup_env (2, 3);

    script (peer, handshake);
    assert_non_null ((bp = boot_pmi_create (&rank, &size, &error)));
    assert_int_equal (rank, 2);
    broker_init (&b, rank, size);
    script (peer, "cmd=put_result rc=0\ncmd=barrier_out\n"
                  "cmd=get_result rc=-1 msg=key_canopy.0.uri_not_found\n");
    assert_int_equal (boot_pmi_wire (bp, &b, &error), -1);
    assert_non_null (strstr (error.text, "PMI get canopy.0.uri (the endpoint of rank 0)"));
    assert_non_null (strstr (sent (peer),
                             "cmd=barrier_in\n"
                             "cmd=get kvsname=kvs_7 key=canopy.0.uri\n"
                             "cmd=abort exitcode=1\n"));
    boot_pmi_destroy (bp);
    broker_fini (&b);
    close (peer);
}

/* A broker with children and a hint that names nothing: aborted before
 * anything is bound or published.
 */
static void test_bad_hint (void **state)
{
    struct broker b;
    canopy_error_t error;
    struct boot_pmi *bp;
    uint32_t rank, size;
    int peer = setup_env (0, 4);

    script (peer, handshake);
    assert_non_null ((bp = boot_pmi_create (&rank, &size, &error)));
    broker_init (&b, rank, size);
    assert_int_equal (attr_set (b.attrs, "tbon.interface-hint", "nosuch0", 0, true), 0);
    script (peer, "cmd=put_result rc=0\n");
    assert_int_equal (boot_pmi_wire (bp, &b, &error), -1);
    assert_string_equal (error.text, "tbon.interface-hint 'nosuch0' is neither an "
                         "IPv4 address nor a network interface with one");
    assert_non_null (strstr (sent (peer), "cmd=abort exitcode=1\n"));
    assert_null (attr_get (b.attrs, "tbon.endpoint", NULL));
    boot_pmi_destroy (bp);
    broker_fini (&b);
    close (peer);
}

/* The barrier fails (the launcher said rc=-1): aborted. */
static void test_barrier_fails (void **state)
{
    struct broker b;
    canopy_error_t error;
    struct boot_pmi *bp;
    uint32_t rank, size;
    int peer = setup_env (1, 2);

    script (peer, handshake);
    assert_non_null ((bp = boot_pmi_create (&rank, &size, &error)));
    broker_init (&b, rank, size);
    script (peer, "cmd=put_result rc=0\ncmd=barrier_out rc=-1\n");
    assert_int_equal (boot_pmi_wire (bp, &b, &error), -1);
    assert_non_null (strstr (error.text, "PMI barrier"));
    assert_int_equal (boot_pmi_wire (NULL, &b, &error), -1);
    assert_int_equal (errno, EINVAL);
    boot_pmi_destroy (bp);
    broker_fini (&b);
    close (peer);
    clear_env ();
}

/* A broker with children gets their keys from PMI, and a child its
 * parent's; a key that is not one aborts the job.
 */
static void test_bad_child_key (void **state)
{
    struct broker b;
    canopy_error_t error;
    struct boot_pmi *bp;
    uint32_t rank, size;
    int peer = setup_env (0, 2);

    script (peer, handshake);
    assert_non_null ((bp = boot_pmi_create (&rank, &size, &error)));
    broker_init (&b, rank, size);
    assert_int_equal (attr_set (b.attrs, "tbon.interface-hint", "127.0.0.1", 0, true), 0);
    script (peer, "cmd=put_result rc=0\ncmd=put_result rc=0\ncmd=barrier_out\n"
                  "cmd=get_result rc=0 value=not-a-key\n");
    assert_int_equal (boot_pmi_wire (bp, &b, &error), -1);
    assert_non_null (strstr (error.text, "canopy.1.pubkey is not a CURVE public key"));
    const char *out = sent (peer);
    assert_non_null (strstr (out, "cmd=put kvsname=kvs_7 key=canopy.0.uri value=tcp://127.0.0.1:"));
    assert_non_null (strstr (out, "cmd=get kvsname=kvs_7 key=canopy.1.pubkey\n"));
    assert_non_null (strstr (out, "cmd=abort exitcode=1\n"));
    boot_pmi_destroy (bp);
    broker_fini (&b);
    close (peer);
    clear_env ();
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_wanted),
        cmocka_unit_test (test_create_errors),
        cmocka_unit_test (test_single),
        cmocka_unit_test (test_missing_parent),
        cmocka_unit_test (test_bad_hint),
        cmocka_unit_test (test_barrier_fails),
        cmocka_unit_test (test_bad_child_key),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
