/* sockabuse - misbehave on a broker's local socket (abuse tests, t08xx).
 *
 * Usage:
 *   sockabuse burst N SOCKET
 *       Write N broker.ping requests in ONE send(), then read the answers.
 *       Prints "answers N"; exit 1 if fewer than N came back within 60 s.
 *   sockabuse fuzz [--count N] [--seed S] SOCKET
 *       Send N (default 100000) mutated copies of real encoded requests
 *       (ping, attr.get, kvs.lookup/watch/commit/fence, testmod.echo):
 *       bits flipped, bytes overwritten, records truncated or extended,
 *       internal lengths and the frame length changed, frames spliced.
 *       Each mutated frame is followed by an intact ping, and the answer
 *       to that ping (or the broker closing the connection) is awaited
 *       before the next one, so the broker parses every mutated message
 *       and each drop is attributed to one message; after a drop the
 *       helper reconnects.  A frame whose length field lies is padded to
 *       the length it claims, so nothing waits for bytes that never come.
 *       Prints: seed, sent, dropped (connections the broker closed),
 *       answers (to the mutated messages), broker pid (SO_PEERCRED) and
 *       its VmRSS in KiB before and after, then checks that a fresh
 *       connection still gets a ping answered ("alive yes").  Exit 1 if it
 *       does not.
 *   sockabuse creds TOPIC USERID ROLEMASK [JSON] SOCKET
 *       Send one request whose header claims USERID and ROLEMASK (the
 *       broker must overwrite them unless the sender is the instance owner)
 *       and print the answer payload, or "error ERRNUM: TEXT" (exit 0
 *       either way; 1 on connection problems or no answer).
 *   sockabuse malformed KIND SOCKET
 *       Send one hand-made bad message of KIND (see 'kinds' below), then
 *       print what happened: "closed by broker", "answer ERRNUM[: TEXT]" or
 *       "no answer, still open" (after 2 s without an answer; that is only
 *       the expected outcome for answers clients never get).
 *   sockabuse claim BYTES SOCKET
 *       Send a frame header claiming BYTES and 64 KiB of the frame, then
 *       (with that connection open) get a ping answered on a second one and
 *       print the broker's VmRSS and VmSize growth in KiB and whether the
 *       first connection was closed.
 *   sockabuse kvswire TOPIC HEADER-JSON SOCKET
 *       Send TOPIC with a kvs_wire payload made of HEADER-JSON and no blob
 *       bytes (raw fence headers, tree objects no client library would
 *       send); print the answer as for creds.
 *   sockabuse fences [--as UID] N PREFIX NPROCS EXPECT SOCKET
 *       Open N fences PREFIX.0 .. PREFIX.N-1 of NPROCS participants on one
 *       connection (each joined once, so they stay open), wait for EXPECT
 *       answers (the refusals), print them by kind ("refused-EAGAIN N"),
 *       the kvs module's fence counts (kvs.stats) and the broker's VmRSS
 *       growth, then disconnect (which fails the fences still open).
 *       --as UID: the instance owner presents UID (owner role) instead of
 *       its own, to show the cap is per user.
 *
 * The byte stream is the local connector's: a 4-byte big-endian length and
 * the flat record of canopy_msg_encode() (msg_stream.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <canopy/canopy.h>
#include "src/common/libcanopy/msg_stream.h"
#include "src/common/libkvs/kvs_txn.h"

static const char *sockpath;

static void die (const char *what)
{
    fprintf (stderr, "sockabuse: %s: %s\n", what, strerror (errno));
    exit (1);
}

static int sock_connect (void)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    int fd;

    if (strlen (sockpath) >= sizeof (addr.sun_path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy (addr.sun_path, sockpath);
    if ((fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -1;
    if (connect (fd, (struct sockaddr *)&addr, sizeof (addr)) < 0) {
        close (fd);
        return -1;
    }
    return fd;
}

static pid_t peer_pid (int fd)
{
    struct ucred cred;
    socklen_t len = sizeof (cred);
    if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
        return -1;
    return cred.pid;
}

static long vmrss_kib (pid_t pid)
{
    char path[64], line[256];
    long kib = -1;
    FILE *f;
    snprintf (path, sizeof (path), "/proc/%d/status", (int)pid);
    if (!(f = fopen (path, "r")))
        return -1;
    while (fgets (line, sizeof (line), f)) {
        if (!strncmp (line, "VmRSS:", 6)) {
            kib = strtol (line + 6, NULL, 10);
            break;
        }
    }
    fclose (f);
    return kib;
}

static canopy_msg_t *mkrequest (const char *topic, const char *json, uint32_t nodeid,
                                uint32_t matchtag)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST);
    if (!msg || canopy_msg_set_topic (msg, topic) < 0
        || (json && canopy_msg_set_string (msg, json) < 0)
        || canopy_msg_set_nodeid (msg, nodeid) < 0
        || canopy_msg_set_matchtag (msg, matchtag) < 0)
        die ("building a request");
    return msg;
}

static void send_all (int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send (fd, p, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die ("send");
        }
        p += n;
        len -= n;
    }
}

/* Read whole answers until 'want' have arrived or timeout_ms passes with
 * nothing.  Returns the count; *resp (if non-NULL) gets the last one.
 */
