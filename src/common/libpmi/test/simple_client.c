/* test/simple_client.c - unit tests for simple_client.c
 *
 * Against the real engine (a fakeserver thread over socketpairs) and
 * against a scripted peer: the test writes the server's answer into the
 * socket before the client asks, then checks what the client sent.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include "src/common/libpmi/simple_client.h"
#include "fakeserver.h"

#define NTASKS 4

struct task_arg {
    int fd;
    int rank;
    int errors;
};

#define CHECK(t, cond) do { if (!(cond)) { \
    fprintf (stderr, "rank %d: %s:%d: %s\n", (t)->rank, __FILE__, __LINE__, #cond); \
    (t)->errors++; } } while (0)

static void *task_main (void *arg)
{
    struct task_arg *t = arg;
    pmi_simple_client_t *c = pmi_simple_client_create_fd (t->fd, t->rank, NTASKS);
    char key[64], val[2048], expect[2048];
    int n;

    CHECK (t, c != NULL);
    CHECK (t, pmi_simple_client_init (c) == 0);
    CHECK (t, !strcmp (pmi_simple_client_kvsname (c), "fake_kvs"));
    CHECK (t, pmi_simple_client_kvsname_max (c) == 256);
    CHECK (t, pmi_simple_client_keylen_max (c) == 64);
    CHECK (t, pmi_simple_client_vallen_max (c) == 1024);
    CHECK (t, pmi_simple_client_rank (c) == t->rank);
    CHECK (t, pmi_simple_client_size (c) == NTASKS);
    CHECK (t, pmi_simple_client_get_universe_size (c, &n) == 0 && n == NTASKS);
    CHECK (t, pmi_simple_client_get_appnum (c, &n) == 0 && n == 0);
    CHECK (t, pmi_simple_client_get (c, NULL, "PMI_process_mapping", val, sizeof (val)) == 0);
    CHECK (t, !strcmp (val, "(vector,(0,1,4))"));

    /* a probe for a key nobody put yet fails at once */
    snprintf (key, sizeof (key), "%d-key9", (t->rank + 1) % NTASKS);
    CHECK (t, pmi_simple_client_get (c, NULL, key, val, sizeof (val)) < 0 && errno == ENOENT);

    /* OpenMPI-like: a value with spaces, and one of vallen_max - 1 chars */
    snprintf (key, sizeof (key), "%d-key0", t->rank);
    snprintf (val, sizeof (val), "rank %d  says  hi ", t->rank);
    CHECK (t, pmi_simple_client_put (c, NULL, key, val) == 0);
    snprintf (key, sizeof (key), "%d-key1", t->rank);
    memset (val, 'a' + t->rank, 1023);
    val[1023] = '\0';
    CHECK (t, pmi_simple_client_put (c, "fake_kvs", key, val) == 0);
    CHECK (t, pmi_simple_client_barrier (c) == 0);
    for (int r = 0; r < NTASKS; r++) {
        snprintf (key, sizeof (key), "%d-key0", r);
        snprintf (expect, sizeof (expect), "rank %d  says  hi ", r);
        CHECK (t, pmi_simple_client_get (c, NULL, key, val, sizeof (val)) == 0);
        CHECK (t, !strcmp (val, expect));
        snprintf (key, sizeof (key), "%d-key1", r);
        CHECK (t, pmi_simple_client_get (c, NULL, key, val, sizeof (val)) == 0);
        CHECK (t, strlen (val) == 1023 && val[0] == 'a' + r && val[1022] == 'a' + r);
        /* buffer too small */
        CHECK (t, pmi_simple_client_get (c, NULL, key, val, 1023) < 0 && errno == EOVERFLOW);
    }
    /* the server refuses another kvsname */
    CHECK (t, pmi_simple_client_get (c, "other", key, val, sizeof (val)) < 0);
    CHECK (t, pmi_simple_client_put (c, "other", key, "x") < 0 && errno == EIO);
    CHECK (t, pmi_simple_client_barrier (c) == 0);
    CHECK (t, pmi_simple_client_finalize (c) == 0);
    /* after finalize the connection is gone */
    CHECK (t, pmi_simple_client_barrier (c) < 0 && errno == ENOTCONN);
    pmi_simple_client_destroy (c);
    return NULL;
}

static void test_against_server (void **state)
{
    int fds[NTASKS];
    pthread_t tid[NTASKS];
    struct task_arg args[NTASKS];
    struct fakeserver *fs = fakeserver_start (NTASKS, "(vector,(0,1,4))", fds);

    for (int i = 0; i < NTASKS; i++) {
        args[i] = (struct task_arg){ .fd = fds[i], .rank = i };
        assert_int_equal (pthread_create (&tid[i], NULL, task_main, &args[i]), 0);
    }
    for (int i = 0; i < NTASKS; i++) {
        pthread_join (tid[i], NULL);
        assert_int_equal (args[i].errors, 0);
    }
    fakeserver_stop (fs, false);
    assert_int_equal (fakeserver_finalized (fs), NTASKS);
    fakeserver_destroy (fs);
}

