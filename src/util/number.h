/* The one number parser of spoor: every command-line value, regs.json value, GDB packet field
 * and symbolizer input goes through it, so that "0x20001000", "4096" and "2000100" mean the
 * same thing everywhere they are allowed. */
#ifndef SPOOR_NUMBER_H
#define SPOOR_NUMBER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum spoor_number_form {
    SPOOR_NUM_AUTO,     /* "0x" then hex digits, or decimal digits */
    SPOOR_NUM_HEX,      /* hex digits, "0x" optional */
    SPOOR_NUM_HEX_BARE, /* hex digits only (GDB remote protocol fields) */
} spoor_number_form;

/* A byte's value as a hex digit, or -1. */
extern const uint8_t spoor_hex_digit1[256]; /* the digit's value plus one, 0 for other bytes */
static inline int spoor_hex_digit(unsigned char c)
{
    return spoor_hex_digit1[c] - 1;
}

/* Parses exactly the n bytes at s as a 32-bit number of the given form; false when they are
 * not one (empty, a stray character, more than 32 bits). Leading zeros are allowed (up to 32
 * of them beyond the digits a 32-bit value needs). */
bool spoor_parse_u32(const char *s, size_t n, spoor_number_form form, uint32_t *out);

/* 1 to 8 hex digits at s (no prefix) into *out; false (*out untouched) for any other byte. No
 * overflow is possible, so there is no check for it: one table look-up, shift and or per digit. */
static inline bool spoor_parse_hex8(const char *s, size_t n, uint32_t *out)
{
    uint32_t v = 0;
    bool stray = false;
    for (size_t i = 0; i < n; i++) {
        unsigned d1 = spoor_hex_digit1[(unsigned char)s[i]];
        stray |= d1 == 0;
        v = v << 4 | (d1 - 1);
    }
    if (stray)
        return false;
    *out = v;
    return true;
}

/* spoor_parse_u32 with its common case inline: "0x" and at most 8 hex digits (addresses, as
 * `spoor sym` reads them by the hundred thousand); anything else goes to spoor_parse_u32. */
static inline bool spoor_parse_u32_fast(const char *s, size_t n, spoor_number_form form,
                                        uint32_t *out)
{
    if (form != SPOOR_NUM_HEX_BARE && n > 2 && n <= 10 && s[0] == '0' && (s[1] | 0x20) == 'x')
        return spoor_parse_hex8(s + 2, n - 2, out);
    return spoor_parse_u32(s, n, form, out);
}
/* The same for a NUL-terminated string (false for NULL). */
bool spoor_parse_u32z(const char *s, spoor_number_form form, uint32_t *out);

#endif
