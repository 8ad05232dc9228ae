/* test/pmi.c - unit tests for libpmi.so's PMI-1 API (pmi.c), linked in
 * statically: singleton mode, argument checks, and a session against a
 * scripted server on a socketpair.
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
#include <sys/socket.h>
#include <sys/wait.h>
#include <canopy/pmi.h>

static void clear_env (void)
{
    unsetenv ("PMI_FD");
    unsetenv ("PMI_PORT");
    unsetenv ("PMI_ID");
    unsetenv ("PMI_RANK");
    unsetenv ("PMI_SIZE");
    unsetenv ("PMI_SPAWNED");
}

static void test_uninitialized (void **state)
{
    int n;
    char buf[64];

    clear_env ();
    assert_int_equal (PMI_Initialized (&n), PMI_SUCCESS);
    assert_int_equal (n, PMI_FALSE);
    assert_int_equal (PMI_Initialized (NULL), PMI_ERR_INVALID_ARG);
    assert_int_equal (PMI_Get_rank (&n), PMI_ERR_INIT);
    assert_int_equal (PMI_Get_size (&n), PMI_ERR_INIT);
    assert_int_equal (PMI_Barrier (), PMI_ERR_INIT);
    assert_int_equal (PMI_KVS_Get_my_name (buf, sizeof (buf)), PMI_ERR_INIT);
    assert_int_equal (PMI_KVS_Put ("a", "b", "c"), PMI_ERR_INIT);
    assert_int_equal (PMI_Finalize (), PMI_ERR_INIT);
    assert_int_equal (PMI_Init (NULL), PMI_ERR_INVALID_ARG);
}

static void test_singleton (void **state)
{
    int spawned = -1, n;
    char name[64], val[32];

    clear_env ();
    setenv ("PMI_SPAWNED", "1", 1);
    assert_int_equal (PMI_Init (&spawned), PMI_SUCCESS);
    assert_int_equal (spawned, PMI_TRUE);
    assert_int_equal (PMI_Init (&spawned), PMI_SUCCESS);    /* idempotent */
    assert_int_equal (PMI_Get_rank (&n), PMI_SUCCESS);
    assert_int_equal (n, 0);
    assert_int_equal (PMI_Get_size (&n), PMI_SUCCESS);
    assert_int_equal (n, 1);
    assert_int_equal (PMI_Get_universe_size (&n), PMI_SUCCESS);
    assert_int_equal (n, 1);
    assert_int_equal (PMI_Get_appnum (&n), PMI_SUCCESS);
    assert_int_equal (n, 0);
    assert_int_equal (PMI_KVS_Get_my_name (name, sizeof (name)), PMI_SUCCESS);
    assert_string_equal (name, "singleton_kvs");
    assert_int_equal (PMI_KVS_Get_my_name (name, 4), PMI_ERR_INVALID_LENGTH);
    assert_int_equal (PMI_KVS_Get_my_name (name, 0), PMI_ERR_INVALID_ARG);
    assert_int_equal (PMI_KVS_Get_key_length_max (&n), PMI_SUCCESS);
    assert_int_equal (n, 64);
    assert_int_equal (PMI_KVS_Get_value_length_max (&n), PMI_SUCCESS);
    assert_int_equal (n, 1024);
    assert_int_equal (PMI_KVS_Get_name_length_max (&n), PMI_SUCCESS);
    assert_int_equal (PMI_Get_id_length_max (&n), PMI_SUCCESS);
    assert_int_equal (PMI_Get_id (name, sizeof (name)), PMI_SUCCESS);
    assert_int_equal (PMI_Get_kvs_domain_id (name, sizeof (name)), PMI_SUCCESS);

    /* a private store */
    assert_int_equal (PMI_KVS_Put ("singleton_kvs", "k", "v 1"), PMI_SUCCESS);
    assert_int_equal (PMI_KVS_Put ("singleton_kvs", "k", "v 2"), PMI_SUCCESS);
    assert_int_equal (PMI_KVS_Commit ("singleton_kvs"), PMI_SUCCESS);
    assert_int_equal (PMI_Barrier (), PMI_SUCCESS);
    assert_int_equal (PMI_KVS_Get ("singleton_kvs", "k", val, sizeof (val)), PMI_SUCCESS);
    assert_string_equal (val, "v 2");
    assert_int_equal (PMI_KVS_Get ("singleton_kvs", "k", val, 3), PMI_ERR_INVALID_LENGTH);
    assert_int_equal (PMI_KVS_Get ("singleton_kvs", "zz", val, sizeof (val)), PMI_FAIL);

    /* argument checks */
    assert_int_equal (PMI_KVS_Put ("other", "k", "v"), PMI_ERR_INVALID_KVS);
    assert_int_equal (PMI_KVS_Commit ("other"), PMI_ERR_INVALID_KVS);
    assert_int_equal (PMI_KVS_Put (NULL, "k", "v"), PMI_ERR_INVALID_ARG);
    assert_int_equal (PMI_KVS_Put ("singleton_kvs", "a b", "v"), PMI_ERR_INVALID_KEY);
    assert_int_equal (PMI_KVS_Put ("singleton_kvs", "a=b", "v"), PMI_ERR_INVALID_KEY);
    assert_int_equal (PMI_KVS_Put ("singleton_kvs", "k", "a\nb"), PMI_ERR_INVALID_VAL);
    assert_int_equal (PMI_KVS_Put ("singleton_kvs", "k", NULL), PMI_ERR_INVALID_ARG);
    char big[2048];
    memset (big, 'x', sizeof (big) - 1);
    big[sizeof (big) - 1] = '\0';
    assert_int_equal (PMI_KVS_Put ("singleton_kvs", "k", big), PMI_ERR_INVALID_VAL_LENGTH);
    big[64] = '\0';
    assert_int_equal (PMI_KVS_Put ("singleton_kvs", big, "v"), PMI_ERR_INVALID_KEY_LENGTH);
    assert_int_equal (PMI_KVS_Get ("singleton_kvs", "k", NULL, 5), PMI_ERR_INVALID_ARG);

    /* clique, and what is not supported */
    int ranks[4] = { -1, -1, -1, -1 };
    assert_int_equal (PMI_Get_clique_size (&n), PMI_SUCCESS);
    assert_int_equal (n, 1);
    assert_int_equal (PMI_Get_clique_ranks (ranks, 4), PMI_SUCCESS);
    assert_int_equal (ranks[0], 0);
    assert_int_equal (PMI_Get_clique_ranks (ranks, 0), PMI_ERR_INVALID_ARG);
    assert_int_equal (PMI_Publish_name ("s", "p"), PMI_FAIL);
    assert_int_equal (PMI_Unpublish_name ("s"), PMI_FAIL);
    assert_int_equal (PMI_Lookup_name ("s", val), PMI_FAIL);
    assert_int_equal (PMI_KVS_Iter_first ("singleton_kvs", name, 8, val, 8), PMI_FAIL);
    assert_int_equal (PMI_KVS_Iter_next ("singleton_kvs", name, 8, val, 8), PMI_FAIL);
    assert_int_equal (PMI_KVS_Create (name, sizeof (name)), PMI_FAIL);
    assert_int_equal (PMI_KVS_Destroy ("x"), PMI_FAIL);
    assert_int_equal (PMI_Spawn_multiple (0, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL),
                      PMI_FAIL);

    /* option helpers */
    PMI_keyval_t *kv = (PMI_keyval_t *)1;
    int parsed = -1, size = -1;
    char *args[] = { "x", NULL };
    assert_int_equal (PMI_Parse_option (1, args, &parsed, &kv, &size), PMI_SUCCESS);
    assert_int_equal (parsed, 0);
    assert_null (kv);
    assert_int_equal (PMI_Parse_option (0, args, &parsed, &kv, &size),
                      PMI_ERR_INVALID_NUM_ARGS);
    assert_int_equal (PMI_Free_keyvals (NULL, 0), PMI_SUCCESS);
    assert_int_equal (PMI_Free_keyvals (NULL, -1), PMI_ERR_INVALID_ARG);
    char opts[8];
    int len = sizeof (opts);
    assert_int_equal (PMI_Get_options (opts, &len), PMI_SUCCESS);
    assert_int_equal (len, 0);

    assert_int_equal (PMI_Finalize (), PMI_SUCCESS);
    assert_int_equal (PMI_Initialized (&n), PMI_SUCCESS);
    assert_int_equal (n, PMI_FALSE);
    clear_env ();
}