static int read_answers (int fd, int want, int timeout_ms, canopy_msg_t **resp)
{
    struct msg_instream in;
    int got = 0;

    msg_instream_init (&in);
    while (got < want) {
        canopy_msg_t *msg = msg_instream_next (&in);
        if (msg) {
            got++;
            if (resp) {
                canopy_msg_decref (*resp);
                *resp = msg;
            }
            else
                canopy_msg_decref (msg);
            continue;
        }
        if (errno != EAGAIN)
            break;
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        if (poll (&pfd, 1, timeout_ms) <= 0)
            break;
        if (msg_instream_fill (&in, fd) <= 0 && errno != EAGAIN)
            break;
    }
    msg_instream_release (&in);
    return got;
}

/* burst */

static int cmd_burst (int n)
{
    size_t total = 0, cap = 0;
    char *all = NULL;
    int fd;

    for (int i = 0; i < n; i++) {
        canopy_msg_t *msg = mkrequest ("broker.ping", "{\"seq\":1}",
                                       CANOPY_NODEID_ANY, i + 1);
        size_t len;
        void *frame = msg_frame_encode (msg, &len);
        if (!frame)
            die ("encode");
        if (total + len > cap) {
            cap = (total + len) * 2;
            if (!(all = realloc (all, cap)))
                die ("realloc");
        }
        memcpy (all + total, frame, len);
        total += len;
        free (frame);
        canopy_msg_decref (msg);
    }
    if ((fd = sock_connect ()) < 0)
        die (sockpath);
    send_all (fd, all, total);
    int got = read_answers (fd, n, 60000, NULL);
    printf ("answers %d\n", got);
    free (all);
    close (fd);
    return got == n ? 0 : 1;
}

/* creds */

static int cmd_creds (const char *topic, uint32_t userid, uint32_t rolemask,
                      const char *json)
{
    canopy_msg_t *msg = mkrequest (topic, json, CANOPY_NODEID_ANY, 1);
    canopy_msg_t *resp = NULL;
    void *frame;
    size_t len;
    int fd, errnum = 0;
    const char *s = NULL;

    if (canopy_msg_set_userid (msg, userid) < 0
        || canopy_msg_set_rolemask (msg, rolemask) < 0
        || !(frame = msg_frame_encode (msg, &len)))
        die ("encode");
    if ((fd = sock_connect ()) < 0)
        die (sockpath);
    send_all (fd, frame, len);
    if (read_answers (fd, 1, 60000, &resp) != 1) {
        fprintf (stderr, "sockabuse: no answer\n");
        return 1;
    }
    (void)canopy_msg_get_errnum (resp, &errnum);
    (void)canopy_msg_get_string (resp, &s);
    if (errnum)
        printf ("error %d: %s\n", errnum, s ? s : strerror (errnum));
    else
        printf ("%s\n", s ? s : "");
    canopy_msg_decref (resp);
    canopy_msg_decref (msg);
    free (frame);
    close (fd);
    return 0;
}

/* fuzz */

static uint64_t rng_state;

static uint32_t rnd (void)
{
    /* xorshift64*: reproducible from --seed */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ULL) >> 32);
}

static uint32_t rnd_below (uint32_t n)
{
    return n ? rnd () % n : 0;
}

struct seed {
    void *rec;              /* flat record, no length prefix */
    size_t len;
};

static void add_seed (struct seed *seeds, int *n, canopy_msg_t *msg)
{
    if (canopy_msg_encode (msg, &seeds[*n].rec, &seeds[*n].len) < 0)
        die ("encode");
    (*n)++;
    canopy_msg_decref (msg);
}

