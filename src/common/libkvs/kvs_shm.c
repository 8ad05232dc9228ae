/* kvs_shm.c - see kvs_shm.h.
 *
 * Design notes:
 * - Memory order: the writer's seq protocol is the usual seqlock one
 *   (odd store, release fence, changes, release store of the next even
 *   value); a reader loads seq with acquire, reads, then an acquire fence
 *   before it loads seq again.  Fields a reader bounds its reads by (a
 *   slot's off, a record's len) are loaded once into locals (__atomic
 *   relaxed loads, which the compiler may not repeat), then checked.
 * - The reader keeps a private cache of the directories it read (a
 *   plain directory read once was scanned, treeobj_scan.h; read again it
 *   is indexed, treeobj_index.h; an hdir is decoded), keyed by ref,
 *   offset and length: a ref names one content, so an entry stays right
 *   for as long as the same ref lies at the same place, even across
 *   resets.  An entry is kept only if seq did not move while it was made
 *   (else it may have been made from torn text).
 * - Page faults: a first touch of a page of the segment is a fault, in
 *   the writer (a new page of the memory file) and in every reader (a
 *   page not yet in its page table).  In a KAP fence of 32 ranks these
 *   were 6% of the KVS thread's CPU (the table's pages, hashed at random)
 *   and 10% of the ranks' (the table and new records).  `filled` is how
 *   far from the start the pages are known to be in memory: the owner
 *   says the table is (kvs_shm_set_filled, once it made it resident) and
 *   every record written moves it to the record's end (its pages were
 *   written).  A reader maps everything below it, the page holding its
 *   end included, with one madvise (MADV_POPULATE_READ) when it starts
 *   and again at a get once `filled` has grown, so it takes no fault
 *   there and allocates nothing (those pages exist).  Pages the owner
 *   faulted in ahead of the writer are not mapped: readers would map
 *   what they may never read.  A kernel without it (before 5.14) faults
 *   as before.
 * - The reader also keeps the path of its last get that hit: the root
 *   it started from, the key's components and the ref of the directory
 *   each was looked up in.  Content is named by its hash, so from the
 *   same root the same components always lead to the same directories:
 *   a get from that root whose key shares a prefix of components with
 *   the last one starts at the deepest directory they share (at most
 *   the last component's), instead of walking down from the root again
 *   (KAP's consumers read 16 keys of one directory, or of directories
 *   with one parent).  A walk from there finds what a walk from the root
 *   would, except where a reset dropped a directory above it and kept
 *   the one below: then it finds the value the root names all the same.
 *   The path is kept only after a hit read whole (seq unchanged).
 * - Entries are read in their canonical encoding (treeobj_encode: sorted
 *   keys, no white space): {"data":"B64","type":"val","ver":1} and
 *   {"data":["REF",...],"type":"valref"|"dirref","ver":1}.  Any other
 *   text is a miss.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/mman.h>
#include <canopy/kvs.h>
#include "src/common/libutil/blobref.h"
#include "src/common/libutil/base64.h"
#include "treeobj.h"
#include "treeobj_scan.h"
#include "treeobj_index.h"
#include "kvs_shm.h"

#define SHM_MAGIC 0x31534b56504f4e43ULL     /* "CNOPVKS1" */
#define SHM_FORMAT 2
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#define READ_TRIES 3
#define DIRCACHE_SIZE 32
#define PATH_LEVELS 16          /* levels of the last path kept */

struct shm_hdr {
    uint64_t magic;
    uint32_t format;
    uint32_t hdr_bytes;
    uint64_t size;
    uint64_t table_off;
    uint64_t nslots;            /* a power of two */
    uint64_t arena_off;
    uint64_t arena_bytes;
    /* changed by the writer */
    uint64_t seq;
    uint64_t closed;
    uint64_t resets;
    int64_t version;
    uint64_t filled;            /* bytes from the start in memory (below) */
    char rootref[BLOBREF_MAX];
};

struct shm_slot {
    uint64_t hash;
    uint64_t off;               /* of the record; 0: empty */
};

struct shm_rec {
    uint32_t bytes;             /* the whole record, 8-aligned */
    uint32_t len;               /* of the data that follows */
    char ref[BLOBREF_MAX];
};

