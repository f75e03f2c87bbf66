/* What an ITM/DWT header byte announces (ARMv7-M ARM appendix D4 "Debug ITM and DWT Packet
 * Protocol"; the ARMv8-M ARM keeps the same encodings), as one table of constants that the
 * compiler builds from the rules below: the decoder's loops look a header up once, and no
 * table is filled at run time (decoders may start in several threads at once). Internal to
 * the ITM decoder (itm_decoder.c, itm_packets.h). */
#ifndef SPOOR_ITM_HEADER_H
#define SPOOR_ITM_HEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "spoor/itm_decoder.h"

/* The kinds of header. The order matters to the fast loops: every kind from HDR_SW1 on is a
 * source packet, whose payload size (1, 2 or 4 bytes) the header's bits [1:0] give, and the
 * software source kinds come first among them; the kinds whose payload bytes carry a
 * continuation bit are HDR_EXT to HDR_LTS1. */
enum itm_header_kind {
    HDR_RESERVED, /* a header the protocol reserves */
    HDR_SYNC,     /* 0x00: D4 'Synchronization packet' */
    HDR_OVERFLOW, /* 0x70: D4 'Overflow packet' */
    HDR_EXT,      /* 0bCEEES100: D4 'Extension packet' (S the source bit) */
    HDR_GTS1,     /* 0x94: D4 'Global timestamp packets', GTS1 */
    HDR_GTS2,     /* 0xB4: GTS2 */
    HDR_LTS1,     /* 0b11TT0000: D4 'Local timestamp packets', format 1 */
    HDR_LTS2,     /* 0b0TTT0000, TTT not 000 or 111: format 2 */
    HDR_SW1,      /* 0bAAAAA0SS: D4 'Instrumentation packet', 1, 2 or 4 payload bytes */
    HDR_SW2,
    HDR_SW4,
    HDR_PC,    /* 0b01NN0111: D4 'Data trace packets', PC value */
    HDR_ADDR,  /* 0b01NN1110: data trace address offset */
    HDR_MATCH, /* 0b01NN0101: ARMv8-M data trace match (one payload byte) */
    HDR_DATA1, /* 0b10NNWxSS: data trace data value, 1, 2 or 4 payload bytes */
    HDR_DATA2,
    HDR_DATA4,
    HDR_EXC,   /* 0x0E: D4 'Exception trace packet' */
    HDR_PCS,   /* 0x17: D4 'Periodic PC sample packets', a PC */
    HDR_SLEEP, /* 0x15: the same, asleep */
    HDR_EVC,   /* 0x05: D4 'Event counter packet' */
    HDR_KIND_COUNT
};

/* D4 'Hardware source packets': the kind of hardware source header 0bDDDDD1SS with
 * discriminator d and size bits s, the only sizes each allows, reserved otherwise. */
#define HDR_HW_KIND(d, s)                                                                          \
    ((d) == 0   ? ((s) == 1 ? HDR_EVC : HDR_RESERVED)                                              \
     : (d) == 1 ? ((s) == 2 ? HDR_EXC : HDR_RESERVED)                                              \
     : (d) == 2 ? ((s) == 3   ? HDR_PCS                                                            \
                   : (s) == 1 ? HDR_SLEEP                                                          \
                              : HDR_RESERVED)                                                      \
     : (d) < 8  ? HDR_RESERVED                                                                     \
     : (d) < 16 ? ((d)&1      ? ((s) == 2 ? HDR_ADDR : HDR_RESERVED)                               \
                   : (s) == 3 ? HDR_PC                                                             \
                   : (s) == 1 ? HDR_MATCH                                                          \
                              : HDR_RESERVED)                                                      \
     : (d) < 24 ? HDR_DATA1 + (s)-1                                                                \
                : HDR_RESERVED)

