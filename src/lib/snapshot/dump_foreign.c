/* Helpers of the readers of other tools' dumps (snapshot/dump_foreign.h). */
#include <stdlib.h>
#include <string.h>

#include "base/set_error.h"

#include "snapshot/dump_foreign.h"
#include "snapshot/dump_internal.h"

spoor_dump *spoor_foreign_dump_new(const uint8_t *bytes, size_t len, const char *format)
{
    spoor_dump *d = spoor_dump_new_copy(bytes, len);
    if (d)
        d->foreign_format = format;
    return d;
}

bool spoor_foreign_add_region(spoor_dump *d, uint32_t start, uint32_t len, const uint8_t *bytes)
{
    spoor_dump_region *r = realloc(d->regions, (d->region_count + 1) * sizeof *r);
    if (!r) {
        spoor_set_error(SPOOR_ERR_NOMEM, "dump: out of memory");
        return false;
    }
    d->regions = r;
    r[d->region_count++] = (spoor_dump_region){start, len, SPOOR_REGION_OTHER, false, bytes};
    return true;
}

static int region_order(const void *a, const void *b)
{
    const spoor_dump_region *x = a, *y = b;
    if (x->address != y->address)
        return x->address < y->address ? -1 : 1;
    return x->length > y->length ? -1 : x->length < y->length;
}

/* Zephyr may dump the same bytes twice (a thread's stack inside a linker RAM region), gcore
 * the stack again after RAM. */
bool spoor_foreign_merge_regions(spoor_dump *d)
{
    if (d->region_count > 1)
        qsort(d->regions, d->region_count, sizeof *d->regions, region_order);
    size_t out = 0;
    for (size_t i = 0; i < d->region_count; i++) {
        spoor_dump_region r = d->regions[i];
        if (out) {
            const spoor_dump_region *p = &d->regions[out - 1];
            uint64_t p_end = (uint64_t)p->address + p->length;
            if (p_end > r.address) {
                uint64_t r_end = (uint64_t)r.address + r.length;
                uint64_t common_end = r_end < p_end ? r_end : p_end;
                size_t n = (size_t)(common_end - r.address);
                if (memcmp(p->bytes + (r.address - p->address), r.bytes, n))
                    return spoor_dump_check_regions(d); /* names the overlap */
                if (r_end <= p_end)
                    continue;
                r.bytes += n;
                r.length -= (uint32_t)n;
                r.address += (uint32_t)n;
            }
        }
        d->regions[out++] = r;
    }
    d->region_count = out;
    return spoor_dump_check_regions(d);
}
