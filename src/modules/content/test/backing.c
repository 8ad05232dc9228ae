/* test/backing.c - rank 0's write-back against a fake broker (a thread on
 * a UNIX socket that plays content-sqlite and records the answers the
 * write-back sends to the requests the test hands it).  No real broker.
 *
 * Checked: dirty blobs are written in batches and become clean; a flush
 * is answered only after the blobs before it are written and a sync was
 * made; checkpoints reach the store in order; a failed batch (ENOSPC)
 * fails the waiting flush with the store's text, puts the blobs back, and
 * a flush that arrives after the failure gets a fresh attempt; loads go to
 * the store; a missing store (ENOSYS) disables the write-back.
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
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/select.h>
#include <canopy/canopy.h>
#include "src/common/libcanopy/msg_stream.h"
#include "src/common/libutil/blobref.h"
#include "src/modules/content/blobcache.h"
#include "src/modules/content/backing.h"

static char tmpdir[64], sockpath[128];
static int listen_fd;
static pthread_t thread;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* fake store state (under lock) */
static int fail_store;          /* errnum for content-sqlite.store, 0 = ok */
static int stores, blobs_stored, syncs;
static char ckpt_order[256];    /* versions of checkpoint-puts, in order */
#define MAXTAG 64
static int answered[MAXTAG];    /* per matchtag: 1 + errnum once answered */
static char answer_text[MAXTAG][128];

static void send_msg (int fd, const canopy_msg_t *msg)
{
    size_t size;
    void *buf = msg_frame_encode (msg, &size);
    assert_non_null (buf);
    assert_int_equal (send (fd, buf, size, MSG_NOSIGNAL), size);
    free (buf);
}

static canopy_msg_t *recv_msg (int fd, struct msg_instream *in)
{
    canopy_msg_t *msg;
    while (!(msg = msg_instream_next (in))) {
        if (errno != EAGAIN)
            return NULL;
        fd_set set;
        FD_ZERO (&set);
        FD_SET (fd, &set);
        select (fd + 1, &set, NULL, NULL, NULL);
        if (msg_instream_fill (in, fd) <= 0 && errno != EAGAIN)
            return NULL;
    }
    return msg;
}

static void respond (int fd, const canopy_msg_t *req, int errnum, const char *s,
                     const void *raw, size_t rawlen)
{
    canopy_msg_t *rsp = canopy_response_derive (req, errnum);
    if (raw)
        canopy_msg_set_payload (rsp, raw, rawlen);
    else if (s)
        canopy_msg_set_string (rsp, s);
    send_msg (fd, rsp);
    canopy_msg_decref (rsp);
}

