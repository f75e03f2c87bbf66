/* libFuzzer harness: crash dumps and regs.json, the two inputs spoor crash and spoor gdbserver
 * read from users. Any input must parse or fail with an error, never crash or leak. Each input
 * is also parsed with its header's total size and CRC made right, so that mutations reach the
 * record parser instead of stopping at the checksum. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/crash.h"
#include "spoor/dump.h"

#include "fuzz_dump_exercise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    exercise(spoor_dump_parse(data, size));
    if (size >= SPOOR_DUMP_HEADER_SIZE && size < (1u << 20)) {
        uint8_t *fixed = malloc(size);
        memcpy(fixed, data, size);
        uint32_t total = (uint32_t)size;
        memcpy(fixed + 8, &total, 4);
        uint32_t crc = spoor_crc32(0, fixed, 12);
        crc = spoor_crc32(crc, fixed + 16, total - 16);
        memcpy(fixed + 12, &crc, 4);
        exercise(spoor_dump_parse(fixed, size));
        free(fixed);
    }
    spoor_dump regs;
    memset(&regs, 0, sizeof regs);
    spoor_regs_json_parse((const char *)data, size, "fuzz.json", &regs);
    return 0;
}
