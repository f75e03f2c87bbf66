/* The GDB remote serial protocol client: one TCP connection to a GDB server, the request/reply
 * exchange (ack mode with resend, or QStartNoAckMode when offered), the handshake (qSupported,
 * target description, '?'), the register and memory reads and the memory writes. Packets are framed
 * and parsed by the same codec as spoor gdbserver (gdb_rsp.c); replies are decoded by
 * gdb_remote_reply.c and the description by gdb_remote_tdesc.c. Every wait is bounded by the
 * timeout; every reply by the codec's packet size. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/set_error.h"
#include "spoor/gdb_rsp.h"

#include "base/tcp_connect.h"
#include "remote/gdb_remote_internal.h"
#include "remote/remote_text_internal.h"

#define DEFAULT_PACKET_SIZE 400 /* what GDB assumes when qSupported does not say */
#define MAX_RESENDS 3

/* GDB's default ARM register layout ('g' of a server that sends no description): r0-r15, the
 * eight 96-bit FPA registers, fps, then cpsr (xpsr on M-profile) as register 25. */
static const char default_tdesc[] =
    "<feature><reg name='r0' bitsize='32'/><reg name='r1' bitsize='32'/>"
    "<reg name='r2' bitsize='32'/><reg name='r3' bitsize='32'/><reg name='r4' bitsize='32'/>"
    "<reg name='r5' bitsize='32'/><reg name='r6' bitsize='32'/><reg name='r7' bitsize='32'/>"
    "<reg name='r8' bitsize='32'/><reg name='r9' bitsize='32'/><reg name='r10' bitsize='32'/>"
    "<reg name='r11' bitsize='32'/><reg name='r12' bitsize='32'/><reg name='sp' bitsize='32'/>"
    "<reg name='lr' bitsize='32'/><reg name='pc' bitsize='32'/>"
    "<reg name='f0' bitsize='96'/><reg name='f1' bitsize='96'/><reg name='f2' bitsize='96'/>"
    "<reg name='f3' bitsize='96'/><reg name='f4' bitsize='96'/><reg name='f5' bitsize='96'/>"
    "<reg name='f6' bitsize='96'/><reg name='f7' bitsize='96'/><reg name='fps' bitsize='32'/>"
    "<reg name='cpsr' bitsize='32'/></feature>";

struct spoor_gdb {
    int fd;
    char name[300]; /* HOST:PORT, for messages */
    unsigned timeout_ms;
    bool no_ack;
    bool dead; /* the connection broke: every later call fails with the same message */
    spoor_status dead_status;
    char dead_msg[400];
    size_t packet_size; /* as the server said */
    int stop_signal;
    /* a running target (spoor_gdb_continue) */
    bool running;         /* continued: the next access halts it first */
    bool let_run;         /* continued at least once: close leaves it running */
    bool stopped_itself;  /* it stopped on its own while running: left halted */
    int64_t halted_at_us; /* when the current halt began */
    spoor_gdb_reg regs[GDB_MAX_REGS];
    size_t nregs;
    spoor_gdb_stats stats;
    /* the exchange */
    spoor_rsp_parser parser;
    bool raw_in_packet, raw_escape; /* where the raw bytes are (note_raw) */
    int raw_sum_left;
    size_t raw_index;
    uint8_t marks[SPOOR_RSP_MAX_PACKET + 1]; /* payload byte i was an unescaped '*' */
    char reply[GDB_REPLY_MAX + 1];
    size_t reply_len;
    uint8_t mem_reply[GDB_REPLY_MAX / 2 + 1]; /* an 'm' reply, decoded */
    char out[2 * SPOOR_RSP_MAX_PACKET + 8];
    uint8_t in[4096];
    size_t in_pos, in_len;
};

/* ---- errors ------------------------------------------------------------------------------- */

static bool fail(spoor_gdb *g, spoor_status st, const char *fmt, const char *detail)
{
    char msg[sizeof g->dead_msg];
    snprintf(msg, sizeof msg, fmt, detail);
    spoor_set_error(st, "%s: %s", g->name, msg);
    return false;
}

/* The connection is unusable from now on. */
static bool broken(spoor_gdb *g, spoor_status st, const char *fmt, const char *detail)
{
    fail(g, st, fmt, detail);
    g->dead = true;
    g->dead_status = st;
    snprintf(g->dead_msg, sizeof g->dead_msg, "%s", spoor_last_error());
    return false;
}

