/* broker.c - canopy-broker: main, boot, signals, and the shutdown sequence.
 *
 * Design notes:
 * - Boot: with --rank/--size/--rundir (as 'canopy start' runs it) the tree
 *   is wired over ipc:// sockets in the run directory; with no rank, a
 *   single broker runs in a temporary run directory; with --config FILE
 *   the broker is one of a permanent cluster instance (boot_config.c:
 *   TCP links with CURVE, the local socket RUNDIR/local).  main() only
 *   picks the method; each lives in its own function or file.
 * - Lifecycle: JOIN (links coming up) -> RUN (rank 0: subtree full, the
 *   initial program starts) -> SHUTDOWN -> EXIT.
 * - Shutdown, children first: rank 0 publishes "broker.shutdown"; every
 *   broker waits until its children have said goodbye (or a deadline
 *   passes), unloads its modules newest first, says goodbye to its parent
 *   and exits.  Rank 0 exits last, with the initial program's status.
 * - Signals are read from a signalfd in the reactor.  SIGINT is ignored
 *   (the terminal delivers it to the initial program itself); SIGTERM and
 *   SIGHUP on rank 0 go to the initial program; SIGTERM elsewhere makes
 *   that broker leave (exit status 143).  Children are watched with
 *   pidfds, so nothing here reaps processes it did not start.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <getopt.h>
#include <signal.h>
#include <limits.h>
#include <syslog.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/prctl.h>
#include <zmq.h>
#include <canopy/canopy.h>
#include "src/common/libutil/log.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/fdutil.h"
#include "src/common/libutil/installpaths.h"
#include "src/common/libutil/sched_slice.h"
#include "src/common/libutil/cpulist.h"
#include "src/common/libutil/heap.h"
#include "broker.h"
#include "overlay.h"
#include "connector.h"
#include "modhost.h"
#include "runat.h"
#include "topology.h"
#include "boot_pmi.h"
#include "boot_config.h"

#define SHUTDOWN_CHILD_TIMEOUT 20.0
#define DEFAULT_MODULES "content,content-sqlite,kvs,resource,exec"
#define DEFAULT_SCHED_SLICE_US 100
#define DEFAULT_HEAP_KEEP (64u * 1024 * 1024)
#define DEFAULT_HEAP_CACHE 2048u

int builtins_init (struct broker *b);

static const char *usage_text =
"Usage: canopy-broker [OPTIONS] [-- COMMAND [ARGS...]]\n"
"       canopy-broker --config=FILE [--rank=N] [OPTIONS]\n"
"\n"
"Run one broker of a canopy instance.  Normally started by 'canopy start'\n"
"or by a launcher; rank 0 runs COMMAND once every broker has joined.\n"
"With --config, run one broker of a permanent cluster instance described\n"
"by FILE (see canopy-broker(8)); its rank comes from this host's name.\n"
"\n"
"  -c, --config=FILE      boot from a configuration file\n"
"  -r, --rank=N           this broker's rank\n"
"  -s, --size=N           number of brokers in the instance\n"
"  -k, --k-ary=K          tree fan-out (default 2)\n"
"  -d, --rundir=DIR       directory for sockets (default: a new temporary one)\n"
"  -S, --setattr=NAME=VAL set a broker attribute\n"
"  -m, --modules=LIST     comma-separated modules to load (default: built-in list)\n"
"  -M, --module-path=PATH colon-separated module directories\n"
"  -v, --verbose          log informational messages to stderr\n"
"  -h, --help             show this help\n";

static void usage (int code)
{
    fputs (usage_text, code ? stderr : stdout);
    exit (code);
}

static int parse_uint (const char *s, uint32_t *value)
{
    char *end;
    unsigned long v;
    errno = 0;
    v = strtoul (s, &end, 10);
    if (errno || *end || end == s || v > UINT32_MAX)
        return -1;
    *value = v;
    return 0;
}

/* The scheduler slice of the broker's threads (sched_slice.h), from
 * broker.sched-slice (microseconds; 0: the kernel's default).  Called
 * before any other thread exists (ZeroMQ's, the modules'), so that every
 * one inherits it; the programs the broker starts get the default back
 * (runat.c, the exec module).  The attribute then says the slice in
 * effect, as the kernel reports it (0 if it does not).  A kernel that
 * refuses is not an error: the broker runs as before.
 */