static void add_txn_seed (struct seed *seeds, int *n, const char *topic,
                          const char *name, int nprocs)
{
    kvs_txn_t *txn = kvs_txn_create ();
    void *buf;
    size_t len;
    if (!txn || kvs_txn_put_raw (txn, "abuse.key", "value", 5) < 0
        || kvs_txn_symlink (txn, "abuse.link", "abuse.key") < 0
        || kvs_txn_encode (txn, name, nprocs, 0, &buf, &len) < 0)
        die ("kvs_txn");
    canopy_msg_t *msg = mkrequest (topic, NULL, CANOPY_NODEID_ANY, 7);
    if (canopy_msg_set_payload (msg, buf, len) < 0
        || canopy_msg_set_flag (msg, CANOPY_MSGFLAG_RAW, true) < 0)
        die ("payload");
    add_seed (seeds, n, msg);
    free (buf);
    kvs_txn_destroy (txn);
}

static int make_seeds (struct seed *seeds)
{
    int n = 0;
    canopy_msg_t *m;

    add_seed (seeds, &n, mkrequest ("broker.ping", "{\"seq\":1,\"pad\":\"pppppppp\"}",
                                    CANOPY_NODEID_ANY, 1));
    add_seed (seeds, &n, mkrequest ("broker.ping", "{\"seq\":2}", 1, 2));
    add_seed (seeds, &n, mkrequest ("attr.get", "{\"name\":\"size\"}",
                                    CANOPY_NODEID_ANY, 3));
    add_seed (seeds, &n, mkrequest ("kvs.lookup", "{\"key\":\"abuse.key\",\"flags\":0}",
                                    CANOPY_NODEID_ANY, 4));
    m = mkrequest ("kvs.watch", "{\"key\":\"abuse.key\",\"flags\":0}",
                   CANOPY_NODEID_ANY, 5);
    canopy_msg_set_flag (m, CANOPY_MSGFLAG_STREAMING, true);
    add_seed (seeds, &n, m);
    add_seed (seeds, &n, mkrequest ("testmod.echo", "{\"a\":[1,2,{\"b\":null}]}",
                                    CANOPY_NODEID_ANY, 6));
    add_txn_seed (seeds, &n, "kvs.commit", "commit", 1);
    add_txn_seed (seeds, &n, "kvs.fence", "abuse.fence", 2);
    m = mkrequest ("broker.ping", NULL, CANOPY_NODEID_UPSTREAM, 8);
    canopy_msg_set_flag (m, CANOPY_MSGFLAG_NORESPONSE, true);
    add_seed (seeds, &n, m);
    return n;
}

/* Offsets of the length fields inside a flat record (msg_codec.c). */
static size_t length_field (const uint8_t *rec, size_t len)
{
    size_t p = 20;
    uint8_t flags = len > 3 ? rec[3] : 0;
    size_t choices[4];
    int n = 0;

    if ((flags & CANOPY_MSGFLAG_ROUTE) && p < len) {
        choices[n++] = p;                   /* route count */
        p += 1;
    }
    if ((flags & CANOPY_MSGFLAG_TOPIC) && p < len) {
        choices[n++] = p;                   /* topic length */
        p += 1 + rec[p];
    }
    if ((flags & CANOPY_MSGFLAG_PAYLOAD) && p + 4 <= len)
        choices[n++] = p + rnd_below (4);   /* a byte of the payload length */
    return n ? choices[rnd_below (n)] : 3;
}