/* false, with the error that broke it, once the connection is unusable */
static bool alive(spoor_gdb *g)
{
    if (g->dead)
        spoor_set_error(g->dead_status, "%s", g->dead_msg);
    return !g->dead;
}

bool spoor_gdb_alive(spoor_gdb *g)
{
    return alive(g);
}

/* ---- I/O with deadlines --------------------------------------------------------------------- */

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t now_ms(void)
{
    return now_us() / 1000;
}

static int wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left < 0)
            left = 0;
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, (int)left);
        if (r >= 0 || errno != EINTR)
            return r;
    }
}

/* Sends all of buf before the deadline (that of the exchange it belongs to). */
static bool send_all(spoor_gdb *g, const char *buf, size_t len, int64_t deadline)
{
    while (len) {
        ssize_t n = send(g->fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (wait_fd(g->fd, POLLOUT, deadline) <= 0) {
                char ms[16];
                snprintf(ms, sizeof ms, "%u", g->timeout_ms);
                return broken(g, SPOOR_ERR_IO, "cannot send within %s ms", ms);
            }
            continue;
        }
        if (n <= 0)
            return broken(g, SPOOR_ERR_IO, "connection lost: %s", strerror(errno));
        g->stats.bytes_sent += (uint64_t)n;
        buf += n;
        len -= (size_t)n;
    }
    return true;
}

/* The next byte from the server: 1, 0 at the deadline, -1 when the connection is gone. */
static int next_byte(spoor_gdb *g, int64_t deadline, uint8_t *c)
{
    while (g->in_pos == g->in_len) {
        if (wait_fd(g->fd, POLLIN, deadline) <= 0)
            return 0;
        ssize_t n = recv(g->fd, g->in, sizeof g->in, 0);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            continue;
        if (n <= 0)
            return -1;
        g->stats.bytes_received += (uint64_t)n;
        g->in_pos = 0;
        g->in_len = (size_t)n;
    }
    *c = g->in[g->in_pos++];
    return 1;
}

/* Tracks the raw bytes beside the parser: where a packet and its checksum are, and which
 * payload bytes were an unescaped '*' (run-length encoding; a literal '*' arrives escaped as
 * "}\x0a"). Returns true when c is outside the protocol (noise between packets). */
static bool note_raw(spoor_gdb *g, uint8_t c)
{
    if (g->raw_sum_left) {
        g->raw_sum_left--;
        return false;
    }
    if (!g->raw_in_packet) {
        if (c == '$')
            g->raw_in_packet = true, g->raw_escape = false, g->raw_index = 0;
        return c != '$' && c != '+' && c != '-';
    }
    bool rle = false;
    if (g->raw_escape) {
        g->raw_escape = false;
    } else if (c == '#') {
        g->raw_in_packet = false;
        g->raw_sum_left = 2;
        return false;
    } else if (c == '}') {
        g->raw_escape = true;
        return false;
    } else {
        rle = c == '*';
    }
    if (g->raw_index < SPOOR_RSP_MAX_PACKET)
        g->marks[g->raw_index] = rle;
    g->raw_index++;
    return false;
}

/* Drops whatever the server sent that no request of ours asks for now: a reply it sent twice,
 * or one it resent after a '-' whose first copy was taken. Sent before a new request, so that
 * the next packet is the reply to that request and not one step behind. */