#define ALIGN8(n) (((n) + 7) & ~(size_t)7)
#define HDR_BYTES ALIGN8 (sizeof (struct shm_hdr))

struct kvs_shm {
    char *base;
    size_t size;
    struct shm_hdr *hdr;
    struct shm_slot *slots;
    size_t nslots;
    size_t arena_off;
    size_t arena_bytes;
    size_t used;
    size_t objects;
    uint64_t puts;
    uint64_t resets;
    uint64_t too_big;
};

/* The first 16 hex digits of a valid blobref's digest. */
static uint64_t ref_hash (const char *ref)
{
    uint64_t h = 0;
    for (int i = 0; i < 16; i++)
        h = (h << 4) | (uint64_t)blobref_hexval (ref[BLOBREF_PREFIX_LEN + i]);
    return h;
}

/* Writer */

static void seq_begin (struct kvs_shm *w)
{
    uint64_t s = __atomic_load_n (&w->hdr->seq, __ATOMIC_RELAXED);
    __atomic_store_n (&w->hdr->seq, s + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence (__ATOMIC_RELEASE);
}

static void seq_end (struct kvs_shm *w)
{
    uint64_t s = __atomic_load_n (&w->hdr->seq, __ATOMIC_RELAXED);
    __atomic_store_n (&w->hdr->seq, s + 1, __ATOMIC_RELEASE);
}

kvs_shm_t *kvs_shm_format (void *mem, size_t size, bool zeroed)
{
    struct kvs_shm *w;
    size_t nslots = 64;

    if (!mem || ((uintptr_t)mem & 7) || size < KVS_SHM_MIN_SIZE
        || size >= ((size_t)1 << 40)) {
        errno = EINVAL;
        return NULL;
    }
    if (!(w = calloc (1, sizeof (*w)))) {
        errno = ENOMEM;
        return NULL;
    }
    /* about 3% of the segment for the table: a slot per 512 bytes */
    while (nslots * 2 <= size / 512)
        nslots *= 2;
    w->base = mem;
    w->size = size;
    w->hdr = mem;
    w->nslots = nslots;
    w->slots = (struct shm_slot *)(w->base + HDR_BYTES);
    w->arena_off = HDR_BYTES + nslots * sizeof (struct shm_slot);
    w->arena_bytes = (size - w->arena_off) & ~(size_t)7;

    memset (w->hdr, 0, HDR_BYTES);
    if (!zeroed)
        memset (w->slots, 0, nslots * sizeof (struct shm_slot));
    w->hdr->format = SHM_FORMAT;
    w->hdr->hdr_bytes = HDR_BYTES;
    w->hdr->size = size;
    w->hdr->table_off = HDR_BYTES;
    w->hdr->nslots = nslots;
    w->hdr->arena_off = w->arena_off;
    w->hdr->arena_bytes = w->arena_bytes;
    w->hdr->version = -1;
    /* the magic last: a reader that sees it sees the rest */
    __atomic_store_n (&w->hdr->magic, SHM_MAGIC, __ATOMIC_RELEASE);
    return w;
}

void kvs_shm_destroy (kvs_shm_t *w)
{
    if (w) {
        int saved_errno = errno;
        free (w);
        errno = saved_errno;
    }
}

void kvs_shm_set_filled (kvs_shm_t *w, size_t bytes)
{
    if (!w)
        return;
    if (bytes > w->size)
        bytes = w->size;
    if (bytes > __atomic_load_n (&w->hdr->filled, __ATOMIC_RELAXED))
        __atomic_store_n (&w->hdr->filled, bytes, __ATOMIC_RELEASE);
}

/* The slot holding ref, or the empty slot where it would go. */
static struct shm_slot *writer_probe (struct kvs_shm *w, const char *ref, uint64_t h)
{
    size_t mask = w->nslots - 1;

    for (size_t i = 0; ; i++) {
        struct shm_slot *sl = &w->slots[(h + i) & mask];
        if (sl->off == 0)
            return sl;
        const struct shm_rec *rec = (const struct shm_rec *)(w->base + sl->off);
        if (sl->hash == h && !memcmp (rec->ref, ref, BLOBREF_STRLEN))
            return sl;
    }
}

bool kvs_shm_has (kvs_shm_t *w, const char *ref)
{
    if (!w || !ref || blobref_validate (ref) < 0)
        return false;
    return writer_probe (w, ref, ref_hash (ref))->off != 0;
}

static void reset (struct kvs_shm *w)
{
    seq_begin (w);
    memset (w->slots, 0, w->nslots * sizeof (struct shm_slot));
    w->used = 0;
    w->objects = 0;
    w->resets++;
    __atomic_store_n (&w->hdr->resets, w->resets, __ATOMIC_RELAXED);
    seq_end (w);
}

int kvs_shm_put (kvs_shm_t *w, const char *ref, const void *data, size_t len)
{
    if (!w || !ref || (!data && len > 0) || blobref_validate (ref) < 0) {
        errno = EINVAL;
        return -1;
    }
    size_t bytes = ALIGN8 (sizeof (struct shm_rec) + len);
    if (bytes > w->arena_bytes / 4) {
        w->too_big++;
        errno = EFBIG;
        return -1;
    }
    uint64_t h = ref_hash (ref);
    struct shm_slot *sl = writer_probe (w, ref, h);
    if (sl->off != 0)
        return 0;
    if (w->used + bytes > w->arena_bytes || (w->objects + 1) * 2 > w->nslots) {
        reset (w);
        sl = writer_probe (w, ref, h);
    }
    size_t off = w->arena_off + w->used;
    struct shm_rec *rec = (struct shm_rec *)(w->base + off);
    rec->bytes = (uint32_t)bytes;
    rec->len = (uint32_t)len;
    memcpy (rec->ref, ref, BLOBREF_STRLEN);
    rec->ref[BLOBREF_STRLEN] = '\0';
    if (len > 0)
        memcpy ((char *)(rec + 1), data, len);
    w->used += bytes;
    w->objects++;
    w->puts++;
    kvs_shm_set_filled (w, w->arena_off + w->used);    /* written: resident */
    __atomic_store_n (&sl->hash, h, __ATOMIC_RELAXED);
    __atomic_store_n (&sl->off, (uint64_t)off, __ATOMIC_RELEASE);
    return 1;
}

void kvs_shm_set_root (kvs_shm_t *w, int version, const char *rootref)
{
    if (!w || !rootref || blobref_validate (rootref) < 0)
        return;
    seq_begin (w);
    w->hdr->version = version;
    memcpy (w->hdr->rootref, rootref, BLOBREF_MAX);
    seq_end (w);
}

void kvs_shm_close (kvs_shm_t *w)
{
    if (!w)
        return;
    seq_begin (w);
    __atomic_store_n (&w->hdr->closed, 1, __ATOMIC_RELAXED);
    seq_end (w);
}

void kvs_shm_stats (const kvs_shm_t *w, struct kvs_shm_stats *st)
{
    memset (st, 0, sizeof (*st));
    if (!w)
        return;
    st->size = w->size;
    st->arena = w->arena_bytes;
    st->used = w->used;
    st->end = w->arena_off + w->used;
    st->objects = w->objects;
    st->puts = w->puts;
    st->resets = w->resets;
    st->too_big = w->too_big;
}

/* Reader */

/* What a reader knows of a directory record: it scanned it once (a
 * plain directory read once costs one scan, treeobj_scan.h), indexed it
 * (read again: treeobj_index.h), or decoded it (an hdir, whose buckets
 * are followed).
 */
enum { DIR_SEEN = 1, DIR_PLAIN = 2, DIR_HASHED = 3 };

struct dircache {
    char ref[BLOBREF_MAX];
    uint64_t off, len;
    int kind;                   /* 0: the entry is free */
    treeobj_index_t *ix;        /* DIR_PLAIN */
    json_t *hdir;               /* DIR_HASHED */
};

struct last_path {
    char rootref[BLOBREF_MAX];  /* "" if none */
    int levels;                 /* refs[0..levels-1] are known */
    char key[KVS_MAX_KEY + 1];  /* the components, each NUL-terminated */
    size_t comp[PATH_LEVELS];   /* where component i starts in key */
    char refs[PATH_LEVELS][BLOBREF_MAX];    /* the directory of component i */
};

struct kvs_shm_reader {
    const char *base;
    size_t size;
    const struct shm_hdr *hdr;
    const struct shm_slot *slots;
    uint64_t nslots;
    uint64_t arena_off;
    uint64_t arena_end;
    size_t pagesize;
    size_t populated;           /* bytes from the start in our page table */
    bool no_populate;           /* the kernel cannot: fault as we go */
    struct dircache cache[DIRCACHE_SIZE];
    int next;                   /* the cache entry to replace next */
    struct last_path path;      /* the last get that hit (design notes) */
    struct kvs_shm_reader_stats stats;
};

/* Map what the writer has made resident and we have not mapped yet (see
 * the design notes).  Only a hint: any failure leaves the pages to fault.
 * Keeps errno.
 */
static void reader_populate (struct kvs_shm_reader *r)
{
    uint64_t filled = __atomic_load_n (&r->hdr->filled, __ATOMIC_ACQUIRE);

    if (r->no_populate || filled <= r->populated)
        return;
    int saved_errno = errno;
    size_t mask = r->pagesize - 1;
    size_t start = r->populated & ~mask;
    size_t end = filled < r->size ? filled : r->size;
    end = (end + mask) & ~mask;     /* the page holding the end was written */
    if (end > r->size)
        end = r->size;
    if (end > start && madvise ((void *)(r->base + start), end - start,
                                MADV_POPULATE_READ) < 0 && errno == EINVAL)
        r->no_populate = true;
    r->populated = end;
    errno = saved_errno;
}

/* The outcome of one try: the public ones, or RETRY (the writer moved). */
enum { RETRY = -2 };

kvs_shm_reader_t *kvs_shm_reader_create (const void *mem, size_t size)
{
    const struct shm_hdr *hdr = mem;
    struct kvs_shm_reader *r;

    if (!mem || ((uintptr_t)mem & 7) || size < HDR_BYTES
        || __atomic_load_n (&hdr->magic, __ATOMIC_ACQUIRE) != SHM_MAGIC
        || hdr->format != SHM_FORMAT || hdr->hdr_bytes != HDR_BYTES
        || hdr->size != size
        || hdr->table_off != HDR_BYTES
        || hdr->nslots == 0 || (hdr->nslots & (hdr->nslots - 1))
        || hdr->nslots > size / sizeof (struct shm_slot)
        || hdr->arena_off != hdr->table_off + hdr->nslots * sizeof (struct shm_slot)
        || hdr->arena_off > size || hdr->arena_bytes > size - hdr->arena_off
        || (hdr->arena_off & 7)) {
        errno = EPROTO;
        return NULL;
    }
    if (!(r = calloc (1, sizeof (*r)))) {
        errno = ENOMEM;
        return NULL;
    }
    r->base = mem;
    r->size = size;
    r->hdr = hdr;
    r->slots = (const struct shm_slot *)(r->base + hdr->table_off);
    r->nslots = hdr->nslots;
    r->arena_off = hdr->arena_off;
    r->arena_end = hdr->arena_off + hdr->arena_bytes;
    long ps = sysconf (_SC_PAGESIZE);
    r->pagesize = ps > 0 && !(ps & (ps - 1)) ? (size_t)ps : 4096;
    r->no_populate = (uintptr_t)mem & (r->pagesize - 1);   /* not a mapping */
    reader_populate (r);
    return r;
}

static void dircache_clear (struct dircache *c)
{
    treeobj_index_destroy (c->ix);
    json_decref (c->hdir);
    memset (c, 0, sizeof (*c));
}

void kvs_shm_reader_destroy (kvs_shm_reader_t *r)
{
    if (r) {
        int saved_errno = errno;
        for (int i = 0; i < DIRCACHE_SIZE; i++)
            dircache_clear (&r->cache[i]);
        free (r);
        errno = saved_errno;
    }
}

int kvs_shm_version (const kvs_shm_reader_t *r)
{
    return r ? (int)__atomic_load_n (&r->hdr->version, __ATOMIC_RELAXED) : -1;
}

void kvs_shm_reader_stats (const kvs_shm_reader_t *r,
                           struct kvs_shm_reader_stats *st)
{
    memset (st, 0, sizeof (*st));
    if (r)
        *st = r->stats;
}

/* Find the record of ref (valid): its data and length, checked to lie in
 * the arena.  false if absent (or the table is torn).
 */
static bool find (const struct kvs_shm_reader *r, const char *ref,
                  const char **data, uint64_t *off, uint64_t *len)
{
    uint64_t h = ref_hash (ref);
    uint64_t mask = r->nslots - 1;

    for (uint64_t i = 0; i < r->nslots; i++) {
        const struct shm_slot *sl = &r->slots[(h + i) & mask];
        uint64_t o = __atomic_load_n (&sl->off, __ATOMIC_ACQUIRE);
        if (o == 0)
            return false;
        if (__atomic_load_n (&sl->hash, __ATOMIC_RELAXED) != h)
            continue;
        if (o < r->arena_off || (o & 7) || o > r->arena_end - sizeof (struct shm_rec))
            return false;
        const struct shm_rec *rec = (const struct shm_rec *)(r->base + o);
        uint64_t n = __atomic_load_n (&rec->len, __ATOMIC_RELAXED);
        if (n > r->arena_end - o - sizeof (struct shm_rec))
            return false;
        if (memcmp (rec->ref, ref, BLOBREF_STRLEN) != 0)
            continue;
        *data = (const char *)(rec + 1);
        *off = o;
        *len = n;
        return true;
    }
    return false;
}

/* Whether seq is still s: nothing read since s was taken was torn. */
static bool unchanged (const struct kvs_shm_reader *r, uint64_t s)
{
    __atomic_thread_fence (__ATOMIC_ACQUIRE);
    return __atomic_load_n (&r->hdr->seq, __ATOMIC_RELAXED) == s;
}

static struct dircache *dircache_get (struct kvs_shm_reader *r, const char *ref,
                                      uint64_t off, uint64_t len)
{
    for (int i = 0; i < DIRCACHE_SIZE; i++) {
        struct dircache *c = &r->cache[i];
        if (c->kind && c->off == off && c->len == len && !strcmp (c->ref, ref))
            return c;
    }
    return NULL;
}

/* A cache entry for the record of ref (replacing the oldest). */
static struct dircache *dircache_put (struct kvs_shm_reader *r, const char *ref,
                                      uint64_t off, uint64_t len, int kind,
                                      treeobj_index_t *ix, json_t *hdir)
{
    struct dircache *c = &r->cache[r->next];
    r->next = (r->next + 1) % DIRCACHE_SIZE;
    dircache_clear (c);
    memcpy (c->ref, ref, BLOBREF_MAX);
    c->off = off;
    c->len = len;
    c->kind = kind;
    c->ix = ix;
    c->hdir = hdir;
    return c;
}

/* The entry 'name' of the plain directory 'text', or the hdir 'text'
 * decoded into a cache entry (*hdir): the first read of a directory
 * scans it, the second indexes it.  KVS_SHM_HIT with *voff, *vlen;
 * KVS_SHM_MISS (absent, not a directory read here); RETRY if the text
 * was torn while a cache entry was made from it (none is kept then).
 */
static int dir_lookup (struct kvs_shm_reader *r, const char *ref, const char *text,
                       uint64_t off, uint64_t len, const char *name, uint64_t seq,
                       size_t *voff, size_t *vlen, json_t **hdir)
{
    struct dircache *c = dircache_get (r, ref, off, len);
    int rc;

    *hdir = NULL;
    if (c && c->kind == DIR_HASHED) {
        *hdir = c->hdir;
        return KVS_SHM_HIT;
    }
    if (c && c->kind == DIR_SEEN) {
        treeobj_index_t *ix = treeobj_index_create (text, len);
        if (!unchanged (r, seq)) {
            treeobj_index_destroy (ix);
            return RETRY;
        }
        if (!ix)
            return KVS_SHM_MISS;
        c->kind = DIR_PLAIN;
        c->ix = ix;
    }
    if (c && c->kind == DIR_PLAIN)
        rc = treeobj_index_find (c->ix, text, name, voff, vlen);
    else {
        rc = treeobj_dir_scan (text, len, name, voff, vlen);
        if (rc < 0 && errno == EPROTO) {
            /* not a plain directory: an hdir? */
            json_t *o = treeobj_decode (text, len);
            if (o && (!treeobj_is_hdir (o) || treeobj_validate (o) < 0)) {
                json_decref (o);
                o = NULL;
            }
            if (!unchanged (r, seq)) {
                json_decref (o);
                return RETRY;
            }
            if (!o)
                return KVS_SHM_MISS;
            *hdir = dircache_put (r, ref, off, len, DIR_HASHED, NULL, o)->hdir;
            return KVS_SHM_HIT;
        }
        if (rc >= 0) {
            if (!unchanged (r, seq))
                return RETRY;
            (void)dircache_put (r, ref, off, len, DIR_SEEN, NULL, NULL);
        }
    }
    if (rc != 1 || *voff > len || *vlen > len - *voff)
        return KVS_SHM_MISS;
    return KVS_SHM_HIT;
}

/* The encoded entry 'name' of the directory 'ref' (a plain dir or an
 * hdir, whose buckets are followed): KVS_SHM_HIT with *entry and *elen,
 * KVS_SHM_MISS (not published, not readable here, or absent), or RETRY.
 */
static int dir_entry (struct kvs_shm_reader *r, const char *dirref, const char *name,
                      uint64_t seq, const char **entry, size_t *elen)
{
    char ref[BLOBREF_MAX];

    memcpy (ref, dirref, BLOBREF_MAX);
    for (int depth = 0; depth <= TREEOBJ_HDIR_MAXLEVEL + 1; depth++) {
        const char *text;
        uint64_t off, len;
        size_t voff, vlen;
        json_t *hdir;
        int rc;

        if (!find (r, ref, &text, &off, &len))
            return KVS_SHM_MISS;
        rc = dir_lookup (r, ref, text, off, len, name, seq, &voff, &vlen, &hdir);
        if (rc != KVS_SHM_HIT)
            return rc;
        if (!hdir) {
            *entry = text + voff;
            *elen = vlen;
            return KVS_SHM_HIT;
        }
        const char *next = treeobj_hdir_ref (hdir, treeobj_hdir_bucket_of (hdir, name));
        if (!next || blobref_validate (next) < 0)
            return KVS_SHM_MISS;    /* an empty bucket: let the KVS say ENOENT */
        memcpy (ref, next, BLOBREF_MAX);
    }
    return KVS_SHM_MISS;
}

/* If s[0..len-1] starts with lit, the rest of it (*rest, *rlen). */
static bool skip (const char *s, size_t len, const char *lit,
                  const char **rest, size_t *rlen)
{
    size_t n = strlen (lit);
    if (len < n || memcmp (s, lit, n) != 0)
        return false;
    *rest = s + n;
    *rlen = len - n;
    return true;
}

static bool is_b64 (char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
           || c == '+' || c == '/' || c == '=';
}

/* A val entry: its base64 text.  false if e is not one. */
static bool parse_val (const char *e, size_t elen, const char **b64, size_t *blen)
{
    static const char tail[] = "\",\"type\":\"val\",\"ver\":1}";
    const char *p;
    size_t n, i = 0;

    if (!skip (e, elen, "{\"data\":\"", &p, &n))
        return false;
    while (i < n && is_b64 (p[i]))
        i++;
    if (n - i != sizeof (tail) - 1 || memcmp (p + i, tail, n - i) != 0)
        return false;
    *b64 = p;
    *blen = i;
    return true;
}

/* A valref or dirref entry ('type'): its refs, each BLOBREF_STRLEN
 * characters at refs + i * (BLOBREF_STRLEN + 3) + 1.  Returns their number
 * (at least one), or 0 if e is not such an entry.
 */
static size_t parse_refs (const char *e, size_t elen, const char *type, const char **refs)
{
    const char *p;
    size_t n, count = 0;

    if (!skip (e, elen, "{\"data\":[", &p, &n))
        return 0;
    *refs = p;
    for (;;) {
        if (n < BLOBREF_STRLEN + 3 || p[0] != '"' || p[BLOBREF_STRLEN + 1] != '"')
            return 0;
        count++;
        if (p[BLOBREF_STRLEN + 2] == ']')
            break;
        if (p[BLOBREF_STRLEN + 2] != ',')
            return 0;
        p += BLOBREF_STRLEN + 3;
        n -= BLOBREF_STRLEN + 3;
    }
    p += BLOBREF_STRLEN + 3;
    n -= BLOBREF_STRLEN + 3;
    /* the tail ,"type":"TYPE","ver":1} piece by piece (no snprintf per get) */
    static const char t0[] = ",\"type\":\"", t1[] = "\",\"ver\":1}";
    size_t n0 = sizeof (t0) - 1, n1 = sizeof (t1) - 1, tlen = strlen (type);
    if (n != n0 + tlen + n1 || memcmp (p, t0, n0) != 0
        || memcmp (p + n0, type, tlen) != 0 || memcmp (p + n0 + tlen, t1, n1) != 0)
        return 0;
    return count;
}

/* Copy the i-th ref of parse_refs' list into ref; false if malformed. */
static bool ref_at (const char *refs, size_t i, char ref[BLOBREF_MAX])
{
    memcpy (ref, refs + i * (BLOBREF_STRLEN + 3) + 1, BLOBREF_STRLEN);
    ref[BLOBREF_STRLEN] = '\0';
    return blobref_validate (ref) == 0;
}

/* The value of a val or valref entry, copied out. */
static int entry_value (struct kvs_shm_reader *r, const char *e, size_t elen,
                        void **data, size_t *len)
{
    const char *b64, *refs;
    size_t blen, n;
    char ref[BLOBREF_MAX];

    if (parse_val (e, elen, &b64, &blen)) {
        if (!(*data = base64_decode (b64, blen, len)))
            return errno == ENOMEM ? -1 : KVS_SHM_MISS;
        return KVS_SHM_HIT;
    }
    if (!(n = parse_refs (e, elen, "valref", &refs)))
        return KVS_SHM_MISS;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        const char *chunk;
        uint64_t off, clen;
        if (!ref_at (refs, i, ref) || !find (r, ref, &chunk, &off, &clen))
            return KVS_SHM_MISS;
        total += clen;
        if (total > r->size)
            return KVS_SHM_MISS;
    }
    char *buf = malloc (total + 1);
    size_t pos = 0;
    if (!buf)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const char *chunk;
        uint64_t off, clen;
        /* found a moment ago; gone or longer now only if torn */
        if (!ref_at (refs, i, ref) || !find (r, ref, &chunk, &off, &clen)
            || clen > total - pos) {
            free (buf);
            return KVS_SHM_MISS;
        }
        memcpy (buf + pos, chunk, clen);
        pos += clen;
    }
    buf[pos] = '\0';
    *data = buf;
    *len = pos;
    return KVS_SHM_HIT;
}

