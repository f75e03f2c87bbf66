/* The OpenOCD telnet client (spoor/openocd.h): one TCP connection, a command line out, its
 * output back up to the next prompt ("> " at the start of a line). Every wait is bounded. */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "spoor/error.h"
#include "spoor/openocd.h"

#define REPLY_MAX (256u * 1024u)
#define MAX_READ_WORDS 4096u

struct spoor_openocd {
    int fd;
    unsigned timeout_ms;
    char where[300];
    uint64_t round_trips;
    char *buf;
    size_t len;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int open_socket(const char *host, const char *port)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0)
        return -1;
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            int err = errno;
            close(fd);
            fd = -1;
            errno = err;
        }
    }
    freeaddrinfo(res);
    return fd;
}

/* Reads until the text (negotiation stripped) ends with a prompt. */
static bool read_to_prompt(spoor_openocd *o)
{
    int64_t deadline = now_ms() + o->timeout_ms;
    o->len = 0;
    for (;;) {
        o->buf[o->len] = '\0';
        if ((o->len >= 2 && !strcmp(o->buf + o->len - 2, "> ") &&
             (o->len == 2 || o->buf[o->len - 3] == '\n')))
            return true;
        int64_t left = deadline - now_ms();
        struct pollfd p = {.fd = o->fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
            spoor_set_error(SPOOR_ERR_PROTOCOL, "openocd %s: no prompt within %u ms", o->where,
                            o->timeout_ms);
            return false;
        }
        if (o->len + 4096 > REPLY_MAX) {
            spoor_set_error(SPOOR_ERR_TOO_LARGE, "openocd %s: a reply longer than %u bytes",
                            o->where, REPLY_MAX);
            return false;
        }
        ssize_t n = recv(o->fd, o->buf + o->len, 4096, 0);
        if (n <= 0) {
            spoor_set_error(SPOOR_ERR_IO, "openocd %s: connection closed", o->where);
            return false;
        }
        /* negotiation can straddle reads only at an IAC at the very end: rare, and then the
         * next read completes it; strip what is here */
        o->len += spoor_openocd_strip_telnet(o->buf + o->len, (size_t)n);
    }
}

spoor_openocd *spoor_openocd_connect(const char *where, unsigned timeout_ms)
{
    char host[256] = "127.0.0.1", port[32];
    const char *colon = strrchr(where, ':');
    if (colon) {
        size_t n = (size_t)(colon - where);
        if (n == 0 || n >= sizeof host || strlen(colon + 1) >= sizeof port) {
            spoor_set_error(SPOOR_ERR_ARGUMENT, "openocd %s: expected HOST:PORT or PORT", where);
            return NULL;
        }
        memcpy(host, where, n);
        host[n] = '\0';
        snprintf(port, sizeof port, "%s", colon + 1);
    } else if (strlen(where) < sizeof port) {
        snprintf(port, sizeof port, "%s", where);
    } else {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "openocd %s: expected HOST:PORT or PORT", where);
        return NULL;
    }
    spoor_openocd *o = calloc(1, sizeof *o);
    if (o)
        o->buf = malloc(REPLY_MAX + 1);
    if (!o || !o->buf) {
        spoor_openocd_close(o);
        spoor_set_error(SPOOR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    o->timeout_ms = timeout_ms ? timeout_ms : 5000;
    snprintf(o->where, sizeof o->where, "%s:%s", host, port);
    o->fd = open_socket(host, port);
    if (o->fd < 0) {
        spoor_set_error(SPOOR_ERR_IO, "openocd %s: %s", o->where, strerror(errno));
        spoor_openocd_close(o);
        return NULL;
    }
    if (!read_to_prompt(o)) {
        spoor_openocd_close(o);
        return NULL;
    }
    return o;
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
    char line[512];
    int n = snprintf(line, sizeof line, "%s\n", command);
    if (n < 0 || (size_t)n >= sizeof line) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "openocd: command too long");
        return false;
    }
    if (send(o->fd, line, (size_t)n, MSG_NOSIGNAL) != n) {
        spoor_set_error(SPOOR_ERR_IO, "openocd %s: connection lost", o->where);
        return false;
    }
    o->round_trips++;
    if (!read_to_prompt(o))
        return false;
    /* the output: after the echoed command line, before the prompt */
    const char *start = o->buf, *end = o->buf + o->len - 2;
    const char *echo = strstr(o->buf, command);
    if (echo) {
        const char *nl = strchr(echo, '\n');
        start = nl && nl < end ? nl + 1 : end;
    }
    size_t len = (size_t)(end - start);
    if (cap) {
        if (len >= cap)
            len = cap - 1;
        memcpy(out, start, len);
        out[len] = '\0';
    }
    return true;
}

bool spoor_openocd_read(spoor_openocd *o, uint32_t addr, void *buf, size_t len)
{
    if (!len)
        return true;
    uint32_t first = addr & ~3u;
    uint64_t last = ((uint64_t)addr + len + 3) & ~(uint64_t)3;
    size_t count = (size_t)((last - first) / 4);
    if (count > MAX_READ_WORDS || last > 0x100000000ull) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "openocd: a read of %zu bytes at 0x%08x", len, addr);
        return false;
    }
    char command[64];
    snprintf(command, sizeof command, "mdw 0x%08x %zu", first, count);
    static uint32_t words[MAX_READ_WORDS];
    char *out = malloc(REPLY_MAX);
    bool ok = out && spoor_openocd_command(o, command, out, REPLY_MAX) &&
              spoor_openocd_parse_mdw(out, first, words, count);
    if (out && !ok && spoor_last_status() != SPOOR_ERR_IO &&
        spoor_last_status() != SPOOR_ERR_PROTOCOL)
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "openocd: %s: %.80s", command, out);
    free(out);
    if (!ok)
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
    char command[96], out[512];
    if (mask == 0xFFFFFFFFu)
        snprintf(command, sizeof command, "mww 0x%08x 0x%08x", addr, value);
    else /* mmw ADDR SETBITS CLEARBITS */
        snprintf(command, sizeof command, "mmw 0x%08x 0x%08x 0x%08x", addr, value & mask,
                 ~value & mask);
    if (!spoor_openocd_command(o, command, out, sizeof out))
        return false;
    if (out[0]) { /* OpenOCD says nothing when a write works */
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "openocd: %s: %.80s", command, out);
        return false;
    }
    return true;
}

uint64_t spoor_openocd_round_trips(const spoor_openocd *o)
{
    return o->round_trips;
}
