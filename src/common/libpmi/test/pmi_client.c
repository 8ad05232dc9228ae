/* test/pmi_client.c - unit tests for pmi_client.c: choice of
 * implementation from the environment, and both implementations behind
 * the one interface.
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
#include "src/common/libpmi/pmi_client.h"
#include "fakeserver.h"

static void clear_env (void)
{
    unsetenv ("CANOPY_PMI_LIBRARY");
    unsetenv ("PMI_FD");
    unsetenv ("PMI_PORT");
    unsetenv ("PMI_ID");
    unsetenv ("PMI_RANK");
    unsetenv ("PMI_SIZE");
}

static void test_no_pmi (void **state)
{
    canopy_error_t error;

    clear_env ();
    assert_false (pmi_client_available ());
    setenv ("PMI_FD", "", 1);
    assert_false (pmi_client_available ());
    assert_null (pmi_client_create (&error));
    assert_int_equal (errno, ENOENT);
    assert_non_null (strstr (error.text, "no PMI in the environment"));
    setenv ("PMI_PORT", "x", 1);
    assert_true (pmi_client_available ());
    clear_env ();
    setenv ("CANOPY_PMI_LIBRARY", "/nonexistent.so", 1);
    assert_true (pmi_client_available ());
    assert_null (pmi_client_create (&error));
    assert_non_null (strstr (error.text, "cannot load PMI library"));
    clear_env ();
    /* NULL is safe everywhere */
    pmi_client_destroy (NULL);
    assert_int_equal (pmi_client_rank (NULL), -1);
    assert_int_equal (errno, EINVAL);
    assert_null (pmi_client_method (NULL));
    assert_int_equal (pmi_client_clique (NULL, NULL, 0), -1);
}

static void test_dlopen (void **state)
{
    canopy_error_t error;
    pmi_client_t *c;
    char buf[32];
    int ranks[4];

    clear_env ();
    setenv ("CANOPY_PMI_LIBRARY", FAKEPMI_PATH, 1);
    setenv ("PMI_FD", "999", 1);    /* the library wins */
    assert_non_null ((c = pmi_client_create (&error)));
    assert_string_equal (pmi_client_method (c), "dlopen");
    assert_int_equal (pmi_client_rank (c), 1);
    assert_int_equal (pmi_client_size (c), 4);
    assert_int_equal (pmi_client_put (c, "a", "b"), 0);
    assert_int_equal (pmi_client_commit (c), 0);
    assert_int_equal (pmi_client_barrier (c), 0);
    assert_int_equal (pmi_client_get (c, "a", buf, sizeof (buf)), 0);
    assert_string_equal (buf, "b");
    assert_int_equal (pmi_client_get (c, "zz", buf, sizeof (buf)), -1);
    assert_int_equal (errno, ENOENT);
    assert_int_equal (pmi_client_clique (c, ranks, 4), 2);
    assert_int_equal (ranks[1], 3);
    assert_int_equal (pmi_client_finalize (c), 0);
    pmi_client_destroy (c);
    clear_env ();
}

struct task {
    int fd;
    int rank;
    int errors;
};

#define CHECK(t, cond) do { if (!(cond)) { \
    fprintf (stderr, "rank %d: line %d: %s\n", (t)->rank, __LINE__, #cond); \
    (t)->errors++; } } while (0)

/* The environment is process-wide: tasks are created one at a time under
 * a lock, then run in parallel.
 */
static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;

static void *task_main (void *arg)
{
    struct task *t = arg;
    canopy_error_t error;
    pmi_client_t *c;
    char buf[64], key[32];
    int ranks[8];

    pthread_mutex_lock (&env_lock);
    snprintf (buf, sizeof (buf), "%d", t->fd);
    setenv ("PMI_FD", buf, 1);
    snprintf (buf, sizeof (buf), "%d", t->rank);
    setenv ("PMI_RANK", buf, 1);
    setenv ("PMI_SIZE", "3", 1);
    c = pmi_client_create (&error);
    pthread_mutex_unlock (&env_lock);

    CHECK (t, c != NULL);
    if (!c)
        return NULL;
    CHECK (t, !strcmp (pmi_client_method (c), "simple"));
    CHECK (t, pmi_client_rank (c) == t->rank);
    CHECK (t, pmi_client_size (c) == 3);
    snprintf (key, sizeof (key), "canopy.%d.uri", t->rank);
    snprintf (buf, sizeof (buf), "tcp://127.0.0.1:%d", 5000 + t->rank);
    CHECK (t, pmi_client_put (c, key, buf) == 0);
    CHECK (t, pmi_client_commit (c) == 0);
    CHECK (t, pmi_client_barrier (c) == 0);
    for (int r = 0; r < 3; r++) {
        char expect[64];
        snprintf (key, sizeof (key), "canopy.%d.uri", r);
        snprintf (expect, sizeof (expect), "tcp://127.0.0.1:%d", 5000 + r);
        CHECK (t, pmi_client_get (c, key, buf, sizeof (buf)) == 0);
        CHECK (t, !strcmp (buf, expect));
    }
    /* the mapping says ranks 0,1 on node 0 and rank 2 on node 1 */
    int n = pmi_client_clique (c, ranks, 8);
    if (t->rank < 2)
        CHECK (t, n == 2 && ranks[0] == 0 && ranks[1] == 1);
    else
        CHECK (t, n == 1 && ranks[0] == 2);
    CHECK (t, pmi_client_finalize (c) == 0);
    pmi_client_destroy (c);
    return NULL;
}

static void test_simple (void **state)
{
    int fds[3];
    pthread_t tid[3];
    struct task tasks[3];
    struct fakeserver *fs = fakeserver_start (3, "(vector,(0,1,2),(1,1,1))", fds);

    clear_env ();
    for (int i = 0; i < 3; i++) {
        tasks[i] = (struct task){ .fd = fds[i], .rank = i };
        assert_int_equal (pthread_create (&tid[i], NULL, task_main, &tasks[i]), 0);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join (tid[i], NULL);
        assert_int_equal (tasks[i].errors, 0);
    }
    fakeserver_stop (fs, false);
    assert_int_equal (fakeserver_finalized (fs), 3);
    fakeserver_destroy (fs);
    clear_env ();
}

/* Without PMI_process_mapping the clique is {self}. */
static void test_clique_fallback (void **state)
{
    int fd;
    canopy_error_t error;
    pmi_client_t *c;
    char buf[16];
    int ranks[4] = { -1, -1, -1, -1 };
    struct fakeserver *fs = fakeserver_start (1, NULL, &fd);

    clear_env ();
    snprintf (buf, sizeof (buf), "%d", fd);
    setenv ("PMI_FD", buf, 1);
    assert_non_null ((c = pmi_client_create (&error)));
    assert_int_equal (pmi_client_clique (c, ranks, 4), 1);
    assert_int_equal (ranks[0], 0);
    assert_int_equal (pmi_client_abort (c, 5, "test abort"), 0);
    pmi_client_destroy (c);
    fakeserver_stop (fs, false);
    assert_int_equal (fakeserver_abort_code (fs), 5);
    fakeserver_destroy (fs);
    clear_env ();
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_no_pmi),
        cmocka_unit_test (test_dlopen),
        cmocka_unit_test (test_simple),
        cmocka_unit_test (test_clique_fallback),
    };
    cmocka_set_message_output (CM_OUTPUT_TAP);
    return cmocka_run_group_tests (tests, NULL, NULL);
}
