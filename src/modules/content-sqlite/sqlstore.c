/* sqlstore.c - see sqlstore.h.
 *
 * Design notes:
 * - Schema (every file): meta(key TEXT PRIMARY KEY, value) with "format",
 *   "store-id", "shards", "shard" (index of a shard file; -1 for the main
 *   file, which holds the blobs itself when there is one shard) and "syncs" (bumped by sqlstore_sync).  Blob files:
 *   objects(hash BLOB PRIMARY KEY, size INTEGER, data BLOB) - a rowid
 *   table, since rows are often large (64 KiB chunks).  Main file:
 *   checkpoints(seq INTEGER PRIMARY KEY AUTOINCREMENT, rootref, version,
 *   timestamp).
 * - A new sharded store writes its shard files first and the main file's
 *   meta last, so a store whose creation was interrupted is recreated,
 *   not half-opened.  An existing store opens its files without
 *   SQLITE_OPEN_CREATE: a missing shard file is an error, not a silently
 *   empty shard.
 * - Durable sync in WAL mode: with synchronous=FULL a commit fsyncs the
 *   WAL, which covers every earlier commit in it; so a sync is a tiny
 *   commit (meta "syncs" + 1) made under FULL on each file written since
 *   the last sync.  The checkpoint commit itself is made under FULL.
 * - Each file is opened with locking_mode=EXCLUSIVE and an empty
 *   BEGIN EXCLUSIVE transaction, which takes the lock for the life of the
 *   connection: another process gets EBUSY.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include <sodium.h>
#include "src/common/libutil/errprintf.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/sha256.h"
#include "blobcodec.h"
#include "sqlstore.h"

#define STORE_FORMAT 1
#define MAIN_NAME "content.sqlite"
#define CACHE_BUDGET_KIB 32768

struct dbfile {
    sqlite3 *db;
    char *path;
    bool blobs;                 /* holds the objects table */
    bool unsynced;              /* committed since the last durable sync */
    bool capped;                /* max_page_count set */
    sqlite3_stmt *ins;
    sqlite3_stmt *get;
    sqlite3_stmt *del;
};

struct sqlstore {
    char *dir;
    struct sqlstore_config cfg;
    bool is_new;
    int nshards;
    int bits;                   /* log2 (nshards) */
    struct dbfile main;
    struct dbfile *shard;       /* nshards files, or NULL: blobs in main */
    char store_id[33];
    sqlite3_stmt *ck_ins;
    sqlite3_stmt *ck_trim;
    sqlite3_stmt *ck_list;
    bool counted;
    struct sqlstore_stats stats;
};

/* errno for an SQLite failure on db (its extended code and system errno). */
static int map_error (sqlite3 *db, int rc)
{
    int sys = db ? sqlite3_system_errno (db) : 0;
    switch (rc & 0xff) {
        case SQLITE_FULL:
            return ENOSPC;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
            return EBUSY;
        case SQLITE_NOMEM:
            return ENOMEM;
        case SQLITE_TOOBIG:
            return EFBIG;
        case SQLITE_READONLY:
            return EROFS;
        case SQLITE_PERM:
        case SQLITE_AUTH:
            return EACCES;
        case SQLITE_CANTOPEN:
            return sys ? sys : ENOENT;
        case SQLITE_IOERR:
            return sys == ENOSPC || sys == EDQUOT ? ENOSPC : sys ? sys : EIO;
        case SQLITE_CORRUPT:
        case SQLITE_NOTADB:
            return EIO;
        default:
            return EIO;
    }
}

static const char *base (const char *path)
{
    const char *p = strrchr (path, '/');
    return p ? p + 1 : path;
}

/* Record an SQLite failure: errno set, text "FILE: message", returns -1. */
static int dberr (struct dbfile *f, int rc, canopy_error_t *error, const char *what)
{
    int errnum = map_error (f->db, rc);
    const char *msg = f->db ? sqlite3_errmsg (f->db) : sqlite3_errstr (rc);
    if (errnum == ENOSPC)
        msg = f->capped ? "the file reached its size cap, or the disk is full"
                        : "No space left on device (database or disk is full)";
    errprintf (error, "%s: %s: %s", base (f->path), what, msg);
    errno = errnum;
    return -1;
}

