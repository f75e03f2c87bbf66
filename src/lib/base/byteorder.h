/* Little-endian loads and stores, unsigned LEB128 and the ARM prel31 field, for every libspoor
 * module that reads target bytes (the target is little-endian whatever the host is). Internal. */
#ifndef SPOOR_BYTEORDER_H
#define SPOOR_BYTEORDER_H

#include <stdbool.h>
#include <stdint.h>

static inline uint16_t spoor_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t spoor_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A big-endian ELF's 32-bit field (the unwinder reads .debug_frame as the ELF says). */
static inline uint32_t spoor_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* The shift forms above and below are the unaligned load itself: GCC and clang -O2 turn them
 * into one load (mov on x86-64, ldr/ldur on aarch64 and armv7-m) and into a byte-reversing
 * load on big-endian hosts, so no memcpy/bswap variant is needed. */
static inline uint64_t spoor_le64(const uint8_t *p)
{
    return (uint64_t)spoor_le32(p) | (uint64_t)spoor_le32(p + 4) << 32;
}

/* The first n bytes at p (n at most 8) as a little-endian number. */
static inline uint64_t spoor_le_bytes(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static inline void spoor_put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void spoor_put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* An unsigned LEB128 number at *p, which moves past it (DWARF, the ARM build attributes); bits
 * past 64 are dropped. false when it runs past end. */
static inline bool spoor_uleb128(const uint8_t **p, const uint8_t *end, uint64_t *value)
{
    if (*p < end && **p < 0x80u) { /* one byte: most numbers */
        *value = *(*p)++;
        return true;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7Fu) << shift;
        if (!(b & 0x80u)) {
            *value = v;
            return true;
        }
    }
    return false;
}

/* A prel31 field (EHABI): a 31-bit signed offset from place, the address of the word. */
static inline uint32_t spoor_prel31(uint32_t word, uint32_t place)
{
    uint32_t offset = word & 0x7FFFFFFFu;
    if (offset & 0x40000000u)
        offset |= 0x80000000u;
    return place + offset;
}

#endif