static int init_sched_slice (struct broker *b)
{
    const char *s = attr_get (b->attrs, "broker.sched-slice", NULL);
    uint32_t usec = DEFAULT_SCHED_SLICE_US;
    long now;

    if (s && (parse_uint (s, &usec) < 0 || !sched_slice_valid (usec))) {
        log_msg ("bad attribute broker.sched-slice=%s (0, or %d to %d"
                 " microseconds)", s, SCHED_SLICE_MIN_US, SCHED_SLICE_MAX_US);
        errno = EINVAL;
        return -1;
    }
    if (usec > 0 && sched_slice_set (usec) < 0)
        broker_log (b, LOG_INFO, "cannot ask for a %u us scheduler slice: %s",
                    usec, strerror (errno));
    now = sched_slice_get ();
    return attr_set_uint (b->attrs, "broker.sched-slice", now > 0 ? now : 0,
                          ATTR_IMMUTABLE);
}

/* The CPUs the broker's threads run on, from broker.cpu-affinity:
 * "none" (the default: those it was started with), "subtree" (one of
 * those, chosen by where the broker sits in the tree), or a CPU list
 * (cpulist.h), which must be within those it was started with.
 *
 * "subtree" is for many brokers on one machine ('canopy start', tests,
 * KAP experiments).  The tree's depth-first walk is cut into as many
 * equal runs as there are CPUs (topology_preorder), so a subtree's
 * brokers share a CPU: a message on its way up or down passes between
 * threads of one CPU, which is a context switch, instead of waking
 * another CPU at each of the ~5 threads of a hop (64 brokers, k=2, 2
 * CPUs: a broker.ping from rank 0 to rank 63 and back took 1.1-1.3 ms
 * unpinned, 0.77 ms with "subtree", 0.33 ms with every broker on one
 * CPU).
 *
 * Called before any other thread exists, so every one inherits it.  The
 * set the broker was started with is kept (b->task_cpus, attribute
 * broker.cpus-inherited): the programs it starts get it back (runat.c,
 * the exec module).  broker.cpus says the set in effect.
 */
static int init_cpu_affinity (struct broker *b)
{
    const char *s = attr_get (b->attrs, "broker.cpu-affinity", NULL);
    char list[CPULIST_MAX];
    cpu_set_t want;

    if (sched_getaffinity (0, sizeof (b->task_cpus), &b->task_cpus) < 0) {
        log_err ("sched_getaffinity");
        return -1;
    }
    want = b->task_cpus;
    if (!s || !strcmp (s, "none"))
        s = "none";
    else if (!strcmp (s, "subtree")) {
        int n = CPU_COUNT (&b->task_cpus);
        int64_t pos = topology_preorder (b->rank, b->size, b->k);
        int cpu = cpulist_nth (&b->task_cpus, pos < 0 ? 0 : (int)(pos * n / b->size));
        if (cpu < 0) {
            log_msg ("broker.cpu-affinity=subtree: no CPU to choose");
            errno = EINVAL;
            return -1;
        }
        CPU_ZERO (&want);
        CPU_SET (cpu, &want);
    }
    else {
        cpu_set_t both;
        if (cpulist_parse (s, &want) < 0) {
            log_msg ("bad attribute broker.cpu-affinity=%s (none, subtree, or a"
                     " CPU list such as 0-3,8)", s);
            errno = EINVAL;
            return -1;
        }
        CPU_AND (&both, &want, &b->task_cpus);
        if (!CPU_EQUAL (&both, &want)) {
            if (cpulist_format (&b->task_cpus, list, sizeof (list)) < 0)
                snprintf (list, sizeof (list), "?");
            log_msg ("broker.cpu-affinity=%s: not within the CPUs this broker"
                     " may use (%s)", s, list);
            errno = EINVAL;
            return -1;
        }
    }
    if (!CPU_EQUAL (&want, &b->task_cpus)
        && sched_setaffinity (0, sizeof (want), &want) < 0) {
        log_err ("broker.cpu-affinity=%s: sched_setaffinity", s);
        return -1;
    }
    if (attr_set (b->attrs, "broker.cpu-affinity", s, ATTR_IMMUTABLE, true) < 0
        || cpulist_format (&want, list, sizeof (list)) < 0
        || attr_set (b->attrs, "broker.cpus", list, ATTR_IMMUTABLE, true) < 0
        || cpulist_format (&b->task_cpus, list, sizeof (list)) < 0
        || attr_set (b->attrs, "broker.cpus-inherited", list, ATTR_IMMUTABLE,
                     true) < 0)
        return -1;
    return 0;
}

