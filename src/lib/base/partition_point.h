/* The binary search of libspoor: the partition point of a sorted array, for every lower or
 * upper bound ("the first range ending above addr", "the last region starting at or below
 * addr" is the partition point minus one). Internal. */
#ifndef SPOOR_PARTITION_POINT_H
#define SPOOR_PARTITION_POINT_H

#include <stdbool.h>
#include <stddef.h>

/* The first index i in [lo, hi) for which before(ctx, i) is false, hi when there is none;
 * before must be true for every index below that point and false from there on (the array is
 * sorted by what it tests). Inline: a static before() is inlined with it. */
static inline size_t spoor_partition_point(size_t lo, size_t hi,
                                           bool (*before)(const void *ctx, size_t i),
                                           const void *ctx)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (before(ctx, mid))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#endif
