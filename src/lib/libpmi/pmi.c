/* pmi.c - libpmi.so: the PMI-1 C API (canopy/pmi.h) over the simple wire
 * protocol.
 *
 * Design notes:
 * - One process-wide state: uninitialized, a singleton (no PMI_FD or
 *   PMI_PORT: rank 0 of 1, a private key list, barriers are no-ops), or
 *   connected through a simple_client.  PMI-1 is not thread-safe and
 *   neither is this.
 * - Every call validates its arguments before anything reaches the wire,
 *   so a caller cannot inject tokens or lines; error codes follow the
 *   PMI-1 tradition (PMI_ERR_INVALID_*), and failures of the server are
 *   PMI_FAIL.
 * - The clique (tasks on this node) comes from PMI_process_mapping,
 *   fetched once and cached; without it the clique is {self}, which for
 *   OpenMPI means "everyone else is remote".
 * - Only libc: this library is dlopened by OpenMPI (FLUX_PMI_LIBRARY_PATH)
 *   and by canopy's broker; only PMI_* symbols are exported.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <canopy/pmi.h>
#include "src/common/libpmi/simple_client.h"
#include "src/common/libpmi/pmi_mapping.h"
#include "src/common/libpmi/pmi_wire.h"

#define SINGLETON_KVSNAME "singleton_kvs"
#define SINGLETON_KVSNAME_MAX 256
#define SINGLETON_KEYLEN_MAX 64
#define SINGLETON_VALLEN_MAX 1024
#define PORT_NAME_MAX 256           /* MPI_MAX_PORT_NAME */

enum state {
    UNINITIALIZED = 0,
    SINGLETON,
    CONNECTED,
};

struct kv {
    char *key;
    char *val;
    struct kv *next;
};

static enum state state;
static pmi_simple_client_t *client;
static int my_rank, my_size = 1;
static struct kv *singleton_kvs;
static int *clique;
static int clique_size;

static void singleton_clear (void)
{
    while (singleton_kvs) {
        struct kv *kv = singleton_kvs;
        singleton_kvs = kv->next;
        free (kv->key);
        free (kv->val);
        free (kv);
    }
}

static void clique_clear (void)
{
    free (clique);
    clique = NULL;
    clique_size = 0;
}

int PMI_Init (int *spawned)
{
    const char *s;

    if (!spawned)
        return PMI_ERR_INVALID_ARG;
    s = getenv ("PMI_SPAWNED");
    *spawned = s && atoi (s) != 0 ? PMI_TRUE : PMI_FALSE;
    if (state != UNINITIALIZED)
        return PMI_SUCCESS;
    if (!(client = pmi_simple_client_create ())) {
        if (errno != ENOENT)
            return PMI_FAIL;
        my_rank = 0;
        my_size = 1;
        state = SINGLETON;
        return PMI_SUCCESS;
    }
    if (pmi_simple_client_init (client) < 0) {
        pmi_simple_client_destroy (client);
        client = NULL;
        return PMI_FAIL;
    }
    my_rank = pmi_simple_client_rank (client);
    my_size = pmi_simple_client_size (client);
    state = CONNECTED;
    return PMI_SUCCESS;
}

int PMI_Initialized (PMI_BOOL *initialized)
{
    if (!initialized)
        return PMI_ERR_INVALID_ARG;
    *initialized = state != UNINITIALIZED ? PMI_TRUE : PMI_FALSE;
    return PMI_SUCCESS;
}

int PMI_Finalize (void)
{
    int rc = PMI_SUCCESS;

    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    if (state == CONNECTED && pmi_simple_client_finalize (client) < 0)
        rc = PMI_FAIL;
    pmi_simple_client_destroy (client);
    client = NULL;
    singleton_clear ();
    clique_clear ();
    state = UNINITIALIZED;
    return rc;
}

int PMI_Abort (int exit_code, const char error_msg[])
{
    fprintf (stderr, "PMI_Abort(%d): %s\n", exit_code,
             error_msg && *error_msg ? error_msg : "(no message)");
    fflush (stderr);
    if (state == CONNECTED)
        (void)pmi_simple_client_abort (client, exit_code);
    exit (exit_code);
}

int PMI_Get_size (int *size)
{
    if (!size)
        return PMI_ERR_INVALID_ARG;
    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    *size = my_size;
    return PMI_SUCCESS;
}

