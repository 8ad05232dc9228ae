/* modhost.c - module host (modhost.h).
 *
 * Design notes:
 * - Lifecycle: LOADING (thread started) -> RUNNING (module said so) ->
 *   EXITED (mod_main returned; the thread sent its exit status and is
 *   joined, the DSO closed, its services removed and its users notified).
 * - Each module has a pair of message queues (msg_queue.h), one each
 *   way: messages travel as pointers to private copies, not encoded, and
 *   a busy receiver costs its sender no system call.  The queues exist
 *   before the thread starts, so messages for a module still loading
 *   simply wait in its queue.  The broker watches each module's outbound
 *   queue descriptor in its reactor.
 * - When a module is finished (or abandoned) both queues are closed: a
 *   late message for it fails at once instead of vanishing, and an
 *   abandoned thread's handle sees its connection lost.
 * - Unloading sends a NORESPONSE "<name>.shutdown" request; a module that
 *   does not exit within the grace period is abandoned (its thread is
 *   detached) so that shutdown never hangs.
 * - Control messages from module threads: MOD_STATUS with status RUNNING
 *   or EXITED (payload {"rc": n, "errnum": e}).  RUNNING is sent on the
 *   first pass of the module's reactor, so a module is running once
 *   mod_main has finished setting up (its sockets exist, its root is
 *   known) and waits for work.  A module.load request is answered then,
 *   or, if the module exits first, with its error (or with success if it
 *   returned 0: nothing to do on this rank); the overlay counts a
 *   broker ready only when none of its modules is still loading
 *   (modhost_loading), so the initial program starts on a ready instance.
 *   A module still setting up after broker.module-setup-warn seconds
 *   (default 10) is logged as a warning, then again at twice the
 *   interval each time: an instance that does not start says why.
 * - Requests handed to a module are tracked (rpctrack.c) until it answers
 *   them; when it exits (or is abandoned) every one still unanswered is
 *   answered ENOSYS, so no client waits forever on a module that failed
 *   or stopped with work in its queue.
 */
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <syslog.h>
#include <limits.h>
#include <canopy/canopy.h>
#include "src/common/libutil/list.h"
#include "src/common/libutil/monotime.h"
#include "src/common/libutil/log.h"
#include "src/common/libcanopy/handle_private.h"
#include "src/common/libcanopy/module_private.h"
#include "src/common/libcanopy/msg_queue.h"
#include "broker.h"
#include "rpctrack.h"
#include "modhost.h"
#include "overlay.h"
#include "liveness.h"

#define UNLOAD_GRACE 10.0

enum { CTL_MOD_STATUS = 100 };
enum { MOD_LOADING = 0, MOD_RUNNING = 1, MOD_EXITED = 2 };

struct module {
    struct endpoint ep;
    struct modhost *mh;
    struct list_node node;
    char *name;
    char *path;
    void *dso;
    mod_main_f *main;
    pthread_t thread;
    bool thread_started;
    int argc;
    char **argv;
    int state;
    int rc;
    int errnum;                 /* mod_main's errno when rc != 0 */
    double load_time;
    canopy_msg_t *loader;       /* module.load request, answered at RUNNING */
    canopy_msg_t **removers;    /* pending module.remove requests */
    int nremovers;
    msg_queue_t *to_mod;        /* broker -> module */
    msg_queue_t *from_mod;      /* module -> broker */
    canopy_watcher_t *from_w;   /* from_mod's descriptor */
    canopy_watcher_t *grace;
    canopy_watcher_t *slow_w;   /* warns while it is still setting up */
    double slow_after;
    rpctrack_t *track;          /* requests handed to it, not yet answered */
};

struct modhost {
    struct broker *b;
    struct list_node modules;   /* load order */
    int count;
    char *searchpath;
    double setup_warn;          /* broker.module-setup-warn, seconds */
    modhost_done_f done;
    void *done_arg;
    bool unloading_all;
};

struct thread_arg {
    struct module *mod;
    msg_queue_t *in;            /* the thread's references */
    msg_queue_t *out;
    uint32_t rank;
};

