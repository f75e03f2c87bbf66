#include "util/number.h"

#include <string.h>

/* A byte's value as a hex digit plus one; 0 for any other byte. */
const uint8_t spoor_hex_digit1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16};

bool spoor_parse_u32(const char *s, size_t n, spoor_number_form form, uint32_t *out)
{
    unsigned base = form == SPOOR_NUM_AUTO ? 10 : 16;
    if (form != SPOOR_NUM_HEX_BARE && n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        n -= 2;
    }
    if (!n || n > (base == 16 ? 8u : 10u) + 32) /* leading zeros are fine, endless ones not */
        return false;
    if (base == 16 && n <= 8) /* the common case (addresses): no overflow possible */
        return spoor_parse_hex8(s, n, out);
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = spoor_hex_digit((unsigned char)s[i]);
        if (d < 0 || d >= (int)base)
            return false;
        v = v * base + (unsigned)d;
        if (v > UINT32_MAX)
            return false;
    }
    *out = (uint32_t)v;
    return true;
}

bool spoor_parse_u32z(const char *s, spoor_number_form form, uint32_t *out)
{
    return s && spoor_parse_u32(s, strlen(s), form, out);
}