/* Build one mutated frame (length prefix + record) into buf; returns size. */
static size_t mutate (const struct seed *s, const struct seed *other,
                      uint8_t *buf, size_t cap)
{
    size_t len = s->len;
    uint8_t *rec = buf + 4;
    uint32_t prefix;
    int how = rnd_below (10);

    memcpy (rec, s->rec, len);
    switch (how) {
        case 0:     /* flip 1..8 bits */
            for (int i = 1 + rnd_below (8); i > 0; i--)
                rec[rnd_below (len)] ^= 1 << rnd_below (8);
            break;
        case 1: {   /* overwrite a byte with an interesting value */
            static const uint8_t vals[] = { 0, 1, 0x7f, 0x80, 0xfe, 0xff, '.', '"' };
            rec[rnd_below (len)] = vals[rnd_below (sizeof (vals))];
            break;
        }
        case 2:     /* truncate */
            len = rnd_below (len);
            break;
        case 3: {   /* extend with random bytes */
            size_t extra = 1 + rnd_below (64);
            for (size_t i = 0; i < extra && len < cap - 4; i++)
                rec[len++] = rnd ();
            break;
        }
        case 4:     /* change an internal length */
            rec[length_field (rec, len)] = rnd ();
            break;
        case 5:     /* header fields: type, flags, userid, rolemask, nodeid */
            rec[2 + rnd_below (18)] = rnd ();
            break;
        case 6: {   /* splice: our head, the other's tail */
            size_t cut = rnd_below (len);
            size_t ocut = rnd_below (other->len);
            size_t tail = other->len - ocut;
            if (cut + tail > cap - 4)
                tail = cap - 4 - cut;
            memcpy (rec + cut, (const uint8_t *)other->rec + ocut, tail);
            len = cut + tail;
            break;
        }
        default:    /* 7..9: intact (the broker must go on answering) */
            break;
    }
    prefix = len;
    if (rnd_below (50) == 0) {          /* a lying frame length */
        switch (rnd_below (8)) {
            case 0:     /* over the limit: dropped at once */
                prefix = 0xffffffff - rnd_below (1000);
                break;
            case 1:     /* longer by up to 4 KiB, padded with junk */
                prefix = len + 1 + rnd_below (4096);
                break;
            default:    /* longer by a little, padded with junk */
                prefix = len + 1 + rnd_below (8);
                break;
        }
        while (len < prefix && len < cap - 4)
            rec[len++] = rnd ();
    }
    buf[0] = prefix >> 24;
    buf[1] = prefix >> 16;
    buf[2] = prefix >> 8;
    buf[3] = prefix;
    return 4 + len;
}

#define SYNC_TAG 0x5ca1ab1e

/* Read until the answer to the sync ping arrives (0) or the broker closes
 * the connection (-1), counting the other answers.
 */
static int await_sync (int fd, struct msg_instream *in, long *answers)
{
    for (;;) {
        canopy_msg_t *msg;
        while ((msg = msg_instream_next (in))) {
            uint32_t tag = 0;
            (void)canopy_msg_get_matchtag (msg, &tag);
            canopy_msg_decref (msg);
            if (tag == SYNC_TAG)
                return 0;
            (*answers)++;
        }
        if (errno != EAGAIN)
            return -1;      /* the broker sent something we cannot decode */
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        if (poll (&pfd, 1, -1) < 0 && errno != EINTR)
            return -1;
        ssize_t n = msg_instream_fill (in, fd);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
            return -1;
    }
}

static int send_some (int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send (fd, p, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += n;
        len -= n;
    }
    return 0;
}

static int ping_ok (void)
{
    canopy_msg_t *msg = mkrequest ("broker.ping", "{\"seq\":99}", CANOPY_NODEID_ANY, 99);
    canopy_msg_t *resp = NULL;
    void *frame;
    size_t len;
    int fd, errnum = -1;

    if (!(frame = msg_frame_encode (msg, &len)) || (fd = sock_connect ()) < 0)
        return 0;
    send_all (fd, frame, len);
    if (read_answers (fd, 1, 60000, &resp) == 1)
        (void)canopy_msg_get_errnum (resp, &errnum);
    canopy_msg_decref (resp);
    canopy_msg_decref (msg);
    free (frame);
    close (fd);
    return errnum == 0;
}