/* Split a key as kvs_path_normalize would (empty components dropped)
 * into comps; 0 components (the root), an invalid component or too many
 * of them is a miss (the KVS answers those).  Returns the count or -1.
 */
static int split_key (char *buf, char **comps, int max)
{
    int n = 0;
    char *p = buf;

    while (*p) {
        while (*p == '.')
            p++;
        if (!*p)
            break;
        char *start = p;
        while (*p && *p != '.') {
            unsigned char c = (unsigned char)*p;
            if (c < 0x20 || c == 0x7f)
                return -1;
            p++;
        }
        if (p - start > KVS_MAX_COMPONENT || n == max)
            return -1;
        if (*p)
            *p++ = '\0';
        comps[n++] = start;
    }
    return n > 0 ? n : -1;
}

/* Where a walk of comps from rootref may start: the deepest level whose
 * directory the last path knows (its ref into ref).
 */
static int path_start (const struct kvs_shm_reader *r, const char *rootref,
                       char **comps, int n, char *ref)
{
    const struct last_path *p = &r->path;
    int level = 0;

    if (p->levels == 0 || strcmp (p->rootref, rootref) != 0)
        return 0;
    while (level < n - 1 && level < p->levels - 1
           && !strcmp (comps[level], p->key + p->comp[level]))
        level++;
    if (level > 0)
        memcpy (ref, p->refs[level], BLOBREF_MAX);
    return level;
}

