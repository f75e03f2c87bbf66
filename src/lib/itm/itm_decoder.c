/* ITM/DWT packet decoder (see include/spoor/itm_decoder.h): the parser's state machine, the hold
 * queue that dates packets, and the loops that feed bytes through them. What a header announces is
 * in itm_header.h, what each packet's payload means in itm_packets.h; packet names in comments
 * are the section titles of the ARMv7-M ARM appendix D4 "Debug ITM and DWT Packet Protocol". */
#include <string.h>

#include "base/byteorder.h"
#include "itm/itm_header.h"
#include "itm/itm_packets.h"
#include "spoor/itm_decoder.h"

enum {
    ST_HEADER, /* expecting a packet header */
    ST_FIXED,  /* collecting the fixed-size payload of a software or hardware source packet */
    ST_CONT,   /* collecting a payload whose bytes carry a continuation bit C (bit 7) */
    ST_SYNC,   /* after a 0x00 header: counting zero bytes until 0x80 */
    ST_LOST,   /* after an error: skipping bytes until a synchronization packet */
};

enum {
    /* D4 'Synchronization packet': at least 47 zero bits then a one, so at least five zero
     * bytes before the 0x80 */
    SYNC_MIN_ZEROS = 5,
    /* packets one step of the general loop can queue: an error, a sync and one more */
    STEP_PACKETS = 3,
    /* text bytes one step can queue: one software packet's */
    STEP_TEXT = 4,
    /* the fast loops release the packets beyond the hold queue's size in batches, once this
     * many more are held (what the general loop does one packet at a time before each step,
     * the fast loops do before a timestamp, every LAZY_RELEASE packets and on leaving: the
     * packets released and their times are the same, see release_excess) */
    LAZY_RELEASE = 128,
};

_Static_assert(SPOOR_ITM_HOLD + LAZY_RELEASE + 4 + STEP_PACKETS <= SPOOR_ITM_RING,
               "the rings hold the held packets of a fast run and one more step");
_Static_assert(SPOOR_ITM_RING * 4 + 16 + STEP_TEXT <= SPOOR_ITM_TEXT_RING,
               "the text ring holds the bytes of a full packet ring");

const char *spoor_itm_type_name(spoor_itm_type type)
{
    static const char *const names[SPOOR_ITM_TYPE_COUNT] = {
        "sync",   "overflow", "ts_local",      "ts_global1", "ts_global2",
        "ext",    "sw",       "event_counter", "exception",  "pc_sample",
        "dwt_pc", "dwt_addr", "dwt_data",      "dwt_match",  "error",
    };
    return (unsigned)type < SPOOR_ITM_TYPE_COUNT ? names[type] : "?";
}

const char *spoor_itm_error_text(spoor_itm_error_kind kind)
{
    switch (kind) {
    case SPOOR_ITM_ERR_RESERVED_HEADER: return "reserved header";
    case SPOOR_ITM_ERR_BAD_SYNC: return "zero bytes not ending in a synchronization packet";
    case SPOOR_ITM_ERR_BAD_PAYLOAD: return "payload not allowed for its header";
    case SPOOR_ITM_ERR_TRUNCATED: return "stream ends inside a packet";
    case SPOOR_ITM_ERR_SYNC_IN_PACKET: return "synchronization packet inside a packet";
    case SPOOR_ITM_ERR_NO_SYNC: return "no synchronization packet yet";
    }
    return "?";
}

/* The parser expects a header at the next byte, and nothing before it belongs to a packet. */
static void parser_restart(spoor_itm_decoder *d)
{
    d->state = ST_HEADER;
    d->zeros = 0;
    d->got = 0;
    d->last_trailing_zeros = 0;
    d->hist = 0xFFFFFFFFu;
}

void spoor_itm_init(spoor_itm_decoder *d, bool require_sync)
{
    memset(d, 0, sizeof *d);
    d->selected = SPOOR_ITM_ALL_TYPES;
    parser_restart(d);
    if (require_sync) {
        d->state = ST_LOST;
        d->lost_from = 0;
        d->lost_detected = 0;
        d->lost_why = SPOOR_ITM_ERR_NO_SYNC;
    }
}

void spoor_itm_select(spoor_itm_decoder *d, uint32_t types)
{
    d->selected = types & SPOOR_ITM_ALL_TYPES;
}

/* ---- hold queue ---------------------------------------------------------------------------- */

/* Packets of the selected types wait in q (full packets), the others in `other` (offset and
 * type only: they are counted when decoded and forgotten when released). Together they are
 * the hold queue of the protocol rules: offsets grow with the push order in both rings, so
 * the oldest and the newest held packet are found by comparing the two rings' ends. */

#define RING_INDEX(i) ((i) % SPOOR_ITM_RING)
#define TEXT_INDEX(i) ((i) % SPOOR_ITM_TEXT_RING)

_Static_assert((SPOOR_ITM_RING & (SPOOR_ITM_RING - 1)) == 0, "ring indices wrap at 2^32");
_Static_assert((SPOOR_ITM_TEXT_RING & (SPOOR_ITM_TEXT_RING - 1)) == 0, "indices wrap at 2^32");
_Static_assert(SPOOR_ITM_TYPE_COUNT <= 16, "a type fits the low 4 bits of an `other` entry");

/* An entry of the `other` ring: the packet's stream offset, its type, and how many bytes of
 * text it added (0-4: a software packet in text mode). */
static inline uint64_t other_entry(uint64_t offset, spoor_itm_type type)
{
    return (offset << 8) + type; /* type < 16 */
}

static inline uint64_t other_text_entry(uint64_t offset, unsigned text_bytes)
{
    return (offset << 8) + (text_bytes << 4) + SPOOR_ITM_SW;
}

/* Bit 7 of an entry: a software packet on an unknown stimulus port page (counted in
 * stats.sw_page_unknown, uncounted when the packet is dropped). */
#define OTHER_PAGE_UNKNOWN 0x80u

static inline uint64_t other_offset(uint64_t entry)
{
    return entry >> 8;
}

static inline spoor_itm_type other_type(uint64_t entry)
{
    return (spoor_itm_type)(entry & 0x0F);
}

static inline uint32_t other_text_bytes(uint64_t entry)
{
    return (uint32_t)(entry >> 4 & 7);
}

static inline uint32_t held(const spoor_itm_decoder *d)
{
    return (d->tail - d->sealed) + (d->other_tail - d->other_first);
}

/* No room in a ring for what one step of the general loop can queue (then released packets
 * or text fill it: the caller takes them first). */
static inline bool rings_full(const spoor_itm_decoder *d)
{
    return d->tail - d->head + STEP_PACKETS > SPOOR_ITM_RING ||
           d->other_tail - d->other_first + STEP_PACKETS > SPOOR_ITM_RING ||
           d->text_tail - d->text_head + STEP_TEXT > SPOOR_ITM_TEXT_RING;
}

/* Something was released at the current time. */
static inline void note_release(spoor_itm_decoder *d)
{
    if (!d->stats.released_any) {
        d->stats.released_any = true;
        d->stats.time_first = d->time;
    }
    d->stats.time_last = d->time;
}

static inline spoor_itm_packet *push(spoor_itm_decoder *d, spoor_itm_type type, uint64_t offset,
                                     uint8_t size)
{
    d->stats.packets[type]++;
    if (!(d->selected >> type & 1)) {
        d->other[RING_INDEX(d->other_tail)] = other_entry(offset, type);
        d->other_tail++;
        return &d->discard;
    }
    spoor_itm_packet *p = &d->q[RING_INDEX(d->tail)];
    d->tail++;
    packet_start(p, type, offset, size);
    return p;
}

/* Releases every held packet; `exact` says the current time is the one they relate to. */
static inline void seal_all(spoor_itm_decoder *d, bool exact)
{
    if (held(d) == 0)
        return;
    for (uint32_t i = d->sealed; i != d->tail; i++) {
        spoor_itm_packet *p = &d->q[RING_INDEX(i)];
        p->time = d->time;
        p->time_exact = exact;
    }
    d->sealed = d->tail;
    d->other_first = d->other_tail;
    d->text_sealed = d->text_tail;
    note_release(d);
}

/* Queues a packet that needs no later timestamp and releases it with everything before it;
 * `exact` says the current time is the one they relate to. */
static inline spoor_itm_packet *push_sealed(spoor_itm_decoder *d, spoor_itm_type type,
                                            uint64_t offset, uint8_t size, bool exact)
{
    seal_all(d, exact);
    spoor_itm_packet *p = push(d, type, offset, size);
    seal_all(d, exact);
    return p;
}

/* Releases the n oldest held packets (of both rings, by offset) with the time known so far. */
static void release_oldest_n(spoor_itm_decoder *d, uint32_t n)
{
    uint32_t sealed = d->sealed, first = d->other_first, text = 0;
    if (sealed == d->tail) { /* only the `other` ring holds packets (a consumer of counters or
                              * text): its n oldest */
        while (n) {          /* in contiguous pieces of the ring: a loop the compiler vectorizes */
            const uint64_t *e = d->other + RING_INDEX(first);
            uint32_t piece = SPOOR_ITM_RING - RING_INDEX(first);
            if (piece > n)
                piece = n;
            uint64_t sum = 0; /* of the text fields in place (bits 4-6): at most 4 * 512 << 4 */
            for (uint32_t i = 0; i < piece; i++)
                sum += e[i] & 0x70;
            text += (uint32_t)(sum >> 4);
            first += piece;
            n -= piece;
        }
    } else if (first == d->other_tail) { /* only the packet ring */
        for (; n; n--, sealed++) {
            d->q[RING_INDEX(sealed)].time = d->time;
            d->q[RING_INDEX(sealed)].time_exact = false;
        }
    }
    for (; n; n--) {
        bool in_q = sealed != d->tail;
        if (in_q && first != d->other_tail)
            in_q = d->q[RING_INDEX(sealed)].offset < other_offset(d->other[RING_INDEX(first)]);
        if (in_q) {
            spoor_itm_packet *p = &d->q[RING_INDEX(sealed)];
            p->time = d->time;
            p->time_exact = false;
            sealed++;
        } else {
            text += other_text_bytes(d->other[RING_INDEX(first)]);
            first++;
        }
    }
    d->sealed = sealed;
    d->other_first = first;
    d->text_sealed += text;
    note_release(d);
}

