/* libFuzzer harness: arbitrary bytes through the trace pump's sans-I/O core (spoor/trace_pump.h)
 * in two pieces with a reconnection between them, plain or TPIU-formatted (every ID, or one),
 * and a consumer that may stop it. The first two bytes choose the mode, the split point and
 * when the consumer stops. Checks: the plain pump delivers exactly the packets of a decoder fed
 * the same pieces with spoor_itm_finish at the gap and the end, in order; with TPIU, each
 * stream's events match its decoder's counters and only the chosen ID is decoded; RECONNECTED
 * and END once, END last; a stopped pump delivers nothing more. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/itm_decoder.h"
#include "spoor/trace_pump.h"

static void check(int ok)
{
    if (!ok)
        abort();
}

#define MAXP 65536

struct seen {
    size_t events, stop_at, ends, reconnected, after_end, packets;
    uint64_t counts[SPOOR_TRACE_PUMP_STREAMS][SPOOR_ITM_TYPE_COUNT];
    int only_id; /* -1: any */
    spoor_itm_packet plain[MAXP];
};

static struct seen S;

static bool on_event(void *ctx, const spoor_trace_pump_event *ev)
{
    struct seen *s = ctx;
    check(!s->stop_at || s->events < s->stop_at); /* nothing after a stop */
    s->events++;
    s->after_end += s->ends;
    switch (ev->type) {
    case SPOOR_TRACE_PUMP_PACKET:
        check(ev->stream >= 0 && ev->stream < 0x70);
        check(s->only_id < 0 || ev->stream == s->only_id);
        s->counts[ev->stream][ev->packet->type]++;
        if (s->packets < MAXP)
            s->plain[s->packets] = *ev->packet;
        s->packets++;
        break;
    case SPOOR_TRACE_PUMP_RECONNECTED: s->reconnected++; break;
    case SPOOR_TRACE_PUMP_END: s->ends++; break;
    default: break;
    }
    return !s->stop_at || s->events < s->stop_at;
}

static void same(const spoor_itm_packet *a, const spoor_itm_packet *b)
{
    check(a->type == b->type && a->offset == b->offset && a->time == b->time &&
          a->time_exact == b->time_exact && a->size == b->size);
}

/* The plain reference: one decoder, finished at the gap and at the end. */
static void reference(const uint8_t *data, size_t len, size_t split)
{
    static spoor_itm_decoder d;
    spoor_itm_init(&d, false);
    size_t k = 0;
    spoor_itm_packet p;
    for (int piece = 0; piece < 2; piece++) {
        const uint8_t *b = piece ? data + split : data;
        size_t n = piece ? len - split : split, done = 0;
        while (done < n) {
            done += spoor_itm_feed(&d, b + done, n - done);
            while (spoor_itm_next(&d, &p)) {
                if (k < S.packets && k < MAXP)
                    same(&p, &S.plain[k]);
                k++;
            }
        }
        spoor_itm_finish(&d);
        while (spoor_itm_next(&d, &p)) {
            if (k < S.packets && k < MAXP)
                same(&p, &S.plain[k]);
            k++;
        }
    }
    check(k == S.packets);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
    if (len < 2)
        return 0;
    uint8_t mode = data[0] % 4, split_byte = data[1];
    data += 2;
    len -= 2;
    size_t split = len * split_byte / 256;
    spoor_trace_pump_config cfg;
    spoor_trace_pump_config_init(&cfg);
    memset(&S, 0, sizeof S);
    S.only_id = -1;
    if (mode >= 1) {
        cfg.tpiu = true;
        if (mode == 2)
            S.only_id = cfg.tpiu_id = 1 + split_byte % 4;
    }
    if (mode == 3) /* a consumer that stops */
        S.stop_at = 1 + split_byte % 64;
    spoor_trace_pump *p = spoor_trace_pump_new(&cfg, on_event, &S);
    check(p != NULL);
    /* in pieces of odd sizes */
    for (size_t off = 0; off < split; off += 37)
        spoor_trace_pump_feed(p, data + off, split - off < 37 ? split - off : 37);
    bool live = spoor_trace_pump_reconnected(p);
    spoor_trace_pump_feed(p, data + split, len - split);
    bool finished = spoor_trace_pump_finish(p);
    check(S.after_end == 0);
    if (S.stop_at && S.events >= S.stop_at) { /* stopped */
        check(!finished && S.events == S.stop_at);
        spoor_trace_pump_free(p);
        return 0;
    }
    check(live && finished && S.ends == 1 && S.reconnected == 1);
    for (int s = 0; s < SPOOR_TRACE_PUMP_STREAMS; s++) {
        const spoor_itm_stats *st = spoor_trace_pump_stats(p, s);
        for (int k = 0; k < SPOOR_ITM_TYPE_COUNT; k++)
            check((st ? st->packets[k] : 0) == S.counts[s][k]);
        check(!st || S.only_id < 0 || s == S.only_id);
    }
    if (!cfg.tpiu) {
        check(spoor_trace_pump_stats(p, 0) == NULL || spoor_trace_pump_stats(p, 0)->bytes == len);
        reference(data, len, split);
    }
    spoor_trace_pump_free(p);
    return 0;
}
