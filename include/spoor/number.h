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
/* The same for a NUL-terminated string (false for NULL). */
bool spoor_parse_u32z(const char *s, spoor_number_form form, uint32_t *out);

#endif
