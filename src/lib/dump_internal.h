/* Shared between the dump reader (dump_reader.c) and the raw-input builder (dump_raw.c). */
#ifndef SPOOR_DUMP_INTERNAL_H
#define SPOOR_DUMP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/dump.h"

/* Sorts dump->regions by address; false with "dump: memory regions ... overlap". */
bool spoor_dump_check_regions(spoor_dump *dump);

/* Reads a whole file into a malloc'd buffer; false with "PATH: cannot open: ..." etc. */
bool spoor_dump_read_file(const char *path, uint8_t **data, size_t *size);

/* Decodes a REGISTERS payload (SPOOR_REGS_SIZE bytes). */
void spoor_dump_registers_from_words(spoor_regs *regs, const uint8_t *payload);

#endif
