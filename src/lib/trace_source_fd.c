/* Reading a trace source's file descriptor with a timeout: what standard input, TCP and serial
 * sources share. */
#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "trace_source_internal.h"

ssize_t spoor_trace_fd_read(int fd, void *buf, size_t cap, int timeout_ms)
{
    if (timeout_ms >= 0) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r;
        do
            r = poll(&p, 1, timeout_ms);
        while (r < 0 && errno == EINTR);
        if (r == 0)
            return SPOOR_TRACE_IDLE;
        if (r < 0)
            return SPOOR_TRACE_ERROR;
    }
    ssize_t n;
    do
        n = read(fd, buf, cap);
    while (n < 0 && errno == EINTR);
    return n < 0 ? SPOOR_TRACE_ERROR : n;
}
