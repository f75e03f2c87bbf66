/* What the dump fuzzers (fuzz_dump.c, fuzz_zephyr.c, fuzz_probers.c) do with a parsed dump:
 * every region reads back its bytes, reads across a region's end and around the top of the
 * address space stay in bounds; then the dump is freed. */
#ifndef FUZZ_DUMP_EXERCISE_H
#define FUZZ_DUMP_EXERCISE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spoor/dump.h"

static void exercise(spoor_dump *d)
{
    if (!d)
        return;
    uint8_t buf[64];
    for (size_t i = 0; i < d->region_count; i++) {
        const spoor_dump_region *r = &d->regions[i];
        size_t n = r->length < sizeof buf ? r->length : sizeof buf;
        if (!spoor_dump_read(d, r->address, buf, n) || memcmp(buf, r->bytes, n))
            abort();                                            /* a region reads back */
        spoor_dump_read(d, r->address + r->length - 1, buf, 8); /* across its end */
    }
    spoor_dump_read(d, 0xfffffffcu, buf, 8); /* wraps the address space */
    spoor_dump_free(d);
}

#endif
