/* mkseeds.c - write the seed corpora of the fuzz targets with canopy's own
 * encoders, so the seeds are exactly what the code sends.
 *
 * Usage: mkseeds DIR   (writes DIR/<target>/<name>; DIR is fuzz/corpus)
 * Run by hand ('make -C fuzz seeds') when a wire format changes; the
 * output is committed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <canopy/canopy.h>
#include "src/common/libcanopy/msg_stream.h"
#include "src/common/libkvs/treeobj.h"
#include "src/common/libkvs/kvs_wire.h"
#include "src/common/libkvs/kvs_txn.h"
#include "src/common/libkvs/blobtab.h"
#include "src/common/libkvs/blobrecs.h"
#include "src/common/libutil/blobref.h"
#include "src/modules/content/loadbatch.h"

static const char *topdir;

static void put (const char *target, const char *name, const void *data, size_t len)
{
    char path[4096];
    FILE *f;
    snprintf (path, sizeof (path), "%s/%s", topdir, target);
    (void)mkdir (path, 0755);
    snprintf (path, sizeof (path), "%s/%s/%s", topdir, target, name);
    if (!(f = fopen (path, "wb")) || fwrite (data, 1, len, f) != len || fclose (f) != 0) {
        fprintf (stderr, "mkseeds: %s: %s\n", path, strerror (errno));
        exit (1);
    }
}

static void put_str (const char *target, const char *name, const char *s)
{
    put (target, name, s, strlen (s));
}

static canopy_msg_t *request (const char *topic, const char *json, uint32_t nodeid)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    if (!msg || canopy_msg_set_topic (msg, topic) < 0
        || (json && canopy_msg_set_string (msg, json) < 0)
        || canopy_msg_set_nodeid (msg, nodeid) < 0
        || canopy_msg_set_matchtag (msg, 42) < 0) {
        fprintf (stderr, "mkseeds: cannot build a message\n");
        exit (1);
    }
    return msg;
}

static void put_msg (const char *name, canopy_msg_t *msg)
{
    void *buf;
    size_t len;
    if (canopy_msg_encode (msg, &buf, &len) < 0) {
        fprintf (stderr, "mkseeds: encode: %s\n", strerror (errno));
        exit (1);
    }
    put ("msg_decode", name, buf, len);
    free (buf);
}

static void msg_seeds (canopy_msg_t **all, int *n)
{
    canopy_msg_t *m;

    m = request ("kvs.lookup", "{\"key\":\"a.b\",\"flags\":0}", CANOPY_NODEID_ANY);
    put_msg ("request-json", m);
    all[(*n)++] = m;

    m = request ("broker.ping", "{\"seq\":1,\"pad\":\"pppp\"}", 3);
    canopy_msg_route_enable (m);
    canopy_msg_route_push (m, "0:c1");
    canopy_msg_route_push (m, "1");
    canopy_msg_route_push (m, "3");
    canopy_msg_set_userid (m, 1000);
    canopy_msg_set_rolemask (m, CANOPY_ROLE_OWNER | CANOPY_ROLE_LOCAL);
    put_msg ("request-routed", m);
    all[(*n)++] = m;

    m = request ("attr.get", NULL, CANOPY_NODEID_UPSTREAM);
    canopy_msg_set_flag (m, CANOPY_MSGFLAG_NORESPONSE, true);
    put_msg ("request-nopayload", m);
    all[(*n)++] = m;

    m = request ("content.store", NULL, CANOPY_NODEID_ANY);
    canopy_msg_set_payload (m, "\x00\x01\x02\xff raw", 8);
    canopy_msg_set_flag (m, CANOPY_MSGFLAG_RAW, true);
    put_msg ("request-raw", m);
    all[(*n)++] = m;

    canopy_msg_t *req = request ("kvs.get", "{}", 0);
    canopy_msg_route_enable (req);
    canopy_msg_route_push (req, "0:c7");
    m = canopy_response_derive (req, ENOENT);
    canopy_msg_set_string (m, "no such key");
    put_msg ("response-error", m);
    all[(*n)++] = m;
    canopy_msg_decref (req);

    m = canopy_msg_create (CANOPY_MSGTYPE_EVENT);
    canopy_msg_set_topic (m, "kvs.setroot");
    canopy_msg_set_seq (m, 17);
    canopy_msg_set_string (m, "{\"version\":3,\"rootref\":\"sha256-"
                           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"}");
    put_msg ("event", m);
    all[(*n)++] = m;

    m = canopy_msg_create (CANOPY_MSGTYPE_CONTROL);
    canopy_msg_set_control (m, 1, 0);
    put_msg ("control", m);
    all[(*n)++] = m;

    m = request ("exec.start", "{\"jobid\":1}", 2);
    canopy_msg_set_flag (m, CANOPY_MSGFLAG_STREAMING, true);
    put_msg ("request-streaming", m);
    all[(*n)++] = m;
}

static void stream_seeds (canopy_msg_t **all, int n)
{
    char *buf = NULL;
    size_t len = 1;

    /* all messages back to back, chunk seed byte first */
    buf = malloc (1);
    buf[0] = 7;
    for (int i = 0; i < n; i++) {
        size_t flen;
        void *frame = msg_frame_encode (all[i], &flen);
        buf = realloc (buf, len + flen);
        memcpy (buf + len, frame, flen);
        len += flen;
        free (frame);
    }
    put ("msg_stream", "all-types", buf, len);
    /* one good frame followed by a well-framed bad record */
    size_t flen;
    void *frame = msg_frame_encode (all[0], &flen);
    char bad[1 + 64];
    size_t blen = 0;
    bad[blen++] = 0;
    memcpy (bad + blen, frame, flen < 40 ? flen : 40);
    put ("msg_stream", "good-then-truncated", bad, 1 + (flen < 40 ? flen : 40));
    char *two = malloc (1 + flen + 9);
    two[0] = 200;
    memcpy (two + 1, frame, flen);
    memcpy (two + 1 + flen, "\0\0\0\5hello", 9);
    put ("msg_stream", "good-then-garbage", two, 1 + flen + 9);
    free (two);
    free (frame);
    /* a header claiming 4 GiB */
    put ("msg_stream", "huge-claim", "\x01\xff\xff\xff\xff", 5);
    free (buf);
}