static void thread_arg_free (struct thread_arg *ta)
{
    if (ta) {
        msg_queue_decref (ta->in);
        msg_queue_decref (ta->out);
        free (ta);
    }
}

static void module_free (struct module *mod)
{
    if (!mod)
        return;
    canopy_watcher_destroy (mod->grace);
    canopy_watcher_destroy (mod->slow_w);
    canopy_watcher_destroy (mod->from_w);
    msg_queue_close (mod->to_mod);
    msg_queue_close (mod->from_mod);
    msg_queue_decref (mod->to_mod);
    msg_queue_decref (mod->from_mod);
    for (int i = 0; i < mod->argc; i++)
        free (mod->argv[i]);
    free (mod->argv);
    for (int i = 0; i < mod->nremovers; i++)
        canopy_msg_decref (mod->removers[i]);
    free (mod->removers);
    canopy_msg_decref (mod->loader);
    endpoint_release (&mod->ep);
    rpctrack_destroy (mod->track);
    free (mod->name);
    free (mod->path);
    free (mod);
}

/* A message for the module: tracked if it is a request, then queued (it
 * waits there if the thread has not started reading yet).
 */
static int module_send (struct endpoint *ep, const canopy_msg_t *msg)
{
    struct module *mod = ep->impl;
    if (mod->state == MOD_EXITED) {
        errno = ENOSYS;
        return -1;
    }
    if (rpctrack_add (mod->track, msg) < 0)
        return -1;
    if (msg_queue_send (mod->to_mod, msg) < 0) {
        int e = errno;
        rpctrack_remove (mod->track, msg);
        errno = e;
        return -1;
    }
    return 0;
}

/* The module's status message to the broker (CTL_MOD_STATUS), or NULL. */
static canopy_msg_t *status_msg_create (int status, int rc, int errnum)
{
    canopy_msg_t *msg = canopy_msg_create (CANOPY_MSGTYPE_CONTROL);
    char buf[64];
    snprintf (buf, sizeof (buf), "{\"rc\":%d,\"errnum\":%d}", rc, errnum);
    if (!msg || canopy_msg_set_control (msg, CTL_MOD_STATUS, status) < 0
        || canopy_msg_set_string (msg, buf) < 0) {
        canopy_msg_decref (msg);
        return NULL;
    }
    return msg;
}

static void send_status (canopy_t *h, int status, int rc, int errnum)
{
    canopy_msg_t *msg = status_msg_create (status, rc, errnum);
    if (msg)
        (void)canopy_send (h, msg, 0);
    canopy_msg_decref (msg);
}

/* The first pass of the module's reactor: mod_main is set up. */
static void running_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents,
                        void *arg)
{
    canopy_watcher_stop (w);
    send_status (arg, MOD_RUNNING, 0, 0);
}

static void module_disconnect_cb (canopy_t *h, void *arg)
{
    canopy_reactor_t *r = canopy_get_reactor (h);
    if (r)
        canopy_reactor_stop (r);
}