/* How malloc keeps memory (heap.h), from broker.heap-keep (bytes of free
 * memory kept; 0: glibc's defaults).  Called before any other thread
 * exists, so that ZeroMQ's and the modules' threads share one arena:
 * what the KVS touches ahead (heap_prefault after a large kvs.prime) then
 * serves the thread that receives the next one.  An allocator that takes
 * no such settings (a sanitizer's, valgrind's) is not an error; the
 * attribute then says 0.
 */
static int init_heap (struct broker *b)
{
    const char *s = attr_get (b->attrs, "broker.heap-keep", NULL);
    uint32_t keep = DEFAULT_HEAP_KEEP;
    uint32_t cache;

    if (s && (parse_uint (s, &keep) < 0 || keep > HEAP_KEEP_MAX)) {
        log_msg ("bad attribute broker.heap-keep=%s (0 to %zu bytes)", s,
                 (size_t)HEAP_KEEP_MAX);
        errno = EINVAL;
        return -1;
    }
    if (keep > 0 && heap_share (keep) < 0) {
        broker_log (b, LOG_INFO, "cannot keep %u bytes of free memory: %s",
                    keep, strerror (errno));
        keep = 0;
    }
    if (attr_set_uint (b->attrs, "broker.heap-keep", keep, ATTR_IMMUTABLE) < 0)
        return -1;
    /* broker.heap-cache was acted on at the start (start_heap_cache):
     * check it here like every attribute, and say what is in effect
     */
    s = attr_get (b->attrs, "broker.heap-cache", NULL);
    if (s && (parse_uint (s, &cache) < 0 || cache > HEAP_CACHE_MAX)) {
        log_msg ("bad attribute broker.heap-cache=%s (0 to %u blocks)", s,
                 (unsigned int)HEAP_CACHE_MAX);
        errno = EINVAL;
        return -1;
    }
    if (s && cache != b->heap_cache_asked) {
        broker_log (b, LOG_WARNING, "broker.heap-cache=%s is not used: only"
                    " --setattr sets it (the broker applies it as it starts)", s);
    }
    if (b->heap_cache < 0) {
        broker_log (b, LOG_INFO, "cannot give threads a malloc cache: %s",
                    strerror (b->heap_cache_errno));
    }
    return attr_set_uint (b->attrs, "broker.heap-cache",
                          b->heap_cache > 0 ? (uint32_t)b->heap_cache : 0,
                          ATTR_IMMUTABLE);
}

/* broker.heap-cache, read from the command line before anything else is
 * set up: heap_cache_exec re-executes the broker with it (heap.h), and
 * the broker's children get the environment it was started with.  A bad
 * value does nothing here; init_heap refuses it.
 */
static void start_heap_cache (struct broker *b, char **setattrs, int nsetattrs,
                              char **argv)
{
    const char *name = "broker.heap-cache=";
    size_t len = strlen (name);
    uint32_t count = DEFAULT_HEAP_CACHE;

    for (int i = 0; i < nsetattrs; i++) {
        if (!strncmp (setattrs[i], name, len)
            && (parse_uint (setattrs[i] + len, &count) < 0 || count > HEAP_CACHE_MAX))
            return;
    }
    b->heap_cache_asked = count;
    if ((b->heap_cache = heap_cache_exec (count, argv)) < 0)
        b->heap_cache_errno = errno;
}

/* Shutdown */

static void finalize (struct broker *b, void *arg)
{
    if (b->state == STATE_EXIT)
        return;
    overlay_goodbye (b->overlay);
    b->state = STATE_EXIT;
    canopy_reactor_stop (b->r);
}

void broker_check_shutdown (struct broker *b)
{
    if (b->state != STATE_SHUTDOWN || b->shutdown_requested)
        return;
    bool deadline = monotime () - b->shutdown_start > SHUTDOWN_CHILD_TIMEOUT;
    if (overlay_children_connected (b->overlay) > 0 && !deadline)
        return;
    if (deadline && overlay_children_connected (b->overlay) > 0)
        broker_log (b, LOG_ERR, "%d children did not leave; shutting down anyway",
                    overlay_children_connected (b->overlay));
    b->shutdown_requested = true;   /* modules are being unloaded */
    modhost_unload_all (b->modhost, finalize, NULL);
}

