/* ITM/DWT packet decoder (see include/spoor/itm.h). Packet names in comments are the section titles
 * of the ARMv7-M ARM appendix D4 "Debug ITM and DWT Packet Protocol"; the ARMv8-M ARM keeps the
 * same encodings in its chapter "ITM and DWT Packet Protocol". */
#include <string.h>

#include "spoor/itm.h"

enum {
    ST_HEADER, /* expecting a packet header */
    ST_FIXED,  /* collecting the fixed-size payload of a software or hardware source packet */
    ST_CONT,   /* collecting a payload whose bytes carry a continuation bit C (bit 7) */
    ST_SYNC,   /* after a 0x00 header: counting zero bytes until 0x80 */
    ST_LOST,   /* after an error: skipping bytes until a synchronization packet */
};

/* What a header byte announces. */
enum header_class {
    H_RESERVED,
    H_SYNC,     /* 0x00 */
    H_OVERFLOW, /* 0x70 */
    H_LTS2,     /* 0b0TTT0000, TTT not 000 or 111 */
    H_LTS1,     /* 0b11TT0000 */
    H_GTS1,     /* 0x94 */
    H_GTS2,     /* 0xB4 */
    H_EXT,      /* 0bCEEES100 with S the source bit, i.e. (h & 0x0B) == 0x08 */
    H_SW,       /* 0bAAAAA0SS, SS != 00 */
    H_HW,       /* 0bDDDDD1SS, SS != 00, with a defined discriminator and size */
};

/* Largest payload of the continuation-bit packets. */
static uint8_t cont_max(uint8_t h)
{
    return h == 0xB4 ? 6 : 4; /* GTS2 has a 64-bit form of six bytes (ARMv8-M) */
}

static const uint8_t source_size[4] = {0, 1, 2, 4};
static const uint32_t value_mask[5] = {0, 0xFF, 0xFFFF, 0, 0xFFFFFFFF};

/* D4 'Hardware source packets': which hardware source headers are defined, with the only sizes
 * allowed. */
static bool hw_header_valid(uint8_t h)
{
    unsigned disc = h >> 3, size = source_size[h & 3];
    switch (disc) {
    case 0: return size == 1;              /* event counter, 0x05 */
    case 1: return size == 2;              /* exception trace, 0x0E */
    case 2: return size == 4 || size == 1; /* PC sample 0x17, sleep 0x15 */
    default: break;
    }
    if (disc >= 8 && disc < 16) /* 0b01NNx: data trace PC value (x=0) or address (x=1) */
        return (disc & 1) ? size == 2 : size == 4;
    if (disc >= 16 && disc < 24) /* 0b10NNW: data trace data value, any size */
        return true;
    return false;
}

static enum header_class classify(uint8_t h)
{
    if (h == 0x00)
        return H_SYNC;
    if (h == 0x70)
        return H_OVERFLOW;
    if ((h & 0x0F) == 0x00) {
        if ((h & 0x80) == 0)
            return H_LTS2; /* 0x10..0x60 */
        if ((h & 0xC0) == 0xC0)
            return H_LTS1;
        return H_RESERVED; /* 0x80, 0x90, 0xA0, 0xB0 */
    }
    if (h == 0x94)
        return H_GTS1;
    if (h == 0xB4)
        return H_GTS2;
    if ((h & 0x0B) == 0x08)
        return H_EXT;
    if ((h & 3) == 0)
        return H_RESERVED; /* 0bxxxx0100 other than the global timestamps */
    if ((h & 4) == 0)
        return H_SW;
    return hw_header_valid(h) ? H_HW : H_RESERVED;
}

/* A table built once per decoder keeps the hot loop to one lookup per header:
 * class in the high nibble, fixed payload size in the low nibble. */
static uint8_t header_table[256];
static bool header_table_ready;

/* What a header is to the fast loops for selected types (fast_count, fast_sw). */
enum lean_kind {
    L_SLOW, /* left to the general loop */
    L_LTS1, /* local timestamp format 1 */
    L_LTS2, /* local timestamp format 2 */
    L_SW1,  /* software source, 1, 2, 4 payload bytes; this and all below are source packets */
    L_SW2,
    L_SW4,
    L_PC,    /* data trace PC value 0b01NN0111 */
    L_ADDR,  /* data trace address offset 0b01NN1110 */
    L_DATA1, /* data trace data value 0b10NNWxSS */
    L_DATA2,
    L_DATA4,
    L_EXC,   /* exception trace 0x0E */
    L_PCS,   /* PC sample 0x17 */
    L_SLEEP, /* PC sample while asleep 0x15 */
    L_EVC,   /* event counter 0x05 */
};
static uint8_t lean_table[256];
/* The packet type of a source packet kind. */
static const uint8_t lean_type[] = {
    [L_SW1] = SPOOR_ITM_SW,          [L_SW2] = SPOOR_ITM_SW,
    [L_SW4] = SPOOR_ITM_SW,          [L_PC] = SPOOR_ITM_DWT_PC,
    [L_ADDR] = SPOOR_ITM_DWT_ADDR,   [L_DATA1] = SPOOR_ITM_DWT_DATA,
    [L_DATA2] = SPOOR_ITM_DWT_DATA,  [L_DATA4] = SPOOR_ITM_DWT_DATA,
    [L_EXC] = SPOOR_ITM_EXCEPTION,   [L_PCS] = SPOOR_ITM_PC_SAMPLE,
    [L_SLEEP] = SPOOR_ITM_PC_SAMPLE, [L_EVC] = SPOOR_ITM_EVENT_COUNTER,
};