static void *module_thread (void *arg)
{
    struct thread_arg *ta = arg;
    struct module *mod = ta->mod;
    void *impl = NULL;
    canopy_t *h = NULL;
    canopy_watcher_t *running_w = NULL;
    int rc = -1;
    int errnum = 0;
    sigset_t all;

    /* signals belong to the broker's main thread */
    sigfillset (&all);
    pthread_sigmask (SIG_BLOCK, &all, NULL);
    /* the module's name on its thread (ps -L, top -H, /proc/PID/task):
     * per-module CPU can then be read from outside (kap/model/calibrate.sh)
     */
    {
        char tname[16];
        snprintf (tname, sizeof (tname), "m:%s", mod->name);
        (void)pthread_setname_np (pthread_self (), tname);
    }

    /* The queues are unbounded: the broker and a module never wait for
     * each other to make room (a module sending a burst of requests while
     * the broker forwards it a burst of responses would deadlock).
     */
    if (!(impl = connector_queue_create (msg_queue_incref (ta->in),
                                         msg_queue_incref (ta->out)))) {
        msg_queue_decref (ta->in);
        msg_queue_decref (ta->out);
        goto done_nohandle;
    }
    if (!(h = handle_create (&connector_queue_ops, impl, 0)))
        goto done_nohandle;
    handle_set_disconnect_cb (h, module_disconnect_cb, NULL);
    canopy_log_set_appname (h, mod->name);
    if (module_builtins_register (h, mod->name, ta->rank) < 0) {
        canopy_log_error (h, "failed to register built-in handlers");
        goto done;
    }
    canopy_reactor_t *r = canopy_get_reactor (h);
    if (!r || !(running_w = canopy_prepare_watcher_create (r, running_cb, h))) {
        canopy_log_error (h, "failed to create the running watcher");
        goto done;
    }
    canopy_watcher_unref (running_w);
    canopy_watcher_start (running_w);
    errno = 0;
    rc = mod->main (h, mod->argc, mod->argv);
    errnum = errno;
done:
    canopy_watcher_destroy (running_w);
    send_status (h, MOD_EXITED, rc, rc != 0 ? errnum : 0);
    canopy_close (h);
    thread_arg_free (ta);
    return NULL;
done_nohandle:
    /* Can't report through a handle: say EXITED on the queue itself, so
     * the broker joins the thread and answers what was sent to it.
     */
    {
        canopy_msg_t *msg = status_msg_create (MOD_EXITED, -1, errno ? errno : ENOMEM);
        if (msg)
            (void)msg_queue_send_owned (ta->out, msg);
    }
    thread_arg_free (ta);
    return NULL;
}

static void module_queue_cb (canopy_reactor_t *r, canopy_watcher_t *w,
                             int revents, void *arg);
static void module_running (struct module *mod);
static void slow_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg);

static struct module *module_lookup (struct modhost *mh, const char *name)
{
    struct list_node *pos;
    list_for_each (pos, &mh->modules) {
        struct module *mod = list_entry (pos, struct module, node);
        if (!strcmp (mod->name, name) && mod->state != MOD_EXITED)
            return mod;
    }
    return NULL;
}

static char *find_module (struct modhost *mh, const char *name)
{
    char *paths, *saveptr = NULL, *dir;
    char buf[PATH_MAX];

    if (strchr (name, '/'))
        return access (name, R_OK) == 0 ? strdup (name) : NULL;
    if (!mh->searchpath || !(paths = strdup (mh->searchpath)))
        return NULL;
    for (dir = strtok_r (paths, ":", &saveptr); dir;
         dir = strtok_r (NULL, ":", &saveptr)) {
        snprintf (buf, sizeof (buf), "%s/%s.so", dir, name);
        if (access (buf, R_OK) == 0) {
            free (paths);
            return strdup (buf);
        }
    }
    free (paths);
    errno = ENOENT;
    return NULL;
}

