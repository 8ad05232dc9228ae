/* test/server.c - unit tests for pmi_server.c (no sockets: a mock owner) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include "src/common/libpmi/pmi_server.h"
#include "src/common/libpmi/pmi_wire.h"

#define MAXRANKS 16
#define MAXKEYS 64

/* The mock owner: an in-memory store, answers synchronous or deferred. */
struct owner {
    pmi_server_t *srv;
    char out[MAXRANKS][8192];           /* everything sent to each rank */
    int nsent[MAXRANKS];
    char *keys[MAXKEYS];
    char *vals[MAXKEYS];
    int nkeys;
    bool async_get;                     /* answer gets later */
    bool async_barrier;                 /* complete barriers later */
    int put_fail;                       /* errno to fail puts with */
    int get_fail;                       /* errno to fail gets with (rc -1) */
    int barrier_fail;
    int barrier_calls;
    int get_calls;
    int pending_get[MAXRANKS];
    int finalized[MAXRANKS];
    int abort_rank, abort_code;
    char abort_msg[64];
};

static void o_send (void *arg, int rank, const char *line, size_t len)
{
    struct owner *o = arg;
    assert_true (rank >= 0 && rank < MAXRANKS);
    assert_int_equal (strlen (line), len);
    assert_true (len > 0 && line[len - 1] == '\n');
    assert_true (strlen (o->out[rank]) + len < sizeof (o->out[rank]));
    strcat (o->out[rank], line);
    o->nsent[rank]++;
}

static const char *lookup (struct owner *o, const char *key)
{
    for (int i = 0; i < o->nkeys; i++) {
        if (!strcmp (o->keys[i], key))
            return o->vals[i];
    }
    return NULL;
}

static int o_put (void *arg, int rank, const char *key, const char *value)
{
    struct owner *o = arg;
    if (o->put_fail) {
        errno = o->put_fail;
        return -1;
    }
    for (int i = 0; i < o->nkeys; i++) {
        if (!strcmp (o->keys[i], key)) {
            free (o->vals[i]);
            o->vals[i] = strdup (value);
            return 0;
        }
    }
    if (o->nkeys == MAXKEYS) {
        errno = ENOSPC;
        return -1;
    }
    o->keys[o->nkeys] = strdup (key);
    o->vals[o->nkeys++] = strdup (value);
    return 0;
}

static int o_get (void *arg, int rank, const char *key)
{
    struct owner *o = arg;
    const char *v;
    o->get_calls++;
    if (o->get_fail) {
        errno = o->get_fail;
        return -1;
    }
    if (o->async_get) {
        o->pending_get[rank] = 1;
        return 0;
    }
    v = lookup (o, key);
    assert_int_equal (pmi_server_get_respond (o->srv, rank, v ? 0 : ENOENT, v), 0);
    return 0;
}

static int o_barrier (void *arg)
{
    struct owner *o = arg;
    o->barrier_calls++;
    if (o->barrier_fail) {
        errno = o->barrier_fail;
        return -1;
    }
    if (!o->async_barrier)
        assert_int_equal (pmi_server_barrier_done (o->srv, 0), 0);
    return 0;
}

static void o_finalize (void *arg, int rank)
{
    struct owner *o = arg;
    o->finalized[rank]++;
}

static void o_abort (void *arg, int rank, int code, const char *msg)
{
    struct owner *o = arg;
    o->abort_rank = rank;
    o->abort_code = code;
    snprintf (o->abort_msg, sizeof (o->abort_msg), "%s", msg ? msg : "(null)");
}

static const struct pmi_server_ops ops = {
    .send = o_send,
    .put = o_put,
    .get = o_get,
    .barrier = o_barrier,
    .finalize = o_finalize,
    .abort = o_abort,
};