/* The hold queue is full: releases its oldest packet with the time known so far. */
static void release_oldest(spoor_itm_decoder *d)
{
    release_oldest_n(d, 1);
}

/* Releases the oldest held packets until one step of the general loop may follow: the rule
 * the general loop applies before each step (a fast loop applies it in batches: the time
 * does not change between two timestamps, and nothing drops held packets in a fast loop, so
 * the same packets are released at the same time). */
static void release_excess(spoor_itm_decoder *d)
{
    uint32_t n = held(d);
    if (n + STEP_PACKETS > SPOOR_ITM_HOLD)
        release_oldest_n(d, n + STEP_PACKETS - SPOOR_ITM_HOLD);
}

/* The counters of a held packet that is dropped, in the packet ring or the `other` ring. */
static void uncount(spoor_itm_decoder *d, const spoor_itm_packet *p)
{
    d->stats.packets[p->type]--;
    if (p->type == SPOOR_ITM_SW && p->u.sw.page_unknown)
        d->stats.sw_page_unknown--;
}

static void uncount_other(spoor_itm_decoder *d, uint64_t entry)
{
    d->stats.packets[other_type(entry)]--;
    if (entry & OTHER_PAGE_UNKNOWN)
        d->stats.sw_page_unknown--;
}

/* Drops the newest held packet (there is one); returns its offset. */
static uint64_t drop_newest(spoor_itm_decoder *d)
{
    bool in_q = d->sealed != d->tail;
    uint64_t other = 0;
    if (d->other_first != d->other_tail) {
        other = d->other[RING_INDEX(d->other_tail - 1)];
        if (in_q)
            in_q = d->q[RING_INDEX(d->tail - 1)].offset > other_offset(other);
    }
    if (in_q) {
        const spoor_itm_packet *last = &d->q[RING_INDEX(d->tail - 1)];
        uncount(d, last);
        d->tail--;
        return last->offset;
    }
    uncount_other(d, other);
    d->text_tail -= other_text_bytes(other);
    d->other_tail--;
    return other_offset(other);
}

/* Drops every held packet; returns the smaller of `from` and the first one's offset. */
static uint64_t drop_held(spoor_itm_decoder *d, uint64_t from)
{
    if (d->sealed != d->tail) {
        uint64_t first = d->q[RING_INDEX(d->sealed)].offset;
        if (first < from)
            from = first;
        for (uint32_t i = d->sealed; i != d->tail; i++)
            uncount(d, &d->q[RING_INDEX(i)]);
        d->tail = d->sealed;
    }
    if (d->other_first != d->other_tail) {
        uint64_t first = other_offset(d->other[RING_INDEX(d->other_first)]);
        if (first < from)
            from = first;
        for (uint32_t i = d->other_first; i != d->other_tail; i++)
            uncount_other(d, d->other[RING_INDEX(i)]);
        d->other_tail = d->other_first;
        d->text_tail = d->text_sealed;
    }
    return from;
}

size_t spoor_itm_skip(spoor_itm_decoder *d, uint64_t *first_time, uint64_t *last_time)
{
    size_t n = d->sealed - d->head;
    if (n) {
        *first_time = d->q[RING_INDEX(d->head)].time;
        *last_time = d->q[RING_INDEX(d->sealed - 1)].time;
        d->head = d->sealed;
    }
    return n;
}

void spoor_itm_select_text(spoor_itm_decoder *d, const uint32_t ports[8])
{
    d->selected = 0;
    d->text_mode = true;
    memcpy(d->text_ports, ports, sizeof d->text_ports);
}

size_t spoor_itm_next_text(spoor_itm_decoder *d, const uint8_t **bytes)
{
    uint32_t start = TEXT_INDEX(d->text_head), n = d->text_sealed - d->text_head;
    if (n > SPOOR_ITM_TEXT_RING - start)
        n = SPOOR_ITM_TEXT_RING - start; /* up to the end of the ring, the rest next call */
    *bytes = d->text + start;
    d->text_head += n;
    return n;
}

/* Whether the software packets of port go to the text (text mode). */
static inline bool text_port(const spoor_itm_decoder *d, uint32_t port)
{
    return port < 256 && (d->text_ports[port / 32] >> (port % 32) & 1);
}

/* Appends the n payload bytes of v to the text, lowest address first. */
static inline uint32_t text_put(uint8_t *restrict text, uint32_t tail, uint32_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        text[TEXT_INDEX(tail + i)] = (uint8_t)(v >> (8 * i));
    return tail + n;
}

bool spoor_itm_next(spoor_itm_decoder *d, spoor_itm_packet *out)
{
    const spoor_itm_packet *p = spoor_itm_next_ref(d);
    if (p)
        *out = *p;
    return p != NULL;
}

const spoor_itm_stats *spoor_itm_stats_get(const spoor_itm_decoder *d)
{
    return &d->stats;
}

/* ---- errors -------------------------------------------------------------------------------- */

/* Something impossible was seen at `detected`; the packet being parsed started at `from`.
 * Held packets are dropped (nothing confirmed them) and bytes are skipped until a sync. */
static void lose(spoor_itm_decoder *d, uint64_t from, uint64_t detected, spoor_itm_error_kind why)
{
    from = drop_held(d, from);
    d->state = ST_LOST;
    d->zeros = 0;
    d->lost_from = from;
    d->lost_detected = detected;
    d->lost_why = why;
    d->last_trailing_zeros = 0;
}

static void push_error(spoor_itm_decoder *d, uint64_t from, uint64_t end, uint64_t detected,
                       spoor_itm_error_kind why)
{
    spoor_itm_packet *p = push_sealed(d, SPOOR_ITM_ERROR, from, 0, false);
    p->u.error.bytes_lost = end - from;
    d->stats.bytes_lost += end - from;
    p->u.error.why = why;
    p->u.error.detected_at = detected;
}

/* ---- packets of the general loop ----------------------------------------------------------- */

/* A complete source packet: header h of kind k, n payload bytes of value v. A payload the
 * packet does not allow is reported where it shows, at the last payload byte. */
static inline void source_packet(spoor_itm_decoder *d, unsigned k, uint8_t h, uint32_t v,
                                 unsigned n, uint64_t off)
{
    if (!source_payload_ok(k, v)) {
        lose(d, off, off + n, SPOOR_ITM_ERR_BAD_PAYLOAD);
        return;
    }
    spoor_itm_packet *q = push(d, itm_source_type[k], off, (uint8_t)(n + 1));
    source_fields(q, k, h, v, n, d->page * 32u);
    if (!hdr_is_sw(k))
        return;
    if (d->text_mode && text_port(d, q->u.sw.port)) { /* in the `other` ring */
        d->text_tail = text_put(d->text, d->text_tail, v, n);
        d->other[RING_INDEX(d->other_tail - 1)] = other_text_entry(off, n);
    }
    if (d->page_unknown) { /* (the fast loops leave these packets to this one) */
        q->u.sw.page_unknown = true;
        d->stats.sw_page_unknown++;
        if (q == &d->discard)
            d->other[RING_INDEX(d->other_tail - 1)] |= OTHER_PAGE_UNKNOWN;
    }
}

/* A local timestamp packet of kind k, header h: the delta dates the packets held since the
 * previous one, and the packet itself. */
static void timestamp_packet(spoor_itm_decoder *d, unsigned k, uint8_t h, uint32_t delta,
                             uint64_t off, unsigned size)
{
    d->time += delta;
    spoor_itm_packet *q = push_sealed(d, SPOOR_ITM_TS_LOCAL, off, (uint8_t)size, true);
    ts_local_fields(q, k, h, delta);
}

/* A complete packet whose n payload bytes b carry continuation bits (hdr_is_cont(k)). */
static void cont_packet(spoor_itm_decoder *d, unsigned k, uint8_t h, const uint8_t *b, unsigned n,
                        uint64_t off)
{
    uint8_t size = (uint8_t)(n + 1);
    spoor_itm_packet *q;
    switch (k) {
    case HDR_LTS1: {
        uint32_t delta = 0;
        (void)local_timestamp_decode(k, h, (uint32_t)spoor_le_bytes(b, n), &delta); /* n + 1 */
        timestamp_packet(d, k, h, delta, off, size);
        break;
    }
    case HDR_GTS1:
        q = push(d, SPOOR_ITM_TS_GLOBAL1, off, size);
        d->gts = gts1_fields(q, d->gts, b, n);
        break;
    case HDR_GTS2:
        if (!gts2_size_ok(n)) {
            lose(d, off, off + size, SPOOR_ITM_ERR_BAD_PAYLOAD);
            return;
        }
        q = push(d, SPOOR_ITM_TS_GLOBAL2, off, size);
        d->gts = gts2_fields(q, d->gts, b, n);
        d->gts_wide = n == 6;
        break;
    default: /* HDR_EXT */
        q = push(d, SPOOR_ITM_EXTENSION, off, size);
        extension_fields(q, h, b, n);
        if (!q->u.ext.hw) { /* a new stimulus port page (see sync_packet) */
            d->page = (uint8_t)(q->u.ext.page > 255 ? 255 : q->u.ext.page);
            d->page_unknown = false;
        }
        break;
    }
}