static int exec (struct dbfile *f, const char *sql, canopy_error_t *error)
{
    int rc = sqlite3_exec (f->db, sql, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return dberr (f, rc, error, sql);
    return 0;
}

static int prepare (struct dbfile *f, const char *sql, sqlite3_stmt **stmt,
                    canopy_error_t *error)
{
    int rc = sqlite3_prepare_v2 (f->db, sql, -1, stmt, NULL);
    if (rc != SQLITE_OK)
        return dberr (f, rc, error, "prepare");
    return 0;
}

static void dbfile_close (struct dbfile *f)
{
    sqlite3_finalize (f->ins);
    sqlite3_finalize (f->get);
    sqlite3_finalize (f->del);
    f->ins = f->get = f->del = NULL;
    if (f->db)
        sqlite3_close (f->db);
    f->db = NULL;
    free (f->path);
    f->path = NULL;
}

static bool file_exists (const char *path)
{
    struct stat sb;
    return stat (path, &sb) == 0;
}

/* Open one file with our pragmas and take its exclusive lock. */
static int dbfile_open (struct sqlstore *st, struct dbfile *f, const char *name,
                        bool create, canopy_error_t *error)
{
    char sql[128];
    int rc;
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
                | (create ? SQLITE_OPEN_CREATE : 0);
    int cache_kib = CACHE_BUDGET_KIB / (st->nshards > 0 ? st->nshards : 1);

    if (asprintf (&f->path, "%s/%s", st->dir, name) < 0) {
        f->path = NULL;
        errno = ENOMEM;
        return errprintf (error, "out of memory");
    }
    if (!create && !file_exists (f->path)) {
        errno = ENOENT;
        return errprintf (error, "%s is missing", f->path);
    }
    if ((rc = sqlite3_open_v2 (f->path, &f->db, flags, NULL)) != SQLITE_OK)
        goto fail;
    sqlite3_extended_result_codes (f->db, 1);
    if (cache_kib < 2048)
        cache_kib = 2048;
    snprintf (sql, sizeof (sql), "PRAGMA cache_size=-%d", cache_kib);
    if ((rc = sqlite3_exec (f->db, "PRAGMA locking_mode=EXCLUSIVE", NULL, NULL,
                            NULL)) != SQLITE_OK
        || (rc = sqlite3_exec (f->db, sql, NULL, NULL, NULL)) != SQLITE_OK
        /* the first real access: a garbage file fails here */
        || (rc = sqlite3_exec (f->db, "PRAGMA journal_mode=WAL", NULL, NULL,
                               NULL)) != SQLITE_OK
        || (rc = sqlite3_exec (f->db, st->cfg.durability == SQLSTORE_VOLATILE
                               ? "PRAGMA synchronous=OFF" : "PRAGMA synchronous=NORMAL",
                               NULL, NULL, NULL)) != SQLITE_OK
        || (rc = sqlite3_exec (f->db, "BEGIN EXCLUSIVE; COMMIT", NULL, NULL,
                               NULL)) != SQLITE_OK)
        goto fail;
    return 0;
fail:
    if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED) {
        errno = EBUSY;
        return errprintf (error, "%s is in use by another process", f->path);
    }
    return dberr (f, rc, error, "open");
}

static int dbfile_set_cap (struct sqlstore *st, struct dbfile *f, canopy_error_t *error)
{
    char sql[96];
    sqlite3_stmt *s;
    int64_t page = 4096;

    if (st->cfg.shard_max_bytes <= 0)
        return 0;
    if (prepare (f, "PRAGMA page_size", &s, error) < 0)
        return -1;
    if (sqlite3_step (s) == SQLITE_ROW)
        page = sqlite3_column_int64 (s, 0);
    sqlite3_finalize (s);
    int64_t pages = st->cfg.shard_max_bytes / (page > 0 ? page : 4096);
    if (pages < 8)
        pages = 8;
    snprintf (sql, sizeof (sql), "PRAGMA max_page_count=%lld", (long long)pages);
    if (exec (f, sql, error) < 0)
        return -1;
    f->capped = true;
    return 0;
}