static bool drain(spoor_gdb *g)
{
    g->in_pos = g->in_len = 0;
    for (;;) {
        struct pollfd p = {.fd = g->fd, .events = POLLIN};
        int r = poll(&p, 1, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        ssize_t n = recv(g->fd, g->in, sizeof g->in, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n < 0)
            return broken(g, SPOOR_ERR_IO, "connection lost: %s", strerror(errno));
        if (n == 0)
            return broken(g, SPOOR_ERR_IO, "the server closed the connection%s", "");
        g->stats.bytes_received += (uint64_t)n;
    }
    spoor_rsp_init(&g->parser);
    return true;
}

/* ---- one exchange ---------------------------------------------------------------------------- */

/* The server refused (NACK) the packet framed in g->out: send it again, up to MAX_RESENDS
 * times in a row. */
static bool resend(spoor_gdb *g, size_t flen, int *resends, int64_t deadline)
{
    if (++*resends > MAX_RESENDS)
        return broken(g, SPOOR_ERR_PROTOCOL, "the server refused %s packets in a row", "4");
    return send_all(g, g->out, flen, deadline);
}

/* Sends payload and waits for its reply (into g->reply, run-length expanded), the whole
 * exchange (sending, resends, every byte of the reply) bounded by one timeout: a server that
 * drips its reply a byte at a time does not get a new wait per byte. first: this is the first
 * exchange of the connection, where anything that is not the protocol means the peer is not
 * a GDB server (and what it sent before the request is shown, not drained). */
static bool exchange(spoor_gdb *g, const char *payload, bool first)
{
    if (!alive(g))
        return false;
    int64_t deadline = now_ms() + g->timeout_ms;
    size_t flen = 0;
    if (payload) { /* NULL: only wait for the next packet the server sends */
        flen = spoor_rsp_frame(payload, strlen(payload), g->out, sizeof g->out);
        if (!flen)
            return fail(g, SPOOR_ERR_ARGUMENT, "request too long%s", "");
        if ((!first && !drain(g)) || !send_all(g, g->out, flen, deadline))
            return false;
        g->stats.round_trips++;
    }
    /* In ack mode a server acknowledges ('+') every request it takes before it answers it. A
     * packet that comes before that '+' answers something earlier: a reply sent twice, or, when
     * a '-' made us send the request again, the answer to a copy the server had taken after all
     * (its '+' reached us as '-'): it answers both, and every copy but the last is dropped here,
     * however late it comes, instead of being taken for the reply to the next request. */
    bool acked = g->no_ack || !flen;
    int resends = 0, bad = 0;
    uint8_t seen[40];
    size_t nseen = 0;
    g->raw_in_packet = false;
    g->raw_sum_left = 0;
    for (;;) {
        uint8_t c;
        int r = next_byte(g, deadline, &c);
        char detail[200];
        if (r == 0) {
            char ms[16];
            snprintf(ms, sizeof ms, "%u", g->timeout_ms);
            return broken(g, SPOOR_ERR_IO,
                          g->raw_in_packet || g->raw_sum_left
                              ? "a reply that did not end within %s ms"
                              : "no reply within %s ms",
                          ms);
        }
        if (r < 0)
            return broken(g, first ? SPOOR_ERR_PROTOCOL : SPOOR_ERR_IO,
                          first ? "not a GDB server (it closed the connection%s)"
                                : "the server closed the connection%s",
                          "");
        if (nseen < sizeof seen)
            seen[nseen++] = c;
        bool noise = note_raw(g, c);
        spoor_rsp_event ev = spoor_rsp_feed(&g->parser, c);
        if (first && noise) { /* show a line of what it says (a banner, an error) */
            int64_t more = now_ms() + 200;
            while (nseen < sizeof seen && c != '\n' && next_byte(g, more, &c) > 0)
                seen[nseen++] = c;
            spoor_peer_excerpt(seen, nseen, 40, true, detail, sizeof detail);
            return broken(g, SPOOR_ERR_PROTOCOL, "not a GDB server (it sent \"%s\")", detail);
        }
        switch (ev) {
        case SPOOR_RSP_ACK: acked = true; break;
        case SPOOR_RSP_NACK:
            if (!flen)
                break; /* nothing of ours to resend */
            if (!resend(g, flen, &resends, deadline))
                return false;
            acked = false; /* the reply comes after the '+' of this copy */
            break;
        case SPOOR_RSP_BAD_CHECKSUM:
            if (g->parser.overflow)
                return broken(g, SPOOR_ERR_TOO_LARGE, "a reply longer than %s bytes", "4096");
            if (++bad > MAX_RESENDS || g->no_ack) {
                spoor_peer_excerpt(seen, nseen, 40, true, detail, sizeof detail);
                return broken(g, SPOOR_ERR_PROTOCOL,
                              first ? "not a GDB server (bad checksums: \"%s\")"
                                    : "replies with bad checksums (\"%s\")",
                              detail);
            }
            if (!send_all(g, "-", 1, deadline))
                return false;
            break;
        case SPOOR_RSP_PACKET: {
            /* the ack of a server's last word ("W00", then it closes) may find it gone: the
             * packet still counts, and the next exchange finds the connection closed */
            if (!g->no_ack && send(g->fd, "+", 1, MSG_NOSIGNAL) == 1)
                g->stats.bytes_sent++;
            if (!acked)
                break; /* not the reply to this request (see above) */
            long n = spoor_gdb_expand_rle(g->parser.packet, g->parser.len, g->marks, g->reply,
                                          sizeof g->reply);
            if (n < 0)
                return broken(g, SPOOR_ERR_PROTOCOL, "a malformed run-length encoding%s", "");
            g->reply_len = (size_t)n;
            return true;
        }
        default: break; /* '+', noise between packets */
        }
    }
}

/* ---- connecting ---------------------------------------------------------------------------- */

static bool parse_host_port(const char *hp, char *host, size_t cap, char *port)
{
    const char *colon = strrchr(hp, ':');
    if (!colon || colon == hp || (size_t)(colon - hp) >= cap || !colon[1] || strlen(colon) > 6)
        return false;
    unsigned long v = 0;
    for (const char *p = colon + 1; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        v = v * 10 + (unsigned long)(*p - '0');
    }
    if (!v || v > 65535)
        return false;
    memcpy(host, hp, (size_t)(colon - hp));
    host[colon - hp] = 0;
    snprintf(port, 8, "%lu", v);
    return true;
}

static bool open_socket(spoor_gdb *g, const char *host, const char *port)
{
    int gai_error;
    g->fd = spoor_tcp_connect(host, port, g->timeout_ms, true, &gai_error);
    if (g->fd >= 0)
        return true;
    if (gai_error)
        return fail(g, SPOOR_ERR_IO, "unknown host (%s)", gai_strerror(gai_error));
    if (errno == ETIMEDOUT) {
        char ms[16];
        snprintf(ms, sizeof ms, "%u", g->timeout_ms);
        return fail(g, SPOOR_ERR_IO, "no connection within %s ms", ms);
    }
    return fail(g, SPOOR_ERR_IO, "%s",
                errno == ECONNREFUSED ? "connection refused" : strerror(errno));
}

/* The whole of one qXfer:features:read annex, appended to *doc. */
static bool read_annex(spoor_gdb *g, const char *annex, char **doc, size_t *len)
{
    size_t chunk = (g->packet_size < SPOOR_RSP_MAX_PACKET ? g->packet_size : SPOOR_RSP_MAX_PACKET);
    chunk = chunk > 64 ? chunk - 16 : 48;
    size_t start = *len;
    for (;;) {
        char req[200];
        snprintf(req, sizeof req, "qXfer:features:read:%s:%zx,%zx", annex, *len - start, chunk);
        if (!exchange(g, req, false))
            return false;
        char kind = g->reply_len ? g->reply[0] : 0;
        if (kind != 'm' && kind != 'l')
            return fail(g, SPOOR_ERR_UNAVAILABLE, "the server gives no target description %s",
                        annex);
        size_t n = g->reply_len - 1;
        if (*len + n > GDB_TDESC_MAX_BYTES)
            return fail(g, SPOOR_ERR_TOO_LARGE, "target description larger than %s bytes",
                        "256 KiB");
        char *more = realloc(*doc, *len + n + 1);
        if (!more)
            return fail(g, SPOOR_ERR_NOMEM, "out of memory%s", "");
        *doc = more;
        memcpy(*doc + *len, g->reply + 1, n);
        *len += n;
        if (kind == 'l')
            return true;
        if (!n)
            return fail(g, SPOOR_ERR_PROTOCOL, "an empty 'm' part of %s", annex);
    }
}

static bool safe_annex(const char *href)
{
    for (const char *p = href; *p; p++)
        if (*p == ':' || *p == ',' || *p == ';' || *p == '#' || *p == '$' || *p == '}' ||
            *p == '*' || (unsigned char)*p <= ' ')
            return false;
    return true;
}

/* Reads annex and, depth first, the documents it includes, appending registers to g->regs. */
static bool load_tdesc(spoor_gdb *g, const char *annex, int depth, int *docs, size_t *total,
                       unsigned *next_regnum)
{
    if (depth > GDB_TDESC_MAX_DEPTH || ++*docs > GDB_TDESC_MAX_DOCS)
        return fail(g, SPOOR_ERR_TOO_LARGE,
                    "target description: includes nested too deep or too "
                    "many (at %s)",
                    annex);
    char *doc = NULL;
    size_t len = 0;
    bool ok = read_annex(g, annex, &doc, &len);
    *total += len;
    if (ok && *total > GDB_TDESC_MAX_BYTES)
        ok = fail(g, SPOOR_ERR_TOO_LARGE, "target description larger than %s bytes", "256 KiB");
    size_t pos = 0;
    gdb_tdesc_item item;
    while (ok) {
        gdb_tdesc_kind k = spoor_gdb_tdesc_next(doc, len, &pos, &item);
        if (k == GDB_TDESC_END)
            break;
        if (k == GDB_TDESC_ERROR)
            ok = fail(g, SPOOR_ERR_PROTOCOL, "malformed target description %s", annex);
        else if (k == GDB_TDESC_INCLUDE)
            ok = safe_annex(item.href)
                     ? load_tdesc(g, item.href, depth + 1, docs, total, next_regnum)
                     : fail(g, SPOOR_ERR_PROTOCOL, "target description: bad include name in %s",
                            annex);
        else if (!spoor_gdb_tdesc_add(g->regs, &g->nregs, GDB_MAX_REGS, &item, next_regnum))
            ok = fail(g, SPOOR_ERR_PROTOCOL,
                      "target description %s: a register number twice, or too many", annex);
    }
    free(doc);
    return ok;
}

static bool describe(spoor_gdb *g, bool xfer)
{
    unsigned next = 0;
    int docs = 0;
    size_t total = 0;
    if (xfer && load_tdesc(g, "target.xml", 0, &docs, &total, &next)) {
        spoor_gdb_tdesc_layout(g->regs, g->nregs);
        return true;
    }
    /* Only a server that has no target.xml at all gets the default layout; a broken
     * description is an error, not a guess. */
    if (xfer && (g->dead || docs != 1 || g->nregs || spoor_last_status() != SPOOR_ERR_UNAVAILABLE))
        return false;
    /* No description (or the server cannot give one): GDB's default layout. */
    g->nregs = 0;
    next = 0;
    long n = spoor_gdb_parse_tdesc(default_tdesc, sizeof default_tdesc - 1, g->regs, 0,
                                   GDB_MAX_REGS, &next);
    g->nregs = n > 0 ? (size_t)n : 0;
    return true;
}

/* "Txx..." or "Sxx": a stop reply (GDB manual, "Stop Reply Packets"). */
static bool is_stop_reply(const char *r, size_t len)
{
    return len >= 3 && (r[0] == 'T' || r[0] == 'S') && isxdigit((unsigned char)r[1]) &&
           isxdigit((unsigned char)r[2]);
}

static bool handshake(spoor_gdb *g)
{
    if (!exchange(g, "qSupported:xmlRegisters=arm;swbreak+;hwbreak+", true))
        return false;
    /* QEMU's gdbstub stops a running machine when a client connects and announces it with an
     * unsolicited stop reply ("T02"): the reply to qSupported is the packet after it. Console
     * output ('O') the running target printed may come before it; all of it within one
     * timeout. */
    int stops = 0, sig = 0;
    int64_t until = now_ms() + g->timeout_ms;
    for (;;) {
        bool stop = is_stop_reply(g->reply, g->reply_len);
        if (stop ? ++stops > 2 : spoor_gdb_parse_stop_reply(g->reply, g->reply_len, &sig) != 'O')
            break;
        if (now_ms() > until)
            return broken(g, SPOOR_ERR_PROTOCOL, "console output but no reply within %s",
                          "the timeout");
        if (!exchange(g, NULL, false))
            return false;
    }
    gdb_supported sup;
    if (!spoor_gdb_parse_supported(g->reply, g->reply_len, &sup)) {
        char detail[200];
        spoor_peer_excerpt((const uint8_t *)g->reply, g->reply_len, 40, true, detail,
                           sizeof detail);
        return broken(g, SPOOR_ERR_PROTOCOL, "not a GDB server (qSupported answered \"%s\")",
                      detail);
    }
    g->packet_size = sup.packet_size ? sup.packet_size : DEFAULT_PACKET_SIZE;
    if (sup.no_ack) {
        if (!exchange(g, "QStartNoAckMode", false))
            return false;
        g->no_ack = g->reply_len == 2 && !memcmp(g->reply, "OK", 2);
    }
    if (!describe(g, sup.xfer_features))
        return false;
    if (!exchange(g, "?", false))
        return false;
    char kind = spoor_gdb_parse_stop_reply(g->reply, g->reply_len, &sig);
    for (until = now_ms() + g->timeout_ms; kind == 'O';) { /* console output before the stop */
        if (now_ms() > until)
            return broken(g, SPOOR_ERR_PROTOCOL, "console output but no reply within %s",
                          "the timeout");
        if (!exchange(g, NULL, false))
            return false;
        kind = spoor_gdb_parse_stop_reply(g->reply, g->reply_len, &sig);
    }
    char detail[200];
    spoor_peer_excerpt((const uint8_t *)g->reply, g->reply_len, 40, true, detail, sizeof detail);
    if (kind == 'W' || kind == 'X')
        return fail(g, SPOOR_ERR_UNAVAILABLE, "the target has exited (%s)", detail);
    if (!kind)
        return fail(g, SPOOR_ERR_PROTOCOL, "not a GDB server ('?' answered \"%s\")", detail);
    g->stop_signal = sig;
    return true;
}

spoor_gdb *spoor_gdb_connect(const char *host_port, unsigned timeout_ms)
{
    char host[256], port[8];
    if (!host_port || !parse_host_port(host_port, host, sizeof host, port)) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "--gdb %s: expected HOST:PORT (e.g. localhost:3333)",
                        host_port ? host_port : "(null)");
        return NULL;
    }
    spoor_gdb *g = calloc(1, sizeof *g);
    if (!g) {
        spoor_set_error(SPOOR_ERR_NOMEM, "%s: out of memory", host_port);
        return NULL;
    }
    g->fd = -1;
    g->timeout_ms = timeout_ms ? timeout_ms : 1;
    snprintf(g->name, sizeof g->name, "%s", host_port);
    spoor_rsp_init(&g->parser);
    if (!open_socket(g, host, port) || !handshake(g)) {
        spoor_gdb_close(g);
        return NULL;
    }
    return g;
}