/* A synchronization packet ended at `end` (the 0x80 byte) after `zeros` zero bytes: D4 has it
 * as at least 47 zero bits then a one, so every zero byte of the run belongs to it, however
 * many there are, and its offset is the run's first byte (its size saturates at 255).
 *
 * The stimulus port page. ARMv7-M ARM (DDI 0403E.b) D4.2.8 'Instrumentation packet': "Whenever
 * a debugger receives an Instrumentation packet, it uses the page number from the last
 * Extension packet it received, or a page number of 0 if it has not received an Extension
 * packet since it last received a Synchronization." (the sentence as rtic-scope/itm-decode
 * issue 19 quotes it; the ARMv8-M ARM, chapter D3 of the same title, keeps the protocol.) So a
 * sync sets the page to 0 and only an extension packet with SH = 0 changes it. An Overflow
 * packet is not in that rule: D4.2.3 has the ITM emit one when software writes a stimulus port
 * whose output buffer is full, when the DWT's buffer is full or when the local timestamp counter
 * overflows (as itm-decode's documentation of TracePacket::Overflow gives it), and the
 * CoreSight ITM TRM (DDI 0314H, 12.1.1 'Overflow packet') has "SWIT overflow is against all
 * stimulus ports. This happens when data is written to the Stimulus Registers but the FIFO is
 * full.": writes the ITM did not take, not packets lost on the way, so the page the debugger
 * last received still applies and the decoder keeps it across an overflow. What no rule covers is a
 * gap in the bytes with no sync after it (spoor_itm_finish then more bytes: a reconnected
 * source): an extension may have been in it, so the page is unknown until a sync or an
 * extension, and the software packets meanwhile are marked page_unknown and counted. Errors
 * in the stream do not make it unknown: the decoder skips to the next sync after one. */
static void sync_packet(spoor_itm_decoder *d, uint64_t end, uint64_t zeros)
{
    d->page = 0;
    d->page_unknown = false;
    uint64_t start = end - zeros;
    push_sealed(d, SPOOR_ITM_SYNC, start, zeros + 1 > 255 ? 255 : (uint8_t)(zeros + 1), false);
    d->last_trailing_zeros = 0;
    d->state = ST_HEADER;
}

/* The 0x80 of a sync arrived in ST_SYNC; pkt_start is the first 0x00 after the last packet. */
static void sync_end(spoor_itm_decoder *d, uint64_t at)
{
    uint64_t total = d->zeros + d->last_trailing_zeros;
    if (d->zeros >= SYNC_MIN_ZEROS) {
        sync_packet(d, at, d->zeros);
        return;
    }
    if (total < SYNC_MIN_ZEROS) {
        lose(d, d->pkt_start, at, SPOOR_ITM_ERR_BAD_SYNC);
        return;
    }
    /* Trap (D4 'Synchronization packet'): the sync started in the payload of the previous packet,
     * so that packet was not one. Drop it when it is still held; report its non-zero bytes as lost.
     */
    uint64_t sync_start = d->pkt_start - d->last_trailing_zeros;
    if (held(d)) {
        uint64_t from = drop_newest(d);
        seal_all(d, false);
        push_error(d, from, sync_start, at, SPOOR_ITM_ERR_SYNC_IN_PACKET);
    } else {
        push_error(d, sync_start, sync_start, at, SPOOR_ITM_ERR_SYNC_IN_PACKET);
    }
    sync_packet(d, at, total);
}

/* Starts the packet whose header h of kind k is at stream position off (slow path: its payload
 * is not all in the buffer). */
static void start_packet(spoor_itm_decoder *d, unsigned k, uint8_t h, uint64_t off)
{
    d->header = h;
    d->pkt_start = off;
    d->got = 0;
    switch (k) {
    case HDR_RESERVED: lose(d, off, off, SPOOR_ITM_ERR_RESERVED_HEADER); break;
    case HDR_SYNC:
        d->state = ST_SYNC;
        d->zeros = 1;
        break;
    case HDR_OVERFLOW: push(d, SPOOR_ITM_OVERFLOW, off, 1); break;
    case HDR_LTS2: { /* no payload */
        uint32_t delta = 0;
        unsigned size = local_timestamp_decode(k, h, 0, &delta);
        timestamp_packet(d, k, h, delta, off, size);
        break;
    }
    case HDR_EXT: /* with C = 1 (a bare extension is the caller's) */
    case HDR_GTS1:
    case HDR_GTS2:
    case HDR_LTS1: d->state = ST_CONT; break;
    default: /* a source packet */
        d->state = ST_FIXED;
        d->need = (uint8_t)source_payload_size(h);
        break;
    }
}

/* ---- the fast loops ------------------------------------------------------------------------ */

/* Whole packets lying entirely in the buffer, with the queue indices and the time in locals;
 * anything else, or too few bytes left, returns to the general loop. Their packets and rules
 * are exactly those of the general loop (tests/unit/test_itm_select.c). */

/* A local timestamp in a fast loop dates the held packets q[from, to) (time_exact is already
 * true). */
static inline void date_held(spoor_itm_packet *restrict q, uint32_t from, uint32_t to,
                             uint64_t time)
{
    for (uint32_t k = from; k != to; k++)
        q[RING_INDEX(k)].time = time;
}

/* Stores what a fast run kept in locals: the time, the other-type ring, and (when the run saw
 * a local timestamp) the release of everything that timestamp dated, from the first one's
 * time to the last one's. */
static inline void end_fast_run(spoor_itm_decoder *d, bool saw_timestamp, uint64_t first_ts_time,
                                uint64_t time, uint32_t other_tail, uint32_t other_first)
{
    if (saw_timestamp) {
        d->time = first_ts_time;
        note_release(d);
        d->stats.time_last = time;
    }
    d->time = time;
    d->other_tail = other_tail;
    d->other_first = other_first;
}

/* The hot loop when every packet type is selected: whole packets of the most common kinds
 * (software, local timestamps, data trace PC and word value, exception trace, PC samples). */
static __attribute__((noinline)) size_t fast_all(spoor_itm_decoder *d, const uint8_t *restrict data,
                                                 size_t i, size_t len, uint64_t base)
{
    uint32_t tail = d->tail, sealed = d->sealed;
    const uint32_t head = d->head;
    const uint32_t page32 = d->page * 32u;
    uint64_t time = d->time;
    spoor_itm_packet *q = d->q;
    uint64_t n_sw = 0, n_data = 0, n_pc = 0, n_ts = 0, n_exc = 0, n_pcs = 0;
    const uint32_t others = d->other_tail - d->other_first; /* sealed by the first timestamp */
    uint32_t room = SPOOR_ITM_HOLD - others;
    uint64_t first_ts_time = 0;
    while (i + 5 <= len && tail - sealed + STEP_PACKETS <= room &&
           tail - head + STEP_PACKETS <= SPOOR_ITM_RING) {
        uint8_t h = data[i];
        unsigned k = itm_header_kind[h];
        uint32_t v = spoor_le32(data + i + 1); /* may read past the payload, not the buffer */
        spoor_itm_packet *p;
        if (hdr_is_sw(k)) {
            unsigned n = source_payload_size(h);
            p = &q[RING_INDEX(tail++)];
            packet_start(p, SPOOR_ITM_SW, base + i, n + 1);
            sw_fields(p, h, source_payload_value(v, n), n, page32);
            n_sw++;
            i += 1 + n;
            continue;
        }
        if (k == HDR_DATA4) {
            p = &q[RING_INDEX(tail++)];
            packet_start(p, SPOOR_ITM_DWT_DATA, base + i, 5);
            dwt_data_fields(p, h, v, 4);
            n_data++;
            i += 5;
            continue;
        }
        if (k == HDR_PC) {
            p = &q[RING_INDEX(tail++)];
            packet_start(p, SPOOR_ITM_DWT_PC, base + i, 5);
            dwt_pc_fields(p, h, v);
            n_pc++;
            i += 5;
            continue;
        }
        if (k == HDR_EXC && source_payload_ok(HDR_EXC, v)) {
            p = &q[RING_INDEX(tail++)];
            packet_start(p, SPOOR_ITM_EXCEPTION, base + i, 3);
            exception_fields(p, v);
            n_exc++;
            i += 3;
            continue;
        }
        if (k == HDR_PCS) {
            p = &q[RING_INDEX(tail++)];
            packet_start(p, SPOOR_ITM_PC_SAMPLE, base + i, 5);
            pc_sample_fields(p, false, v);
            n_pcs++;
            i += 5;
            continue;
        }
        uint32_t delta;
        unsigned size = local_timestamp_decode(k, h, v, &delta);
        if (!size)
            break;
        time += delta;
        date_held(q, sealed, tail, time);
        p = &q[RING_INDEX(tail++)];
        packet_start(p, SPOOR_ITM_TS_LOCAL, base + i, size);
        p->time = time;
        ts_local_fields(p, k, h, delta);
        sealed = tail;
        room = SPOOR_ITM_HOLD;
        if (n_ts == 0)
            first_ts_time = time;
        n_ts++;
        i += size;
    }
    d->stats.packets[SPOOR_ITM_SW] += n_sw;
    d->stats.packets[SPOOR_ITM_DWT_DATA] += n_data;
    d->stats.packets[SPOOR_ITM_DWT_PC] += n_pc;
    d->stats.packets[SPOOR_ITM_TS_LOCAL] += n_ts;
    d->stats.packets[SPOOR_ITM_EXCEPTION] += n_exc;
    d->stats.packets[SPOOR_ITM_PC_SAMPLE] += n_pcs;
    d->tail = tail;
    d->sealed = sealed;
    /* a timestamp releases the held packets of the other types too */
    end_fast_run(d, n_ts != 0, first_ts_time, time, d->other_tail,
                 n_ts ? d->other_tail : d->other_first);
    return i;
}