static int cmd_fuzz (long count, uint64_t seed)
{
    struct seed seeds[16];
    int nseeds = make_seeds (seeds);
    uint8_t buf[16384];
    uint8_t *sync;
    size_t synclen;
    long sent = 0, dropped = 0, answers = 0;
    int fd;
    pid_t pid;
    long rss0, rss1;
    struct msg_instream in;

    rng_state = seed ? seed : 0x9e3779b97f4a7c15ULL;
    printf ("seed %llu\n", (unsigned long long)rng_state);
    fflush (stdout);
    canopy_msg_t *ping = mkrequest ("broker.ping", "{\"seq\":0}", CANOPY_NODEID_ANY,
                                    SYNC_TAG);
    if (!(sync = msg_frame_encode (ping, &synclen)))
        die ("encode");
    canopy_msg_decref (ping);
    msg_instream_init (&in);
    if ((fd = sock_connect ()) < 0)
        die (sockpath);
    if ((pid = peer_pid (fd)) < 0)
        die ("SO_PEERCRED");
    rss0 = vmrss_kib (pid);
    while (sent < count) {
        const struct seed *s = &seeds[rnd_below (nseeds)];
        const struct seed *o = &seeds[rnd_below (nseeds)];
        size_t len = mutate (s, o, buf, sizeof (buf) - synclen);
        memcpy (buf + len, sync, synclen);
        sent++;
        if (send_some (fd, buf, len + synclen) < 0 || await_sync (fd, &in, &answers) < 0) {
            /* the broker dropped us: reconnect */
            dropped++;
            close (fd);
            msg_instream_release (&in);
            msg_instream_init (&in);
            if ((fd = sock_connect ()) < 0)
                die ("reconnect");
        }
    }
    free (sync);
    msg_instream_release (&in);
    close (fd);
    int alive = ping_ok ();
    rss1 = vmrss_kib (pid);
    printf ("sent %ld\n", sent);
    printf ("dropped %ld\n", dropped);
    printf ("answers %ld\n", answers);
    printf ("broker-pid %d\n", (int)pid);
    printf ("rss-before-kib %ld\n", rss0);
    printf ("rss-after-kib %ld\n", rss1);
    printf ("alive %s\n", alive ? "yes" : "no");
    for (int i = 0; i < nseeds; i++)
        free (seeds[i].rec);
    return alive ? 0 : 1;
}

/* malformed */

static void put32 (uint8_t *p, uint32_t v)
{
    p[0] = v >> 24;
    p[1] = v >> 16;
    p[2] = v >> 8;
    p[3] = v;
}

/* Turn an encoded record into a frame (prefix = actual length). */
static size_t frame_of (uint8_t *buf, size_t reclen)
{
    put32 (buf, reclen);
    return reclen + 4;
}

static const char *kinds[] = {
    "bad-magic", "bad-version", "bad-type", "unknown-flag",
    "topic-flag-no-topic", "empty-payload", "payload-len-too-big",
    "routes-too-deep", "route-empty-id", "nul-in-topic",
    "event", "control", "response", "no-topic", "bad-json",
    "trailing-bytes", NULL,
};

