/* The trace pump (spoor/trace_pump.h): source -> TPIU deframer -> ITM decoders -> events. */
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"
#include "spoor/trace_pump.h"
#include "spoor/trace_source.h"

struct spoor_trace_pump {
    spoor_trace_pump_config cfg;
    spoor_trace_pump_fn fn;
    void *ctx;
    bool stopped;
    spoor_trace_source *src;                               /* NULL: sans-I/O */
    spoor_tpiu_deframer tpiu;                              /* with cfg.tpiu */
    spoor_itm_decoder *decoders[SPOOR_TRACE_PUMP_STREAMS]; /* made on a stream's first byte */
    uint8_t head[SPOOR_TPIU_PROBE]; /* the stream's first bytes (spoor_trace_pump_head) */
    size_t head_len;
    uint64_t bytes;
};

void spoor_trace_pump_config_init(spoor_trace_pump_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->tpiu_id = SPOOR_TRACE_PUMP_EVERY_ID;
    cfg->tpiu_align = -1;
    cfg->types = SPOOR_ITM_ALL_TYPES;
}

/* Delivers one event; false (and the pump stopped) when the callback says so. */
static bool deliver(spoor_trace_pump *p, const spoor_trace_pump_event *ev)
{
    if (!p->stopped && !p->fn(p->ctx, ev))
        p->stopped = true;
    return !p->stopped;
}

static bool deliver_type(spoor_trace_pump *p, spoor_trace_pump_event_type type)
{
    spoor_trace_pump_event ev = {.type = type};
    return deliver(p, &ev);
}

/* Everything stream's decoder has released. */
static void drain(spoor_trace_pump *p, int stream, spoor_itm_decoder *d)
{
    spoor_trace_pump_event ev = {.type = SPOOR_TRACE_PUMP_PACKET, .stream = stream};
    if (p->cfg.text) {
        ev.type = SPOOR_TRACE_PUMP_TEXT;
        while (!p->stopped && (ev.len = spoor_itm_next_text(d, &ev.text)) != 0)
            deliver(p, &ev);
        return;
    }
    while (!p->stopped && (ev.packet = spoor_itm_next_ref(d)) != NULL)
        deliver(p, &ev);
}

/* The decoder of a stream, made and set up on its first byte; NULL when memory runs out. */
static spoor_itm_decoder *decoder_for(spoor_trace_pump *p, int stream)
{
    spoor_itm_decoder *d = p->decoders[stream];
    if (d)
        return d;
    d = malloc(sizeof *d);
    if (!d)
        return NULL;
    spoor_itm_init(d, p->cfg.wait_sync);
    if (p->cfg.text)
        spoor_itm_select_text(d, p->cfg.text_ports);
    else if (p->cfg.types != SPOOR_ITM_ALL_TYPES)
        spoor_itm_select(d, p->cfg.types);
    return p->decoders[stream] = d;
}

static void decode(spoor_trace_pump *p, int stream, const uint8_t *data, size_t len)
{
    spoor_itm_decoder *d = decoder_for(p, stream);
    if (!d) { /* the bytes of this stream are lost: nothing to report them through */
        spoor_set_error(SPOOR_ERR_NOMEM, "trace pump: out of memory for stream %d", stream);
        return;
    }
    while (len && !p->stopped) {
        size_t n = spoor_itm_feed(d, data, len);
        data += n;
        len -= n;
        drain(p, stream, d);
    }
}

static void tpiu_sink(void *ctx, uint8_t id, const uint8_t *data, size_t len)
{
    spoor_trace_pump *p = ctx;
    if (p->stopped || (p->cfg.tpiu_id != SPOOR_TRACE_PUMP_EVERY_ID && id != p->cfg.tpiu_id))
        return;
    decode(p, id, data, len);
}

spoor_trace_pump *spoor_trace_pump_new(const spoor_trace_pump_config *cfg, spoor_trace_pump_fn fn,
                                       void *ctx)
{
    if (cfg->tpiu && cfg->tpiu_id != SPOOR_TRACE_PUMP_EVERY_ID &&
        (cfg->tpiu_id < 1 || cfg->tpiu_id >= 0x70)) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "TPIU trace source ID %d: an ID is 1..111",
                        cfg->tpiu_id);
        return NULL;
    }
    if (cfg->tpiu && (cfg->tpiu_align < -1 || cfg->tpiu_align > 15)) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "TPIU frame alignment %d: expected 0..15 or -1",
                        cfg->tpiu_align);
        return NULL;
    }
    spoor_trace_pump *p = calloc(1, sizeof *p);
    if (!p) {
        spoor_set_error(SPOOR_ERR_NOMEM, "trace pump: out of memory");
        return NULL;
    }
    p->cfg = *cfg;
    p->fn = fn;
    p->ctx = ctx;
    if (cfg->tpiu)
        spoor_tpiu_init(&p->tpiu, cfg->tpiu_align, tpiu_sink, p);
    return p;
}