/* A source packet of kind k >= HDR_SW1 (not a software packet when the software packets are
 * selected) goes to the `other` ring: false when its payload is one the general loop must
 * report. */
static inline bool fast_other(unsigned k, uint32_t v, uint64_t off, uint64_t *restrict other,
                              uint32_t *otail, uint64_t *restrict count)
{
    if (!source_payload_ok(k, v))
        return false;
    spoor_itm_type type = itm_source_type[k];
    other[RING_INDEX(*otail)] = other_entry(off, type);
    (*otail)++;
    count[type]++;
    return true;
}

/* Stores the locals of a fast run (fast_sw, count_loop) in the decoder, releases what the hold
 * rule releases at this point (release_excess) and returns the new indices of the oldest held
 * packets in *sealed and *ofirst: done before a timestamp when more than the hold queue's size
 * are held, once LAZY_RELEASE more are held, and on leaving the run. */
static void fast_run_release(spoor_itm_decoder *d, uint32_t tail, uint32_t *sealed, uint32_t otail,
                             uint32_t *ofirst, uint32_t text_tail, uint64_t time,
                             uint64_t *ts_before, uint64_t first_ts_time)
{
    d->tail = tail;
    d->sealed = *sealed;
    d->text_tail = text_tail;
    uint64_t ts = d->stats.packets[SPOOR_ITM_TS_LOCAL];
    end_fast_run(d, ts != *ts_before, first_ts_time, time, otail, *ofirst);
    *ts_before = ts;
    release_excess(d);
    *sealed = d->sealed;
    *ofirst = d->other_first;
}

/* A 1-byte software packet at stream offset off: header and payload byte in hv (header in
 * the low byte). */
static inline void sw1_packet(spoor_itm_packet *o, uint64_t off, uint16_t hv, uint32_t page32)
{
    packet_start(o, SPOOR_ITM_SW, off, 2);
    sw_fields(o, (uint8_t)hv, hv >> 8, 1, page32);
}

/* The hot loop when the software packets alone are selected (a consumer of the software
 * channels): a packet of another type costs a counter and its `other` ring entry only, and
 * runs of 1-byte software packets go four at a time. */
static __attribute__((noinline)) size_t fast_sw(spoor_itm_decoder *d, const uint8_t *restrict data,
                                                size_t i, size_t len, uint64_t base)
{
    if (len < 5)
        return i;
    uint32_t tail = d->tail, sealed = d->sealed, otail = d->other_tail, ofirst = d->other_first;
    const uint32_t head = d->head;
    const uint32_t page32 = d->page * 32u;
    uint64_t time = d->time, first_ts_time = 0;
    spoor_itm_packet *restrict q = d->q;
    uint64_t *restrict other = d->other;
    uint64_t *count = d->stats.packets; /* not a local array: nothing to add up on leaving */
    uint64_t ts_before = count[SPOOR_ITM_TS_LOCAL];
    const uint8_t *p = data + i, *const last = data + len - 5, *const end = data + len;
    while (p <= last && tail - head + 4 + STEP_PACKETS <= SPOOR_ITM_RING &&
           otail - ofirst + STEP_PACKETS <= SPOOR_ITM_RING) {
        if ((tail - sealed) + (otail - ofirst) >= SPOOR_ITM_HOLD + LAZY_RELEASE)
            fast_run_release(d, tail, &sealed, otail, &ofirst, d->text_tail, time, &ts_before,
                             first_ts_time);
        uint8_t h = p[0];
        uint32_t v = spoor_le32(p + 1); /* may read past the payload, not past the buffer */
        unsigned k = itm_header_kind[h];
        if (k == HDR_SW1 && p + 8 <= end) {
            uint64_t w = spoor_le64(p);
            if (four_sw1_packets(w)) {
                uint64_t off = base + (uint64_t)(p - data);
                sw1_packet(&q[RING_INDEX(tail)], off, (uint16_t)w, page32);
                sw1_packet(&q[RING_INDEX(tail + 1)], off + 2, (uint16_t)(w >> 16), page32);
                sw1_packet(&q[RING_INDEX(tail + 2)], off + 4, (uint16_t)(w >> 32), page32);
                sw1_packet(&q[RING_INDEX(tail + 3)], off + 6, (uint16_t)(w >> 48), page32);
                tail += 4;
                count[SPOOR_ITM_SW] += 4;
                p += 8;
                continue;
            }
        }
        if (hdr_is_sw(k)) {
            unsigned n = source_payload_size(h);
            spoor_itm_packet *o = &q[RING_INDEX(tail)];
            tail++;
            packet_start(o, SPOOR_ITM_SW, base + (uint64_t)(p - data), n + 1);
            sw_fields(o, h, source_payload_value(v, n), n, page32);
            count[SPOOR_ITM_SW]++;
            p += n + 1;
            continue;
        }
        if (k > HDR_SW4) {
            if (!fast_other(k, v, base + (uint64_t)(p - data), other, &otail, count))
                break;
            p += 1 + source_payload_size(h);
            continue;
        }
        uint32_t delta;
        unsigned size = local_timestamp_decode(k, h, v, &delta);
        if (!size)
            break;
        /* a local timestamp: dates and releases the held packets and itself */
        if ((tail - sealed) + (otail - ofirst) + STEP_PACKETS > SPOOR_ITM_HOLD)
            fast_run_release(d, tail, &sealed, otail, &ofirst, d->text_tail, time, &ts_before,
                             first_ts_time);
        time += delta;
        date_held(q, sealed, tail, time);
        sealed = tail;
        ofirst = otail;
        if (count[SPOOR_ITM_TS_LOCAL]++ == ts_before)
            first_ts_time = time;
        p += size;
    }
    fast_run_release(d, tail, &sealed, otail, &ofirst, d->text_tail, time, &ts_before,
                     first_ts_time);
    return (size_t)(p - data);
}

/* Eight stream bytes w that are four 1-byte software packets (four_sw1_packets) of the same
 * port. */
static inline bool four_sw1_one_port(uint64_t w)
{
    return (w & 0x00FF00FF00FF00FFu) == (w & 0xFF) * 0x0001000100010001u;
}

/* A fast run wrote n `other` entries from &other[RING_INDEX(tail)] on without wrapping: the
 * ones past the ring's end (into its spare entries) go to its start. Returns the new tail. */
static inline uint32_t ring_spill(uint64_t *other, uint32_t tail, uint32_t n)
{
    uint32_t end = RING_INDEX(tail) + n;
    if (end > SPOOR_ITM_RING)
        memcpy(other, other + SPOOR_ITM_RING, (end - SPOOR_ITM_RING) * sizeof *other);
    return tail + n;
}

/* The four payload bytes of four_sw1_packets w, the first in the low byte. */
static inline uint32_t four_sw1_payload(uint64_t w)
{
    return (uint32_t)((w >> 8 & 0xFF) | (w >> 16 & 0xFF00) | (w >> 24 & 0xFF0000) |
                      (w >> 32 & 0xFF000000));
}

/* The payload bytes of an extension or GTS1 packet (its header has C = 1) whose
 * payload ends within the four bytes v after the header (a byte with C = 0); -1 when it does
 * not. */
static inline int cont_payload_in_four(uint32_t v)
{
    uint32_t ends = ~v & 0x80808080u;
    return ends ? __builtin_ctz(ends) / 8 + 1 : -1;
}

/* The hot loop for a consumer of the counters only (nothing selected), and (with text) of the
 * text of some software ports: a source packet is a table look-up, a payload check and its
 * `other` ring entry, local timestamps and the extension and GTS1 packets are taken in the loop
 * too; runs of 1-byte software packets go four at a time, their text bytes too when they are of
 * one port. The loop runs in chunks of bytes the rings hold whatever the packets are. */