/* A client on one end of a socketpair; *peer is the scripted server end. */
static pmi_simple_client_t *scripted (int *peer)
{
    int sv[2];
    pmi_simple_client_t *c;
    assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_non_null ((c = pmi_simple_client_create_fd (sv[0], 1, 2)));
    *peer = sv[1];
    return c;
}

static void script (int peer, const char *answer)
{
    assert_int_equal (write (peer, answer, strlen (answer)), strlen (answer));
}

/* What the client sent (one read). */
static const char *sent (int peer)
{
    static char buf[4096];
    ssize_t n = read (peer, buf, sizeof (buf) - 1);
    assert_true (n >= 0);
    buf[n] = '\0';
    return buf;
}

static void test_scripted_init (void **state)
{
    int peer;
    pmi_simple_client_t *c = scripted (&peer);

    script (peer, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
                  "cmd=maxes kvsname_max=64 keylen_max=64 vallen_max=1024\n"
                  "cmd=my_kvsname kvsname=flux_kvs\n");
    assert_int_equal (pmi_simple_client_init (c), 0);
    assert_string_equal (sent (peer), "cmd=init pmi_version=1 pmi_subversion=1\n"
                                      "cmd=get_maxes\ncmd=get_my_kvsname\n");
    assert_string_equal (pmi_simple_client_kvsname (c), "flux_kvs");
    assert_int_equal (pmi_simple_client_kvsname_max (c), 64);

    /* hydra's barrier_out has no rc */
    script (peer, "cmd=barrier_out\n");
    assert_int_equal (pmi_simple_client_barrier (c), 0);
    assert_string_equal (sent (peer), "cmd=barrier_in\n");
    script (peer, "cmd=barrier_out rc=-1 msg=lost\n");
    assert_int_equal (pmi_simple_client_barrier (c), -1);
    assert_int_equal (errno, EIO);
    (void)sent (peer);

    script (peer, "cmd=put_result rc=-1 msg=nope\n");
    assert_int_equal (pmi_simple_client_put (c, NULL, "k", "v w"), -1);
    assert_int_equal (errno, EIO);
    assert_string_equal (sent (peer), "cmd=put kvsname=flux_kvs key=k value=v w\n");

    assert_int_equal (pmi_simple_client_abort (c, 3), 0);
    assert_string_equal (sent (peer), "cmd=abort exitcode=3\n");

    /* the PMI_ID handshake */
    script (peer, "cmd=initack\ncmd=set size=8\ncmd=set rank=5\ncmd=set debug=0\n");
    assert_int_equal (pmi_simple_client_initack (c, 5), 0);
    assert_string_equal (sent (peer), "cmd=initack pmiid=5\n");
    assert_int_equal (pmi_simple_client_rank (c), 5);
    assert_int_equal (pmi_simple_client_size (c), 8);
    script (peer, "cmd=initack\ncmd=set size=2\ncmd=set rank=5\ncmd=set debug=0\n");
    assert_int_equal (pmi_simple_client_initack (c, 5), -1);
    assert_int_equal (errno, EPROTO);
    (void)sent (peer);
    script (peer, "cmd=initack\ncmd=set size=2\n");
    shutdown (peer, SHUT_WR);
    assert_int_equal (pmi_simple_client_initack (c, 1), -1);
    assert_int_equal (errno, ECONNRESET);
    pmi_simple_client_destroy (c);
    close (peer);
}