int PMI_Get_rank (int *rank)
{
    if (!rank)
        return PMI_ERR_INVALID_ARG;
    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    *rank = my_rank;
    return PMI_SUCCESS;
}

int PMI_Get_universe_size (int *size)
{
    if (!size)
        return PMI_ERR_INVALID_ARG;
    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    if (state == SINGLETON) {
        *size = 1;
        return PMI_SUCCESS;
    }
    return pmi_simple_client_get_universe_size (client, size) < 0 ? PMI_FAIL
                                                                  : PMI_SUCCESS;
}

int PMI_Get_appnum (int *appnum)
{
    if (!appnum)
        return PMI_ERR_INVALID_ARG;
    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    if (state == SINGLETON) {
        *appnum = 0;
        return PMI_SUCCESS;
    }
    return pmi_simple_client_get_appnum (client, appnum) < 0 ? PMI_FAIL
                                                             : PMI_SUCCESS;
}

int PMI_Barrier (void)
{
    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    if (state == SINGLETON)
        return PMI_SUCCESS;
    return pmi_simple_client_barrier (client) < 0 ? PMI_FAIL : PMI_SUCCESS;
}

static const char *kvsname (void)
{
    return state == CONNECTED ? pmi_simple_client_kvsname (client) : SINGLETON_KVSNAME;
}

static int kvsname_max (void)
{
    return state == CONNECTED ? pmi_simple_client_kvsname_max (client)
                              : SINGLETON_KVSNAME_MAX;
}

static int keylen_max (void)
{
    return state == CONNECTED ? pmi_simple_client_keylen_max (client)
                              : SINGLETON_KEYLEN_MAX;
}

static int vallen_max (void)
{
    return state == CONNECTED ? pmi_simple_client_vallen_max (client)
                              : SINGLETON_VALLEN_MAX;
}

static int copy_out (char *dst, int length, const char *src)
{
    if (!dst || length <= 0)
        return PMI_ERR_INVALID_ARG;
    if (strlen (src) >= (size_t)length)
        return PMI_ERR_INVALID_LENGTH;
    strcpy (dst, src);
    return PMI_SUCCESS;
}

int PMI_KVS_Get_my_name (char name[], int length)
{
    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    return copy_out (name, length, kvsname ());
}

int PMI_KVS_Get_name_length_max (int *length)
{
    if (!length)
        return PMI_ERR_INVALID_ARG;
    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    *length = kvsname_max ();
    return PMI_SUCCESS;
}

int PMI_KVS_Get_key_length_max (int *length)
{
    if (!length)
        return PMI_ERR_INVALID_ARG;
    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    *length = keylen_max ();
    return PMI_SUCCESS;
}

int PMI_KVS_Get_value_length_max (int *length)
{
    if (!length)
        return PMI_ERR_INVALID_ARG;
    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    *length = vallen_max ();
    return PMI_SUCCESS;
}

int PMI_Get_id_length_max (int *length)
{
    return PMI_KVS_Get_name_length_max (length);
}

int PMI_Get_id (char id_str[], int length)
{
    return PMI_KVS_Get_my_name (id_str, length);
}

int PMI_Get_kvs_domain_id (char id_str[], int length)
{
    return PMI_KVS_Get_my_name (id_str, length);
}

static int check_kvsname (const char *name)
{
    if (!name)
        return PMI_ERR_INVALID_ARG;
    if (strcmp (name, kvsname ()) != 0)
        return PMI_ERR_INVALID_KVS;
    return PMI_SUCCESS;
}

static int check_key (const char *key)
{
    if (!key)
        return PMI_ERR_INVALID_ARG;
    if (!pmi_wire_token_valid (key))
        return PMI_ERR_INVALID_KEY;
    if (strlen (key) >= (size_t)keylen_max ())
        return PMI_ERR_INVALID_KEY_LENGTH;
    return PMI_SUCCESS;
}

static struct kv *singleton_lookup (const char *key)
{
    for (struct kv *kv = singleton_kvs; kv; kv = kv->next) {
        if (!strcmp (kv->key, key))
            return kv;
    }
    return NULL;
}

static int singleton_put (const char *key, const char *value)
{
    struct kv *kv = singleton_lookup (key);
    char *v = strdup (value);

    if (!v)
        return PMI_ERR_NOMEM;
    if (kv) {
        free (kv->val);
        kv->val = v;
        return PMI_SUCCESS;
    }
    if (!(kv = calloc (1, sizeof (*kv))) || !(kv->key = strdup (key))) {
        free (kv);
        free (v);
        return PMI_ERR_NOMEM;
    }
    kv->val = v;
    kv->next = singleton_kvs;
    singleton_kvs = kv;
    return PMI_SUCCESS;
}