static void put_json (const char *target, const char *name, json_t *o)
{
    size_t len;
    char *s = treeobj_encode (o, &len);
    if (!s) {
        fprintf (stderr, "mkseeds: treeobj_encode %s failed\n", name);
        exit (1);
    }
    put (target, name, s, len);
    free (s);
}

static void treeobj_seeds (const char *ref1, const char *ref2)
{
    json_t *val = treeobj_create_val ("hello world", 11);
    json_t *valref = treeobj_create_valref ();
    treeobj_append_blobref (valref, ref1);
    treeobj_append_blobref (valref, ref2);
    json_t *dirref = treeobj_create_dirref (ref1);
    json_t *sym = treeobj_create_symlink ("a.b.c");
    json_t *dir = treeobj_create_dir ();
    treeobj_dir_set (dir, "v", json_incref (val));
    treeobj_dir_set (dir, "r", json_incref (valref));
    treeobj_dir_set (dir, "d", json_incref (dirref));
    treeobj_dir_set (dir, "s", json_incref (sym));
    treeobj_dir_set (dir, "e", treeobj_create_dir ());
    json_t *hdir = treeobj_create_hdir (1);
    treeobj_hdir_set_slot (hdir, 3, json_string (ref1));
    treeobj_hdir_set_slot (hdir, 15, json_string (ref2));
    treeobj_hdir_set_count (hdir, 200);
    put_json ("treeobj", "val", val);
    put_json ("treeobj", "valref", valref);
    put_json ("treeobj", "dirref", dirref);
    put_json ("treeobj", "symlink", sym);
    put_json ("treeobj", "dir", dir);
    put_json ("treeobj", "hdir", hdir);
    put_str ("treeobj", "not-a-treeobj", "{\"ver\":2,\"type\":\"val\",\"data\":\"\"}");
    json_decref (val);
    json_decref (valref);
    json_decref (dirref);
    json_decref (sym);
    json_decref (dir);
    json_decref (hdir);
}