static void shutdown_timer_cb (canopy_reactor_t *r, canopy_watcher_t *w,
                               int revents, void *arg)
{
    broker_check_shutdown (arg);
}

void broker_shutdown_begin (struct broker *b, int exit_code, const char *why)
{
    if (b->state >= STATE_SHUTDOWN)
        return;
    b->state = STATE_SHUTDOWN;
    b->exit_code = exit_code;
    b->shutdown_start = monotime ();
    broker_log (b, LOG_INFO, "shutdown: %s", why);
    if (b->rank == 0) {
        char buf[64];
        snprintf (buf, sizeof (buf), "{\"exitcode\":%d}", exit_code);
        (void)events_publish (b, "broker.shutdown", false, buf, strlen (buf), NULL);
    }
    /* re-check periodically so the deadline applies even if nothing moves */
    if ((b->shutdown_timer = canopy_timer_watcher_create (b->r, 1.0, 1.0,
                                                         shutdown_timer_cb, b)))
        canopy_watcher_start (b->shutdown_timer);
    broker_check_shutdown (b);
}

static void initial_program_exited (struct broker *b, int status)
{
    int code;
    if (WIFEXITED (status))
        code = WEXITSTATUS (status);
    else if (WIFSIGNALED (status))
        code = 128 + WTERMSIG (status);
    else
        code = 1;
    if (WIFSIGNALED (status))
        broker_log (b, LOG_INFO, "initial program killed by signal %d", WTERMSIG (status));
    broker_shutdown_begin (b, code, "initial program exited");
}

void broker_instance_ready (struct broker *b)
{
    const char *uri;

    if (b->state != STATE_JOIN)
        return;
    b->state = STATE_RUN;
    broker_log (b, LOG_INFO, "instance ready: %u brokers", b->size);
    if (b->rank != 0 || !b->runat)
        return;
    uri = attr_get (b->attrs, "local-uri", NULL);
    if (runat_start (b->runat, uri) < 0) {
        broker_log (b, LOG_ERR, "cannot start initial program: %s", strerror (errno));
        broker_shutdown_begin (b, 1, "initial program failed to start");
    }
}

/* Signals */

static void signal_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct broker *b = arg;
    struct signalfd_siginfo si;

    while (read (b->sigfd, &si, sizeof (si)) == sizeof (si)) {
        int sig = si.ssi_signo;
        if (sig == SIGINT)
            continue;
        if (b->rank == 0 && runat_pid (b->runat) > 0) {
            (void)runat_kill (b->runat, sig);
            continue;
        }
        if (sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
            if (b->rank == 0)
                broker_shutdown_begin (b, 128 + sig, "signal");
            else {
                /* leave now: our children are on their own */
                broker_log (b, LOG_INFO, "leaving on signal %d", sig);
                b->exit_code = 128 + sig;
                if (b->state < STATE_SHUTDOWN) {
                    b->state = STATE_SHUTDOWN;
                    b->shutdown_start = monotime () - SHUTDOWN_CHILD_TIMEOUT - 1;
                }
                broker_check_shutdown (b);
            }
        }
    }
}

static int signals_init (struct broker *b)
{
    sigset_t set;
    sigemptyset (&set);
    sigaddset (&set, SIGTERM);
    sigaddset (&set, SIGINT);
    sigaddset (&set, SIGHUP);
    sigaddset (&set, SIGQUIT);
    if (sigprocmask (SIG_BLOCK, &set, NULL) < 0)
        return -1;
    signal (SIGPIPE, SIG_IGN);
    if ((b->sigfd = signalfd (-1, &set, SFD_NONBLOCK | SFD_CLOEXEC)) < 0)
        return -1;
    if (!(b->signal_w = canopy_fd_watcher_create (b->r, b->sigfd, CANOPY_POLLIN,
                                                  signal_cb, b)))
        return -1;
    canopy_watcher_start (b->signal_w);
    return 0;
}

/* Attributes */