static struct owner *owner_create (const struct pmi_server_config *cfg)
{
    struct owner *o = calloc (1, sizeof (*o));
    assert_non_null (o);
    o->abort_rank = -1;
    o->srv = pmi_server_create (cfg, &ops, o);
    assert_non_null (o->srv);
    return o;
}

static struct owner *owner_simple (int size)
{
    struct pmi_server_config cfg = {
        .size = size,
        .kvsname = "kvs_42",
        .process_mapping = "(vector,(0,1,4))",
    };
    return owner_create (&cfg);
}

static void owner_destroy (struct owner *o)
{
    pmi_server_destroy (o->srv);
    for (int i = 0; i < o->nkeys; i++) {
        free (o->keys[i]);
        free (o->vals[i]);
    }
    free (o);
}

/* Send a request from rank and return (and forget) what it was sent. */
static const char *req (struct owner *o, int rank, const char *line)
{
    static char buf[8192];
    o->out[rank][0] = '\0';
    assert_int_equal (pmi_server_request (o->srv, rank, line, strlen (line)), 0);
    strcpy (buf, o->out[rank]);
    o->out[rank][0] = '\0';
    return buf;
}

static void test_create_errors (void **state)
{
    struct pmi_server_config cfg = { .size = 4 };
    struct pmi_server_ops bad = ops;

    assert_null (pmi_server_create (NULL, &ops, NULL));
    assert_int_equal (errno, EINVAL);
    bad.get = NULL;
    assert_null (pmi_server_create (&cfg, &bad, NULL));
    assert_int_equal (errno, EINVAL);
    cfg.size = 0;
    assert_null (pmi_server_create (&cfg, &ops, NULL));
    assert_int_equal (errno, EINVAL);
    cfg.size = 4;
    cfg.local_ranks = (int[]){ 1, 1 };
    cfg.nlocal = 2;
    assert_null (pmi_server_create (&cfg, &ops, NULL));     /* duplicate */
    cfg.local_ranks = (int[]){ 1, 4 };
    assert_null (pmi_server_create (&cfg, &ops, NULL));     /* out of range */
    cfg.local_ranks = (int[]){ -1 };
    cfg.nlocal = 1;
    assert_null (pmi_server_create (&cfg, &ops, NULL));
    cfg.local_ranks = NULL;
    cfg.kvsname = "has space";
    assert_null (pmi_server_create (&cfg, &ops, NULL));
    cfg.kvsname = NULL;
    cfg.vallen_max = 4000;                                  /* lines too long */
    assert_null (pmi_server_create (&cfg, &ops, NULL));
    cfg.vallen_max = 8;
    assert_null (pmi_server_create (&cfg, &ops, NULL));
    cfg.vallen_max = 0;
    cfg.process_mapping = "bad\nmapping";
    assert_null (pmi_server_create (&cfg, &ops, NULL));
    assert_int_equal (errno, EINVAL);
    pmi_server_destroy (NULL);
}

