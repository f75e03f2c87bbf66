/* Shared by the readers of other tools' dumps (dump_zephyr.c, dump_elfcore.c). Internal. */
#ifndef SPOOR_DUMP_FOREIGN_H
#define SPOOR_DUMP_FOREIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spoor/dump.h"

/* An empty dump owning a copy of bytes (data, size), foreign_format set to format; NULL with
 * "out of memory". */
spoor_dump *spoor_foreign_dump_new(const uint8_t *bytes, size_t len, const char *format);

/* Appends a memory region (bytes borrowed from the dump's own data). */
bool spoor_foreign_add_region(spoor_dump *d, uint32_t start, uint32_t len, const uint8_t *bytes);

/* Sorts the regions; where two overlap with equal bytes (a tool that saved the same memory
 * twice) the later one is cut; unequal overlaps fail with spoor_dump_check_regions' error. */
bool spoor_foreign_merge_regions(spoor_dump *d);

#endif
