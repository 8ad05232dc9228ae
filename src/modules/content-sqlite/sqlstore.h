/* sqlstore.h - rank 0's durable blob store: SQLite files in a state
 * directory (our thin wrapper over SQLite, house rule 7).
 *
 * Layout of DIR:
 *   content.sqlite        meta (format, shard count, store id), the
 *                         checkpoints, and - with one shard - the blobs
 *   content-NN.sqlite     with S > 1 shards: the blobs whose SHA-256
 *                         starts with the bits of NN (hex); each file may
 *                         be capped in size (the KFS idea: bounded
 *                         per-file maintenance, corruption isolated)
 * Every file holds the store id; a file from another store is refused.
 *
 * Blobs are keyed by their 32-byte digest; the caller vouches for it (the
 * full check recomputes it).  Blobs of at least compress_threshold bytes
 * are LZ4-compressed when that saves space.
 *
 * Durability: journal_mode=WAL, locking_mode=EXCLUSIVE (a second process
 * cannot open the store), synchronous=NORMAL.  sqlstore_put commits
 * without fsync: a crash of the process loses nothing committed, a power
 * loss may roll back recent commits.  sqlstore_sync makes everything
 * committed so far durable (one fsync of each file written since the last
 * sync).  sqlstore_checkpoint_put syncs the blob files first, then writes
 * the checkpoint durably, so a checkpoint never names blobs that a power
 * loss could take away.  A VOLATILE store (a temporary state directory)
 * never fsyncs.
 *
 * Errors: -1 with errno and text in 'error' (if non-NULL): ENOENT (no
 * such store or blob), ENOSPC (disk full, or a shard reached its cap),
 * EBUSY (another process has the store open), EIO (corrupt file, failed
 * check, I/O error), EINVAL (bad configuration, or a file of another
 * store/format), EFBIG, ENOMEM, EROFS, EACCES.
 *
 * Threads: a store is used by one thread.
 */
#ifndef CANOPY_CONTENT_SQLITE_SQLSTORE_H
#define CANOPY_CONTENT_SQLITE_SQLSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <canopy/types.h>
#include "src/common/libutil/blobref.h"

typedef struct sqlstore sqlstore_t;

enum sqlstore_durability {
    SQLSTORE_DURABLE = 0,   /* fsync on sync and checkpoint */
    SQLSTORE_VOLATILE = 1,  /* never fsync (throwaway store) */
};

enum sqlstore_check {
    SQLSTORE_CHECK_NONE = 0,
    SQLSTORE_CHECK_QUICK = 1,   /* PRAGMA quick_check of every file */
    SQLSTORE_CHECK_FULL = 2,    /* quick_check, then every blob is read,
                                 * expanded and its hash compared */
};

struct sqlstore_config {
    const char *dir;            /* created if missing (one level) */
    int shards;                 /* for a new store: 1..256, a power of 2 */
    int64_t shard_max_bytes;    /* cap per blob file; 0 = none */
    size_t compress_threshold;  /* 0 = never compress */
    int keep_checkpoints;       /* newest N kept (>= 1) */
    enum sqlstore_durability durability;
    bool must_exist;            /* ENOENT rather than create */
};

struct sqlstore_blob {
    const uint8_t *digest;      /* BLOBREF_HASHLEN bytes */
    const void *data;
    size_t len;
};

struct sqlstore_checkpoint {
    int64_t seq;                /* order of writing (newest is largest) */
    char rootref[BLOBREF_MAX];  /* as stored: the caller validates it */
    int version;
    double timestamp;
};

struct sqlstore_check_result {
    int64_t blobs;              /* blobs read back (full check) */
    int64_t bytes;              /* their expanded size */
    double seconds;
};

struct sqlstore_stats {
    int shards;
    int64_t blobs;              /* -1 if not counted yet */
    int64_t raw_bytes;          /* expanded size of all blobs */
    int64_t stored_bytes;       /* as stored (after compression) */
    int64_t file_bytes;         /* size of the files on disk, WAL included */
    int64_t puts;               /* blobs written by this process */
    int64_t put_bytes;
    int64_t compressed;         /* of those, stored compressed */
    int64_t syncs;              /* durable syncs performed */
    int64_t checkpoints;        /* checkpoints written by this process */
};

/* Open or create the store in cfg->dir.  A new store takes its shard count
 * from cfg; an existing one keeps its own (sqlstore_shards tells).
 */
sqlstore_t *sqlstore_open (const struct sqlstore_config *cfg, canopy_error_t *error);
/* Close (committed data stays; destroy accepts NULL, keeps errno). */
void sqlstore_close (sqlstore_t *st);
int sqlstore_shards (sqlstore_t *st);
/* True if sqlstore_open created the store. */
bool sqlstore_is_new (sqlstore_t *st);
/* Which shard a digest belongs to. */
int sqlstore_shard_of (sqlstore_t *st, const uint8_t *digest);

int sqlstore_check (sqlstore_t *st, enum sqlstore_check level,
                    struct sqlstore_check_result *res, canopy_error_t *error);

/* Store n blobs (one transaction per shard touched).  *added (optional)
 * counts the ones that were new.  On failure nothing of the failing
 * shard's transaction is kept; other shards' blobs may be (retrying is
 * harmless: blobs are immutable).
 */
int sqlstore_put (sqlstore_t *st, const struct sqlstore_blob *v, int n, int *added,
                  canopy_error_t *error);
/* A blob's bytes (malloc'd, NUL-terminated beyond len).  ENOENT if absent. */
int sqlstore_get (sqlstore_t *st, const uint8_t *digest, void **data, size_t *len,
                  canopy_error_t *error);
/* Remove n blobs (digests: n * BLOBREF_HASHLEN bytes), one transaction
 * per shard touched.  *deleted (optional) counts those that were there.
 * For offline garbage collection and benchmarks: the content service
 * never deletes.
 */
int sqlstore_delete (sqlstore_t *st, const uint8_t *digests, int n, int *deleted,
                     canopy_error_t *error);

int sqlstore_sync (sqlstore_t *st, canopy_error_t *error);
int sqlstore_checkpoint_put (sqlstore_t *st, const char *rootref, int version,
                             double timestamp, canopy_error_t *error);
/* Checkpoints, newest first (*v malloc'd; *n may be 0). */
int sqlstore_checkpoint_list (sqlstore_t *st, struct sqlstore_checkpoint **v, int *n,
                              canopy_error_t *error);

/* Counters; the first call counts the blobs of an existing store (a scan
 * of the hash index).
 */
int sqlstore_stats (sqlstore_t *st, struct sqlstore_stats *stats, canopy_error_t *error);

/* Remove a store's files from dir (for temporary stores, after close). */
void sqlstore_remove_files (const char *dir);

#endif
