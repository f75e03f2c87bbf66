/*
 * Address ranges (spoor/crash.h): the checks every read of the capture code and the unwinders
 * goes through. Portable.
 */
#include "spoor/crash.h"
#include "spoor/no_instrument.h"

SPOOR_NO_INSTRUMENT bool spoor_range_contains(const spoor_range *ranges, uint32_t count,
                                              uint32_t addr, uint32_t len)
{
    uint64_t end = (uint64_t)addr + len;
    for (uint32_t i = 0; i < count; i++) {
        if (addr >= ranges[i].start && end <= ranges[i].end && addr < ranges[i].end)
            return true;
    }
    return false;
}

SPOOR_NO_INSTRUMENT uint32_t spoor_range_room(const spoor_range *ranges, uint32_t count,
                                              uint32_t start, uint32_t want)
{
    for (uint32_t i = 0; i < count; i++) {
        const spoor_range *r = &ranges[i];
        if (start >= r->start && start < r->end)
            return r->end - start < want ? r->end - start : want;
    }
    return 0;
}