/* The kind of header byte h, as a constant expression. */
#define HDR_KIND(h)                                                                                \
    ((h) == 0x00          ? HDR_SYNC                                                               \
     : (h) == 0x70        ? HDR_OVERFLOW                                                           \
     : ((h)&0x0F) == 0x00 ? (((h)&0x80) == 0      ? HDR_LTS2                                       \
                             : ((h)&0xC0) == 0xC0 ? HDR_LTS1                                       \
                                                  : HDR_RESERVED)                                  \
     : (h) == 0x94        ? HDR_GTS1                                                               \
     : (h) == 0xB4        ? HDR_GTS2                                                               \
     : ((h)&0x0B) == 0x08 ? HDR_EXT                                                                \
     : ((h)&3) == 0       ? HDR_RESERVED /* 0bxxxx0100 but the global timestamps */                \
     : ((h)&4) == 0       ? HDR_SW1 + ((h)&3) - 1                                                  \
                          : HDR_HW_KIND((h) >> 3, (h)&3))

/* A table of one entry per kind, F(k), as constant expressions. */
#define HDR_KIND_TABLE(F)                                                                          \
    {                                                                                              \
        F(0), F(1), F(2), F(3), F(4), F(5), F(6), F(7), F(8), F(9), F(10), F(11), F(12), F(13),    \
            F(14), F(15), F(16), F(17), F(18), F(19), F(20)                                        \
    }
_Static_assert(HDR_KIND_COUNT == 21, "HDR_KIND_TABLE lists every kind");

/* The bytes of a source packet of kind k, header included: each kind has one payload size
 * (D4: the header's bits [1:0] give it). */
static const uint8_t itm_source_bytes[HDR_KIND_COUNT] = {
    [HDR_SW1] = 2,   [HDR_SW2] = 3,   [HDR_SW4] = 5,   [HDR_PC] = 5,    [HDR_ADDR] = 3,
    [HDR_MATCH] = 2, [HDR_DATA1] = 2, [HDR_DATA2] = 3, [HDR_DATA4] = 5, [HDR_EXC] = 3,
    [HDR_PCS] = 5,   [HDR_SLEEP] = 2, [HDR_EVC] = 2,
};

/* The packet type of source packet kind k, as a constant expression (itm_source_type). */
#define HDR_SOURCE_TYPE(k)                                                                         \
    ((k) <= HDR_SW4     ? SPOOR_ITM_SW                                                             \
     : (k) == HDR_PC    ? SPOOR_ITM_DWT_PC                                                         \
     : (k) == HDR_ADDR  ? SPOOR_ITM_DWT_ADDR                                                       \
     : (k) == HDR_MATCH ? SPOOR_ITM_DWT_MATCH                                                      \
     : (k) <= HDR_DATA4 ? SPOOR_ITM_DWT_DATA                                                       \
     : (k) == HDR_EXC   ? SPOOR_ITM_EXCEPTION                                                      \
     : (k) == HDR_EVC   ? SPOOR_ITM_EVENT_COUNTER                                                  \
                        : SPOOR_ITM_PC_SAMPLE)

/* A table of 256 entries, F(h) for every header byte h, as constant expressions. */
#define HDR_TABLE_4(F, h) F(h), F((h) + 1), F((h) + 2), F((h) + 3)
#define HDR_TABLE_16(F, h)                                                                         \
    HDR_TABLE_4(F, h), HDR_TABLE_4(F, (h) + 4), HDR_TABLE_4(F, (h) + 8), HDR_TABLE_4(F, (h) + 12)
#define HDR_TABLE_64(F, h)                                                                         \
    HDR_TABLE_16(F, h), HDR_TABLE_16(F, (h) + 16), HDR_TABLE_16(F, (h) + 32),                      \
        HDR_TABLE_16(F, (h) + 48)
#define HDR_TABLE(F)                                                                               \
    {                                                                                              \
        HDR_TABLE_64(F, 0x00), HDR_TABLE_64(F, 0x40), HDR_TABLE_64(F, 0x80), HDR_TABLE_64(F, 0xC0) \
    }

/* The kind of every header byte. */
static const uint8_t itm_header_kind[256] = HDR_TABLE(HDR_KIND);

/* Per header byte h, what the counting loop needs of a source packet (the kind look-up
 * folded in), in one block of tables that one base register reaches: its packet type (0 when
 * h is no source packet: type 0 is the sync), its bytes with the header (2, 3 or 5, from the
 * size bits SS; a 64-bit entry, added to a pointer as it is), and the two constants of
 * source_payload_ok for its kind. */
