/* rawsock - write stdin's bytes to a broker's UNIX socket and report
 * whether the broker closed the connection (within 5 s).
 * Prints "closed by broker" or "still open"; exit 0 either way,
 * 1 on usage or connection errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

int main (int argc, char *argv[])
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    char buf[65536];
    ssize_t n;
    int fd;

    if (argc != 2 || strlen (argv[1]) >= sizeof (addr.sun_path)) {
        fprintf (stderr, "Usage: rawsock SOCKET-PATH <bytes\n");
        return 1;
    }
    strcpy (addr.sun_path, argv[1]);
    if ((fd = socket (AF_UNIX, SOCK_STREAM, 0)) < 0
        || connect (fd, (struct sockaddr *)&addr, sizeof (addr)) < 0) {
        perror (argv[1]);
        return 1;
    }
    while ((n = read (0, buf, sizeof (buf))) > 0) {
        if (send (fd, buf, n, MSG_NOSIGNAL) < 0)
            break;
    }
    struct pollfd pfd = { .fd = fd, .events = POLLIN };
    for (;;) {
        int rc = poll (&pfd, 1, 5000);
        if (rc <= 0) {
            printf ("still open\n");
            return 0;
        }
        n = read (fd, buf, sizeof (buf));
        if (n <= 0) {
            printf ("closed by broker\n");
            return 0;
        }
    }
}