void spoor_gdb_close(spoor_gdb *g)
{
    if (!g)
        return;
    /* No 'D': detaching resumes the target, and it is to stay halted for the user. A target
     * that was let run (spoor_gdb_continue) is left running, as it was found between reads. */
    if (g->let_run && !g->running && !g->stopped_itself && !g->dead && g->fd >= 0)
        spoor_gdb_continue(g);
    if (g->fd >= 0)
        close(g->fd);
    free(g);
}

size_t spoor_gdb_packet_size(const spoor_gdb *g)
{
    return g->packet_size;
}

size_t spoor_gdb_max_read(const spoor_gdb *g)
{
    size_t ps = g->packet_size < SPOOR_RSP_MAX_PACKET ? g->packet_size : SPOOR_RSP_MAX_PACKET;
    return ps / 2 ? ps / 2 : 1;
}

size_t spoor_gdb_max_write(const spoor_gdb *g)
{
    /* "$M" 8 digits "," 8 digits ":" ... "#cs": 23 bytes around the data */
    size_t ps = g->packet_size < SPOOR_RSP_MAX_PACKET ? g->packet_size : SPOOR_RSP_MAX_PACKET;
    return ps > 23 + 2 ? (ps - 23) / 2 : 1;
}

int spoor_gdb_stop_signal(const spoor_gdb *g)
{
    return g->stop_signal;
}