static int connect_scripted (int rank, int size, const char *answers)
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
    assert_int_equal (write (sv[1], answers, strlen (answers)), strlen (answers));
    return sv[1];
}

static const char *sent (int peer)
{
    static char buf[8192];
    ssize_t n = read (peer, buf, sizeof (buf) - 1);
    assert_true (n >= 0);
    buf[n] = '\0';
    return buf;
}

static void test_connected (void **state)
{
    int spawned, n, ranks[8];
    char val[64];
    int peer = connect_scripted (3, 6,
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
        "cmd=maxes kvsname_max=64 keylen_max=32 vallen_max=100\n"
        "cmd=my_kvsname kvsname=job_9\n"
        "cmd=universe_size size=12\n"
        "cmd=appnum appnum=2\n"
        "cmd=put_result rc=0 msg=success\n"
        "cmd=barrier_out rc=0\n"
        "cmd=get_result rc=0 msg=success value=x y \n"
        "cmd=get_result rc=-1 msg=key_nope_not_found\n"
        "cmd=get_result rc=0 msg=success value=(vector,(0,2,2),(2,1,2))\n"
        "cmd=publish_result rc=-1 info=not_supported\n"
        "cmd=lookup_result rc=0 info=ok port=tcp://x\n"
        "cmd=finalize_ack\n");

    assert_int_equal (PMI_Init (&spawned), PMI_SUCCESS);
    assert_int_equal (PMI_Get_rank (&n), PMI_SUCCESS);
    assert_int_equal (n, 3);
    assert_int_equal (PMI_Get_size (&n), PMI_SUCCESS);
    assert_int_equal (n, 6);
    assert_int_equal (PMI_KVS_Get_value_length_max (&n), PMI_SUCCESS);
    assert_int_equal (n, 100);
    assert_int_equal (PMI_Get_universe_size (&n), PMI_SUCCESS);
    assert_int_equal (n, 12);
    assert_int_equal (PMI_Get_appnum (&n), PMI_SUCCESS);
    assert_int_equal (n, 2);
    assert_int_equal (PMI_KVS_Put ("job_9", "k3", "a b"), PMI_SUCCESS);
    /* the server's smaller maxima are enforced before the wire */
    char big[128];
    memset (big, 'v', 100);
    big[100] = '\0';
    assert_int_equal (PMI_KVS_Put ("job_9", "k", big), PMI_ERR_INVALID_VAL_LENGTH);
    assert_int_equal (PMI_KVS_Commit ("job_9"), PMI_SUCCESS);
    assert_int_equal (PMI_Barrier (), PMI_SUCCESS);
    assert_int_equal (PMI_KVS_Get ("job_9", "k1", val, sizeof (val)), PMI_SUCCESS);
    assert_string_equal (val, "x y ");
    assert_int_equal (PMI_KVS_Get ("job_9", "nope", val, sizeof (val)), PMI_FAIL);
    /* rank 3 is on node 1 with rank 2; asked once, then cached */
    assert_int_equal (PMI_Get_clique_size (&n), PMI_SUCCESS);
    assert_int_equal (n, 2);
    assert_int_equal (PMI_Get_clique_ranks (ranks, 8), PMI_SUCCESS);
    assert_int_equal (ranks[0], 2);
    assert_int_equal (ranks[1], 3);
    assert_int_equal (PMI_Publish_name ("svc", "p"), PMI_FAIL);
    assert_int_equal (PMI_Lookup_name ("svc", val), PMI_SUCCESS);
    assert_string_equal (val, "tcp://x");
    assert_int_equal (PMI_Publish_name ("s v c", "p"), PMI_ERR_INVALID_ARG);
    assert_int_equal (PMI_Finalize (), PMI_SUCCESS);
    assert_string_equal (sent (peer),
        "cmd=init pmi_version=1 pmi_subversion=1\n"
        "cmd=get_maxes\n"
        "cmd=get_my_kvsname\n"
        "cmd=get_universe_size\n"
        "cmd=get_appnum\n"
        "cmd=put kvsname=job_9 key=k3 value=a b\n"
        "cmd=barrier_in\n"
        "cmd=get kvsname=job_9 key=k1\n"
        "cmd=get kvsname=job_9 key=nope\n"
        "cmd=get kvsname=job_9 key=PMI_process_mapping\n"
        "cmd=publish_name service=svc port=p\n"
        "cmd=lookup_name service=svc\n"
        "cmd=finalize\n");
    close (peer);
    clear_env ();
}

