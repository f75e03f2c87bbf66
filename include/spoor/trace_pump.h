/* The trace pump: one receive loop for every consumer of an ITM stream (spoor itm, spoor calls
 * --itm, spoor top). It owns a trace source (spoor/trace_source.h: a file, standard input,
 * tcp:, serial:), the TPIU deframer when the stream is TPIU-formatted (spoor/tpiu_deframer.h), one
 * ITM decoder per stream (spoor/itm_decoder.h: the plain stream, or each TPIU trace source ID
 * taken), and hands typed events to one callback: the decoded packets with the ID of their stream,
 * the software-channel text in bulk, a live source going quiet, a reconnection (a gap in the data),
 * a failing source and the end of the stream.
 *
 * The core is sans-I/O: spoor_trace_pump_new() and the four calls spoor_trace_pump_feed(),
 * _idle(), _reconnected() and _finish() are what the run loop does for each thing the source
 * reports, so tests and fuzzers drive the pump with bytes of their own. spoor_trace_pump_open()
 * gives the pump a source and spoor_trace_pump_run() the loop over it:
 *
 *     spoor_trace_pump_config cfg;
 *     spoor_trace_pump_config_init(&cfg);         // plain ITM, every packet type
 *     cfg.tpiu = true;                            // TPIU-formatted, ...
 *     cfg.tpiu_id = 1;                            // ... trace source ID 1 only
 *     spoor_trace_pump *p = spoor_trace_pump_open("tcp:localhost:46000", 10, &cfg, on_event, ctx);
 *     if (p && spoor_trace_pump_run(p) == SPOOR_TRACE_PUMP_FAILED) ...;  // the source failed
 *     spoor_trace_pump_free(p);
 *
 * A reconnection: the deframer is finished (the bytes it held go to the decoders) and the
 * decoders are finished (a packet cut short by the gap is an error packet; spoor_itm_finish
 * keeps the time, the stream position and the counters), what they released is delivered,
 * then SPOOR_TRACE_PUMP_RECONNECTED, and the deframer starts afresh (the frame alignment after
 * a gap is unknown: it is found again). */
#ifndef SPOOR_TRACE_PUMP_H
#define SPOOR_TRACE_PUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/itm_decoder.h"
#include "spoor/tpiu_deframer.h"

typedef struct spoor_trace_pump spoor_trace_pump;

/* Streams: index 0 is the plain ITM stream, 1..111 the TPIU trace source IDs. */
#define SPOOR_TRACE_PUMP_STREAMS 128
/* tpiu_id: decode every trace source ID, each with its own decoder. */
#define SPOOR_TRACE_PUMP_EVERY_ID (-1)
/* How long spoor_trace_pump_run() lets a live source be quiet before SPOOR_TRACE_PUMP_IDLE. */
#define SPOOR_TRACE_PUMP_IDLE_MS 100

typedef struct spoor_trace_pump_config {
    bool tpiu;      /* the stream is TPIU-formatted: deframe it first */
    int tpiu_id;    /* with tpiu: the one trace source ID decoded (1..111), or
                     * SPOOR_TRACE_PUMP_EVERY_ID; the other IDs' bytes are dropped */
    int tpiu_align; /* with tpiu: frames start at this byte offset (0..15); -1: find it */
    bool wait_sync; /* each decoder treats the bytes before its first sync as lost */
    /* the packet types delivered (spoor_itm_select: 0 delivers none, for a consumer of the
     * counters only); ignored with text */
    uint32_t types;
    /* instead of packets, the software-channel text of the ports set in text_ports
     * (spoor_itm_select_text): SPOOR_TRACE_PUMP_TEXT events */
    bool text;
    uint32_t text_ports[8];
} spoor_trace_pump_config;

/* Plain ITM, every packet type, no wait for a sync; tpiu_id EVERY_ID, tpiu_align -1. */
void spoor_trace_pump_config_init(spoor_trace_pump_config *cfg);

typedef enum spoor_trace_pump_event_type {
    SPOOR_TRACE_PUMP_PACKET, /* a packet of a selected type: stream, packet */
    SPOOR_TRACE_PUMP_TEXT,   /* software-channel text (config text): stream, text, len */
    /* a live source was quiet: the decoders released what they held (delivered just before);
     * the time for a consumer to flush its output */
    SPOOR_TRACE_PUMP_IDLE,
    /* the source reconnected: bytes were lost here. What came before the gap was delivered
     * first; the deframer and the decoders start afresh after it */
    SPOOR_TRACE_PUMP_RECONNECTED,
    /* the source failed: spoor_last_error() says why (during the call). What the decoders held
     * is delivered after it, then END, unless the callback stops the pump */
    SPOOR_TRACE_PUMP_ERROR,
    /* the end of the stream: everything was delivered */
    SPOOR_TRACE_PUMP_END,
} spoor_trace_pump_event_type;