static inline __attribute__((always_inline)) size_t count_loop(spoor_itm_decoder *d,
                                                               const uint8_t *restrict data,
                                                               size_t i, size_t len, uint64_t base,
                                                               const bool text)
{
    /* packets of selected types still held (the selection changed): the general loop first */
    if (d->tail != d->sealed || len < 8)
        return i;
    uint32_t otail = d->other_tail, ofirst = d->other_first, sealed = d->sealed;
    uint32_t ttail = d->text_tail;
    const uint32_t thead = d->text_head;
    /* bit A: the port of header 0bAAAAA0SS on the current page is one of the text's */
    uint32_t text_a = text && d->page < 8 ? d->text_ports[d->page] : 0;
    uint64_t time = d->time, first_ts_time = 0;
    uint64_t *restrict other = d->other;
    uint8_t *restrict tx = d->text;
    /* the counters in place (d->stats.packets[type]++ keeps a register free for the loop) */
    uint64_t *count = d->stats.packets;
    uint64_t ts_before = count[SPOOR_ITM_TS_LOCAL];
    /* eight bytes from p are in the buffer: the payload loads need no bounds */
    const uint8_t *p = data + i, *const last = data + len - 8;
    /* the stream offset of the byte at p is p + obase (modulo 2^64) */
    const uint64_t obase = base - (uint64_t)(uintptr_t)data;
    /* a chunk's `other` entries go to op on from op_start = &other[RING_INDEX(otail)] */
    uint64_t *op = other, *op_start = other;
    /* four_sw1_packets' two constants, opaque to the compiler so that it keeps them in registers
     * instead of building them again for every packet */
    uint64_t sw1_mask = FOUR_SW1_MASK, sw1_want = FOUR_SW1_WANT;
    __asm__("" : "+r"(sw1_mask), "+r"(sw1_want));
    while (p <= last) {
        if (otail - ofirst + STEP_PACKETS > SPOOR_ITM_HOLD)
            fast_run_release(d, d->tail, &sealed, otail, &ofirst, ttail, time, &ts_before,
                             first_ts_time);
        /* a chunk of bytes whose packets the rings hold: the packets the loop queues take two
         * bytes or more (not a bare extension: the general loop's) and add at most four text
         * bytes each; the `other` ring holds SPOOR_ITM_HOLD + LAZY_RELEASE (see the assertion
         * on LAZY_RELEASE) */
        size_t room = SPOOR_ITM_HOLD + LAZY_RELEASE - (otail - ofirst);
        if (text) { /* the general loop may have left less than STEP_TEXT bytes free */
            uint32_t text_free = SPOOR_ITM_TEXT_RING - (ttail - thead);
            size_t text_room = text_free > STEP_TEXT ? (text_free - STEP_TEXT) / 4 : 0;
            if (room > text_room)
                room = text_room;
        }
        if (room == 0)
            break;
        /* its entries do not wrap around the ring: a chunk writes at most room + 3 (four
         * packets from its last byte), into the 4 spare entries past the end at worst */
        size_t ring_left = SPOOR_ITM_RING - RING_INDEX(otail);
        if (room > ring_left)
            room = ring_left;
        op = op_start = other + RING_INDEX(otail);
        const uint8_t *const chunk_last = (size_t)(last - p) < 2 * room ? last : p + 2 * room - 1;
        while (p <= chunk_last) {
            uint64_t w = spoor_le64(p); /* the header and (up to) four payload bytes */
            uint8_t h = (uint8_t)w;
            const struct itm_source_table *src = &itm_source_by_header;
            spoor_itm_type type = (spoor_itm_type)src->type[h];
            uint64_t off = (uint64_t)(uintptr_t)p + obase;
            if (type) { /* a source packet: its type, size and payload check by its header */
                if ((w & sw1_mask) == sw1_want && (!text || four_sw1_one_port(w))) {
                    /* entries 2 bytes apart: the offset is linear in the entry */
                    uint64_t e = other_entry(off, SPOOR_ITM_SW);
                    if (text && (text_a >> (h >> 3) & 1)) {
                        e = other_text_entry(off, 1);
                        ttail = text_put(tx, ttail, four_sw1_payload(w), 4);
                    }
                    op[0] = e;
                    op[1] = e + other_entry(2, 0);
                    op[2] = e + other_entry(4, 0);
                    op[3] = e + other_entry(6, 0);
                    op += 4;
                    count[SPOOR_ITM_SW] += 4;
                    p += 8;
                    continue;
                }
                uint32_t v = (uint32_t)(w >> 8);
                if (text && type == SPOOR_ITM_SW && (text_a >> (h >> 3) & 1)) {
                    unsigned n = source_payload_size(h);
                    *op++ = other_text_entry(off, n);
                    ttail = text_put(tx, ttail, v, n);
                    count[SPOOR_ITM_SW]++;
                    p += 1 + n;
                    continue;
                }
                /* source_payload_ok, branch-free by header */
                if (((v & src->check_and[h]) + src->check_add[h]) >> 31)
                    goto leave;
                *op++ = other_entry(off, type);
                d->stats.packets[type]++;
                p += src->bytes[h];
                continue;
            }
            unsigned k = itm_header_kind[h];
            uint32_t v = (uint32_t)(w >> 8), delta;
            unsigned size = local_timestamp_decode(k, h, v, &delta);
            if (size) {
                uint32_t now_tail = otail + (uint32_t)(op - op_start);
                if (now_tail - ofirst + STEP_PACKETS > SPOOR_ITM_HOLD)
                    fast_run_release(d, d->tail, &sealed, now_tail, &ofirst, ttail, time,
                                     &ts_before, first_ts_time);
                time += delta; /* dates and releases the held packets and itself */
                ofirst = now_tail;
                if (text)
                    d->text_sealed = ttail;
                if (count[SPOOR_ITM_TS_LOCAL]++ == ts_before)
                    first_ts_time = time;
                p += size;
                continue;
            }
            if (h == 0x94 && (v & 0x80808080u) == 0x00808080u) { /* GTS1, all four bytes */
                d->gts = (d->gts & ~(uint64_t)0x3FFFFFF) | gts1_bits4(v);
                *op++ = other_entry(off, SPOOR_ITM_TS_GLOBAL1);
                count[SPOOR_ITM_TS_GLOBAL1]++;
                p += 5;
                continue;
            }
            int n = (k == HDR_EXT || k == HDR_GTS1) && (h & 0x80) ? cont_payload_in_four(v) : -1;
            if (n < 0)
                goto leave; /* anything else: the general loop */
            d->other_tail = otail + (uint32_t)(op - op_start);
            cont_packet(d, k, h, p + 1, (unsigned)n, off); /* to the `other` ring, at op */
            op = op_start + (d->other_tail - otail);
            text_a = text && d->page < 8 ? d->text_ports[d->page] : 0;
            p += 1 + n;
        }
        otail = ring_spill(other, otail, (uint32_t)(op - op_start));
        op_start = op;
    }
leave:
    otail = ring_spill(other, otail, (uint32_t)(op - op_start));
    fast_run_release(d, d->tail, &sealed, otail, &ofirst, ttail, time, &ts_before, first_ts_time);
    return (size_t)(p - data);
}

/* ---- the stats loop ------------------------------------------------------------------------ */

/* A consumer of the counters only spends its time finding where each packet starts: in a loop
 * that looks at a header to step to the next one, each step waits for the byte it reads and
 * for what a table says of it, and a branch on the packet's kind is mispredicted whenever
 * the kinds do not repeat. The stats loop splits the work in two. First, for every byte of a
 * block, where the next packet would start if a header were there (packet_next: the same
 * operations on 32 bytes at a time, no branch; four 1-byte software packets in a row are one
 * step); then a walk from packet to packet that waits for one load per packet (j = next[j];
 * two walks at once, see stats_run) and adds each packet to packed counters, with no branch
 * on its kind. Local timestamps and GTS1 packets are noted in the walk and read after it,
 * eight at a time (stats_events).
 *
 * The loop takes the packets the counters need nothing else for: source packets with an
 * allowed payload, local timestamps, full GTS1 packets (what count_loop takes, but for the
 * extension and the short GTS1 forms); any other header stops the walk. It keeps no hold
 * queue: it runs only once something was released (so a release sets only time_last, to the
 * current time), and it applies its counts up to the last local timestamp it saw, which
 * releases every packet before it; the packets after it are uncounted again and left to
 * count_loop, which holds them as the general loop does. */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define STATS_LOOP 1
#else
#define STATS_LOOP 0
#endif

#if STATS_LOOP

enum {
    STATS_BLOCK = 480, /* bytes a block: a multiple of 32, at most 510 (8-bit lanes) */
    /* bytes the walk may go past its last timestamp: then it gives up (a stream without
     * timestamps is count_loop's: the walk would count it again there) */
    STATS_UNDATED = 1024,
    /* next[k] of a header the loop does not take: k + STATS_STOP, at least STATS_BLOCK, so
     * that the walk stops there */
    STATS_STOP = 0x8080,
    /* bytes left to count_loop after a stats loop that stopped within its first block (its
     * first pass costs a block's worth whatever it takes: where headers it does not take come
     * every few dozen bytes, say overflows, it would cost more than it saves) */
    STATS_BACKOFF = 16384,
};

/* Which header bytes the stats loop takes (payload rules aside), as the rows of a bit table
 * for a byte shuffle: bit (h >> 4) % 8 of entry (h & 15), in the first table for h < 0x80,
 * the second for the others; each 16 entries twice (one per half of a 32-byte register). */
#define STATS_TAKES(h) (HDR_KIND(h) >= HDR_SW1 || STATS_EVENT(h))
#define STATS_ROW(lo, hi0)                                                                         \
    (STATS_TAKES((hi0) << 4 | (lo)) | STATS_TAKES(((hi0) + 1) << 4 | (lo)) << 1 |                  \
     STATS_TAKES(((hi0) + 2) << 4 | (lo)) << 2 | STATS_TAKES(((hi0) + 3) << 4 | (lo)) << 3 |       \
     STATS_TAKES(((hi0) + 4) << 4 | (lo)) << 4 | STATS_TAKES(((hi0) + 5) << 4 | (lo)) << 5 |       \
     STATS_TAKES(((hi0) + 6) << 4 | (lo)) << 6 | STATS_TAKES(((hi0) + 7) << 4 | (lo)) << 7)
#define STATS_ROWS(hi0)                                                                            \
    STATS_ROW(0, hi0), STATS_ROW(1, hi0), STATS_ROW(2, hi0), STATS_ROW(3, hi0), STATS_ROW(4, hi0), \
        STATS_ROW(5, hi0), STATS_ROW(6, hi0), STATS_ROW(7, hi0), STATS_ROW(8, hi0),                \
        STATS_ROW(9, hi0), STATS_ROW(10, hi0), STATS_ROW(11, hi0), STATS_ROW(12, hi0),             \
        STATS_ROW(13, hi0), STATS_ROW(14, hi0), STATS_ROW(15, hi0)
#define STATS_TWICE(...)                                                                           \
    {                                                                                              \
        __VA_ARGS__, __VA_ARGS__                                                                   \
    }

static const uint8_t stats_rows_low[32] = STATS_TWICE(STATS_ROWS(0));
static const uint8_t stats_rows_high[32] = STATS_TWICE(STATS_ROWS(8));
static const uint8_t stats_bits[32] =
    STATS_TWICE(1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128);
/* by the low nibble: the size of a source packet (SS = h & 3: 1, 2 or 4 payload bytes), 1 for
 * the headers the loop takes with SS = 0 but the continuation ones (local timestamp format 2),
 * and 0xFF where a header of the loop with bit 7 set has continuation bytes (local timestamp
 * format 1: 0b11TT0000, GTS1: 0x94) */