static void test_scripted_errors (void **state)
{
    int peer;
    pmi_simple_client_t *c = scripted (&peer);
    char buf[64];
    char *big;

    /* wrong answer, garbage, an init refused */
    script (peer, "cmd=universe_size size=2\n");
    assert_int_equal (pmi_simple_client_barrier (c), -1);
    assert_int_equal (errno, EPROTO);
    script (peer, "garbage\n");
    assert_int_equal (pmi_simple_client_barrier (c), -1);
    assert_int_equal (errno, EPROTO);
    script (peer, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n");
    assert_int_equal (pmi_simple_client_init (c), -1);
    assert_int_equal (errno, EIO);
    script (peer, "cmd=response_to_init rc=0\ncmd=maxes kvsname_max=x\n");
    assert_int_equal (pmi_simple_client_init (c), -1);
    assert_int_equal (errno, EPROTO);
    script (peer, "cmd=universe_size\n");
    assert_int_equal (pmi_simple_client_get_universe_size (c, NULL), -1);
    assert_int_equal (errno, EPROTO);
    script (peer, "cmd=get_result rc=0 msg=success\n");
    assert_int_equal (pmi_simple_client_get (c, "kvs", "k", buf, sizeof (buf)), -1);
    assert_int_equal (errno, EPROTO);
    (void)sent (peer);

    /* a line that never ends */
    big = malloc (PMI_WIRE_LINE_MAX * 2);
    memset (big, 'x', PMI_WIRE_LINE_MAX * 2);
    assert_int_equal (write (peer, big, PMI_WIRE_LINE_MAX * 2), PMI_WIRE_LINE_MAX * 2);
    assert_int_equal (pmi_simple_client_barrier (c), -1);
    assert_int_equal (errno, EPROTO);
    free (big);
    pmi_simple_client_destroy (c);
    close (peer);

    /* bad arguments never reach the wire */
    c = scripted (&peer);
    assert_int_equal (pmi_simple_client_put (c, NULL, "a key", "v"), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (pmi_simple_client_put (c, NULL, "k=", "v"), -1);
    assert_int_equal (pmi_simple_client_put (c, NULL, "k", "v\ncmd=abort"), -1);
    assert_int_equal (pmi_simple_client_put (c, NULL, "", "v"), -1);
    assert_int_equal (pmi_simple_client_get (c, NULL, "a b", buf, sizeof (buf)), -1);
    assert_int_equal (pmi_simple_client_rpc (c, "cmd=a\ncmd=b", "a", NULL), -1);
    assert_int_equal (pmi_simple_client_put (NULL, NULL, "k", "v"), -1);
    assert_int_equal (errno, EINVAL);
    close (peer);
    /* the server went away */
    assert_int_equal (pmi_simple_client_barrier (c), -1);
    assert_true (errno == EPIPE || errno == ECONNRESET);
    pmi_simple_client_destroy (c);
    pmi_simple_client_destroy (NULL);
}

static void test_environment (void **state)
{
    int sv[2];
    char buf[16];
    pmi_simple_client_t *c;

    unsetenv ("PMI_FD");
    unsetenv ("PMI_PORT");
    unsetenv ("PMI_ID");
    unsetenv ("PMI_RANK");
    unsetenv ("PMI_SIZE");
    assert_null (pmi_simple_client_create ());
    assert_int_equal (errno, ENOENT);

    setenv ("PMI_FD", "abc", 1);
    assert_null (pmi_simple_client_create ());
    assert_int_equal (errno, EINVAL);
    setenv ("PMI_FD", "999", 1);
    assert_null (pmi_simple_client_create ());
    assert_int_equal (errno, EBADF);

    assert_int_equal (socketpair (AF_UNIX, SOCK_STREAM, 0, sv), 0);
    snprintf (buf, sizeof (buf), "%d", sv[0]);
    setenv ("PMI_FD", buf, 1);
    setenv ("PMI_RANK", "5", 1);
    setenv ("PMI_SIZE", "2", 1);
    assert_null (pmi_simple_client_create ());
    assert_int_equal (errno, EINVAL);
    setenv ("PMI_RANK", "1", 1);
    setenv ("PMI_SIZE", "-2", 1);
    assert_null (pmi_simple_client_create ());
    assert_int_equal (errno, EINVAL);
    setenv ("PMI_SIZE", "2", 1);
    assert_non_null ((c = pmi_simple_client_create ()));
    assert_int_equal (pmi_simple_client_rank (c), 1);
    assert_int_equal (pmi_simple_client_size (c), 2);
    assert_true (fcntl (sv[0], F_GETFD) & FD_CLOEXEC);
    pmi_simple_client_destroy (c);
    close (sv[1]);

    unsetenv ("PMI_FD");
    setenv ("PMI_PORT", "no-colon", 1);
    assert_null (pmi_simple_client_create ());
    assert_int_equal (errno, EINVAL);
    setenv ("PMI_PORT", "127.0.0.1:1", 1);
    setenv ("PMI_ID", "x", 1);
    assert_null (pmi_simple_client_create ());
    assert_int_equal (errno, EINVAL);
    unsetenv ("PMI_PORT");
    unsetenv ("PMI_ID");
    unsetenv ("PMI_RANK");
    unsetenv ("PMI_SIZE");

    assert_null (pmi_simple_client_create_fd (-1, 0, 1));
    assert_null (pmi_simple_client_create_fd (0, 1, 1));
    assert_int_equal (errno, EINVAL);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_against_server),
        cmocka_unit_test (test_scripted_init),
        cmocka_unit_test (test_scripted_errors),
        cmocka_unit_test (test_environment),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