static struct module *module_load (struct modhost *mh, const char *name_or_path,
                                   int argc, char **argv,
                                   char *errbuf, size_t errsize)
{
    struct broker *b = mh->b;
    struct module *mod = NULL;
    struct thread_arg *ta = NULL;
    const char **namep;
    char id[CANOPY_MSG_MAX_ROUTE_LEN + 1];

    if (!(mod = calloc (1, sizeof (*mod)))) {
        errno = ENOMEM;
        goto error;
    }
    mod->mh = mh;
    list_node_init (&mod->node);
    if (!(mod->track = rpctrack_create ())) {
        errno = ENOMEM;
        goto error;
    }
    if (!(mod->path = find_module (mh, name_or_path))) {
        snprintf (errbuf, errsize, "module '%s' not found in %s", name_or_path,
                  mh->searchpath ? mh->searchpath : "(no module path)");
        errno = ENOENT;
        goto error;
    }
    if (!(mod->dso = dlopen (mod->path, RTLD_NOW | RTLD_LOCAL))) {
        snprintf (errbuf, errsize, "%s", dlerror ());
        errno = EINVAL;
        goto error;
    }
    if (!(mod->main = (mod_main_f *)dlsym (mod->dso, "mod_main"))
        || !(namep = dlsym (mod->dso, "mod_name")) || !*namep || !**namep) {
        snprintf (errbuf, errsize, "%s is not a canopy module (mod_main/mod_name)",
                  mod->path);
        errno = EINVAL;
        goto error;
    }
    if (strlen (*namep) > 32 || strchr (*namep, '.')) {
        snprintf (errbuf, errsize, "bad module name '%s'", *namep);
        errno = EINVAL;
        goto error;
    }
    if (module_lookup (mh, *namep)) {
        snprintf (errbuf, errsize, "module '%s' is already loaded", *namep);
        errno = EEXIST;
        goto error;
    }
    bool internal;
    char topic[64];
    snprintf (topic, sizeof (topic), "%s.x", *namep);
    if (service_lookup_endpoint (b, topic, &internal) || internal) {
        snprintf (errbuf, errsize, "service '%s' already exists", *namep);
        errno = EEXIST;
        goto error;
    }
    if (!(mod->name = strdup (*namep)))
        goto nomem;
    snprintf (id, sizeof (id), "%s:m%s", b->rankstr, mod->name);
    if (endpoint_init (&mod->ep, EP_MODULE, id, module_send, mod) < 0)
        goto nomem;
    mod->ep.userid = b->owner;
    mod->ep.rolemask = CANOPY_ROLE_OWNER;
    if (!(mod->to_mod = msg_queue_create ())
        || !(mod->from_mod = msg_queue_create ())
        || !(mod->from_w = canopy_fd_watcher_create (b->r,
                                                     msg_queue_pollfd (mod->from_mod),
                                                     CANOPY_POLLIN, module_queue_cb,
                                                     mod))) {
        snprintf (errbuf, errsize, "module queues: %s", strerror (errno));
        goto error;
    }
    if (argc > 0) {
        if (!(mod->argv = calloc (argc + 1, sizeof (char *))))
            goto nomem;
        for (int i = 0; i < argc; i++) {
            if (!(mod->argv[i] = strdup (argv[i])))
                goto nomem;
            mod->argc++;
        }
    }
    if (service_add_module (b, mod->name, &mod->ep) < 0)
        goto nomem;
    endpoint_register (b, &mod->ep);
    if (!(ta = calloc (1, sizeof (*ta))))
        goto nomem_registered;
    ta->mod = mod;
    ta->in = msg_queue_incref (mod->to_mod);
    ta->out = msg_queue_incref (mod->from_mod);
    ta->rank = b->rank;
    mod->load_time = walltime ();
    int e = pthread_create (&mod->thread, NULL, module_thread, ta);
    if (e != 0) {
        thread_arg_free (ta);
        errno = e;
        snprintf (errbuf, errsize, "pthread_create: %s", strerror (e));
        goto error_registered;
    }
    mod->thread_started = true;
    canopy_watcher_start (mod->from_w);
    mod->slow_after = mh->setup_warn;
    if (mh->setup_warn > 0
        && (mod->slow_w = canopy_timer_watcher_create (b->r, mh->setup_warn, 0,
                                                       slow_cb, mod))) {
        canopy_watcher_unref (mod->slow_w);
        canopy_watcher_start (mod->slow_w);
    }
    list_add_tail (&mh->modules, &mod->node);
    mh->count++;
    broker_log (b, LOG_DEBUG, "loaded module %s from %s", mod->name, mod->path);
    overlay_modules_changed (b->overlay);   /* not ready until it runs */
    return mod;
nomem_registered:
    errno = ENOMEM;
    snprintf (errbuf, errsize, "out of memory");
error_registered:
    service_remove_endpoint (b, &mod->ep);
    endpoint_unregister (b, &mod->ep);
    goto error;
nomem:
    errno = ENOMEM;
    snprintf (errbuf, errsize, "out of memory");
error:
    if (mod) {
        int saved_errno = errno;
        if (mod->dso)
            dlclose (mod->dso);
        module_free (mod);
        errno = saved_errno;
    }
    return NULL;
}

int modhost_load (struct modhost *mh, const char *name_or_path,
                  int argc, char **argv, char *errbuf, size_t errsize)
{
    return module_load (mh, name_or_path, argc, argv, errbuf, errsize) ? 0 : -1;
}

