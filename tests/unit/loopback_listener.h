/* A TCP listener on 127.0.0.1 at a port the system picks, for the unit tests' in-process
 * servers (by number: a minimal system may have no /etc/hosts to name localhost). */
#ifndef SPOOR_TEST_LOOPBACK_LISTENER_H
#define SPOOR_TEST_LOOPBACK_LISTENER_H

#include <netinet/in.h>
#include <sys/socket.h>

/* The listening socket (backlog 1), its port in *port; -1 when the system refuses. */
static inline int listen_loopback(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t alen = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0 || listen(fd, 1) != 0)
        return -1;
    *port = ntohs(a.sin_port);
    return fd;
}

#endif