static const uint8_t stats_fixed[32] = STATS_TWICE(HDR_TABLE_16(SOURCE_BYTES, 0));
static const uint8_t stats_cont[32] =
    STATS_TWICE(0xFF, 0, 0, 0, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

/* The packed 16-bit lane counts lo (lanes 0, 2, 4, 6) and hi (1, 3, 5, 7) added to lanes. */
static inline void lanes_flush(uint64_t lanes[8], uint64_t lo, uint64_t hi)
{
    for (int k = 0; k < 4; k++) {
        lanes[2 * k] += lo >> (16 * k) & 0xFFFF;
        lanes[2 * k + 1] += hi >> (16 * k) & 0xFFFF;
    }
}

static inline __attribute__((target("avx2"))) __m256i load32(const void *p)
{
    return _mm256_loadu_si256((const __m256i *)p);
}

/* next[k] for k in [0, n) (n a multiple of 32): k + the bytes of the packet whose header would
 * be p[k], when the stats loop takes it, else k + STATS_STOP; and where p[k] and the three
 * headers after it are 1-byte software packets, k + 8 and kind[k] = STATS_QUAD (kind[k] = p[k]
 * otherwise). Reads p[0, n + 6). */
static __attribute__((target("avx2"))) void
packet_next(const uint8_t *restrict p, uint16_t *restrict next, uint8_t *restrict kind, size_t n)
{
    const __m256i rows_low = load32(stats_rows_low), rows_high = load32(stats_rows_high);
    const __m256i bits = load32(stats_bits), fixed = load32(stats_fixed);
    const __m256i cont_nibble = load32(stats_cont), zero = _mm256_setzero_si256();
    const __m256i nibble = _mm256_set1_epi8(0x0F), two = _mm256_set1_epi8(2);
    const __m256i stop = _mm256_set1_epi8(-128), fn = _mm256_set1_epi8(0x30);
    const __m256i wide = _mm256_set1_epi16((short)0x80FF); /* -128 sign-extended: STATS_STOP */
    const __m256i gts1 = _mm256_set1_epi8((char)0x94), exc = _mm256_set1_epi8(0x0E);
    const __m256i sleep = _mm256_set1_epi8(0x15), step = _mm256_set1_epi16(32);
    const __m256i seven = _mm256_set1_epi8(7), one = _mm256_set1_epi8(1);
    const __m256i eight = _mm256_set1_epi8(8), quad = _mm256_set1_epi8(STATS_QUAD);
    __m256i at = _mm256_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m256i half = _mm256_set1_epi16(16);
    for (size_t k = 0; k < n; k += 32) {
        __m256i h = load32(p + k), b1 = load32(p + k + 1), b2 = load32(p + k + 2);
        __m256i b3 = load32(p + k + 3), b4 = load32(p + k + 4);
        /* the header's row and bit in the table of the headers the loop takes */
        __m256i lo = _mm256_and_si256(h, nibble);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(h, 4), nibble);
        __m256i row = _mm256_blendv_epi8(_mm256_shuffle_epi8(rows_low, lo),
                                         _mm256_shuffle_epi8(rows_high, lo), h);
        __m256i bit = _mm256_shuffle_epi8(bits, hi);
        __m256i takes = _mm256_cmpeq_epi8(_mm256_and_si256(row, bit), bit);
        /* continuation bits C of the four bytes after the header: the payload ends at the
         * first byte without */
        __m256i c1 = _mm256_cmpgt_epi8(zero, b1);
        __m256i c12 = _mm256_and_si256(c1, _mm256_cmpgt_epi8(zero, b2));
        __m256i c123 = _mm256_and_si256(c12, _mm256_cmpgt_epi8(zero, b3));
        __m256i c4 = _mm256_cmpgt_epi8(zero, b4);
        __m256i cont_size = _mm256_sub_epi8(_mm256_sub_epi8(_mm256_sub_epi8(two, c1), c12), c123);
        __m256i cont = _mm256_and_si256(_mm256_shuffle_epi8(cont_nibble, lo), h); /* sign bit */
        __m256i size = _mm256_blendv_epi8(_mm256_shuffle_epi8(fixed, lo), cont_size, cont);
        /* payloads the loop leaves to the others: a local timestamp or GTS1 whose four bytes
         * have C set, a GTS1 of fewer than four payload bytes, an exception trace with FN = 0,
         * an asleep PC sample with a payload other than 0 */
        __m256i bad = _mm256_and_si256(_mm256_cmpgt_epi8(zero, cont), _mm256_and_si256(c123, c4));
        bad = _mm256_or_si256(bad, _mm256_andnot_si256(c123, _mm256_cmpeq_epi8(h, gts1)));
        bad = _mm256_or_si256(bad,
                              _mm256_and_si256(_mm256_cmpeq_epi8(h, exc),
                                               _mm256_cmpeq_epi8(_mm256_and_si256(b2, fn), zero)));
        bad = _mm256_or_si256(
            bad, _mm256_andnot_si256(_mm256_cmpeq_epi8(b1, zero), _mm256_cmpeq_epi8(h, sleep)));
        size = _mm256_blendv_epi8(stop, size, _mm256_andnot_si256(bad, takes));
        /* four 1-byte software packets (0bAAAAA001 and a byte each) */
        __m256i b6 = load32(p + k + 6);
        __m256i four =
            _mm256_and_si256(_mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(h, seven), one),
                                              _mm256_cmpeq_epi8(_mm256_and_si256(b2, seven), one)),
                             _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(b4, seven), one),
                                              _mm256_cmpeq_epi8(_mm256_and_si256(b6, seven), one)));
        size = _mm256_blendv_epi8(size, eight, four);
        _mm256_storeu_si256((__m256i *)(kind + k), _mm256_blendv_epi8(h, quad, four));
        /* k + size, as 16-bit indices (a stop, -128, sign-extended to 0xFF80: STATS_STOP) */
        __m256i n0 = _mm256_and_si256(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(size)), wide);
        __m256i n1 =
            _mm256_and_si256(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(size, 1)), wide);
        _mm256_storeu_si256((__m256i *)(next + k), _mm256_add_epi16(n0, at));
        _mm256_storeu_si256((__m256i *)(next + k + 16),
                            _mm256_add_epi16(n1, _mm256_add_epi16(at, half)));
        at = _mm256_add_epi16(at, step);
    }
}

/* Zeroes the n bytes at p (n a multiple of 32, p 32-byte aligned). */
static inline __attribute__((target("avx2"))) void stats_clear(uint8_t *p, size_t n)
{
    for (size_t k = 0; k < n; k += 32)
        _mm256_store_si256((__m256i *)(p + k), _mm256_setzero_si256());
}

/* The local timestamps and GTS1 packets so far: the time, their counts, the last GTS1's
 * offset in data (SIZE_MAX: none), and the same of the GTS1 packets before the last local
 * timestamp (those a timestamp released). */
struct stats_events {
    uint64_t time, n_lts, n_gts, committed_gts;
    size_t last_gts, committed_gts_at;
};

/* Takes the events ev[0, n) of the walk over the block at data[b] (blk), in stream order:
 * eight at a time, each local timestamp's delta (local_timestamp_decode's, without branches:
 * the kinds vary from packet to packet) added to the time. Returns the index of the last
 * local timestamp, -1 when there is none. Reads ev[0, n + 8) and next[0, BLOCK + 2). */
static __attribute__((target("avx2"))) int stats_events(struct stats_events *restrict e,
                                                        const uint8_t *restrict blk, size_t b,
                                                        const uint16_t *restrict next,
                                                        const uint16_t *restrict ev, unsigned n)
{
    static const int32_t format1[8] = {0, 0, 0x7F, 0x3FFF, 0x1FFFFF, 0xFFFFFFF, 0, 0};
    const __m256i f1 = load32(format1), lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i byte = _mm256_set1_epi32(0xFF), half = _mm256_set1_epi32(0xFFFF);
    const __m256i seven = _mm256_set1_epi32(7), x80 = _mm256_set1_epi32(0x80);
    const __m256i gts1 = _mm256_set1_epi32(0x94);
    __m256i sum = _mm256_setzero_si256();            /* four 64-bit lanes */
    uint64_t gts[(STATS_BLOCK + 8 + 63) / 64] = {0}; /* bit k: ev[k] is a GTS1 */
    for (unsigned k = 0; k < n; k += 8) {
        __m256i ok = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - k)), lane);
        __m256i at =
            _mm256_and_si256(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(ev + k))), ok);
        __m256i h = _mm256_and_si256(_mm256_i32gather_epi32((const int *)blk, at, 1), byte);
        __m256i v = _mm256_i32gather_epi32((const int *)(blk + 1), at, 1);
        __m256i size = _mm256_sub_epi32(
            _mm256_and_si256(_mm256_i32gather_epi32((const int *)next, at, 2), half), at);
        /* format 1: 7 bits a payload byte, as many bytes as the packet has */
        __m256i bits = _mm256_or_si256(
            _mm256_or_si256(_mm256_and_si256(v, _mm256_set1_epi32(0x7F)),
                            _mm256_and_si256(_mm256_srli_epi32(v, 1), _mm256_set1_epi32(0x3F80))),
            _mm256_or_si256(
                _mm256_and_si256(_mm256_srli_epi32(v, 2), _mm256_set1_epi32(0x1FC000)),
                _mm256_and_si256(_mm256_srli_epi32(v, 3), _mm256_set1_epi32(0xFE00000))));
        bits = _mm256_and_si256(bits, _mm256_permutevar8x32_epi32(f1, size));
        /* format 2 (a header below 0x80): TS in the header bits [6:4] */
        __m256i two = _mm256_and_si256(_mm256_and_si256(_mm256_srli_epi32(h, 4), seven),
                                       _mm256_cmpgt_epi32(x80, h));
        __m256i g = _mm256_and_si256(_mm256_cmpeq_epi32(h, gts1), ok);
        __m256i delta = _mm256_and_si256(_mm256_andnot_si256(g, _mm256_or_si256(bits, two)), ok);
        sum = _mm256_add_epi64(
            sum, _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm256_castsi256_si128(delta)),
                                  _mm256_cvtepu32_epi64(_mm256_extracti128_si256(delta, 1))));
        gts[k / 64] |= (uint64_t)(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(g)) << (k % 64);
    }
    __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(sum), _mm256_extracti128_si256(sum, 1));
    e->time += (uint64_t)_mm_cvtsi128_si64(s2) + (uint64_t)_mm_extract_epi64(s2, 1);
    /* the last local timestamp (the events end in GTS1 packets seldom) */
    int last = (int)n - 1;
    while (last >= 0 && (gts[last / 64] >> (last % 64) & 1))
        last--;
    unsigned n_gts = 0, words = (n + 63) / 64;
    for (unsigned w = 0; w < words; w++)
        n_gts += (unsigned)__builtin_popcountll(gts[w]);
    e->n_lts += n - n_gts;
    /* the GTS1 packets, in order (fewer than the timestamps); a local timestamp releases the
     * ones before it, from earlier blocks too */
    if (last >= 0) {
        e->committed_gts = e->n_gts;
        e->committed_gts_at = e->last_gts;
    }
    for (unsigned w = 0; w < words; w++)
        for (uint64_t m = gts[w]; m; m &= m - 1) {
            int k = (int)(w * 64) + __builtin_ctzll(m);
            e->n_gts++;
            e->last_gts = b + ev[k];
            if (k < last) {
                e->committed_gts = e->n_gts;
                e->committed_gts_at = e->last_gts;
            }
        }
    return last;
}

