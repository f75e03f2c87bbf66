/* spoor.itm with tpiu (itm_tpiu.cdef): a trace pump without a source, fed by Python, whose
 * callback keeps the packets released (with their trace source ID) until Python takes them. */
#include <stdlib.h>

#include "spoor/trace_pump.h"

typedef struct spoor_py_itm_pump {
    spoor_trace_pump *pump;
    spoor_itm_packet *packets;
    int *streams;
    size_t n, cap;
    bool nomem; /* a packet could not be kept: the pump stopped */
} spoor_py_itm_pump;

static bool spoor_py_itm_pump_event(void *ctx, const spoor_trace_pump_event *ev)
{
    spoor_py_itm_pump *p = ctx;
    if (ev->type != SPOOR_TRACE_PUMP_PACKET)
        return true;
    if (p->n == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 256;
        spoor_itm_packet *packets = realloc(p->packets, cap * sizeof *packets);
        if (packets)
            p->packets = packets;
        int *streams = packets ? realloc(p->streams, cap * sizeof *streams) : NULL;
        if (!streams) {
            p->nomem = true;
            return false;
        }
        p->streams = streams;
        p->cap = cap;
    }
    p->packets[p->n] = *ev->packet;
    p->streams[p->n++] = ev->stream;
    return true;
}

static void spoor_py_itm_pump_free(spoor_py_itm_pump *p)
{
    if (!p)
        return;
    spoor_trace_pump_free(p->pump);
    free(p->packets);
    free(p->streams);
    free(p);
}

static spoor_py_itm_pump *spoor_py_itm_pump_new(const spoor_trace_pump_config *cfg)
{
    spoor_py_itm_pump *p = calloc(1, sizeof *p);
    if (p && !(p->pump = spoor_trace_pump_new(cfg, spoor_py_itm_pump_event, p))) {
        spoor_py_itm_pump_free(p);
        return NULL;
    }
    return p;
}

/* false: out of memory (the packets kept so far are still there) */
static bool spoor_py_itm_pump_feed(spoor_py_itm_pump *p, const uint8_t *data, size_t len)
{
    spoor_trace_pump_feed(p->pump, data, len);
    return !p->nomem;
}

static bool spoor_py_itm_pump_finish(spoor_py_itm_pump *p)
{
    spoor_trace_pump_finish(p->pump);
    return !p->nomem;
}

static void spoor_py_itm_pump_clear(spoor_py_itm_pump *p)
{
    p->n = 0;
}
