/* What the payload of each ITM/DWT packet means (ARMv7-M ARM appendix D4; the comments name
 * its sections), written once for every loop of the decoder (itm_decoder.c: the general loop
 * and the fast loops for selected types). Pure functions of the header and the payload that
 * fill a packet's fields; static inline, so a fast loop that calls one for a known kind gets
 * the same code as if it were written out there. Internal to the ITM decoder. */
#ifndef SPOOR_ITM_PACKETS_H
#define SPOOR_ITM_PACKETS_H

#include <stdbool.h>
#include <stdint.h>

#include "itm/itm_header.h"
#include "spoor/itm_decoder.h"

/* The fields a packet has whatever its type, as it is queued: it counts as dated (time_exact)
 * until it is released without a timestamp; its time is set on release. */
static inline void packet_start(spoor_itm_packet *p, spoor_itm_type type, uint64_t offset,
                                unsigned size)
{
    p->type = type;
    p->offset = offset;
    p->size = (uint8_t)size;
    p->time_exact = true;
}

/* ---- source packets (D4 'Instrumentation packet', 'Hardware source packets') --------------- */

/* The payload bytes of a source packet: 1, 2 or 4, from the header's size bits SS. */
static inline unsigned source_payload_size(uint8_t h)
{
    static const uint8_t size[4] = {0, 1, 2, 4};
    return size[h & 3];
}

/* The payload of n bytes, of the four bytes that follow the header. */
static inline uint32_t source_payload_value(uint32_t four, unsigned n)
{
    static const uint32_t mask[5] = {0, 0xFF, 0xFFFF, 0, 0xFFFFFFFF};
    return four & mask[n];
}

/* Whether a source packet of kind k may carry payload v (its low-order bytes are the payload;
 * any bytes above it are ignored): an exception trace needs FN != 0 (bits [13:12]), a 1-byte
 * PC sample (asleep) is 0x00. Branch-free for the fast loops: v is refused when
 * (v & check_and) + check_add has bit 31 set, i.e. when FN - 1 or 0x7FFFFFFF + the sleep
 * payload overflows into it (the other kinds: 0 + 0). */
static inline bool source_payload_ok(unsigned k, uint32_t v)
{
    static const uint32_t check_and[HDR_KIND_COUNT] = HDR_KIND_TABLE(SOURCE_CHECK_AND_K);
    static const uint32_t check_add[HDR_KIND_COUNT] = HDR_KIND_TABLE(SOURCE_CHECK_ADD_K);
    return (((v & check_and[k]) + check_add[k]) >> 31) == 0;
}

/* D4 'Instrumentation packet': port A of the current page (page32 = page * 32). */
static inline void sw_fields(spoor_itm_packet *p, uint8_t h, uint32_t v, unsigned n,
                             uint32_t page32)
{
    p->u.sw.port = (uint16_t)(page32 + (h >> 3));
    p->u.sw.size = (uint8_t)n;
    p->u.sw.page_unknown = false; /* (the general loop marks the others) */
    p->u.sw.value = v;
}

/* D4 'Event counter packet': one bit per wrapped 8-bit DWT counter. */
static inline void event_counter_fields(spoor_itm_packet *p, uint32_t v)
{
    p->u.event_counter.bits = (uint8_t)(v & 0x3F);
}

/* D4 'Exception trace packet': number [8:0], FN [13:12]. */
static inline void exception_fields(spoor_itm_packet *p, uint32_t v)
{
    p->u.exception.number = (uint16_t)(v & 0x1FF);
    p->u.exception.action = (spoor_itm_exception_action)((v >> 12) & 3);
}

/* D4 'Periodic PC sample packets': a PC, or (the 1-byte form) the core was asleep. */
static inline void pc_sample_fields(spoor_itm_packet *p, bool sleep, uint32_t v)
{
    p->u.pc_sample.sleep = sleep;
    p->u.pc_sample.pc = sleep ? 0 : v;
}

/* D4 'Data trace packets': comparator NN in header bits [5:4]. */
static inline uint8_t dwt_comparator(uint8_t h)
{
    return (uint8_t)((h >> 4) & 3);
}