void spoor_gdb_stats_get(const spoor_gdb *g, spoor_gdb_stats *out)
{
    *out = g->stats;
}

/* ---- a running target ------------------------------------------------------------------------ */

#define GDB_SIGINT 2 /* GDB's signal number of an interrupt (0x03): the stop spoor asked for */

bool spoor_gdb_continue(spoor_gdb *g)
{
    if (!alive(g))
        return false;
    if (g->running || g->stopped_itself)
        return true; /* one that stopped itself stays halted: it is not spoor's to resume */
    /* 'c' has no reply until the target stops; in ack mode the server acknowledges it */
    int64_t deadline = now_ms() + g->timeout_ms;
    size_t flen = spoor_rsp_frame("c", 1, g->out, sizeof g->out);
    if (!flen || !drain(g) || !send_all(g, g->out, flen, deadline))
        return false;
    for (int resends = 0; !g->no_ack;) {
        uint8_t c;
        int r = next_byte(g, deadline, &c);
        if (r <= 0)
            return broken(g, SPOOR_ERR_IO,
                          r ? "the server closed the connection%s" : "no ack of 'c'%s", "");
        if (c == '+')
            break;
        if (c == '-' && !resend(g, flen, &resends, deadline))
            return false;
    }
    if (g->halted_at_us) {
        g->stats.halted_us += (uint64_t)(now_us() - g->halted_at_us);
        g->halted_at_us = 0;
    }
    g->stats.resumes++;
    g->running = g->let_run = true;
    return true;
}

