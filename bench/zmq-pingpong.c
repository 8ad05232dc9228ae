/* zmq-pingpong.c - the floor for one canopy hop: a bare libzmq round trip.
 *
 * Two processes, the same shape as a canopy overlay link: the child binds
 * a ROUTER on ipc:// (like a parent broker), the parent connects a DEALER
 * (like a child broker) and times COUNT synchronous round trips of a
 * SIZE-byte frame, each echoed back by the ROUTER.  No framing, no
 * routing, no JSON: whatever canopy adds on top of this is its own cost.
 *
 * Prints one benchstat line (bench/benchstat.h).  WARMUP round trips are
 * made first and not counted (connection set-up, page faults, caches).
 *
 * Process handling: the ZeroMQ context is created after fork() in each
 * process (contexts do not survive fork).  The child signals readiness
 * through a pipe once it has bound, so the DEALER never waits for a
 * reconnect interval.  At the end (or on any fatal error, via atexit) the
 * child is sent SIGTERM by PID and reaped; the socket file and its
 * temporary directory are removed.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <getopt.h>
#include <signal.h>
#include <sys/wait.h>
#include <zmq.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/xalloc.h"
#include "src/common/libutil/monotime.h"
#include "benchstat.h"

static const char *usage_text =
"Usage: zmq-pingpong [OPTIONS]\n"
"\n"
"Time synchronous round trips between a ZeroMQ DEALER (this process) and\n"
"a ROUTER echo server (a child process) over ipc://.\n"
"\n"
"  -n, --count=N      round trips to time (default 10000)\n"
"  -s, --size=BYTES   payload size (default 0)\n"
"  -w, --warmup=N     untimed round trips first (default 200)\n"
"  -l, --label=TEXT   label of the summary line (default zmq)\n"
"  -h, --help         show this help\n";

static pid_t server_pid;    /* set in the parent only */
static char *sock_dir;
static char *sock_path;

/* Parent only (registered after fork): stop the server, remove files. */
static void cleanup (void)
{
    if (server_pid > 0) {
        kill (server_pid, SIGTERM);
        (void)waitpid (server_pid, NULL, 0);
        server_pid = 0;
    }
    if (sock_path)
        (void)unlink (sock_path);
    if (sock_dir)
        (void)rmdir (sock_dir);
}

static long parse_long (const char *s, const char *what, long min, long max)
{
    char *end;
    long v;
    errno = 0;
    v = strtol (s, &end, 10);
    if (errno || *end || end == s || v < min || v > max)
        log_msg_exit ("invalid %s '%s' (expected %ld..%ld)", what, s, min, max);
    return v;
}

/* The echo server: ROUTER frames arrive as [identity][payload]; send them
 * straight back.  Runs until killed.
 */
static void server (const char *uri, int ready_fd)
{
    void *ctx = zmq_ctx_new ();
    void *sock;
    int zero = 0;
    zmq_msg_t id, body;

    if (!ctx || !(sock = zmq_socket (ctx, ZMQ_ROUTER))
        || zmq_setsockopt (sock, ZMQ_LINGER, &zero, sizeof (zero)) < 0
        || zmq_bind (sock, uri) < 0)
        log_err_exit ("server: bind %s", uri);
    if (write (ready_fd, "r", 1) != 1)
        log_err_exit ("server: ready pipe");
    close (ready_fd);
    zmq_msg_init (&id);
    zmq_msg_init (&body);
    for (;;) {
        if (zmq_msg_recv (&id, sock, 0) < 0 || zmq_msg_recv (&body, sock, 0) < 0) {
            if (errno == EINTR)
                continue;
            log_err_exit ("server: recv");
        }
        if (zmq_msg_send (&id, sock, ZMQ_SNDMORE) < 0
            || zmq_msg_send (&body, sock, 0) < 0)
            log_err_exit ("server: send");
    }
}

int main (int argc, char *argv[])
{
    static const struct option longopts[] = {
        { "count", required_argument, NULL, 'n' },
        { "size", required_argument, NULL, 's' },
        { "warmup", required_argument, NULL, 'w' },
        { "label", required_argument, NULL, 'l' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long count = 10000, size = 0, warmup = 200;
    const char *label = "zmq";
    const char *tmp = getenv ("TMPDIR");
    char *uri;
    int pfd[2];
    char c;
    pid_t pid;
    int opt;

    log_init ("zmq-pingpong");
    while ((opt = getopt_long (argc, argv, "n:s:w:l:h", longopts, NULL)) != -1) {
        switch (opt) {
            case 'n':
                count = parse_long (optarg, "count", 1, 100000000);
                break;
            case 's':
                size = parse_long (optarg, "size", 0, 64 * 1024 * 1024);
                break;
            case 'w':
                warmup = parse_long (optarg, "warmup", 0, 100000000);
                break;
            case 'l':
                label = optarg;
                break;
            case 'h':
                fputs (usage_text, stdout);
                return 0;
            default:
                fputs (usage_text, stderr);
                return 1;
        }
    }
    if (optind != argc) {
        fputs (usage_text, stderr);
        return 1;
    }
    sock_dir = xasprintf ("%s/zmq-pingpong-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp (sock_dir))
        log_err_exit ("mkdtemp %s", sock_dir);
    sock_path = xasprintf ("%s/sock", sock_dir);
    uri = xasprintf ("ipc://%s", sock_path);
    if (pipe (pfd) < 0)
        log_err_exit ("pipe");
    if ((pid = fork ()) < 0) {
        (void)rmdir (sock_dir);
        log_err_exit ("fork");
    }
    if (pid == 0) {
        close (pfd[0]);
        server (uri, pfd[1]);
        _exit (0);
    }
    server_pid = pid;
    atexit (cleanup);
    close (pfd[1]);
    if (read (pfd[0], &c, 1) != 1)
        log_msg_exit ("the echo server did not start");
    close (pfd[0]);

    void *ctx = zmq_ctx_new ();
    void *sock;
    int zero = 0;
    if (!ctx || !(sock = zmq_socket (ctx, ZMQ_DEALER))
        || zmq_setsockopt (sock, ZMQ_LINGER, &zero, sizeof (zero)) < 0
        || zmq_connect (sock, uri) < 0)
        log_err_exit ("connect %s", uri);

    char *out = xzmalloc (size + 1);
    char *in = xzmalloc (size + 1);
    struct benchstat *bs = benchstat_create ();
    struct benchstat_summary sum;
    memset (out, 'p', size);
    if (!bs)
        log_err_exit ("benchstat");
    for (long i = 0; i < warmup + count; i++) {
        double t0 = monotime ();
        if (zmq_send (sock, out, size, 0) < 0)
            log_err_exit ("send");
        int n = zmq_recv (sock, in, size + 1, 0);
        if (n < 0)
            log_err_exit ("recv");
        if (n != size)
            log_msg_exit ("echo of %d bytes, expected %ld", n, size);
        double us = (monotime () - t0) * 1e6;
        if (i >= warmup && benchstat_push (bs, us) < 0)
            log_err_exit ("benchstat");
    }
    benchstat_summary (bs, &sum);
    benchstat_print (stdout, label, size, &sum);

    zmq_close (sock);
    zmq_ctx_term (ctx);
    cleanup ();
    benchstat_destroy (bs);
    free (in);
    free (out);
    free (uri);
    return 0;
}
