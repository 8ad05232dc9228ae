/* test/boot_config.c - configuration files for a cluster instance: ranks
 * found by host name, endpoints, attributes, and refusals that name the
 * file, line and field.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>
#include "src/broker/boot_config.h"
#include "src/broker/cert.h"
#include "src/broker/overlay.h"

/* Stand-ins for the overlay: record what boot_config_wire asks for. */
static char *bound, *connected, *server_key;
static int certs_set;

int overlay_set_cert (struct overlay *ov, cert_t *cert)
{
    certs_set++;
    cert_destroy (cert);
    return 0;
}

int overlay_bind (struct overlay *ov, const char *uri)
{
    free (bound);
    bound = strdup (uri);
    return 0;
}

int overlay_connect (struct overlay *ov, const char *uri, const char *pubkey)
{
    free (connected);
    free (server_key);
    connected = strdup (uri);
    server_key = pubkey ? strdup (pubkey) : NULL;
    return 0;
}

static char path[256];

static const char *good =
    "[tbon]\n"                          /* 1 */
    "k = 2\n"
    "port = 9000\n"
    "lost-timeout = \"5s\"\n"
    "torpid-timeout = 2\n"              /* 5 */
    "sndhwm = 100\n"
    "\n"
    "[broker]\n"
    "rundir = \"/run/test\"\n"
    "statedir = \"/var/lib/test\"\n"    /* 10 */
    "log = \"syslog\"\n"
    "log-level = \"debug\"\n"
    "\n"
    "[security]\n"
    "curve-cert = \"/etc/canopy/curve.cert\"\n"   /* 15 */
    "\n"
    "[attributes]\n"
    "\"my.attr\" = 42\n"
    "\n"
    "[[hosts]]\n"                       /* 20 */
    "host = \"node0\"\n"
    "addr = \"10.0.0.1\"\n"
    "[[hosts]]\n"
    "host = \"node1\"\n"
    "addr = \"10.0.0.2\"\n"             /* 25 */
    "bind = \"10.0.0.2\"\n"
    "[[hosts]]\n"
    "host = \"node2\"\n"
    "port = 9001\n"
    "[[hosts]]\n"                       /* 30 */
    "host = \"node3\"\n";

static void write_config (const char *text)
{
    FILE *f = fopen (path, "w");
    assert_non_null (f);
    fputs (text, f);
    fclose (f);
}

