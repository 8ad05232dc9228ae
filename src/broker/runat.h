/* runat.h - the initial program on rank 0.
 *
 * Started when the instance is ready, with CANOPY_URI pointing at rank 0
 * and default signal dispositions.  When it exits, 'exited' is called with
 * its wait status.  runat_kill forwards a signal to it.
 */
#ifndef CANOPY_BROKER_RUNAT_H
#define CANOPY_BROKER_RUNAT_H

#include <sys/types.h>

struct broker;
struct runat;

typedef void (*runat_exit_f)(struct broker *b, int status);

struct runat *runat_create (struct broker *b, char **argv, runat_exit_f exited);
void runat_destroy (struct runat *ra);
int runat_start (struct runat *ra, const char *uri);
int runat_kill (struct runat *ra, int signum);
pid_t runat_pid (struct runat *ra);

/* The initial program's environment: 'env' (e.g. environ) with
 * CANOPY_URI=uri in place of any CANOPY_URI there.  The array and its
 * first string are new (free with runat_environ_free); the other
 * strings are env's.  NULL with ENOMEM.
 */
char **runat_environ (char **env, const char *uri);
void runat_environ_free (char **v);

#endif