bool spoor_gdb_halt(spoor_gdb *g)
{
    if (!alive(g))
        return false;
    if (!g->running)
        return true;
    g->running = false;
    /* Anything the server sent while the target ran is a stop it made on its own (a
     * breakpoint, a fault, an exit): take that instead of interrupting. */
    bool asked = g->in_pos == g->in_len && wait_fd(g->fd, POLLIN, now_ms()) == 0;
    if (asked) {
        g->halted_at_us = now_us();
        if (!send_all(g, "\x03", 1, now_ms() + g->timeout_ms))
            return false;
        g->stats.halts++;
    }
    int sig = 0;
    char kind;
    int64_t until = now_ms() + g->timeout_ms;
    do { /* 'O' packets: console output before the stop, all of it within one timeout */
        if (now_ms() > until)
            return broken(g, SPOOR_ERR_IO, "console output but no stop within %s", "the timeout");
        if (!exchange(g, NULL, false))
            return false;
        kind = spoor_gdb_parse_stop_reply(g->reply, g->reply_len, &sig);
    } while (kind == 'O');
    char detail[200];
    spoor_peer_excerpt((const uint8_t *)g->reply, g->reply_len, 40, true, detail, sizeof detail);
    if (kind == 'W' || kind == 'X')
        return broken(g, SPOOR_ERR_UNAVAILABLE, "the target has exited (%s)", detail);
    if (!kind)
        return broken(g, SPOOR_ERR_PROTOCOL, "no stop reply but \"%s\" while the target ran",
                      detail);
    g->stop_signal = sig;
    if (!asked || sig != GDB_SIGINT) {
        g->stopped_itself = true;
        g->halted_at_us = 0;
        return fail(g, SPOOR_ERR_UNAVAILABLE,
                    "the target stopped on its own while it ran (%s); it stays halted", detail);
    }
    return true;
}

