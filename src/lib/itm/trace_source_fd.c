/* What the kinds of trace source share: making one, and reading a file descriptor with a
 * timeout. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/set_error.h"

#include "itm/trace_source_internal.h"

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

void *spoor_trace_source_new(size_t size, const trace_source_ops *ops, int fd, const char *name,
                             const char **name_copy)
{
    size_t len = strlen(name) + 1;
    spoor_trace_source *s = calloc(1, size + len);
    if (!s) {
        if (fd > STDERR_FILENO)
            close(fd);
        spoor_set_error(SPOOR_ERR_NOMEM, "%s: out of memory", name);
        return NULL;
    }
    s->ops = ops;
    *name_copy = memcpy((char *)s + size, name, len);
    return s;
}