typedef struct spoor_trace_pump_event {
    spoor_trace_pump_event_type type;
    int stream;                     /* PACKET, TEXT: 0 (plain ITM) or the TPIU trace source ID */
    const spoor_itm_packet *packet; /* PACKET: valid during the call */
    const uint8_t *text;            /* TEXT: len bytes, valid during the call */
    size_t len;
} spoor_trace_pump_event;

/* Called for each event; returning false stops the pump: no event follows, and every call on
 * the pump then does nothing and returns false. */
typedef bool (*spoor_trace_pump_fn)(void *ctx, const spoor_trace_pump_event *event);

/* A pump without a source (sans-I/O). NULL with the error set for a config out of range
 * (tpiu_id, tpiu_align) or when memory runs out. */
spoor_trace_pump *spoor_trace_pump_new(const spoor_trace_pump_config *cfg, spoor_trace_pump_fn fn,
                                       void *ctx);
/* A pump that owns the source spoor_trace_source_open(spec, reconnect_s) opens; NULL with the
 * error set ("FILE: cannot open: ...", "tcp:HOST:PORT: connection refused", ...). */
spoor_trace_pump *spoor_trace_pump_open(const char *spec, unsigned reconnect_s,
                                        const spoor_trace_pump_config *cfg, spoor_trace_pump_fn fn,
                                        void *ctx);
/* Frees the pump, its decoders and its source (NULL is fine). */
void spoor_trace_pump_free(spoor_trace_pump *p);

/* The sans-I/O core. Each returns false once the callback has stopped the pump. */
/* Bytes of the stream: deframed, decoded, the packets released delivered. A stream's decoder
 * (some 50 KB) is made on its first byte; when memory runs out then, that stream's bytes are
 * dropped, with the error set. */
bool spoor_trace_pump_feed(spoor_trace_pump *p, const uint8_t *data, size_t len);
/* The source went quiet: the decoders release what they hold (spoor_itm_flush), then IDLE. */
bool spoor_trace_pump_idle(spoor_trace_pump *p);
/* A gap in the stream (see above): what was held before it, then RECONNECTED. */
bool spoor_trace_pump_reconnected(spoor_trace_pump *p);
/* The end of the stream: the deframer and the decoders finish, what they held, then END. */
bool spoor_trace_pump_finish(spoor_trace_pump *p);

typedef enum spoor_trace_pump_status {
    SPOOR_TRACE_PUMP_DONE = 0,    /* the end of the stream; END delivered */
    SPOOR_TRACE_PUMP_STOPPED = 1, /* the callback stopped the pump */
    SPOOR_TRACE_PUMP_FAILED = -1, /* the source failed (ERROR delivered), or the pump has none */
} spoor_trace_pump_status;

/* Receives from the pump's source until its end, a failure or a stop: data is fed, a quiet
 * live source (SPOOR_TRACE_PUMP_IDLE_MS) is _idle, a reconnection _reconnected, the end
 * _finish; a failure delivers ERROR and then finishes. */
spoor_trace_pump_status spoor_trace_pump_run(spoor_trace_pump *p);

/* The counters of stream's decoder (0: the plain ITM stream, else a TPIU trace source ID), or
 * NULL when no byte of that stream came (none is kept for it). They add up across gaps. */
const spoor_itm_stats *spoor_trace_pump_stats(const spoor_trace_pump *p, int stream);
/* The first bytes of the stream as fed (up to SPOOR_TPIU_PROBE, gaps and all), *data
 * pointing at them: what a consumer looks at to explain a stream that did not decode (e.g.
 * spoor_tpiu_looks_framed()). Valid until the pump is freed. */
size_t spoor_trace_pump_head(const spoor_trace_pump *p, const uint8_t **data);
/* Bytes fed to the pump in all (0: the source was empty). */
uint64_t spoor_trace_pump_bytes(const spoor_trace_pump *p);
/* The TPIU deframer (its counters and why it chose its alignment), NULL without tpiu. After a
 * reconnection it is the one that started afresh: its counters are those since the gap. */
const spoor_tpiu_deframer *spoor_trace_pump_tpiu(const spoor_trace_pump *p);

#endif