static int cmd_malformed (const char *kind)
{
    uint8_t buf[16384];
    uint8_t *rec = buf + 4;
    canopy_msg_t *msg = mkrequest ("attr.get", "{\"name\":\"size\"}",
                                   CANOPY_NODEID_ANY, 11);
    void *enc;
    size_t len, flen;
    int fd;

    if (canopy_msg_encode (msg, &enc, &len) < 0)
        die ("encode");
    memcpy (rec, enc, len);
    free (enc);
    /* the record: header(20) | topic len(1) "attr.get" | payload len(4) json */
    if (!strcmp (kind, "bad-magic"))
        rec[0] = 0xCB;
    else if (!strcmp (kind, "bad-version"))
        rec[1] = 2;
    else if (!strcmp (kind, "bad-type"))
        rec[2] = 0x03;
    else if (!strcmp (kind, "unknown-flag"))
        rec[3] |= 0x80;
    else if (!strcmp (kind, "topic-flag-no-topic"))
        len = 20;
    else if (!strcmp (kind, "empty-payload")) {
        put32 (rec + 20 + 1 + 8, 0);
        len = 20 + 1 + 8 + 4;
    }
    else if (!strcmp (kind, "payload-len-too-big"))
        put32 (rec + 20 + 1 + 8, 100000);
    else if (!strcmp (kind, "routes-too-deep")) {
        /* ROUTE flag, 65 hops */
        uint8_t *p = rec + 20;
        rec[3] |= CANOPY_MSGFLAG_ROUTE;
        *p++ = 65;
        for (int i = 0; i < 65; i++) {
            *p++ = 2;
            *p++ = 'h';
            *p++ = 'a' + i % 26;
        }
        *p++ = 8;               /* then the topic, and no payload */
        memcpy (p, "attr.get", 8);
        p += 8;
        rec[3] &= ~CANOPY_MSGFLAG_PAYLOAD;
        len = p - rec;
    }
    else if (!strcmp (kind, "route-empty-id")) {
        uint8_t tail[4096];
        size_t tlen = len - 20;
        memcpy (tail, rec + 20, tlen);
        rec[3] |= CANOPY_MSGFLAG_ROUTE;
        rec[20] = 1;            /* one hop */
        rec[21] = 0;            /* of length 0 */
        memcpy (rec + 22, tail, tlen);
        len += 2;
    }
    else if (!strcmp (kind, "nul-in-topic"))
        rec[20 + 1 + 4] = '\0';
    else if (!strcmp (kind, "event"))
        rec[2] = CANOPY_MSGTYPE_EVENT;
    else if (!strcmp (kind, "control"))
        rec[2] = CANOPY_MSGTYPE_CONTROL;
    else if (!strcmp (kind, "response"))
        rec[2] = CANOPY_MSGTYPE_RESPONSE;
    else if (!strcmp (kind, "no-topic")) {
        /* flags: payload only */
        size_t plen = len - (20 + 1 + 8);
        rec[3] &= ~CANOPY_MSGFLAG_TOPIC;
        memmove (rec + 20, rec + 20 + 1 + 8, plen);
        len = 20 + plen;
    }
    else if (!strcmp (kind, "bad-json")) {
        memcpy (rec + 20 + 1 + 8 + 4, "{\"name\" \"siz", 12);
    }
    else if (!strcmp (kind, "trailing-bytes")) {
        rec[len++] = 'x';
    }
    else {
        fprintf (stderr, "sockabuse: unknown kind %s; kinds:", kind);
        for (int i = 0; kinds[i]; i++)
            fprintf (stderr, " %s", kinds[i]);
        fprintf (stderr, "\n");
        return 1;
    }
    canopy_msg_decref (msg);
    flen = frame_of (buf, len);
    if ((fd = sock_connect ()) < 0)
        die (sockpath);
    send_all (fd, buf, flen);
    /* answer, close, or silence */
    struct msg_instream in;
    msg_instream_init (&in);
    for (;;) {
        canopy_msg_t *resp = msg_instream_next (&in);
        if (resp) {
            int errnum = 0;
            const char *s = NULL;
            (void)canopy_msg_get_errnum (resp, &errnum);
            (void)canopy_msg_get_string (resp, &s);
            printf ("answer %d%s%s\n", errnum, errnum && s ? ": " : "",
                    errnum && s ? s : "");
            canopy_msg_decref (resp);
            break;
        }
        if (errno != EAGAIN) {
            printf ("closed by broker (bad answer)\n");
            break;
        }
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        if (poll (&pfd, 1, 2000) <= 0) {
            printf ("no answer, still open\n");
            break;
        }
        ssize_t n = msg_instream_fill (&in, fd);
        if (n == 0 || (n < 0 && errno != EAGAIN)) {
            printf ("closed by broker\n");
            break;
        }
    }
    msg_instream_release (&in);
    close (fd);
    return 0;
}

/* claim */

static long vm_kib (pid_t pid, const char *field)
{
    char path[64], line[256];
    long kib = -1;
    size_t flen = strlen (field);
    FILE *f;
    snprintf (path, sizeof (path), "/proc/%d/status", (int)pid);
    if (!(f = fopen (path, "r")))
        return -1;
    while (fgets (line, sizeof (line), f)) {
        if (!strncmp (line, field, flen) && line[flen] == ':') {
            kib = strtol (line + flen + 1, NULL, 10);
            break;
        }
    }
    fclose (f);
    return kib;
}

static int cmd_claim (unsigned long bytes)
{
    static uint8_t data[65536 + 4];
    int fd;
    pid_t pid;
    long rss0, vsz0;

    if ((fd = sock_connect ()) < 0)
        die (sockpath);
    if ((pid = peer_pid (fd)) < 0)
        die ("SO_PEERCRED");
    if (!ping_ok ())        /* the broker is idle and answering */
        die ("first ping");
    rss0 = vm_kib (pid, "VmRSS");
    vsz0 = vm_kib (pid, "VmSize");
    put32 (data, bytes);
    memset (data + 4, 'x', sizeof (data) - 4);
    size_t len = bytes + 4 < sizeof (data) ? bytes + 4 : sizeof (data);
    ssize_t n = send (fd, data, len, MSG_NOSIGNAL);
    int ok = ping_ok ();    /* the broker read our bytes before this */
    long rss1 = vm_kib (pid, "VmRSS");
    long vsz1 = vm_kib (pid, "VmSize");
    char c;
    struct pollfd pfd = { .fd = fd, .events = POLLIN };
    int closed = n < 0 || (poll (&pfd, 1, 0) > 0 && recv (fd, &c, 1, MSG_DONTWAIT) <= 0);
    printf ("claimed %lu\n", bytes);
    printf ("rss-growth-kib %ld\n", rss1 - rss0);
    printf ("vmsize-growth-kib %ld\n", vsz1 - vsz0);
    printf ("other-client-answered %s\n", ok ? "yes" : "no");
    printf ("%s\n", closed ? "closed by broker" : "still open");
    close (fd);
    return ok ? 0 : 1;
}

