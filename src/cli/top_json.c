/* spoor top's JSON lines: one object per interval with the fields orbtop-rtos users know
 * (threads[] with tcb name func prio time_ms cpu max switches; interval_ms cpu_usage cpu_max
 * cpu_freq overflow; exceptions[] with num name count maxd total pct ave min max maxwall). */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>

#include "cli.h"
#include "crash_stacks.h"
#include "top_cli.h"
#include "util/json_write.h"

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

static void exception_fields(json_out *j, const spoor_top_exc_stats *e)
{
    char label[48];
    top_exception_label(e->number, label, sizeof label);
    const char *name = label;
    while (*name && *name != '(') /* "15 (SysTick)" -> "SysTick" */
        name++;
    char bare[48];
    snprintf(bare, sizeof bare, "%s", *name ? name + 1 : label);
    for (char *p = bare; *p; p++)
        if (*p == ')')
            *p = '\0';
    json_uint(j, "num", e->number);
    json_string(j, "name", bare);
    json_uint(j, "count", e->count);
    json_uint(j, "maxd", e->maxd);
    json_uint(j, "total", e->total);
    json_fixed(j, "pct", e->pct, 3);
    if (e->completed) {
        json_uint(j, "ave", e->completed_own / e->completed);
        json_uint(j, "min", e->min);
        json_uint(j, "max", e->max);
        json_uint(j, "maxwall", e->maxwall);
    } else { /* no activation ended in the interval */
        json_null(j, "ave");
        json_null(j, "min");
        json_null(j, "max");
        json_null(j, "maxwall");
    }
    json_uint(j, "completed", e->completed);
}

void top_json_report(outbuf *o, const top_view *v, const spoor_top_report *r, bool separate_ex,
                     uint64_t *udp_refused)
{
    json_out j;
    json_init(&j, o);
    json_object_begin(&j, NULL);
    json_array_begin(&j, "threads");
    for (size_t i = 0; i < r->nthreads; i++) {
        const spoor_top_thread_stats *t = &r->threads[i];
        const top_thread_info *info = v->thread(v->ctx, t->tcb);
        json_object_begin(&j, NULL);
        json_hex32(&j, "tcb", t->tcb);
        json_string(&j, "name", info->name);
        json_string(&j, "func", info->func);
        if (info->has_prio)
            json_int(&j, "prio", info->prio);
        else
            json_null(&j, "prio");
        json_string(&j, "prio_name", info->prio_name);
        if (info->unlisted)
            json_string(&j, "state", "unlisted");
        else if (info->read_ok) {
            char state[200];
            spoor_rtos_state_text(&info->state, state, sizeof state);
            json_string(&j, "state", state);
        } else
            json_null(&j, "state");
        json_fixed(&j, "time_ms", top_ms(v, t->cycles), 3);
        json_fixed(&j, "cpu", t->pct, 3);
        json_fixed(&j, "max", t->max_pct, 3);
        json_uint(&j, "switches", t->switches);
        json_uint(&j, "cycles", t->cycles);
        json_bool(&j, "idle", t->idle);
        if (v->stack && info->has_stack)
            stack_usage_json(&j, "stack", &info->stack);
        else if (v->stack)
            json_null(&j, "stack");
        json_object_end(&j);
    }
    json_array_end(&j);
    json_uint(&j, "interval", r->index);
    json_bool(&j, "summary", r->summary);
    json_bool(&j, "partial", r->partial);
    json_uint(&j, "quiet_intervals", r->quiet);
    json_fixed(&j, "start_ms", top_ms(v, r->start), 3);
    json_fixed(&j, "interval_ms", top_ms(v, r->end - r->start), 3);
    json_fixed(&j, "cpu_usage", r->cpu_usage, 3);
    json_fixed(&j, "cpu_max", r->cpu_max, 3);
    json_bool(&j, "idle_known", !v->idle_unknown);
    json_uint(&j, "cpu_freq", v->cpu_hz);
    json_bool(&j, "overflow", r->overflows != 0);
    json_uint(&j, "overflows", r->overflows);
    json_uint(&j, "lost_bytes", r->lost_bytes);
    json_fixed(&j, "unknown_ms", top_ms(v, r->unknown_cycles), 3);
    if (v->exceptions && !separate_ex) {
        json_array_begin(&j, "exceptions");
        for (size_t i = 0; i < r->nexceptions; i++) {
            json_object_begin(&j, NULL);
            exception_fields(&j, &r->exceptions[i]);
            json_object_end(&j);
        }
        json_array_end(&j);
    }
    json_object_end(&j);
    json_finish(&j);
    if (udp_refused)
        send_datagram(o, udp_refused);
    if (!v->exceptions || !separate_ex)
        return;
    for (size_t i = 0; i < r->nexceptions; i++) {
        json_init(&j, o);
        json_object_begin(&j, NULL);
        json_uint(&j, "ex", 1);
        exception_fields(&j, &r->exceptions[i]);
        json_object_end(&j);
        json_finish(&j);
        if (udp_refused)
            send_datagram(o, udp_refused);
    }
}
