/* Trace sources: parsing SOURCE, reading with a timeout, reconnecting to TCP servers. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "spoor/error.h"
#include "spoor/trace_source.h"

static bool copy(char *dst, size_t cap, const char *src, size_t n)
{
    if (n == 0 || n >= cap)
        return false;
    memcpy(dst, src, n);
    dst[n] = '\0';
    return true;
}

bool spoor_trace_source_open(spoor_trace_source *s, const char *spec, unsigned reconnect_s)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->reconnect_s = reconnect_s;
    if (!strncmp(spec, "tcp:", 4)) {
        const char *hp = spec + 4, *colon = strrchr(hp, ':');
        if (!colon || !copy(s->host, sizeof s->host, hp, (size_t)(colon - hp)) ||
            !copy(s->port, sizeof s->port, colon + 1, strlen(colon + 1))) {
            spoor_set_error(SPOOR_ERR_ARGUMENT, "%s: expected tcp:HOST:PORT", spec);
            return false;
        }
        s->kind = SPOOR_TRACE_TCP;
        s->fd = spoor_trace_open_tcp(s->host, s->port);
    } else if (!strncmp(spec, "serial:", 7)) {
        const char *dp = spec + 7, *colon = strrchr(dp, ':');
        char *end = NULL;
        unsigned long baud = colon ? strtoul(colon + 1, &end, 10) : 0;
        if (!colon || !copy(s->path, sizeof s->path, dp, (size_t)(colon - dp)) || !end || *end ||
            baud == 0 || baud > 100000000) {
            spoor_set_error(SPOOR_ERR_ARGUMENT, "%s: expected serial:/dev/ttyX:BAUD", spec);
            return false;
        }
        s->kind = SPOOR_TRACE_SERIAL;
        s->baud = (unsigned)baud;
        s->fd = spoor_trace_open_serial(s->path, s->baud);
    } else {
        s->kind = strcmp(spec, "-") ? SPOOR_TRACE_FILE : SPOOR_TRACE_STDIN;
        if (!copy(s->path, sizeof s->path, spec, strlen(spec))) {
            spoor_set_error(SPOOR_ERR_ARGUMENT, "%s: bad source", spec);
            return false;
        }
        s->fd = spoor_trace_open_file(spec);
    }
    return s->fd >= 0;
}

bool spoor_trace_source_is_live(const spoor_trace_source *s)
{
    return s->kind != SPOOR_TRACE_FILE;
}

static bool reconnect(spoor_trace_source *s)
{
    close(s->fd);
    s->fd = -1;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int fd = spoor_trace_open_tcp(s->host, s->port);
        if (fd >= 0) {
            s->fd = fd;
            s->reconnects++;
            return true;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= (time_t)s->reconnect_s)
            return false;
        struct timespec pause = {0, 250 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
}

ssize_t spoor_trace_source_read(spoor_trace_source *s, void *buf, size_t cap, int timeout_ms)
{
    if (s->fd < 0) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "trace source is closed");
        return SPOOR_TRACE_ERROR;
    }
    if (timeout_ms >= 0 && s->kind != SPOOR_TRACE_FILE) {
        struct pollfd p = {.fd = s->fd, .events = POLLIN};
        int r;
        do
            r = poll(&p, 1, timeout_ms);
        while (r < 0 && errno == EINTR);
        if (r == 0)
            return SPOOR_TRACE_IDLE;
    }
    ssize_t n;
    do
        n = read(s->fd, buf, cap);
    while (n < 0 && errno == EINTR);
    if (n > 0)
        return n;
    if (s->kind == SPOOR_TRACE_TCP && s->reconnect_s > 0) {
        const char *why = n == 0 ? "closed by the server" : strerror(errno);
        if (reconnect(s))
            return SPOOR_TRACE_RECONNECTED;
        spoor_set_error(SPOOR_ERR_FORMAT, "tcp:%s:%s: %s; no reconnection within %u s", s->host,
                        s->port, why, s->reconnect_s);
        return SPOOR_TRACE_ERROR;
    }
    if (n < 0 && s->kind == SPOOR_TRACE_SERIAL && errno == EIO)
        return SPOOR_TRACE_EOF; /* the tty hung up (e.g. the probe was unplugged) */
    if (n < 0) {
        spoor_set_error(SPOOR_ERR_IO, "%s: read error: %s",
                        s->kind == SPOOR_TRACE_TCP ? s->host : s->path, strerror(errno));
        return SPOOR_TRACE_ERROR;
    }
    return SPOOR_TRACE_EOF;
}

bool spoor_trace_source_map(spoor_trace_source *s, const uint8_t **data, size_t *len)
{
    struct stat st;
    if (s->kind != SPOOR_TRACE_FILE || s->fd < 0 || fstat(s->fd, &st) != 0 ||
        !S_ISREG(st.st_mode) || st.st_size <= 0)
        return false;
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, s->fd, 0);
    if (m == MAP_FAILED)
        return false;
    madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
    s->map = m;
    s->map_len = (size_t)st.st_size;
    *data = m;
    *len = s->map_len;
    return true;
}

void spoor_trace_source_close(spoor_trace_source *s)
{
    if (s->map)
        munmap((void *)s->map, s->map_len);
    s->map = NULL;
    if (s->fd > 2)
        close(s->fd);
    s->fd = -1;
}