/* kvswire */

static canopy_msg_t *kvswire_request (const char *topic, const char *hdr, uint32_t tag)
{
    size_t hlen = strlen (hdr);
    uint8_t *payload = malloc (hlen + 4);
    canopy_msg_t *msg = mkrequest (topic, NULL, CANOPY_NODEID_ANY, tag);
    if (!payload)
        die ("malloc");
    put32 (payload, hlen);
    memcpy (payload + 4, hdr, hlen);
    if (canopy_msg_set_payload (msg, payload, hlen + 4) < 0
        || canopy_msg_set_flag (msg, CANOPY_MSGFLAG_RAW, true) < 0)
        die ("payload");
    free (payload);
    return msg;
}

static int cmd_kvswire (const char *topic, const char *hdr)
{
    canopy_msg_t *msg = kvswire_request (topic, hdr, 1);
    canopy_msg_t *resp = NULL;
    void *frame;
    size_t len;
    int fd, errnum = 0;
    const char *s = NULL;

    if (!(frame = msg_frame_encode (msg, &len)))
        die ("encode");
    if ((fd = sock_connect ()) < 0)
        die (sockpath);
    send_all (fd, frame, len);
    if (read_answers (fd, 1, 60000, &resp) != 1) {
        fprintf (stderr, "sockabuse: no answer\n");
        return 1;
    }
    (void)canopy_msg_get_errnum (resp, &errnum);
    (void)canopy_msg_get_string (resp, &s);
    if (errnum)
        printf ("error %d: %s\n", errnum, s ? s : strerror (errnum));
    else
        printf ("%s\n", s ? s : "");
    canopy_msg_decref (resp);
    canopy_msg_decref (msg);
    free (frame);
    close (fd);
    return 0;
}

/* fences */

/* One request on a fresh connection; the answer's payload (caller frees)
 * or NULL.
 */
static char *simple_rpc (const char *topic, const char *json)
{
    canopy_msg_t *msg = mkrequest (topic, json, CANOPY_NODEID_ANY, 1);
    canopy_msg_t *resp = NULL;
    const char *s = NULL;
    char *out = NULL;
    void *frame;
    size_t len;
    int fd;

    if (!(frame = msg_frame_encode (msg, &len)) || (fd = sock_connect ()) < 0)
        die ("rpc");
    send_all (fd, frame, len);
    if (read_answers (fd, 1, 60000, &resp) == 1
        && canopy_msg_get_string (resp, &s) == 0 && s)
        out = strdup (s);
    canopy_msg_decref (resp);
    canopy_msg_decref (msg);
    free (frame);
    close (fd);
    return out;
}

