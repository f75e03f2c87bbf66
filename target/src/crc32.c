/* CRC-32/ISO-HDLC (reflected polynomial 0xEDB88320, init and final XOR 0xFFFFFFFF), the CRC
 * of the dump header. Nibble-at-a-time with a 16-entry table: 64 bytes of flash, no RAM. */
#include "spoor/crash.h"
#include "spoor/no_instrument.h"

static const uint32_t crc_nibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
    0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
    0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
};

SPOOR_NO_INSTRUMENT uint32_t spoor_crc32(uint32_t crc, const void *data, uint32_t len)
{
    const uint8_t *p = (const uint8_t *)data;
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        crc = (crc >> 4) ^ crc_nibble[crc & 0xFu];
        crc = (crc >> 4) ^ crc_nibble[crc & 0xFu];
    }
    return ~crc;
}