static int setattr_arg (struct broker *b, const char *arg)
{
    char *cpy = strdup (arg);
    char *eq;
    int rc = -1;
    if (!cpy)
        return -1;
    if ((eq = strchr (cpy, '=')) && eq != cpy) {
        *eq = '\0';
        rc = attr_set (b->attrs, cpy, eq + 1, 0, true);
    }
    else
        errno = EINVAL;
    free (cpy);
    return rc;
}

/* The attributes that name the run directory and the local sockets. */
static int rundir_attrs (struct broker *b, bool local_boot)
{
    char buf[PATH_MAX];
    attr_table_t *a = b->attrs;

    if (attr_set (a, "rundir", b->rundir, ATTR_IMMUTABLE, true) < 0)
        return -1;
    if (local_boot || !attr_get (a, "local-uri", NULL))
        snprintf (buf, sizeof (buf), "local://%s/local-%u", b->rundir, b->rank);
    else
        snprintf (buf, sizeof (buf), "%s", attr_get (a, "local-uri", NULL));
    if (attr_set (a, "local-uri", buf, ATTR_IMMUTABLE, true) < 0)
        return -1;
    if (b->rank > 0 && local_boot) {
        snprintf (buf, sizeof (buf), "local://%s/local-%d", b->rundir,
                  topology_parent (b->rank, b->k));
        if (attr_set (a, "parent-uri", buf, ATTR_IMMUTABLE, true) < 0)
            return -1;
    }
    return 0;
}

static int init_attrs (struct broker *b)
{
    char buf[PATH_MAX];
    char host[256] = "";
    attr_table_t *a = b->attrs;
    const char *method = attr_get (a, "broker.boot-method", NULL);
    bool local_boot = !method || !strcmp (method, "local");

    gethostname (host, sizeof (host) - 1);
    if (attr_set_uint (a, "rank", b->rank, ATTR_IMMUTABLE) < 0
        || attr_set_uint (a, "size", b->size, ATTR_IMMUTABLE) < 0
        || attr_set_uint (a, "tbon.k", b->k, ATTR_IMMUTABLE) < 0
        || attr_set_uint (a, "tbon.depth", topology_depth (b->rank, b->k),
                          ATTR_IMMUTABLE) < 0
        || attr_set_uint (a, "broker.pid", getpid (), ATTR_IMMUTABLE) < 0
        || attr_set_uint (a, "instance-owner", b->owner, ATTR_IMMUTABLE) < 0
        || attr_set (a, "version", PACKAGE_VERSION, ATTR_IMMUTABLE, true) < 0
        || attr_set (a, "hostname", host, ATTR_IMMUTABLE, true) < 0)
        return -1;
    if (!method && attr_set (a, "broker.boot-method", "local", ATTR_IMMUTABLE, true) < 0)
        return -1;
    /* without a run directory yet, temp_rundir_create sets these */
    if (b->rundir && rundir_attrs (b, local_boot) < 0)
        return -1;
    snprintf (buf, sizeof (buf), "%.6f", walltime ());
    if (attr_set (a, "broker.starttime", buf, ATTR_IMMUTABLE, true) < 0)
        return -1;
    if (!attr_get (a, "log-stderr-level", NULL)
        && attr_set (a, "log-stderr-level", "3", 0, true) < 0)
        return -1;
    logbuf_set_stderr_level (b->log, atoi (attr_get (a, "log-stderr-level", NULL)));
    if (!attr_get (a, "log-output", NULL)
        && attr_set (a, "log-output", "stderr", 0, true) < 0)
        return -1;
    if (logbuf_set_output (b->log, attr_get (a, "log-output", NULL)) < 0) {
        log_err ("log-output '%s' (expected stderr, syslog or an absolute path)",
                 attr_get (a, "log-output", NULL));
        return -1;
    }
    if (attr_set (a, "log-output", attr_get (a, "log-output", NULL), ATTR_IMMUTABLE,
                  true) < 0)
        return -1;
    return 0;
}

/* Boot methods.  Each sets rank, size, k and the run directory before the
 * broker is initialised (the *_load step), and wires the overlay after it.
 */