static int cmd_fences (long as_uid, int n, const char *prefix, int nprocs, int expect)
{
    int fd;
    pid_t pid;
    long rss0, rss1;
    int eagain = 0, other = 0, ok = 0;

    if ((fd = sock_connect ()) < 0)
        die (sockpath);
    if ((pid = peer_pid (fd)) < 0)
        die ("SO_PEERCRED");
    rss0 = vmrss_kib (pid);
    for (int i = 0; i < n; i++) {
        char name[128];
        kvs_txn_t *txn = kvs_txn_create ();
        void *buf, *frame;
        size_t len, flen;
        snprintf (name, sizeof (name), "%s.%d", prefix, i);
        if (!txn || kvs_txn_put_raw (txn, name, "v", 1) < 0
            || kvs_txn_encode (txn, name, nprocs, 0, &buf, &len) < 0)
            die ("kvs_txn");
        canopy_msg_t *msg = mkrequest ("kvs.fence", NULL, CANOPY_NODEID_ANY, i + 1);
        if (as_uid >= 0
            && (canopy_msg_set_userid (msg, as_uid) < 0
                || canopy_msg_set_rolemask (msg, CANOPY_ROLE_OWNER) < 0))
            die ("creds");
        if (canopy_msg_set_payload (msg, buf, len) < 0
            || canopy_msg_set_flag (msg, CANOPY_MSGFLAG_RAW, true) < 0
            || !(frame = msg_frame_encode (msg, &flen)))
            die ("encode");
        send_all (fd, frame, flen);
        free (frame);
        free (buf);
        canopy_msg_decref (msg);
        kvs_txn_destroy (txn);
    }
    /* the refusals come back; the open fences answer later (or never) */
    struct msg_instream in;
    msg_instream_init (&in);
    while (eagain + other + ok < expect) {
        canopy_msg_t *resp = msg_instream_next (&in);
        if (resp) {
            int errnum = 0;
            (void)canopy_msg_get_errnum (resp, &errnum);
            if (errnum == EAGAIN)
                eagain++;
            else if (errnum)
                other++;
            else
                ok++;
            canopy_msg_decref (resp);
            continue;
        }
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        if (poll (&pfd, 1, -1) < 0 || msg_instream_fill (&in, fd) <= 0)
            break;
    }
    msg_instream_release (&in);
    rss1 = vmrss_kib (pid);
    char *stats = simple_rpc ("kvs.stats", "{}");
    char *fences = stats ? strstr (stats, "\"fences\"") : NULL;
    char *end = fences ? strchr (fences, '}') : NULL;
    printf ("sent %d\n", n);
    printf ("refused-EAGAIN %d\n", eagain);
    printf ("refused-other %d\n", other);
    printf ("completed %d\n", ok);
    printf ("kvs-stats %.*s\n", end ? (int)(end - fences + 1) : 1, fences ? fences : "?");
    printf ("rss-growth-kib %ld\n", rss1 - rss0);
    free (stats);
    close (fd);
    return 0;
}

static void usage (void)
{
    fprintf (stderr, "Usage: sockabuse burst N SOCKET\n"
                     "       sockabuse fuzz [--count N] [--seed S] SOCKET\n"
                     "       sockabuse creds TOPIC USERID ROLEMASK [JSON] SOCKET\n"
                     "       sockabuse malformed KIND SOCKET\n"
                     "       sockabuse claim BYTES SOCKET\n"
                     "       sockabuse kvswire TOPIC HEADER-JSON SOCKET\n"
                     "       sockabuse fences [--as UID] N PREFIX NPROCS EXPECT SOCKET\n");
    exit (1);
}

int main (int argc, char *argv[])
{
    signal (SIGPIPE, SIG_IGN);
    if (argc < 3)
        usage ();
    sockpath = argv[argc - 1];
    if (!strcmp (argv[1], "burst") && argc == 4)
        return cmd_burst (atoi (argv[2]));
    if (!strcmp (argv[1], "fuzz")) {
        long count = 100000;
        uint64_t seed = 0;
        for (int i = 2; i < argc - 1; i++) {
            if (!strcmp (argv[i], "--count") && i + 1 < argc - 1)
                count = atol (argv[++i]);
            else if (!strcmp (argv[i], "--seed") && i + 1 < argc - 1)
                seed = strtoull (argv[++i], NULL, 10);
            else
                usage ();
        }
        return cmd_fuzz (count, seed);
    }
    if (!strcmp (argv[1], "malformed") && argc == 4)
        return cmd_malformed (argv[2]);
    if (!strcmp (argv[1], "claim") && argc == 4)
        return cmd_claim (strtoul (argv[2], NULL, 0));
    if (!strcmp (argv[1], "kvswire") && argc == 5)
        return cmd_kvswire (argv[2], argv[3]);
    if (!strcmp (argv[1], "fences") && argc == 9 && !strcmp (argv[2], "--as"))
        return cmd_fences (atol (argv[3]), atoi (argv[4]), argv[5], atoi (argv[6]),
                           atoi (argv[7]));
    if (!strcmp (argv[1], "fences") && argc == 7)
        return cmd_fences (-1, atoi (argv[2]), argv[3], atoi (argv[4]), atoi (argv[5]));
    if (!strcmp (argv[1], "creds") && (argc == 6 || argc == 7))
        return cmd_creds (argv[2], strtoul (argv[3], NULL, 0),
                          strtoul (argv[4], NULL, 0), argc == 7 ? argv[5] : NULL);
    usage ();
    return 1;
}
