/* spoor top's JSON lines (-j FILE, -j udp:): one object per interval, written by libspoor
 * (spoor_top_session_report_json), to a file or as datagrams. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cli.h"
#include "top_cli.h"

/* -j udp:[HOST:]PORT: a datagram socket connected to HOST (default 127.0.0.1) and PORT. */
static int open_udp(const char *spec, int *fd)
{
    char host[256] = "127.0.0.1";
    const char *port_text = spec, *colon = strrchr(spec, ':');
    if (colon) {
        if ((size_t)(colon - spec) >= sizeof host || colon == spec)
            return cli_error("top", "-j udp:%s: expected udp:[HOST:]PORT", spec);
        memcpy(host, spec, (size_t)(colon - spec));
        host[colon - spec] = '\0';
        port_text = colon + 1;
    }
    uint32_t port;
    if (!cli_parse_u32(port_text, &port) || port == 0 || port > 65535)
        return cli_error("top", "-j udp:%s: expected a port 1..65535", spec);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM}, *res = NULL;
    int gai = getaddrinfo(host, port_text, &hints, &res);
    if (gai)
        return cli_error("top", "-j udp:%s: %s: %s", spec, host, gai_strerror(gai));
    *fd = socket(res->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    int err = *fd < 0 || connect(*fd, res->ai_addr, res->ai_addrlen) != 0 ? errno : 0;
    freeaddrinfo(res);
    if (err)
        return cli_error("top", "-j udp:%s: %s", spec, strerror(err));
    return 0;
}

/* One datagram of what o holds. Nobody listening yet is normal for UDP: the port's "connection
 * refused" (an ICMP error for an earlier datagram, reported on this send, which it stopped)
 * counts in *refused and the datagram is sent again, once. */
static void send_datagram(outbuf *o, uint64_t *refused)
{
    for (int attempt = 0; attempt < 2 && o->len; attempt++) {
        ssize_t n = send(o->fd, o->buf, o->len, 0);
        if (n >= 0)
            break;
        if (errno == ECONNREFUSED) {
            ++*refused;
            continue;
        }
        if (errno != EINTR)
            o->failed = true;
    }
    o->len = 0;
}

int top_json_open(const char *arg, int *fd, bool *udp)
{
    *udp = !strncmp(arg, "udp:", 4);
    if (*udp)
        return open_udp(arg + 4, fd);
    if ((*fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
        return cli_error("top", "-j %s: cannot open: %s", arg, strerror(errno));
    return 0;
}

void top_json_report(outbuf *o, spoor_top_session *s, const spoor_top_report *r, bool exceptions,
                     uint64_t *udp_refused)
{
    unsigned flags = exceptions ? SPOOR_TOP_JSON_EXCEPTIONS : 0;
    if (udp_refused) /* a datagram a line: the exceptions on lines of their own */
        flags |= SPOOR_TOP_JSON_EXCEPTION_LINES;
    size_t len;
    char *text = spoor_top_session_report_json(s, r, flags, &len);
    if (!text) {
        o->failed = true;
        return;
    }
    for (size_t at = 0; at < len;) {
        const char *end = memchr(text + at, '\n', len - at);
        size_t n = end ? (size_t)(end - (text + at)) + 1 : len - at;
        ob_write(o, text + at, n);
        if (udp_refused)
            send_datagram(o, udp_refused);
        at += n;
    }
    free(text);
}