/* D4 'Data trace packets', PC value (0b01NN0111). */
static inline void dwt_pc_fields(spoor_itm_packet *p, uint8_t h, uint32_t v)
{
    p->u.dwt_pc.comparator = dwt_comparator(h);
    p->u.dwt_pc.pc = v;
}

/* D4 'Data trace packets', address offset (0b01NN1110). */
static inline void dwt_addr_fields(spoor_itm_packet *p, uint8_t h, uint32_t v)
{
    p->u.dwt_addr.comparator = dwt_comparator(h);
    p->u.dwt_addr.offset = (uint16_t)v;
}

/* D4 'Data trace packets', data value (0b10NNWxSS): W = 1 for a write. */
static inline void dwt_data_fields(spoor_itm_packet *p, uint8_t h, uint32_t v, unsigned n)
{
    p->u.dwt_data.comparator = dwt_comparator(h);
    p->u.dwt_data.write = (h >> 3) & 1;
    p->u.dwt_data.size = (uint8_t)n;
    p->u.dwt_data.value = v;
}

/* The fields of a source packet of kind k (header h, payload v of n bytes). */
static inline void source_fields(spoor_itm_packet *p, unsigned k, uint8_t h, uint32_t v, unsigned n,
                                 uint32_t page32)
{
    switch (k) {
    case HDR_SW1:
    case HDR_SW2:
    case HDR_SW4: sw_fields(p, h, v, n, page32); break;
    case HDR_PC: dwt_pc_fields(p, h, v); break;
    case HDR_ADDR: dwt_addr_fields(p, h, v); break;
    case HDR_MATCH: p->u.dwt_match.comparator = dwt_comparator(h); break;
    case HDR_DATA1:
    case HDR_DATA2:
    case HDR_DATA4: dwt_data_fields(p, h, v, n); break;
    case HDR_EXC: exception_fields(p, v); break;
    case HDR_PCS:
    case HDR_SLEEP: pc_sample_fields(p, k == HDR_SLEEP, v); break;
    case HDR_EVC: event_counter_fields(p, v); break;
    default: break;
    }
}

/* Eight stream bytes w (little-endian) that are four 1-byte software packets, 0bAAAAA001 and a
 * payload byte each (printf text): the fast loops take them at once. */
#define FOUR_SW1_MASK 0x0007000700070007u
#define FOUR_SW1_WANT 0x0001000100010001u
static inline bool four_sw1_packets(uint64_t w)
{
    return (w & FOUR_SW1_MASK) == FOUR_SW1_WANT;
}

/* ---- timestamps (D4 'Local timestamp packets', 'Global timestamp packets') ------------------ */

/* A local timestamp packet of kind k (HDR_LTS1 or HDR_LTS2) with header h, v the (up to) four
 * bytes after the header: its size in bytes and its delta; 0 when it is none (another kind, or
 * a format 1 payload whose four bytes all have the continuation bit C = bit 7 set). */
static inline unsigned local_timestamp_decode(unsigned k, uint8_t h, uint32_t v, uint32_t *delta)
{
    if (k == HDR_LTS2) { /* format 2: TS[2:0] in header bits [6:4] */
        *delta = (h >> 4) & 7;
        return 1;
    }
    if (k != HDR_LTS1)
        return 0;
    /* format 1: 7 bits per byte, up to the first byte with C = 0 */
    if (!(v & 0x80u)) {
        *delta = v & 0x7F;
        return 2;
    }
    if (!(v & 0x8000u)) {
        *delta = (v & 0x7F) | (v >> 1 & 0x3F80);
        return 3;
    }
    if (!(v & 0x800000u)) {
        *delta = (v & 0x7F) | (v >> 1 & 0x3F80) | (v >> 2 & 0x1FC000);
        return 4;
    }
    if (!(v & 0x80000000u)) {
        *delta = (v & 0x7F) | (v >> 1 & 0x3F80) | (v >> 2 & 0x1FC000) | (v >> 3 & 0xFE00000);
        return 5;
    }
    return 0;
}

