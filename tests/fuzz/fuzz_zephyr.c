/* libFuzzer harness: Zephyr coredumps (binary, #CD: log, flash image) and gdb core files as
 * spoor reads a DUMP (format found from the content). Any input must parse or fail with an
 * error, never crash or leak. Each input is also read as the body of a flash image with its
 * checksum right and as a binary with a CRC trailer made right, so that mutations reach the block
 * parser instead of stopping at the checks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/crash.h"
#include "spoor/dump_formats.h"

#include "fuzz_dump_exercise.h"

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    put16(p, v);
    put16(p + 2, v >> 16);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    exercise(spoor_dump_parse_as(data, size, SPOOR_DUMP_FORMAT_AUTO));
    exercise(spoor_zephyr_dump_parse(data, size));
    if (size > (1u << 20))
        return 0;
    uint8_t *image = malloc(size + 16);
    if (!image)
        return 0;
    unsigned sum = 0;
    for (size_t i = 0; i < size; i++)
        sum += data[i];
    memcpy(image, "CD", 2);
    put16(image + 2, 1);
    put32(image + 4, (uint32_t)size);
    put16(image + 8, 0);
    put16(image + 10, sum & 0xFFFFu);
    put32(image + 12, 0);
    memcpy(image + 16, data, size);
    exercise(spoor_zephyr_dump_parse(image, size + 16));
    free(image);
    if (size >= 12 && data[0] == 'Z' && data[1] == 'E') {
        uint8_t *crc = malloc(size + 7);
        if (!crc)
            return 0;
        memcpy(crc, data, size);
        crc[7] |= 1; /* the header announces the trailer */
        crc[size] = 'C';
        put16(crc + size + 1, 1);
        put32(crc + size + 3, spoor_crc32(0, crc, (uint32_t)size));
        exercise(spoor_zephyr_dump_parse(crc, size + 7));
        free(crc);
    }
    return 0;
}
