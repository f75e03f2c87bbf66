/* spoor top's clock (top/top_clock.h): the stream's own local timestamps, or the host's clock
 * for a live stream that carries none; the host's time is the caller's. */
#include "top/top_clock.h"

/* A live stream is taken to carry no timestamps (ITM_TCR.TSENA 0) after this many packets, or
 * this long after its first packet, without one; with TSENA set a local timestamp follows the
 * first packets within microseconds. Synchronization packets do not count, nor does the time
 * after one: no timestamp ever follows a sync, and the ITM sends one when it is enabled, which
 * may be long before its first dated packet (a target halted by a debugger or by spoor top's
 * own reads after --setup, an idle target, a slow probe). */
#define UNDATED_PACKETS 16
#define UNDATED_NS 100000000u

/* The host's clock at now_ns since the stream's first packet, in cycles of hz. */
static uint64_t host_cycles(const spoor_top_clock *k, uint64_t now_ns)
{
    return (uint64_t)((double)(now_ns - k->first_ns) * (double)k->hz / 1e9);
}

void spoor_top_clock_init(spoor_top_clock *k, bool live, uint64_t hz, uint32_t prescaler)
{
    *k = (spoor_top_clock){.live = live, .hz = hz, .prescaler = prescaler > 1 ? prescaler : 1};
}

static uint64_t later(spoor_top_clock *k, uint64_t t)
{
    if (t > k->last)
        k->last = t;
    return k->last;
}

uint64_t spoor_top_clock_packet(spoor_top_clock *k, const spoor_itm_packet *p, uint64_t now_ns)
{
    bool stamped = p->type == SPOOR_ITM_TS_LOCAL || p->time_exact; /* dated by a timestamp */
    if (!k->live) { /* a recording: its timestamps, or none (time 0) */
        k->stream = k->stream || stamped;
        return p->time * k->prescaler;
    }
    if (!k->started) {
        k->started = true;
        k->first_ns = now_ns;
    }
    if (stamped && !k->stream) {
        /* from here on the stream's clock, continuing from where the host's clock was */
        k->stream = true;
        k->offset = k->used_host ? k->last : 0;
    }
    if (k->stream)
        return later(k, p->time * k->prescaler + k->offset);
    if (!k->used_host && p->type != SPOOR_ITM_SYNC) {
        if (!k->undated_seen) {
            k->undated_seen = true;
            k->undated_ns = now_ns;
        }
        if (++k->undated >= UNDATED_PACKETS || now_ns - k->undated_ns >= UNDATED_NS)
            k->used_host = true;
    }
    return later(k, k->used_host ? host_cycles(k, now_ns) : 0);
}

bool spoor_top_clock_idle(spoor_top_clock *k, uint64_t now_ns, uint64_t *now)
{
    if (!k->live || k->stream || !k->started)
        return false;
    if (!k->used_host && (!k->undated_seen || now_ns - k->undated_ns < UNDATED_NS))
        return false;
    k->used_host = true;
    *now = later(k, host_cycles(k, now_ns));
    return true;
}