/* Keep the path of a get that hit: comps[0..n-1] (in buf) from rootref,
 * refs[i] the directory comps[i] was found in, for i from start (the
 * levels above start are the kept path's own: path_start).
 */
static void path_keep (struct kvs_shm_reader *r, const char *rootref,
                       const char *buf, size_t klen, char **comps, int n,
                       int start, char refs[][BLOBREF_MAX])
{
    struct last_path *p = &r->path;
    int levels = n < PATH_LEVELS ? n : PATH_LEVELS;

    memcpy (p->rootref, rootref, BLOBREF_MAX);
    memcpy (p->key, buf, klen + 1);
    for (int i = 0; i < levels; i++) {
        p->comp[i] = (size_t)(comps[i] - buf);
        if (i >= start)
            memcpy (p->refs[i], refs[i], BLOBREF_MAX);
    }
    p->levels = levels;
}

static int try_get (struct kvs_shm_reader *r, const char *buf, size_t klen,
                    char **comps, int n, int min_version, void **data, size_t *len)
{
    char ref[BLOBREF_MAX];
    char rootref[BLOBREF_MAX];
    char refs[PATH_LEVELS][BLOBREF_MAX];
    int start;
    uint64_t seq = __atomic_load_n (&r->hdr->seq, __ATOMIC_ACQUIRE);

    if (seq & 1)
        return RETRY;
    if (__atomic_load_n (&r->hdr->closed, __ATOMIC_RELAXED))
        return KVS_SHM_CLOSED;
    int64_t version = __atomic_load_n (&r->hdr->version, __ATOMIC_RELAXED);
    memcpy (ref, r->hdr->rootref, BLOBREF_MAX);
    ref[BLOBREF_STRLEN] = '\0';
    if (!unchanged (r, seq))
        return RETRY;
    if (version < 0 || version < min_version || blobref_validate (ref) < 0)
        return KVS_SHM_MISS;
    memcpy (rootref, ref, BLOBREF_MAX);
    start = path_start (r, rootref, comps, n, ref);
    r->stats.levels_skipped += (uint64_t)start;
    for (int i = start; i < n; i++) {
        const char *e, *drefs;
        size_t elen;
        if (i < PATH_LEVELS)
            memcpy (refs[i], ref, BLOBREF_MAX);
        int rc = dir_entry (r, ref, comps[i], seq, &e, &elen);
        if (rc == KVS_SHM_MISS && !unchanged (r, seq))
            return RETRY;
        if (rc != KVS_SHM_HIT)
            return rc;
        if (i < n - 1) {
            if (parse_refs (e, elen, "dirref", &drefs) != 1 || !ref_at (drefs, 0, ref))
                return unchanged (r, seq) ? KVS_SHM_MISS : RETRY;
            continue;
        }
        rc = entry_value (r, e, elen, data, len);
        if (!unchanged (r, seq)) {
            if (rc == KVS_SHM_HIT)
                free (*data);
            return rc < 0 ? rc : RETRY;
        }
        if (rc == KVS_SHM_HIT)
            path_keep (r, rootref, buf, klen, comps, n, start, refs);
        return rc;
    }
    return KVS_SHM_MISS;
}

int kvs_shm_get (kvs_shm_reader_t *r, const char *key, int min_version,
                 void **data, size_t *len)
{
    char buf[KVS_MAX_KEY + 1];
    char *comps[KVS_MAX_KEY / 2 + 1];
    size_t klen;
    int n, rc = KVS_SHM_MISS;

    if (!r || !key || !data || !len) {
        errno = EINVAL;
        return -1;
    }
    if ((klen = strlen (key)) > KVS_MAX_KEY)
        goto miss;
    memcpy (buf, key, klen + 1);
    if ((n = split_key (buf, comps, KVS_MAX_KEY / 2 + 1)) < 0)
        goto miss;
    reader_populate (r);
    for (int tries = 0; tries < READ_TRIES; tries++) {
        if ((rc = try_get (r, buf, klen, comps, n, min_version, data, len)) != RETRY)
            break;
        r->stats.retries++;
        rc = KVS_SHM_MISS;
    }
    if (rc == KVS_SHM_HIT) {
        r->stats.hits++;
        return rc;
    }
    if (rc < 0)
        return -1;
miss:
    if (rc == KVS_SHM_MISS)
        r->stats.misses++;
    return rc;
}
