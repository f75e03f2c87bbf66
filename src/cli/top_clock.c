/* spoor top's clock (top_cli.h): the stream's own local timestamps, or the host's clock for a
 * live stream that carries none. */
#include <time.h>

#include "top_cli.h"

static uint64_t host_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The host's clock since the first packet, in cycles of -F. */
static uint64_t host_cycles(top_clock *k)
{
    if (!k->host_started) {
        k->host_start_ns = host_ns();
        k->host_started = true;
    }
    uint64_t ns = host_ns() - k->host_start_ns;
    return (uint64_t)((double)ns * (double)k->hz / 1e9);
}

void top_clock_init(top_clock *k, bool live, uint64_t hz, uint32_t prescaler)
{
    *k = (top_clock){.live = live, .hz = hz, .prescaler = prescaler > 1 ? prescaler : 1};
}

uint64_t top_clock_packet(top_clock *k, const spoor_itm_packet *p)
{
    bool stamped = p->type == SPOOR_ITM_TS_LOCAL || p->time_exact; /* dated by a timestamp */
    if (!k->live) { /* a recording: its timestamps, or none (time 0, explained at the end) */
        k->stream = k->stream || stamped;
        return p->time * k->prescaler;
    }
    if (stamped && !k->stream) {
        /* from here on the stream's clock, continuing from where the host's clock was */
        k->stream = true;
        k->offset = k->last;
    }
    uint64_t t = k->stream ? p->time * k->prescaler + k->offset : host_cycles(k);
    k->used_host = k->used_host || !k->stream;
    if (t > k->last)
        k->last = t;
    return k->last;
}

bool top_clock_idle(top_clock *k, uint64_t *now)
{
    if (k->stream || !k->live || !k->host_started)
        return false;
    uint64_t t = host_cycles(k);
    if (t > k->last)
        k->last = t;
    *now = k->last;
    return true;
}