/* 'canopy start': ipc:// sockets in the shared run directory. */
static void boot_local_wire (struct broker *b)
{
    char path[PATH_MAX];

    if (topology_child_count (b->rank, b->size, b->k) > 0) {
        snprintf (path, sizeof (path), "ipc://%s/tbon-%u", b->rundir, b->rank);
        if (overlay_bind (b->overlay, path) < 0)
            log_err_exit ("bind %s", path);
        (void)attr_set (b->attrs, "tbon.endpoint", path, ATTR_IMMUTABLE, true);
    }
    if (b->rank > 0) {
        snprintf (path, sizeof (path), "ipc://%s/tbon-%d", b->rundir,
                  topology_parent (b->rank, b->k));
        if (overlay_connect (b->overlay, path, NULL) < 0)
            log_err_exit ("connect %s", path);
        (void)attr_set (b->attrs, "tbon.parent-endpoint", path, ATTR_IMMUTABLE, true);
    }
}

/* --config FILE: a permanent cluster instance. */
static struct boot_config *boot_config_start (struct broker *b, const char *path,
                                              bool have_rank)
{
    char host[256] = "";
    char err[512];
    struct boot_config *bc;

    (void)gethostname (host, sizeof (host) - 1);
    if (!(bc = boot_config_load (path, host, have_rank ? (int64_t)b->rank : -1,
                                 err, sizeof (err))))
        log_msg_exit ("%s", err);
    b->rank = bc->rank;
    b->size = bc->size;
    b->k = bc->k;
    if (!b->rundir)
        b->rundir = strdup (bc->rundir);
    return bc;
}

static void boot_config_attrs (struct broker *b, struct boot_config *bc)
{
    const char *name;
    json_t *v;
    char uri[PATH_MAX];

    json_object_foreach (bc->attrs, name, v) {
        if (attr_set (b->attrs, name, json_string_value (v), 0, true) < 0)
            log_err_exit ("%s: attribute %s", bc->path, name);
    }
    snprintf (uri, sizeof (uri), "local://%s/local", b->rundir);
    if (attr_set (b->attrs, "broker.boot-method", "config", ATTR_IMMUTABLE, true) < 0
        || attr_set (b->attrs, "config-file", bc->path, ATTR_IMMUTABLE, true) < 0
        || attr_set (b->attrs, "local-uri", uri, 0, true) < 0)
        log_err_exit ("attributes");
}

static void boot_config_finish (struct broker *b, struct boot_config *bc)
{
    char err[512];

    if (boot_config_wire (bc, b->overlay, err, sizeof (err)) < 0)
        log_msg_exit ("%s", err);
    /* the local socket lives here (created last: a broker that refuses to
     * start leaves nothing behind)
     */
    if (mkdir (b->rundir, 0755) < 0 && errno != EEXIST)
        log_err_exit ("cannot create the run directory %s", b->rundir);
    if (bc->bind_uri)
        (void)attr_set (b->attrs, "tbon.endpoint", bc->bind_uri, ATTR_IMMUTABLE, true);
    if (bc->parent_uri)
        (void)attr_set (b->attrs, "tbon.parent-endpoint", bc->parent_uri,
                        ATTR_IMMUTABLE, true);
}

static int load_modules (struct broker *b, const char *list)
{
    char *cpy, *saveptr = NULL, *name;
    char errbuf[256];

    if (!list || !*list)
        return 0;
    if (!(cpy = strdup (list)))
        return -1;
    for (name = strtok_r (cpy, ",", &saveptr); name;
         name = strtok_r (NULL, ",", &saveptr)) {
        if (modhost_load (b->modhost, name, 0, NULL, errbuf, sizeof (errbuf)) < 0) {
            log_msg ("rank %u: cannot load module %s: %s", b->rank, name, errbuf);
            free (cpy);
            return -1;
        }
    }
    free (cpy);
    return 0;
}

static char *module_path (const char *opt)
{
    const char *env = getenv ("CANOPY_MODULE_PATH");
    if (opt)
        return strdup (opt);
    if (env && *env)
        return strdup (env);
    return strdup (canopy_path (CANOPY_PATH_MODULES));
}

/* A run directory the broker makes for itself (started by a launcher, or
 * alone, without --rundir) is made only once the overlay is wired (the
 * wiring does not use it), so a broker that fails to start or is ended by
 * its launcher during the wiring leaves nothing.  From then on it goes
 * when the broker goes: at the end of the teardown, or through
 * log_*_exit's hook or exit(1) on a later failed start (a module that
 * will not load).  What may be in it then is the broker's own socket (the
 * KVS's channel socket goes with its module).
 */