int modhost_loading (struct modhost *mh)
{
    struct list_node *pos;
    int n = 0;

    if (!mh)
        return 0;
    list_for_each (pos, &mh->modules) {
        struct module *mod = list_entry (pos, struct module, node);
        if (mod->state == MOD_LOADING)
            n++;
    }
    return n;
}

static void check_all_unloaded (struct modhost *mh);

struct unanswered {
    struct broker *b;
    const char *name;
    bool abandoned;
    int count;
};

static void unanswered_cb (const canopy_msg_t *req, void *arg)
{
    struct unanswered *u = arg;
    u->count++;
    broker_respond_error (u->b, req, ENOSYS, "module %s %s before answering",
                          u->name, u->abandoned ? "was abandoned" : "exited");
}

static void slow_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct module *mod = arg;

    if (mod->state != MOD_LOADING)
        return;
    broker_log (mod->mh->b, LOG_WARNING, "module %s has been setting up for %.0f s"
                " (its mod_main has not reached its event loop); this broker is"
                " not ready until it does", mod->name, walltime () - mod->load_time);
    mod->slow_after *= 2;
    canopy_timer_watcher_reset (w, mod->slow_after, 0);
    canopy_watcher_start (w);
}

/* The module said it is running: answer its loader, tell the overlay. */
static void module_running (struct module *mod)
{
    struct broker *b = mod->mh->b;

    mod->state = MOD_RUNNING;
    canopy_watcher_stop (mod->slow_w);
    if (mod->loader) {
        broker_respond (b, mod->loader, NULL);
        canopy_msg_decref (mod->loader);
        mod->loader = NULL;
    }
    overlay_modules_changed (b->overlay);
}

/* The module's thread has finished (or is abandoned): tear down. */
static void module_finish (struct module *mod, bool abandoned)
{
    struct modhost *mh = mod->mh;
    struct broker *b = mh->b;
    struct unanswered u = { .b = b, .name = mod->name, .abandoned = abandoned };
    bool was_loading = mod->state == MOD_LOADING;

    mod->state = MOD_EXITED;
    if (mod->loader) {
        int e = mod->errnum > 0 ? mod->errnum : EINVAL;
        if (abandoned)
            broker_respond_error (b, mod->loader, ETIMEDOUT,
                                  "module %s did not start", mod->name);
        else if (mod->rc == 0)  /* it had nothing to do here, and said so */
            broker_respond (b, mod->loader, NULL);
        else
            broker_respond_error (b, mod->loader, e,
                                  "module %s exited while loading (status %d: %s);"
                                  " its reason is in the broker log", mod->name,
                                  mod->rc, strerror (e));
        canopy_msg_decref (mod->loader);
        mod->loader = NULL;
    }
    msg_queue_close (mod->to_mod);
    msg_queue_close (mod->from_mod);
    canopy_watcher_stop (mod->from_w);
    rpctrack_purge (mod->track, unanswered_cb, &u);
    if (u.count > 0)
        broker_log (b, LOG_WARNING, "module %s left %d request%s unanswered;"
                    " answered ENOSYS", mod->name, u.count, u.count == 1 ? "" : "s");
    service_remove_endpoint (b, &mod->ep);
    endpoint_unregister (b, &mod->ep);
    endpoint_disconnect_notify (b, &mod->ep);
    if (mod->thread_started) {
        if (abandoned)
            pthread_detach (mod->thread);
        else
            pthread_join (mod->thread, NULL);
    }
    for (int i = 0; i < mod->nremovers; i++) {
        if (abandoned)
            broker_respond_error (b, mod->removers[i], ETIMEDOUT,
                                  "module %s did not stop", mod->name);
        else
            broker_respond (b, mod->removers[i], NULL);
    }
    if (mod->rc != 0)
        broker_log (b, LOG_ERR, "module %s exited with status %d", mod->name, mod->rc);
    list_del (&mod->node);
    mh->count--;
    /* an abandoned module's code may still run: keep the DSO mapped */
    if (!abandoned && mod->dso)
        dlclose (mod->dso);
    module_free (mod);
    if (was_loading)
        overlay_modules_changed (b->overlay);
    check_all_unloaded (mh);
}