#define SOURCE_TYPE_K(k) ((k) < HDR_SW1 ? 0u : (unsigned)HDR_SOURCE_TYPE(k))
#define SOURCE_TYPE(h) SOURCE_TYPE_K(HDR_KIND(h))
#define SOURCE_BYTES(h) (((h)&3) == 3 ? 5u : ((h)&3) + 1u)
#define SOURCE_CHECK_AND_K(k) ((k) == HDR_EXC ? 0x3000u : (k) == HDR_SLEEP ? 0xFFu : 0u)
#define SOURCE_CHECK_AND(h) SOURCE_CHECK_AND_K(HDR_KIND(h))
#define SOURCE_CHECK_ADD_K(k) ((k) == HDR_EXC ? 0xFFFFFFFFu : (k) == HDR_SLEEP ? 0x7FFFFFFFu : 0u)
#define SOURCE_CHECK_ADD(h) SOURCE_CHECK_ADD_K(HDR_KIND(h))

/* The packet type of each source packet kind (0 for the other kinds). */
static const uint8_t itm_source_type[HDR_KIND_COUNT] = HDR_KIND_TABLE(SOURCE_TYPE_K);

static const struct itm_source_table {
    uint64_t bytes[256];
    uint32_t check_and[256], check_add[256];
    uint8_t type[256];
} itm_source_by_header = {
    .bytes = HDR_TABLE(SOURCE_BYTES),
    .check_and = HDR_TABLE(SOURCE_CHECK_AND),
    .check_add = HDR_TABLE(SOURCE_CHECK_ADD),
    .type = HDR_TABLE(SOURCE_TYPE),
};

/* Per header byte h, what the stats loop (a consumer of the counters only) adds up for a
 * packet it takes: a source packet adds 1 to the 8-bit lane (type - SPOOR_ITM_SW) of a
 * packed counter (the source types are SPOOR_ITM_SW .. SPOOR_ITM_DWT_MATCH, eight lanes); a
 * local timestamp or a GTS1 packet is an event (its payload is read after the loop). The
 * loop steps over four 1-byte software packets in a row at once, as if their first header
 * were STATS_QUAD, a header the protocol reserves (so never one the loop takes). */
#define STATS_QUAD 0x04
#define STATS_LANE_INC(h)                                                                          \
    ((h) == STATS_QUAD ? (uint64_t)4                                                               \
     : SOURCE_TYPE(h)  ? (uint64_t)1 << (8 * ((SOURCE_TYPE(h) - SPOOR_ITM_SW) & 7))                \
                       : (uint64_t)0)
_Static_assert(HDR_KIND(STATS_QUAD) == HDR_RESERVED, "the stats loop's four 1-byte packets");
#define STATS_EVENT(h)                                                                             \
    (HDR_KIND(h) == HDR_LTS1 || HDR_KIND(h) == HDR_LTS2 || HDR_KIND(h) == HDR_GTS1 ? 1 : 0)
_Static_assert(SPOOR_ITM_DWT_MATCH - SPOOR_ITM_SW == 7 && SPOOR_ITM_EVENT_COUNTER > SPOOR_ITM_SW &&
                   SPOOR_ITM_EXCEPTION > SPOOR_ITM_SW && SPOOR_ITM_PC_SAMPLE > SPOOR_ITM_SW &&
                   SPOOR_ITM_DWT_PC > SPOOR_ITM_SW && SPOOR_ITM_DWT_ADDR > SPOOR_ITM_SW &&
                   SPOOR_ITM_DWT_DATA > SPOOR_ITM_SW,
               "the source packet types are eight in a row from SPOOR_ITM_SW");

static const struct itm_stats_table {
    uint64_t lane_inc[256];
    uint8_t event[256];
} itm_stats_by_header = {
    .lane_inc = HDR_TABLE(STATS_LANE_INC),
    .event = HDR_TABLE(STATS_EVENT),
};

/* Whether a header of kind k is a software source packet (D4 'Instrumentation packet'). */
static inline bool hdr_is_sw(unsigned k)
{
    return k - HDR_SW1 <= HDR_SW4 - HDR_SW1;
}

/* Whether the payload bytes of a packet of kind k carry a continuation bit C (bit 7): the
 * extension, the global timestamps and the local timestamp format 1. */
static inline bool hdr_is_cont(unsigned k)
{
    return k - HDR_EXT <= HDR_LTS1 - HDR_EXT;
}

#endif
