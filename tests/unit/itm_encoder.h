/* An ITM/DWT packet encoder for tests, written from the ARMv7-M Architecture Reference Manual,
 * appendix D4 "Debug ITM and DWT Packet Protocol": streams with a known schedule, to be decoded
 * by the real decoder. Each event is one source packet followed by a local timestamp (format 1,
 * TC = 0) carrying the cycles since the previous timestamp: a local timestamp dates the packets
 * before it (D4.2.4). */
#ifndef SPOOR_TEST_ITM_ENCODER_H
#define SPOOR_TEST_ITM_ENCODER_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

typedef struct itm_encoder {
    uint8_t buf[1 << 16];
    size_t len;
    uint64_t now; /* the time of the last timestamp written */
} itm_encoder;

static inline void enc_byte(itm_encoder *e, uint8_t b)
{
    assert(e->len < sizeof e->buf);
    e->buf[e->len++] = b;
}

/* D4.2.1 Synchronization packet: 47 or more 0 bits then a 1: five 0x00 and 0x80. */
static inline void enc_sync(itm_encoder *e)
{
    for (int i = 0; i < 5; i++)
        enc_byte(e, 0x00);
    enc_byte(e, 0x80);
}

/* D4.2.4 Local timestamp packet format 1: header 0b11TT0000 (TT = TC), then 1 to 4 bytes of
 * 7 bits each, least significant first, bit 7 set on every byte but the last. */
static inline void enc_ts_delta(itm_encoder *e, uint32_t delta)
{
    enc_byte(e, 0xC0);
    do {
        uint8_t b = delta & 0x7F;
        delta >>= 7;
        enc_byte(e, (uint8_t)(delta ? b | 0x80 : b));
    } while (delta);
}

/* Dates what was written since the last timestamp at time (absolute cycles). */
static inline void enc_at(itm_encoder *e, uint64_t time)
{
    assert(time >= e->now && time - e->now < (1u << 28));
    enc_ts_delta(e, (uint32_t)(time - e->now));
    e->now = time;
}

/* D4.3.4 Data trace data value packet: hardware source, discriminator ID 16-23 =
 * 0b10 CMPN W (CMPN the comparator, W 1 for a write); header = ID << 3 | 0b100 | SS, SS = 0b11
 * for a 4-byte payload, little-endian. */
static inline void enc_dwt_write(itm_encoder *e, unsigned comparator, uint32_t value)
{
    unsigned id = 16 + comparator * 2 + 1;
    enc_byte(e, (uint8_t)(id << 3 | 0x4 | 0x3));
    for (int i = 0; i < 4; i++)
        enc_byte(e, (uint8_t)(value >> (8 * i)));
}

/* D4.3.2 Exception trace packet: discriminator ID 1, 2-byte payload: header 0x0E; byte 0 the
 * exception number bits [7:0], byte 1 bit 0 its bit 8, bits [5:4] FN (1 entered, 2 exited,
 * 3 returned to). */
static inline void enc_exception(itm_encoder *e, unsigned number, unsigned fn)
{
    enc_byte(e, 0x0E);
    enc_byte(e, (uint8_t)(number & 0xFF));
    enc_byte(e, (uint8_t)((number >> 8 & 1) | fn << 4));
}

/* D4.2.3 Overflow packet: 0x70. */
static inline void enc_overflow(itm_encoder *e)
{
    enc_byte(e, 0x70);
}

/* D4.2.8 Instrumentation packet: port 0, 1-byte payload: header 0b00000 0 01. */
static inline void enc_sw8(itm_encoder *e, uint8_t value)
{
    enc_byte(e, 0x01);
    enc_byte(e, value);
}

/* D4.2.8 Instrumentation packet: port A (0-31) of the current stimulus port page, 4-byte
 * payload: header 0bAAAAA 0 11, the value little-endian. */
static inline void enc_sw32(itm_encoder *e, unsigned a, uint32_t value)
{
    assert(a < 32);
    enc_byte(e, (uint8_t)(a << 3 | 0x3));
    for (int i = 0; i < 4; i++)
        enc_byte(e, (uint8_t)(value >> (8 * i)));
}

/* D4 'Extension packet' for the stimulus port page: 0bC EX[2:0] 1 SH 00 with C = 0 (no payload)
 * and SH = 0 (the ITM's stimulus port page), EX the page (0-7). */
static inline void enc_page(itm_encoder *e, unsigned page)
{
    assert(page < 8);
    enc_byte(e, (uint8_t)(page << 4 | 0x08));
}

/* The events with their times. */
static inline void enc_switch_at(itm_encoder *e, uint64_t time, unsigned comparator, uint32_t tcb)
{
    enc_dwt_write(e, comparator, tcb);
    enc_at(e, time);
}

static inline void enc_exception_at(itm_encoder *e, uint64_t time, unsigned number, unsigned fn)
{
    enc_exception(e, number, fn);
    enc_at(e, time);
}

#endif