static void test_handshake (void **state)
{
    struct owner *o = owner_simple (4);

    assert_string_equal (req (o, 1, "cmd=init pmi_version=1 pmi_subversion=1\n"),
                         "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
    assert_string_equal (req (o, 1, "cmd=init pmi_version=2 pmi_subversion=0\n"),
                         "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n");
    assert_string_equal (req (o, 1, "cmd=get_maxes\n"),
                         "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n");
    assert_string_equal (req (o, 1, "cmd=get_appnum\n"), "cmd=appnum appnum=0\n");
    assert_string_equal (req (o, 1, "cmd=get_my_kvsname\n"),
                         "cmd=my_kvsname kvsname=kvs_42\n");
    assert_string_equal (req (o, 1, "cmd=get_universe_size\n"),
                         "cmd=universe_size size=4\n");
    assert_string_equal (req (o, 1, "cmd=get kvsname=kvs_42 key=PMI_process_mapping\n"),
                         "cmd=get_result rc=0 msg=success value=(vector,(0,1,4))\n");
    assert_int_equal (o->get_calls, 0);     /* answered by the engine */
    assert_true (pmi_server_task_initialized (o->srv, 1));
    assert_false (pmi_server_task_initialized (o->srv, 2));
    assert_false (pmi_server_task_initialized (o->srv, 99));
    /* the PMI_ID handshake */
    assert_string_equal (req (o, 3, "cmd=initack pmiid=3\n"),
                         "cmd=initack\ncmd=set size=4\ncmd=set rank=3\ncmd=set debug=0\n");
    assert_int_equal (pmi_server_request (o->srv, 2, "cmd=initack pmiid=3", 19), -1);
    assert_int_equal (errno, EPROTO);
    assert_int_equal (pmi_server_initack_rank ("cmd=initack pmiid=7\n", 20), 7);
    assert_int_equal (pmi_server_initack_rank ("cmd=init\n", 9), -1);
    assert_int_equal (errno, EPROTO);
    assert_int_equal (pmi_server_initack_rank ("cmd=initack pmiid=-1", 20), -1);
    /* finalize */
    assert_string_equal (req (o, 1, "cmd=finalize\n"), "cmd=finalize_ack\n");
    assert_int_equal (o->finalized[1], 1);
    assert_int_equal (pmi_server_disconnect (o->srv, 1), 1);
    assert_int_equal (pmi_server_disconnect (o->srv, 2), 0);
    assert_int_equal (pmi_server_request (o->srv, 1, "cmd=get_maxes", 13), -1);
    assert_int_equal (errno, ENOTCONN);
    assert_int_equal (pmi_server_disconnect (o->srv, 9), -1);
    assert_int_equal (errno, EINVAL);
    owner_destroy (o);
}

static void test_put_get (void **state)
{
    struct owner *o = owner_simple (2);
    char line[2048], expect[2048], val[1100];

    assert_string_equal (req (o, 0, "cmd=put kvsname=kvs_42 key=-bcast-1-0 value=2F6465\n"),
                         "cmd=put_result rc=0 msg=success\n");
    assert_string_equal (req (o, 1, "cmd=get kvsname=kvs_42 key=-bcast-1-0\n"),
                         "cmd=get_result rc=0 msg=success value=2F6465\n");
    /* missing key: rc != 0 at once */
    assert_string_equal (req (o, 1, "cmd=get kvsname=kvs_42 key=1234-0-key6\n"),
                         "cmd=get_result rc=-1 msg=key_1234-0-key6_not_found\n");
    /* values with spaces and a 1023-char value (vallen_max - 1) */
    assert_string_equal (req (o, 0, "cmd=put kvsname=kvs_42 key=sp value=a b  c \n"),
                         "cmd=put_result rc=0 msg=success\n");
    assert_string_equal (req (o, 1, "cmd=get kvsname=kvs_42 key=sp\n"),
                         "cmd=get_result rc=0 msg=success value=a b  c \n");
    memset (val, 'x', 1023);
    val[1023] = '\0';
    val[100] = ' ';
    snprintf (line, sizeof (line), "cmd=put kvsname=kvs_42 key=big value=%s\n", val);
    assert_string_equal (req (o, 0, line), "cmd=put_result rc=0 msg=success\n");
    snprintf (expect, sizeof (expect), "cmd=get_result rc=0 msg=success value=%s\n", val);
    assert_string_equal (req (o, 1, "cmd=get kvsname=kvs_42 key=big\n"), expect);
    /* too long a value, too long a key */
    strcat (val, "y");
    snprintf (line, sizeof (line), "cmd=put kvsname=kvs_42 key=big value=%s\n", val);
    assert_string_equal (req (o, 0, line), "cmd=put_result rc=-1 msg=value_too_long\n");
    snprintf (line, sizeof (line), "cmd=put kvsname=kvs_42 key=%064d value=1\n", 0);
    assert_string_equal (req (o, 0, line), "cmd=put_result rc=-1 msg=key_too_long\n");
    snprintf (line, sizeof (line), "cmd=get kvsname=kvs_42 key=%064d\n", 0);
    assert_string_equal (req (o, 0, line), "cmd=get_result rc=-1 msg=key_too_long\n");
    /* wrong kvsname, missing fields */
    assert_string_equal (req (o, 0, "cmd=put kvsname=other key=a value=1\n"),
                         "cmd=put_result rc=-1 msg=unknown_kvsname\n");
    assert_string_equal (req (o, 0, "cmd=get kvsname=other key=a\n"),
                         "cmd=get_result rc=-1 msg=unknown_kvsname\n");
    assert_string_equal (req (o, 0, "cmd=put kvsname=kvs_42 key=a\n"),
                         "cmd=put_result rc=-1 msg=missing_value\n");
    assert_string_equal (req (o, 0, "cmd=put kvsname=kvs_42 value=1\n"),
                         "cmd=put_result rc=-1 msg=missing_kvsname_or_key\n");
    assert_string_equal (req (o, 0, "cmd=get key=a\n"),
                         "cmd=get_result rc=-1 msg=missing_kvsname_or_key\n");
    assert_string_equal (req (o, 0, "cmd=put kvsname=kvs_42 key= value=1\n"),
                         "cmd=put_result rc=-1 msg=invalid_key\n");
    /* the owner fails */
    o->put_fail = ENOSPC;
    assert_string_equal (req (o, 0, "cmd=put kvsname=kvs_42 key=a value=1\n"),
                         "cmd=put_result rc=-1 msg=No_space_left_on_device\n");
    o->get_fail = EIO;
    assert_string_equal (req (o, 0, "cmd=get kvsname=kvs_42 key=a\n"),
                         "cmd=get_result rc=-1 msg=Input/output_error\n");
    owner_destroy (o);
}

static void test_get_async (void **state)
{
    struct owner *o = owner_simple (2);

    o->async_get = true;
    (void)req (o, 0, "cmd=put kvsname=kvs_42 key=k value=v\n");
    assert_string_equal (req (o, 1, "cmd=get kvsname=kvs_42 key=k\n"), "");
    assert_int_equal (o->pending_get[1], 1);
    /* a second request while waiting is a protocol error */
    assert_int_equal (pmi_server_request (o->srv, 1, "cmd=get_maxes\n", 14), -1);
    assert_int_equal (errno, EPROTO);
    /* rank 0 is not waiting */
    assert_int_equal (pmi_server_get_respond (o->srv, 0, 0, "v"), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (pmi_server_get_respond (o->srv, 1, 0, "v"), 0);
    assert_string_equal (o->out[1], "cmd=get_result rc=0 msg=success value=v\n");
    o->out[1][0] = '\0';
    /* answered twice */
    assert_int_equal (pmi_server_get_respond (o->srv, 1, 0, "v"), -1);
    assert_int_equal (errno, EINVAL);
    /* later answer: not found */
    (void)req (o, 1, "cmd=get kvsname=kvs_42 key=zz\n");
    assert_int_equal (pmi_server_get_respond (o->srv, 1, ENOENT, NULL), 0);
    assert_string_equal (o->out[1], "cmd=get_result rc=-1 msg=key_zz_not_found\n");
    o->out[1][0] = '\0';
    /* an answer that cannot be sent becomes rc=-1 */
    (void)req (o, 1, "cmd=get kvsname=kvs_42 key=k\n");
    assert_int_equal (pmi_server_get_respond (o->srv, 1, 0, "bad\nvalue"), -1);
    assert_int_equal (errno, EINVAL);
    assert_string_equal (o->out[1], "cmd=get_result rc=-1 msg=invalid_value\n");
    o->out[1][0] = '\0';
    /* the task goes away while its get is pending: the answer is dropped */
    (void)req (o, 1, "cmd=get kvsname=kvs_42 key=k\n");
    assert_int_equal (pmi_server_disconnect (o->srv, 1), 0);
    assert_int_equal (pmi_server_get_respond (o->srv, 1, 0, "v"), -1);
    assert_int_equal (errno, ENOTCONN);
    assert_string_equal (o->out[1], "");
    owner_destroy (o);
}

static void test_barrier (void **state)
{
    struct owner *o = owner_simple (3);

    for (int round = 0; round < 3; round++) {
        assert_string_equal (req (o, 2, "cmd=barrier_in\n"), "");
        assert_string_equal (req (o, 0, "cmd=barrier_in\n"), "");
        assert_int_equal (o->barrier_calls, round);
        /* a request while in the barrier */
        assert_int_equal (pmi_server_request (o->srv, 0, "cmd=barrier_in", 14), -1);
        assert_int_equal (errno, EPROTO);
        o->out[0][0] = o->out[2][0] = '\0';
        assert_int_equal (pmi_server_request (o->srv, 1, "cmd=barrier_in", 14), 0);
        assert_int_equal (o->barrier_calls, round + 1);
        for (int r = 0; r < 3; r++) {
            assert_string_equal (o->out[r], "cmd=barrier_out rc=0\n");
            o->out[r][0] = '\0';
        }
    }
    assert_int_equal (pmi_server_barrier_done (o->srv, 0), -1);
    assert_int_equal (errno, EINVAL);

    /* deferred completion */
    o->async_barrier = true;
    for (int r = 0; r < 3; r++)
        assert_string_equal (req (o, r, "cmd=barrier_in\n"), "");
    assert_int_equal (o->barrier_calls, 4);
    assert_int_equal (pmi_server_barrier_done (o->srv, 0), 0);
    for (int r = 0; r < 3; r++) {
        assert_string_equal (o->out[r], "cmd=barrier_out rc=0\n");
        o->out[r][0] = '\0';
    }
    /* failed barrier, deferred and immediate */
    for (int r = 0; r < 3; r++)
        (void)req (o, r, "cmd=barrier_in\n");
    assert_int_equal (pmi_server_barrier_done (o->srv, ETIMEDOUT), 0);
    assert_string_equal (o->out[1], "cmd=barrier_out rc=-1 msg=Connection_timed_out\n");
    o->out[0][0] = o->out[1][0] = o->out[2][0] = '\0';
    o->barrier_fail = EHOSTUNREACH;
    for (int r = 0; r < 2; r++)
        (void)req (o, r, "cmd=barrier_in\n");
    assert_string_equal (req (o, 2, "cmd=barrier_in\n"),
                         "cmd=barrier_out rc=-1 msg=No_route_to_host\n");
    assert_string_equal (o->out[0], "cmd=barrier_out rc=-1 msg=No_route_to_host\n");
    owner_destroy (o);
}

/* One engine serving ranks 5 and 2 of an 8-task job. */
static void test_local_ranks (void **state)
{
    struct pmi_server_config cfg = {
        .size = 8,
        .local_ranks = (int[]){ 5, 2 },
        .nlocal = 2,
        .kvsname = "job",
        .universe_size = 16,
        .appnum = 3,
        .vallen_max = 256,
        .debug = 1,
    };
    struct owner *o = owner_create (&cfg);

    assert_int_equal (pmi_server_request (o->srv, 0, "cmd=get_maxes", 13), -1);
    assert_int_equal (errno, EINVAL);
    assert_string_equal (req (o, 5, "cmd=get_maxes\n"),
                         "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=256\n");
    assert_string_equal (req (o, 2, "cmd=get_universe_size\n"),
                         "cmd=universe_size size=16\n");
    assert_string_equal (req (o, 2, "cmd=get_appnum\n"), "cmd=appnum appnum=3\n");
    assert_string_equal (req (o, 2, "cmd=initack pmiid=2\n"),
                         "cmd=initack\ncmd=set size=8\ncmd=set rank=2\ncmd=set debug=1\n");
    /* no mapping configured: the key goes to the owner */
    assert_string_equal (req (o, 2, "cmd=get kvsname=job key=PMI_process_mapping\n"),
                         "cmd=get_result rc=-1 msg=key_PMI_process_mapping_not_found\n");
    assert_int_equal (o->get_calls, 1);
    /* the barrier needs both local ranks only */
    (void)req (o, 5, "cmd=barrier_in\n");
    (void)pmi_server_request (o->srv, 2, "cmd=barrier_in\n", 15);
    assert_int_equal (o->barrier_calls, 1);
    assert_string_equal (o->out[5], "cmd=barrier_out rc=0\n");
    owner_destroy (o);
}

static void test_abort_and_misc (void **state)
{
    struct owner *o = owner_simple (2);

    assert_string_equal (req (o, 1, "cmd=abort exitcode=7\n"), "");
    assert_int_equal (o->abort_rank, 1);
    assert_int_equal (o->abort_code, 7);
    assert_string_equal (o->abort_msg, "(null)");
    assert_string_equal (req (o, 0, "cmd=abort exitcode=x error_msg=oops\n"), "");
    assert_int_equal (o->abort_code, 1);
    assert_string_equal (o->abort_msg, "oops");

    assert_string_equal (req (o, 0, "cmd=publish_name service=s port=p\n"),
                         "cmd=publish_result rc=-1 info=not_supported "
                         "msg=publish_name_is_not_supported\n");
    assert_string_equal (req (o, 0, "cmd=unpublish_name service=s\n"),
                         "cmd=unpublish_result rc=-1 info=not_supported "
                         "msg=unpublish_name_is_not_supported\n");
    assert_string_equal (req (o, 0, "cmd=lookup_name service=s\n"),
                         "cmd=lookup_result rc=-1 info=not_supported "
                         "msg=lookup_name_is_not_supported\n");
    assert_string_equal (req (o, 0, "cmd=getbyidx kvsname=kvs_42 idx=0\n"),
                         "cmd=getbyidx_results rc=-1 reason=not_supported "
                         "msg=getbyidx_is_not_supported\n");
    assert_string_equal (req (o, 0, "cmd=frobnicate a=b\n"),
                         "cmd=frobnicate_result rc=-1 msg=unknown_command\n");
    owner_destroy (o);
}

static void test_spawn (void **state)
{
    struct owner *o = owner_simple (1);
    const char *block1[] = {
        "mcmd=spawn\n", "nprocs=2\n", "execname=/bin/true\n", "totspawns=2\n",
        "spawnssofar=1\n", "arg1=has spaces and = signs\n", "argcnt=1\n",
        "preput_num=0\n", "info_num=0\n", "endcmd\n", NULL,
    };
    const char *block2[] = {
        "mcmd=spawn\n", "nprocs=1\n", "execname=x\n", "totspawns=2\n",
        "spawnssofar=2\n", "argcnt=0\n", "preput_num=0\n", "info_num=0\n",
        "endcmd\n", NULL,
    };
    for (int i = 0; block1[i]; i++)
        assert_string_equal (req (o, 0, block1[i]), "");
    for (int i = 0; block2[i + 1]; i++)
        assert_string_equal (req (o, 0, block2[i]), "");
    assert_string_equal (req (o, 0, "endcmd\n"),
                         "cmd=spawn_result rc=-1 msg=spawn_is_not_supported\n");
    /* back to normal requests */
    assert_string_equal (req (o, 0, "cmd=get_appnum\n"), "cmd=appnum appnum=0\n");
    /* a malformed mcmd */
    assert_int_equal (pmi_server_request (o->srv, 0, "mcmd=spawn x=1\n", 15), -1);
    assert_int_equal (errno, EPROTO);
    assert_int_equal (pmi_server_request (o->srv, 0, "mcmd=other\n", 11), -1);
    assert_int_equal (errno, EPROTO);
    /* an endless spawn block is cut off */
    assert_string_equal (req (o, 0, "mcmd=spawn\n"), "");
    int rc = 0;
    for (int i = 0; i < 5000 && rc == 0; i++)
        rc = pmi_server_request (o->srv, 0, "arg=x\n", 6);
    assert_int_equal (rc, -1);
    assert_int_equal (errno, EPROTO);
    owner_destroy (o);
}

static void test_garbage (void **state)
{
    struct owner *o = owner_simple (1);
    char *big = malloc (PMI_WIRE_LINE_MAX + 10);

    const char *bad[] = { "", "\n", "hello\n", "key=value\n", "cmd=a b\n",
                          "cmd=x\ty=1\n", NULL };
    for (int i = 0; bad[i]; i++) {
        assert_int_equal (pmi_server_request (o->srv, 0, bad[i], strlen (bad[i])), -1);
        assert_int_equal (errno, EPROTO);
    }
    assert_int_equal (o->nsent[0], 0);
    memset (big, 'a', PMI_WIRE_LINE_MAX + 10);
    memcpy (big, "cmd=put value=", 14);
    assert_int_equal (pmi_server_request (o->srv, 0, big, PMI_WIRE_LINE_MAX + 10), -1);
    assert_int_equal (errno, EMSGSIZE);
    assert_int_equal (pmi_server_request (o->srv, 0, NULL, 0), -1);
    assert_int_equal (errno, EINVAL);
    assert_int_equal (pmi_server_request (NULL, 0, "cmd=init", 8), -1);
    assert_int_equal (errno, EINVAL);
    /* still works afterwards */
    assert_string_equal (req (o, 0, "cmd=get_appnum\n"), "cmd=appnum appnum=0\n");
    free (big);
    owner_destroy (o);
}

/* Random lines never crash the engine; every answer is one valid line. */
static void test_fuzz (void **state)
{
    struct owner *o = owner_simple (2);
    const char *words[] = { "cmd=", "put", "get", "barrier_in", "init", "kvsname=",
                            "kvs_42", "key=", "value=", " ", "=", "abort", "x",
                            "exitcode=", "mcmd=spawn", "endcmd", "\n", "finalize",
                            "initack", "pmiid=", "0", "1" };
    unsigned seed = 7;
    char line[512];

    for (int iter = 0; iter < 20000; iter++) {
        size_t len = 0;
        int nw = rand_r (&seed) % 8;
        for (int i = 0; i < nw; i++) {
            const char *w = words[rand_r (&seed) % (sizeof (words) / sizeof (words[0]))];
            if (len + strlen (w) < sizeof (line))
                len += sprintf (line + len, "%s", w);
        }
        int rank = rand_r (&seed) % 2;
        o->out[rank][0] = '\0';
        (void)pmi_server_request (o->srv, rank, line, len);
        if (o->out[rank][0]) {
            struct pmi_wire_msg msg;
            char *nl = strchr (o->out[rank], '\n');
            assert_non_null (nl);
            assert_int_equal (pmi_wire_parse (&msg, o->out[rank], nl - o->out[rank] + 1), 0);
            assert_non_null (pmi_wire_cmd (&msg));
        }
        /* keep the engine moving: release a barrier or a spawn */
        (void)pmi_server_barrier_done (o->srv, 0);
        o->out[0][0] = o->out[1][0] = '\0';
    }
    owner_destroy (o);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_create_errors),
        cmocka_unit_test (test_handshake),
        cmocka_unit_test (test_put_get),
        cmocka_unit_test (test_get_async),
        cmocka_unit_test (test_barrier),
        cmocka_unit_test (test_local_ranks),
        cmocka_unit_test (test_abort_and_misc),
        cmocka_unit_test (test_spawn),
        cmocka_unit_test (test_garbage),
        cmocka_unit_test (test_fuzz),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
