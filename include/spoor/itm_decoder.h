/* A sans-I/O decoder for the ITM/DWT packet protocol of Cortex-M (ARMv7-M Architecture
 * Reference Manual, appendix D4 "Debug ITM and DWT Packet Protocol"; ARMv8-M Architecture
 * Reference Manual, chapter D3 of the same name).
 *
 * Bytes go in with spoor_itm_feed(), typed packets come out with spoor_itm_next(). The decoder
 * never allocates, never touches files or sockets and keeps all its state in the struct.
 *
 * Time: a local timestamp packet carries the cycles elapsed since the previous one, and it is
 * emitted AFTER the packets it timestamps. The decoder therefore holds source packets until
 * the next local timestamp arrives and gives them the accumulated time including it (the same
 * convention as Arm's reference decoders). Packets released without such a timestamp (a sync,
 * the hold queue filling up, spoor_itm_flush(), the end of the stream) carry the time known so
 * far, a lower bound; time_exact tells which case applies.
 *
 * Errors: a reserved header or a byte sequence the protocol cannot produce makes the decoder
 * drop everything it has not yet released (those packets were decoded from bytes that are now
 * known to be untrustworthy: they were not confirmed by a following timestamp) and skip bytes
 * until the next synchronisation packet. One SPOOR_ITM_ERROR packet then reports where the
 * lost region starts, how many bytes it spans and why. */
#ifndef SPOOR_ITM_DECODER_H
#define SPOOR_ITM_DECODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum spoor_itm_type {
    /* D4 'Synchronization packet': at least 47 zero bits, then a one */
    SPOOR_ITM_SYNC,
    /* D4 'Overflow packet': header 0x70 */
    SPOOR_ITM_OVERFLOW,
    /* D4 'Local timestamp packets': format 1 (0b11TT0000 + 1-4 bytes), format 2 (0b0TTT0000) */
    SPOOR_ITM_TS_LOCAL,
    /* D4 'Global timestamp packets': GTS1, header 0x94, bits [25:0] */
    SPOOR_ITM_TS_GLOBAL1,
    /* D4 'Global timestamp packets': GTS2, header 0xB4, bits [47:26] or [63:26] */
    SPOOR_ITM_TS_GLOBAL2,
    /* D4 'Extension packet': e.g. 0x08 = stimulus port page 0 */
    SPOOR_ITM_EXTENSION,
    /* D4 'Instrumentation packet': software source, 0bAAAAA0SS */
    SPOOR_ITM_SW,
    /* D4 'Event counter packet': header 0x05 */
    SPOOR_ITM_EVENT_COUNTER,
    /* D4 'Exception trace packet': header 0x0E */
    SPOOR_ITM_EXCEPTION,
    /* D4 'Periodic PC sample packets': 0x17 (a PC) or 0x15 (asleep) */
    SPOOR_ITM_PC_SAMPLE,
    /* D4 'Data trace packets': PC value, 0b01NN0111 */
    SPOOR_ITM_DWT_PC,
    /* D4 'Data trace packets': address offset, 0b01NN1110 */
    SPOOR_ITM_DWT_ADDR,
    /* D4 'Data trace packets': data value, 0b10NNWxSS */
    SPOOR_ITM_DWT_DATA,
    /* ARMv8-M ARM 'Data Trace Match packet': 0b01NN0101 and one payload byte, a comparator
     * that matched with DWT_FUNCTION.ACTION 0b10 but carries no value (a Data Address, Data
     * Value, Instruction Address or Cycle Counter comparator); reserved in ARMv7-M */
    SPOOR_ITM_DWT_MATCH,
    /* bytes that could not be decoded */
    SPOOR_ITM_ERROR,
    SPOOR_ITM_TYPE_COUNT
} spoor_itm_type;

/* The JSON name of a packet type ("sync", "ts_local", "dwt_pc", ...). */
const char *spoor_itm_type_name(spoor_itm_type type);

typedef enum spoor_itm_exception_action {
    SPOOR_ITM_EXC_ENTER = 1,  /* FN = 0b01 */
    SPOOR_ITM_EXC_EXIT = 2,   /* FN = 0b10 */
    SPOOR_ITM_EXC_RETURN = 3, /* FN = 0b11 */
} spoor_itm_exception_action;

/* Why bytes were lost (the `why` of an error packet). */
typedef enum spoor_itm_error_kind {
    SPOOR_ITM_ERR_RESERVED_HEADER, /* a header the protocol reserves */
    SPOOR_ITM_ERR_BAD_SYNC,        /* zero bytes that did not end in a synchronization packet */
    SPOOR_ITM_ERR_BAD_PAYLOAD,     /* a payload the packet type does not allow */
    SPOOR_ITM_ERR_TRUNCATED,       /* the stream ended inside a packet */
    SPOOR_ITM_ERR_SYNC_IN_PACKET,  /* a synchronization packet started inside a packet */
    SPOOR_ITM_ERR_NO_SYNC,         /* the stream ended while waiting for a synchronization */
} spoor_itm_error_kind;

