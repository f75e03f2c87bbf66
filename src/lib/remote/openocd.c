/* The OpenOCD client's connection (spoor/openocd.h, openocd_internal.h): one TCP connection,
 * every wait bounded, requests counted; the calls of spoor/openocd.h go to the transport
 * (telnet or Tcl RPC). A connection that failed once (closed, timed out, garbled) stays
 * failed: later calls fail at once with the first reason. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/set_error.h"
#include "base/tcp_connect.h"
#include "remote/openocd_internal.h"

int64_t spoor_openocd_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

spoor_openocd *spoor_openocd_open(const char *where, unsigned timeout_ms,
                                  const openocd_transport *t)
{
    char host[256] = "127.0.0.1", port[32];
    const char *colon = strrchr(where, ':');
    if (colon) {
        size_t n = (size_t)(colon - where);
        if (n == 0 || n >= sizeof host || strlen(colon + 1) >= sizeof port) {
            spoor_set_error(SPOOR_ERR_ARGUMENT, "%s %s: expected HOST:PORT or PORT", t->name,
                            where);
            return NULL;
        }
        memcpy(host, where, n);
        host[n] = '\0';
        snprintf(port, sizeof port, "%s", colon + 1);
    } else if (strlen(where) < sizeof port) {
        snprintf(port, sizeof port, "%s", where);
    } else {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "%s %s: expected HOST:PORT or PORT", t->name, where);
        return NULL;
    }
    spoor_openocd *o = calloc(1, sizeof *o);
    if (o)
        o->buf = malloc(OPENOCD_REPLY_MAX + 1);
    if (!o || !o->buf) {
        if (o)
            free(o->buf);
        free(o);
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    o->t = t;
    o->timeout_ms = timeout_ms ? timeout_ms : 5000;
    snprintf(o->where, sizeof o->where, "%s %s:%s", t->name, host, port);
    int gai_error;
    o->fd = spoor_tcp_connect(host, port, o->timeout_ms, false, &gai_error);
    if (o->fd < 0) {
        spoor_set_error(SPOOR_ERR_IO, "%s: %s", o->where,
                        gai_error ? gai_strerror(gai_error) : strerror(errno));
        spoor_openocd_close(o);
        return NULL;
    }
    return o;
}

void spoor_openocd_output(const char *start, size_t len, char *out, size_t cap)
{
    if (!cap)
        return;
    if (len >= cap)
        len = cap - 1;
    memcpy(out, start, len);
    out[len] = '\0';
}

void spoor_openocd_break(spoor_openocd *o)
{
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    snprintf(o->broken, sizeof o->broken, "%s", spoor_last_error());
}

/* false (error set) when the connection failed before */
static bool usable(spoor_openocd *o)
{
    if (o->fd >= 0)
        return true;
    spoor_set_error(SPOOR_ERR_IO, "%s", o->broken);
    return false;
}

bool spoor_openocd_send(spoor_openocd *o, const void *data, size_t len)
{
    if (!usable(o))
        return false;
    o->round_trips++;
    if (send(o->fd, data, len, MSG_NOSIGNAL) != (ssize_t)len) {
        spoor_set_error(SPOOR_ERR_IO, "%s: connection lost", o->where);
        spoor_openocd_break(o);
        return false;
    }
    return true;
}

bool spoor_openocd_receive(spoor_openocd *o, int64_t deadline)
{
    if (!usable(o))
        return false;
    int64_t left = deadline - spoor_openocd_now_ms();
    struct pollfd p = {.fd = o->fd, .events = POLLIN};
    if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
        if (o->len) /* a peer that drips, or talks on without ever ending its reply */
            spoor_set_error(SPOOR_ERR_PROTOCOL,
                            "%s: a reply that did not end within %u ms (%zu bytes came, no end "
                            "of reply)",
                            o->where, o->timeout_ms, o->len);
        else
            spoor_set_error(SPOOR_ERR_PROTOCOL, "%s: no reply within %u ms", o->where,
                            o->timeout_ms);
    } else if (o->len + 4096 > OPENOCD_REPLY_MAX) {
        spoor_set_error(SPOOR_ERR_TOO_LARGE, "%s: a reply longer than %u bytes", o->where,
                        OPENOCD_REPLY_MAX);
    } else {
        ssize_t n = recv(o->fd, o->buf + o->len, 4096, 0);
        if (n > 0) {
            o->len += (size_t)n;
            o->buf[o->len] = '\0';
            return true;
        }
        spoor_set_error(SPOOR_ERR_IO, "%s: connection closed", o->where);
    }
    spoor_openocd_break(o);
    return false;
}

void spoor_openocd_close(spoor_openocd *o)
{
    if (!o)
        return;
    if (o->fd >= 0)
        close(o->fd);
    free(o->buf);
    free(o);
}

bool spoor_openocd_command(spoor_openocd *o, const char *command, char *out, size_t cap)
{
    return o->t->command(o, command, out, cap);
}

bool spoor_openocd_read(spoor_openocd *o, uint32_t addr, void *buf, size_t len)
{
    if (!len)
        return true;
    uint32_t first = addr & ~3u;
    uint64_t last = ((uint64_t)addr + len + 3) & ~(uint64_t)3;
    size_t count = (size_t)((last - first) / 4);
    if (count > OPENOCD_MAX_READ_WORDS || last > 0x100000000ull) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "%s: a read of %zu bytes at 0x%08x", o->t->name, len,
                        addr);
        return false;
    }
    static uint32_t words[OPENOCD_MAX_READ_WORDS];
    if (!o->t->read_words(o, first, words, count))
        return false;
    uint8_t *b = buf;
    for (size_t i = 0; i < len; i++) {
        uint32_t at = addr + (uint32_t)i - first;
        b[i] = (uint8_t)(words[at / 4] >> (8 * (at % 4)));
    }
    return true;
}

bool spoor_openocd_write(spoor_openocd *o, uint32_t addr, uint32_t value, uint32_t mask)
{
    return o->t->write(o, addr, value, mask);
}

uint64_t spoor_openocd_round_trips(const spoor_openocd *o)
{
    return o->round_trips;
}

const char *spoor_openocd_broken(const spoor_openocd *o)
{
    return o->fd < 0 ? o->broken : NULL;
}