/* One step of a walk: the packet at j (its header, or STATS_QUAD) counted, and an event
 * noted. */
#define STATS_STEP(j, acc, ev, ne)                                                                 \
    do {                                                                                           \
        uint8_t h_ = kind[j];                                                                      \
        acc += tab->lane_inc[h_];                                                                  \
        ev[ne] = (uint16_t)(j);                                                                    \
        ne += tab->event[h_];                                                                      \
    } while (0)

/* The stats loop from data[i] (the parser expects a header there, the fast-loop conditions
 * hold and something was released): applies what it counted up to its last local timestamp
 * and returns the index after that timestamp (i when it saw none). *stop is where it stopped:
 * a header it does not take (*special), or a stretch without timestamps, or the end of the
 * bytes it may read.
 *
 * The walk waits for one load a packet; two walks at once wait half as long. In each block the
 * first walk starts where the packets are, the second at the block's middle, where it may
 * well be inside a packet and see payload bytes as headers; but once one of its steps lands
 * where a packet starts, it follows the packets (a step depends on its position only). So the
 * first walk goes on past the middle until it lands where the second one stepped: from there
 * on, what the second one counted is right, and what it counted before is taken off (it keeps
 * its counts at each step). When the walks never meet, the first walks the rest itself. */
static __attribute__((target("avx2"))) size_t stats_run(spoor_itm_decoder *d,
                                                        const uint8_t *restrict data, size_t i,
                                                        size_t len, size_t *stop, bool *special)
{
    enum { MID = STATS_BLOCK / 2, SECOND = STATS_BLOCK - MID + 8 };
    uint16_t next[STATS_BLOCK + 2];
    uint8_t kind[STATS_BLOCK];
    uint16_t ev_a[STATS_BLOCK + 16], ev_b[SECOND];
    /* the second walk: seen[k] is 1 + its step at byte k (0: it did not step there), the
     * counts before each step, and where its pieces ended at a header the loop does not take
     * (the step there and the byte) */
    uint8_t seen[STATS_BLOCK + 32] __attribute__((aligned(32)));
    uint64_t acc_before[SECOND + 1];
    uint8_t piece_step[SECOND];
    uint16_t piece_stop[SECOND];
    _Static_assert(SECOND < 255, "the second walk's steps fit seen[]");
    const struct itm_stats_table *tab = &itm_stats_by_header;
    uint64_t lanes[8] = {0};
    uint64_t lo = 0, hi = 0; /* 16-bit lanes: the even 8-bit lanes in lo, the odd ones in hi */
    struct stats_events e = {d->time, 0, 0, 0, SIZE_MAX, SIZE_MAX};
    size_t commit = i;
    size_t b = i;
    unsigned j = 0, blocks = 0;
    *special = false;
    while (b + STATS_BLOCK + 8 <= len) {
        const uint8_t *blk = data + b;
        packet_next(blk, next, kind, STATS_BLOCK);
        stats_clear(seen, sizeof seen);
        uint64_t acc_a = 0, acc_b = 0;
        unsigned ja = j, jb = MID, ne_a = 0, ne_b = 0, step = 0, pieces = 0;
        for (;;) {
            while (ja < MID && jb < STATS_BLOCK) { /* both walks */
                unsigned na = next[ja], nb = next[jb];
                STATS_STEP(ja, acc_a, ev_a, ne_a);
                seen[jb] = (uint8_t)++step;
                acc_before[step] = acc_b;
                STATS_STEP(jb, acc_b, ev_b, ne_b);
                ja = na;
                jb = nb;
            }
            while (ja >= MID && jb < STATS_BLOCK) { /* the second walk to its end */
                unsigned nb = next[jb];
                seen[jb] = (uint8_t)++step;
                acc_before[step] = acc_b;
                STATS_STEP(jb, acc_b, ev_b, ne_b);
                jb = nb;
            }
            if (jb < STATS_STOP)
                break;
            /* the second walk came to a header the loop does not take: unless the first one
             * meets it before, it was inside a packet; it goes on from the next byte */
            jb -= STATS_STOP;
            piece_step[pieces] = seen[jb];
            piece_stop[pieces++] = (uint16_t)jb;
            jb++;
        }
        unsigned met = 0;
        while (ja < STATS_BLOCK) { /* the first walk until it meets the second */
            if ((met = seen[ja]) != 0)
                break;
            unsigned na = next[ja];
            STATS_STEP(ja, acc_a, ev_a, ne_a);
            ja = na;
        }
        unsigned ne = ne_a;
        if (met) { /* from the step `met` of the second walk on, to its end or its stop */
            unsigned meet = ja, from = 0, to = ne_b, k = 0;
            uint64_t acc_end = acc_b;
            while (k < pieces && piece_step[k] < met)
                k++;
            if (k < pieces) {
                acc_end = acc_before[piece_step[k]];
                jb = piece_stop[k] + STATS_STOP;
                for (to = 0; to < ne_b && ev_b[to] < piece_stop[k]; to++)
                    ;
            }
            while (from < to && ev_b[from] < meet)
                from++;
            acc_a += acc_end - acc_before[met];
            memcpy(ev_a + ne, ev_b + from, (to - from) * sizeof *ev_b);
            ne += to - from;
            ja = jb;
        } else if (ja >= STATS_STOP) { /* the first walk counted the header it stopped at */
            uint8_t h = blk[ja - STATS_STOP];
            acc_a -= tab->lane_inc[h];
            ne -= tab->event[h];
        }
        int last = stats_events(&e, blk, b, next, ev_a, ne);
        if (last >= 0)
            commit = b + next[ev_a[last]];
        lo += acc_a & 0x00FF00FF00FF00FFu;
        hi += acc_a >> 8 & 0x00FF00FF00FF00FFu;
        if (++blocks % 256 == 0) { /* before the 16-bit lanes can overflow */
            lanes_flush(lanes, lo, hi);
            lo = hi = 0;
        }
        j = ja;
        if (j >= STATS_STOP) { /* a header the loop does not take */
            j -= STATS_STOP;
            *special = true;
            break;
        }
        b += STATS_BLOCK;
        j -= STATS_BLOCK;
        if (b + j - commit > STATS_UNDATED)
            break;
    }
    *stop = b + j;
    if (e.n_lts == 0)
        return i;
    lanes_flush(lanes, lo, hi);
    /* the packets after the last timestamp are count_loop's: source and GTS1 packets */
    for (size_t at = commit; at < *stop;) {
        uint8_t h = data[at];
        if (itm_header_kind[h] == HDR_GTS1) {
            at += 5; /* GTS1: the header and 4 bytes */
            continue;
        }
        lanes[itm_source_by_header.type[h] - SPOOR_ITM_SW]--;
        at += itm_source_by_header.bytes[h];
    }
    for (int k = 0; k < 8; k++)
        d->stats.packets[SPOOR_ITM_SW + k] += lanes[k];
    d->stats.packets[SPOOR_ITM_TS_LOCAL] += e.n_lts;
    d->stats.packets[SPOOR_ITM_TS_GLOBAL1] += e.committed_gts;
    if (e.committed_gts_at != SIZE_MAX)
        d->gts =
            (d->gts & ~(uint64_t)0x3FFFFFF) | gts1_bits4(spoor_le32(data + e.committed_gts_at + 1));
    /* the first timestamp released the held packets (released_any is set: the loop's
     * condition), the last one dates the run's end */
    end_fast_run(d, true, e.time, e.time, d->other_tail, d->other_tail);
    return commit;
}

#endif

/* The counters only: the stats loop while it can take the stream, count_loop for what it
 * leaves (the packets after its last timestamp, the header it stopped at, and the streams
 * it does not take), the general loop for what neither takes. */