spoor_trace_pump *spoor_trace_pump_open(const char *spec, unsigned reconnect_s,
                                        const spoor_trace_pump_config *cfg, spoor_trace_pump_fn fn,
                                        void *ctx)
{
    spoor_trace_pump *p = spoor_trace_pump_new(cfg, fn, ctx);
    if (p && !(p->src = spoor_trace_source_open(spec, reconnect_s))) {
        spoor_trace_pump_free(p);
        return NULL;
    }
    return p;
}

void spoor_trace_pump_free(spoor_trace_pump *p)
{
    if (!p)
        return;
    spoor_trace_source_close(p->src);
    for (int i = 0; i < SPOOR_TRACE_PUMP_STREAMS; i++)
        free(p->decoders[i]);
    free(p);
}

bool spoor_trace_pump_feed(spoor_trace_pump *p, const uint8_t *data, size_t len)
{
    if (p->stopped)
        return false;
    size_t keep = sizeof p->head - p->head_len < len ? sizeof p->head - p->head_len : len;
    if (keep)
        memcpy(p->head + p->head_len, data, keep);
    p->head_len += keep;
    p->bytes += len;
    if (p->cfg.tpiu)
        spoor_tpiu_feed(&p->tpiu, data, len);
    else
        decode(p, 0, data, len);
    return !p->stopped;
}

/* Every decoder releases what it holds: with spoor_itm_finish (end of the stream or of a piece
 * of it) or spoor_itm_flush (a pause). */
static void release_all(spoor_trace_pump *p, bool finish)
{
    for (int i = 0; i < SPOOR_TRACE_PUMP_STREAMS && !p->stopped; i++) {
        spoor_itm_decoder *d = p->decoders[i];
        if (!d)
            continue;
        if (finish)
            spoor_itm_finish(d);
        else
            spoor_itm_flush(d);
        drain(p, i, d);
    }
}

bool spoor_trace_pump_idle(spoor_trace_pump *p)
{
    release_all(p, false);
    return deliver_type(p, SPOOR_TRACE_PUMP_IDLE);
}

/* The end of the stream or of the piece before a gap: the deframer hands over what it holds
 * (deciding the alignment if it had not), then the decoders. */
static void finish_all(spoor_trace_pump *p)
{
    if (p->cfg.tpiu && !p->stopped)
        spoor_tpiu_finish(&p->tpiu);
    release_all(p, true);
}

bool spoor_trace_pump_reconnected(spoor_trace_pump *p)
{
    finish_all(p);
    if (!deliver_type(p, SPOOR_TRACE_PUMP_RECONNECTED))
        return false;
    if (p->cfg.tpiu) /* the frames after the gap have an alignment of their own */
        spoor_tpiu_init(&p->tpiu, p->cfg.tpiu_align, tpiu_sink, p);
    return true;
}

bool spoor_trace_pump_finish(spoor_trace_pump *p)
{
    finish_all(p);
    return deliver_type(p, SPOOR_TRACE_PUMP_END);
}

spoor_trace_pump_status spoor_trace_pump_run(spoor_trace_pump *p)
{
    if (!p->src) {
        spoor_set_error(SPOOR_ERR_ARGUMENT, "trace pump: no source to run");
        return SPOOR_TRACE_PUMP_FAILED;
    }
    while (!p->stopped) {
        const uint8_t *data;
        /* files never wait; a live source that goes quiet releases what the decoders hold */
        ssize_t n = spoor_trace_source_receive(p->src, &data, SPOOR_TRACE_PUMP_IDLE_MS);
        if (n > 0) {
            spoor_trace_pump_feed(p, data, (size_t)n);
        } else if (n == SPOOR_TRACE_IDLE) {
            spoor_trace_pump_idle(p);
        } else if (n == SPOOR_TRACE_RECONNECTED) {
            spoor_trace_pump_reconnected(p);
        } else if (n == SPOOR_TRACE_EOF) {
            return spoor_trace_pump_finish(p) ? SPOOR_TRACE_PUMP_DONE : SPOOR_TRACE_PUMP_STOPPED;
        } else {
            if (deliver_type(p, SPOOR_TRACE_PUMP_ERROR))
                spoor_trace_pump_finish(p);
            return SPOOR_TRACE_PUMP_FAILED;
        }
    }
    return SPOOR_TRACE_PUMP_STOPPED;
}

const spoor_itm_stats *spoor_trace_pump_stats(const spoor_trace_pump *p, int stream)
{
    if (stream < 0 || stream >= SPOOR_TRACE_PUMP_STREAMS || !p->decoders[stream])
        return NULL;
    return spoor_itm_stats_get(p->decoders[stream]);
}

const spoor_tpiu_deframer *spoor_trace_pump_tpiu(const spoor_trace_pump *p)
{
    return p->cfg.tpiu ? &p->tpiu : NULL;
}

size_t spoor_trace_pump_head(const spoor_trace_pump *p, const uint8_t **data)
{
    *data = p->head;
    return p->head_len;
}

uint64_t spoor_trace_pump_bytes(const spoor_trace_pump *p)
{
    return p->bytes;
}
