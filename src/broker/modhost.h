/* modhost.h - broker modules: .so plugins, one thread each.
 *
 * A module's thread talks to the broker over a pair of message queues
 * (msg_queue.h) and runs mod_main with a handle on them.
 * Services: module.load {name|path, args[]}, module.remove {name},
 * module.list.  A module.load request is answered once the module runs
 * (its reactor's first pass); if it exits first, with its errno (or
 * success if mod_main returned 0).  Loading fails with EEXIST (name
 * taken), ENOENT (not found in the module path), EINVAL (not a module).  Removal asks the module to
 * stop ("<name>.shutdown") and answers when its thread has exited.
 */
#ifndef CANOPY_BROKER_MODHOST_H
#define CANOPY_BROKER_MODHOST_H

#include <stdbool.h>

struct broker;
struct modhost;

typedef void (*modhost_done_f)(struct broker *b, void *arg);

struct modhost *modhost_create (struct broker *b, const char *searchpath);
void modhost_destroy (struct modhost *mh);
/* Load by name (searched in the module path) or by path. */
int modhost_load (struct modhost *mh, const char *name_or_path,
                  int argc, char **argv, char *errbuf, size_t errsize);
/* Unload every module, newest first; calls 'done' when all have exited
 * (or timed out).
 */
void modhost_unload_all (struct modhost *mh, modhost_done_f done, void *arg);
int modhost_count (struct modhost *mh);
/* How many modules have not yet said they are running (their mod_main is
 * still setting up); 0 for NULL.
 */
int modhost_loading (struct modhost *mh);

#endif