static __attribute__((noinline)) size_t
fast_count(spoor_itm_decoder *d, const uint8_t *restrict data, size_t i, size_t len, uint64_t base)
{
#if STATS_LOOP
    while (d->stats.released_any && d->tail == d->sealed && i + STATS_BLOCK + 8 <= len &&
           base + i >= d->stats_after && __builtin_cpu_supports("avx2")) {
        size_t stop;
        bool special;
        size_t c = stats_run(d, data, i, len, &stop, &special);
        /* back off where it stopped soon, or committed nothing (no local timestamp in the
         * stretch: count_loop would count the same bytes again) */
        if (stop - i < STATS_BLOCK || c == i)
            d->stats_after = base + stop + STATS_BACKOFF;
        if (!special) {
            i = c;
            break;
        }
        size_t e = count_loop(d, data, c, stop + 8 <= len ? stop + 8 : len, base, false);
        if (e <= stop)
            return e;
        i = e;
    }
#endif
    return count_loop(d, data, i, len, base, false);
}

static __attribute__((noinline)) size_t
fast_text(spoor_itm_decoder *d, const uint8_t *restrict data, size_t i, size_t len, uint64_t base)
{
    return count_loop(d, data, i, len, base, true);
}

static size_t fast_run(spoor_itm_decoder *d, const uint8_t *restrict data, size_t i, size_t len,
                       uint64_t base)
{
    if (d->page_unknown) /* software packets to mark: the general loop (nothing in a fast loop
                          * makes the page unknown) */
        return i;
    switch (d->selected) {
    case SPOOR_ITM_ALL_TYPES: return fast_all(d, data, i, len, base);
    case 0:
        return d->text_mode ? fast_text(d, data, i, len, base) : fast_count(d, data, i, len, base);
    case 1u << SPOOR_ITM_SW: return fast_sw(d, data, i, len, base);
    default: return i; /* other selections: the general loop only */
    }
}

/* ---- the general loop ---------------------------------------------------------------------- */

/* Eight bytes at p as a native-order word (a test for zero needs no byte order). */
static inline uint64_t native64(const uint8_t *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

/* The index of the first non-zero byte of data[i, len), len when there is none: a run of zero
 * bytes (an idle SWO line, a sparse capture, a long sync) is skipped 64 bytes a step. */
static size_t zero_run_end(const uint8_t *data, size_t i, size_t len)
{
    for (; i + 64 <= len; i += 64) {
        const uint8_t *p = data + i;
        if ((native64(p) | native64(p + 8) | native64(p + 16) | native64(p + 24) |
             native64(p + 32) | native64(p + 40) | native64(p + 48) | native64(p + 56)) != 0)
            break;
    }
    while (i < len && data[i] == 0)
        i++;
    return i;
}

/* How many of the (up to four) bytes before data[i] are zero, counting back from it; the
 * bytes of earlier feeds come from d->hist. */
static uint8_t zeros_before(const spoor_itm_decoder *d, const uint8_t *data, size_t i)
{
    uint8_t z = 0;
    for (size_t m = 1; m <= 4; m++) {
        uint8_t prev = m <= i ? data[i - m] : (uint8_t)(d->hist >> (8 * (m - i - 1)));
        if (prev != 0)
            break;
        z++;
    }
    return z;
}

/* A header at data[i] (state ST_HEADER): a packet that lies whole in the buffer is decoded at
 * once, any other starts the state of its payload. Returns the index after what it consumed. */
static size_t header_step(spoor_itm_decoder *d, const uint8_t *data, size_t i, size_t len,
                          uint64_t base)
{
    uint8_t b = data[i];
    uint64_t off = base + i;
    unsigned k = itm_header_kind[b];
    if (k >= HDR_SW1) {
        unsigned n = source_payload_size(b);
        if (i + 1 + n <= len) { /* a whole source packet in the buffer */
            uint32_t v = i + 5 <= len ? source_payload_value(spoor_le32(data + i + 1), n)
                                      : (uint32_t)spoor_le_bytes(data + i + 1, n);
            source_packet(d, k, b, v, n, off);
            return i + 1 + n;
        }
    } else if (k == HDR_EXT && !(b & 0x80)) { /* a bare extension (C = 0), e.g. 0x08 */
        cont_packet(d, k, b, data + i + 1, 0, off);
        return i + 1;
    } else if (hdr_is_cont(k)) { /* a continuation payload, when it is in the buffer */
        unsigned max = cont_payload_max(k), m = 0;
        while (m < max && i + 1 + m < len && (data[i + 1 + m] & 0x80))
            m++;
        if (m < max && i + 1 + m < len) {
            cont_packet(d, k, b, data + i + 1, m + 1, off);
            return i + 2 + m;
        }
        if (m == max) {
            lose(d, off, off + max, SPOOR_ITM_ERR_BAD_PAYLOAD);
            return i + 1 + max;
        }
    } else if (k == HDR_SYNC) {
        /* Headers are never zero, so the zero bytes just before this one are the end of the
         * previous packet's payload: a sync may have started there. */
        d->last_trailing_zeros = zeros_before(d, data, i);
    }
    start_packet(d, k, b, off);
    return i + 1;
}

/* A payload byte b at stream position off of the packet being parsed (ST_FIXED, ST_CONT). */
static void payload_step(spoor_itm_decoder *d, uint8_t b, uint64_t off)
{
    d->buf[d->got++] = b;
    if (d->state == ST_FIXED) {
        if (d->got == d->need) {
            d->state = ST_HEADER;
            source_packet(d, itm_header_kind[d->header], d->header,
                          (uint32_t)spoor_le_bytes(d->buf, d->got), d->got, d->pkt_start);
        }
    } else if (!(b & 0x80)) {
        d->state = ST_HEADER;
        cont_packet(d, itm_header_kind[d->header], d->header, d->buf, d->got, d->pkt_start);
    } else if (d->got == cont_payload_max(itm_header_kind[d->header])) {
        lose(d, d->pkt_start, off, SPOOR_ITM_ERR_BAD_PAYLOAD);
    }
}

/* After a 0x00 header (ST_SYNC): the rest of the zero run at once, then the byte that ends it,
 * 0x80 for a sync. Returns the index after what it consumed. */
static size_t sync_step(spoor_itm_decoder *d, const uint8_t *data, size_t i, size_t len,
                        uint64_t base)
{
    size_t j = zero_run_end(data, i, len);
    d->zeros += j - i;
    if (j == len)
        return len;
    if (data[j] == 0x80)
        sync_end(d, base + j);
    else
        lose(d, d->pkt_start, base + j, SPOOR_ITM_ERR_BAD_SYNC);
    return j + 1;
}

/* After an error (ST_LOST): skips to the next 0x80 preceded by enough zero bytes for a sync
 * (d->zeros counts the zero bytes just before data[i]), zero runs at once; reports the bytes
 * lost and the sync when it is found. Returns the index after what it consumed. */
static size_t lost_step(spoor_itm_decoder *d, const uint8_t *data, size_t i, size_t len,
                        uint64_t base)
{
    size_t j = i;
    uint64_t z = d->zeros;
    while (j < len) {
        if (data[j] == 0x00) {
            size_t run_end = zero_run_end(data, j, len);
            z += run_end - j;
            j = run_end;
        } else if (data[j] == 0x80 && z >= SYNC_MIN_ZEROS) {
            break;
        } else {
            z = 0;
            j++;
        }
    }
    d->zeros = z;
    if (j == len)
        return len;
    uint64_t end = base + j; /* the 0x80 */
    if (end - z > d->lost_from)
        push_error(d, d->lost_from, end - z, d->lost_detected, d->lost_why);
    sync_packet(d, end, z);
    return j + 1;
}

/* The last four bytes of data[0, i) go to d->hist (zeros_before reads them in the next feed). */
static void keep_history(spoor_itm_decoder *d, const uint8_t *data, size_t i)
{
    for (size_t k = i > 4 ? i - 4 : 0; k < i; k++)
        d->hist = d->hist << 8 | data[k];
}

size_t spoor_itm_feed(spoor_itm_decoder *d, const uint8_t *data, size_t len)
{
    size_t i = 0;
    const uint64_t base = d->pos;
    while (i < len) {
        if (d->state == ST_HEADER) {
            i = fast_run(d, data, i, len, base);
            if (i >= len)
                break;
        }
        if (held(d) + STEP_PACKETS > SPOOR_ITM_HOLD) {
            /* The hold queue is full: release the oldest with the time known so far. */
            release_oldest(d);
            continue;
        }
        if (rings_full(d))
            break; /* the caller takes released packets or text first */
        switch (d->state) {
        case ST_HEADER: i = header_step(d, data, i, len, base); break;
        case ST_FIXED:
        case ST_CONT:
            payload_step(d, data[i], base + i);
            i++;
            break;
        case ST_SYNC: i = sync_step(d, data, i, len, base); break;
        case ST_LOST:
        default: i = lost_step(d, data, i, len, base); break;
        }
    }
    keep_history(d, data, i);
    d->pos = base + i;
    d->stats.bytes += i;
    return i;
}

void spoor_itm_flush(spoor_itm_decoder *d)
{
    seal_all(d, false);
}

void spoor_itm_finish(spoor_itm_decoder *d)
{
    uint64_t end = d->pos;
    switch (d->state) {
    case ST_FIXED:
    case ST_CONT:
    case ST_SYNC:
        seal_all(d, false);
        push_error(d, d->pkt_start, end, end, SPOOR_ITM_ERR_TRUNCATED);
        break;
    case ST_LOST:
        if (end > d->lost_from)
            push_error(d, d->lost_from, end, d->lost_detected, d->lost_why);
        break;
    default: break;
    }
    seal_all(d, false);
    parser_restart(d);
    d->page_unknown = true; /* what comes next follows a gap (see sync_packet) */
}
