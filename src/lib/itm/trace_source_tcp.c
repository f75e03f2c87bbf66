/* Trace source: a TCP client of a server that streams trace bytes (OpenOCD's SWO/ITM port,
 * J-Link's SWO port, an Orbuculum server), reconnecting when the server goes away. */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/set_error.h"
#include "base/tcp_connect.h"
#include "itm/trace_source_internal.h"

enum { PORT_MAX = 16 };

typedef struct tcp_source {
    spoor_trace_source base;
    int fd;
    const char *host;
    char port[PORT_MAX];
    unsigned reconnect_s; /* how long to keep trying after the server goes away */
    uint8_t buffer[TRACE_SOURCE_CHUNK];
} tcp_source;

/* A connected socket, or -1 with the error set. */
static int connect_to(const char *host, const char *port)
{
    int gai_error;
    int fd = spoor_tcp_connect(host, port, SPOOR_TCP_CONNECT_MS, false, &gai_error);
    if (fd < 0 && !gai_error && errno == ETIMEDOUT)
        spoor_set_error(SPOOR_ERR_IO, "tcp:%s:%s: no answer to the connect within %u s", host, port,
                        SPOOR_TCP_CONNECT_MS / 1000);
    else if (fd < 0)
        spoor_set_error(SPOOR_ERR_IO, "tcp:%s:%s: %s", host, port,
                        gai_error ? gai_strerror(gai_error) : strerror(errno));
    return fd;
}

static bool reconnect(tcp_source *t)
{
    close(t->fd);
    t->fd = -1;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int fd = connect_to(t->host, t->port);
        if (fd >= 0) {
            t->fd = fd;
            return true;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= (time_t)t->reconnect_s)
            return false;
        struct timespec pause = {0, 250 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

static ssize_t tcp_receive(spoor_trace_source *s, const uint8_t **data, int timeout_ms)
{
    tcp_source *t = (tcp_source *)s;
    if (t->fd < 0) {
        spoor_set_error(SPOOR_ERR_IO, "tcp:%s:%s: not connected", t->host, t->port);
        return SPOOR_TRACE_ERROR;
    }
    *data = t->buffer;
    ssize_t n = spoor_trace_fd_read(t->fd, t->buffer, sizeof t->buffer, timeout_ms);
    if (n > 0 || n == SPOOR_TRACE_IDLE)
        return n;
    const char *why = n == 0 ? "closed by the server" : strerror(errno);
    if (t->reconnect_s > 0) {
        if (reconnect(t))
            return SPOOR_TRACE_RECONNECTED;
        spoor_set_error(SPOOR_ERR_FORMAT, "tcp:%s:%s: %s; no reconnection within %u s", t->host,
                        t->port, why, t->reconnect_s);
        return SPOOR_TRACE_ERROR;
    }
    if (n == 0)
        return SPOOR_TRACE_EOF;
    spoor_set_error(SPOOR_ERR_IO, "tcp:%s:%s: read error: %s", t->host, t->port, why);
    return SPOOR_TRACE_ERROR;
}

static void tcp_close(spoor_trace_source *s)
{
    tcp_source *t = (tcp_source *)s;
    if (t->fd >= 0)
        close(t->fd);
    free(t);
}

static const trace_source_ops tcp_ops = {tcp_receive, tcp_close};

spoor_trace_source *spoor_trace_source_tcp(const char *host, const char *port, unsigned reconnect_s)
{
    if (!*host || !*port || strlen(port) >= PORT_MAX) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "tcp:%s:%s: bad host or port", host, port);
        return NULL;
    }
    int fd = connect_to(host, port);
    if (fd < 0)
        return NULL;
    const char *host_copy;
    tcp_source *t = spoor_trace_source_new(sizeof *t, &tcp_ops, fd, host, &host_copy);
    if (!t)
        return NULL;
    t->fd = fd;
    t->host = host_copy;
    strcpy(t->port, port);
    t->reconnect_s = reconnect_s;
    return &t->base;
}