/* The fields of a local timestamp: TC in header bits [5:4] of format 1, 0 for format 2. */
static inline void ts_local_fields(spoor_itm_packet *p, unsigned k, uint8_t h, uint32_t delta)
{
    p->u.ts_local.delta = delta;
    p->u.ts_local.tc = k == HDR_LTS1 ? (h >> 4) & 3 : 0;
}

/* The most payload bytes of a packet whose payload bytes carry a continuation bit C (bit 7):
 * GTS2 has a 64-bit form of six bytes (ARMv8-M), the others four. */
static inline unsigned cont_payload_max(unsigned k)
{
    return k == HDR_GTS2 ? 6 : 4;
}

/* GTS1 with n payload bytes b: TS[6:0], TS[13:7], TS[20:14] with C bits, then TS[25:21] in
 * bits [4:0] of a fourth byte whose bit 5 is ClkCh and bit 6 Wrap. A shorter packet replaces
 * only the low-order bits it carries of the global time gts; returns the new global time. */
static inline uint64_t gts1_fields(spoor_itm_packet *p, uint64_t gts, const uint8_t *b, unsigned n)
{
    uint64_t bits = 0, mask = 0;
    bool wrap = false, clkch = false;
    for (unsigned i = 0; i < n && i < 3; i++) {
        bits |= (uint64_t)(b[i] & 0x7F) << (7 * i);
        mask |= (uint64_t)0x7F << (7 * i);
    }
    if (n == 4) {
        bits |= (uint64_t)(b[3] & 0x1F) << 21;
        mask |= (uint64_t)0x1F << 21;
        clkch = (b[3] >> 5) & 1;
        wrap = (b[3] >> 6) & 1;
    }
    gts = (gts & ~mask) | bits;
    p->u.ts_global1.value = gts;
    p->u.ts_global1.wrap = wrap;
    p->u.ts_global1.clkch = clkch;
    return gts;
}

/* The bits [25:0] of a GTS1 packet with all four payload bytes v (the first in the low byte),
 * as gts1_fields takes them. */
static inline uint32_t gts1_bits4(uint32_t v)
{
    return (v & 0x7F) | (v >> 1 & 0x3F80) | (v >> 2 & 0x1FC000) | (v >> 3 & 0x3E00000);
}

/* GTS2 carries 4 payload bytes (the 48-bit form) or 6 (the 64-bit form). */
static inline bool gts2_size_ok(unsigned n)
{
    return n == 4 || n == 6;
}

/* GTS2 with n payload bytes b (gts2_size_ok): the high-order bits from bit 26, 7 bits per byte;
 * the last byte of the 48-bit form holds TS[47], of the 64-bit form TS[63:61]. Returns the new
 * global time. */
static inline uint64_t gts2_fields(spoor_itm_packet *p, uint64_t gts, const uint8_t *b, unsigned n)
{
    uint64_t hi = 0;
    for (unsigned i = 0; i < n - 1; i++)
        hi |= (uint64_t)(b[i] & 0x7F) << (7 * i);
    hi |= (uint64_t)(b[n - 1] & (n == 4 ? 0x01 : 0x07)) << (7 * (n - 1));
    gts = (gts & ((1ull << 26) - 1)) | hi << 26;
    p->u.ts_global2.value = gts;
    p->u.ts_global2.wide = n == 6;
    return gts;
}

/* ---- D4 'Extension packet' ------------------------------------------------------------------ */

/* EX[2:0] in header bits [6:4], then 7 bits per payload byte b, 8 in the fourth; the header's
 * SH bit (2) marks an extension of a hardware source rather than a stimulus port page. */
static inline void extension_fields(spoor_itm_packet *p, uint8_t h, const uint8_t *b, unsigned n)
{
    uint32_t ex = (h >> 4) & 7;
    for (unsigned i = 0; i < n; i++)
        ex |= (uint32_t)(b[i] & (i == 3 ? 0xFF : 0x7F)) << (3 + 7 * i);
    p->u.ext.page = ex;
    p->u.ext.hw = (h >> 2) & 1;
}

#endif