static void grace_cb (canopy_reactor_t *r, canopy_watcher_t *w, int revents, void *arg)
{
    struct module *mod = arg;
    broker_log (mod->mh->b, LOG_ERR, "module %s did not stop within %.0fs; abandoning it",
                mod->name, UNLOAD_GRACE);
    module_finish (mod, true);
}

static void module_stop (struct module *mod)
{
    struct broker *b = mod->mh->b;
    char topic[64];
    canopy_msg_t *msg;

    if (mod->grace)
        return;     /* already stopping */
    if ((mod->grace = canopy_timer_watcher_create (b->r, UNLOAD_GRACE, 0,
                                                   grace_cb, mod)))
        canopy_watcher_start (mod->grace);
    snprintf (topic, sizeof (topic), "%s.shutdown", mod->name);
    if ((msg = canopy_msg_create (CANOPY_MSGTYPE_REQUEST))) {
        if (canopy_msg_set_topic (msg, topic) == 0) {
            (void)canopy_msg_set_nodeid (msg, b->rank);
            (void)broker_rpc (b, msg, b->rank, NULL, NULL);
        }
        canopy_msg_decref (msg);
    }
}

/* The module's outbound queue is readable: route what it sent, a batch
 * at a time (the descriptor stays readable for the rest).
 */
static void module_queue_cb (canopy_reactor_t *r, canopy_watcher_t *w,
                             int revents, void *arg)
{
    struct module *mod = arg;
    struct broker *b = mod->mh->b;

    for (int i = 0; i < 64; i++) {
        canopy_msg_t *msg = msg_queue_recv (mod->from_mod);
        if (!msg) {
            if (errno != EAGAIN)
                canopy_watcher_stop (w);    /* closed: nothing more comes */
            break;
        }
        switch (canopy_msg_get_type (msg)) {
            case CANOPY_MSGTYPE_REQUEST:
                canopy_msg_route_disable (msg);
                router_request (b, msg, &mod->ep);
                break;
            case CANOPY_MSGTYPE_RESPONSE:
                (void)rpctrack_match (mod->track, msg);
                router_response (b, msg);
                break;
            case CANOPY_MSGTYPE_CONTROL: {
                int ctype, status, rc = 0;
                (void)canopy_msg_get_control (msg, &ctype, &status);
                if (ctype != CTL_MOD_STATUS)
                    break;
                if (status == MOD_RUNNING && mod->state == MOD_LOADING)
                    module_running (mod);
                else if (status == MOD_EXITED) {
                    int errnum = 0;
                    (void)canopy_msg_unpack (msg, "{s:i s?i}", "rc", &rc,
                                             "errnum", &errnum);
                    mod->rc = rc;
                    mod->errnum = errnum;
                    canopy_msg_decref (msg);
                    module_finish (mod, false);     /* frees mod */
                    return;
                }
                break;
            }
            default:
                break;
        }
        canopy_msg_decref (msg);
    }
}

/* Services */

static void load_cb (struct broker *b, const canopy_msg_t *msg)
{
    const char *name;
    json_t *args = NULL;
    char errbuf[256] = "";
    char **argv = NULL;
    int argc = 0;

    if (canopy_msg_unpack (msg, "{s:s s?o}", "name", &name, "args", &args) < 0
        || (args && !json_is_array (args))) {
        broker_respond_error (b, msg, EPROTO, "malformed module.load request");
        return;
    }
    if (args && json_array_size (args) > 0) {
        size_t i;
        json_t *v;
        if (!(argv = calloc (json_array_size (args) + 1, sizeof (char *)))) {
            broker_respond_error (b, msg, ENOMEM, NULL);
            return;
        }
        json_array_foreach (args, i, v) {
            if (!json_is_string (v)) {
                free (argv);
                broker_respond_error (b, msg, EPROTO, "module arguments must be strings");
                return;
            }
            argv[argc++] = (char *)json_string_value (v);
        }
    }
    struct module *mod = module_load (b->modhost, name, argc, argv,
                                      errbuf, sizeof (errbuf));
    if (!mod)
        broker_respond_error (b, msg, errno, "%s", errbuf);
    else    /* answered when it runs, or exits (module_running/finish) */
        mod->loader = canopy_msg_incref ((canopy_msg_t *)msg);
    free (argv);
}