const char *spoor_itm_error_text(spoor_itm_error_kind kind);

typedef struct spoor_itm_packet {
    spoor_itm_type type;
    uint64_t offset; /* stream position of the packet's first byte */
    uint64_t time;   /* accumulated local timestamp (cycles x prescaler) */
    bool time_exact; /* true when a following local timestamp dated this packet */
    uint8_t size;    /* bytes of the packet, header included */
    union {
        /* tc: 0 timestamp synchronous to the data, 1 timestamp delayed, 2 packet delayed,
         * 3 both delayed */
        struct {
            uint32_t delta;
            uint8_t tc;
        } ts_local;
        /* value: the global time assembled from GTS1 and GTS2 packets so far */
        struct {
            uint64_t value;
            bool wrap, clkch;
        } ts_global1;
        /* wide: the 64-bit form (six payload bytes) */
        struct {
            uint64_t value;
            bool wide;
        } ts_global2;
        /* hw: the SH bit (an extension of a hardware source rather than a port page) */
        struct {
            uint32_t page;
            bool hw;
        } ext;
        /* port = page * 32 + the header's port bits. page_unknown: the stimulus port page is
         * not known (the stream had a gap, spoor_itm_finish(), and no synchronization or page
         * extension packet came since): port uses the page from before the gap. */
        struct {
            uint16_t port;
            uint8_t size;
            bool page_unknown;
            uint32_t value;
        } sw;
        /* which 8-bit DWT counter wrapped: bit 0 CPI, 1 Exc, 2 Sleep, 3 LSU, 4 Fold, 5 Cyc */
        struct {
            uint8_t bits;
        } event_counter;
        struct {
            uint16_t number;
            spoor_itm_exception_action action;
        } exception;
        /* sleep: the core was asleep (pc is 0) */
        struct {
            uint32_t pc;
            bool sleep;
        } pc_sample;
        struct {
            uint8_t comparator;
            uint32_t pc;
        } dwt_pc;
        struct {
            uint8_t comparator;
            uint16_t offset;
        } dwt_addr;
        struct {
            uint8_t comparator;
            bool write;
            uint8_t size;
            uint32_t value;
        } dwt_data;
        struct {
            uint8_t comparator;
        } dwt_match;
        /* the bytes [offset, offset + bytes_lost) were not decoded; detected_at is where
         * the problem showed */
        struct {
            uint64_t bytes_lost;
            spoor_itm_error_kind why;
            uint64_t detected_at;
        } error;
    } u;
} spoor_itm_packet;

/* Packets decoded but not yet released; a full hold queue releases its oldest packet. */
#define SPOOR_ITM_HOLD 128
/* Packets queued, released or held: released packets wait here for spoor_itm_next(). */
#define SPOOR_ITM_RING 512
/* Bytes of software-channel text queued (spoor_itm_select_text()), released or held. */
#define SPOOR_ITM_TEXT_RING 16384

/* Every packet type, for spoor_itm_select(). */
#define SPOOR_ITM_ALL_TYPES ((1u << SPOOR_ITM_TYPE_COUNT) - 1)

typedef struct spoor_itm_stats {
    uint64_t bytes;                         /* bytes fed */
    uint64_t packets[SPOOR_ITM_TYPE_COUNT]; /* packets released, per type */
    uint64_t bytes_lost;                    /* sum of the error packets' bytes_lost */
    uint64_t sw_page_unknown;               /* software packets with page_unknown */
    /* the time of the first and of the last packet released (of any type, selected or not);
     * both 0 until released_any */
    bool released_any;
    uint64_t time_first, time_last;
} spoor_itm_stats;