static char temp_rundir[PATH_MAX];
static char temp_socket[PATH_MAX];

static void temp_rundir_remove (void)
{
    if (temp_socket[0])
        (void)unlink (temp_socket);
    if (temp_rundir[0])
        (void)rmdir (temp_rundir);
}

static void temp_rundir_create (struct broker *b)
{
    const char *tmp = getenv ("TMPDIR");
    char path[PATH_MAX];

    snprintf (path, sizeof (path), "%s/canopy-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp (path))
        log_err_exit ("mkdtemp %s", path);
    snprintf (temp_rundir, sizeof (temp_rundir), "%s", path);
    log_set_exit_hook (temp_rundir_remove);
    if (!(b->rundir = strdup (path)))
        log_msg_exit ("out of memory");
    /* as init_attrs would have set them: no boot method was known then */
    if (rundir_attrs (b, true) < 0)
        log_err_exit ("attributes");
}

/* Each local client holds two descriptors of this process (its connection
 * to the broker and its direct channel to the KVS), so the usual soft
 * limit of 1024 would cap a broker near 500 clients: raise the soft limit
 * to the hard one (at most 1 Mi).  Best effort.
 */
static void raise_fd_limit (void)
{
    (void)fd_raise_limit (1ul << 20, NULL);
}

int main (int argc, char *argv[])
{
    struct broker broker;
    struct broker *b = &broker;
    static const struct option longopts[] = {
        { "config", required_argument, NULL, 'c' },
        { "rank", required_argument, NULL, 'r' },
        { "size", required_argument, NULL, 's' },
        { "k-ary", required_argument, NULL, 'k' },
        { "rundir", required_argument, NULL, 'd' },
        { "setattr", required_argument, NULL, 'S' },
        { "modules", required_argument, NULL, 'm' },
        { "module-path", required_argument, NULL, 'M' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool have_rank = false, have_size = false, have_k = false;
    const char *modules = NULL;
    const char *modpath_opt = NULL;
    char *modpath = NULL;
    char **setattrs = NULL;
    int nsetattrs = 0;
    bool verbose = false;
    const char *config = NULL;
    struct boot_config *bc = NULL;
    int c;
    char path[PATH_MAX];
    struct boot_pmi *pmi = NULL;
    canopy_error_t error;

    log_init ("canopy-broker");
    memset (b, 0, sizeof (*b));
    b->k = 2;
    b->size = 1;
    b->sigfd = -1;
    b->owner = getuid ();
    raise_fd_limit ();
    setattrs = calloc (argc + 1, sizeof (char *));
    while ((c = getopt_long (argc, argv, "+c:r:s:k:d:S:m:M:vh", longopts, NULL)) != -1) {
        switch (c) {
            case 'c':
                config = optarg;
                break;
            case 'r':
                if (parse_uint (optarg, &b->rank) < 0)
                    log_msg_exit ("invalid --rank '%s'", optarg);
                have_rank = true;
                break;
            case 's':
                if (parse_uint (optarg, &b->size) < 0 || b->size == 0)
                    log_msg_exit ("invalid --size '%s'", optarg);
                have_size = true;
                break;
            case 'k':
                if (parse_uint (optarg, &b->k) < 0 || b->k == 0)
                    log_msg_exit ("invalid --k-ary '%s' (must be >= 1)", optarg);
                have_k = true;
                break;
            case 'd':
                b->rundir = strdup (optarg);
                break;
            case 'S':
                setattrs[nsetattrs++] = optarg;
                break;
            case 'm':
                modules = optarg;
                break;
            case 'M':
                modpath_opt = optarg;
                break;
            case 'v':
                verbose = true;
                break;
            case 'h':
                usage (0);
            default:
                usage (1);
        }
    }
    if (optind < argc)
        b->initial_argv = &argv[optind];
    /* first, before any connection or thread: it may execute us again */
    start_heap_cache (b, setattrs, nsetattrs, argv);
    if (config) {
        if (have_size)
            log_msg_exit ("--size comes from the configuration file (its hosts)");
        if (have_k)
            log_msg_exit ("--k-ary comes from the configuration file (tbon.k)");
        bc = boot_config_start (b, config, have_rank);
        have_rank = have_size = true;
    }
    if (have_rank != have_size)
        log_msg_exit ("--rank and --size go together");
    if (b->rank >= b->size)
        log_msg_exit ("rank %u is not below size %u", b->rank, b->size);
    if (b->size > 1 && !b->rundir)
        log_msg_exit ("an instance of %u brokers needs --rundir", b->size);
    /* started by a launcher with PMI: rank and size come from it */
    if (!have_rank && boot_pmi_wanted ()
        && !(pmi = boot_pmi_create (&b->rank, &b->size, &error)))
        log_msg_exit ("PMI bootstrap: %s", error.text);
    snprintf (b->rankstr, sizeof (b->rankstr), "%u", b->rank);
    /* brokers started by 'canopy start' die with it */
    if (getenv ("CANOPY_START_PID"))
        (void)prctl (PR_SET_PDEATHSIG, SIGTERM);

    if (!(b->zctx = zmq_ctx_new ()))
        log_err_exit ("zmq_ctx_new");
    if (!(b->r = canopy_reactor_create ()) || !(b->attrs = attr_create ())
        || !(b->log = logbuf_create (1024, b->rank)))
        log_err_exit ("initialization");
    if (bc)
        boot_config_attrs (b, bc);
    for (int i = 0; i < nsetattrs; i++) {
        if (setattr_arg (b, setattrs[i]) < 0)
            log_msg_exit ("invalid --setattr '%s' (expected NAME=VALUE)", setattrs[i]);
    }
    free (setattrs);
    if (verbose)
        (void)attr_set (b->attrs, "log-stderr-level", "6", 0, true);
    if (init_attrs (b) < 0)
        log_err_exit ("attributes");
    if (init_cpu_affinity (b) < 0 || init_sched_slice (b) < 0
        || init_heap (b) < 0)
        exit (1);
    if (router_init (b) < 0 || builtins_init (b) < 0 || events_init (b) < 0)
        log_err_exit ("services");
    if (signals_init (b) < 0)
        log_err_exit ("signals");
    if (!(b->overlay = overlay_create (b)))
        log_err_exit ("overlay");
    if (pmi) {
        if (boot_pmi_wire (pmi, b, &error) < 0)
            log_msg_exit ("rank %u: PMI bootstrap: %s", b->rank, error.text);
    }
    else if (bc)
        boot_config_finish (b, bc);
    else
        boot_local_wire (b);
    if (!b->rundir)
        temp_rundir_create (b);
    snprintf (path, sizeof (path), "%s", attr_get (b->attrs, "local-uri", NULL)
                                         + strlen ("local://"));
    if (!(b->connector = connector_create (b, path)))
        log_err_exit ("cannot listen on %s", path);
    if (temp_rundir[0])
        snprintf (temp_socket, sizeof (temp_socket), "%s", path);
    if (!(modpath = module_path (modpath_opt)))
        log_err_exit ("module path");
    (void)attr_set (b->attrs, "module-path", modpath, 0, true);
    if (!(b->modhost = modhost_create (b, modpath)))
        log_err_exit ("module host");
    if (!modules)
        modules = attr_get (b->attrs, "broker.modules", NULL);
    if (!modules)
        modules = DEFAULT_MODULES;
    if (load_modules (b, modules) < 0) {
        temp_rundir_remove ();
        exit (1);
    }
    if (b->initial_argv && b->rank == 0
        && !(b->runat = runat_create (b, b->initial_argv, initial_program_exited)))
        log_err_exit ("initial program");
    if (overlay_start (b->overlay) < 0)
        log_err_exit ("overlay start");

    if (canopy_reactor_run (b->r, 0) < 0)
        log_err ("reactor");

    /* teardown */
    boot_pmi_destroy (pmi);
    runat_destroy (b->runat);
    modhost_destroy (b->modhost);
    connector_destroy (b->connector);
    overlay_destroy (b->overlay);
    canopy_watcher_destroy (b->signal_w);
    canopy_watcher_destroy (b->shutdown_timer);
    if (b->sigfd >= 0)
        close (b->sigfd);
    router_fini (b);
    attr_destroy (b->attrs);
    logbuf_destroy (b->log);
    canopy_reactor_destroy (b->r);
    zmq_ctx_term (b->zctx);
    temp_rundir_remove ();
    free (b->rundir);
    free (modpath);
    boot_config_destroy (bc);
    return b->exit_code;
}