static void remove_cb (struct broker *b, const canopy_msg_t *msg)
{
    const char *name;
    struct module *mod;
    canopy_msg_t **v;

    if (canopy_msg_unpack (msg, "{s:s}", "name", &name) < 0) {
        broker_respond_error (b, msg, EPROTO, "malformed module.remove request");
        return;
    }
    if (!(mod = module_lookup (b->modhost, name))) {
        broker_respond_error (b, msg, ENOENT, "module '%s' is not loaded", name);
        return;
    }
    if (!(v = realloc (mod->removers, (mod->nremovers + 1) * sizeof (*v)))) {
        broker_respond_error (b, msg, ENOMEM, NULL);
        return;
    }
    mod->removers = v;
    mod->removers[mod->nremovers++] = canopy_msg_incref ((canopy_msg_t *)msg);
    module_stop (mod);
}

static void list_cb (struct broker *b, const canopy_msg_t *msg)
{
    json_t *a = json_array ();
    struct list_node *pos;
    static const char *states[] = { "loading", "running", "exited" };

    if (!a)
        goto nomem;
    list_for_each (pos, &b->modhost->modules) {
        struct module *mod = list_entry (pos, struct module, node);
        json_t *o = json_pack ("{s:s s:s s:s s:f}",
                               "name", mod->name,
                               "path", mod->path,
                               "state", states[mod->state],
                               "loaded", mod->load_time);
        if (!o || json_array_append_new (a, o) < 0) {
            json_decref (o);
            goto nomem;
        }
    }
    broker_respond_pack (b, msg, "{s:i s:o}", "rank", (int)b->rank, "modules", a);
    return;
nomem:
    json_decref (a);
    broker_respond_error (b, msg, ENOMEM, NULL);
}

struct modhost *modhost_create (struct broker *b, const char *searchpath)
{
    struct modhost *mh = calloc (1, sizeof (*mh));

    if (!mh) {
        errno = ENOMEM;
        return NULL;
    }
    mh->b = b;
    list_init (&mh->modules);
    if (searchpath && !(mh->searchpath = strdup (searchpath)))
        goto error;
    const char *warn = attr_get (b->attrs, "broker.module-setup-warn", NULL);
    mh->setup_warn = 10;
    if (warn && liveness_parse_duration (warn, &mh->setup_warn) < 0) {
        log_msg ("invalid broker.module-setup-warn '%s': expected a duration"
                 " such as 10, 0.5s or 100ms (0: never)", warn);
        errno = EINVAL;
        goto error;
    }
    if (broker_register (b, "module.load", load_cb, 0) < 0
        || broker_register (b, "module.remove", remove_cb, 0) < 0
        || broker_register (b, "module.list", list_cb, 0) < 0)
        goto error;
    return mh;
error:
    modhost_destroy (mh);
    return NULL;
}

void modhost_destroy (struct modhost *mh)
{
    if (!mh)
        return;
    int saved_errno = errno;
    /* Modules should be gone by now; anything left is abandoned. */
    while (!list_empty (&mh->modules)) {
        struct module *mod = list_entry (mh->modules.next, struct module, node);
        list_del (&mod->node);
        if (mod->thread_started)
            pthread_detach (mod->thread);
        module_free (mod);
    }
    free (mh->searchpath);
    free (mh);
    errno = saved_errno;
}

int modhost_count (struct modhost *mh)
{
    return mh ? mh->count : 0;
}

static void check_all_unloaded (struct modhost *mh)
{
    if (!mh->unloading_all)
        return;
    if (!list_empty (&mh->modules)) {
        /* stop the newest module still running */
        struct module *mod = list_entry (mh->modules.prev, struct module, node);
        module_stop (mod);
        return;
    }
    mh->unloading_all = false;
    if (mh->done)
        mh->done (mh->b, mh->done_arg);
}

void modhost_unload_all (struct modhost *mh, modhost_done_f done, void *arg)
{
    mh->done = done;
    mh->done_arg = arg;
    mh->unloading_all = true;
    check_all_unloaded (mh);
}