/* A kvs_wire seed: the flags byte (bit 0: verify), then the payload
 * (which is freed).
 */
static void put_wire (const char *name, int verify, void *buf, size_t len)
{
    char *p = malloc (len + 1);
    p[0] = verify;
    memcpy (p + 1, buf, len);
    put ("kvs_wire", name, p, len + 1);
    free (p);
    free (buf);
}

static void kvs_wire_seeds (void)
{
    blobtab_t *blobs = blobtab_create ();
    char ref[BLOBREF_MAX];
    blobtab_add (blobs, NULL, "a blob of data", 14, ref, sizeof (ref));
    json_t *valref = treeobj_create_valref ();
    treeobj_append_blobref (valref, ref);
    json_t *ops = json_pack ("[[s,o] [s,o] [s,n] [s,o] [s,o]]",
                             "a.b", treeobj_create_val ("1", 1),
                             "big", valref,
                             "gone",
                             "link", treeobj_create_symlink ("a.b"),
                             "dir", treeobj_create_dir ());
    json_t *fences = json_pack ("[{s:s s:i s:i s:i s:O}]", "name", "commit.0.1.1",
                                "nprocs", 1, "flags", 0, "count", 1, "ops", ops);
    void *buf;
    size_t len;
    for (int verify = 0; verify < 2; verify++) {
        kvs_wire_encode (fences, blobs, &buf, &len);
        put_wire (verify ? "commit-verify" : "commit-relay", verify, buf, len);
    }
    /* the general shape the decoder accepts: two fences, one carrying an
     * error (named "relay" for history; relays have their own format) */
    json_t *batch = json_pack ("[{s:s s:i s:i s:i s:O} {s:s s:i s:i s:i s:i s:s}]",
                               "name", "job.1.pmi", "nprocs", 64, "flags", 0,
                               "count", 8, "ops", ops,
                               "name", "f2", "nprocs", 2, "flags", 0, "count", 1,
                               "errnum", 110, "errstr", "timed out");
    kvs_wire_encode (batch, blobs, &buf, &len);
    put_wire ("relay-two-fences", 0, buf, len);
    json_decref (batch);
    json_decref (fences);
    json_decref (ops);
    blobtab_destroy (blobs);
    /* the form the client library writes (kvs_wire_scan reads it): inline
     * values, a valref with its blob, an unlink */
    kvs_txn_t *txn = kvs_txn_create ();
    char big[200];
    memset (big, 'v', sizeof (big));
    kvs_txn_put_raw (txn, "kap.0.1.0.3", "12345678", 8);
    kvs_txn_put_raw (txn, "kap.0.1.0.4", big, sizeof (big));
    kvs_txn_unlink (txn, "old");
    if (kvs_txn_encode (txn, "kap.0.sync", 32, 0, &buf, &len) == 0)
        put_wire ("client-form", 1, buf, len);
    kvs_txn_destroy (txn);
}

/* blob records as kvs.prime carries them: none, an empty blob, two */
static void blobrecs_seeds (void)
{
    const char *d[2] = { "", "a value of a collective fence" };
    char ref[BLOBREF_MAX];
    uint8_t buf[512], *p = buf;
    for (int i = 0; i < 2; i++) {
        blobref_hash (d[i], strlen (d[i]), ref, sizeof (ref));
        p = blobrecs_put (p, ref, d[i], strlen (d[i]));
        if (i == 0)
            put ("blobrecs", "one-empty", buf, p - buf);
    }
    put ("blobrecs", "two", buf, p - buf);
    put ("blobrecs", "truncated", buf, p - buf - 3);
}