bool spoor_gdb_running(const spoor_gdb *g)
{
    return g->running;
}

/* ---- memory ------------------------------------------------------------------------------- */

bool spoor_gdb_read_memory(spoor_gdb *g, uint32_t addr, void *buf, size_t len)
{
    if (g->running && !spoor_gdb_halt(g))
        return false;
    uint8_t *out = buf;
    uint64_t pos = addr, end = (uint64_t)addr + len;
    if (end > 0x100000000ull) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "%s: %zu bytes at 0x%08" PRIx32 " run past 4 GiB",
                        g->name, len, addr);
        return false;
    }
    size_t max = spoor_gdb_max_read(g);
    while (pos < end) {
        size_t want = end - pos < max ? (size_t)(end - pos) : max;
        char req[32];
        snprintf(req, sizeof req, "m%" PRIx64 ",%zx", pos, want);
        if (!exchange(g, req, false))
            return false;
        g->stats.mem_packets++;
        long n =
            spoor_gdb_decode_hex_reply(g->reply, g->reply_len, g->mem_reply, sizeof g->mem_reply);
        if (n < 0 && g->reply_len && g->reply[0] == 'E') {
            spoor_set_error(
                SPOOR_ERR_UNAVAILABLE,
                "%s: target memory at 0x%08" PRIx64 " (%zu bytes) cannot be read (%.*s)", g->name,
                pos, want, (int)(g->reply_len < 16 ? g->reply_len : 16), g->reply);
            return false;
        }
        if (n <= 0) {
            char detail[200];
            spoor_peer_excerpt((const uint8_t *)g->reply, g->reply_len, 40, true, detail,
                               sizeof detail);
            return fail(g, SPOOR_ERR_PROTOCOL, "a malformed memory reply \"%s\"", detail);
        }
        if ((size_t)n > want) {
            /* Not the reply to this request (one sent twice, or lost): the stream cannot be
             * trusted from here on. */
            char detail[100];
            snprintf(detail, sizeof detail, "%ld bytes for a read of %zu at 0x%08" PRIx64, n, want,
                     pos);
            return broken(g, SPOOR_ERR_PROTOCOL, "a memory reply of %s", detail);
        }
        memcpy(out + (pos - addr), g->mem_reply, (size_t)n);
        g->stats.mem_bytes += (uint64_t)n;
        pos += (uint64_t)n; /* a short reply (GDB manual, 'm'): ask again for the rest */
    }
    return true;
}

