/* TCP connections for libspoor's clients (tcp_connect.h). */
#include "base/tcp_connect.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

/* connect() on the non-blocking fd, waiting at most timeout_ms. */
static bool connect_within(int fd, const struct addrinfo *a, unsigned timeout_ms)
{
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
        return true;
    if (errno != EINPROGRESS)
        return false;
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int r;
    do
        r = poll(&p, 1, (int)timeout_ms);
    while (r < 0 && errno == EINTR);
    if (r == 0)
        errno = ETIMEDOUT;
    if (r <= 0)
        return false;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        return false;
    errno = err;
    return err == 0;
}

int spoor_tcp_connect(const char *host, const char *port, unsigned timeout_ms, bool nonblocking,
                      int *gai_error)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (!timeout_ms)
        timeout_ms = SPOOR_TCP_CONNECT_MS;
    *gai_error = getaddrinfo(host, port, &hints, &res);
    if (*gai_error)
        return -1;
    int fd = -1, err = 0;
    for (const struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            err = errno;
        } else if (!connect_within(fd, a, timeout_ms)) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        errno = err;
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (!nonblocking)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}