/* content.load-batch requests as loadq makes them: one ref, a full
 * batch, and a torn one
 */
static void load_batch_seeds (void)
{
    loadq_t *q = loadq_create ();
    char ref[BLOBREF_MAX], name[32];
    char *buf;
    size_t len;
    int count;

    for (int i = 0; q && i < 1 + LOAD_BATCH_MAX; i++) {
        snprintf (name, sizeof (name), "blob %d", i);
        blobref_hash (name, strlen (name), ref, sizeof (ref));
        if (loadq_push (q, ref) < 0)
            break;
    }
    if (!q || !(buf = loadq_next (q, &len, &count))) {
        fprintf (stderr, "mkseeds: loadq failed\n");
        exit (1);
    }
    put ("load_batch", "full", buf, len);
    put ("load_batch", "torn", buf, len - 5);
    free (buf);
    if (!(buf = loadq_next (q, &len, &count))) {
        fprintf (stderr, "mkseeds: loadq failed\n");
        exit (1);
    }
    put ("load_batch", "one", buf, len);
    free (buf);
    loadq_destroy (q);
}

/* kvs_shm inputs are patches (offset, byte) of its test segment: none,
 * and one each in the header's seqlock word, closed flag and rootref, in
 * the table and in the arena.
 */
static void kvs_shm_seeds (void)
{
    static const struct {
        const char *name;
        uint32_t off;
        uint8_t byte;
    } p[] = {
        { "seq-odd", 56, 1 }, { "closed", 64, 1 }, { "rootref", 98, 'x' },
        { "table", 170, 0x7f }, { "arena", 2306, '{' },
    };
    put ("kvs_shm", "none", "", 0);
    for (size_t i = 0; i < sizeof (p) / sizeof (p[0]); i++) {
        uint8_t buf[5] = { p[i].off & 0xff, (p[i].off >> 8) & 0xff,
                           (p[i].off >> 16) & 0xff, p[i].off >> 24, p[i].byte };
        put ("kvs_shm", p[i].name, buf, sizeof (buf));
    }
}