static void *fake_broker (void *arg)
{
    int fd = accept (listen_fd, NULL, NULL);
    struct msg_instream in;
    canopy_msg_t *msg;

    msg_instream_init (&in);
    while ((msg = recv_msg (fd, &in))) {
        const char *topic = canopy_msg_get_topic (msg);
        uint32_t tag = 0;
        canopy_msg_get_matchtag (msg, &tag);
        pthread_mutex_lock (&lock);
        if (canopy_msg_get_type (msg) == CANOPY_MSGTYPE_RESPONSE) {
            int errnum = 0;
            const char *s = canopy_msg_errstr (msg);
            canopy_msg_get_errnum (msg, &errnum);
            if (tag < MAXTAG) {
                answered[tag] = 1 + errnum;
                snprintf (answer_text[tag], sizeof (answer_text[tag]), "%s", s ? s : "");
            }
        }
        else if (!strcmp (topic, "content-sqlite.store")) {
            const void *p;
            size_t len;
            canopy_msg_get_payload (msg, &p, &len);
            if (fail_store)
                respond (fd, msg, fail_store, "disk full", NULL, 0);
            else {
                /* count the blobs: [ref u32 data]... */
                const uint8_t *b = p;
                size_t off = 0;
                while (off + BLOBREF_STRLEN + 4 <= len) {
                    off += BLOBREF_STRLEN;
                    uint32_t n = ((uint32_t)b[off] << 24) | (b[off + 1] << 16)
                                 | (b[off + 2] << 8) | b[off + 3];
                    off += 4 + n;
                    blobs_stored++;
                }
                stores++;
                respond (fd, msg, 0, "{}", NULL, 0);
            }
        }
        else if (!strcmp (topic, "content-sqlite.sync")) {
            syncs++;
            respond (fd, msg, 0, NULL, NULL, 0);
        }
        else if (!strcmp (topic, "content-sqlite.checkpoint-put")) {
            int version = -1;
            canopy_msg_unpack (msg, "{s:i}", "version", &version);
            snprintf (ckpt_order + strlen (ckpt_order),
                      sizeof (ckpt_order) - strlen (ckpt_order), "%d,", version);
            respond (fd, msg, 0, NULL, NULL, 0);
        }
        else if (!strcmp (topic, "content-sqlite.load")) {
            const char *ref = NULL;
            char want[BLOBREF_MAX];
            canopy_msg_get_string (msg, &ref);
            blobref_hash ("stored", 6, want, sizeof (want));
            if (ref && !strcmp (ref, want))
                respond (fd, msg, 0, NULL, "stored", 6);
            else
                respond (fd, msg, ENOENT, "unknown blob", NULL, 0);
        }
        else if (!strncmp (topic, "absent.", 7))
            respond (fd, msg, ENOSYS, NULL, NULL, 0);
        else if (!strcmp (topic, "bye.x")) {
            pthread_mutex_unlock (&lock);
            canopy_msg_decref (msg);
            break;
        }
        pthread_mutex_unlock (&lock);
        canopy_msg_decref (msg);
    }
    msg_instream_release (&in);
    close (fd);
    return NULL;
}

static canopy_t *h;
static canopy_reactor_t *r;

static int setup (void **state)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    char uri[160];
    canopy_error_t error;

    snprintf (tmpdir, sizeof (tmpdir), "/tmp/canopy-test-XXXXXX");
    assert_non_null (mkdtemp (tmpdir));
    snprintf (sockpath, sizeof (sockpath), "%s/sock", tmpdir);
    strcpy (addr.sun_path, sockpath);
    listen_fd = socket (AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal (bind (listen_fd, (struct sockaddr *)&addr, sizeof (addr)), 0);
    assert_int_equal (listen (listen_fd, 4), 0);
    assert_int_equal (pthread_create (&thread, NULL, fake_broker, NULL), 0);
    snprintf (uri, sizeof (uri), "local://%s", sockpath);
    assert_non_null ((h = canopy_open (uri, 0, &error)));
    r = canopy_get_reactor (h);
    return 0;
}

static int teardown (void **state)
{
    canopy_future_t *f = canopy_rpc (h, "bye.x", NULL, CANOPY_NODEID_ANY,
                                     CANOPY_RPC_NORESPONSE);
    canopy_future_destroy (f);
    pthread_join (thread, NULL);
    canopy_close (h);
    close (listen_fd);
    unlink (sockpath);
    rmdir (tmpdir);
    return 0;
}

/* Run the reactor until cond() (bounded: a stuck test fails, not hangs). */
static bool run_until (bool (*cond)(void *), void *arg)
{
    for (int i = 0; i < 20000; i++) {
        pthread_mutex_lock (&lock);
        bool done = cond (arg);
        pthread_mutex_unlock (&lock);
        if (done)
            return true;
        canopy_reactor_run (r, CANOPY_REACTOR_NOWAIT);
        usleep (500);
    }
    return false;
}

static bool is_answered (void *arg)
{
    return answered[(intptr_t)arg] != 0;
}

static bool cache_clean (void *arg)
{
    struct blobcache_stats st;
    blobcache_stats (arg, &st);
    return st.dirty == 0;
}

static canopy_msg_t *request (const char *topic, uint32_t tag, const char *json)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    assert_non_null (msg);
    assert_int_equal (canopy_msg_set_topic (msg, topic), 0);
    assert_int_equal (canopy_msg_set_matchtag (msg, tag), 0);
    if (json)
        assert_int_equal (canopy_msg_set_string (msg, json), 0);
    return msg;
}