static uint8_t lean_entry(uint8_t h, enum header_class c)
{
    unsigned n = source_size[h & 3], a = h >> 3;
    if (c == H_SW)
        return n == 1 ? L_SW1 : n == 2 ? L_SW2 : L_SW4;
    if (c == H_LTS1)
        return L_LTS1;
    if (c == H_LTS2)
        return L_LTS2;
    if (c != H_HW)
        return L_SLOW;
    if (a == 0)
        return L_EVC;
    if (a == 1)
        return L_EXC;
    if (a == 2)
        return n == 1 ? L_SLEEP : L_PCS;
    if (a < 16)
        return (a & 1) ? L_ADDR : L_PC;
    return n == 1 ? L_DATA1 : n == 2 ? L_DATA2 : L_DATA4;
}

static void build_header_table(void)
{
    if (header_table_ready)
        return;
    for (unsigned h = 0; h < 256; h++) {
        enum header_class c = classify((uint8_t)h);
        uint8_t n = (c == H_SW || c == H_HW) ? source_size[h & 3] : 0;
        header_table[h] = (uint8_t)(c << 4 | n);
        lean_table[h] = lean_entry((uint8_t)h, c);
    }
    header_table_ready = true;
}

const char *spoor_itm_type_name(spoor_itm_type type)
{
    static const char *const names[SPOOR_ITM_TYPE_COUNT] = {
        "sync",          "overflow",  "ts_local",  "ts_global1", "ts_global2", "ext",      "sw",
        "event_counter", "exception", "pc_sample", "dwt_pc",     "dwt_addr",   "dwt_data", "error",
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

void spoor_itm_init(spoor_itm_decoder *d, bool require_sync)
{
    build_header_table();
    memset(d, 0, sizeof *d);
    d->selected = SPOOR_ITM_ALL_TYPES;
    d->hist = 0xFFFFFFFFu;
    d->state = ST_HEADER;
    if (require_sync) {
        d->state = ST_LOST;
        d->lost_from = 0;
        d->lost_detected = 0;
        d->lost_why = SPOOR_ITM_ERR_NO_SYNC;
    }
}

/* ---- hold queue ---------------------------------------------------------------------------- */

/* Packets of the selected types wait in q (full packets), the others in `other` (offset and
 * type only: they are counted when decoded and forgotten when released). Together they are
 * the hold queue of the protocol rules: offsets grow with the push order in both rings, so
 * the oldest and the newest held packet are found by comparing the two rings' ends. */

#define HOLD_INDEX(i) ((i) % SPOOR_ITM_HOLD)

_Static_assert((SPOOR_ITM_HOLD & (SPOOR_ITM_HOLD - 1)) == 0, "ring indices wrap at 2^32");
_Static_assert(SPOOR_ITM_TYPE_COUNT <= 16, "a type fits the low byte of an `other` entry");

void spoor_itm_select(spoor_itm_decoder *d, uint32_t types)
{
    d->selected = types & SPOOR_ITM_ALL_TYPES;
}

/* Packets in the queue: released but not yet taken, and held. */
static inline uint32_t queued(const spoor_itm_decoder *d)
{
    return (d->tail - d->head) + (d->other_tail - d->other_first);
}

static inline uint32_t held(const spoor_itm_decoder *d)
{
    return (d->tail - d->sealed) + (d->other_tail - d->other_first);
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
        d->other[HOLD_INDEX(d->other_tail)] = offset << 8 | type;
        d->other_tail++;
        return &d->discard;
    }
    spoor_itm_packet *p = &d->q[HOLD_INDEX(d->tail)];
    d->tail++;
    p->type = type;
    p->offset = offset;
    p->size = size;
    p->time_exact = true; /* until released without a timestamp; time is set on release */
    return p;
}

/* Releases every held packet; `exact` says the current time is the one they relate to. */
static inline void seal_all(spoor_itm_decoder *d, bool exact)
{
    if (held(d) == 0)
        return;
    for (uint32_t i = d->sealed; i != d->tail; i++) {
        spoor_itm_packet *p = &d->q[HOLD_INDEX(i)];
        p->time = d->time;
        p->time_exact = exact;
    }
    d->sealed = d->tail;
    d->other_first = d->other_tail;
    note_release(d);
}

/* Queues a packet that needs no timestamp and releases everything before it. */
static inline spoor_itm_packet *push_sealed(spoor_itm_decoder *d, spoor_itm_type type,
                                            uint64_t offset, uint8_t size)
{
    seal_all(d, false);
    spoor_itm_packet *p = push(d, type, offset, size);
    seal_all(d, false);
    return p;
}

/* The hold queue is full: releases its oldest packet with the time known so far. */
static void release_oldest(spoor_itm_decoder *d)
{
    bool in_q = d->sealed != d->tail;
    if (in_q && d->other_first != d->other_tail)
        in_q = d->q[HOLD_INDEX(d->sealed)].offset < d->other[HOLD_INDEX(d->other_first)] >> 8;
    if (in_q) {
        spoor_itm_packet *p = &d->q[HOLD_INDEX(d->sealed)];
        p->time = d->time;
        p->time_exact = false;
        d->sealed++;
    } else {
        d->other_first++;
    }
    note_release(d);
}

/* Drops the newest held packet (there is one); returns its offset. */
static uint64_t drop_newest(spoor_itm_decoder *d)
{
    bool in_q = d->sealed != d->tail;
    uint64_t other = 0;
    if (d->other_first != d->other_tail) {
        other = d->other[HOLD_INDEX(d->other_tail - 1)];
        if (in_q)
            in_q = d->q[HOLD_INDEX(d->tail - 1)].offset > other >> 8;
    }
    if (in_q) {
        const spoor_itm_packet *last = &d->q[HOLD_INDEX(d->tail - 1)];
        d->stats.packets[last->type]--;
        d->tail--;
        return last->offset;
    }
    d->stats.packets[other & 0xFF]--;
    d->other_tail--;
    return other >> 8;
}

/* Drops every held packet; returns the smaller of `from` and the first one's offset. */
static uint64_t drop_held(spoor_itm_decoder *d, uint64_t from)
{
    if (d->sealed != d->tail) {
        uint64_t first = d->q[HOLD_INDEX(d->sealed)].offset;
        if (first < from)
            from = first;
        for (uint32_t i = d->sealed; i != d->tail; i++)
            d->stats.packets[d->q[HOLD_INDEX(i)].type]--;
        d->tail = d->sealed;
    }
    if (d->other_first != d->other_tail) {
        uint64_t first = d->other[HOLD_INDEX(d->other_first)] >> 8;
        if (first < from)
            from = first;
        for (uint32_t i = d->other_first; i != d->other_tail; i++)
            d->stats.packets[d->other[HOLD_INDEX(i)] & 0xFF]--;
        d->other_tail = d->other_first;
    }
    return from;
}

size_t spoor_itm_skip(spoor_itm_decoder *d, uint64_t *first_time, uint64_t *last_time)
{
    size_t n = d->sealed - d->head;
    if (n) {
        *first_time = d->q[HOLD_INDEX(d->head)].time;
        *last_time = d->q[HOLD_INDEX(d->sealed - 1)].time;
        d->head = d->sealed;
    }
    return n;
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
    spoor_itm_packet *p = push_sealed(d, SPOOR_ITM_ERROR, from, 0);
    p->u.error.bytes_lost = end - from;
    d->stats.bytes_lost += end - from;
    p->u.error.why = why;
    p->u.error.detected_at = detected;
}

/* ---- packets ------------------------------------------------------------------------------- */

/* Little-endian payload bytes as a number. */
static inline uint32_t payload_value(const uint8_t *p, unsigned n)
{
    uint32_t v = p[0];
    if (n > 1)
        v |= (uint32_t)p[1] << 8;
    if (n > 2)
        v |= (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return v;
}

/* A complete hardware source packet (D4 'Hardware source packets'): header h, n payload bytes of
 * value v. */
static void hw_packet(spoor_itm_decoder *d, uint8_t h, uint32_t v, unsigned n, uint64_t off)
{
    uint8_t size = (uint8_t)(n + 1);
    unsigned a = h >> 3;
    if (a == 0) { /* D4 'Event counter packet': one bit per wrapped 8-bit DWT counter */
        spoor_itm_packet *q = push(d, SPOOR_ITM_EVENT_COUNTER, off, size);
        q->u.event_counter.bits = (uint8_t)(v & 0x3F);
    } else if (a == 1) { /* D4 'Exception trace packet': number [8:0], FN [13:12] */
        unsigned fn = (v >> 12) & 3;
        if (fn == 0) {
            lose(d, off, off + 2, SPOOR_ITM_ERR_BAD_PAYLOAD);
            return;
        }
        spoor_itm_packet *q = push(d, SPOOR_ITM_EXCEPTION, off, size);
        q->u.exception.number = (uint16_t)(v & 0x1FF);
        q->u.exception.action = (spoor_itm_exception_action)fn;
    } else if (a == 2) { /* D4 'Periodic PC sample packets': a PC, or 0x00 when asleep */
        if (n == 1 && v != 0) {
            lose(d, off, off + 1, SPOOR_ITM_ERR_BAD_PAYLOAD);
            return;
        }
        spoor_itm_packet *q = push(d, SPOOR_ITM_PC_SAMPLE, off, size);
        q->u.pc_sample.sleep = n == 1;
        q->u.pc_sample.pc = n == 1 ? 0 : v;
    } else if (a < 16) { /* D4 'Data trace packets', 0b01NNx: PC (x=0) or address (x=1) */
        uint8_t cmp = (uint8_t)((a >> 1) & 3);
        if (a & 1) {
            spoor_itm_packet *q = push(d, SPOOR_ITM_DWT_ADDR, off, size);
            q->u.dwt_addr.comparator = cmp;
            q->u.dwt_addr.offset = (uint16_t)v;
        } else {
            spoor_itm_packet *q = push(d, SPOOR_ITM_DWT_PC, off, size);
            q->u.dwt_pc.comparator = cmp;
            q->u.dwt_pc.pc = v;
        }
    } else { /* D4 'Data trace packets', data value 0b10NNW: W = 1 for a write */
        spoor_itm_packet *q = push(d, SPOOR_ITM_DWT_DATA, off, size);
        q->u.dwt_data.comparator = (uint8_t)((a >> 1) & 3);
        q->u.dwt_data.write = a & 1;
        q->u.dwt_data.size = (uint8_t)n;
        q->u.dwt_data.value = v;
    }
}

/* D4 'Instrumentation packet': A = port within the current page. */
static inline void sw_packet(spoor_itm_decoder *d, uint8_t h, uint32_t v, unsigned n, uint64_t off)
{
    spoor_itm_packet *q = push(d, SPOOR_ITM_SW, off, (uint8_t)(n + 1));
    q->u.sw.port = (uint16_t)(d->page * 32u + (h >> 3));
    q->u.sw.size = (uint8_t)n;
    q->u.sw.value = v;
}

static inline void source_packet(spoor_itm_decoder *d, uint8_t h, uint32_t v, unsigned n,
                                 uint64_t off)
{
    if (h & 4)
        hw_packet(d, h, v, n, off);
    else
        sw_packet(d, h, v, n, off);
}

/* D4 'Local timestamp packets': the delta dates the packets held since the previous
 * one. */
static void local_timestamp(spoor_itm_decoder *d, uint32_t delta, uint8_t tc, uint64_t off,
                            uint8_t size)
{
    d->time += delta;
    seal_all(d, true);
    spoor_itm_packet *q = push(d, SPOOR_ITM_TS_LOCAL, off, size);
    q->u.ts_local.delta = delta;
    q->u.ts_local.tc = tc;
    seal_all(d, true);
}

/* A complete continuation-bit packet: LTS1 (D4 'Local timestamp packets'), GTS1/GTS2 (D4 'Global
 * timestamp packets'), extension (D4 'Extension packet'). */
static void cont_packet(spoor_itm_decoder *d, uint8_t h, const uint8_t *p, unsigned n, uint64_t off)
{
    uint8_t size = (uint8_t)(n + 1);
    if ((h & 0xC0) == 0xC0 && (h & 0x0F) == 0) { /* LTS1: 7 bits per byte, TC in [5:4] */
        uint32_t ts = 0;
        for (unsigned i = 0; i < n; i++)
            ts |= (uint32_t)(p[i] & 0x7F) << (7 * i);
        local_timestamp(d, ts, (h >> 4) & 3, off, size);
    } else if (h == 0x94) {
        /* GTS1: TS[6:0], TS[13:7], TS[20:14] with C bits, then TS[25:21] in bits [4:0]
         * of a fourth byte whose bit 5 is ClkCh and bit 6 Wrap. Shorter packets only
         * replace the low-order bits they carry. */
        uint64_t bits = 0, mask = 0;
        bool wrap = false, clkch = false;
        for (unsigned i = 0; i < n && i < 3; i++) {
            bits |= (uint64_t)(p[i] & 0x7F) << (7 * i);
            mask |= (uint64_t)0x7F << (7 * i);
        }
        if (n == 4) {
            bits |= (uint64_t)(p[3] & 0x1F) << 21;
            mask |= (uint64_t)0x1F << 21;
            clkch = (p[3] >> 5) & 1;
            wrap = (p[3] >> 6) & 1;
        }
        d->gts = (d->gts & ~mask) | bits;
        spoor_itm_packet *q = push(d, SPOOR_ITM_TS_GLOBAL1, off, size);
        q->u.ts_global1.value = d->gts;
        q->u.ts_global1.wrap = wrap;
        q->u.ts_global1.clkch = clkch;
    } else if (h == 0xB4) {
        /* GTS2: the high-order bits from bit 26: 7 bits per byte; the last byte of the
         * 48-bit form (4 bytes) holds TS[47], of the 64-bit form (6 bytes) TS[63:61]. */
        if (n != 4 && n != 6) {
            lose(d, off, off + size, SPOOR_ITM_ERR_BAD_PAYLOAD);
            return;
        }
        uint64_t hi = 0;
        for (unsigned i = 0; i < n - 1; i++)
            hi |= (uint64_t)(p[i] & 0x7F) << (7 * i);
        hi |= (uint64_t)(p[n - 1] & (n == 4 ? 0x01 : 0x07)) << (7 * (n - 1));
        d->gts = (d->gts & ((1ull << 26) - 1)) | hi << 26;
        d->gts_wide = n == 6;
        spoor_itm_packet *q = push(d, SPOOR_ITM_TS_GLOBAL2, off, size);
        q->u.ts_global2.value = d->gts;
        q->u.ts_global2.wide = n == 6;
    } else { /* extension: EX[2:0] in header bits [6:4], then 7 bits per byte, 8 in the 4th */
        uint32_t ex = (h >> 4) & 7;
        for (unsigned i = 0; i < n; i++)
            ex |= (uint32_t)(p[i] & (i == 3 ? 0xFF : 0x7F)) << (3 + 7 * i);
        bool hw = (h >> 2) & 1;
        if (!hw)
            d->page = (uint8_t)(ex > 255 ? 255 : ex);
        spoor_itm_packet *q = push(d, SPOOR_ITM_EXTENSION, off, size);
        q->u.ext.page = ex;
        q->u.ext.hw = hw;
    }
}

/* A synchronization packet ended at `end` (the 0x80 byte) after `zeros` zero bytes. */
static void sync_packet(spoor_itm_decoder *d, uint64_t end, uint32_t zeros)
{
    uint64_t start = end - zeros;
    spoor_itm_packet *q = push_sealed(d, SPOOR_ITM_SYNC, start, zeros + 1 > 255 ? 255 : zeros + 1);
    (void)q;
    d->last_trailing_zeros = 0;
    d->state = ST_HEADER;
}

/* The 0x80 of a sync arrived in ST_SYNC; pkt_start is the first 0x00 after the last packet. */
static void sync_end(spoor_itm_decoder *d, uint64_t at)
{
    uint32_t total = d->zeros + d->last_trailing_zeros;
    if (d->zeros >= 5) {
        sync_packet(d, at, d->zeros);
        return;
    }
    if (total < 5) {
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

/* ---- the byte loop ------------------------------------------------------------------------- */

/* Starts the packet whose header is h at stream position off (slow path). */
static void start_packet(spoor_itm_decoder *d, uint8_t h, uint64_t off)
{
    uint8_t t = header_table[h];
    d->header = h;
    d->pkt_start = off;
    d->got = 0;
    switch (t >> 4) {
    case H_SYNC:
        d->state = ST_SYNC;
        d->zeros = 1;
        break;
    case H_OVERFLOW:
        push(d, SPOOR_ITM_OVERFLOW, off, 1); /* D4 'Overflow packet' */
        break;
    case H_LTS2: /* D4 'Local timestamp packets' format 2: TS[2:0] in header bits [6:4], TC = 0 */
        local_timestamp(d, (h >> 4) & 7, 0, off, 1);
        break;
    case H_LTS1:
    case H_GTS1:
    case H_GTS2:
    case H_EXT:
        d->state = ST_CONT; /* their headers all have C = 1 (a bare extension is
                               handled by the caller) */
        break;
    case H_SW:
    case H_HW:
        d->state = ST_FIXED;
        d->need = t & 0x0F;
        break;
    default: lose(d, off, off, SPOOR_ITM_ERR_RESERVED_HEADER); break;
    }
}

/* The hot loop when every packet type is selected: whole packets of the most common kinds
 * (software, local timestamps, data trace PC and word value, exception trace, PC samples) lying
 * entirely in the buffer, decoded with the queue indices and the time in locals. Anything else,
 * or too few bytes left, returns to the general loop. The packets and rules are exactly those
 * of the general loop. */
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
    while (i + 5 <= len && tail - head + 3 <= room) {
        uint8_t h = data[i];
        uint8_t t = header_table[h];
        unsigned cls = t >> 4, n = t & 0x0F;
        uint32_t v;
        memcpy(&v, data + i + 1, 4); /* may read past the payload, not past the buffer */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap32(v);
#endif
        uint32_t delta;
        if (cls == H_SW) { /* D4 'Instrumentation packet' */
            v &= value_mask[n];
            spoor_itm_packet *p = &q[HOLD_INDEX(tail++)];
            p->type = SPOOR_ITM_SW;
            p->offset = base + i;
            p->size = (uint8_t)(n + 1);
            p->time_exact = true;
            p->u.sw.port = (uint16_t)(page32 + (h >> 3));
            p->u.sw.size = (uint8_t)n;
            p->u.sw.value = v;
            n_sw++;
            i += 1 + n;
            continue;
        }
        /* D4 'Data trace packets', word value: 0b10NNW111 */
        if (cls == H_HW && (h & 0xC7) == 0x87) {
            spoor_itm_packet *p = &q[HOLD_INDEX(tail++)];
            p->type = SPOOR_ITM_DWT_DATA;
            p->offset = base + i;
            p->size = 5;
            p->time_exact = true;
            p->u.dwt_data.comparator = (uint8_t)((h >> 4) & 3);
            p->u.dwt_data.write = (h >> 3) & 1;
            p->u.dwt_data.size = 4;
            p->u.dwt_data.value = v;
            n_data++;
            i += 5;
            continue;
        }
        if (cls == H_HW && (h & 0xCF) == 0x47) { /* D4 'Data trace packets', PC value: 0b01NN0111 */
            spoor_itm_packet *p = &q[HOLD_INDEX(tail++)];
            p->type = SPOOR_ITM_DWT_PC;
            p->offset = base + i;
            p->size = 5;
            p->time_exact = true;
            p->u.dwt_pc.comparator = (uint8_t)((h >> 4) & 3);
            p->u.dwt_pc.pc = v;
            n_pc++;
            i += 5;
            continue;
        }
        if (h == 0x0E && (v & 0x3000u)) { /* D4 'Exception trace packet', FN != 0 */
            spoor_itm_packet *p = &q[HOLD_INDEX(tail++)];
            p->type = SPOOR_ITM_EXCEPTION;
            p->offset = base + i;
            p->size = 3;
            p->time_exact = true;
            p->u.exception.number = (uint16_t)(v & 0x1FF);
            p->u.exception.action = (spoor_itm_exception_action)((v >> 12) & 3);
            n_exc++;
            i += 3;
            continue;
        }
        if (h == 0x17) { /* D4 'Periodic PC sample packets' */
            spoor_itm_packet *p = &q[HOLD_INDEX(tail++)];
            p->type = SPOOR_ITM_PC_SAMPLE;
            p->offset = base + i;
            p->size = 5;
            p->time_exact = true;
            p->u.pc_sample.pc = v;
            p->u.pc_sample.sleep = false;
            n_pcs++;
            i += 5;
            continue;
        }
        unsigned size;
        if (cls == H_LTS2) { /* D4 'Local timestamp packets' format 2 */
            delta = (h >> 4) & 7;
            size = 1;
        } else if (cls == H_LTS1) { /* format 1: 1..4 bytes with continuation bits */
            if (!(v & 0x80u)) {
                delta = v & 0x7F;
                size = 2;
            } else if (!(v & 0x8000u)) {
                delta = (v & 0x7F) | (v >> 1 & 0x3F80);
                size = 3;
            } else if (!(v & 0x800000u)) {
                delta = (v & 0x7F) | (v >> 1 & 0x3F80) | (v >> 2 & 0x1FC000);
                size = 4;
            } else if (!(v & 0x80000000u)) {
                delta = (v & 0x7F) | (v >> 1 & 0x3F80) | (v >> 2 & 0x1FC000) | (v >> 3 & 0xFE00000);
                size = 5;
            } else {
                break; /* too long: the general loop reports it */
            }
        } else {
            break;
        }
        time += delta;
        for (uint32_t k = sealed; k != tail; k++) /* time_exact is already true */
            q[HOLD_INDEX(k)].time = time;
        spoor_itm_packet *p = &q[HOLD_INDEX(tail++)];
        p->type = SPOOR_ITM_TS_LOCAL;
        p->offset = base + i;
        p->size = (uint8_t)size;
        p->time = time;
        p->time_exact = true;
        p->u.ts_local.delta = delta;
        p->u.ts_local.tc = cls == H_LTS1 ? (h >> 4) & 3 : 0;
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
    if (n_ts) { /* a timestamp releases at least itself; the time only moves with one */
        d->other_first = d->other_tail;
        d->time = first_ts_time;
        note_release(d);
    }
    d->time = time;
    d->stats.time_last = n_ts ? time : d->stats.time_last;
    d->tail = tail;
    d->sealed = sealed;
    return i;
}

/* Stores what a lean run kept in locals: the time, the other-type ring, and (when the run saw
 * a local timestamp) the release of everything that timestamp dated, from the first one's
 * time to the last one's. */
static inline void end_lean_run(spoor_itm_decoder *d, bool saw_timestamp, uint64_t first_ts_time,
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

/* The D4 'Local timestamp packets' at p (header h, the next four bytes v), for the fast loops:
 * false when the general loop has to take it (another header, or a format 1 payload longer
 * than four bytes). */
static inline bool lean_timestamp(unsigned kind, uint8_t h, uint32_t v, uint32_t *delta,
                                  unsigned *size)
{
    if (kind == L_LTS2) { /* format 2: TS[2:0] in header bits [6:4] */
        *delta = (h >> 4) & 7;
        *size = 1;
    } else if (kind != L_LTS1) {
        return false;
    } else if (!(v & 0x80u)) { /* format 1: 7 bits per byte, C = bit 7 */
        *delta = v & 0x7F;
        *size = 2;
    } else if (!(v & 0x8000u)) {
        *delta = (v & 0x7F) | (v >> 1 & 0x3F80);
        *size = 3;
    } else if (!(v & 0x800000u)) {
        *delta = (v & 0x7F) | (v >> 1 & 0x3F80) | (v >> 2 & 0x1FC000);
        *size = 4;
    } else if (!(v & 0x80000000u)) {
        *delta = (v & 0x7F) | (v >> 1 & 0x3F80) | (v >> 2 & 0x1FC000) | (v >> 3 & 0xFE00000);
        *size = 5;
    } else {
        return false;
    }
    return true;
}

/* A source packet of kind >= L_SW1 (not a software packet when the software packets are
 * selected) goes to the `other` ring: false when its payload is one the general loop must
 * report (exception trace with FN = 0, a 1-byte PC sample other than 0). */
static inline bool lean_other(unsigned kind, uint32_t v, uint64_t off, uint64_t *restrict other,
                              uint32_t *otail, uint64_t *restrict count)
{
    unsigned bad =
        ((kind == L_EXC) & ((v & 0x3000u) == 0)) | ((kind == L_SLEEP) & ((v & 0xFFu) != 0));
    if (bad)
        return false;
    spoor_itm_type type = lean_type[kind];
    other[HOLD_INDEX(*otail)] = off << 8 | type;
    (*otail)++;
    count[type]++;
    return true;
}

/* A 1-byte software packet at stream offset off: header and payload byte in hv (header in
 * the low byte). */
static inline void sw1_packet(spoor_itm_packet *o, uint64_t off, uint16_t hv, uint32_t page32)
{
    o->type = SPOOR_ITM_SW;
    o->offset = off;
    o->size = 2;
    o->time_exact = true;
    o->u.sw.port = (uint16_t)(page32 + (hv & 0xFF) / 8);
    o->u.sw.size = 1;
    o->u.sw.value = hv >> 8;
}

/* The hot loop when the software packets alone are selected (a consumer of the software
 * channels): the same packets and rules as fast_all(), but a packet of another type costs a
 * counter and its `other` ring entry only, and runs of 1-byte software packets go four at a
 * time. */
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
    const uint64_t ts_before = count[SPOOR_ITM_TS_LOCAL];
    const uint8_t *p = data + i, *const last = data + len - 5, *const end = data + len;
    while (p <= last && (tail - head) + (otail - ofirst) + 3 <= SPOOR_ITM_HOLD) {
        uint8_t h = p[0];
        uint32_t v;
        memcpy(&v, p + 1, 4); /* may read past the payload, not past the buffer */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap32(v);
#endif
        unsigned kind = lean_table[h];
        if (kind == L_SW1 && p + 8 <= end &&
            (tail - head) + (otail - ofirst) + 6 <= SPOOR_ITM_HOLD) {
            uint64_t w;
            memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            w = __builtin_bswap64(w);
#endif
            if ((w & 0x0007000700070007u) == 0x0001000100010001u) {
                /* four 1-byte software packets, 0bAAAAA001 (printf text) */
                uint64_t off = base + (uint64_t)(p - data);
                sw1_packet(&q[HOLD_INDEX(tail)], off, (uint16_t)w, page32);
                sw1_packet(&q[HOLD_INDEX(tail + 1)], off + 2, (uint16_t)(w >> 16), page32);
                sw1_packet(&q[HOLD_INDEX(tail + 2)], off + 4, (uint16_t)(w >> 32), page32);
                sw1_packet(&q[HOLD_INDEX(tail + 3)], off + 6, (uint16_t)(w >> 48), page32);
                tail += 4;
                count[SPOOR_ITM_SW] += 4;
                p += 8;
                continue;
            }
        }
        if (kind >= L_SW1 && kind <= L_SW4) { /* D4 'Instrumentation packet' */
            unsigned n = kind == L_SW1 ? 1 : kind == L_SW2 ? 2 : 4;
            spoor_itm_packet *o = &q[HOLD_INDEX(tail)];
            tail++;
            o->type = SPOOR_ITM_SW;
            o->offset = base + (uint64_t)(p - data);
            o->size = (uint8_t)(n + 1);
            o->time_exact = true;
            o->u.sw.port = (uint16_t)(page32 + (h >> 3));
            o->u.sw.size = (uint8_t)n;
            o->u.sw.value = v & value_mask[n];
            count[SPOOR_ITM_SW]++;
            p += n + 1;
            continue;
        }
        if (kind > L_SW4) {
            if (!lean_other(kind, v, base + (uint64_t)(p - data), other, &otail, count))
                break;
            unsigned s = h & 3; /* payload 1, 2 or 4 bytes */
            p += 1 + s + (s == 3);
            continue;
        }
        uint32_t delta;
        unsigned size;
        if (!lean_timestamp(kind, h, v, &delta, &size))
            break;
        /* a local timestamp: dates and releases the held packets and itself */
        time += delta;
        for (uint32_t k = sealed; k != tail; k++) /* time_exact is already true */
            q[HOLD_INDEX(k)].time = time;
        sealed = tail;
        ofirst = otail;
        if (count[SPOOR_ITM_TS_LOCAL]++ == ts_before)
            first_ts_time = time;
        p += size;
    }
    d->tail = tail;
    d->sealed = sealed;
    end_lean_run(d, count[SPOOR_ITM_TS_LOCAL] != ts_before, first_ts_time, time, otail, ofirst);
    return (size_t)(p - data);
}

/* The hot loop for a consumer of the counters only (nothing selected): the same packets and
 * rules as fast_all(), with one branch for every source packet whose size follows from its
 * header (type and checks from lean_table), so that a stream of unpredictable packet types
 * costs few mispredicted branches; runs of 1-byte software packets go four at a time. */
static __attribute__((noinline)) size_t
fast_count(spoor_itm_decoder *d, const uint8_t *restrict data, size_t i, size_t len, uint64_t base)
{
    /* packets of selected types still held (the selection changed): the general loop first */
    if (d->tail != d->sealed || d->tail - d->head + 3 > SPOOR_ITM_HOLD || len < 5)
        return i;
    uint32_t otail = d->other_tail, ofirst = d->other_first;
    const uint32_t room = SPOOR_ITM_HOLD - 3 - (d->tail - d->head);
    uint64_t time = d->time, first_ts_time = 0;
    uint64_t *restrict other = d->other;
    uint64_t *count = d->stats.packets; /* not a local array: nothing to add up on leaving */
    const uint64_t ts_before = count[SPOOR_ITM_TS_LOCAL];
    const uint8_t *p = data + i, *const last = data + len - 5, *const end = data + len;
    while (p <= last && otail - ofirst <= room) {
        uint8_t h = p[0];
        uint32_t v;
        memcpy(&v, p + 1, 4); /* may read past the payload, not past the buffer */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        v = __builtin_bswap32(v);
#endif
        unsigned kind = lean_table[h];
        if (kind >= L_SW1) { /* a source packet */
            uint64_t w;
            if (p + 8 <= end && otail - ofirst + 3 <= room) {
                memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                w = __builtin_bswap64(w);
#endif
                if ((w & 0x0007000700070007u) == 0x0001000100010001u) {
                    /* four 1-byte software packets, 0bAAAAA001 */
                    uint64_t e = (base + (uint64_t)(p - data)) << 8 | SPOOR_ITM_SW;
                    other[HOLD_INDEX(otail)] = e;
                    other[HOLD_INDEX(otail + 1)] = e + (2u << 8);
                    other[HOLD_INDEX(otail + 2)] = e + (4u << 8);
                    other[HOLD_INDEX(otail + 3)] = e + (6u << 8);
                    otail += 4;
                    count[SPOOR_ITM_SW] += 4;
                    p += 8;
                    continue;
                }
            }
            if (!lean_other(kind, v, base + (uint64_t)(p - data), other, &otail, count))
                break;
            unsigned s = h & 3; /* payload 1, 2 or 4 bytes */
            p += 1 + s + (s == 3);
            continue;
        }
        uint32_t delta;
        unsigned size;
        if (!lean_timestamp(kind, h, v, &delta, &size))
            break;
        time += delta; /* dates and releases the held packets and itself */
        ofirst = otail;
        if (count[SPOOR_ITM_TS_LOCAL]++ == ts_before)
            first_ts_time = time;
        p += size;
    }
    end_lean_run(d, count[SPOOR_ITM_TS_LOCAL] != ts_before, first_ts_time, time, otail, ofirst);
    return (size_t)(p - data);
}

static size_t fast_run(spoor_itm_decoder *d, const uint8_t *restrict data, size_t i, size_t len,
                       uint64_t base)
{
    switch (d->selected) {
    case SPOOR_ITM_ALL_TYPES: return fast_all(d, data, i, len, base);
    case 0: return fast_count(d, data, i, len, base);
    case 1u << SPOOR_ITM_SW: return fast_sw(d, data, i, len, base);
    default: return i; /* other selections: the general loop only */
    }
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
        /* Room for every packet one step can queue (an error, a sync and one more). */
        if (queued(d) + 3 > SPOOR_ITM_HOLD) {
            if (d->head != d->sealed)
                break; /* the caller drains released packets first */
            /* Nothing released and the queue is full of held packets: release the oldest
             * with the time known so far. */
            release_oldest(d);
            continue;
        }
        uint8_t b = data[i];
        uint64_t off = base + i;
        switch (d->state) {
        case ST_HEADER: {
            uint8_t t = header_table[b];
            unsigned n = t & 0x0F;
            if (n && i + 5 <= len) { /* fast path: a whole source packet in the buffer */
                uint32_t v;
                memcpy(&v, data + i + 1, 4); /* may read past the payload, not the buffer */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
                v = __builtin_bswap32(v);
#endif
                v &= value_mask[n];
                source_packet(d, b, v, n, off);
                i += 1 + n;
                continue;
            }
            if (n && i + 1 + n <= len) {
                source_packet(d, b, payload_value(data + i + 1, n), n, off);
                i += 1 + n;
                continue;
            }
            if ((t >> 4) == H_EXT && !(b & 0x80)) { /* one-byte extension, e.g. 0x08 */
                uint32_t ex = (b >> 4) & 7;
                bool hw = (b >> 2) & 1;
                if (!hw)
                    d->page = (uint8_t)ex;
                spoor_itm_packet *q = push(d, SPOOR_ITM_EXTENSION, off, 1);
                q->u.ext.page = ex;
                q->u.ext.hw = hw;
                i++;
                continue;
            }
            if ((t >> 4) == H_LTS1 || (t >> 4) == H_GTS1 || (t >> 4) == H_GTS2 ||
                (t >> 4) == H_EXT) {
                /* fast path for continuation payloads fully in the buffer */
                unsigned max = cont_max(b), k = 0;
                while (k < max && i + 1 + k < len && (data[i + 1 + k] & 0x80))
                    k++;
                if (k < max && i + 1 + k < len) {
                    cont_packet(d, b, data + i + 1, k + 1, off);
                    i += 2 + k;
                    continue;
                }
                if (k == max) {
                    lose(d, off, off + max, SPOOR_ITM_ERR_BAD_PAYLOAD);
                    i += 1 + max;
                    continue;
                }
            }
            if (b == 0x00) {
                /* Headers are never zero, so the zero bytes just before this one are the
                 * end of the previous packet's payload: a sync may have started there. */
                uint8_t z = 0;
                for (size_t k = 1; k <= 4; k++) {
                    uint8_t prev = k <= i ? data[i - k] : (uint8_t)(d->hist >> (8 * (k - i - 1)));
                    if (prev != 0)
                        break;
                    z++;
                }
                d->last_trailing_zeros = z;
            }
            start_packet(d, b, off);
            i++;
            continue;
        }
        case ST_FIXED:
            d->buf[d->got++] = b;
            i++;
            if (d->got == d->need) {
                d->state = ST_HEADER;
                source_packet(d, d->header, payload_value(d->buf, d->got), d->got, d->pkt_start);
            }
            continue;
        case ST_CONT:
            d->buf[d->got++] = b;
            i++;
            if (!(b & 0x80)) {
                d->state = ST_HEADER;
                cont_packet(d, d->header, d->buf, d->got, d->pkt_start);
            } else if (d->got == cont_max(d->header)) {
                lose(d, d->pkt_start, off, SPOOR_ITM_ERR_BAD_PAYLOAD);
            }
            continue;
        case ST_SYNC:
            i++;
            if (b == 0x00) {
                if (d->zeros < 0xFFFF)
                    d->zeros++;
            } else if (b == 0x80) {
                sync_end(d, off);
            } else {
                lose(d, d->pkt_start, off, SPOOR_ITM_ERR_BAD_SYNC);
            }
            continue;
        case ST_LOST:
        default: {
            /* Skip to the next 0x80 preceded by at least five zero bytes. */
            size_t j = i;
            uint32_t z = d->zeros;
            while (j < len) {
                uint8_t c = data[j];
                if (c == 0x00) {
                    if (z < 0xFFFF)
                        z++;
                } else if (c == 0x80 && z >= 5) {
                    break;
                } else {
                    z = 0;
                }
                j++;
            }
            d->zeros = z;
            if (j == len) {
                i = len;
                continue;
            }
            uint64_t end = base + j; /* the 0x80 */
            if (end - z > d->lost_from)
                push_error(d, d->lost_from, end - z, d->lost_detected, d->lost_why);
            sync_packet(d, end, z);
            i = j + 1;
            continue;
        }
        }
    }
    for (size_t k = i > 4 ? i - 4 : 0; k < i; k++)
        d->hist = d->hist << 8 | data[k];
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
    d->state = ST_HEADER;
    d->zeros = 0;
    d->got = 0;
    d->last_trailing_zeros = 0;
    d->hist = 0xFFFFFFFFu; /* nothing before the next byte belongs to a packet */
}