static int meta_set (struct dbfile *f, const char *key, const char *val,
                     canopy_error_t *error)
{
    sqlite3_stmt *s;
    int rc;
    if (prepare (f, "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                 &s, error) < 0)
        return -1;
    sqlite3_bind_text (s, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text (s, 2, val, -1, SQLITE_STATIC);
    rc = sqlite3_step (s);
    sqlite3_finalize (s);
    if (rc != SQLITE_DONE)
        return dberr (f, rc, error, "write meta");
    return 0;
}

/* The meta value for key (malloc'd), or NULL with ENOENT/EIO. */
static char *meta_get (struct dbfile *f, const char *key, canopy_error_t *error)
{
    sqlite3_stmt *s;
    char *val = NULL;
    int rc;
    if (prepare (f, "SELECT value FROM meta WHERE key = ?1", &s, error) < 0)
        return NULL;
    sqlite3_bind_text (s, 1, key, -1, SQLITE_STATIC);
    rc = sqlite3_step (s);
    if (rc == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text (s, 0);
        if (!(val = strdup (t ? (const char *)t : ""))) {
            sqlite3_finalize (s);
            errno = ENOMEM;
            return NULL;
        }
    }
    else if (rc == SQLITE_DONE) {
        errprintf (error, "%s: no '%s' in its meta table", base (f->path), key);
        errno = EINVAL;
    }
    else
        dberr (f, rc, error, "read meta");
    sqlite3_finalize (s);
    return val;
}

static int meta_get_int (struct dbfile *f, const char *key, long *out,
                         canopy_error_t *error)
{
    char *v = meta_get (f, key, error);
    char *end;
    if (!v)
        return -1;
    *out = strtol (v, &end, 10);
    if (*end || end == v) {
        free (v);
        errno = EINVAL;
        return errprintf (error, "%s: bad '%s' in its meta table", base (f->path), key);
    }
    free (v);
    return 0;
}

/* Write a new file's tables and meta in one transaction. */
static int dbfile_init (struct sqlstore *st, struct dbfile *f, int shard_index,
                        canopy_error_t *error)
{
    char buf[32];

    if (exec (f, "BEGIN", error) < 0)
        return -1;
    if (exec (f, "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value)",
              error) < 0)
        goto error;
    if (f->blobs && exec (f, "CREATE TABLE IF NOT EXISTS objects"
                             " (hash BLOB PRIMARY KEY, size INTEGER NOT NULL,"
                             " data BLOB NOT NULL)", error) < 0)
        goto error;
    if (f == &st->main && exec (f, "CREATE TABLE IF NOT EXISTS checkpoints"
                                   " (seq INTEGER PRIMARY KEY AUTOINCREMENT,"
                                   " rootref TEXT NOT NULL, version INTEGER NOT NULL,"
                                   " timestamp REAL NOT NULL)", error) < 0)
        goto error;
    snprintf (buf, sizeof (buf), "%d", STORE_FORMAT);
    if (meta_set (f, "format", buf, error) < 0
        || meta_set (f, "store-id", st->store_id, error) < 0)
        goto error;
    snprintf (buf, sizeof (buf), "%d", st->nshards);
    if (meta_set (f, "shards", buf, error) < 0)
        goto error;
    snprintf (buf, sizeof (buf), "%d", shard_index);
    if (meta_set (f, "shard", buf, error) < 0
        || meta_set (f, "syncs", "0", error) < 0)
        goto error;
    if (exec (f, "COMMIT", error) < 0)
        goto error;
    return 0;
error:
    {
        int saved = errno;
        (void)sqlite3_exec (f->db, "ROLLBACK", NULL, NULL, NULL);
        errno = saved;
    }
    return -1;
}

/* An existing file must belong to this store, at this index. */
static int dbfile_verify (struct sqlstore *st, struct dbfile *f, int shard_index,
                          canopy_error_t *error)
{
    long format, index;
    char *id;

    if (meta_get_int (f, "format", &format, error) < 0)
        return -1;
    if (format != STORE_FORMAT) {
        errno = EINVAL;
        return errprintf (error, "%s has store format %ld (this canopy reads %d)",
                          f->path, format, STORE_FORMAT);
    }
    if (!(id = meta_get (f, "store-id", error)))
        return -1;
    if (f != &st->main && strcmp (id, st->store_id) != 0) {
        free (id);
        errno = EINVAL;
        return errprintf (error, "%s belongs to another store", f->path);
    }
    if (f == &st->main)
        snprintf (st->store_id, sizeof (st->store_id), "%s", id);
    free (id);
    if (meta_get_int (f, "shard", &index, error) < 0)
        return -1;
    if (index != shard_index) {
        errno = EINVAL;
        return errprintf (error, "%s is shard %ld, expected %d", f->path, index,
                          shard_index);
    }
    return 0;
}

static int dbfile_prepare_blobs (struct dbfile *f, canopy_error_t *error)
{
    if (prepare (f, "INSERT OR IGNORE INTO objects (hash, size, data) VALUES (?1, ?2, ?3)",
                 &f->ins, error) < 0
        || prepare (f, "SELECT size, data FROM objects WHERE hash = ?1", &f->get,
                    error) < 0
        || prepare (f, "DELETE FROM objects WHERE hash = ?1", &f->del, error) < 0)
        return -1;
    return 0;
}

static void shard_name (char *buf, size_t size, int i)
{
    snprintf (buf, size, "content-%02x.sqlite", i);
}

static struct dbfile *blobfile (struct sqlstore *st, int i)
{
    return st->nshards == 1 ? &st->main : &st->shard[i];
}

static int valid_shards (int n)
{
    return n >= 1 && n <= 256 && (n & (n - 1)) == 0;
}

sqlstore_t *sqlstore_open (const struct sqlstore_config *cfg, canopy_error_t *error)
{
    struct sqlstore *st;
    char name[64];
    char mainpath[4096];

    if (!cfg || !cfg->dir || !*cfg->dir || cfg->keep_checkpoints < 1) {
        errno = EINVAL;
        errprintf (error, "invalid store configuration");
        return NULL;
    }
    if (!valid_shards (cfg->shards)) {
        errno = EINVAL;
        errprintf (error, "the shard count must be a power of 2 from 1 to 256 (got %d)",
                   cfg->shards);
        return NULL;
    }
    if (!(st = calloc (1, sizeof (*st))) || !(st->dir = strdup (cfg->dir))) {
        free (st);
        errno = ENOMEM;
        errprintf (error, "out of memory");
        return NULL;
    }
    st->cfg = *cfg;
    st->cfg.dir = st->dir;
    st->stats.blobs = -1;
    snprintf (mainpath, sizeof (mainpath), "%s/%s", st->dir, MAIN_NAME);
    if (!file_exists (mainpath)) {
        if (cfg->must_exist) {
            errno = ENOENT;
            errprintf (error, "there is no content store in %s", st->dir);
            goto error;
        }
        if (mkdir (st->dir, 0700) < 0 && errno != EEXIST) {
            errprintf (error, "cannot create %s: %s", st->dir, strerror (errno));
            goto error;
        }
        st->is_new = true;
        st->nshards = cfg->shards;
        char wal[4200];
        snprintf (wal, sizeof (wal), "%s-wal", mainpath);
        (void)unlink (wal);     /* of an earlier store whose file was removed */
        uint8_t rnd[16];
        randombytes_buf (rnd, sizeof (rnd));
        for (int i = 0; i < 16; i++)
            snprintf (st->store_id + 2 * i, 3, "%02x", rnd[i]);
    }
    else {
        long n;
        st->nshards = 1;        /* for the cache budget until we know */
        if (dbfile_open (st, &st->main, MAIN_NAME, false, error) < 0
            || dbfile_verify (st, &st->main, -1, error) < 0
            || meta_get_int (&st->main, "shards", &n, error) < 0)
            goto error;
        if (!valid_shards ((int)n)) {
            errno = EINVAL;
            errprintf (error, "%s: bad shard count %ld", st->main.path, n);
            goto error;
        }
        st->nshards = (int)n;
    }
    while ((1 << st->bits) < st->nshards)
        st->bits++;
    st->main.blobs = st->nshards == 1;
    if (st->nshards > 1) {
        if (!(st->shard = calloc (st->nshards, sizeof (*st->shard)))) {
            errno = ENOMEM;
            errprintf (error, "out of memory");
            goto error;
        }
        for (int i = 0; i < st->nshards; i++) {
            struct dbfile *f = &st->shard[i];
            f->blobs = true;
            shard_name (name, sizeof (name), i);
            if (st->is_new) {
                /* leftovers of an interrupted creation are replaced */
                char p[4200];
                snprintf (p, sizeof (p), "%s/%s", st->dir, name);
                (void)unlink (p);
                snprintf (p, sizeof (p), "%s/%s-wal", st->dir, name);
                (void)unlink (p);
            }
            if (dbfile_open (st, f, name, st->is_new, error) < 0)
                goto error;
            if (st->is_new ? dbfile_init (st, f, i, error) < 0
                           : dbfile_verify (st, f, i, error) < 0)
                goto error;
        }
    }
    /* the main file last: its meta marks the store complete */
    if (st->is_new && (dbfile_open (st, &st->main, MAIN_NAME, true, error) < 0
                       || dbfile_init (st, &st->main, -1, error) < 0))
        goto error;
    for (int i = 0; i < st->nshards; i++) {
        struct dbfile *f = blobfile (st, i);
        if (dbfile_set_cap (st, f, error) < 0 || dbfile_prepare_blobs (f, error) < 0)
            goto error;
    }
    if (prepare (&st->main, "INSERT INTO checkpoints (rootref, version, timestamp)"
                            " VALUES (?1, ?2, ?3)", &st->ck_ins, error) < 0
        || prepare (&st->main, "DELETE FROM checkpoints WHERE seq NOT IN"
                               " (SELECT seq FROM checkpoints ORDER BY seq DESC LIMIT ?1)",
                    &st->ck_trim, error) < 0
        || prepare (&st->main, "SELECT seq, rootref, version, timestamp FROM checkpoints"
                               " ORDER BY seq DESC", &st->ck_list, error) < 0)
        goto error;
    if (st->is_new)
        st->counted = true, st->stats.blobs = 0;
    st->stats.shards = st->nshards;
    return st;
error:
    sqlstore_close (st);
    return NULL;
}

void sqlstore_close (sqlstore_t *st)
{
    if (st) {
        int saved = errno;
        sqlite3_finalize (st->ck_ins);
        sqlite3_finalize (st->ck_trim);
        sqlite3_finalize (st->ck_list);
        for (int i = 0; st->shard && i < st->nshards; i++)
            dbfile_close (&st->shard[i]);
        free (st->shard);
        dbfile_close (&st->main);
        free (st->dir);
        free (st);
        errno = saved;
    }
}

int sqlstore_shards (sqlstore_t *st)
{
    return st->nshards;
}

bool sqlstore_is_new (sqlstore_t *st)
{
    return st->is_new;
}

int sqlstore_shard_of (sqlstore_t *st, const uint8_t *digest)
{
    return st->bits == 0 ? 0 : digest[0] >> (8 - st->bits);
}

/* Put the blobs of one shard (indices idx[0..n-1] of v) in one transaction. */
static int put_shard (struct sqlstore *st, struct dbfile *f,
                      const void *items, const int *idx, int n,
                      int *added, canopy_error_t *error)
{
    const struct sqlstore_blob *v = items;
    int rc;
    int count = 0;
    int64_t bytes = 0, ncomp = 0, stored = 0;

    if ((rc = sqlite3_exec (f->db, "BEGIN", NULL, NULL, NULL)) != SQLITE_OK)
        return dberr (f, rc, error, "begin");
    for (int k = 0; k < n; k++) {
        const struct sqlstore_blob *b = &v[idx[k]];
        void *z = NULL;
        size_t zlen = 0;
        int c = blobcodec_compress (b->data, b->len, st->cfg.compress_threshold,
                                    &z, &zlen);
        if (c < 0) {
            errprintf (error, "compressing a blob: %s", strerror (errno));
            goto error;
        }
        sqlite3_reset (f->ins);
        sqlite3_bind_blob (f->ins, 1, b->digest, BLOBREF_HASHLEN, SQLITE_STATIC);
        sqlite3_bind_int64 (f->ins, 2, (sqlite3_int64)b->len);
        if (c == 1)
            sqlite3_bind_blob64 (f->ins, 3, z, zlen, free);
        else
            sqlite3_bind_blob64 (f->ins, 3, b->len ? b->data : "", b->len,
                                 SQLITE_STATIC);
        rc = sqlite3_step (f->ins);
        sqlite3_clear_bindings (f->ins);
        if (rc != SQLITE_DONE) {
            dberr (f, rc, error, "store");
            goto error;
        }
        if (sqlite3_changes (f->db) > 0) {
            count++;
            bytes += b->len;
            stored += c == 1 ? zlen : b->len;
            if (c == 1)
                ncomp++;
        }
    }
    sqlite3_reset (f->ins);
    if ((rc = sqlite3_exec (f->db, "COMMIT", NULL, NULL, NULL)) != SQLITE_OK) {
        dberr (f, rc, error, "commit");
        goto error;
    }
    f->unsynced = true;
    st->stats.puts += count;
    st->stats.put_bytes += bytes;
    st->stats.compressed += ncomp;
    if (st->counted) {
        st->stats.blobs += count;
        st->stats.raw_bytes += bytes;
        st->stats.stored_bytes += stored;
    }
    if (added)
        *added += count;
    return 0;
error:
    {
        int saved = errno;
        sqlite3_reset (f->ins);
        (void)sqlite3_exec (f->db, "ROLLBACK", NULL, NULL, NULL);
        errno = saved;
    }
    return -1;
}

/* The items of a put or delete, by shard: 'op' runs once per shard that
 * has any, in shard order, with the indexes of its items; the first
 * failure stops.  *count adds up what the ops report.
 */
typedef int (*shard_op_f)(struct sqlstore *st, struct dbfile *f,
                          const void *items, const int *idx, int n,
                          int *count, canopy_error_t *error);
typedef const uint8_t *(*digest_at_f)(const void *items, int i);

static int by_shard (sqlstore_t *st, const void *items, int n, digest_at_f digest_at,
                     shard_op_f op, int *count, canopy_error_t *error)
{
    int *idx;
    int rc = 0;

    if (count)
        *count = 0;
    if (n <= 0)
        return 0;
    if (!(idx = malloc (n * sizeof (*idx)))) {
        errno = ENOMEM;
        return errprintf (error, "out of memory");
    }
    for (int s = 0; s < st->nshards && rc == 0; s++) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (sqlstore_shard_of (st, digest_at (items, i)) == s)
                idx[m++] = i;
        }
        if (m > 0)
            rc = op (st, blobfile (st, s), items, idx, m, count, error);
    }
    free (idx);
    return rc;
}

static const uint8_t *blob_digest (const void *items, int i)
{
    return ((const struct sqlstore_blob *)items)[i].digest;
}

static const uint8_t *packed_digest (const void *items, int i)
{
    return (const uint8_t *)items + (size_t)i * BLOBREF_HASHLEN;
}

int sqlstore_put (sqlstore_t *st, const struct sqlstore_blob *v, int n, int *added,
                  canopy_error_t *error)
{
    return by_shard (st, v, n, blob_digest, put_shard, added, error);
}

int sqlstore_get (sqlstore_t *st, const uint8_t *digest, void **data, size_t *len,
                  canopy_error_t *error)
{
    struct dbfile *f = blobfile (st, sqlstore_shard_of (st, digest));
    int rc;
    int64_t size;
    const void *p;
    int plen;
    void *buf = NULL;

    sqlite3_reset (f->get);
    sqlite3_bind_blob (f->get, 1, digest, BLOBREF_HASHLEN, SQLITE_STATIC);
    rc = sqlite3_step (f->get);
    if (rc == SQLITE_DONE) {
        sqlite3_reset (f->get);
        errno = ENOENT;
        return errprintf (error, "no such blob");
    }
    if (rc != SQLITE_ROW) {
        dberr (f, rc, error, "load");
        sqlite3_reset (f->get);
        return -1;
    }
    size = sqlite3_column_int64 (f->get, 0);
    p = sqlite3_column_blob (f->get, 1);
    plen = sqlite3_column_bytes (f->get, 1);
    if (size < 0 || plen > size) {
        sqlite3_reset (f->get);
        errno = EIO;
        return errprintf (error, "%s: a stored blob has a bad size", base (f->path));
    }
    if (plen < size) {
        if (blobcodec_decompress (p, plen, size, &buf) < 0) {
            int saved = errno;
            sqlite3_reset (f->get);
            errno = saved;
            return errprintf (error, "%s: a compressed blob does not expand",
                              base (f->path));
        }
    }
    else {
        if (!(buf = malloc (size + 1))) {
            sqlite3_reset (f->get);
            errno = ENOMEM;
            return errprintf (error, "out of memory");
        }
        if (size > 0)
            memcpy (buf, p, size);
        ((char *)buf)[size] = '\0';
    }
    sqlite3_reset (f->get);
    *data = buf;
    *len = size;
    return 0;
}

static int delete_shard (struct sqlstore *st, struct dbfile *f, const void *items,
                         const int *idx, int n, int *deleted, canopy_error_t *error)
{
    const uint8_t *digests = items;
    int rc, count = 0;

    if ((rc = sqlite3_exec (f->db, "BEGIN", NULL, NULL, NULL)) != SQLITE_OK)
        return dberr (f, rc, error, "begin");
    for (int k = 0; k < n; k++) {
        sqlite3_reset (f->del);
        sqlite3_bind_blob (f->del, 1, digests + idx[k] * BLOBREF_HASHLEN,
                           BLOBREF_HASHLEN, SQLITE_STATIC);
        rc = sqlite3_step (f->del);
        sqlite3_reset (f->del);
        if (rc != SQLITE_DONE) {
            dberr (f, rc, error, "delete");
            goto error;
        }
        count += sqlite3_changes (f->db);
    }
    if ((rc = sqlite3_exec (f->db, "COMMIT", NULL, NULL, NULL)) != SQLITE_OK) {
        dberr (f, rc, error, "commit");
        goto error;
    }
    f->unsynced = true;
    if (count > 0) {
        st->counted = false;    /* sizes unknown: recount when asked */
        st->stats.blobs = -1;
    }
    if (deleted)
        *deleted += count;
    return 0;
error:
    {
        int saved = errno;
        (void)sqlite3_exec (f->db, "ROLLBACK", NULL, NULL, NULL);
        errno = saved;
    }
    return -1;
}

int sqlstore_delete (sqlstore_t *st, const uint8_t *digests, int n, int *deleted,
                     canopy_error_t *error)
{
    return by_shard (st, digests, n, packed_digest, delete_shard, deleted, error);
}

/* Commit under synchronous=FULL: the WAL is fsynced with everything in it. */
static int durable_exec (struct sqlstore *st, struct dbfile *f, const char *sql,
                         canopy_error_t *error)
{
    int rc;

    if (st->cfg.durability == SQLSTORE_VOLATILE)
        return exec (f, sql, error);
    if (exec (f, "PRAGMA synchronous=FULL", error) < 0)
        return -1;
    rc = exec (f, sql, error);
    int saved = errno;
    (void)sqlite3_exec (f->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
    errno = saved;
    return rc;
}

static int sync_file (struct sqlstore *st, struct dbfile *f, canopy_error_t *error)
{
    if (!f->unsynced)
        return 0;
    if (durable_exec (st, f, "UPDATE meta SET value = value + 1 WHERE key = 'syncs'",
                      error) < 0)
        return -1;
    f->unsynced = false;
    st->stats.syncs++;
    return 0;
}

int sqlstore_sync (sqlstore_t *st, canopy_error_t *error)
{
    if (st->nshards > 1) {
        for (int i = 0; i < st->nshards; i++) {
            if (sync_file (st, &st->shard[i], error) < 0)
                return -1;
        }
    }
    return sync_file (st, &st->main, error);
}

int sqlstore_checkpoint_put (sqlstore_t *st, const char *rootref, int version,
                             double timestamp, canopy_error_t *error)
{
    struct dbfile *f = &st->main;
    int rc;

    /* the blobs it names must be durable first */
    if (st->nshards > 1) {
        for (int i = 0; i < st->nshards; i++) {
            if (sync_file (st, &st->shard[i], error) < 0)
                return -1;
        }
    }
    if (st->cfg.durability == SQLSTORE_DURABLE
        && exec (f, "PRAGMA synchronous=FULL", error) < 0)
        return -1;
    if ((rc = sqlite3_exec (f->db, "BEGIN", NULL, NULL, NULL)) != SQLITE_OK) {
        dberr (f, rc, error, "begin");
        goto done;
    }
    sqlite3_reset (st->ck_ins);
    sqlite3_bind_text (st->ck_ins, 1, rootref, -1, SQLITE_STATIC);
    sqlite3_bind_int (st->ck_ins, 2, version);
    sqlite3_bind_double (st->ck_ins, 3, timestamp);
    rc = sqlite3_step (st->ck_ins);
    sqlite3_reset (st->ck_ins);
    if (rc != SQLITE_DONE) {
        dberr (f, rc, error, "write checkpoint");
        goto rollback;
    }
    sqlite3_reset (st->ck_trim);
    sqlite3_bind_int (st->ck_trim, 1, st->cfg.keep_checkpoints);
    rc = sqlite3_step (st->ck_trim);
    sqlite3_reset (st->ck_trim);
    if (rc != SQLITE_DONE) {
        dberr (f, rc, error, "trim checkpoints");
        goto rollback;
    }
    if ((rc = sqlite3_exec (f->db, "COMMIT", NULL, NULL, NULL)) != SQLITE_OK) {
        dberr (f, rc, error, "commit checkpoint");
        goto rollback;
    }
    f->unsynced = false;
    st->stats.checkpoints++;
    if (st->cfg.durability == SQLSTORE_DURABLE)
        (void)sqlite3_exec (f->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
    return 0;
rollback:
    {
        int saved = errno;
        (void)sqlite3_exec (f->db, "ROLLBACK", NULL, NULL, NULL);
        errno = saved;
    }
done:
    {
        int saved = errno;
        if (st->cfg.durability == SQLSTORE_DURABLE)
            (void)sqlite3_exec (f->db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
        errno = saved;
    }
    return -1;
}

int sqlstore_checkpoint_list (sqlstore_t *st, struct sqlstore_checkpoint **vp, int *np,
                              canopy_error_t *error)
{
    struct sqlstore_checkpoint *v = NULL;
    int n = 0, rc;

    sqlite3_reset (st->ck_list);
    while ((rc = sqlite3_step (st->ck_list)) == SQLITE_ROW) {
        struct sqlstore_checkpoint *nv = realloc (v, (n + 1) * sizeof (*v));
        const unsigned char *t;
        if (!nv) {
            free (v);
            sqlite3_reset (st->ck_list);
            errno = ENOMEM;
            return errprintf (error, "out of memory");
        }
        v = nv;
        memset (&v[n], 0, sizeof (v[n]));
        v[n].seq = sqlite3_column_int64 (st->ck_list, 0);
        t = sqlite3_column_text (st->ck_list, 1);
        snprintf (v[n].rootref, sizeof (v[n].rootref), "%s", t ? (const char *)t : "");
        v[n].version = sqlite3_column_int (st->ck_list, 2);
        v[n].timestamp = sqlite3_column_double (st->ck_list, 3);
        n++;
    }
    sqlite3_reset (st->ck_list);
    if (rc != SQLITE_DONE) {
        free (v);
        return dberr (&st->main, rc, error, "read checkpoints");
    }
    *vp = v;
    *np = n;
    return 0;
}

static int quick_check (struct dbfile *f, canopy_error_t *error)
{
    sqlite3_stmt *s;
    int rc;
    const unsigned char *t;

    if (prepare (f, "PRAGMA quick_check", &s, error) < 0)
        return -1;
    rc = sqlite3_step (s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize (s);
        return dberr (f, rc, error, "quick_check");
    }
    t = sqlite3_column_text (s, 0);
    if (!t || strcmp ((const char *)t, "ok") != 0) {
        errprintf (error, "%s fails its integrity check: %s", f->path,
                   t ? (const char *)t : "?");
        sqlite3_finalize (s);
        errno = EIO;
        return -1;
    }
    sqlite3_finalize (s);
    return 0;
}

/* Read every blob of a file back and compare its hash. */
static int full_check (struct sqlstore *st, struct dbfile *f,
                       struct sqlstore_check_result *res, canopy_error_t *error)
{
    sqlite3_stmt *s;
    int rc;

    if (prepare (f, "SELECT hash, size, data FROM objects", &s, error) < 0)
        return -1;
    while ((rc = sqlite3_step (s)) == SQLITE_ROW) {
        const void *h = sqlite3_column_blob (s, 0);
        int hlen = sqlite3_column_bytes (s, 0);
        int64_t size = sqlite3_column_int64 (s, 1);
        const void *p = sqlite3_column_blob (s, 2);
        int plen = sqlite3_column_bytes (s, 2);
        void *buf = NULL;
        const void *data = p;
        uint8_t digest[BLOBREF_HASHLEN];
        char ref[BLOBREF_MAX] = "?";

        if (hlen == BLOBREF_HASHLEN)
            (void)blobref_from_digest (h, ref, sizeof (ref));
        if (hlen != BLOBREF_HASHLEN || size < 0 || plen > size
            || (plen < size && blobcodec_decompress (p, plen, size, &buf) < 0)) {
            errprintf (error, "%s: blob %s is damaged", f->path, ref);
            goto bad;
        }
        if (buf)
            data = buf;
        (void)sha256_one (data, (size_t)size, digest);   /* cannot fail: data is set */
        free (buf);
        if (memcmp (digest, h, BLOBREF_HASHLEN) != 0) {
            errprintf (error, "%s: blob %s fails its hash check", f->path, ref);
            goto bad;
        }
        if (sqlstore_shard_of (st, h) != (f == &st->main ? 0 : (int)(f - st->shard))) {
            errprintf (error, "%s: blob %s is in the wrong shard", f->path, ref);
            goto bad;
        }
        res->blobs++;
        res->bytes += size;
    }
    sqlite3_finalize (s);
    if (rc != SQLITE_DONE)
        return dberr (f, rc, error, "read blobs");
    return 0;
bad:
    sqlite3_finalize (s);
    errno = EIO;
    return -1;
}

int sqlstore_check (sqlstore_t *st, enum sqlstore_check level,
                    struct sqlstore_check_result *res, canopy_error_t *error)
{
    struct sqlstore_check_result r = { 0 };
    double t0 = monotime ();

    if (level >= SQLSTORE_CHECK_QUICK) {
        if (quick_check (&st->main, error) < 0)
            return -1;
        for (int i = 0; st->nshards > 1 && i < st->nshards; i++) {
            if (quick_check (&st->shard[i], error) < 0)
                return -1;
        }
    }
    if (level >= SQLSTORE_CHECK_FULL) {
        for (int i = 0; i < st->nshards; i++) {
            if (full_check (st, blobfile (st, i), &r, error) < 0)
                return -1;
        }
    }
    r.seconds = monotime () - t0;
    if (res)
        *res = r;
    return 0;
}

static int64_t file_size (const char *path, const char *suffix)
{
    char p[4200];
    struct stat sb;
    snprintf (p, sizeof (p), "%s%s", path, suffix);
    return stat (p, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

static int count_blobs (struct sqlstore *st, canopy_error_t *error)
{
    int64_t blobs = 0, raw = 0, stored = 0;
    for (int i = 0; i < st->nshards; i++) {
        struct dbfile *f = blobfile (st, i);
        sqlite3_stmt *s;
        int rc;
        if (prepare (f, "SELECT count(*), total(size), total(length(data)) FROM objects",
                     &s, error) < 0)
            return -1;
        rc = sqlite3_step (s);
        if (rc != SQLITE_ROW) {
            sqlite3_finalize (s);
            return dberr (f, rc, error, "count");
        }
        blobs += sqlite3_column_int64 (s, 0);
        raw += (int64_t)sqlite3_column_double (s, 1);
        stored += (int64_t)sqlite3_column_double (s, 2);
        sqlite3_finalize (s);
    }
    st->stats.blobs = blobs;
    st->stats.raw_bytes = raw;
    st->stats.stored_bytes = stored;
    st->counted = true;
    return 0;
}

int sqlstore_stats (sqlstore_t *st, struct sqlstore_stats *stats, canopy_error_t *error)
{
    if (!st->counted && count_blobs (st, error) < 0)
        return -1;
    st->stats.file_bytes = file_size (st->main.path, "") + file_size (st->main.path, "-wal");
    for (int i = 0; st->nshards > 1 && i < st->nshards; i++)
        st->stats.file_bytes += file_size (st->shard[i].path, "")
                                + file_size (st->shard[i].path, "-wal");
    *stats = st->stats;
    return 0;
}

void sqlstore_remove_files (const char *dir)
{
    DIR *d = opendir (dir);
    struct dirent *e;
    char p[4200];

    if (!d)
        return;
    while ((e = readdir (d))) {
        if (!strncmp (e->d_name, "content", 7) && strstr (e->d_name, ".sqlite")) {
            snprintf (p, sizeof (p), "%s/%s", dir, e->d_name);
            (void)unlink (p);
        }
    }
    closedir (d);
}
