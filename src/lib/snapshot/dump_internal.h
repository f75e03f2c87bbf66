/* Shared between the dump reader (dump.c) and the raw-input builder (dump_raw.c). */
#ifndef SPOOR_DUMP_INTERNAL_H
#define SPOOR_DUMP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/dump.h"

/* Sorts dump->regions by address; false with "dump: memory regions ... overlap". */
bool spoor_dump_check_regions(spoor_dump *dump);
/* A dump that owns a copy of bytes and holds nothing parsed yet; NULL (error set) without memory.
 */
spoor_dump *spoor_dump_new_copy(const void *bytes, size_t len);

/* The largest file read whole (a dump, an image, regs.json). */
#define SPOOR_MAX_INPUT_FILE ((uint64_t)256 << 20)

/* Opens a regular file to be read whole and checks its size (*size); -1 with the errors of
 * spoor_dump_read_file. */
int spoor_dump_open_file(const char *path, size_t *size);

/* spoor_dump_read_file (spoor/dump.h) reads the files of every input, with this bound. */

/* Decodes a REGISTERS payload (SPOOR_REGS_SIZE bytes). */
void spoor_dump_registers_from_words(spoor_regs *regs, const uint8_t *payload);

#endif
