/* libFuzzer harness: probe-rs coredumps (MessagePack, read with msgpack-c) as spoor reads a
 * DUMP, by content and with --format probe-rs. Any input must parse or fail with an error, never
 * crash or leak; every region read reads back its bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/dump_formats.h"

#include "fuzz_dump_exercise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    exercise(spoor_dump_parse_as(data, size, SPOOR_DUMP_FORMAT_AUTO));
    exercise(spoor_probers_dump_parse(data, size));
    return 0;
}
