/* Trace source: a TCP client of a server that streams trace bytes (OpenOCD's SWO/ITM port,
 * J-Link's SWO port, an Orbuculum server). */
#include <errno.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "spoor/error.h"
#include "spoor/trace_source.h"

int spoor_trace_open_tcp(const char *host, const char *port)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0) {
        spoor_set_error(SPOOR_ERR_IO, "tcp:%s:%s: %s", host, port, gai_strerror(rc));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = res; a; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
            break;
        err = errno;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        spoor_set_error(SPOOR_ERR_IO, "tcp:%s:%s: %s", host, port, strerror(err));
    return fd;
}