int PMI_KVS_Put (const char name[], const char key[], const char value[])
{
    int rc;

    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    if ((rc = check_kvsname (name)) != PMI_SUCCESS || (rc = check_key (key)) != PMI_SUCCESS)
        return rc;
    if (!value)
        return PMI_ERR_INVALID_ARG;
    if (!pmi_wire_value_valid (value))
        return PMI_ERR_INVALID_VAL;
    if (strlen (value) >= (size_t)vallen_max ())
        return PMI_ERR_INVALID_VAL_LENGTH;
    if (state == SINGLETON)
        return singleton_put (key, value);
    return pmi_simple_client_put (client, name, key, value) < 0 ? PMI_FAIL : PMI_SUCCESS;
}

int PMI_KVS_Commit (const char name[])
{
    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    /* puts are sent as they are made: nothing to do */
    return check_kvsname (name);
}

int PMI_KVS_Get (const char name[], const char key[], char value[], int length)
{
    int rc;

    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    if ((rc = check_kvsname (name)) != PMI_SUCCESS || (rc = check_key (key)) != PMI_SUCCESS)
        return rc;
    if (!value || length <= 0)
        return PMI_ERR_INVALID_ARG;
    if (state == SINGLETON) {
        struct kv *kv = singleton_lookup (key);
        return kv ? copy_out (value, length, kv->val) : PMI_FAIL;
    }
    if (pmi_simple_client_get (client, name, key, value, length) < 0)
        return errno == EOVERFLOW ? PMI_ERR_INVALID_LENGTH : PMI_FAIL;
    return PMI_SUCCESS;
}

/* Fill the clique cache from PMI_process_mapping (or {self}). */
static int clique_load (void)
{
    char *mapping;
    int n = -1;

    if (clique)
        return PMI_SUCCESS;
    if (state == CONNECTED && (mapping = malloc (PMI_WIRE_LINE_MAX))) {
        if (pmi_simple_client_get (client, NULL, "PMI_process_mapping",
                                   mapping, PMI_WIRE_LINE_MAX) == 0
            && (n = pmi_mapping_clique (mapping, my_rank, NULL, 0)) > 0) {
            if (!(clique = calloc (n, sizeof (int)))
                || pmi_mapping_clique (mapping, my_rank, clique, n) != n) {
                free (clique);
                clique = NULL;
                n = -1;
            }
        }
        free (mapping);
    }
    if (!clique) {
        if (!(clique = calloc (1, sizeof (int))))
            return PMI_ERR_NOMEM;
        clique[0] = my_rank;
        n = 1;
    }
    clique_size = n;
    return PMI_SUCCESS;
}

int PMI_Get_clique_size (int *size)
{
    int rc;

    if (!size)
        return PMI_ERR_INVALID_ARG;
    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    if ((rc = clique_load ()) != PMI_SUCCESS)
        return rc;
    *size = clique_size;
    return PMI_SUCCESS;
}

int PMI_Get_clique_ranks (int ranks[], int length)
{
    int rc;

    if (!ranks || length < 1)
        return PMI_ERR_INVALID_ARG;
    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    if ((rc = clique_load ()) != PMI_SUCCESS)
        return rc;
    for (int i = 0; i < length && i < clique_size; i++)
        ranks[i] = clique[i];
    return PMI_SUCCESS;
}

int PMI_KVS_Create (char name[], int length)
{
    return state == UNINITIALIZED ? PMI_ERR_INIT : PMI_FAIL;
}

int PMI_KVS_Destroy (const char name[])
{
    return state == UNINITIALIZED ? PMI_ERR_INIT : PMI_FAIL;
}

int PMI_KVS_Iter_first (const char name[], char key[], int key_len,
                        char val[], int val_len)
{
    if (key && key_len > 0)
        key[0] = '\0';
    if (val && val_len > 0)
        val[0] = '\0';
    return state == UNINITIALIZED ? PMI_ERR_INIT : PMI_FAIL;
}

int PMI_KVS_Iter_next (const char name[], char key[], int key_len,
                       char val[], int val_len)
{
    return PMI_KVS_Iter_first (name, key, key_len, val, val_len);
}