static int setup (void **state)
{
    const char *tmp = getenv ("TMPDIR");
    snprintf (path, sizeof (path), "%s/bootcfg-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp (path);
    assert_true (fd >= 0);
    close (fd);
    return 0;
}

static int teardown (void **state)
{
    unlink (path);
    return 0;
}

static const char *attr (struct boot_config *bc, const char *name)
{
    json_t *v = json_object_get (bc->attrs, name);
    return v ? json_string_value (v) : NULL;
}

static void test_good (void **state)
{
    char err[512];
    struct boot_config *bc;

    write_config (good);
    bc = boot_config_load (path, "node1.cluster.example", -1, err, sizeof (err));
    if (!bc)
        fail_msg ("%s", err);
    assert_int_equal (bc->rank, 1);
    assert_int_equal (bc->size, 4);
    assert_int_equal (bc->k, 2);
    assert_string_equal (bc->host, "node1");
    assert_string_equal (bc->bind_uri, "tcp://10.0.0.2:9000");   /* rank 3 below */
    assert_string_equal (bc->parent_uri, "tcp://10.0.0.1:9000");
    assert_string_equal (bc->rundir, "/run/test");
    assert_string_equal (bc->cert_path, "/etc/canopy/curve.cert");
    assert_string_equal (attr (bc, "tbon.lost-timeout"), "5s");
    assert_string_equal (attr (bc, "tbon.torpid-timeout"), "2");
    assert_string_equal (attr (bc, "tbon.sndhwm"), "100");
    assert_string_equal (attr (bc, "log-output"), "syslog");
    assert_string_equal (attr (bc, "log-stderr-level"), "7");
    assert_string_equal (attr (bc, "my.attr"), "42");
    assert_null (attr (bc, "statedir"));        /* rank 0 only */
    boot_config_destroy (bc);

    bc = boot_config_load (path, "node0", -1, err, sizeof (err));
    assert_non_null (bc);
    assert_int_equal (bc->rank, 0);
    assert_null (bc->parent_uri);
    assert_string_equal (bc->bind_uri, "tcp://*:9000");
    assert_string_equal (attr (bc, "statedir"), "/var/lib/test");
    boot_config_destroy (bc);

    /* a leaf: connects to its parent's port, binds nothing */
    bc = boot_config_load (path, "whatever", 3, err, sizeof (err));
    assert_non_null (bc);
    assert_int_equal (bc->rank, 3);
    assert_null (bc->bind_uri);
    assert_string_equal (bc->parent_uri, "tcp://10.0.0.2:9000");
    boot_config_destroy (bc);
    boot_config_destroy (NULL);
}

static void test_minimal (void **state)
{
    char err[512];
    struct boot_config *bc;

    write_config ("[[hosts]]\nhost = \"solo\"\n");
    bc = boot_config_load (path, "solo", -1, err, sizeof (err));
    if (!bc)
        fail_msg ("%s", err);
    assert_int_equal (bc->size, 1);
    assert_null (bc->cert_path);        /* no links: no certificate needed */
    assert_string_equal (bc->rundir, "/run/canopy");
    boot_config_destroy (bc);
}

struct bad {
    const char *text;
    const char *hostname;
    int rank;
    const char *expect;     /* after "PATH" */
};

#define H "[[hosts]]\nhost = \"a\"\n"
#define H2 "[security]\ncurve-cert = \"/c\"\n[[hosts]]\nhost = \"a\"\n" \
           "[[hosts]]\nhost = \"b\"\n"

static void test_bad (void **state)
{
    const struct bad bad[] = {
        { "[tbon]\nk = 2\nlost-timout = 3\n" H, "a", -1,
          ":3: tbon.lost-timout: unknown key" },
        { "[tbon]\nlost-timeout = \"soon\"\n" H, "a", -1,
          ":2: tbon.lost-timeout: must be a duration" },
        { "[tbon]\nk = 0\n" H, "a", -1, ":2: tbon.k: must be an integer from 1" },
        { "[[hosts]]\nhost = \"a\"\nport = 70000\n", "a", -1,
          ":3: hosts[0].port: must be an integer from 1 to 65535" },
        { "[[hosts]]\nhost = \"a\"\n[[hosts]]\naddr = \"b\"\n", "a", -1,
          ":3: hosts[1].host: is required" },
        { "[[hosts]]\nhost = \"a\"\n[[hosts]]\nhost = \"b\"\n", "a", -1,
          ": security.curve-cert: is required" },
        { "[broker]\nrundir = \"relative\"\n" H, "a", -1,
          ":2: broker.rundir: must be an absolute path" },
        { "[broker]\nlog = \"journal\"\n" H, "a", -1, ":2: broker.log: must be" },
        { "[broker]\nlog-level = \"loud\"\n" H, "a", -1,
          ":2: broker.log-level: must be" },
        { "[tbon]\nk = 2\n", "a", -1, ": hosts: is required" },
        { "hosts = 3\n", "a", -1, ":1: hosts: must be one or more [[hosts]]" },
        { "colour = \"blue\"\n" H, "a", -1, ":1: colour: unknown key" },
        { "[[hosts]]\nhost = \"a\"\naddr = \"x\"\n[[hosts]]\nhost = \"b\"\n"
          "addr = \"x\"\n", "a", -1, ":4: hosts[1]: x:8050 is also used by hosts[0]" },
        { "[[hosts]]\nhost = \"a\"\n[[hosts]]\nhost = \"a\"\nport = 1\n", "a", -1,
          ": this host (a) appears 2 times in hosts; use --rank" },
        { H2, "c", -1, ": this host (c) is not in hosts" },
        { H2, "a", 2, ": --rank 2 is not below the number of hosts (2)" },
        { "[tbon]\nk = \n" H, "a", -1, ":2:5: expected a value" },
        { NULL, NULL, 0, NULL },
    };
    char err[512];
    for (int i = 0; bad[i].text; i++) {
        char want[512];
        write_config (bad[i].text);
        err[0] = '\0';
        struct boot_config *bc = boot_config_load (path, bad[i].hostname, bad[i].rank,
                                                   err, sizeof (err));
        if (bc)
            fail_msg ("accepted case %d: %s", i, bad[i].text);
        snprintf (want, sizeof (want), "%s%s", path, bad[i].expect);
        if (strncmp (err, want, strlen (want)) != 0)
            fail_msg ("case %d: got '%s', expected '%s...'", i, err, want);
    }
    /* a missing file */
    unlink (path);
    assert_null (boot_config_load (path, "a", -1, err, sizeof (err)));
    assert_int_equal (errno, ENOENT);
    assert_non_null (strstr (err, "No such file"));
}

static void test_wire (void **state)
{
    char err[512], certpath[300], text[1024];
    struct boot_config *bc;
    cert_t *cert = cert_create ();

    snprintf (certpath, sizeof (certpath), "%s.cert", path);
    assert_int_equal (cert_save (cert, certpath, true, err, sizeof (err)), 0);
    snprintf (text, sizeof (text),
              "[security]\ncurve-cert = \"%s\"\n"
              "[[hosts]]\nhost = \"a\"\nport = 7000\n"
              "[[hosts]]\nhost = \"b\"\nport = 7001\n"
              "[[hosts]]\nhost = \"c\"\nport = 7002\n", certpath);
    write_config (text);
    assert_non_null ((bc = boot_config_load (path, "b", -1, err, sizeof (err))));
    assert_int_equal (boot_config_wire (bc, NULL, err, sizeof (err)), 0);
    assert_int_equal (certs_set, 1);
    assert_null (bound);                          /* rank 1 of 3: a leaf */
    assert_string_equal (connected, "tcp://a:7000");
    assert_string_equal (server_key, cert_public (cert));  /* the shared key */
    boot_config_destroy (bc);

    assert_non_null ((bc = boot_config_load (path, "a", -1, err, sizeof (err))));
    assert_int_equal (boot_config_wire (bc, NULL, err, sizeof (err)), 0);
    assert_string_equal (bound, "tcp://*:7000");
    boot_config_destroy (bc);

    /* the certificate file is checked when wiring */
    unlink (certpath);
    assert_non_null ((bc = boot_config_load (path, "a", -1, err, sizeof (err))));
    assert_int_equal (boot_config_wire (bc, NULL, err, sizeof (err)), -1);
    assert_non_null (strstr (err, "security.curve-cert"));
    assert_non_null (strstr (err, "No such file"));
    boot_config_destroy (bc);
    cert_destroy (cert);
    free (bound);
    free (connected);
    free (server_key);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_good),
        cmocka_unit_test (test_wire),
        cmocka_unit_test (test_minimal),
        cmocka_unit_test (test_bad),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, setup, teardown);
}