static void add_dirty (blobcache_t *bc, int from, int count)
{
    char buf[32];
    for (int i = from; i < from + count; i++) {
        snprintf (buf, sizeof (buf), "blob-%d", i);
        assert_non_null (blobcache_insert (bc, buf, strlen (buf), true, NULL));
    }
}

static char loaded_ref[BLOBREF_MAX];
static int loaded_errnum = -1;

static void loaded (const char *ref, const void *data, size_t len, int errnum,
                    const char *errstr, void *arg)
{
    snprintf (loaded_ref, sizeof (loaded_ref), "%s", ref);
    loaded_errnum = errnum;
    if (!errnum)
        assert_memory_equal (data, "stored", len);
}

static bool load_done (void *arg)
{
    return loaded_errnum >= 0;
}

static void test_writeback_and_flush (void **state)
{
    blobcache_t *bc = blobcache_create (1 << 20);
    struct backing *b = backing_create (h, bc, "content-sqlite", 0.001, loaded, NULL);
    canopy_msg_t *m;

    assert_non_null (b);
    assert_true (backing_available (b));
    add_dirty (bc, 0, 300);
    backing_kick (b);
    assert_true (run_until (cache_clean, bc));
    pthread_mutex_lock (&lock);
    assert_int_equal (blobs_stored, 300);
    assert_true (stores < 300);         /* batched */
    pthread_mutex_unlock (&lock);

    /* a flush waits for the blobs before it, then a sync */
    add_dirty (bc, 300, 10);
    m = request ("content.flush", 1, NULL);
    backing_flush_request (b, m);
    assert_true (run_until (is_answered, (void *)1));
    pthread_mutex_lock (&lock);
    assert_int_equal (answered[1], 1);
    assert_int_equal (blobs_stored, 310);
    assert_true (syncs >= 1);
    pthread_mutex_unlock (&lock);
    canopy_msg_decref (m);

    /* checkpoints reach the store in the order asked */
    char ref[BLOBREF_MAX], json[200];
    blobref_hash ("root", 4, ref, sizeof (ref));
    for (int v = 1; v <= 3; v++) {
        add_dirty (bc, 400 + 10 * v, 5);
        snprintf (json, sizeof (json),
                  "{\"rootref\":\"%s\",\"version\":%d,\"timestamp\":1.0}", ref, v);
        m = request ("content.checkpoint-put", 10 + v, json);
        backing_checkpoint_put (b, m);
        canopy_msg_decref (m);
    }
    assert_true (run_until (is_answered, (void *)13));
    pthread_mutex_lock (&lock);
    assert_string_equal (ckpt_order, "1,2,3,");
    assert_int_equal (answered[11], 1);
    assert_int_equal (answered[12], 1);
    pthread_mutex_unlock (&lock);
    /* a malformed one is refused */
    m = request ("content.checkpoint-put", 14, "{\"rootref\":\"junk\"}");
    backing_checkpoint_put (b, m);
    canopy_msg_decref (m);
    assert_true (run_until (is_answered, (void *)14));
    assert_int_equal (answered[14], 1 + EPROTO);

    /* loads go to the store */
    char want[BLOBREF_MAX];
    blobref_hash ("stored", 6, want, sizeof (want));
    assert_int_equal (backing_load (b, want), 0);
    assert_true (run_until (load_done, NULL));
    assert_int_equal (loaded_errnum, 0);
    assert_string_equal (loaded_ref, want);
    loaded_errnum = -1;
    assert_int_equal (backing_load (b, ref), 0);
    assert_true (run_until (load_done, NULL));
    assert_int_equal (loaded_errnum, ENOENT);

    json_t *o = backing_stats (b);
    assert_non_null (o);
    assert_string_equal (json_string_value (json_object_get (o, "state")), "ok");
    json_decref (o);
    backing_destroy (b);
    blobcache_destroy (bc);
}