typedef struct spoor_itm_decoder {
    /* parser */
    int state;
    uint8_t header;
    uint8_t need;                /* payload bytes still expected (fixed-size packets) */
    uint8_t got;                 /* payload bytes received */
    uint8_t buf[8];              /* payload bytes received */
    uint8_t page;                /* stimulus port page (extension packet) */
    bool page_unknown;           /* a gap since the last page extension or sync (see sw) */
    uint64_t zeros;              /* zero bytes in the current run of a sync candidate */
    uint8_t last_trailing_zeros; /* zero bytes just before the current sync candidate */
    uint32_t hist;               /* the last four bytes fed, newest in the low byte */
    uint64_t pos;                /* stream position of the next byte */
    uint64_t pkt_start;          /* stream position of the packet being parsed */
    /* error being accumulated while waiting for a sync */
    uint64_t lost_from;
    uint64_t lost_detected;
    spoor_itm_error_kind lost_why;
    /* time */
    uint64_t time;
    uint64_t gts; /* assembled global timestamp */
    bool gts_wide;
    /* hold queue: ring of packets of the selected types; [head, sealed) releasable,
     * [sealed, tail) held */
    spoor_itm_packet q[SPOOR_ITM_RING];
    uint32_t head, sealed, tail;
    /* held packets of the other types, only what the error rules need: offset << 8 | text
     * bytes << 4 | type; [other_first, other_tail) held. A packet is in one of the two rings. */
    uint64_t other[SPOOR_ITM_RING + 4]; /* + 4 spare entries: see ring_spill() */
    uint32_t other_first, other_tail;
    uint32_t selected; /* bit (1u << type) per type spoor_itm_next() returns */
    /* the counters-only consumer's stats loop is not tried again before this stream position
     * (it stopped soon after its start: headers it does not take are frequent here) */
    uint64_t stats_after;
    /* software-channel text (spoor_itm_select_text()): the payload bytes of the software
     * packets of the ports in text_ports, in stream order; [text_head, text_sealed)
     * released, [text_sealed, text_tail) held (they belong to held packets) */
    bool text_mode;
    uint32_t text_ports[8]; /* bit (port % 32) of word port / 32 */
    uint32_t text_head, text_sealed, text_tail;
    uint8_t text[SPOOR_ITM_TEXT_RING];
    spoor_itm_packet discard; /* where a packet of an unselected type is written */
    spoor_itm_stats stats;
} spoor_itm_decoder;

/* Starts a decoder. With require_sync it discards everything before the first
 * synchronization packet (reported as one error); otherwise the first byte is taken as the
 * start of a packet, as it is when tracing starts with the capture. */
void spoor_itm_init(spoor_itm_decoder *d, bool require_sync);

/* Chooses which packet types spoor_itm_next() returns: a bit (1u << type) per type wanted;
 * spoor_itm_init() selects SPOOR_ITM_ALL_TYPES. The other packets are still decoded, dated,
 * counted in the stats and subject to the error and hold rules, so the stats and the packets
 * returned are exactly those of a consumer that takes every packet and ignores the unwanted
 * ones; they only cost less. The selections with a fast path of their own are
 * SPOOR_ITM_ALL_TYPES, 0 (a consumer of the counters only) and 1u << SPOOR_ITM_SW (software
 * channels); any other gives the same results through the slower general loop. Call it
 * before feeding. */
void spoor_itm_select(spoor_itm_decoder *d, uint32_t types);

/* Decodes up to len bytes; returns how many were consumed (fewer than len only when the
 * released packets or text fill the queue: drain them with spoor_itm_next() or
 * spoor_itm_next_text() and feed the rest). */
size_t spoor_itm_feed(spoor_itm_decoder *d, const uint8_t *data, size_t len);

/* Pops the next released packet; false when none is ready. */
bool spoor_itm_next(spoor_itm_decoder *d, spoor_itm_packet *out);
/* The same without the copy (inline, for the hot path): the packet stays valid until the next
 * spoor_itm_feed(). NULL when none is ready. */
static inline const spoor_itm_packet *spoor_itm_next_ref(spoor_itm_decoder *d)
{
    if (d->head == d->sealed)
        return NULL;
    return &d->q[d->head++ % SPOOR_ITM_RING];
}

/* Software-channel text in bulk, for a consumer that prints the bytes written to some ports
 * as they are (spoor itm -c 0,%c): the payload bytes of the software packets of the ports
 * whose bit is set in ports (bit port % 32 of ports[port / 32]; ports 0-255), lowest address
 * first, in stream order, released and dropped by the same rules as the packets they belong
 * to. Selects no packet type (spoor_itm_next() returns nothing; the stats are those of any
 * selection). Call it instead of spoor_itm_select(), before feeding. */
void spoor_itm_select_text(spoor_itm_decoder *d, const uint32_t ports[8]);

/* Points *bytes at the next released text bytes and returns how many (a contiguous piece;
 * call again until 0); they stay valid until the next spoor_itm_feed(). */
size_t spoor_itm_next_text(spoor_itm_decoder *d, const uint8_t **bytes);

/* Drops every released packet at once, for a consumer that only wants the counters; returns
 * how many and, when there were any, the times of the first and the last. */
size_t spoor_itm_skip(spoor_itm_decoder *d, uint64_t *first_time, uint64_t *last_time);

/* Releases the held packets with the time known so far (e.g. when a live source goes quiet). */
void spoor_itm_flush(spoor_itm_decoder *d);

/* End of the stream (or of a contiguous piece of it, e.g. before a reconnect): reports a
 * packet cut short and an unfinished resynchronisation as errors, releases everything and
 * starts parsing afresh at the next byte, keeping the time and the stream position. What the
 * gap held is unknown, a page extension packet among it: the software packets after it are
 * marked page_unknown until a synchronization or page extension packet. */
void spoor_itm_finish(spoor_itm_decoder *d);

/* The counters (see spoor_itm_stats). */
const spoor_itm_stats *spoor_itm_stats_get(const spoor_itm_decoder *d);

#endif