static void test_init_fails (void **state)
{
    int spawned, n;
    int peer = connect_scripted (0, 1,
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n");
    assert_int_equal (PMI_Init (&spawned), PMI_FAIL);
    assert_int_equal (PMI_Initialized (&n), PMI_SUCCESS);
    assert_int_equal (n, PMI_FALSE);
    close (peer);
    clear_env ();
    setenv ("PMI_FD", "not-a-number", 1);
    assert_int_equal (PMI_Init (&spawned), PMI_FAIL);
    clear_env ();
}

/* PMI_Abort tells the server and exits with the code. */
static void test_abort (void **state)
{
    int status;
    int peer = connect_scripted (0, 1,
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
        "cmd=maxes kvsname_max=64 keylen_max=32 vallen_max=100\n"
        "cmd=my_kvsname kvsname=job_9\n");
    pid_t pid = fork ();
    assert_true (pid >= 0);
    if (pid == 0) {
        int spawned;
        if (PMI_Init (&spawned) != PMI_SUCCESS)
            _exit (100);
        PMI_Abort (42, "test abort");
        _exit (101);
    }
    assert_int_equal (waitpid (pid, &status, 0), pid);
    assert_true (WIFEXITED (status));
    assert_int_equal (WEXITSTATUS (status), 42);
    assert_non_null (strstr (sent (peer), "cmd=abort exitcode=42\n"));
    close (peer);
    clear_env ();
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_uninitialized),
        cmocka_unit_test (test_singleton),
        cmocka_unit_test (test_connected),
        cmocka_unit_test (test_init_fails),
        cmocka_unit_test (test_abort),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