static void test_enospc (void **state)
{
    blobcache_t *bc = blobcache_create (1 << 20);
    struct backing *b = backing_create (h, bc, "content-sqlite", 0, loaded, NULL);
    canopy_msg_t *m1, *m2;
    struct blobcache_stats st;

    pthread_mutex_lock (&lock);
    fail_store = ENOSPC;
    pthread_mutex_unlock (&lock);
    add_dirty (bc, 1000, 20);
    m1 = request ("content.flush", 20, NULL);
    backing_flush_request (b, m1);
    assert_true (run_until (is_answered, (void *)20));
    pthread_mutex_lock (&lock);
    assert_int_equal (answered[20], 1 + ENOSPC);
    assert_string_equal (answer_text[20], "disk full");
    pthread_mutex_unlock (&lock);
    blobcache_stats (bc, &st);
    assert_int_equal (st.dirty, 20);            /* put back, not lost */
    assert_int_equal (blobcache_backlog (bc), 20);
    json_t *o = backing_stats (b);
    assert_string_equal (json_string_value (json_object_get (o, "state")), "failing");
    json_decref (o);

    /* space comes back: the next flush gets its own attempt */
    pthread_mutex_lock (&lock);
    fail_store = 0;
    pthread_mutex_unlock (&lock);
    m2 = request ("content.flush", 21, NULL);
    backing_flush_request (b, m2);
    assert_true (run_until (is_answered, (void *)21));
    assert_int_equal (answered[21], 1);
    assert_true (run_until (cache_clean, bc));
    canopy_msg_decref (m1);
    canopy_msg_decref (m2);
    backing_destroy (b);
    blobcache_destroy (bc);
}

static void test_absent (void **state)
{
    blobcache_t *bc = blobcache_create (1 << 20);
    struct backing *b = backing_create (h, bc, "absent", 0, loaded, NULL);
    canopy_msg_t *m;

    add_dirty (bc, 2000, 3);
    m = request ("content.flush", 30, NULL);
    backing_flush_request (b, m);
    assert_true (run_until (is_answered, (void *)30));
    assert_int_equal (answered[30], 1 + ENOSYS);
    assert_false (backing_available (b));
    canopy_msg_decref (m);
    /* afterwards: answered at once, blobs stay dirty (never expire) */
    m = request ("content.checkpoint-get", 31, NULL);
    backing_checkpoint_get (b, m);
    assert_true (run_until (is_answered, (void *)31));
    assert_int_equal (answered[31], 1 + ENOSYS);
    canopy_msg_decref (m);
    struct blobcache_stats st;
    blobcache_stats (bc, &st);
    assert_int_equal (st.dirty, 3);
    errno = 0;
    assert_int_equal (backing_load (b, "sha256-00"), -1);
    assert_int_equal (errno, ENOENT);
    backing_destroy (b);
    blobcache_destroy (bc);
}

static void test_destroy_answers (void **state)
{
    blobcache_t *bc = blobcache_create (1 << 20);
    struct backing *b = backing_create (h, bc, "content-sqlite", 0, loaded, NULL);
    canopy_msg_t *m;

    pthread_mutex_lock (&lock);
    fail_store = ENOSPC;        /* keep the flush waiting on a retry */
    pthread_mutex_unlock (&lock);
    add_dirty (bc, 3000, 2);
    m = request ("content.flush", 40, NULL);
    backing_flush_request (b, m);
    backing_destroy (b);        /* every request handed over is answered */
    assert_true (run_until (is_answered, (void *)40));
    assert_int_equal (answered[40], 1 + ENOSYS);
    canopy_msg_decref (m);
    pthread_mutex_lock (&lock);
    fail_store = 0;
    pthread_mutex_unlock (&lock);
    blobcache_destroy (bc);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_writeback_and_flush),
        cmocka_unit_test (test_enospc),
        cmocka_unit_test (test_absent),
        cmocka_unit_test (test_destroy_answers),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, setup, teardown);
}