int main (int argc, char *argv[])
{
    canopy_msg_t *all[16];
    int n = 0;
    char ref1[BLOBREF_MAX], ref2[BLOBREF_MAX];

    if (argc != 2) {
        fprintf (stderr, "Usage: mkseeds DIR\n");
        return 1;
    }
    topdir = argv[1];
    (void)mkdir (topdir, 0755);
    msg_seeds (all, &n);
    stream_seeds (all, n);
    for (int i = 0; i < n; i++)
        canopy_msg_decref (all[i]);

    blobref_hash ("one", 3, ref1, sizeof (ref1));
    blobref_hash ("two", 3, ref2, sizeof (ref2));
    treeobj_seeds (ref1, ref2);
    blobrecs_seeds ();
    load_batch_seeds ();
    kvs_shm_seeds ();

    put_str ("kvs_lookup_wire", "plain", "{\"key\":\"a.b.c\",\"flags\":0}");
    put_str ("kvs_lookup_wire", "reordered", " { \"flags\" : 12 , \"key\" : \"pmi.kvs-1[3]\" } ");
    put_str ("kvs_lookup_wire", "escaped", "{\"key\":\"q\\\"\\u00e9\",\"flags\":-1}");
    put_str ("kvs_lookup_wire", "extra", "{\"key\":\"k\",\"x\":[1,{\"y\":null}]}");
    put_str ("kvs_lookup_wire", "dup", "{\"key\":\"a\",\"key\":\"b\"}");
    put_str ("kvs_lookup_wire", "real-flags", "{\"key\":\"a\",\"flags\":1.5}");

    put_str ("json_fast", "dir", "{\"data\":{\"p0\":{\"data\":\"AAAAAAAAAAA=\","
             "\"type\":\"val\",\"ver\":1}},\"type\":\"dir\",\"ver\":1}");
    put_str ("json_fast", "numbers", "[0,-0,1.5,-2e-3,1E+2,9223372036854775807,1e400]");
    put_str ("json_fast", "literals", " [true , false,null,{},[]] ");
    put_str ("json_fast", "escapes", "{\"a\\nb\":\"\\u00e9\",\"a\":1}");
    put_str ("json_fast", "scalar", "\"s\"");
    put_str ("json_fast", "utf8", "[\"caf\xc3\xa9\"]");
    put_str ("json_fast_dump", "txn", "[{\"name\":\"kap.1.sync\",\"nprocs\":32,"
             "\"flags\":0,\"count\":1,\"ops\":[[\"kap.1.0.0.3\",{\"ver\":1,"
             "\"type\":\"val\",\"data\":\"AAAAAAAAAAA=\"}]]}]");
    put_str ("json_fast_dump", "numbers", "[0,-1,1.5,-2e-3,9223372036854775807,-9223372036854775808]");
    put_str ("json_fast_dump", "literals", "[true,false,null,{},[],\"\"]");
    put_str ("json_fast_dump", "escapes", "{\"a\\nb\":\"\\u00e9\",\"q\":\"\\\"\",\"s\":\"a/b\"}");
    put_str ("json_fast_dump", "order", "{\"z\":1,\"a\":2,\"m\":{\"y\":[3],\"b\":4}}");
    put_str ("json_fast_dump", "scalar", "\"s\"");
    put_str ("json_fast_dump", "utf8", "[\"caf\xc3\xa9\",\"\\u0000\"]");

    put_str ("blobref", "valid", ref1);
    char upper[BLOBREF_MAX];
    strcpy (upper, ref2);
    upper[10] = 'A';
    put_str ("blobref", "uppercase", upper);
    put_str ("blobref", "short", "sha256-0123");
    put_str ("blobref", "other-hash", "sha1-da39a3ee5e6b4b0d3255bfef95601890afd80709");

    put_str ("base64", "empty", "");
    put_str ("base64", "one-pad", "Zm9vYmE=");
    put_str ("base64", "two-pads", "Zm9vYg==");
    put_str ("base64", "no-pad", "Zm9vYmFy");
    put_str ("base64", "leftover-bits", "Zh==");
    put_str ("base64", "pad-inside", "Zg==Zg==");
    put_str ("base64", "url-alphabet", "-_8=");

    put_str ("pmi_wire", "init", "cmd=init pmi_version=1 pmi_subversion=1\n");
    put_str ("pmi_wire", "put", "cmd=put kvsname=canopy-1 key=PMI_process_mapping "
             "value=(vector,(0,4,2))\n");
    put_str ("pmi_wire", "put-spaces", "cmd=put kvsname=k key=4242-1-key0 value=a b  c \n");
    put_str ("pmi_wire", "get", "cmd=get kvsname=canopy-1 key=k\n");
    put_str ("pmi_wire", "get-result", "cmd=get_result rc=0 msg=success value=xyz\n");
    put_str ("pmi_wire", "barrier", "cmd=barrier_in\n");
    put_str ("pmi_wire", "maxes", "cmd=maxes kvsname_max=256 keylen_max=256 vallen_max=1024\n");
    put_str ("pmi_wire", "spawn", "mcmd=spawn\n");
    put_str ("pmi_wire", "abort", "cmd=abort exitcode=7 msg=bye\n");
    put_str ("pmi_wire", "initack", "cmd=initack pmiid=3\n");
    put_str ("pmi_wire", "duplicate-key", "cmd=get key=a key=b\n");

    kvs_wire_seeds ();
    return 0;
}