/* Ask the server; succeed only on rc=0 (and info=ok when info is sent). */
static int name_service (const char *request, const char *expect,
                         struct pmi_wire_msg *rsp)
{
    const char *info;
    int rc;

    if (state == UNINITIALIZED)
        return PMI_ERR_INIT;
    if (state == SINGLETON)
        return PMI_FAIL;
    if (pmi_simple_client_rpc (client, request, expect, rsp) < 0
        || pmi_wire_get_int (rsp, "rc", &rc) < 0 || rc != 0)
        return PMI_FAIL;
    if ((info = pmi_wire_get (rsp, "info")) && strcmp (info, "ok") != 0)
        return PMI_FAIL;
    return PMI_SUCCESS;
}

int PMI_Publish_name (const char service_name[], const char port[])
{
    struct pmi_wire_msg rsp;
    char req[PMI_WIRE_LINE_MAX];

    if (!pmi_wire_token_valid (service_name) || !pmi_wire_token_valid (port))
        return PMI_ERR_INVALID_ARG;
    if (snprintf (req, sizeof (req), "cmd=publish_name service=%s port=%s",
                  service_name, port) >= (int)sizeof (req))
        return PMI_ERR_INVALID_ARG;
    return name_service (req, "publish_result", &rsp);
}

int PMI_Unpublish_name (const char service_name[])
{
    struct pmi_wire_msg rsp;
    char req[PMI_WIRE_LINE_MAX];

    if (!pmi_wire_token_valid (service_name))
        return PMI_ERR_INVALID_ARG;
    if (snprintf (req, sizeof (req), "cmd=unpublish_name service=%s",
                  service_name) >= (int)sizeof (req))
        return PMI_ERR_INVALID_ARG;
    return name_service (req, "unpublish_result", &rsp);
}

int PMI_Lookup_name (const char service_name[], char port[])
{
    struct pmi_wire_msg rsp;
    char req[PMI_WIRE_LINE_MAX];
    const char *p;
    int rc;

    if (!pmi_wire_token_valid (service_name) || !port)
        return PMI_ERR_INVALID_ARG;
    if (snprintf (req, sizeof (req), "cmd=lookup_name service=%s",
                  service_name) >= (int)sizeof (req))
        return PMI_ERR_INVALID_ARG;
    if ((rc = name_service (req, "lookup_result", &rsp)) != PMI_SUCCESS)
        return rc;
    if (!(p = pmi_wire_get (&rsp, "port")))
        return PMI_FAIL;
    return copy_out (port, PORT_NAME_MAX, p);
}

int PMI_Spawn_multiple (int count,
                        const char *cmds[],
                        const char **argvs[],
                        const int maxprocs[],
                        const int info_keyval_sizes[],
                        const PMI_keyval_t *info_keyval_vectors[],
                        int preput_keyval_size,
                        const PMI_keyval_t preput_keyval_vector[],
                        int errors[])
{
    return state == UNINITIALIZED ? PMI_ERR_INIT : PMI_FAIL;
}

int PMI_Parse_option (int num_args, char *args[], int *num_parsed,
                      PMI_keyval_t **keyvalp, int *size)
{
    if (num_args < 1)
        return PMI_ERR_INVALID_NUM_ARGS;
    if (!args)
        return PMI_ERR_INVALID_ARGS;
    if (!num_parsed)
        return PMI_ERR_INVALID_NUM_PARSED;
    if (!keyvalp)
        return PMI_ERR_INVALID_KEYVALP;
    if (!size)
        return PMI_ERR_INVALID_SIZE;
    *num_parsed = 0;
    *keyvalp = NULL;
    *size = 0;
    return PMI_SUCCESS;
}

int PMI_Args_to_keyval (int *argcp, char *((*argvp)[]),
                        PMI_keyval_t **keyvalp, int *size)
{
    if (!argcp || !argvp || !keyvalp || !size)
        return PMI_ERR_INVALID_ARG;
    *keyvalp = NULL;
    *size = 0;
    return PMI_SUCCESS;
}

int PMI_Free_keyvals (PMI_keyval_t keyvalp[], int size)
{
    if (size < 0 || (size > 0 && !keyvalp))
        return PMI_ERR_INVALID_ARG;
    return PMI_SUCCESS;     /* this library never allocates keyvals */
}

int PMI_Get_options (char *str, int *length)
{
    if (!str || !length || *length < 1)
        return PMI_ERR_INVALID_ARG;
    str[0] = '\0';
    *length = 0;
    return PMI_SUCCESS;
}
