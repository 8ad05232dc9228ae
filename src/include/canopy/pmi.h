/* canopy/pmi.h - the PMI-1 C API, as provided by canopy's libpmi.so.
 *
 * Process Management Interface, version 1: how the tasks of a parallel
 * job learn their rank and size and exchange small key-value pairs
 * (put, commit, barrier, then get) through the launcher.  canopy's
 * libpmi.so implements it over the PMI-1 "simple" wire protocol, talking
 * to the server named by PMI_FD (or PMI_PORT, with PMI_ID) in the
 * environment; without either, a process runs as a singleton (rank 0 of
 * 1, with a private key-value store).  See libpmi(3).
 *
 * The library depends on libc only and is meant to be dlopened as well as
 * linked: OpenMPI loads it through FLUX_PMI_LIBRARY_PATH.  It is not
 * thread-safe (PMI-1 never was): serialize calls.
 *
 * Every function returns PMI_SUCCESS or an error code below.  Visibility:
 * a value put by one task is guaranteed visible to the others only after
 * PMI_KVS_Commit and a PMI_Barrier that every task entered.  A get of a
 * key that does not exist fails at once (PMI_FAIL); it never waits.
 *
 * Not supported (they return PMI_FAIL): name publishing, spawning, KVS
 * creation/destruction and iteration.
 */
#ifndef CANOPY_PMI_H
#define CANOPY_PMI_H

#ifdef __cplusplus
extern "C" {
#endif

#define PMI_SUCCESS                 0
#define PMI_FAIL                   -1
#define PMI_ERR_INIT                1
#define PMI_ERR_NOMEM               2
#define PMI_ERR_INVALID_ARG         3
#define PMI_ERR_INVALID_KEY         4
#define PMI_ERR_INVALID_KEY_LENGTH  5
#define PMI_ERR_INVALID_VAL         6
#define PMI_ERR_INVALID_VAL_LENGTH  7
#define PMI_ERR_INVALID_LENGTH      8
#define PMI_ERR_INVALID_NUM_ARGS    9
#define PMI_ERR_INVALID_ARGS       10
#define PMI_ERR_INVALID_NUM_PARSED 11
#define PMI_ERR_INVALID_KEYVALP    12
#define PMI_ERR_INVALID_SIZE       13
#define PMI_ERR_INVALID_KVS        14

typedef int PMI_BOOL;
#define PMI_TRUE  1
#define PMI_FALSE 0

typedef struct PMI_keyval_t {
    const char *key;
    char *val;
} PMI_keyval_t;

/* Start-up and shut-down */
int PMI_Init (int *spawned);
int PMI_Initialized (PMI_BOOL *initialized);
int PMI_Finalize (void);
/* Ask the launcher to end the whole job with exit_code; prints error_msg
 * on stderr and exits the calling process.  Does not return.
 */
int PMI_Abort (int exit_code, const char error_msg[]);

/* The job */
int PMI_Get_size (int *size);
int PMI_Get_rank (int *rank);
int PMI_Get_universe_size (int *size);
int PMI_Get_appnum (int *appnum);
int PMI_Barrier (void);
/* The tasks on this node, from PMI_process_mapping ({self} without it).
 * PMI_Get_clique_ranks fills min(length, clique size) entries.
 */
int PMI_Get_clique_size (int *size);
int PMI_Get_clique_ranks (int ranks[], int length);
int PMI_Get_id (char id_str[], int length);
int PMI_Get_kvs_domain_id (char id_str[], int length);
int PMI_Get_id_length_max (int *length);

/* The job's key-value space.  Name, key and value lengths include the
 * terminating NUL: a key must be shorter than the key length maximum.
 * Keys may not contain spaces or '='; values may not contain newlines.
 */
int PMI_KVS_Get_my_name (char kvsname[], int length);
int PMI_KVS_Get_name_length_max (int *length);
int PMI_KVS_Get_key_length_max (int *length);
int PMI_KVS_Get_value_length_max (int *length);
int PMI_KVS_Put (const char kvsname[], const char key[], const char value[]);
int PMI_KVS_Commit (const char kvsname[]);
int PMI_KVS_Get (const char kvsname[], const char key[], char value[], int length);
int PMI_KVS_Create (char kvsname[], int length);
int PMI_KVS_Destroy (const char kvsname[]);
int PMI_KVS_Iter_first (const char kvsname[], char key[], int key_len,
                        char val[], int val_len);
int PMI_KVS_Iter_next (const char kvsname[], char key[], int key_len,
                       char val[], int val_len);

/* Name publishing (not supported: PMI_FAIL) */
int PMI_Publish_name (const char service_name[], const char port[]);
int PMI_Unpublish_name (const char service_name[]);
int PMI_Lookup_name (const char service_name[], char port[]);

/* Process creation (not supported: PMI_FAIL) */
int PMI_Spawn_multiple (int count,
                        const char *cmds[],
                        const char **argvs[],
                        const int maxprocs[],
                        const int info_keyval_sizes[],
                        const PMI_keyval_t *info_keyval_vectors[],
                        int preput_keyval_size,
                        const PMI_keyval_t preput_keyval_vector[],
                        int errors[]);

/* Option helpers of the original API: no options are recognized. */
int PMI_Parse_option (int num_args, char *args[], int *num_parsed,
                      PMI_keyval_t **keyvalp, int *size);
int PMI_Args_to_keyval (int *argcp, char *((*argvp)[]),
                        PMI_keyval_t **keyvalp, int *size);
int PMI_Free_keyvals (PMI_keyval_t keyvalp[], int size);
int PMI_Get_options (char *str, int *length);

#ifdef __cplusplus
}
#endif
#endif
