/* freeport - print N TCP ports on 127.0.0.1 that are free right now.
 *
 * Usage: freeport [N]   (default 1; one port per line)
 * Binds N sockets to port 0 at once (so the ports differ), prints the
 * ports the kernel chose, and closes them.  A test then hands them to the
 * brokers it starts; the window for someone else to take one is small.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

int main (int argc, char *argv[])
{
    int n = argc > 1 ? atoi (argv[1]) : 1;
    int fds[256];

    if (n < 1 || n > 256) {
        fprintf (stderr, "Usage: freeport [N (1-256)]\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        struct sockaddr_in sin = { .sin_family = AF_INET };
        socklen_t len = sizeof (sin);
        sin.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
        if ((fds[i] = socket (AF_INET, SOCK_STREAM, 0)) < 0
            || bind (fds[i], (struct sockaddr *)&sin, sizeof (sin)) < 0
            || getsockname (fds[i], (struct sockaddr *)&sin, &len) < 0) {
            perror ("freeport");
            return 1;
        }
        printf ("%d\n", ntohs (sin.sin_port));
    }
    for (int i = 0; i < n; i++)
        close (fds[i]);
    return 0;
}