bool spoor_gdb_write_memory(spoor_gdb *g, uint32_t addr, const void *buf, size_t len)
{
    if (g->running && !spoor_gdb_halt(g))
        return false;
    const uint8_t *in = buf;
    uint64_t pos = addr, end = (uint64_t)addr + len;
    if (end > 0x100000000ull) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "%s: %zu bytes at 0x%08" PRIx32 " run past 4 GiB",
                        g->name, len, addr);
        return false;
    }
    static const char digits[] = "0123456789abcdef";
    const size_t max = spoor_gdb_max_write(g);
    char req[2 * SPOOR_RSP_MAX_PACKET + 32];
    while (pos < end) {
        size_t want = end - pos < max ? (size_t)(end - pos) : max;
        int n = snprintf(req, sizeof req, "M%" PRIx64 ",%zx:", pos, want);
        for (size_t i = 0; i < want; i++) {
            uint8_t b = in[pos - addr + i];
            req[n++] = digits[b >> 4];
            req[n++] = digits[b & 15];
        }
        req[n] = 0;
        if (!exchange(g, req, false))
            return false;
        g->stats.mem_write_packets++;
        switch (spoor_gdb_parse_write_reply(g->reply, g->reply_len)) {
        case GDB_WRITE_OK: break;
        case GDB_WRITE_ERROR:
            spoor_set_error(
                SPOOR_ERR_UNAVAILABLE,
                "%s: target memory at 0x%08" PRIx64 " (%zu bytes) cannot be written (%.*s)",
                g->name, pos, want, (int)(g->reply_len < 16 ? g->reply_len : 16), g->reply);
            return false;
        case GDB_WRITE_UNSUPPORTED:
            spoor_set_error(SPOOR_ERR_UNSUPPORTED,
                            "%s: the server does not write memory ('M' not supported)", g->name);
            return false;
        default: {
            char detail[200];
            spoor_peer_excerpt((const uint8_t *)g->reply, g->reply_len, 40, true, detail,
                               sizeof detail);
            return fail(g, SPOOR_ERR_PROTOCOL, "a malformed reply to a memory write \"%s\"",
                        detail);
        }
        }
        g->stats.mem_write_bytes += want;
        pos += want;
    }
    return true;
}

/* ---- registers ------------------------------------------------------------------------------- */

/* The bytes of one register from hex text; false when the server marked it unavailable ('x')
 * or the text is malformed. */
static bool reg_bytes(const char *hex, size_t nbytes, uint8_t *out)
{
    return spoor_gdb_decode_hex_reply(hex, 2 * nbytes, out, nbytes) == (long)nbytes;
}

bool spoor_gdb_read_registers(spoor_gdb *g, spoor_regs *out, char *missing, size_t missing_len)
{
    memset(out, 0, sizeof *out);
    if (g->running && !spoor_gdb_halt(g))
        return false;
    gdb_regs_seen seen = {0};
    if (!exchange(g, "g", false))
        return false;
    if (g->reply_len == 3 && g->reply[0] == 'E') {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE,
                        "%s: the server cannot read registers ('g' answered %s)", g->name,
                        g->reply);
        return false;
    }
    static const size_t max_reg_bytes = GDB_MAX_REG_BITS / 8;
    char *gtext = malloc(g->reply_len + 1);
    if (!gtext)
        return fail(g, SPOOR_ERR_NOMEM, "out of memory%s", "");
    memcpy(gtext, g->reply, g->reply_len + 1);
    size_t glen = g->reply_len;
    bool use_p = true;
    uint8_t bytes[GDB_MAX_REG_BITS / 8];
    for (size_t i = 0; i < g->nregs; i++) {
        const spoor_gdb_reg *r = &g->regs[i];
        size_t nb = (r->bitsize + 7) / 8;
        if (!spoor_gdb_reg_wanted(r->name) || nb > max_reg_bytes)
            continue;
        seen.any_fp |= spoor_gdb_reg_is_fp(r->name);
        if (2 * ((size_t)r->offset + nb) <= glen) {
            if (reg_bytes(gtext + 2 * r->offset, nb, bytes))
                spoor_gdb_reg_store(out, &seen, r->name, bytes, nb);
            continue;
        }
        if (!use_p)
            continue;
        char req[16];
        snprintf(req, sizeof req, "p%x", r->regnum);
        if (!exchange(g, req, false)) {
            free(gtext);
            return false;
        }
        if (!g->reply_len)
            use_p = false; /* 'p' not supported */
        else if (g->reply_len == 2 * nb && reg_bytes(g->reply, nb, bytes))
            spoor_gdb_reg_store(out, &seen, r->name, bytes, nb);
    }
    free(gtext);
    spoor_gdb_regs_finish(out, &seen, missing, missing_len);
    if (!(out->have & SPOOR_HAVE_CORE)) {
        spoor_set_error(SPOOR_ERR_UNAVAILABLE, "%s: the server did not give r0-r15 and xpsr",
                        g->name);
        return false;
    }
    return true;
}
